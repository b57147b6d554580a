"""Tables meant for a spreadsheet: a cell that would run as a formula is kept as text.

A spreadsheet runs a CSV or TSV cell that starts with `=`, `+`, `-` or `@` as a formula
(`=HYPERLINK(...)`, `=cmd|...`: "CSV injection", OWASP). Our data holds names and titles imported
from OpenReview, which anyone can write, so every table made for people to open (the pages'
download links of a SELECT's results, the SSSOM mappings) prefixes such a cell with `'`, which
spreadsheets read as "this is text" and do not show. A number (`-1`, `+2.5e3`) is left alone.

The SPARQL endpoint's own CSV and TSV, asked for by a program, stay exactly as the W3C formats
say (a program reads the values; altering them would be the bug).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator

FORMULA = re.compile(r"[=@\t\r]|[+-](?![0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?$)")
ROWS_PER_CHUNK = 512


def text_cell(value: str) -> str:
    """`value` as a cell no spreadsheet runs: prefixed with `'` where it starts like a formula."""
    return "'" + value if FORMULA.match(value) else value


def sssom_cell(value: str) -> str:
    """A TSV cell of the SSSOM mappings: tabs and line breaks (which would split the row) made
    spaces, and guarded as `text_cell`."""
    return text_cell(" ".join(value.replace("\t", " ").splitlines()))


def guarded(chunks: Iterable[bytes], format_name: str) -> Iterator[bytes]:
    """A streamed SPARQL CSV or TSV result with every cell made a `text_cell` (a TSV literal's
    lexical form, inside its quotes): read row by row, at most a few hundred rows held."""
    lines = _lines(chunks)
    if format_name == "csv":
        yield from _guarded_csv(lines)
    else:
        yield from _guarded_tsv(lines)


def _lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The UTF-8 text of `chunks`, line by line with line ends kept (a chunk may end mid-line)."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.decode("utf-8") + "\n"
    if pending:
        yield pending.decode("utf-8")


def _guarded_csv(lines: Iterator[str]) -> Iterator[bytes]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for number, row in enumerate(csv.reader(lines), 1):
        writer.writerow(row if number == 1 else [text_cell(cell) for cell in row])
        if number % ROWS_PER_CHUNK == 0:
            yield _taken(out)
    yield _taken(out)


def _guarded_tsv(lines: Iterator[str]) -> Iterator[bytes]:
    out = io.StringIO()
    for number, line in enumerate(lines, 1):
        ending = line[len(line.rstrip("\r\n")) :]
        cells = line[: len(line) - len(ending)].split("\t")
        if number > 1:
            cells = [_tsv_cell(cell) for cell in cells]
        out.write("\t".join(cells) + ending)
        if number % ROWS_PER_CHUNK == 0:
            yield _taken(out)
    yield _taken(out)


def _tsv_cell(cell: str) -> str:
    """A TSV term: a literal `"..."` is guarded inside its quotes; an IRI `<...>` or a blank
    node `_:b` cannot start like a formula; a bare number is left alone."""
    if cell.startswith('"') and cell.count('"') >= 2:  # the lexical form ends at the last quote
        lexical = cell[1 : cell.rindex('"')]
        return "\"'" + cell[1:] if FORMULA.match(lexical) else cell
    return text_cell(cell)


def _taken(out: io.StringIO) -> bytes:
    text = out.getvalue()
    out.seek(0)
    out.truncate()
    return text.encode("utf-8")
