"""What one kind's pages do that another kind's do not, as one record (`KindPage`): its
profile's panels, downloads of its own (a paper's BibTeX), what its schema.org JSON-LD adds (a
paper's authors, a person's affiliations), whether its list is of papers, and an overview shown
in place of its list. Each kind's module makes its record; web/kinds/__init__.py registers them
by name (`PAGES`), so that a reader, grep and the type checker follow who calls what."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import NamedNode

from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Hit, Index
from iclr_kg.web.html import Labeler
from iclr_kg.web.kinds.panels import Panel

# (the store, the entity, the generation's index, the pages asked of its paged lists) -> heading, panels
Profile = Callable[[ReadableGraph, NamedNode, Index | None, Mapping[str, int]], tuple[str, list[Panel]]]
# (the store, the entity, the index, its index entry) -> the schema.org fields the kind adds
SchemaOrg = Callable[[ReadableGraph, NamedNode, Index | None, Hit | None], dict[str, Any]]
# (a key, a function of no arguments that makes what it keeps) -> what it keeps, once per generation
PerGeneration = Callable[[str, Callable[[], Any]], Any]
# (the store, a labeler, the generation's memo) -> the overview's template, its panels (rendered)
# and the figures its page says
Overview = Callable[[ReadableGraph, Labeler, PerGeneration], tuple[str, list[Panel], dict[str, str]]]


@dataclass(frozen=True)
class Download:
    """An entity as a file of a format only its kind has (`?format=bibtex`)."""

    media_type: str
    extension: str  # of the file it is named as: <key>.<extension>
    write: Callable[[ReadableGraph, NamedNode, Index | None], str]


@dataclass(frozen=True)
class KindPage:
    """A kind's pages. The defaults are the plain page: the statements about the entity only."""

    profile: Profile | None = None
    plural: str = ""  # its entities, many, as a list's heading names them ("People"; i18n has the Chinese)
    downloads: Mapping[str, Download] = field(default_factory=dict)
    schema_org: SchemaOrg | None = None
    # its list is of papers: sorted by rating or relevance, narrowed by presentation, award, topic
    # and people, with an award facet; other kinds' lists count each entity's papers
    lists_papers: bool = False
    overview: Overview | None = None  # shown for its list asked as it is linked (no arguments)


PLAIN = KindPage()
