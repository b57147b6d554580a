"""The entity index: every entity's kind, label (English and Chinese), key facts and names, for
people: labels in result tables, search, and the lists of each kind.

One SQLite file beside each store generation (`<generation>.index.sqlite`), built from that
generation's default graph before it is published, by a build and by every update alike, so it
swaps with the store: a page never labels one generation's IRIs with another's names. Search
uses FTS5 (in Python's standard library): a word index with prefixes and accent folding, a
trigram index for substrings (Chinese included) and, when neither finds anything, for names
a typo away. Papers are also found by topic: their titles, keywords and abstracts in a stemmed
word index (`topics.py` turns a query into its expression, with a table of synonyms).

    schema.py   the file, its tables and its version
    text.py     how names are folded, ordered and compared (search words, natural order)
    facts.py    what the index says of each kind: its facts query and line, or its derived label
    build.py    a whole index from a generation's default graph
    patch.py    an index brought up to date after an update, from what it touched
    lookup.py   what pages read: labels, lists with their filters and facets, search"""

from __future__ import annotations

from iclr_kg.index.build import build_index, ensure_index, ranked_titles
from iclr_kg.index.lookup import MAX_PAGE, PAPER_SORTS, SORTS, TOPIC, Hit, Index, ListFilter
from iclr_kg.index.patch import neighbourhood, patch_index
from iclr_kg.index.schema import SUFFIX, current_index, index_path, kind_and_key, schema_version
from iclr_kg.index.text import MAX_SEARCH_WORDS, fold, natural_key, search_words

__all__ = [
    "MAX_PAGE",
    "MAX_SEARCH_WORDS",
    "PAPER_SORTS",
    "SORTS",
    "SUFFIX",
    "TOPIC",
    "Hit",
    "Index",
    "ListFilter",
    "build_index",
    "current_index",
    "ensure_index",
    "fold",
    "index_path",
    "kind_and_key",
    "natural_key",
    "neighbourhood",
    "patch_index",
    "ranked_titles",
    "schema_version",
    "search_words",
]
