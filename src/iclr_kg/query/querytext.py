"""Cheap checks on query text before a parser sees it: each one linear in the text's length.

They run in the web process and the CLI, where nothing stops a slow check and a crash takes the
process down, so there is no regular expression with nested quantifiers here and no recursion:
- `check_nesting`: Oxigraph's recursive-descent parser overflows its stack (a segfault, not an
  error) somewhere between 2,000 and 5,000 nested `{`; real queries nest a few levels.
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
MAX_TRIPLE_PATTERNS = 100
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:%")
OPENERS, CLOSERS = "{([", "})]"
UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"})


def nesting_depth(text: str) -> int:
    """The deepest nesting of brackets outside strings, IRIs and comments (a linear scan).

    Strings and comments are skipped as the SPARQL grammar reads them; where this reading is
    off, the depth is counted too high, never too low for the brackets the parser sees, because
    every bracket outside what we take for a string or comment counts.
    """
    depth = deepest = 0
    for _, c in brackets(text):
        if c in OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def brackets(text: str) -> Iterator[tuple[int, str]]:
    """(index, bracket) of each bracket outside strings and comments, in one linear scan."""
    i, n = 0, len(text)
    while i < n:
        skipped = past_comment_string_or_iri(text, i)
        if skipped is not None:
            i = skipped
            continue
        if text[i] in OPENERS or text[i] in CLOSERS:
            yield i, text[i]
        i += 1


# An IRI written out (SPARQL's IRIREF): its `#` starts no comment, and it holds no bracket or quote
IRIREF = re.compile(r"<[^<>\"{}|^`\\\x00-\x20]*>")


def past_comment_string_or_iri(text: str, i: int) -> int | None:
    """The index after the comment, string literal or written-out IRI that starts at `i`, or None.
    An IRI is read at any depth: inside `{ }`, `<…#…>` once read the rest of the line as a
    comment, losing the brackets that close a block and the operations after it. (A `<` that
    starts no IRI is the less-than operator.)"""
    if text[i] == "<":
        found = IRIREF.match(text, i)
        return found.end() if found is not None else None
    return past_comment_or_string(text, i)


def past_comment_or_string(text: str, i: int) -> int | None:
    """The index after the comment or string literal that starts at `i`, or None if none does
    (the one reading of comments and strings every scan here shares)."""
    c = text[i]
    if c == "#":
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if c in "\"'":
        return _string_end(text, i)
    return None


def _string_end(text: str, start: int) -> int:
    """The index after the string literal that starts at `start` (short or long form)."""
    quote = text[start]
    if text.startswith(quote * 3, start):
        end = start + 3
        while True:
            end = text.find(quote * 3, end)
            if end < 0:
                return len(text)
            if _escaped(text, end):
                end += 1
                continue
            return end + 3
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote or c == "\n":
            return i + 1
        i += 1
    return i


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes - 1 >= 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


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


@functools.lru_cache(maxsize=64)
def _whole_words(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)


def check_nesting(text: str) -> None:
    """Refuse text nested deeper than MAX_NESTING before the parser recurses into it.

    No text can nest deeper than it has opening brackets, and counting them is a C loop: the
    scan in Python (a fifth of a millisecond for a query with our prefixes, on every query)
    runs only for text with more than MAX_NESTING of them."""
    if sum(map(text.count, OPENERS)) <= MAX_NESTING:
        return
    depth = nesting_depth(text)
    if depth > MAX_NESTING:
        raise QueryError(f"the query nests brackets {depth} deep; at most {MAX_NESTING} levels are accepted")


def triple_patterns(text: str) -> int:
    """How many triple patterns `text` may hold, counted from above in one linear scan: each
    `.`, `;` and `,` that separates patterns (directly inside `{` or `[`, outside strings, IRIs
    and comments, and not inside a name or a number), plus one per `{` and `[`."""
    count, stack, i, n = 0, [], 0, len(text)
    while i < n:
        skipped = past_comment_string_or_iri(text, i)
        if skipped is not None:
            i = skipped
            continue
        c = text[i]
        if c in OPENERS:
            stack.append(c)
            count += c != "("
        elif c in CLOSERS:
            if stack:
                stack.pop()
        elif stack and stack[-1] != "(" and (c in ";," or (c == "." and (i + 1 == n or text[i + 1] not in NAME_CHARS))):
            count += 1
        i += 1
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
    """The first keyword after the prologue (BOM, comments, PREFIX and BASE), if it starts an update."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace() or c == "\ufeff":
            i += 1
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        else:
            end = i
            while end < n and (text[end].isalpha()):
                end += 1
            word = text[i:end].upper()
            if word in ("PREFIX", "BASE"):
                close = text.find(">", end)
                if close < 0:
                    return None
                i = close + 1
                continue
            return word if word in UPDATE_KEYWORDS else None
    return None


