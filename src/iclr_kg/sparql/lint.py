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
    "?{variable} is used as an iclr:{first} ({why}) and as an iclr:{cls} ({use}): no entity is both, so "
    "this pattern matches nothing{hint}"
)
SUBJECT_OF, VALUE_OF = "subject of iclr:{prop}", "value of iclr:{prop}"
TRY_PATH = "; for the {whose}'s {what}, write iclr:{step}/iclr:{prop}"
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
    of, by the ontology's domains, ranges and disjoint classes: `?p iclr:title ?t ; iclr:year ?y`
    (a title is a paper's, a year an edition's) finds nothing, and says how to reach the value
    instead (`iclr:submittedTo/iclr:year`). Read with rdflib's SPARQL parser; a text it cannot
    read, or one too long, gets no warning (the syntax check speaks for it).

    A variable is what its `a` statements say, else what its first use in reading order makes
    it; a later use that contradicts that is the mistake, warned once, where it is written. A
    clash between two uses is one mistake, not one for each side."""
    if len(text) > MEETS_LIMIT or update_keyword(text):
        return []
    try:
        patterns = list(_triple_patterns(text))
    except Exception:  # noqa: BLE001 - rdflib's parser fails in many ways; Oxigraph's verdict stands
        return []
    by_variable: dict[str, list[Use]] = defaultdict(list)
    for use in sorted(_uses(text, patterns, ontology), key=lambda u: (u.side != "type", u.at)):
        by_variable[use.variable].append(use)
    problems, said = [], set()
    for variable, uses in by_variable.items():
        known: list[Use] = []
        for use in uses:
            clash = _contradicted(ontology, known, use)
            if clash is None:
                known.append(use)
            elif (variable, use.prop, use.side) not in said:  # a property misused twice is one mistake
                said.add((variable, use.prop, use.side))
                problems.append(_never_both(text, ontology, variable, use, *clash))
    return problems


@dataclass(frozen=True)
class Use:
    """Where a query makes a variable of a class: `?p a iclr:Paper` (side "type"), the subject of
    a property with a domain ("domain"), the value of one with a range ("range"); `at` and
    `length`: the term that says it in the text."""

    variable: str
    prop: str  # the property's local name; for "type", the class's
    side: str
    classes: tuple[str, ...]  # sorted: the same message every run
    at: int
    length: int

    @property
    def why(self) -> str | Words:
        if self.side == "type":
            return f"?{self.variable} a iclr:{self.prop}"  # the query's own words: nothing to translate
        return words(SUBJECT_OF if self.side == "domain" else VALUE_OF, prop=self.prop)


def _contradicted(ontology: Terms, known: list[Use], use: Use) -> tuple[Use, str, str] | None:
    """The first of `known` that `use` contradicts, with the class each makes the variable."""
    pairs = ((k, c, d) for k in known for c in k.classes for d in use.classes)
    return next(((k, c, d) for k, c, d in pairs if ontology.never_both(c, d)), None)


def _uses(text: str, patterns: list[tuple[str | None, str, str | None]], ontology: Terms) -> Iterator[Use]:
    """Each way `patterns` make a variable of a class, with the place in `text` that says it."""
    places = _places(text)
    for subject, predicate, value in patterns:
        if predicate == "type":
            if subject is not None and value is not None:
                at, length = _place(places, text, subject, value)
                yield Use(subject, value, "type", (value,), at, length)
            continue
        at, length = _place(places, text, subject, predicate)
        for variable, side, classes in ((subject, "domain", ontology.domains), (value, "range", ontology.ranges)):
            if variable is not None and classes.get(predicate):
                yield Use(variable, predicate, side, tuple(sorted(classes[predicate])), at, length)


def _never_both(text: str, ontology: Terms, variable: str, use: Use, known: Use, first: str, cls: str) -> Problem:
    """The warning that `use` makes `variable` a `cls`, where `known` made it a `first`: at `use`,
    with the path that reaches the value either way round, where the ontology has one."""
    hint: str | Words = ""
    if use.side == "domain":
        hint = _way_round(ontology, first, cls, use.prop)
    if not hint and known.side == "domain":
        hint = _way_round(ontology, cls, first, known.prop)
    message = words(NEVER_BOTH, variable=variable, first=first, why=known.why, cls=cls, use=use.why, hint=hint)
    line, column = position(text, use.at)
    return Problem.saying(line, column, use.length, message, "warning")


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
    """A path from a `cls` to a `domain` entity's `prop`, through one property of the ontology:
    "; for the paper's year, write iclr:submittedTo/iclr:year" (the labels said in the reader's
    language, as the ontology gives them)."""
    for step, of in sorted(ontology.domains.items()):
        if any(cls in ontology.below(d) for d in of) and any(
            domain in ontology.below(r) for r in ontology.ranges.get(step, ())
        ):
            whose, what = Words(ontology.label(cls)), Words(ontology.label(prop))
            return words(TRY_PATH, whose=whose, what=what, step=step, prop=prop)
    return ""


Place = tuple[str | None, str, int, int]  # (subject variable or None, iclr: local name, offset, length)


def _places(text: str) -> list[Place]:
    """Each `iclr:` name in `text`, in reading order, with the variable it is said of: the subject
    of the triple it stands in (`?p iclr:title ?t ; iclr:year ?y`: both of ?p), None inside
    brackets (a FILTER's, a blank node's `[ … ]`) or where the subject is no variable."""
    places: list[Place] = []
    subject: str | None = None
    expecting = True  # the next term starts a triple: after `{`, `}` or `.`
    outer: list[tuple[str | None, bool]] = []
    for token in tokens(text):
        kind, said = token.lastgroup, token.group()
        if kind == "bracket" and said in "([":
            outer.append((subject, expecting))
            subject, expecting = None, False
        elif kind == "bracket" and said in ")]":
            subject, expecting = outer.pop() if outer else (None, True)
            expecting = expecting and said == ")"  # after `[ … ]` a predicate follows
        elif kind == "bracket" or (kind == "separator" and said == "."):
            subject, expecting = None, True
        elif expecting and kind in ("variable", "iri", "pname", "bnode"):
            subject, expecting = (said[1:] if kind == "variable" else None), False
        elif kind == "pname" and token.group("prefix") == "iclr" and not _in_path(text, token):
            places.append((subject, token.group("local") or "", token.start(), len(said)))
    return places


def _in_path(text: str, token: re.Match[str]) -> bool:
    """Whether a name stands in a property path (`iclr:submittedTo/iclr:year`, `^iclr:x`), which
    `_triple_patterns` leaves out."""
    before, after = text[: token.start()].rstrip()[-1:], text[token.end() :].lstrip()[:1]
    return before in ("/", "|", "^") or after in ("/", "|", "*", "+")


def _place(places: list[Place], text: str, subject: str | None, local: str) -> tuple[int, int]:
    """The offset and length of the first place not yet taken that says iclr:`local` of
    `subject` (taken off `places`); else the first that names it; else the start."""
    for i, (said_of, name, at, length) in enumerate(places):
        if said_of == subject and name == local:
            del places[i]
            return at, length
    for token in tokens(text):
        if token.lastgroup == "pname" and token.group("prefix") == "iclr" and token.group("local") == local:
            return token.start(), len(token.group())
    return 0, 1


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
