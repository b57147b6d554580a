"""What the index says of each kind of entity: for a listed kind, a query of its facts (one row
per entity: ?e, ?a..?d, ?y its year, ?n the count its list sorts by, and the Chinese names of
the entities ?a, ?b and ?d name: ?az, ?bz, ?dz, "" where they have none or are not names) and
the one line a list and
search results show of a row; for an entity that only links others (an authorship, a
conferral...), its label, made of what it links (DERIVED). A kind's facts are one record here
(`KindFacts`); index/build.py and index/patch.py read the table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def _term(iri: str) -> str:
    """A term of the ontology as the facts keep it (`iclr:Accepted`): a page shows it in its
    reader's language (`terms.Terms.readable`)."""
    return f"iclr:{iri.rsplit('#', 1)[-1]}" if iri else ""


def _paper_line(row: list[str]) -> str:
    """Its edition, decision (presentation) and first author: `ICLR 2021 · iclr:Accepted (iclr:Oral) · Ian Gemp et al.`"""
    edition, decision, presentation, first = row
    decided = f"{_term(decision)} ({_term(presentation)})" if decision and presentation else _term(decision)
    return " · ".join(x for x in (edition, decided, f"{first} et al." if first else "") if x)


def _organization_line(row: list[str]) -> str:
    """Its kind, a term of the ontology (iclr:University), and what it is part of."""
    cls, parent, _, _ = row
    return " · ".join(x for x in (_term(cls), f"part of {parent}" if parent else "") if x)


def _either_line(row: list[str]) -> str:
    """?a and ?b, once where both say it (works at and studied at Tesla)."""
    a, b, _, _ = row
    return " · ".join(dict.fromkeys(x for x in (a, b) if x))


@dataclass(frozen=True)
class KindFacts:
    query: str  # ?e ?a ?b ?c ?d ?y ?n ?az ?bz ?dz, a row per entity of the kind
    line: Callable[[list[str]], str] = _either_line  # (a, b, c, d) -> what a list shows of it


PAPER = """
SELECT ?e (SAMPLE(?edition) AS ?a) (SAMPLE(?decision) AS ?b) (SAMPLE(?presentation) AS ?c) (SAMPLE(?first) AS ?d)
       (SAMPLE(?year) AS ?y) (COUNT(DISTINCT ?award) AS ?n) ("" AS ?az) ("" AS ?bz) (MIN(STR(?fZh)) AS ?dz) WHERE {
  ?e a iclr:Paper .
  OPTIONAL { ?e iclr:submittedTo ?ed . ?ed iclr:name ?edition . OPTIONAL { ?ed iclr:year ?year } }
  OPTIONAL { ?e iclr:decision ?decision }
  OPTIONAL { ?e iclr:presentationType ?presentation }
  OPTIONAL { ?e iclr:firstAuthor ?f . ?f iclr:name ?first OPTIONAL { ?f rdfs:label|iclr:nativeName ?fZh FILTER (LANGMATCHES(LANG(?fZh), "zh")) } }
  OPTIONAL { ?e iclr:receivedAward ?award }
} GROUP BY ?e"""


PERSON = """
SELECT ?e (SAMPLE(?employer) AS ?a) (SAMPLE(?school) AS ?b) ("" AS ?c) ("" AS ?d) (0 AS ?y)
       (COUNT(DISTINCT ?paper) AS ?n) (MIN(STR(?wZh)) AS ?az) (MIN(STR(?sZh)) AS ?bz) ("" AS ?dz) WHERE {
  ?e a iclr:Person .
  OPTIONAL { ?e iclr:employedBy ?w . ?w iclr:name ?employer OPTIONAL { ?w rdfs:label|iclr:nativeName ?wZh FILTER (LANGMATCHES(LANG(?wZh), "zh")) } }
  OPTIONAL { ?e iclr:affiliatedWith ?s . ?s iclr:name ?school OPTIONAL { ?s rdfs:label|iclr:nativeName ?sZh FILTER (LANGMATCHES(LANG(?sZh), "zh")) } }
  OPTIONAL { ?e iclr:authorOf ?paper }
} GROUP BY ?e"""


