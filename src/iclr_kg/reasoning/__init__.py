"""The OWL 2 RL reasoner and its boundaries, shared by the build, the maintained updates and the
writer: reason.py (REASONERS: fastrl.py, ours; owlrl, the reference), dred.py (the closure
maintained after a change: delete and rederive), convert.py (terms between pyoxigraph and rdflib).

Below build/, maintained/ and updates/ (tests/test_layers.py): a build replays the journal through
the writer's code, so the reasoner both use sits under both."""
