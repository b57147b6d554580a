"""What is wrong with a query, said the way a person fixes it, with where (line and column).

Three checks, before anything runs: prefixes used but neither declared nor predeclared (named,
with the list of predeclared ones); terms of our ontology that do not exist (`iclr:titel`, with
the nearest real one); and syntax, by Oxigraph's own parser, whose messages are rewritten where
they are cryptic ("expected one of Prefix not found, ['%'], ..." becomes what it means). The
query page shows these beside the editor, the editor marks them, and /sparql's 400 says the same.

Then, where the ontology's domains and ranges say a pattern cannot match (`never_met`), a warning.

The names are linear scans of the text. The rest parses it (`parsed_problems`): Oxigraph's parser
also plans the query and evaluates aggregates, ORDER BY and sub-selects at once, and a deep or
long query can crash it; rdflib's, which reads the patterns for the domains, takes up to a
millisecond of CPU a character. So `check` takes those checks as a function, and the web app
passes one that asks a query worker, under the limits of a query (`web.querying.parsed_in_worker`,
answered by query/answering.py). No web process parses.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

from iclr_kg import vocab
from iclr_kg.sparql.querytext import declarations, position, says, tokens, unclosed, update_keyword
from iclr_kg.terms import Terms

POSITION = re.compile(r"error at (\d+):(\d+): ?(.*)", re.S)
SAID_AT = re.compile(r"at line (\d+), column (\d+)")


@dataclass(frozen=True)
class Words:
    """A message as one of the lint's English templates (below) and its values, a value being
    words too where it is a phrase: said in English here (`said()`), and in the page's language
    by the web layer, which holds each template's Chinese (web/i18n.py) and passes `translate`."""

    template: str
    values: tuple[tuple[str, str | Words], ...] = ()

    def said(self, translate: Callable[[str], str] | None = None) -> str:
        words = translate(self.template) if translate else self.template
        return words.format(**{k: v.said(translate) if isinstance(v, Words) else v for k, v in self.values})


def words(template: str, **values: str | Words) -> Words:
    return Words(template, tuple(values.items()))


# The lint's messages, in English (what /sparql's 400 and the command line say); web/i18n.py has
# each in Chinese. A value in braces is filled in; `{hint}`, `{why}`, `{detail}`: a phrase below.
NOT_DECLARED = "the prefix {prefix}: is not declared; declare it (PREFIX {prefix}: <…>) or use one of those every query has: {listed}"
NOT_IN_ONTOLOGY = "iclr:{local} is not in the iclr-kg ontology, so it matches nothing{hint}"
DID_YOU_MEAN = "; did you mean iclr:{nearest}?"
NEVER_BOTH = (
    "?{variable} cannot be both iclr:{first} ({why}) and iclr:{cls} ({side}): these classes share no "
    "entity, so this pattern matches nothing{hint}"
)
ITS_DOMAIN, ITS_RANGE = "iclr:{prop} (its domain is iclr:{cls})", "iclr:{prop} (its range is iclr:{cls})"
DOMAIN_OF, RANGE_OF = "the domain of iclr:{prop}", "the range of iclr:{prop}"
TRY_PATH = "; from iclr:{cls}, try iclr:{step}/iclr:{prop}"
MISTYPED = (
    "{what} is an xsd:{datatype} (the range of iclr:{prop}) and {literal} is an xsd:{written}: SPARQL finds "
    "values of different types never equal and never ordered, so this keeps no row; write it as an "
    "xsd:{datatype}, for example {example}"
)
A_VALUE_OF_TYPE = "a value of type xsd:{datatype}"
SYNTAX = "SPARQL syntax error at line {line}, column {column}: {detail}"
NEVER_CLOSED = (
    "the query ends before it is complete: the {opened} at line {at_line}, column {at_column} is never "
    "closed (a {closer} is missing)"
)
NOT_CLOSED_BEFORE = (
    "the '{{' at line {at_line}, column {at_column} is not closed before line {line} ({start}): a '}}' is missing"
)
PREFIX_HERE = "a prefix here is not declared"
UNEXPECTED = "unexpected {near} here"
ENDS_TOO_EARLY = "the query ends too early (something is not closed)"
PARSER_FOUND = "{detail}, found {found}"  # the parser's own words, then what stands there
PARSER = "{detail}"  # the parser's own words, as it says them


