"""What is wrong with a query, said the way a person fixes it, with where (line and column).

Three checks, before anything runs: prefixes used but neither declared nor predeclared (named,
with the list of predeclared ones); terms of our ontology that do not exist (`iclr:titel`, with
the nearest real one); and syntax, by Oxigraph's own parser, whose messages are rewritten where
they are cryptic ("expected one of Prefix not found, ['%'], ..." becomes what it means). The
query page shows these beside the editor, the editor marks them, and /sparql's 400 says the same.

The first two are linear scans of the text. The third needs Oxigraph's parser, which also plans
the query and evaluates aggregates, ORDER BY and sub-selects at once, and which a deep or long
query can crash: so `check` takes it as a function, and the web app passes one that asks a query
worker, under the limits of a query (`web.querying.syntax_in_worker`). No web process parses.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

from iclr_kg import vocab
from iclr_kg.query.querytext import may_mention, unclosed, update_keyword

# Tokens whose insides are not prefixed names: comments, strings, IRIs; then what we look at.
TOKENS = re.compile(
    r"""(?P<comment>\#[^\n]*)
      | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
      | (?P<iri><[^<>"{}|^`\\\s]*>)
      | (?P<declaration>(?i:PREFIX)\s+(?P<declared>[A-Za-z][\w.-]*)?:)
      | (?P<variable>[?$]\w+)
      | (?P<pname>(?<![\w.:-])(?P<prefix>[A-Za-z][\w-]*(?:\.[\w-]+)*)?:(?P<local>[\w\-.%]*[\w\-%])?)
    """,
    re.VERBOSE,
)
POSITION = re.compile(r"error at (\d+):(\d+): ?(.*)", re.S)
SAID_AT = re.compile(r"at line (\d+), column (\d+)")


@dataclass(frozen=True)
class Problem:
    line: int  # 1-based
    column: int  # 1-based, in characters
    length: int
    message: str
    severity: str = "error"  # "error": it cannot run; "warning": it runs, but likely not as meant

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def check(
    text: str,
    ontology_terms: set[str] | frozenset[str] = frozenset(),
    syntax: Callable[[str], Problem | None] | None = None,
) -> list[Problem]:
    """Every problem found in `text`, in reading order. `ontology_terms`: the local names of our
    ontology (classes, properties, individuals); empty skips the term check. `syntax`: the
    parser's verdict (None skips it), asked only where the names hold no error and the text is a
    query that a parse leaves alone (`parse_worthy`)."""
    problems = _names(text, ontology_terms)
    if syntax is not None and parse_worthy(text) and not any(p.severity == "error" for p in problems):
        found = syntax(text)
        if found is not None:
            problems.append(found)
    return sorted(problems, key=lambda p: (p.line, p.column))


def parse_worthy(text: str) -> bool:
    """Whether a syntax check may prepare `text`: not an update (the run says where updates go),
    and no SERVICE (preparing may call out) or ASK (answered at once); the run reports those."""
    return not (
        update_keyword(text)
        or (may_mention(text, ("service", "ask")) and re.search(r"\b(SERVICE|ASK)\b", text, re.IGNORECASE))
    )


def problem_from_error(message: str) -> Problem:
    """A parser error as it comes back from a worker (`friendly_syntax`'s message, or a refusal
    such as too deep a nesting), as a Problem at the position it names (else the start)."""
    found = SAID_AT.search(message)
    line, column = (int(found.group(1)), int(found.group(2))) if found else (1, 1)
    return Problem(line, column, 1, message)


def _names(text: str, ontology_terms: set[str] | frozenset[str]) -> list[Problem]:
    declared = {m.group("declared") or "" for m in TOKENS.finditer(text) if m.group("declaration")}
    known = set(vocab.QUERY_PREFIXES) | declared
    problems = []
    for match in TOKENS.finditer(text):
        if not match.group("pname"):
            continue
        prefix, local = match.group("prefix") or "", match.group("local") or ""
        line, column = _position(text, match.start())
        if prefix not in known:
            listed = ", ".join(f"{p}:" for p in sorted(vocab.QUERY_PREFIXES))
            problems.append(
                Problem(
                    line,
                    column,
                    len(prefix) + 1,
                    f"the prefix {prefix}: is not declared; declare it (PREFIX {prefix}: <…>) or use one "
                    f"of those every query has: {listed}",
                )
            )
        elif prefix == "iclr" and ontology_terms and local and local not in ontology_terms and prefix not in declared:
            nearest = difflib.get_close_matches(local, sorted(ontology_terms), n=1, cutoff=0.6)
            hint = f"; did you mean iclr:{nearest[0]}?" if nearest else ""
            problems.append(
                Problem(
                    line,
                    column,
                    len(match.group("pname")),
                    f"iclr:{local} is not in the iclr-kg ontology, so it matches nothing{hint}",
                    "warning",
                )
            )
    return problems


def _offset(lines: list[str], line: int, column: int) -> int:
    """The character offset of a 1-based line and column in the text split into `lines`."""
    return sum(len(lines[i]) + 1 for i in range(min(line - 1, len(lines)))) + column - 1


def friendly_syntax(message: str, text: str) -> Problem:
    """Oxigraph's parser message, rewritten where it lists character classes instead of saying
    what is wrong; with its line and column."""
    found = POSITION.match(message)
    line, column, detail = (int(found.group(1)), int(found.group(2)), found.group(3)) if found else (1, 1, message)
    lines = text.split("\n")
    rest = lines[line - 1][column - 1 :] if 0 < line <= len(lines) else ""
    opened = unclosed(text)
    if not rest.strip() and opened is not None:
        at_line, at_column = _position(text, opened)
        closer = "})]"["{([".index(text[opened])]
        detail = f"the query ends before it is complete: the {text[opened]!r} at line {at_line}, column {at_column} is never closed (a {closer!r} is missing)"
    elif opened is not None and opened < _offset(lines, line, column) and text[opened] == "{":
        # a group left open runs into what follows it: "expected OPTIONAL" at GROUP BY names the
        # symptom; the cause is the `{` that was never closed
        at_line, at_column = _position(text, opened)
        detail = (
            f"the '{{' at line {at_line}, column {at_column} is not closed before line {line} "
            f"({lines[line - 1].strip()[:24]!r}): a '}}' is missing"
        )
    elif "Prefix not found" in detail:
        undeclared = next((p for p in _names(text, frozenset()) if p.line == line), None)
        detail = undeclared.message if undeclared else "a prefix here is not declared"
    elif detail.startswith("expected one of") and len(detail) > 120:
        near = rest.strip()[:20]
        detail = f"unexpected {near!r} here" if near else "the query ends too early (something is not closed)"
    elif detail.startswith("expected") and rest.strip():
        detail += f", found {rest.strip()[:20]!r}"
    return Problem(line, column, 1, f"SPARQL syntax error at line {line}, column {column}: {detail}")
