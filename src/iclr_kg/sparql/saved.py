"""Saved queries: `queries/<name>.rq` files with a comment header, one type for CLI and web.

Header lines at the top of the file (before the first non-comment line):

    # title: Outstanding papers per organization
    # description: Counts award papers per organization, sub-organizations included.
    # param: org iri https://w3id.org/iclr-kg/resource/organization/google

    # requires: openreview-import
    # view: bar x=name y=papers series=year

A `param` names a query variable (without ?), its kind (iri, string, integer) and a default.
A string parameter named `lang` (PAGE_LANGUAGE) takes the page's language on a page (en, zh): a
query that joins texts stated in English and in Chinese picks each in that language.
Values are bound with pyoxigraph substitutions, never pasted into the query text. `requires`
says the query reads data that only an import brings (`iclr-kg import openreview --reviews`):
without one it runs, and returns no rows. `view` is how the query page shows the result first:
a table, a bar or line chart (x, y, series: column names), a graph (source, target, weight),
a tree (node, parent; `where=column:value` keeps only matching rows) or a timeline (x, label).
Every column a view names must be one the query returns: a file whose view names another fails
to load, saying which (a chart of a missing column draws nothing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import Literal, NamedNode, QuerySolutions, Store, Variable

from iclr_kg import vocab
from iclr_kg.errors import IclrKgError, QueryError
from iclr_kg.sparql.querytext import with_values

PAGE_LANGUAGE = "lang"
VIEWS = ("table", "bar", "line", "graph", "tree", "timeline")
VIEW_COLUMNS = ("x", "y", "series", "label", "source", "target", "weight", "node", "parent")  # `where` too
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
HEADER = re.compile(r"^#\s*(title|description|title@zh|description@zh|param|requires|view):\s*(.*)$")
ABSOLUTE_IRI = re.compile(r"^[a-z][a-z0-9+.-]*:[^\s<>\"{}|\\^`]*$", re.IGNORECASE)
XSD_INTEGER = vocab.XSD_INTEGER


def parse_iri(value: str, what: str) -> NamedNode:
    """`value` as an absolute IRI, or a QueryError naming `what` (a parameter) and the reason."""
    if not ABSOLUTE_IRI.match(value):
        raise QueryError(f"{what}: {value!r} is not an absolute IRI")
    try:
        return NamedNode(value)
    except ValueError as exc:  # what the pattern lets through and RFC 3987 does not (%00, a:b#c#d)
        raise QueryError(f"{what}: {value!r} is not a valid IRI ({exc})") from None


def expand(value: str) -> str:
    """A prefixed name (paper:PKubaeJkw3, person:ian-gemp, wd:Q42) as its full IRI; else as given.

    Our prefixes look like IRI schemes, so without this `paper:PKubaeJkw3` would be taken as an
    absolute IRI of its own and match nothing."""
    prefix, colon, local = value.strip().partition(":")
    if colon and prefix in vocab.QUERY_PREFIXES and not local.startswith("//"):
        return vocab.QUERY_PREFIXES[prefix] + local
    return value.strip()


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: str | None

    def term(self, value: str) -> NamedNode | Literal:
        """The RDF term for a value given by a user; a bad value is a QueryError."""
        try:
            if self.kind == "iri":
                value = expand(value)
                if not ABSOLUTE_IRI.match(value):
                    raise ValueError("not an absolute IRI, nor a prefixed name such as paper:NzTU59SYbNq")
                return NamedNode(value)
            if self.kind == "integer":
                return Literal(str(int(value)), datatype=XSD_INTEGER)
            return Literal(value)
        except ValueError as exc:
            raise QueryError(f"parameter {self.name}: {value!r} is not a valid {self.kind} ({exc})") from None


@dataclass(frozen=True)
class SavedQuery:
    name: str
    title: str
    description: str
    text: str
    params: tuple[Param, ...] = field(default_factory=tuple)
    requires: str | None = None  # "openreview-import": rows only once a venue is imported
    view: str = "table"  # how the workbench shows it first: "bar x=year y=papers series=name", ...
    title_zh: str = ""  # `# title@zh:`, shown on pages in Chinese
    description_zh: str = ""

    @property
    def asked_params(self) -> tuple[Param, ...]:
        """The parameters a page's form asks for: all but the page's language (PAGE_LANGUAGE)."""
        return tuple(p for p in self.params if p.name != PAGE_LANGUAGE)

    def title_in(self, lang: str) -> str:
        return self.title_zh if lang == "zh" and self.title_zh else self.title

    def description_in(self, lang: str) -> str:
        return self.description_zh if lang == "zh" and self.description_zh else self.description

    def substitutions(self, values: dict[str, str] | None = None) -> dict[Variable, NamedNode | Literal]:
        """Bindings for the query's parameters: given values, else defaults; unknown names fail."""
        values = dict(values or {})
        known = {p.name for p in self.params}
        unknown = set(values) - known
        if unknown:
            raise QueryError(f"unknown parameter(s) for {self.name}: {', '.join(sorted(unknown))}")
        bound: dict[Variable, NamedNode | Literal] = {}
        for param in self.params:
            value = values.get(param.name, param.default)
            if value is not None:
                bound[Variable(param.name)] = param.term(value)
        return bound

    def text_with(self, values: dict[str, str] | None = None) -> str:
        """The query with its parameters written in (`with_values`): a text the query page runs
        as is, with the answers of the bound query."""
        return with_values(self.text, self.substitutions(values))

    @property
    def editable(self) -> str:
        """The text a link to the query page carries: the defaults written in, as the saved
        query's page runs it (a federated query's `SERVICE ?wikidata` left unbound is refused)."""
        return self.text_with({})

    def default_requests(self) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
        """The (text, substitutions as strings) a request for the answer with the defaults
        arrives as: `/queries/<name>` binds them as substitutions, the page's /sparql link
        writes them into the text (`text_with`)."""
        defaults = tuple(sorted((v.value, str(t)) for v, t in self.substitutions({}).items()))
        return ((self.text, defaults), (self.text_with({}), ()))


