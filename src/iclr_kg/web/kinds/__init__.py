"""Entity profiles: what a person reads about a paper, a person, an organization, an edition...

Each kind has a few SPARQL queries about one entity (`?e`), run on the read-only store of this
process (they are bounded by the entity: a LIMIT where a list could grow with the graph), and a
function that arranges their answers into panels: facts (label: values), tables and bars. IRIs
become names through the generation's index (index/), in the page's language; the raw
statements stay below the panels, folded, for whoever wants every triple with its provenance."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path

from pyoxigraph import NamedNode

from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index
from iclr_kg.kinds import KINDS
from iclr_kg.web.kinds.panels import Panel
from iclr_kg.web.kinds.rendering import render_panels, schema_org

Profile = Callable[[ReadableGraph, NamedNode, Index | None, Mapping[str, int]], tuple[str, list[Panel]]]


def _profiles() -> dict[str, Profile]:
    """Each kind's page, from the registry of kinds (iclr_kg.kinds): the module named after the
    kind, here, and its function of the same name. A new page kind is its ontology class and
    one module; tests/web/test_kinds.py finds one missing."""
    found = {}
    for kind in KINDS:
        if (Path(__file__).parent / f"{kind}.py").exists():
            found[kind] = getattr(importlib.import_module(f"{__name__}.{kind}"), kind)
    return found


# What each kind's page shows: (the store, the entity, the generation's index, the pages asked
# of its paged lists) -> heading, panels.
PROFILES: dict[str, Profile] = _profiles()

__all__ = ["PROFILES", "Panel", "Profile", "render_panels", "schema_org"]
