"""Quads into pyoxigraph at the speed of its bulk loader: N-Triples written in chunks from terms
(each term's text made once), read back as a byte stream."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Quad,
    Triple,
)

T = TypeVar("T")


CHUNK = 100_000  # quads between two progress reports while loading


class TermTexts(dict[Any, str]):
    """Each term's N-Triples text, made once: `str` of a pyoxigraph term is that text. Emptied
    when it holds more than `KEPT` (the data's literals are mostly said once)."""

    KEPT = 500_000

    def __missing__(self, term: Any) -> str:
        text = self[term] = str(term)
        return text


def graph_chunks(
    graph: Any, triples: Iterable[Sequence[Any]], texts: TermTexts, loaded: Callable[[int], None], aside: list[Quad]
) -> Iterator[bytes]:
    """The lines of `graph`'s triples (or quads of that graph: their first three terms), as N-Quads
    and then as N-Triples, a chunk at a time, joined from each term's text: a pyoxigraph Quad made
    per triple, only to be serialized, was half the time (docs/performance.md, measured choices). Both texts are the bytes pyoxigraph's serializer writes (compared
    on those triples)."""
    in_graph, end = (" .\n" if isinstance(graph, DefaultGraph) else f" {texts[graph]} .\n"), " .\n"
    for chunk in batched(triples):
        lines = _lines(chunk, texts)
        quads = in_graph.join(lines) + in_graph
        if "_:" in quads or "<<" in quads:  # a blank node or a quoted triple, or a literal that says so
            kept = []
            for terms, line in zip(chunk, lines, strict=True):
                if _has_blank_node(terms):
                    aside.append(Quad(terms[0], terms[1], terms[2], graph))
                else:
                    kept.append(line)
            lines, quads = kept, "".join(line + in_graph for line in kept)
        if lines:
            yield quads.encode()
            yield (end.join(lines) + end).encode()
        loaded(2 * len(lines))


def _lines(chunk: Sequence[Sequence[Any]], texts: TermTexts) -> list[str]:
    """Each triple's (or quad's first three terms') N-Triples line, without its final " .\n"."""
    if len(texts) > texts.KEPT:
        texts.clear()
    return [f"{texts[t[0]]} {texts[t[1]]} {texts[t[2]]}" for t in chunk]


def ntriples(triples: Iterable[Sequence[Any]]) -> Iterator[bytes]:
    """The triples (or quads' first three terms, read as one graph) as N-Triples text, a chunk at
    a time, blank nodes by their labels: for `byte_reader`."""
    texts, end = TermTexts(), " .\n"
    for chunk in batched(triples):
        yield (end.join(_lines(chunk, texts)) + end).encode()


def batched(items: Iterable[T], size: int = CHUNK) -> Iterator[tuple[T, ...]]:
    """Tuples of `size` items (itertools.batched, which Python 3.11 lacks)."""
    iterator = iter(items)
    while chunk := tuple(itertools.islice(iterator, size)):
        yield chunk


def drain(items: list[T]) -> Iterator[T]:
    """The items of `items` in order, the list emptied a chunk at a time as they are read: what a
    build streams into the store is let go of while the stream goes on (at 50,000 papers its
    asserted tuples and their literals take about 0.5 GB, beside the bulk loader's own
    1.4-1.8 GB)."""
    items.reverse()
    while items:
        chunk = items[-CHUNK:]
        del items[-CHUNK:]
        chunk.reverse()
        yield from chunk


def byte_reader(chunks: Iterator[bytes]) -> io.BufferedReader:
    """A file to read `chunks` from, one after another, each made when the reader gets to it:
    how text serialized a chunk at a time reaches a pyoxigraph parser as one document."""
    return io.BufferedReader(_ByteChunks(chunks), 1 << 20)


class _ByteChunks(io.RawIOBase):
    def __init__(self, chunks: Iterator[bytes]):
        self.chunks = chunks
        self.buffer, self.at = memoryview(b""), 0

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while self.at >= len(self.buffer):
            text = next(self.chunks, None)
            if text is None:
                return 0
            self.buffer, self.at = memoryview(text), 0
        size = min(len(target), len(self.buffer) - self.at)
        target[:size] = self.buffer[self.at : self.at + size]
        self.at += size
        return size


def _has_blank_node(terms: Sequence[Any]) -> bool:
    """A blank node among a triple's or quad's terms (a quoted triple counts: it may hold one)."""
    return any(isinstance(term, (BlankNode, Triple)) for term in terms)
