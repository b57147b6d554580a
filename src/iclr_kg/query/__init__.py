"""Answering queries: worker processes with limits, a lane of threads, streaming. What a query
says is read below, in sparql/."""
