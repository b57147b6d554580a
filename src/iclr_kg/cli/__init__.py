"""The `iclr-kg` command: thin wrappers over the pipeline, store and query modules.

Errors the user can fix print one line (or a readable report) and exit non-zero; `--debug`
shows the traceback instead.

    common.py     the group, shared options, opening the graph, one-line errors
    building.py   build, validate, check-store
    reading.py    query, export, dump, stats
    importing.py  import openreview|wikidata, link-wikidata
    serving.py    serve, publish
    updating.py   updates list|export|drop"""

from __future__ import annotations

# Each command module adds its commands to `main` as it is imported.
from iclr_kg.cli import building, importing, reading, serving, updating
from iclr_kg.cli.common import main, run

__all__ = ["building", "importing", "main", "reading", "run", "serving", "updating"]
