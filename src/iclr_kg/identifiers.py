"""The identifier schemes an entity of ours may be known by elsewhere, as one table: how a value
is written (a URL or the bare value, checked), the IRI that resolves it, and the property that
holds it. Where Wikidata has a property with the same meaning, the value is stated under it
(`wdt:P496 "…"`), in the graph of the source that gave it, so that a federated query joins with
Wikidata or dblp by value; the ontology declares each of these properties with its labels. Stated
once, not under a property of ours that the reasoner then restated under Wikidata's: that copy
(inferred, then merged into the default graph) was a third of the quads an identifier cost the
store (issue #38: the links may cost a build at most 10%).

A scheme identifies one kind of entity; schemes that share a name in `/id/<route>/<value>`
(dblp's person pids and publication keys, Semantic Scholar's author and paper ids, OpenReview's
profiles and submissions) are told apart by the value's shape (`schemes_for`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from pyoxigraph import NamedNode

from iclr_kg import vocab
from iclr_kg.errors import BadIdentifier
from iclr_kg.kinds import KINDS, WIKIDATA_LINKED, EntityKind


@dataclass(frozen=True)
class Scheme:
    name: str  # the scheme's own name (data files, SSSOM prefixes)
    label: str  # as a page names it
    kinds: tuple[str, ...]  # the kinds of entity it identifies
    prop: str  # the IRI of the property holding the value ("" for Wikidata: skos:exactMatch)
    iri: Callable[[str], str]  # the value's resolvable IRI
    parse: Callable[[str], str]  # a URL or bare value as written -> the value, or BadIdentifier
    route: str = ""  # as in /id/<route>/<value>, if not its name
    # how the entity links the value's IRI: it names the entity itself, or is its page ("": not linked)
    linked_by: str = vocab.SKOS + "exactMatch"

    @property
    def path(self) -> str:
        return self.route or self.name

    @functools.cached_property
    def predicate(self) -> NamedNode:
        """`prop` as a term, made once (a build states 215,000 identifiers at 50,000 papers)."""
        return NamedNode(self.prop)

    def wikidata_property(self, aligned: dict[str, str]) -> str | None:
        """The Wikidata property (P496) whose statements give this scheme's values: the property
        itself, or the one the ontology aligns ours with (`aligned`: `terms.Terms.wikidata`)."""
        if self.prop.startswith(vocab.WDT):
            return self.prop[len(vocab.WDT) :]
        if self.prop.startswith(vocab.ONTOLOGY_NS):
            return aligned.get(self.prop[len(vocab.ONTOLOGY_NS) :])
        return None


def orcid_checksum_ok(digits: str) -> bool:
    """ISO 7064 MOD 11-2 over the first 15 digits, as ORCID computes its last character."""
    total = 0
    for ch in digits[:15]:
        total = (total + int(ch)) * 2
    check = (12 - total % 11) % 11
    return digits[15] == ("X" if check == 10 else str(check))


def _form(
    prefix: str,
    shape: str,
    what: str,
    suffix: str = "",
    fold: Callable[[str], str] = str,
    check: tuple[Callable[[str], bool], str] | None = None,
) -> Callable[[str], str]:
    """A parser of one scheme's values: the text without the URL written around the value
    (`prefix`, in any case, and `suffix`), if the value has `shape`, in the scheme's own case
    (`fold`) and passing its checksum (`check`: the test and what a failure means); else
    BadIdentifier saying what it is not. Its patterns are compiled once (a build checks every
    identifier it loads)."""
    head, body = re.compile(f"^(?i:{prefix})"), re.compile(shape)
    tail = re.compile(f"(?:{suffix})$") if suffix else None

    def parse(text: str) -> str:
        value = head.sub("", text.strip(), count=1)
        value = tail.sub("", value, count=1) if tail else value
        if not body.fullmatch(value):
            raise BadIdentifier(f"{text!r} is not {what}")
        value = fold(value)
        if check and not check[0](value):
            raise BadIdentifier(f"{text!r} is not {what.split(' (')[0]}: {check[1]}")
        return value

    return parse


_orcid = _form(
    r"(https?://)?(www\.)?orcid\.org/",
    r"\d{4}-\d{4}-\d{4}-\d{3}[\dXx]",
    "an ORCID iD (four groups of four digits: 0000-0002-1825-0097)",
    fold=str.upper,
    check=(lambda v: orcid_checksum_ok(v.replace("-", "")), "its last character fails ORCID's checksum"),
)


_dblp = _form(
    r"(https?://)?(www\.)?dblp\.(org|uni-trier\.de)/pid/",
    r"[0-9a-z]+/[0-9A-Za-z-]+",
    "a dblp person id (its persistent URL: https://dblp.org/pid/123/4567)",
    suffix=r"\.html|\.xml",
)


_s2_author = _form(
    r"https?://(www\.)?semanticscholar\.org/author/([^/]+/)?",
    r"\d+",
    "a Semantic Scholar author id (digits, or the author page's URL)",
    suffix="/",
)


def _gscholar(text: str) -> str:
    text = text.strip()
    if text.startswith(("http://", "https://")):
        parts = urlsplit(text)
        users = parse_qs(parts.query).get("user", [])
        text = users[0] if users and parts.hostname and parts.hostname.startswith("scholar.google.") else ""
    if not re.fullmatch(r"[-_0-9A-Za-z]{12}", text):
        raise BadIdentifier("not a Google Scholar author id (12 letters, digits, - or _: the citations page's user=)")
    return text


_openreview_profile = _form(
    r"https?://openreview\.net/profile\?id=", r"~[^\s/?#]{2,100}", "an OpenReview profile id (~First_Last1)"
)


_openreview_note = _form(
    r"https?://openreview\.net/(forum|pdf)\?id=", r"[A-Za-z0-9_-]{6,16}", "an OpenReview submission id"
)


# ROR's alphabet (Crockford's base 32) and check digits (ISO 7064 MOD 97-10 over the value)
ROR_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def ror_check_digits(body: str) -> str:
    """The two check digits of a ROR id whose six characters after the leading 0 are `body`."""
    number = 0
    for ch in body:
        number = number * 32 + ROR_ALPHABET.index(ch)
    return f"{98 - (number * 100) % 97:02d}"


_ror = _form(
    r"(https?://)?ror\.org/",
    rf"(?i:0[{ROR_ALPHABET}]{{6}}\d\d)",
    "a ROR id (nine characters starting with 0: https://ror.org/00f54p054)",
    fold=str.lower,
    check=(lambda v: ror_check_digits(v[1:7]) == v[7:], "its last two digits fail ROR's checksum"),
)


_grid = _form(r"https?://(www\.)?grid\.ac/institutes/", r"grid\.\d{4,6}\.[0-9a-f]{1,2}", "a GRID id (grid.168010.e)")


# An arXiv id without its version (arXiv's abstract page shows the latest; Wikidata's P818
# values carry none): 2010.11929, or an old-style math.GT/0309136.
_arxiv = _form(
    r"https?://(www\.)?arxiv\.org/(abs|pdf)/|arxiv:",
    r"\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7}",
    "an arXiv id (2010.11929, or its abstract page's URL)",
    suffix=r"(v\d+)?(\.pdf)?",
)


# A DOI in upper case, as Wikidata writes P356 (DOIs are case-insensitive), so that a join by
# value with Wikidata meets.
_doi = _form(
    r"https?://(dx\.)?doi\.org/|doi:",
    r"10\.\d{4,9}/\S+",
    "a DOI (10.1000/xyz123, or its https://doi.org/ URL)",
    fold=str.upper,
)


_dblp_record = _form(
    r"(https?://)?(www\.)?dblp\.(org|uni-trier\.de)/rec/",
    r"(conf|journals|books|phd|series|reference|tr|persons|ms|www|homepages)(/[\w.+-]+){2}",
    "a dblp publication key (conf/iclr/SongSKKEP21, or its /rec/ URL)",
    suffix=r"\.(html|xml|bib|nt|ttl|rdf)",
)


_s2_paper = _form(
    r"https?://(www\.)?semanticscholar\.org/paper/([^/]+/)?",
    r"[0-9a-f]{40}",
    "a Semantic Scholar paper id (40 hexadecimal digits, or the paper's URL)",
    suffix="/",
)


def _homepage(text: str) -> str:
    """A web page's address as written (http or https, a host, no spaces)."""
    value = text.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or re.search(r"\s", value) or len(value) > 300:
        raise BadIdentifier(f"{text!r} is not a web page's address (https://host/...)")
    if _NOT_IN_IRI.search(value):  # `"`, `<`, `{`...: no IRI holds them, and the build would stop on one
        raise BadIdentifier(f"{text!r} is not a web page's address: it holds a character no IRI may")
    return value