@dataclass(frozen=True)
class Problem:
    line: int  # 1-based
    column: int  # 1-based, in characters
    length: int
    message: str  # in English: `words.said()`, or the words a worker's error came back with
    severity: str = "error"  # "error": it cannot run; "warning": it runs, but likely not as meant
    words: Words | None = None  # the message as a template and its values, to say in another language

    @classmethod
    def saying(cls, line: int, column: int, length: int, said: Words, severity: str = "error") -> Problem:
        return cls(line, column, length, said.said(), severity, said)

    def said_in(self, translate: Callable[[str], str]) -> str:
        """The message in another language, `translate` giving each template's words in it."""
        return self.words.said(translate) if self.words is not None else self.message

    def as_json(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if k != "words"}


def check(
    text: str,
    ontology_terms: set[str] | frozenset[str] = frozenset(),
    parsing: Callable[[str], list[Problem]] | None = None,
) -> list[Problem]:
    """Every problem found in `text`, in reading order. `ontology_terms`: the local names of our
    ontology (classes, properties, individuals); empty skips the term check. `parsing`: the checks
    that parse the text (`parsed_problems`, where it may take long), asked only where the names
    hold no error; None skips them."""
    problems = _names(text, ontology_terms)
    if parsing is not None and not any(p.severity == "error" for p in problems):
        problems += parsing(text)
    return sorted(problems, key=lambda p: (p.line, p.column))


def parsed_problems(
    text: str, syntax: Callable[[str], Problem | None] | None = None, ontology: Terms | None = None
) -> list[Problem]:
    """The checks that parse `text`: `syntax`, the parser's verdict, where a parse leaves the text
    alone (`parse_worthy`); then, where it found no error, the patterns that `ontology`'s domains,
    ranges and disjoint classes say cannot match (`never_met`). None skips either."""
    if syntax is not None and parse_worthy(text):
        found = syntax(text)
        if found is not None:
            return [found]
    return never_met(text, ontology) + mistyped(text, ontology) if ontology is not None else []


MEETS_LIMIT = 20_000  # characters: longer texts are not read for domains (rdflib's parser is pure Python)


def never_met(text: str, ontology: Terms) -> list[Problem]:
    """Warnings where a query's patterns ask one variable to be of two classes no entity is both
    of, by the ontology's domains, ranges and disjoint classes: `?p a iclr:Paper ; iclr:year ?y`
    (iclr:year is an edition's) finds nothing, and says how to reach the value instead
    (`iclr:submittedTo/iclr:year`). Read with rdflib's SPARQL parser; a text it cannot read, or
    one too long, gets no warning (the syntax check speaks for it)."""
    if len(text) > MEETS_LIMIT or update_keyword(text):
        return []
    try:
        patterns = list(_triple_patterns(text))
    except Exception:  # noqa: BLE001 - rdflib's parser fails in many ways; Oxigraph's verdict stands
        return []
    stated: dict[str, list[tuple[str, str | Words]]] = defaultdict(list)  # variable -> (class, why)
    uses: list[tuple[str, str, str]] = []  # (variable, property, "domain" or "range")
    for subject, predicate, value in patterns:
        if predicate == "type" and value is not None and subject is not None:
            stated[subject].append((value, f"?{subject} a iclr:{value}"))  # no words to translate
        elif predicate != "type":
            for variable, side in ((subject, "domain"), (value, "range")):
                if variable is not None:
                    uses.append((variable, predicate, side))
    for variable, prop, side in uses:
        for cls in (ontology.domains if side == "domain" else ontology.ranges).get(prop, ()):
            stated[variable].append((cls, words(ITS_DOMAIN if side == "domain" else ITS_RANGE, prop=prop, cls=cls)))
    problems, said = [], set()
    for variable, prop, side in uses:
        for cls in (ontology.domains if side == "domain" else ontology.ranges).get(prop, ()):
            clash = next(((c, why) for c, why in stated[variable] if ontology.never_both(c, cls)), None)
            if clash is None or (variable, prop) in said:
                continue
            said.add((variable, prop))
            hint = _way_round(ontology, clash[0], cls, prop) if side == "domain" else ""
            of = words(DOMAIN_OF if side == "domain" else RANGE_OF, prop=prop)
            message = words(NEVER_BOTH, variable=variable, first=clash[0], why=clash[1], cls=cls, side=of, hint=hint)
            problems.append(_at_term(text, prop, message))
    return problems


