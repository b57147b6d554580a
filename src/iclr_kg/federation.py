"""SERVICE calls only to allow-listed SPARQL endpoints.

Oxigraph performs `SERVICE <iri> { … }` itself (its HTTP client is compiled into the wheel), so
the only place to stop a query from reaching an arbitrary host is before it runs. This module
reads the query with a small SPARQL lexer (comments, strings and IRIs are tokens, so the word
SERVICE inside them is not a call), resolves each SERVICE target (an IRI, or a prefixed name
through the query's PREFIX declarations and ours) and refuses any target not on the list,
as well as a variable target, which could be bound to anything.
"""

from __future__ import annotations

import re

from .errors import QueryError

WIKIDATA = "https://query.wikidata.org/sparql"
WIKIDATA_SCHOLARLY = "https://query-scholarly.wikidata.org/sparql"
DEFAULT_ALLOWED = (WIKIDATA, WIKIDATA_SCHOLARLY)

_TOKEN = re.compile(
    r"""(?P<comment>\#[^\n]*)
      | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
      | (?P<iri><[^<>"{}|^`\\\s]*>)
      | (?P<var>[?$][A-Za-z0-9_\u00B7-\uFFFF]+)
      | (?P<pname>[A-Za-z][\w.-]*?:[^\s{}()<>,;]*|:[^\s{}()<>,;]*)
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<other>\S)""",
    re.VERBOSE,
)


_SERVICE_WORD = re.compile("service", re.IGNORECASE)


def _tokens(text: str) -> list[tuple[str, str]]:
    return [(m.lastgroup or "", m.group()) for m in _TOKEN.finditer(text) if m.lastgroup != "comment"]


def service_targets(text: str, prefixes: dict[str, str], bound: dict[str, str] | None = None) -> list[str | None]:
    """The endpoint IRI of every SERVICE in the query (None for an unbound variable or an
    unresolvable name). `bound` gives the values of variables fixed by substitution."""
    if not _SERVICE_WORD.search(text):
        return []  # no SERVICE keyword at all (Oxigraph decodes no escapes in keywords): skip the lexer
    bound = bound or {}
    tokens = _tokens(text)
    declared = dict(prefixes)
    targets: list[str | None] = []
    for i, (kind, value) in enumerate(tokens):
        if kind == "word" and value.upper() == "PREFIX" and i + 2 < len(tokens):
            name, iri = tokens[i + 1][1], tokens[i + 2][1]
            if iri.startswith("<"):
                declared[name.rstrip(":")] = iri[1:-1]
        if kind != "word" or value.upper() != "SERVICE":
            continue
        j = i + 1
        if j < len(tokens) and tokens[j][0] == "word" and tokens[j][1].upper() == "SILENT":
            j += 1
        if j >= len(tokens):
            targets.append(None)
            continue
        target_kind, target = tokens[j]
        if target_kind == "iri":
            targets.append(target[1:-1])
        elif target_kind == "pname":
            prefix, _, local = target.partition(":")
            targets.append(declared[prefix] + local if prefix in declared else None)
        elif target_kind == "var":
            targets.append(bound.get(target[1:]))
        else:
            targets.append(None)
    return targets


def check_services(text: str, allowed: tuple[str, ...], prefixes: dict[str, str], bound: dict[str, str] | None = None) -> None:
    """Raise QueryError if the query calls a SERVICE that is not allow-listed.

    A variable endpoint passes only when a saved query's parameter binds it (`bound`) to an
    allowed IRI; in a query sent as text it could be bound to anything, so it is refused.
    """
    for target in service_targets(text, prefixes, bound):
        if target is None:
            raise QueryError("SERVICE needs a fixed endpoint IRI here (a variable could name any host)")
        if target not in allowed:
            listed = ", ".join(allowed) or "none"
            raise QueryError(f"SERVICE <{target}> is not allowed; federated queries may call: {listed}")