_NOT_IN_IRI = re.compile(r'[<>"{}|^`\\\x00-\x20]')


# An institution's web domain (stanford.edu), as OpenReview profiles state it, in lower case.
_domain = _form(
    r"(https?://)?(www\.)?",
    r"(?i:([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})",
    "a web domain (stanford.edu)",
    suffix="/",
    fold=str.lower,
)


_wikidata = _form(r"https?://(www\.)?wikidata\.org/(wiki|entity)/", r"Q[1-9]\d{0,10}", "a Wikidata item id (Q42)")


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme("orcid", "ORCID", ("person",), vocab.WDT + "P496", lambda v: f"https://orcid.org/{v}", _orcid),
        Scheme("dblp", "dblp", ("person",), vocab.WDT + "P2456", lambda v: f"https://dblp.org/pid/{v}", _dblp),
        Scheme(
            "s2",
            "Semantic Scholar",
            ("person",),
            vocab.WDT + "P4012",
            lambda v: f"https://www.semanticscholar.org/author/{v}",
            _s2_author,
        ),
        Scheme(
            "gscholar",
            "Google Scholar",
            ("person",),
            vocab.WDT + "P1960",
            lambda v: f"https://scholar.google.com/citations?user={v}",
            _gscholar,
        ),
        Scheme(
            "openreview",
            "OpenReview",
            ("person",),
            vocab.ONTOLOGY_NS + "openReviewProfile",
            lambda v: f"https://openreview.net/profile?id={v}",
            _openreview_profile,
        ),
        Scheme("ror", "ROR", ("organization",), vocab.WDT + "P6782", lambda v: f"https://ror.org/{v}", _ror),
        Scheme(
            "grid",
            "GRID",
            ("organization",),
            vocab.WDT + "P2427",
            lambda v: f"https://www.grid.ac/institutes/{v}",
            _grid,
        ),
        Scheme("arxiv", "arXiv", ("paper",), vocab.WDT + "P818", lambda v: f"https://arxiv.org/abs/{v}", _arxiv),
        Scheme("doi", "DOI", ("paper",), vocab.WDT + "P356", lambda v: f"https://doi.org/{v}", _doi),
        Scheme(
            "dblp-paper",
            "dblp",
            ("paper",),
            vocab.WDT + "P8978",
            lambda v: f"https://dblp.org/rec/{v}",
            _dblp_record,
            route="dblp",
        ),
        Scheme(
            "s2-paper",
            "Semantic Scholar",
            ("paper",),
            vocab.WDT + "P4011",
            lambda v: f"https://www.semanticscholar.org/paper/{v}",
            _s2_paper,
            route="s2",
        ),
        Scheme(
            "openreview-paper",
            "OpenReview",
            ("paper",),
            vocab.ONTOLOGY_NS + "openReviewId",
            lambda v: f"https://openreview.net/forum?id={v}",
            _openreview_note,
            route="openreview",
        ),
        Scheme(
            "homepage",
            "Homepage",
            ("person",),
            vocab.ONTOLOGY_NS + "homepage",
            lambda v: v,
            _homepage,
            linked_by=vocab.PREFIXES["foaf"] + "homepage",
        ),
        Scheme(
            "domain",
            "Web domain",
            ("organization",),
            vocab.ONTOLOGY_NS + "webDomain",
            lambda v: f"https://{v}/",
            _domain,
            linked_by="",
        ),
        Scheme(
            "wikidata",
            "Wikidata",
            WIKIDATA_LINKED,
            "",
            lambda v: f"http://www.wikidata.org/entity/{v}",
            _wikidata,
        ),
    )
}
ROUTES = tuple(dict.fromkeys(s.path for s in SCHEMES.values()))  # /id/<route>/..., in the table's order