# Values SPARQL compares with each other: numbers of any XSD numeric type together, else only the
# same type (a gYear with a gYear, a date with a date); "2021" (a string) equals no number or year
NUMERIC = frozenset(
    ("integer", "decimal", "double", "float", "int", "long", "short", "nonNegativeInteger", "positiveInteger")
)
_LITERAL = r"""(?:"[^"\n]*"|'[^'\n]*')(?:\^\^xsd:\w+|@[\w-]+)?|xsd:\w+\(\s*(?:"[^"\n]*"|'[^'\n]*'|[\w.+-]+)\s*\)|[+-]?\d+(?:\.\d+)?|true|false"""
_COMPARED = re.compile(rf"\?(\w+)\s*(?:=|!=|<=|>=|<|>)\s*({_LITERAL})|({_LITERAL})\s*(?:=|!=|<=|>=|<|>)\s*\?(\w+)")
_BOUND = re.compile(rf"iclr:(\w+)\s+(?:\?(\w+)|({_LITERAL}))")


def mistyped(text: str, ontology: Terms) -> list[Problem]:
    """Warnings where a query compares a value of one of our datatype properties (a year, a date,
    a count) with a literal of another type, in a FILTER or as a pattern's object:
    `?y >= "2020"` or `iclr:year "2021"^^xsd:gYear` where iclr:year is an xsd:integer. SPARQL
    finds such values never equal and never ordered, so the filter or pattern keeps no row."""
    plain = _without_comments(text)
    typed: dict[str, tuple[str, str]] = {}  # variable -> (datatype, property)
    problems = []
    for found in _BOUND.finditer(plain):
        prop, variable, literal = found.groups()
        datatype = ontology.datatypes.get(prop)
        if datatype is None:
            continue
        if variable:
            typed.setdefault(variable, (datatype, prop))
        elif literal and _clash(datatype, literal):
            problems.append(_mistyped(text, found.start(3), literal, f"iclr:{prop}", datatype, prop))
    for found in _COMPARED.finditer(plain):
        variable, literal, at = (found.group(1), found.group(2), found.start(2))
        if variable is None:
            variable, literal, at = found.group(4), found.group(3), found.start(3)
        if variable in typed and _clash(typed[variable][0], literal):
            datatype, prop = typed[variable]
            problems.append(_mistyped(text, at, literal, f"?{variable}", datatype, prop))
    return problems


def _without_comments(text: str) -> str:
    """`text` with its comments blanked (same length: positions still hold)."""
    out = list(text)
    for token in tokens(text):
        if token.lastgroup == "comment":
            out[token.start() : token.end()] = " " * (token.end() - token.start())
    return "".join(out)


def _literal_type(literal: str) -> str:
    """The XSD type of a literal as written: "2021" a string, 2021 an integer, "x"^^xsd:T or xsd:T("x") T."""
    cast = re.match(r"xsd:(\w+)\(", literal)
    if cast:
        return cast.group(1)
    if "^^xsd:" in literal:
        return literal.rsplit("^^xsd:", 1)[1]
    if literal[0] in "\"'":
        return "langString" if "@" in literal.rsplit(literal[0], 1)[1] else "string"
    if literal in ("true", "false"):
        return "boolean"
    return "decimal" if "." in literal else "integer"