def _top_level(text: str) -> Iterator[tuple[int, str]]:
    """(index, token) for each `;` and keyword-like word outside brackets, strings, IRIs and
    comments, in one linear scan. Words in a variable (`?where`) or a prefixed name
    (`ex:with`, `with:x`) are not keywords and are left out; words come upper-cased."""
    depth, i, n = 0, 0, len(text)
    while i < n:
        skipped = past_comment_string_or_iri(text, i)
        if skipped is not None:
            i = skipped
            continue
        c = text[i]
        if c in OPENERS:
            depth += 1
        elif c in CLOSERS:
            depth = max(0, depth - 1)
        elif c == ";" and depth == 0:
            yield i, ";"
        elif c.isalpha() or c == "_":
            end = i
            while end < n and (text[end].isalnum() or text[end] in "_-"):
                end += 1
            before = text[i - 1] if i else " "
            after = text[end] if end < n else " "
            if depth == 0 and before not in "?$:" and after != ":":
                yield i, text[i:end].upper()
            i = end
            continue
        i += 1


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
    return all(line.split("#", 1)[0].strip() == "" for line in text.split("\n"))


def split_update(update: str) -> list[str]:
    """The operations of an update request, each runnable alone: the `;`-separated parts, each
    preceded by the PREFIX and BASE declarations of the parts before it (they stay in scope)."""
    cuts = [index for index, token in _top_level(update) if token == ";"]
    parts = [
        update[start + 1 if start >= 0 else 0 : end]
        for start, end in zip([-1, *cuts], [*cuts, len(update)], strict=True)
    ]
    operations, prologue = [], ""
    for part in parts:
        first = next((index for index, word in top_level_words(part) if word in UPDATE_KEYWORDS), None)
        if first is None:  # only declarations (or nothing): they carry over to what follows
            prologue += part + "\n"
            continue
        operations.append(prologue + part)
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
    its substitutions (a saved query's parameter then joins last: organization-papers took 1.9 s
    at 50,000 papers with `substitutions=`, 0.01 s with the value written in). The value is a term
    pyoxigraph has checked, in N-Triples syntax (never text from the request).

    A variable is bound by a one-row `VALUES` at the start of the WHERE group, so every use of
    it sees the value. `SERVICE ?v` gets the IRI itself (an engine runs SERVICE before joining
    the VALUES: Oxigraph then finds ?v unbound); a variable used nowhere else is bound by a
    `BIND` at the end of the group instead (Virtuoso cannot compile VALUES beside SERVICE).
    """
    if not substitutions:
        return text
    for variable, term in substitutions.items():
        if isinstance(term, NamedNode):
            service = re.compile(rf"(SERVICE\s+(?:SILENT\s+)?)[?$]{re.escape(variable.value)}\b", re.IGNORECASE)
            iri = str(term)
            text = service.sub(lambda m: m.group(1) + iri, text)  # noqa: B023 - used at once, in this iteration
    opening, closing = _where_group(text)
    if opening < 0 or closing < 0:
        return text
    inside = text[opening + 1 : closing]
    used = {v for v in substitutions if re.search(rf"[?$]{re.escape(v.value)}\b", inside)}
    values = " ".join(f"VALUES {v} {{ {t} }}" for v, t in substitutions.items() if v in used)
    binds = " ".join(f"BIND ({t} AS {v})" for v, t in substitutions.items() if v not in used)
    inside = _pushed_into_subqueries(inside, {v: t for v, t in substitutions.items() if v in used})
    return f"{text[: opening + 1]} {values} {inside} {binds} {text[closing:]}"


def _pushed_into_subqueries(group: str, bound: dict[Variable, Any]) -> str:
    """`group` with each binding also written into every sub-SELECT that projects the variable
    (and has no LIMIT or OFFSET, which a restriction would change): joining the VALUES outside
    restricts those rows anyway, but engines evaluate a sub-SELECT on its own first, so a
    parameter used only inside one (`review-scores`' edition) would restrict nothing until after
    every edition was aggregated (4.7 s at 50,000 papers instead of 0.8 s)."""
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
        match = re.match(r"(?:\s|#[^\n]*\n)*SELECT\b", group[opening + 1 :], re.IGNORECASE)
        if match:
            yield opening + 1 + match.end() - len("SELECT"), close


def _projected(projection: str, pattern: str) -> set[str]:
    """The variables a SELECT clause projects as they are (not those only inside an expression,
    nor an expression's `AS` name); `SELECT *`: every variable of its pattern."""
    if re.search(r"SELECT\s+(?:DISTINCT\s+|REDUCED\s+)?\*", projection, re.IGNORECASE):
        return set(re.findall(r"[?$](\w+)", pattern))
    plain, depth = set(), 0
    for match in re.finditer(r"[()]|[?$](\w+)", projection):
        if match.group(0) == "(":
            depth += 1
        elif match.group(0) == ")":
            depth -= 1
        elif depth == 0:
            plain.add(match.group(1))
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