VIEW_LINE = re.compile(r"^#\s*view:\s*(\S.*?)\s*$", re.M)


def declared_view(text: str) -> str | None:
    """The `# view:` line a query text carries (the workbench's pickers write one), if it names
    a known view: the query page shows the result that way when the link gives no `view`."""
    match = VIEW_LINE.search(text)
    if match is None or match.group(1).split(" ", 1)[0] not in VIEWS:
        return None
    return match.group(1)


def returned_variables(text: str) -> list[str]:
    """The variables a SELECT query returns, as pyoxigraph's parser reads them (an empty store,
    nothing evaluated: the rows are never asked for); none for ASK, CONSTRUCT and DESCRIBE."""
    answer = Store().query(text, prefixes=vocab.QUERY_PREFIXES)
    return [v.value for v in answer.variables] if isinstance(answer, QuerySolutions) else []


def view_columns(view: str) -> list[str]:
    """The columns a view spec names (`bar x=year y=papers` -> year, papers; `tree ...
    where=kind:unit` -> kind)."""
    options = dict(pair.split("=", 1) for pair in view.split()[1:] if "=" in pair)
    named = [options[o] for o in VIEW_COLUMNS if options.get(o)]
    return named + ([options["where"].split(":", 1)[0]] if options.get("where") else [])


def _check_view_columns(path: Path, view: str, text: str) -> None:
    """A view that names a column the query does not return draws nothing: an error at load."""
    returned = returned_variables(text)
    missing = [c for c in view_columns(view) if c not in returned]
    if missing:
        raise IclrKgError(
            f"{path}: '# view: {view}' names {', '.join(missing)}, which the query does not return "
            f"(it returns {', '.join(returned) or 'no columns'})"
        )


def parse_saved(path: Path) -> SavedQuery:
    text = path.read_text(encoding="utf-8")
    fields: dict[str, str] = {}
    params: list[Param] = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        match = HEADER.match(line)
        if not match:
            continue
        key, value = match.group(1), match.group(2).strip()
        if key == "param":
            parts = value.split(None, 2)
            if len(parts) < 2 or parts[1] not in ("iri", "string", "integer"):
                raise IclrKgError(f"{path}: bad param header {value!r} (want: NAME iri|string|integer [DEFAULT])")
            params.append(Param(parts[0].lstrip("?$"), parts[1], parts[2] if len(parts) > 2 else None))
        else:
            fields[key] = value
    if "title" not in fields or "description" not in fields:
        raise IclrKgError(f"{path}: a saved query needs '# title:' and '# description:' header lines")
    requires = fields.get("requires")
    if requires not in (None, "openreview-import"):
        raise IclrKgError(f"{path}: unknown '# requires: {requires}' (known: openreview-import)")
    view = fields.get("view", "table")
    if view.split(" ", 1)[0] not in VIEWS:
        raise IclrKgError(f"{path}: unknown '# view: {view}' (known: {', '.join(VIEWS)})")
    _check_view_columns(path, view, text)
    return SavedQuery(
        path.stem,
        fields["title"],
        fields["description"],
        text,
        tuple(params),
        requires,
        view,
        fields.get("title@zh", ""),
        fields.get("description@zh", ""),
    )


def load_saved(queries_dir: Path) -> dict[str, SavedQuery]:
    """Every saved query, by name."""
    return {p.stem: parse_saved(p) for p in sorted(queries_dir.glob("*.rq"))}


def get_saved(queries_dir: Path, name: str) -> SavedQuery:
    """One saved query by name; the name is checked, so it can never reach another path."""
    if not NAME.match(name):
        raise QueryError(f"no saved query named {name!r}")
    path = queries_dir / f"{name}.rq"
    if not path.is_file():
        available = ", ".join(sorted(p.stem for p in queries_dir.glob("*.rq")))
        raise QueryError(f"no saved query named {name!r}; available: {available}")
    return parse_saved(path)