def schemes_for(route: str) -> list[Scheme]:
    """The schemes `/id/<route>/` may mean (dblp: a person's pid or a publication's key)."""
    return [s for s in SCHEMES.values() if s.path == route]


def parse_for(schemes: list[Scheme], text: str) -> tuple[Scheme, str]:
    """The one of `schemes` (a route's: `schemes_for`) whose form `text` has, and its value;
    else the first one's refusal."""
    refusals = []
    for scheme in schemes:
        try:
            return scheme, scheme.parse(text)
        except BadIdentifier as exc:
            refusals.append(exc)
    raise refusals[0]


# What an OpenReview profile states, by its field (its public personal links), and our scheme
PROFILE_FIELDS = {
    "orcid": "orcid",
    "dblp": "dblp",
    "semanticScholar": "s2",
    "gscholar": "gscholar",
    "homepage": "homepage",
}


def recognize(text: str) -> tuple[str, str] | None:
    """(scheme, value) for a pasted identifier or URL of a known scheme, else None: what the
    search box tries first."""
    text = text.strip()
    for name, pattern in (
        ("orcid", r"(https?://(www\.)?orcid\.org/)?\d{4}-\d{4}-\d{4}-\d{3}[\dXx]"),
        ("dblp", r"https?://(www\.)?dblp\.(org|uni-trier\.de)/pid/\S+"),
        ("dblp-paper", r"https?://(www\.)?dblp\.(org|uni-trier\.de)/rec/\S+"),
        ("s2", r"https?://(www\.)?semanticscholar\.org/author/\S+"),
        ("s2-paper", r"https?://(www\.)?semanticscholar\.org/paper/\S+"),
        ("gscholar", r"https?://scholar\.google\.[a-z.]+/citations\?\S*user=\S+"),
        ("openreview", r"(https?://openreview\.net/profile\?id=\S+|~[A-Za-z][^\s]*\d)"),
        ("openreview-paper", r"https?://openreview\.net/(forum|pdf)\?id=\S+"),
        ("ror", r"((https?://)?ror\.org/)?0[0-9a-z]{6}\d\d"),
        ("grid", r"(https?://(www\.)?grid\.ac/institutes/)?grid\.\d+\.[0-9a-f]+"),
        ("arxiv", r"(https?://(www\.)?arxiv\.org/(abs|pdf)/\S+|((?i:arxiv):)?\d{4}\.\d{4,5}(v\d+)?)"),
        ("doi", r"(https?://(dx\.)?doi\.org/|doi:)?10\.\d{4,9}/\S+"),
        ("wikidata", r"(https?://(www\.)?wikidata\.org/(wiki|entity)/)?Q[1-9]\d*"),
        ("homepage", r"https?://\S+"),  # any other address: someone's homepage, if we know it
    ):
        if re.fullmatch(pattern, text):
            try:
                return name, SCHEMES[name].parse(text)
            except BadIdentifier:
                return None
    return None