ORGANIZATION = """
SELECT ?e (SAMPLE(?cls) AS ?a) (SAMPLE(?parent) AS ?b) ("" AS ?c) ("" AS ?d) (0 AS ?y)
       (COUNT(DISTINCT ?paper) AS ?n) ("" AS ?az) (MIN(STR(?pZh)) AS ?bz) ("" AS ?dz) WHERE {
  ?e a iclr:Organization .
  OPTIONAL { ?e a ?cls . FILTER (?cls != iclr:Organization && ?cls != iclr:Agent && STRSTARTS(STR(?cls), STR(iclr:))) }
  OPTIONAL {  # its direct parent, as its page says (subOrganizationOf is transitive: not an ancestor further up)
    ?e iclr:subOrganizationOf ?p FILTER NOT EXISTS { ?e iclr:subOrganizationOf ?mid . ?mid iclr:subOrganizationOf ?p }
    ?p iclr:name ?parent OPTIONAL { ?p rdfs:label|iclr:nativeName ?pZh FILTER (LANGMATCHES(LANG(?pZh), "zh")) } }
  OPTIONAL {  # credited to it or to a unit under it: the count its page and the front page give
    { ?paper iclr:creditedOrganization ?e } UNION { ?paper iclr:creditedOrganization/iclr:subOrganizationOf ?e }
  }
} GROUP BY ?e"""


EDITION = """
SELECT ?e (MIN(STR(?city)) AS ?a) (MIN(STR(?country)) AS ?b) ("" AS ?c) ("" AS ?d) (SAMPLE(?year) AS ?y)
       (COUNT(DISTINCT ?paper) AS ?n) (MIN(STR(?cityZh)) AS ?az) (MIN(STR(?countryZh)) AS ?bz) ("" AS ?dz) WHERE {
  ?e a iclr:ConferenceEdition .
  OPTIONAL { ?e iclr:year ?year }
  OPTIONAL { ?e iclr:city ?city FILTER (!LANGMATCHES(LANG(?city), "zh")) }
  OPTIONAL { ?e iclr:country ?country FILTER (!LANGMATCHES(LANG(?country), "zh")) }
  OPTIONAL { ?e iclr:city ?cityZh FILTER (LANGMATCHES(LANG(?cityZh), "zh")) }
  OPTIONAL { ?e iclr:country ?countryZh FILTER (LANGMATCHES(LANG(?countryZh), "zh")) }
  OPTIONAL { ?paper iclr:submittedTo ?e }
} GROUP BY ?e"""


AWARD = """
SELECT ?e (SAMPLE(?edition) AS ?a) ("" AS ?b) ("" AS ?c) ("" AS ?d) (SAMPLE(?year) AS ?y)
       (COUNT(DISTINCT ?paper) AS ?n) ("" AS ?az) ("" AS ?bz) ("" AS ?dz) WHERE {
  ?e a iclr:Award .
  OPTIONAL { ?e iclr:awardedAt ?ed . ?ed iclr:name ?edition . OPTIONAL { ?ed iclr:year ?year } }
  OPTIONAL { ?c iclr:conferredAward ?e ; iclr:conferredOn ?paper }
} GROUP BY ?e"""


SOURCE = """
SELECT ?e (SAMPLE(?outlet) AS ?a) (SAMPLE(?lang) AS ?b) ("" AS ?c) ("" AS ?d) (0 AS ?y) (0 AS ?n)
       ("" AS ?az) ("" AS ?bz) ("" AS ?dz) WHERE {
  ?e a iclr:Source .
  OPTIONAL { ?e iclr:outlet ?outlet } OPTIONAL { ?e schema:inLanguage ?lang }
} GROUP BY ?e"""


FACTS: dict[str, KindFacts] = {
    "paper": KindFacts(PAPER, _paper_line),
    "person": KindFacts(PERSON),
    "organization": KindFacts(ORGANIZATION, _organization_line),
    "edition": KindFacts(EDITION),
    "award": KindFacts(AWARD),
    "source": KindFacts(SOURCE),
}


# Labels of the entities that only link others: built from what they link.
DERIVED = {
    "authorship": """
SELECT ?e (CONCAT(?written, ", author ", STR(?position), " of ", ?title) AS ?label) WHERE {
  ?e a iclr:Authorship ; iclr:authorNameAsWritten ?written ; iclr:authorPosition ?position ;
     iclr:authorshipOf/iclr:title ?title }""",
    "review": """
SELECT ?e (CONCAT("Review of ", ?title, COALESCE(CONCAT(" (rating ", STR(?rating), ")"), "")) AS ?label) WHERE {
  ?e a iclr:Review ; iclr:reviewOf/iclr:title ?title . OPTIONAL { ?e iclr:rating ?rating } }""",
    "role": """
SELECT ?e (CONCAT(?person, ": ", ?role, " at ", ?org) AS ?label) WHERE {
  ?e a iclr:Role ; iclr:roleName ?role ; iclr:roleAt/iclr:name ?org ; iclr:roleOf/iclr:name ?person }""",
    "conferral": """
SELECT ?e (CONCAT(?award, ": ", ?title) AS ?label) WHERE {
  ?e a iclr:AwardConferral ; iclr:conferredAward/iclr:name ?award ; iclr:conferredOn/iclr:title ?title }""",
}
