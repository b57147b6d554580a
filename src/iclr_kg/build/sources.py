"""Stage 1: read the curated files in data/ into typed models, keeping file and line of every field.

A curator edits YAML by hand, so every error must say where to look: the loader records the line
of each mapping key and list item, and a pydantic error or a later resolution error is reported
as `file:line: field: message`. Unknown keys are errors (`extra="forbid"`), not silently dropped.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import hashlib
import json
import os
import pickle
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from iclr_kg import terms, vocab
from iclr_kg.errors import BadIdentifier, DataError
from iclr_kg.identifiers import SCHEMES

# --------------------------------------------------------------------------------------------
# YAML with line numbers


class LineDict(dict):
    """A mapping that remembers its own line and the line of each key (1-based); a key missing
    from `key_lines` is on the mapping's own line (as every key of a one-line JSON item is)."""

    line: int = 0
    key_lines: dict[str, int]


class LineList(list):
    """A sequence that remembers its own line and the line of each item (1-based)."""

    line: int = 0
    item_lines: list[int]


_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where available: ~5x faster


class _LineLoader(_Base):  # type: ignore[misc, valid-type]
    """SafeLoader whose mappings and sequences carry line numbers; dates stay strings."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LineDict:
        result = LineDict()
        result.line = node.start_mark.line + 1
        result.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in result:
                raise DataError(self.name, key_node.start_mark.line + 1, str(key), "duplicate key")
            result[key] = self.construct_object(value_node, deep=True)
            result.key_lines[str(key)] = key_node.start_mark.line + 1
        return result

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> LineList:
        result = LineList(self.construct_object(child, deep=True) for child in node.value)
        result.line = node.start_mark.line + 1
        result.item_lines = [child.start_mark.line + 1 for child in node.value]
        return result


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_sequence)
# Dates and times stay as written; the models parse them, so errors keep their line.
_LineLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


class ParseCache:
    """Parsed files by the hash of their text, pickled in `folder`: a rebuild parses only the
    files that changed (YAML with line numbers is most of loading 10,000 papers). Entries no
    load used are removed after each load, so the folder holds the current files only."""

    VERSION = b"1"  # bump when LineDict, LineList or the parsers change what they give

    def __init__(self, folder: Path):
        self.folder = folder
        self.used: set[str] = set()

    def key(self, path: Path, data: bytes) -> str:
        return hashlib.sha256(self.VERSION + str(path).encode() + b"\0" + data).hexdigest()

    def get(self, key: str) -> Any:
        self.used.add(key)
        try:
            return pickle.loads((self.folder / key).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None

    def put(self, key: str, value: Any) -> None:
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f".{key}.{os.getpid()}"
            tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
            tmp.replace(self.folder / key)

    def prune(self) -> None:
        if self.folder.is_dir():
            for entry in self.folder.iterdir():
                if entry.name not in self.used:
                    entry.unlink(missing_ok=True)


_parse_cache: contextvars.ContextVar[ParseCache | None] = contextvars.ContextVar("parse_cache", default=None)


def read_yaml(path: Path) -> Any:
    """Parse one YAML file; a syntax error becomes a DataError with its line."""
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(path, None, None, f"cannot read: {exc}") from exc
    cache = _parse_cache.get()
    key = cache.key(path, data) if cache is not None else ""
    if cache is not None and (cached := cache.get(key)) is not None:
        return cached
    parsed = _read_generated(path, text) if text.startswith(GENERATED) else _parse_yaml(path, text)
    if cache is not None:
        cache.put(key, parsed)
    return parsed


# What importers write (external/importfolder.py): a header naming the command, then top-level
# sections, each list item a JSON flow mapping on one line. Ten thousand papers are ten thousand
# json.loads calls instead of a YAML parse with Python constructors (several times faster); the
# other sections, and any file that is not exactly so, go through YAML as before, lines kept.
GENERATED = "# Written by `iclr-kg import"
_JSON_ITEM = re.compile(r"^- (\{.*\})$")


def _read_generated(path: Path, text: str) -> Any:
    result = LineDict()
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line and not line[0].isspace() and line[0] not in "#-"]
    result.line, result.key_lines = (starts[0] + 1 if starts else 1), {}
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        key, _, rest = lines[start].partition(":")
        if key in result:
            raise DataError(path, start + 1, key, "duplicate key")
        body = [(i, lines[i]) for i in range(start + 1, end) if lines[i].strip() and not lines[i].startswith("#")]
        items = [(i, _JSON_ITEM.match(line)) for i, line in body]
        if not rest.strip() and body and all(match for _, match in items):
            try:  # one JSON array: a json.loads call per item took twice as long
                parsed = json.loads("[" + ",".join(match[1] for _, match in items) + "]")  # type: ignore[index]
            except ValueError:  # not JSON after all (edited by hand?): YAML says where
                return _parse_yaml(path, text)
            value: Any = LineList(_with_lines(item, i + 1) for (i, _), item in zip(items, parsed, strict=True))
            value.line, value.item_lines = start + 2, [i + 1 for i, _ in items]
        else:  # this section as YAML, padded so that its lines are the file's
            value = _parse_yaml(path, "\n" * start + "\n".join(lines[start:end]) + "\n")[key]
        result[key] = value
        result.key_lines[key] = start + 1
    return result


def _with_lines(value: Any, line: int) -> Any:
    """A JSON value as the YAML loader makes it: mappings and lists that know their line (all on
    one line: a mapping's keys need no lines of their own). Only containers are walked into: at
    50,000 papers an import's items hold a million scalars."""
    if isinstance(value, dict):
        out = LineDict(value)
        for key, item in value.items():
            if isinstance(item, dict | list):
                out[key] = _with_lines(item, line)
        out.line, out.key_lines = line, {}
        return out
    if isinstance(value, list):
        items = LineList(_with_lines(v, line) if isinstance(v, dict | list) else v for v in value)
        items.line, items.item_lines = line, [line] * len(value)
        return items
    return value


def _parse_yaml(path: Path, text: str) -> Any:
    loader = _LineLoader(text)
    loader.name = str(path)
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        context = ""
        if exc.context and exc.context_mark:
            context = f" ({exc.context}, started at line {exc.context_mark.line + 1})"
        raise DataError(path, line, None, f"invalid YAML: {exc.problem or exc}{context}") from exc
    finally:
        loader.dispose()


def line_of(raw: Any, loc: tuple[int | str, ...]) -> int | None:
    """The line of the value at `loc` inside `raw`, or of the closest enclosing node."""
    line = getattr(raw, "line", None)
    node = raw
    for step in loc:
        if isinstance(node, LineDict) and step in node:
            line = node.key_lines.get(str(step), line)
            node = node[step]
        elif isinstance(node, LineList) and isinstance(step, int) and step < len(node):
            line = node.item_lines[step]
            node = node[step]
        else:
            break
    return line


# --------------------------------------------------------------------------------------------
# Models


class Curated(BaseModel):
    """Base of every curated block: unknown keys fail, and the block knows its lines.

    What it was read from (`_raw`, with lines) and where (`_file`) are slots, not pydantic's
    private attributes: those are set up per instance on validation, twice for a subclass, and
    were a third of the load stage's time for 215,000 identifiers (`model_copy` carries them)."""

    __slots__ = ("_raw", "_file")
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_raw(cls, data: Any, handler: Any) -> Any:
        obj = handler(data)
        if isinstance(data, LineDict):
            object.__setattr__(obj, "_raw", data)
        return obj

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        for name in Curated.__slots__:
            if hasattr(self, name):
                object.__setattr__(copied, name, getattr(self, name))
        return copied

    def line(self, field: str | None = None, index: int | None = None) -> int | None:
        """Line of this block, of one of its fields, or of one item of a list field."""
        raw = getattr(self, "_raw", None)
        if raw is None:
            return None
        if field is None:
            return raw.line
        loc: tuple[int | str, ...] = (field,) if index is None else (field, index)
        return line_of(raw, loc)

    @property
    def file(self) -> Path | None:
        """The file this block was read from (registries merge data/ with every import)."""
        return getattr(self, "_file", None)

    @property
    def names(self) -> list[str]:
        """Every name a registry entity goes by: its name, its labels (or native name), its
        aliases; what resolution and Wikidata reconciliation both match on."""
        labels = getattr(self, "labels", None) or getattr(self, "native_name", None) or {}
        return [self.name, *labels.values(), *getattr(self, "aliases", [])]  # type: ignore[attr-defined]


Lang = Literal["zh", "zh-Hans", "zh-Hant", "en"]


def _notation(values: dict[str, str], what: str) -> AfterValidator:
    """A field whose values are the ontology's notations of `what` (`decision: workshop`), read
    from the ontology; anything else is refused with the values allowed."""

    def check(value: str) -> str:
        if value not in values:
            allowed = ", ".join(repr(v) for v in sorted(values))
            raise ValueError(f"Input should be one of {allowed} (the ontology's {what})")
        return value

    return AfterValidator(check)


_TERMS = terms.packaged()
OrganizationKind = Annotated[str, _notation(_TERMS.kinds_below("Organization"), "kinds of organization")]
AwardKind = Annotated[str, _notation(_TERMS.kinds_below("Award"), "kinds of award")]
Decision = Annotated[str, _notation(_TERMS.enumeration("Decision"), "decisions")]
Presentation = Annotated[str, _notation(_TERMS.enumeration("PresentationType"), "presentation types")]
Labels = dict[Lang, str]


class Prose(Curated):
    """Our own words (a summary, a note, a committee's reason as we summarised it) in English
    and in Simplified Chinese, the Chinese written from the English: one fact, both languages.
    A field of this type also takes a bare string, English only (imports write those)."""

    en: str
    zh: str


# A source cited by the number of its seed file ("Article 000", "文章 001"): a reader cannot
# resolve it; our words name a source by its title
INTERNAL_NUMBER = re.compile(r"\b(?:articles?|seeds?)\s+\d{3}\b|文章\s*\d{3}", re.IGNORECASE)


def _no_internal_number(words: Prose | str) -> Prose | str:
    for text in (words.en, words.zh) if isinstance(words, Prose) else (words,):
        found = INTERNAL_NUMBER.search(text)
        if found:
            raise ValueError(f"cites a source by an internal number ({found.group()!r}): name it by its title")
    return words


Text = Annotated[Prose | str, AfterValidator(_no_internal_number)]


# An OpenReview profile id: a tilde, the name with underscores, a number (~Ian_Gemp1).
PROFILE_ID = r"^~[^\s~]+[0-9]+$"
# "needed": an entity an import created because no registry entity matched; a curator should
# check it (merge it into a known one by adding an alias, or classify it) and drop the flag.
Curation = Literal["needed"]


class Organization(Curated):
    key: str = Field(pattern=vocab.CURATED_KEY)
    name: str
    kind: OrganizationKind
    labels: Labels = Field(default_factory=dict)
    aliases: list[str] = Field(default_factory=list)
    parent: str | None = None
    note: Text | None = None
    curation: Curation | None = None
    imported_by: list[str] = Field(default_factory=list)  # in imports/shared/: the imports that need this entity


class Person(Curated):
    key: str = Field(pattern=vocab.CURATED_KEY)
    name: str
    native_name: Labels = Field(default_factory=dict)
    aliases: list[str] = Field(default_factory=list)
    openreview: list[Annotated[str, Field(pattern=PROFILE_ID)]] = []
    note: Text | None = None
    curation: Curation | None = None
    imported_by: list[str] = Field(default_factory=list)  # in imports/shared/: the imports that need this entity


class Conference(Curated):
    key: str = Field(pattern=vocab.CURATED_KEY)
    name: str
    labels: Labels = Field(default_factory=dict)
    aliases: list[str] = Field(default_factory=list)


class Edition(Curated):
    key: str = Field(pattern=vocab.CURATED_KEY)
    conference: str
    year: int = Field(ge=1900, le=2100)
    name: str
    aliases: list[str] = Field(default_factory=list)


class Award(Curated):
    key: str = Field(pattern=vocab.CURATED_KEY)
    name: str
    kind: AwardKind
    edition: str | None = None
    labels: Labels = Field(default_factory=dict)
    aliases: list[str] = Field(default_factory=list)


class WikidataLink(Curated):
    entity: str = Field(pattern=r"^[a-z]+/[A-Za-z0-9_][A-Za-z0-9_-]*$")
    qid: str = Field(pattern=r"^Q[1-9][0-9]*$")
    method: Literal["checked", "reconciled-accepted"]
    evidence: str


# ---- what a source article states


class SourceInfo(Curated):
    """Where a source's facts come from: an article (`seed` names its text), a data import, or a
    public web page (`url`, its `publisher`, and whether it is the `organizer`'s own statement)."""

    key: str = Field(pattern=vocab.CURATED_KEY)
    kind: Literal["article", "import", "web"] = "article"
    title: str
    title_note: Text | None = None
    outlet: str | None = None
    outlet_note: Text | None = None
    language: Literal["zh-Hans", "zh-Hant", "en"]
    seed: str | None = None
    writers: list[str] = Field(default_factory=list)
    about: list[str] = Field(default_factory=list)
    summary: Text
    cites: list[str] = Field(default_factory=list)
    # imports only: the service, what was asked of it, and when
    service: str | None = None
    venue: str | None = None
    retrieved: dt.datetime | None = None
    # web pages only: the address, who publishes it, when (if the page says), and whether it is
    # ICLR's own statement (blog.iclr.cc, iclr.cc, ICLR's Medium, OpenReview) or a secondary one
    url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    publisher: str | None = None
    published: dt.date | None = None
    organizer: bool | None = None

    @model_validator(mode="after")
    def _traceable(self) -> SourceInfo:
        if self.kind == "article" and not self.seed:
            raise ValueError("an article needs `seed`: the file name of its text")
        if self.kind == "import" and not (self.service and self.retrieved):
            raise ValueError("an import needs `service` and `retrieved`")
        if self.kind == "web" and not (self.url and self.publisher and self.organizer is not None):
            raise ValueError("a web source needs `url`, `publisher` and `organizer` (true for ICLR's own word)")
        return self


class ConferenceFacts(Curated):
    conference: str
    founded: int | None = Field(default=None, ge=1900, le=2100)
    founders: list[str] = Field(default_factory=list)
    open_review: bool | None = None
    note: Text | None = None


class EditionFacts(Curated):
    edition: str
    start: dt.date | None = None
    end: dt.date | None = None
    city: Text | None = None  # a place's name in English, with its Chinese form where a source gives it
    country: Text | None = None
    online: bool | None = None
    decisions_announced: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}$")
    submissions: int | None = Field(default=None, ge=0)
    accepted: int | None = Field(default=None, ge=0)
    orals: int | None = Field(default=None, ge=0)
    spotlights: int | None = Field(default=None, ge=0)
    posters: int | None = Field(default=None, ge=0)
    withdrawn: int | None = Field(default=None, ge=0)
    desk_rejected: int | None = Field(default=None, ge=0)
    no_paper_awards: Literal[True] | None = None  # the source says the edition gave no paper award
    acceptance_rate: float | None = Field(default=None, ge=0, le=1)
    high_score_papers: int | None = Field(default=None, ge=0)
    perfect_score_papers: int | None = Field(default=None, ge=0)
    perfect_score_papers_at_least: int | None = Field(default=None, ge=0)
    resubmissions: int | None = Field(default=None, ge=0)
    arxiv_posted: int | None = Field(default=None, ge=0)
    rating_scale: list[str] = Field(default_factory=list)
    confidence_scale: list[str] = Field(default_factory=list)
    note: Text | None = None