def _clash(datatype: str, literal: str) -> bool:
    written = _literal_type(literal)
    if datatype in NUMERIC or written in NUMERIC:
        return not (datatype in NUMERIC and written in NUMERIC)
    return written != datatype and not {written, datatype} <= {"string", "langString"}


EXAMPLES = {"integer": "2021", "date": '"2021-05-03"^^xsd:date', "gYear": '"2021"^^xsd:gYear',
            "gYearMonth": '"2021-01"^^xsd:gYearMonth', "dateTime": '"2021-05-03T00:00:00Z"^^xsd:dateTime'}  # fmt: skip


def _mistyped(text: str, offset: int, literal: str, what: str, datatype: str, prop: str) -> Problem:
    line, column = position(text, offset)
    example = EXAMPLES.get(datatype) or words(A_VALUE_OF_TYPE, datatype=datatype)
    written = _literal_type(literal)
    message = words(
        MISTYPED, what=what, datatype=datatype, prop=prop, literal=literal, written=written, example=example
    )
    return Problem.saying(line, column, len(literal), message, "warning")


def _way_round(ontology: Terms, cls: str, domain: str, prop: str) -> str | Words:
    """A path from a `cls` to a `domain` entity, through one property: "; a paper reaches it as
    iclr:submittedTo/iclr:year"."""
    for step, of in sorted(ontology.domains.items()):
        if any(cls in ontology.below(d) for d in of) and any(
            domain in ontology.below(r) for r in ontology.ranges.get(step, ())
        ):
            return words(TRY_PATH, cls=cls, step=step, prop=prop)
    return ""


def _at_term(text: str, local: str, message: Words) -> Problem:
    """A warning at the first place `text` names iclr:`local` (else at the start)."""
    for token in tokens(text):
        if token.lastgroup == "pname" and token.group("prefix") == "iclr" and token.group("local") == local:
            line, column = position(text, token.start())
            return Problem.saying(line, column, len(token.group()), message, "warning")
    return Problem.saying(1, 1, 1, message, "warning")


def _triple_patterns(text: str) -> Iterator[tuple[str | None, str, str | None]]:
    """The query's triple patterns with a predicate of ours, as (subject variable or None, the
    predicate's local name or "type", the object variable, or for rdf:type the class's local name).
    Property paths are left out: what they reach is not one property's domain."""
    from rdflib import RDF, URIRef, Variable
    from rdflib.plugins.sparql import prepareQuery

    prepared = prepareQuery(text, initNs={k: v for k, v in vocab.QUERY_PREFIXES.items()})

    def walk(node: object) -> Iterator[tuple[object, object, object]]:
        if isinstance(node, dict):  # rdflib's algebra nodes are dicts (CompValue)
            if getattr(node, "name", "") == "BGP":
                yield from node.get("triples", [])
            for child in node.values():
                yield from walk(child)
        elif isinstance(node, list | tuple):
            for child in node:
                yield from walk(child)

    ours = vocab.ONTOLOGY_NS
    for s, p, o in walk(prepared.algebra):
        variable = str(s) if isinstance(s, Variable) else None
        if p == RDF.type and isinstance(o, URIRef) and str(o).startswith(ours):
            yield variable, "type", str(o)[len(ours) :]
        elif isinstance(p, URIRef) and str(p).startswith(ours):
            yield variable, str(p)[len(ours) :], str(o) if isinstance(o, Variable) else None


def parse_worthy(text: str) -> bool:
    """Whether a syntax check may prepare `text`: not an update (the run says where updates go),
    and no SERVICE (preparing may call out) or ASK (answered at once); the run reports those."""
    return not (update_keyword(text) or says(text, "SERVICE", "ASK"))


