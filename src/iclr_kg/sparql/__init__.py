"""SPARQL as text: tokenized, checked, rewritten and negotiated before any store sees it.

Below the store and every backend (tests/test_layers.py): nothing here runs a query."""
