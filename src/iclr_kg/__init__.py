"""iclr-kg: a knowledge graph of ICLR papers, authors, organizations and awards."""

__version__ = "0.1.0"