def problem_of(error: Exception) -> Problem:
    """The problem a QueryError says: the lint's own where it rewrote the parser's message (its
    words kept, to say in another language), else one read from the message."""
    said = getattr(error, "said", None)
    return said if isinstance(said, Problem) else problem_from_error(str(error))


def problem_from_error(message: str) -> Problem:
    """A parser error as it comes back from a worker (`friendly_syntax`'s message, or a refusal
    such as too deep a nesting), as a Problem at the position it names (else the start)."""
    found = SAID_AT.search(message)
    line, column = (int(found.group(1)), int(found.group(2))) if found else (1, 1)
    return Problem(line, column, 1, message)


def _names(text: str, ontology_terms: set[str] | frozenset[str]) -> list[Problem]:
    declared = set(declarations(text))
    known = set(vocab.QUERY_PREFIXES) | declared
    problems = []
    for token in tokens(text):
        if token.lastgroup != "pname":
            continue
        prefix, local = token.group("prefix") or "", token.group("local") or ""
        line, column = position(text, token.start())
        if prefix not in known:
            listed = ", ".join(f"{p}:" for p in sorted(vocab.QUERY_PREFIXES))
            problems.append(
                Problem.saying(line, column, len(prefix) + 1, words(NOT_DECLARED, prefix=prefix, listed=listed))
            )
        elif prefix == "iclr" and ontology_terms and local and local not in ontology_terms and prefix not in declared:
            nearest = difflib.get_close_matches(local, sorted(ontology_terms), n=1, cutoff=0.6)
            hint = words(DID_YOU_MEAN, nearest=nearest[0]) if nearest else ""
            said = words(NOT_IN_ONTOLOGY, local=local, hint=hint)
            problems.append(Problem.saying(line, column, len(token.group()), said, "warning"))
    return problems


def _offset(lines: list[str], line: int, column: int) -> int:
    """The character offset of a 1-based line and column in the text split into `lines`."""
    return sum(len(lines[i]) + 1 for i in range(min(line - 1, len(lines)))) + column - 1


def friendly_syntax(message: str, text: str) -> Problem:
    """Oxigraph's parser message, rewritten where it lists character classes instead of saying
    what is wrong; with its line and column."""
    found = POSITION.match(message)
    line, column, said = (int(found.group(1)), int(found.group(2)), found.group(3)) if found else (1, 1, message)
    detail: str | Words = words(PARSER, detail=said)
    lines = text.split("\n")
    rest = lines[line - 1][column - 1 :] if 0 < line <= len(lines) else ""
    opened = unclosed(text)
    if not rest.strip() and opened is not None:
        at_line, at_column = position(text, opened)
        closer = "})]"["{([".index(text[opened])]
        detail = words(
            NEVER_CLOSED, opened=repr(text[opened]), at_line=str(at_line), at_column=str(at_column), closer=repr(closer)
        )
    elif opened is not None and opened < _offset(lines, line, column) and text[opened] == "{":
        # a group left open runs into what follows it: "expected OPTIONAL" at GROUP BY names the
        # symptom; the cause is the `{` that was never closed
        at_line, at_column = position(text, opened)
        start = repr(lines[line - 1].strip()[:24])
        detail = words(NOT_CLOSED_BEFORE, at_line=str(at_line), at_column=str(at_column), line=str(line), start=start)
    elif "Prefix not found" in said:
        undeclared = next((p for p in _names(text, frozenset()) if p.line == line), None)
        detail = (undeclared.words or undeclared.message) if undeclared else words(PREFIX_HERE)
    elif said.startswith("expected one of") and len(said) > 120:
        near = rest.strip()[:20]
        detail = words(UNEXPECTED, near=repr(near)) if near else words(ENDS_TOO_EARLY)
    elif said.startswith("expected") and rest.strip():
        detail = words(PARSER_FOUND, detail=said, found=repr(rest.strip()[:20]))
    return Problem.saying(line, column, 1, words(SYNTAX, line=str(line), column=str(column), detail=detail))
