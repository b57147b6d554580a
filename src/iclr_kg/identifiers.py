"""The identifier schemes an entity of ours may be known by elsewhere, as one table: how a value
is written (a URL or the bare value, checked), the IRI that resolves it, and the ontology's
property that holds it (each a subproperty of the Wikidata property with the same meaning, so
that the reasoner states `wdt:P496 "…"` too and a federated query joins by value).

Wikidata property numbers are the ones checked against public evidence in ../shared/wikidata/:
ORCID iD P496, DBLP author ID P2456, Semantic Scholar author ID P4012, Google Scholar author ID
P1960, OpenReview.net profile ID P8964 and submission ID P8968.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from iclr_kg.errors import BadIdentifier


@dataclass(frozen=True)
class Scheme:
    name: str  # as in /id/<name>/<value>
    label: str  # as a page names it
    kinds: tuple[str, ...]  # the kinds of entity it identifies
    prop: str  # the ontology's property holding the value ("" for Wikidata: skos:exactMatch)
    iri: Callable[[str], str]  # the value's resolvable IRI
    parse: Callable[[str], str]  # a URL or bare value as written -> the value, or BadIdentifier


def orcid_checksum_ok(digits: str) -> bool:
    """ISO 7064 MOD 11-2 over the first 15 digits, as ORCID computes its last character."""
    total = 0
    for ch in digits[:15]:
        total = (total + int(ch)) * 2
    check = (12 - total % 11) % 11
    return digits[15] == ("X" if check == 10 else str(check))


def _orcid(text: str) -> str:
    value = re.sub(r"^(https?://)?(www\.)?orcid\.org/", "", text.strip(), flags=re.IGNORECASE).upper()
    if not re.fullmatch(r"\d{4}-\d{4}-\d{4}-\d{3}[\dX]", value):
        raise BadIdentifier(f"{text!r} is not an ORCID iD (four groups of four digits: 0000-0002-1825-0097)")
    if not orcid_checksum_ok(value.replace("-", "")):
        raise BadIdentifier(f"{text!r} is not an ORCID iD: its last character fails ORCID's checksum")
    return value


def _dblp(text: str) -> str:
    value = re.sub(r"^(https?://)?(www\.)?dblp\.(org|uni-trier\.de)/pid/", "", text.strip(), flags=re.IGNORECASE)
    value = value.removesuffix(".html").removesuffix(".xml")
    if not re.fullmatch(r"[0-9a-z]+/[0-9A-Za-z-]+", value):
        raise BadIdentifier(f"{text!r} is not a dblp person id (its persistent URL: https://dblp.org/pid/123/4567)")
    return value


def _s2_author(text: str) -> str:
    found = re.fullmatch(r"(?:https?://(?:www\.)?semanticscholar\.org/author/(?:[^/]+/)?)?(\d+)/?", text.strip())
    if not found:
        raise BadIdentifier(f"{text!r} is not a Semantic Scholar author id (digits, or the author page's URL)")
    return found.group(1)


def _gscholar(text: str) -> str:
    text = text.strip()
    if text.startswith(("http://", "https://")):
        parts = urlsplit(text)
        users = parse_qs(parts.query).get("user", [])
        text = users[0] if users and parts.hostname and parts.hostname.startswith("scholar.google.") else ""
    if not re.fullmatch(r"[-_0-9A-Za-z]{12}", text):
        raise BadIdentifier("not a Google Scholar author id (12 letters, digits, - or _: the citations page's user=)")
    return text


def _openreview_profile(text: str) -> str:
    value = re.sub(r"^https?://openreview\.net/profile\?id=", "", text.strip())
    if not re.fullmatch(r"~[^\s/?#]{2,100}", value):
        raise BadIdentifier(f"{text!r} is not an OpenReview profile id (~First_Last1)")
    return value


def _openreview_note(text: str) -> str:
    value = re.sub(r"^https?://openreview\.net/(forum|pdf)\?id=", "", text.strip())
    if not re.fullmatch(r"[A-Za-z0-9_-]{6,16}", value):
        raise BadIdentifier(f"{text!r} is not an OpenReview submission id")
    return value


def _openreview(text: str) -> str:
    """A profile id (~First_Last1) or a submission's id, bare or in its page's URL."""
    text = text.strip()
    return _openreview_profile(text) if text.startswith("~") or "/profile?id=" in text else _openreview_note(text)


def _wikidata(text: str) -> str:
    value = re.sub(r"^https?://(www\.)?wikidata\.org/(wiki|entity)/", "", text.strip())
    if not re.fullmatch(r"Q[1-9]\d{0,10}", value):
        raise BadIdentifier(f"{text!r} is not a Wikidata item id (Q42)")
    return value


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme("orcid", "ORCID", ("person",), "orcid", lambda v: f"https://orcid.org/{v}", _orcid),
        Scheme("dblp", "dblp", ("person",), "dblpPid", lambda v: f"https://dblp.org/pid/{v}", _dblp),
        Scheme(
            "s2",
            "Semantic Scholar",
            ("person",),
            "semanticScholarAuthorId",
            lambda v: f"https://www.semanticscholar.org/author/{v}",
            _s2_author,
        ),
        Scheme(
            "gscholar",
            "Google Scholar",
            ("person",),
            "googleScholarId",
            lambda v: f"https://scholar.google.com/citations?user={v}",
            _gscholar,
        ),
        Scheme(
            "openreview",
            "OpenReview",
            ("person", "paper"),
            "openReviewProfile",
            lambda v: f"https://openreview.net/{'profile' if v.startswith('~') else 'forum'}?id={v}",
            _openreview,
        ),
        Scheme(
            "wikidata",
            "Wikidata",
            ("person", "organization", "paper"),
            "",
            lambda v: f"http://www.wikidata.org/entity/{v}",
            _wikidata,
        ),
    )
}
# What an OpenReview profile states, by its field (its public personal links), and our scheme
PROFILE_FIELDS = {"orcid": "orcid", "dblp": "dblp", "semanticScholar": "s2", "gscholar": "gscholar"}


def recognize(text: str) -> tuple[str, str] | None:
    """(scheme, value) for a pasted identifier or URL of a known scheme, else None: what the
    search box tries first."""
    text = text.strip()
    for name, pattern in (
        ("orcid", r"(https?://(www\.)?orcid\.org/)?\d{4}-\d{4}-\d{4}-\d{3}[\dXx]"),
        ("dblp", r"https?://(www\.)?dblp\.(org|uni-trier\.de)/pid/\S+"),
        ("s2", r"https?://(www\.)?semanticscholar\.org/author/\S+"),
        ("gscholar", r"https?://scholar\.google\.[a-z.]+/citations\?\S*user=\S+"),
        ("openreview", r"(https?://openreview\.net/(profile|forum|pdf)\?id=\S+|~[A-Za-z][^\s]*\d)"),
        ("wikidata", r"(https?://(www\.)?wikidata\.org/(wiki|entity)/)?Q[1-9]\d*"),
    ):
        if re.fullmatch(pattern, text):
            try:
                return name, SCHEMES[name].parse(text)
            except BadIdentifier:
                return None
    return None


def coverage_query() -> str:
    """How many people, papers and organizations have each kind of identifier (`iclr-kg stats`,
    /stats): one query, its schemes read from the table above."""
    pairs = " ".join(
        f'("{s.name}" iclr:{prop})'
        for s in SCHEMES.values()
        for prop in ((s.prop, "openReviewId") if s.name == "openreview" else (s.prop,))
        if prop
    )
    wikidata = SCHEMES["wikidata"].iri("")
    return f"""
SELECT ?kind ?scheme (COUNT(DISTINCT ?e) AS ?entities) WHERE {{
  {{ VALUES (?scheme ?p) {{ {pairs} }} ?e ?p ?value }}
  UNION
  {{ ?e skos:exactMatch ?item . FILTER (STRSTARTS(STR(?item), "{wikidata}")) BIND ("wikidata" AS ?scheme) }}
  VALUES (?kind ?class) {{ ("person" iclr:Person) ("paper" iclr:Paper) ("organization" iclr:Organization) }}
  ?e a ?class .
}} GROUP BY ?kind ?scheme ORDER BY ?kind ?scheme"""