# The kinds of entity coverage counts, by their root class of the ontology (coverage_query;
# counts.facets, which maintains its figures from a change): those some scheme identifies, so a
# scheme for another kind is counted the day it is added.
COVERED_KINDS = {kind: KINDS[EntityKind(kind)].root for scheme in SCHEMES.values() for kind in scheme.kinds}


def coverage_query() -> str:
    """How many people, papers and organizations have each kind of identifier (`iclr-kg stats`,
    /stats): one query, its schemes read from the table above. Each (scheme, entity) pair is made
    distinct before its types are joined, a tenth of the time of joining first (docs/performance.md,
    measured choices)."""
    pairs = " ".join(f'("{s.name}" <{s.prop}>)' for s in SCHEMES.values() if s.prop)
    kinds = " ".join(f'("{kind}" iclr:{local})' for kind, local in COVERED_KINDS.items())
    wikidata = SCHEMES["wikidata"].iri("")
    return f"""
SELECT ?kind ?scheme (COUNT(?e) AS ?entities) WHERE {{
  {{ SELECT DISTINCT ?scheme ?e WHERE {{
    {{ VALUES (?scheme ?p) {{ {pairs} }} ?e ?p ?value }}
    UNION
    {{ ?e skos:exactMatch ?item . FILTER (STRSTARTS(STR(?item), "{wikidata}")) BIND ("wikidata" AS ?scheme) }}
  }} }}
  VALUES (?kind ?class) {{ {kinds} }}
  ?e a ?class .
}} GROUP BY ?kind ?scheme ORDER BY ?kind ?scheme"""
