"""The build: curated files in, a validated and reasoned graph out (sources -> resolve -> rdf -> validate -> reason; pipeline.py runs them)."""
