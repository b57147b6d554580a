"""What the tests and the benchmarks both run, so that neither imports the other: the synthetic
data generator (synth.py), the local stand-ins for outside services (openreview_standin.py), SPARQL
engines started as servers (engines.py), and processes and ports (helpers.py)."""
