"""What may leave the process: SERVICE calls to allow-listed endpoints, LOAD from allowed sources.

Oxigraph performs `SERVICE <iri> { … }` and `LOAD <iri>` itself (its HTTP client is compiled into
the wheel) and offers no hook on the outgoing request, so the only place to stop a query from
reaching an arbitrary host is before it runs. A lexer that decides what is a comment, a string
or an IRI can disagree with Oxigraph's (an adversarial review got past one with `\\u` escapes in
an IRI and a `#`), so this check does not decide that. It over-approximates instead:

- every occurrence of the word SERVICE (or LOAD), in any context (comments and strings
  included), case-insensitively, that is not part of a longer name, is taken as a call;
- each call's target is read the way the grammar allows (optional comments and SILENT, then
  an IRI, a prefixed name or a variable); anything else after the word cannot be a call, since
  Oxigraph would refuse the query, so it is passed over;
- a prefixed name is resolved through *every* declaration of that name, wherever it stands, and
  our predeclared one: all of them must give an allowed IRI. A declaration is what the parser
  reads as one (`querytext.declarations`, the one answer): a `PREFIX` in a comment declares
  nothing, and a prefix so declared only is not one a call can use;
- a query that calls out and holds a `\\uXXXX` / `\\UXXXXXXXX` escape anywhere is refused:
  without escapes, an IRI token ends at the first `>` for Oxigraph as for us.

A false alarm costs a clear 400 on a query that mentions the word oddly; a miss would cost an
open proxy. Tests in tests/web/test_federation.py hold the known bypasses.
"""

from __future__ import annotations

import re

from iclr_kg.errors import QueryError
from iclr_kg.sparql.querytext import (
    declarations,
    may_mention,
    only_data_and_graphs,
    position,
    says,
    top_level_words,
    update_operations,
)

ESCAPE = re.compile(r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}")
# The keyword, not preceded or followed by a character that would make it part of a name.
# Oxigraph's parser needs no boundary around a keyword (`trueSERVICE<…>` and `SERVICEe:x` both
# call out), but a name that a `:`, `?` or `$` starts swallows the word (`iclr:service`).
_CALL = {
    "SERVICE": re.compile(r"(?<![:?$])service", re.IGNORECASE),
    "LOAD": re.compile(r"(?<![:?$])load", re.IGNORECASE),
}
_SPACE_OR_COMMENT = re.compile(r"(?:\s+|#[^\n\r]*)*")
_SILENT = re.compile(r"silent(?![\w:-])", re.IGNORECASE)
_IRI = re.compile(r"<([^<>\"{}|^`\\\x00-\x20]*)>")
_VAR = re.compile(r"[?$]([A-Za-z0-9_\u00B7-\uFFFF]+)")
_PNAME = re.compile(r"([A-Za-z\u00C0-\uFFFF][\w.\-\u00B7-\uFFFF]*)?:([A-Za-z0-9_-]*)(?=[\s{#]|$)")
_TOKEN = re.compile(r"[^\s{]*")
# A token no prefixed name starts like (ASCII, neither a letter nor `:`): "a service (OpenReview):"
_NO_NAME = re.compile(r"[\x00-\x39\x3b-\x40\x5b-\x60\x7b-\x7f]")
# Targets and declarations are read within this many characters: the patterns above then cost
# O(WINDOW) per occurrence, never O(len(text)), whatever the text repeats.
WINDOW = 512
_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_UNKNOWN = object()


def _decode(match: re.Match[str]) -> str:
    code = int(match.group()[2:], 16)
    return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"


def _skip(text: str, pos: int) -> int:
    return _SPACE_OR_COMMENT.match(text, pos).end()  # type: ignore[union-attr]


def _declared(text: str) -> dict[str, set[object]]:
    """What each prefix is declared as (`querytext.declarations`); a relative IRI may name any
    host once resolved against a BASE: _UNKNOWN."""
    return {
        name: {iri if _ABSOLUTE.match(iri) else _UNKNOWN for iri in iris} for name, iris in declarations(text).items()
    }


def outbound_targets(
    text: str, keyword: str, prefixes: dict[str, str], bound: dict[str, str] | None = None
) -> list[str | None]:
    """Every IRI that a `keyword` (SERVICE or LOAD) in the query could call; None where the target
    could be anything (a variable not bound by substitution, a relative IRI, an unknown prefix)."""
    return [target for _, target in outbound_calls(text, keyword, prefixes, bound)]


