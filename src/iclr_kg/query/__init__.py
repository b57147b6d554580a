"""Answering queries: worker processes with limits, streaming, what may leave the process, saved queries, formats."""