class AwardFacts(Curated):
    award: str
    inaugural: bool | None = None
    criteria: list[Text] = Field(default_factory=list)
    committee: list[str] = Field(default_factory=list)
    committee_complete: bool = True
    note: Text | None = None


class AwardGiven(Curated):
    award: str
    reason: Text | None = None


class AuthorRef(Curated):
    """An author as an import knows them: the name as written, and the profile or entity it is."""

    name: str
    profile: str | None = Field(default=None, pattern=PROFILE_ID)
    person: str | None = Field(default=None, pattern=vocab.CURATED_KEY)


class ReviewFacts(Curated):
    """One public review (imports): its OpenReview note id, rating and confidence."""

    id: str = Field(pattern=r"^[A-Za-z0-9_-]{6,16}$")
    rating: int = Field(ge=1, le=10)
    confidence: int | None = Field(default=None, ge=1, le=5)


class PaperFacts(Curated):
    # `openreview`: the id as the article states it. `same_as`: the id of the paper this entry is,
    # where the article names it only by title (identity set by the curator, not stated by the
    # article). `key`: for a paper with no OpenReview id at all. `arxiv`: the arXiv id the source
    # states, written as our data writes it (identifiers.py: no version, no URL).
    openreview: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{6,16}$")
    same_as: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{6,16}$")
    key: str | None = Field(default=None, pattern=vocab.CURATED_KEY)
    arxiv: Annotated[str, AfterValidator(lambda v: _written_as("arxiv", v))] | None = None
    edition: str
    title: str | None = None  # None only where the title was withdrawn (`title_withdrawn`)
    title_withdrawn: Literal[True] | None = None  # the source took the title down ("NA" on OpenReview)
    method_name: str | None = None
    authors: list[str | AuthorRef] = Field(default_factory=list)
    organizations: list[str] = Field(default_factory=list)
    organizations_complete: bool = True
    decision: Decision | None = None
    presentation: Presentation | None = None
    code: str | None = None
    ratings: list[int] = Field(default_factory=list)
    reviews: list[ReviewFacts] = Field(default_factory=list)
    average_rating: float | None = None
    reviewer_count: int | None = Field(default=None, ge=0)
    all_ratings: int | None = None
    summary: Text | None = None
    abstract: str | None = None  # the authors' own, from an OpenReview import
    keywords: list[str] = Field(default_factory=list)  # the authors', from an OpenReview import
    review_summary: Text | None = None
    note: Text | None = None
    awards: list[AwardGiven | str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_identity(self) -> PaperFacts:
        if sum(x is not None for x in (self.openreview, self.same_as, self.key)) != 1:
            raise ValueError("a paper needs exactly one of `openreview`, `same_as` or `key`")
        if (self.title is None) != bool(self.title_withdrawn):
            raise ValueError("a paper needs a `title`, or `title_withdrawn: true` where its source took it down")
        return self

    @property
    def ident(self) -> str:
        """The key of the paper's IRI: its OpenReview id where it has one."""
        return self.openreview or self.same_as or self.key  # type: ignore[return-value]

    def awards_given(self) -> list[AwardGiven]:
        return [a if isinstance(a, AwardGiven) else AwardGiven(award=a) for a in self.awards]


def _written_as(scheme_name: str, value: str) -> str:
    """`value` if it is an identifier of the scheme in the scheme's own form, else a ValueError."""
    try:
        written = SCHEMES[scheme_name].parse(value)
    except BadIdentifier as exc:
        raise ValueError(str(exc)) from None
    if written != value:
        raise ValueError(f"value {value!r} is written {written!r} in our data (the scheme's own form)")
    return value


class RoleFacts(Curated):
    organization: str
    role: Text
    degree: Text | None = None
    current: bool = False


class PersonFacts(Curated):
    person: str
    education: list[RoleFacts] = Field(default_factory=list)
    positions: list[RoleFacts] = Field(default_factory=list)
    student_of: list[str] = Field(default_factory=list)
    honors: list[str] = Field(default_factory=list)
    notable_work: list[str] = Field(default_factory=list)


class ProfileLink(Curated):
    """An import's finding that an OpenReview profile belongs to a registry person (by name)."""

    profile: str = Field(pattern=PROFILE_ID)
    person: str
    matched_by: Literal["name"] = "name"


class StatedIdentifier(Curated):
    """An identifier elsewhere that a source states for one of our entities (identifiers.py),
    checked when imported and stated in the source's graph as its word: an OpenReview profile's
    for its owner (`profile`), or a Wikidata item's for the entity linked to it (`entity`, with
    the `item` that states it)."""

    profile: str | None = Field(default=None, pattern=PROFILE_ID)
    entity: str | None = Field(default=None, pattern=r"^(person|organization|paper)/[A-Za-z0-9_][A-Za-z0-9_-]*$")
    item: str | None = Field(default=None, pattern=r"^Q[1-9][0-9]*$")
    scheme: str
    value: str = Field(max_length=200)

    @model_validator(mode="after")
    def _checked(self) -> StatedIdentifier:
        if (self.profile is None) == (self.entity is None):
            raise ValueError("an identifier names whose it is: either `profile` or `entity`, not both")
        scheme = SCHEMES.get(self.scheme)
        kind = "person" if self.entity is None else self.entity.split("/")[0]
        if scheme is None or scheme.name == "wikidata" or kind not in scheme.kinds:
            fitting = [s.name for s in SCHEMES.values() if kind in s.kinds and s.name != "wikidata"]
            raise ValueError(f"scheme {self.scheme!r} does not identify a {kind}; one of {', '.join(fitting)}")
        _written_as(scheme.name, self.value)
        return self


class Source(Curated):
    """One article or import: what it says, in its own terms."""

    source: SourceInfo
    conferences: list[ConferenceFacts] = Field(default_factory=list)
    editions: list[EditionFacts] = Field(default_factory=list)
    awards: list[AwardFacts] = Field(default_factory=list)
    papers: list[PaperFacts] = Field(default_factory=list)
    people: list[PersonFacts] = Field(default_factory=list)
    profiles: list[ProfileLink] = Field(default_factory=list)
    identifiers: list[StatedIdentifier] = Field(default_factory=list)
    _path: Path = PrivateAttr(default=Path())

    @property
    def path(self) -> Path:
        return self._path


class Dataset(BaseModel):
    """Everything under data/: the registries and the sources, with the file each came from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    organizations: list[Organization]
    people: list[Person]
    conferences: list[Conference]
    editions: list[Edition]
    awards: list[Award]
    links: list[WikidataLink]
    sources: list[Source]
    files: dict[str, Path]  # registry name -> file, for error messages


# --------------------------------------------------------------------------------------------
# Loading


def _validate(model: type[Curated], raw: Any, path: Path) -> Any:
    try:
        obj = model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        field = ".".join(str(p) for p in loc) or None
        raise DataError(path, line_of(raw, loc), field, first["msg"]) from None
    object.__setattr__(obj, "_file", path)
    return obj


def _registry_list(path: Path, section: str, model: type[Curated], required: bool = True) -> list[Any]:
    raw = read_yaml(path)
    if not isinstance(raw, LineDict) or section not in raw:
        if not required and isinstance(raw, LineDict):
            return []
        raise DataError(path, getattr(raw, "line", 1), section, f"expected a top-level `{section}:` list")
    known = {name for name, (registry, _) in SECTIONS.items() if REGISTRY_FILES[registry] == path.name}
    for key in raw:
        if key not in known:
            raise DataError(
                path,
                raw.key_lines.get(key, 1),
                str(key),
                f"unknown top-level key; this file holds {', '.join(sorted(known))}",
            )
    items = raw[section]
    if not isinstance(items, LineList):
        raise DataError(path, raw.key_lines[section], section, "expected a list")
    return [_validate(model, item, path) for item in items]


def load_source(path: Path) -> Source:
    """Read one article's (or import's) file."""
    raw = read_yaml(path)
    if not isinstance(raw, LineDict):
        raise DataError(path, 1, None, "expected a mapping with `source:` and the article's facts")
    source: Source = _validate(Source, raw, path)
    source._path = path
    return source


REGISTRY_FILES = {
    "organizations": "organizations.yaml",
    "people": "people.yaml",
    "events": "events.yaml",
    "wikidata": "wikidata.yaml",
}
SECTIONS: dict[str, tuple[str, type[Curated]]] = {
    "organizations": ("organizations", Organization),
    "people": ("people", Person),
    "conferences": ("events", Conference),
    "editions": ("events", Edition),
    "awards": ("events", Award),
    "links": ("wikidata", WikidataLink),
}


# The people and organizations that imports had to create live in one place, `imports/shared/`,
# each listing the imports that need it (`imported_by`): an import folder holds only its own
# source and editions, so any import builds alone or with any others.
SHARED = "shared"


def import_dirs(imports_dir: Path | None) -> list[Path]:
    """The import folders under `imports_dir` (each shaped like data/), in name order."""
    if imports_dir is None or not imports_dir.is_dir():
        return []
    return sorted(p for p in imports_dir.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != SHARED)


def shared_entities(imports_dir: Path | None) -> dict[str, list[Any]]:
    """Every entity of imports/shared/ (people and organizations), whoever needs it."""
    folder = imports_dir / SHARED if imports_dir is not None else None
    if folder is None or not folder.is_dir():
        return {"people": [], "organizations": []}
    loaded = load_folder(folder)
    return {"people": loaded["people"], "organizations": loaded["organizations"]}


def add_shared(lists: dict[str, list[Any]], shared: dict[str, list[Any]], present: set[str] | None) -> None:
    """Add to `lists` the shared entities that an import in `present` needs (all, if None), unless
    `lists` already defines them: a curator who copied one into data/ (same key, or every profile
    id of the person) wins, and the stale shared copy is left out until the next import prunes it."""
    claimed = {profile for person in lists["people"] for profile in person.openreview}
    for section in ("people", "organizations"):
        taken = {entity.key for entity in lists[section]}
        for entity in shared[section]:
            if present is not None and not set(entity.imported_by) & present:
                continue
            if entity.key in taken or (section == "people" and entity.openreview and set(entity.openreview) <= claimed):
                continue
            lists[section].append(entity)


def load_folder(folder: Path) -> dict[str, list[Any]]:
    """One import folder: its registry sections (each file optional) and its sources."""
    lists: dict[str, list[Any]] = {section: [] for section in SECTIONS}
    for section, (registry, model) in SECTIONS.items():
        path = folder / REGISTRY_FILES[registry]
        if path.is_file():
            lists[section] = _registry_list(path, section, model, required=False)
    lists["sources"] = [load_source(p) for p in sorted((folder / "sources").glob("*.yaml"))]
    return lists


def load_dataset(
    data_dir: Path, imports_dir: Path | None = None, folders: list[Path] | None = None, cache: Path | None = None
) -> Dataset:
    """Read every registry and every file in data/sources/, then every import folder.

    The import folders are those under `imports_dir`, or `folders` if given. An import folder
    has the same layout as data/, with every file optional: the entities it had to create
    (flagged `curation: needed`) and its own source files. With `cache` (a folder), files
    parsed before are read from there (ParseCache).
    """
    parse_cache = ParseCache(cache) if cache is not None else None
    token = _parse_cache.set(parse_cache)
    try:
        dataset = _load_dataset(data_dir, imports_dir, folders)
    finally:
        _parse_cache.reset(token)
    if parse_cache is not None:
        parse_cache.prune()
    return dataset


def _load_dataset(data_dir: Path, imports_dir: Path | None, folders: list[Path] | None) -> Dataset:
    if not data_dir.is_dir():
        raise DataError(data_dir, None, None, "data directory not found")
    files = {name: data_dir / file for name, file in REGISTRY_FILES.items()}
    for path in files.values():
        if not path.is_file():
            raise DataError(path, None, None, "registry file missing")
    source_files = sorted((data_dir / "sources").glob("*.yaml"))
    if not source_files:
        raise DataError(data_dir / "sources", None, None, "no source files (*.yaml)")
    lists = {
        section: _registry_list(files[registry], section, model) for section, (registry, model) in SECTIONS.items()
    }
    lists["sources"] = [load_source(p) for p in source_files]
    folders = import_dirs(imports_dir) if folders is None else folders
    for folder in folders:
        for name, items in load_folder(folder).items():
            lists[name] += items
    add_shared(lists, shared_entities(imports_dir), {folder.name for folder in folders})
    return Dataset(**lists, files=files)
