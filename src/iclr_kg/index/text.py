"""How names are folded (case, accents, traditional to simplified Chinese), put in natural order,
split into search words and compared for closeness: one place, so an index built and a query
read fold alike."""

from __future__ import annotations

import functools
import re
import unicodedata
from difflib import SequenceMatcher
from typing import Any

from iclr_kg.topics import HAN


def fold(text: str) -> str:
    """Case, accents, width and Chinese script folded: "Gémp" and "ＧＥＭＰ" both become "gemp",
    "杰出論文獎" and "杰出论文奖" both "杰出论文奖" (OpenCC's Traditional-to-Simplified tables)."""
    if text.isascii():  # nothing to decompose: most names and titles, several times faster
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    return simplified(folded) if HAN.search(folded) else folded


@functools.cache
def _converter() -> Any:
    import opencc  # here: its tables load in 30 ms, only once a Chinese name is folded

    return opencc.OpenCC("t2s")


def simplified(text: str) -> str:
    """`text` in Simplified Chinese script (OpenCC's Traditional-to-Simplified tables)."""
    return str(_converter().convert(text)) if HAN.search(text) else text


def natural_key(text: str) -> str:
    """`text` with every run of digits zero-padded to twelve: ordered as text, "paper 9" comes
    before "paper 10" and "1022" after "110"."""
    return re.sub(r"\d+", lambda m: m.group(0).zfill(12), text)


# Bounds on what one search may cost: a name has a few words, and a typo is looked for in a name,
# not a paragraph. Forty repeated words took 1.94 s at 5,000 papers before (each word a prefix
# match, then every candidate compared with a 200-character query, window by window).
MAX_SEARCH_WORDS = 8


MAX_FUZZY_LENGTH = 64


def _searched(text: str) -> str:
    """What a search looks for: the text folded (`fold`), without control characters (a NUL ends
    an FTS5 string), its spaces collapsed, at most 200 characters."""
    printable = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    return fold(" ".join(printable.split()))[:200]


def search_words(query: str) -> list[str]:
    """The distinct words of a folded query, in order, at most MAX_SEARCH_WORDS of them."""
    return list(dict.fromkeys(re.findall(r"\w+", query)))[:MAX_SEARCH_WORDS]


def _closeness(query: str, name: str) -> float:
    """How close `query` is to `name` or to any run of its words as long as the query."""
    best = SequenceMatcher(None, query, name).ratio()
    words = name.split()
    n = max(1, len(query.split()))
    for i in range(len(words)):
        best = max(best, SequenceMatcher(None, query, " ".join(words[i : i + n])).ratio())
    return best
