"""Each published generation's graphs under names of its own on the engine.

`publish` sends a generation's graphs under new names (`published_name`: a URN made from the
generation and the graph's IRI, of fixed length), and then only switches the publication
record, which names the generation: nothing is moved or copied on the engine, a reader sees the
old generation or the new one, and the old one's graphs are dropped later. The names are a
renaming of every graph IRI, wherever it occurs: in the triples sent (our provenance states
things about graphs: `<graph/source/x> iclr:statedIn ...`), in the constants of a query's text
and its dataset, and back in the answers, so that a query answers on the engine as it does on
the embedded store. (A string function of a graph's IRI, `STR(?g)`, sees the published name.)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from html import escape
from typing import Any

from iclr_kg.sparql.querytext import declarations, tokens

PREFIX = "urn:iclr-kg:published:"  # no slash in it: a JSON writer may escape one
_DIGITS = 24
_PUBLISHED = re.compile(re.escape(PREFIX).encode() + rb"[0-9a-f]{%d}" % _DIGITS)


def published_name(generation: str, graph: str) -> str:
    """The name on the engine of `graph` (an IRI; the merged default graph's too) as published
    with `generation`: fixed length, so that answers are renamed back as they stream."""
    digest = hashlib.sha256(f"{generation}\n{graph}".encode()).hexdigest()[:_DIGITS]
    return PREFIX + digest


class Names:
    """The renaming of one publication: each graph's IRI to its published name, and back."""

    def __init__(self, generation: str, graphs: Iterable[str], renamed: bool = True):
        self.forward = {g: published_name(generation, g) if renamed else g for g in graphs}
        self.backward = {p: g for g, p in self.forward.items()}
        self.renamed = renamed
        self._forward_bytes = {g.encode(): p.encode() for g, p in self.forward.items()}
        self._backward_bytes = {
            xml: {p.encode(): (escape(g) if xml else g).encode() for p, g in self.backward.items()}
            for xml in (False, True)
        }
        alternatives = b"|".join(re.escape(g.encode()) for g in sorted(self.forward, key=len, reverse=True))
        self._in_ntriples = re.compile(b"<(" + alternatives + b")>") if self.forward else None

    def name(self, graph: str) -> str:
        """The published name of `graph` (an IRI that is no graph of ours stays as it is)."""
        return self.forward.get(graph, graph)

    def ntriples(self, body: bytes) -> bytes:
        """A chunk of N-Triples being published, each graph IRI in it renamed."""
        if not self.renamed or self._in_ntriples is None:
            return body
        return self._in_ntriples.sub(lambda m: b"<" + self._forward_bytes[m.group(1)] + b">", body)

    def query(self, text: str) -> str:
        """The query with each graph IRI it names (written out, or as a prefixed name of a
        prefix it declares) renamed; strings and comments are left as they are."""
        if not self.renamed:
            return text
        prefixes = {name: iris[0] for name, iris in declarations(text).items() if len(set(iris)) == 1}
        out: list[str] = []
        copied = 0
        for token in tokens(text):
            if token.lastgroup == "iri":
                renamed = self.forward.get(token.group()[1:-1])
            elif token.lastgroup == "pname" and (namespace := prefixes.get(token.group("prefix") or "")) is not None:
                renamed = self.forward.get(namespace + (token.group("local") or ""))
            else:
                continue
            if renamed is not None:
                out += [text[copied : token.start()], f"<{renamed}>"]
                copied = token.end()
        return "".join([*out, text[copied:]])

    def answers(self, raw: Any, xml: bool) -> Any:
        """The engine's answer stream with each published name renamed back, as it streams."""
        if not self.renamed:
            return raw
        return _Renamed(raw, self._backward_bytes[xml])


class _Renamed:
    """A binary stream with each published name in it replaced, chunk by chunk: the last bytes
    of a chunk, where a name may have been cut, wait for the next one."""

    HELD = len(PREFIX) + _DIGITS - 1

    def __init__(self, raw: Any, backward: dict[bytes, bytes], chunk: int = 64 * 1024):
        self.raw, self.backward, self.chunk, self.held = raw, backward, chunk, b""

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(self.chunk if size is None or size < 0 else max(size, 1))
        if not data:
            rest, self.held = self._renamed(self.held), b""
            return rest
        data = self.held + data
        cut = max(0, len(data) - self.HELD)
        across = [m.end() for m in _PUBLISHED.finditer(data, max(0, cut - self.HELD)) if m.start() < cut < m.end()]
        if across:  # a whole name across the cut: keep it together
            cut = across[0]
        self.held = data[cut:]
        out = self._renamed(data[:cut])
        return out if out or not self.held else self.read(size)

    def _renamed(self, data: bytes) -> bytes:
        return _PUBLISHED.sub(lambda m: self.backward.get(m.group(0), m.group(0)), data)

    def readable(self) -> bool:
        return True