def outbound_calls(
    text: str, keyword: str, prefixes: dict[str, str], bound: dict[str, str] | None = None
) -> list[tuple[int, str | None]]:
    """(where in `text` the target stands, the IRI) of each call `outbound_targets` reads."""
    finder = _CALL[keyword]
    has_escapes = ESCAPE.search(text) is not None
    decoded = ESCAPE.sub(_decode, text) if has_escapes else text
    if not may_mention(decoded, (keyword.lower(),)):
        return []  # `finder` would find nothing (its case-folded search took 20 us)
    calls = list(finder.finditer(decoded))
    if not calls:
        return []
    if has_escapes:
        raise QueryError(
            f"a query that uses {keyword} may not contain \\u or \\U escapes; write the characters themselves"
        )
    declared: dict[str, set[object]] | None = None
    targets: list[tuple[int, str | None]] = []
    for call in calls:
        pos = _skip(text, call.end())
        silent = _SILENT.match(text, pos, pos + WINDOW)
        if silent is not None:
            pos = _skip(text, silent.end())
        if (iri := _IRI.match(text, pos, pos + WINDOW)) is not None:
            targets.append((pos, iri.group(1) if _ABSOLUTE.match(iri.group(1)) else None))
        elif (var := _VAR.match(text, pos, pos + WINDOW)) is not None:
            targets.append((pos, (bound or {}).get(var.group(1))))
        elif (pname := _PNAME.match(text, pos, pos + WINDOW)) is not None:
            if declared is None:
                declared = _declared(text)
            name, local = pname.group(1) or "", pname.group(2)
            candidates = set(declared.get(name, set()))
            if name in prefixes:
                candidates.add(prefixes[name])
            if not candidates or _UNKNOWN in candidates:
                targets.append((pos, None))
            else:
                targets.extend((pos, f"{namespace}{local}") for namespace in sorted(candidates, key=str))
        elif ":" in (token := _TOKEN.match(text, pos, pos + WINDOW).group()) and not _NO_NAME.match(token):  # type: ignore[union-attr]
            targets.append((pos, None))  # a prefixed name we do not read exactly (escapes, dots): refuse
        # anything else cannot follow the keyword in a query Oxigraph accepts: no call
    return targets


def check_services(
    text: str, allowed: tuple[str, ...], prefixes: dict[str, str], bound: dict[str, str] | None = None
) -> None:
    """Raise QueryError if the query could call a SERVICE that is not allow-listed.

    A variable endpoint passes only when a saved query's parameter binds it (`bound`) to an
    allowed IRI; in a query sent as text it could be bound to anything, so it is refused.
    """
    for offset, target in outbound_calls(text, "SERVICE", prefixes, bound):
        line, column = position(text, offset)
        if target is None:
            raise QueryError(
                f"SERVICE needs a fixed endpoint IRI here (at line {line}, column {column}): an absolute IRI, "
                "not a variable or a relative IRI, which could name any host"
            )
        if target not in allowed:
            listed = ", ".join(allowed) or "none"
            raise QueryError(
                f"SERVICE <{target}> is not allowed (at line {line}, column {column}); federated queries may call: {listed}"
            )


def check_update(
    text: str, allowed_services: tuple[str, ...], allowed_loads: tuple[str, ...], prefixes: dict[str, str]
) -> None:
    """An update may call allow-listed SERVICEs and LOAD only from the allow-listed sources.

    Data and graph operations alone call nothing, so their literals need not be read; but that
    shortcut is taken only where no SERVICE or LOAD stands anywhere in the text, since the
    tokenizer's reading of where an operation starts is not the parser's word."""
    if only_data_and_graphs(text) and not says(text, "SERVICE", "LOAD"):
        return
    check_services(text, allowed_services, prefixes)
    for target in outbound_targets(text, "LOAD", prefixes):
        if target is None or target not in allowed_loads:
            listed = ", ".join(allowed_loads) or "none are configured (ICLR_KG_LOAD_SOURCES)"
            raise QueryError(
                f"LOAD <{target or '?'}> is not allowed: it would fetch a URL from this server; "
                f"allowed sources: {listed}"
            )


# What stands where a LOAD SILENT of a source this server may not fetch was (`without_unfetched_loads`)
UNFETCHED = "# LOAD SILENT of a source not allowed here: not fetched, nothing loaded\nINSERT DATA { }"


def without_unfetched_loads(text: str, allowed_loads: tuple[str, ...], prefixes: dict[str, str]) -> str:
    """The update with each `LOAD SILENT` of a source not allowed (`check_update`) replaced by an
    operation that does nothing: SILENT makes a LOAD that fails succeed, having loaded nothing
    (SPARQL 1.1 Update 3.1.1), so it is neither fetched nor refused. The text that remains is
    checked whole by `check_update` all the same."""
    if not says(text, "LOAD"):
        return text
    for start, end, operation in reversed(update_operations(text)):
        words = [word for _, word in top_level_words(text[start:end])]
        if words[:2] != ["LOAD", "SILENT"]:
            continue
        targets = outbound_targets(operation, "LOAD", prefixes)
        if not targets or any(target is None or target not in allowed_loads for target in targets):
            text = text[:start] + UNFETCHED + text[end:]
    return text
