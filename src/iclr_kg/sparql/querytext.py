"""Cheap checks on query text before a parser sees it: each one linear in the text's length.

They run in the web process and the CLI, where nothing stops a slow check, so there is no
regular expression with nested quantifiers here and no recursion:
- `check_nesting` and `check_operators`: Oxigraph parses, plans and evaluates a query by
  recursion over its tree, which is as deep as the text's brackets nest and as long as its
  chains of operators (`1-1-…-1`, `a||b||…`, a property path `:p/:p/…`). Past the stack of the
  thread it runs on, the process dies (SIGSEGV, not an error). Queries run on threads with a
  deep stack (`deepstack.py`), sized for what these two bounds let through; each bound errs
  high, never low, where the text might be read otherwise than by the parser.
- `check_patterns`: preparing a query plans its joins, and the planner's time grows much faster
  than the number of triple patterns (on an empty store, 50 patterns on one subject take 0.04 s,
  100 take 0.7 s, 150 take 3.8 s); real queries have a few dozen at most.
- `update_keyword`: the first keyword after the prologue, so that an update sent to /sparql gets
  the hint "updates go to /update" rather than the parser's "expected CONSTRUCT".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pyoxigraph import NamedNode, Variable

from iclr_kg.errors import QueryError

MAX_NESTING = 200
MAX_OPERATORS = 5_000
OPERATOR_CHARACTERS = "-+*/|^!=<>?&"
MAX_TRIPLE_PATTERNS = 100
OPENERS, CLOSERS = "{([", "})]"
UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"})


# The one reading of SPARQL (and Turtle) text that every scan here, remote/names.py and
# sparql/lint.py share: a token is a comment, a string (short or long, unterminated ones run to
# the end of their line or of the text), a written-out IRI (SPARQL's IRIREF: a `#` in it starts
# no comment), a variable, a blank node label, a prefixed name (`prefix` and `local` apart), a
# word (a keyword, `a`, a function's name), a number, a bracket or a separator (`;` `.` `,`).
# Whatever no token matches is an operator or space, passed over. A scan is linear, done by `re`
# in C: no quantifier nests in another over the same characters, and a prefixed name starts only
# where no name character precedes it, so a word without a colon is tried as one once, not again
# from each of its dots (`a.a.a...`).
TOKENS = re.compile(
    r"""(?P<comment>\#[^\r\n]*)
      | (?P<string>'''(?:[^'\\]|\\[\s\S]|\\\Z|'(?!''))*(?:'''|\Z)
                  |\"\"\"(?:[^"\\]|\\[\s\S]|\\\Z|"(?!""))*(?:\"\"\"|\Z)
                  |'(?:[^'\\\r\n]|\\[\s\S]|\\\Z)*(?:'|[\r\n]|\Z)
                  |"(?:[^"\\\r\n]|\\[\s\S]|\\\Z)*(?:"|[\r\n]|\Z))
      | (?P<iri><(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>)
      | (?P<variable>[?$]\w+)
      | (?P<bnode>_:[\w.-]*)
      | (?P<pname>(?<![\w.:-])(?P<prefix>[^\W\d_][\w-]*(?:\.+[\w-]+)*)?:
                  (?P<local>(?:[\w:%-]|\\[-_~.!$&'()*+,;=/?\#@%]|\.(?=[\w:%-]|\\[-_~.!$&'()*+,;=/?\#@%]))*))
      | (?P<word>[^\W\d][\w-]*)
      | (?P<number>\d+\.\d*[eE][+-]?\d+|\d*\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?)
      | (?P<bracket>[{}()\[\]])
      | (?P<separator>[;.,])
    """,
    re.VERBOSE,
)


def tokens(text: str, start: int = 0) -> Iterator[re.Match[str]]:
    """The tokens of `text` from `start` (`TOKENS`): `match.lastgroup` names each one's kind (a
    prefixed name's parts are its groups "prefix" and "local")."""
    return TOKENS.finditer(text, start)


def declarations(text: str) -> dict[str, list[str]]:
    """Each prefix the text declares (`PREFIX name: <iri>`), with the IRIs it is declared as, in
    order (a name may be declared again)."""
    declared: dict[str, list[str]] = {}
    previous: list[re.Match[str]] = []
    for token in tokens(text):
        if token.lastgroup == "comment":
            continue
        if token.lastgroup == "iri" and len(previous) == 2:
            word, name = previous
            if word.group().upper() == "PREFIX" and name.lastgroup == "pname" and not name.group("local"):
                declared.setdefault(name.group("prefix") or "", []).append(token.group()[1:-1])
        previous = [*previous[-1:], token]
    return declared


def nesting_depth(text: str) -> int:
    """The deepest nesting of brackets outside strings, IRIs and comments (a linear scan).

    Where the tokenizer's reading of a string or comment is off, the depth is counted too high,
    never too low for the brackets the parser sees: every bracket outside what it takes for a
    string, comment or IRI counts.
    """
    return _deepest(c for _, c in brackets(text))


def _deepest(in_order: Iterable[str]) -> int:
    """The deepest nesting that these brackets, in order, reach (a closer with none open: none)."""
    depth = deepest = 0
    for c in in_order:
        if c in OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def brackets(text: str) -> Iterator[tuple[int, str]]:
    """(index, bracket) of each bracket outside strings, IRIs and comments."""
    for token in tokens(text):
        if token.lastgroup == "bracket":
            yield token.start(), token.group()


def position(text: str, offset: int) -> tuple[int, int]:
    """(line, column), both from 1, of the character at `offset` in `text`."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def may_mention(text: str, words: Iterable[str]) -> bool:
    """Whether a case-insensitive search for any of `words` (given in lower case) could match
    `text`: False only for ASCII text in which none of them occurs, decided in C. Python's
    case-folded regular expressions take tens of microseconds over a query with prefixes, so the
    checks that use them run them only where this says True. Text that is not ASCII always may:
    a case fold such as U+017F for "s" matches there."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return any(word in lowered for word in words)


def says(text: str, *words: str) -> bool:
    """Whether any of `words` (keywords or function names, upper case) stands in `text` as a
    whole word, in any case, anywhere (a comment or string too: whoever asks wants to be safe,
    not exact). The one answer to "does this query call SERVICE", "may its answer change"
    (NOW, RAND...), "is it an ASK": the case-folded search runs only where `may_mention` says
    a word could occur."""
    return may_mention(text, [w.lower() for w in words]) and _whole_words(words).search(text) is not None


# Words after which an answer may change: functions whose value changes between evaluations,
# and calls to other services.
VOLATILE = ("SERVICE", "NOW", "RAND", "UUID", "STRUUID", "BNODE")


def keepable(text: str) -> bool:
    """Whether the answer to the query `text` depends on the store alone, so it may be kept (a
    build's saved answers, the result cache, the response memo) and given an ETag: no word of
    VOLATILE in it (`says`: as the engine reads the text, comments aside)."""
    return not says(text, *VOLATILE)


@functools.lru_cache(maxsize=64)
def _whole_words(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)


def nesting_bound(text: str) -> int:
    """`nesting_depth` erring high: an opening bracket in a comment counts too (a closing one does
    not), so text the tokenizer would take for a comment and the parser for code nests no deeper
    than this says."""
    seen: list[str] = []
    for token in tokens(text):
        if token.lastgroup == "bracket":
            seen.append(token.group())
        elif token.lastgroup == "comment":
            seen += [c for c in token.group() if c in OPENERS]
    return _deepest(seen)


def check_nesting(text: str) -> None:
    """Refuse text nested deeper than MAX_NESTING before the parser recurses into it.

    No text can nest deeper than it has opening brackets, and counting them is a C loop: the
    scan in Python (a fifth of a millisecond for a query with our prefixes, on every query)
    runs only for text with more than MAX_NESTING of them."""
    if sum(map(text.count, OPENERS)) <= MAX_NESTING:
        return
    depth = nesting_bound(text)
    if depth > MAX_NESTING:
        raise QueryError(f"the query nests brackets {depth} deep; at most {MAX_NESTING} levels are accepted")


def operators(text: str) -> int:
    """How many operator characters (`OPERATOR_CHARACTERS`) stand outside strings, IRIs and
    comments: a chain of operators or path steps is at most this long. It errs high: each
    character of `||`, `&&`, `<=`... counts, and so does a `-` inside a word (`true-true` is two
    booleans to the parser; the tokenizer reads a language tag's `en-US` as one word); only a
    literal's `^^` (its datatype) does not."""
    count, end, group = 0, 0, ""
    for token in tokens(text):
        count += _operators_between(text[end : token.start()], after_string=group == "string")
        end, group = token.end(), token.lastgroup or ""
        if group == "word":
            count += token.group().count("-")
    return count + _operators_between(text[end:], after_string=group == "string")


_OPERATOR_BYTES = OPERATOR_CHARACTERS.encode()


def _operator_characters(text: str) -> int:
    """How many operator characters `text` holds anywhere: one pass in C over its UTF-8 bytes (an
    ASCII byte there is always that character; docs/performance.md#deep-stacks)."""
    encoded = text.encode("utf-8", "surrogatepass")
    return len(encoded) - len(encoded.translate(None, _OPERATOR_BYTES))


def _operators_between(between: str, after_string: bool) -> int:
    count = _operator_characters(between) if between else 0
    return count - 2 if after_string and between.startswith("^^") else count


def check_operators(text: str) -> None:
    """Refuse text with more than MAX_OPERATORS operators before the parser builds a tree as deep
    as their chain. Text with fewer operator characters anywhere cannot have more, and counting
    those is a C loop: the scan runs only above it."""
    if _operator_characters(text) <= MAX_OPERATORS:
        return
    found = operators(text)
    if found > MAX_OPERATORS:
        raise QueryError(
            f"the query has {found:,} operators (such as - || / in expressions and property paths); "
            f"at most {MAX_OPERATORS:,} are accepted (a long list fits in VALUES or IN (…))"
        )


def triple_patterns(text: str) -> int:
    """How many triple patterns `text` may hold, counted from above in one linear scan: each
    separator (`.`, `;`, `,`) directly inside `{` or `[`, plus one per `{` and `[`."""
    count, stack = 0, []
    for token in tokens(text):
        group, c = token.lastgroup, token.group()
        if group == "bracket":
            if c in OPENERS:
                stack.append(c)
                count += c != "("
            elif stack:
                stack.pop()
        elif group == "separator" and stack and stack[-1] != "(":
            count += 1
    return count


def check_patterns(text: str) -> None:
    """Refuse a query with more than MAX_TRIPLE_PATTERNS triple patterns before it is prepared.
    Counting is a Python scan, so it runs only where the text has that many separators at all."""
    if sum(map(text.count, ".;,{[")) <= MAX_TRIPLE_PATTERNS:
        return
    found = triple_patterns(text)
    if found > MAX_TRIPLE_PATTERNS:
        raise QueryError(
            f"the query has about {found} triple patterns; at most {MAX_TRIPLE_PATTERNS} are accepted "
            "(split it into several queries, or use VALUES for long lists)"
        )


def update_keyword(text: str) -> str | None:
    """The first keyword after the prologue (comments, PREFIX and BASE), if it starts an update."""
    declaring = False  # inside PREFIX name: <iri> or BASE <iri>, until the IRI
    for token in tokens(text):
        group = token.lastgroup
        if group == "comment":
            continue
        if declaring and group in ("iri", "pname"):
            declaring = group == "pname"
            continue
        word = token.group().upper() if group == "word" else ""
        if word in ("PREFIX", "BASE"):
            declaring = True
            continue
        return word if word in UPDATE_KEYWORDS else None
    return None


def _top_level(text: str) -> Iterator[tuple[int, str]]:
    """(index, token) for each `;` and word outside brackets, strings, IRIs and comments, words
    upper-cased (a variable, `?where`, and a prefixed name, `ex:with`, are no words)."""
    depth = 0
    for token in tokens(text):
        group, c = token.lastgroup, token.group()
        if group == "bracket":
            depth = depth + 1 if c in OPENERS else max(0, depth - 1)
        elif depth == 0 and (group == "word" or (group == "separator" and c == ";")):
            yield token.start(), c.upper()


def top_level_words(text: str) -> list[tuple[int, str]]:
    """(index, WORD) of each keyword-like word outside brackets, strings, IRIs and comments."""
    return [(index, token) for index, token in _top_level(text) if token != ";"]


def add_using(update: str, using: list[str], using_named: list[str]) -> str:
    """The update with the protocol's `using-graph-uri` / `using-named-graph-uri` written in.

    SPARQL 1.1 Protocol §2.2.3: they set the dataset of every operation with a WHERE clause, as
    USING / USING NAMED would, and a request that gives them and also has USING, USING NAMED or
    WITH in its text is an error. So a `USING <g>` clause goes before each WHERE that ends a
    DELETE/INSERT template (not the short form DELETE WHERE, which takes no USING).
    """
    words = top_level_words(update)
    clash = sorted({word for _, word in words if word in ("USING", "WITH")})
    if clash:
        raise QueryError(
            f"the update has {' and '.join(clash)} and the request gives using-graph-uri or "
            "using-named-graph-uri; the protocol allows only one way to set its dataset"
        )
    clause = "".join(f" USING <{g}>" for g in using) + "".join(f" USING NAMED <{g}>" for g in using_named) + " "
    pieces, last = [], 0
    for number, (index, word) in enumerate(words):
        if word != "WHERE":
            continue
        if number and words[number - 1][1] == "DELETE" and _only_space(update[words[number - 1][0] + 6 : index]):
            continue  # DELETE WHERE { … }
        pieces += [update[last:index], clause]
        last = index
    pieces.append(update[last:])
    return "".join(pieces)


def _only_space(text: str) -> bool:
    """Nothing but whitespace and comments."""
    return not without_comments(text).strip()


def without_comments(text: str) -> str:
    """The text with each comment blanked out (offsets kept), a comment ended by CR or LF as
    Oxigraph ends it: for a parser that ends one at LF only (rdflib's), which would read the
    code after a bare CR as part of the comment."""
    return TOKENS.sub(lambda token: " " * len(token.group()) if token.lastgroup == "comment" else token.group(), text)


def split_update(update: str) -> list[str]:
    """The operations of an update request, each runnable alone: the `;`-separated parts, each
    preceded by the PREFIX and BASE declarations of the parts before it (they stay in scope)."""
    return [operation for _, _, operation in update_operations(update)]


def update_operations(update: str) -> list[tuple[int, int, str]]:
    """Each operation of an update request: where its own text starts (its first keyword, after
    its part's declarations) and ends (at its `;` or the end), and the operation runnable alone
    (`split_update`)."""
    cuts = [index for index, token in _top_level(update) if token == ";"]
    operations, prologue = [], ""
    for start, end in zip([-1, *cuts], [*cuts, len(update)], strict=True):
        part = update[start + 1 if start >= 0 else 0 : end]
        first = next((index for index, word in top_level_words(part) if word in UPDATE_KEYWORDS), None)
        if first is None:  # only declarations (or nothing): they carry over to what follows
            prologue += part + "\n"
            continue
        operations.append((end - len(part) + first, end, prologue + part))
        prologue += part[:first] + "\n"
    return operations


def only_data_and_graphs(update: str) -> bool:
    """Whether every operation of an update is INSERT DATA, DELETE DATA or a graph operation
    (CREATE, DROP, CLEAR, ADD, COPY, MOVE): none can call a SERVICE or fetch, so the checks on
    what leaves the process need not read its data (whose literals may hold any word)."""
    for operation in split_update(update) or [update]:
        words = [word for _, word in top_level_words(operation) if word not in ("PREFIX", "BASE")]
        if not words:
            return False
        if words[0] in ("INSERT", "DELETE") and words[1:2] == ["DATA"]:
            continue
        if words[0] not in ("CREATE", "DROP", "CLEAR", "ADD", "COPY", "MOVE"):
            return False
    return True


def unclosed(text: str) -> int | None:
    """The offset of the bracket that is never closed (the last one, or the one a bracket of
    another kind tries to close), or None; comments and strings skipped."""
    stack: list[int] = []
    for i, c in brackets(text):
        if c in OPENERS:
            stack.append(i)
        elif stack:
            if OPENERS.index(text[stack[-1]]) != CLOSERS.index(c):
                return stack[-1]
            stack.pop()
    return stack[-1] if stack else None


def with_values(text: str, substitutions: dict[Variable, Any] | None) -> str:
    """The query with each substitution written in: what pyoxigraph's `substitutions=` does, for an
    engine that has no such thing, and for pyoxigraph itself, which plans a query before it binds
    its substitutions (a saved query's parameter then joins last: organization-papers is two hundred
    times slower with `substitutions=`; docs/performance.md, measured choices). The value is a term
    pyoxigraph has checked, in N-Triples syntax (never text from the request).

    A variable is bound by a one-row `VALUES` at the start of the WHERE group, so every use of
    it sees the value. `SERVICE ?v` gets the IRI itself (an engine runs SERVICE before joining
    the VALUES: Oxigraph then finds ?v unbound); a variable used nowhere else is bound by a
    `BIND` at the end of the group instead (Virtuoso cannot compile VALUES beside SERVICE).
    """
    if not substitutions:
        return text
    text = _service_endpoints(text, {v.value: str(t) for v, t in substitutions.items() if isinstance(t, NamedNode)})
    opening, closing = _where_group(text)
    if opening < 0 or closing < 0:
        return text
    inside = text[opening + 1 : closing]
    named = {token.group()[1:] for token in tokens(inside) if token.lastgroup == "variable"}
    used = {v for v in substitutions if v.value in named}
    values = " ".join(f"VALUES {v} {{ {t} }}" for v, t in substitutions.items() if v in used)
    binds = " ".join(f"BIND ({t} AS {v})" for v, t in substitutions.items() if v not in used)
    inside = _pushed_into_subqueries(inside, {v: t for v, t in substitutions.items() if v in used})
    return f"{text[: opening + 1]} {values} {inside} {binds} {text[closing:]}"


def _service_endpoints(text: str, iris: dict[str, str]) -> str:
    """`text` with each `SERVICE [SILENT] ?v` whose variable `iris` binds given the IRI itself."""
    if not iris:
        return text
    out: list[str] = []
    copied, words = 0, ["", ""]
    for token in tokens(text):
        if token.lastgroup == "comment":
            continue
        name = token.group()[1:] if token.lastgroup == "variable" else None
        if name in iris and (words[-1] == "SERVICE" or words == ["SERVICE", "SILENT"]):
            out += [text[copied : token.start()], iris[name]]
            copied = token.end()
        words = [words[-1], token.group().upper() if token.lastgroup == "word" else ""]
    return "".join([*out, text[copied:]])


def _pushed_into_subqueries(group: str, bound: dict[Variable, Any]) -> str:
    """`group` with each binding also written into every sub-SELECT that projects the variable
    (and has no LIMIT or OFFSET, which a restriction would change): joining the VALUES outside
    restricts those rows anyway, but engines evaluate a sub-SELECT on its own first, so a
    parameter used only inside one (`review-scores`' edition) would restrict nothing until after
    every edition was aggregated (six times slower: docs/performance.md, measured choices)."""
    if not bound:
        return group
    insertions: list[tuple[int, str]] = []
    for start, close in _subselects(group):
        body = group[start:close]
        words = top_level_words(body)
        if any(word in ("LIMIT", "OFFSET") for _, word in words):
            continue
        where = next((i for i, word in words if word == "WHERE"), None)
        opening = body.find("{", where if where is not None else 0)
        if opening < 0:
            continue
        projected = _projected(body[:opening], body[opening:])
        chosen = [f"VALUES {v} {{ {t} }}" for v, t in bound.items() if v.value in projected]
        if chosen:
            insertions.append((start + opening + 1, " " + " ".join(chosen) + " "))
    for index, written in sorted(insertions, reverse=True):
        group = group[:index] + written + group[index:]
    return group


def _subselects(group: str) -> Iterator[tuple[int, int]]:
    """(start of SELECT, index of the closing `}`) of each sub-SELECT in a group pattern."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for index, bracket in brackets(group):
        if bracket == "{":
            stack.append(index)
        elif bracket == "}" and stack:
            pairs[stack.pop()] = index
    for opening, close in pairs.items():
        first = next((t for t in tokens(group, opening + 1) if t.lastgroup != "comment"), None)
        if first is not None and first.lastgroup == "word" and first.group().upper() == "SELECT":
            yield first.start(), close


def _projected(projection: str, pattern: str) -> set[str]:
    """The variables a SELECT clause projects as they are (not those only inside an expression,
    nor an expression's `AS` name); `SELECT *`: every variable of its pattern."""
    if re.search(r"SELECT\s+(?:DISTINCT\s+|REDUCED\s+)?\*", projection, re.IGNORECASE):
        return {token.group()[1:] for token in tokens(pattern) if token.lastgroup == "variable"}
    plain, depth = set(), 0
    for token in tokens(projection):
        if token.group() in "()":
            depth += 1 if token.group() == "(" else -1
        elif token.lastgroup == "variable" and depth == 0:
            plain.add(token.group()[1:])
    return plain


def _where_group(text: str) -> tuple[int, int]:
    """The positions of the `{` and `}` of the query's WHERE group (-1 where there is none)."""
    words = top_level_words(text)
    where = next((i for i, word in words if word == "WHERE"), None)
    opening = text.find("{", where) if where is not None else _first_group(text, words)
    if opening < 0:
        return -1, -1
    depth = 0
    for index, bracket in brackets(text):
        if index < opening or bracket not in "{}":
            continue
        depth += 1 if bracket == "{" else -1
        if depth == 0:
            return opening, index
    return opening, -1


def _first_group(text: str, words: list[tuple[int, str]]) -> int:
    start = next((i for i, word in words if word in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")), 0)
    return text.find("{", start)
