"""One vocabulary of IRIs: ours (entities, graphs, the ontology), the namespaces we use with their
prefixes, and the few terms code names. Nothing else spells an IRI out."""

from __future__ import annotations

import functools
import re

from pyoxigraph import NamedNode

from iclr_kg import kinds
from iclr_kg.errors import InternalError

BASE = "https://w3id.org/iclr-kg/"
ONTOLOGY_NS = BASE + "ontology#"
RESOURCE_BASE = BASE + "resource/"
GRAPH_BASE = BASE + "graph/"

GRAPH_ONTOLOGY = GRAPH_BASE + "ontology"
# The ontology's blank nodes are named from the file's digest and their order (build/rdf.py), the
# same in every build of the same file: what an update did to them stays meaningful in the next
ONTOLOGY_BLANK_PREFIX = "ontology"
GRAPH_INFERRED = GRAPH_BASE + "inferred"
GRAPH_ENTITIES = GRAPH_BASE + "entities"
GRAPH_WIKIDATA = GRAPH_BASE + "wikidata"
GRAPH_UPDATES = GRAPH_BASE + "updates"  # what updates insert into the default graph
GRAPH_SOURCE_BASE = GRAPH_BASE + "source/"
# On a remote engine (`iclr-kg publish`): the merged default graph, and what was published when.
GRAPH_MERGED = GRAPH_BASE + "merged"
GRAPH_PUBLICATION = GRAPH_BASE + "publication"
# The dataset's licence: VoID, the pages' footer, a release's DCAT and the SSSOM mappings say it
LICENSE = "https://creativecommons.org/licenses/by/4.0/"

PREFIXES: dict[str, str] = {
    "iclr": ONTOLOGY_NS,
    "res": RESOURCE_BASE,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "schema": "http://schema.org/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "prov": "http://www.w3.org/ns/prov#",
    "void": "http://rdfs.org/ns/void#",
    "bibo": "http://purl.org/ontology/bibo/",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
}
ENTITY_KINDS = kinds.ENTITY_KINDS  # every segment of our entities' IRIs (kinds.py: from the ontology)
# Exports and query results use one prefix per kind of entity (paper:PxTIG12RRHS), which reads
# better than res:paper\/PxTIG12RRHS; queries may use either.
EXPORT_PREFIXES: dict[str, str] = {
    **{k: v for k, v in PREFIXES.items() if k != "res"},
    **{kind: f"{RESOURCE_BASE}{kind}/" for kind in ENTITY_KINDS},
}
QUERY_PREFIXES: dict[str, str] = {**PREFIXES, **EXPORT_PREFIXES}

RDF = PREFIXES["rdf"]
RDFS = PREFIXES["rdfs"]
OWL = PREFIXES["owl"]
XSD = PREFIXES["xsd"]
SKOS = PREFIXES["skos"]
SCHEMA = PREFIXES["schema"]
DCTERMS = PREFIXES["dcterms"]
SD = "http://www.w3.org/ns/sparql-service-description#"

RDF_TYPE = NamedNode(RDF + "type")
RDFS_LABEL = NamedNode(RDFS + "label")
RDFS_COMMENT = NamedNode(RDFS + "comment")
RDFS_SUBCLASS_OF = NamedNode(RDFS + "subClassOf")
RDFS_SUBPROPERTY_OF = NamedNode(RDFS + "subPropertyOf")
RDFS_DOMAIN = NamedNode(RDFS + "domain")
RDFS_RANGE = NamedNode(RDFS + "range")
# An IRI that no longer names an entity of its own (a paper first named by title, then matched to
# its OpenReview id) points at the one that does; pages answer it with a redirect.
DCTERMS_IS_REPLACED_BY = NamedNode(DCTERMS + "isReplacedBy")
OWL_CLASS = NamedNode(OWL + "Class")
OWL_OBJECT_PROPERTY = NamedNode(OWL + "ObjectProperty")
OWL_DATATYPE_PROPERTY = NamedNode(OWL + "DatatypeProperty")
OWL_NAMED_INDIVIDUAL = NamedNode(OWL + "NamedIndividual")
OWL_INVERSE_OF = NamedNode(OWL + "inverseOf")
XSD_STRING = NamedNode(XSD + "string")
XSD_INTEGER = NamedNode(XSD + "integer")
SKOS_EXACT_MATCH = NamedNode(SKOS + "exactMatch")
WDT = PREFIXES["wdt"]


@functools.lru_cache(maxsize=1024)
def iclr(term: str) -> NamedNode:
    """A term of our ontology, made once (terms are immutable): the RDF stage asks for one per
    quad, 400,000 times at 10,000 papers."""
    return NamedNode(ONTOLOGY_NS + term)


# An entity's key, the last segment of its IRI, is one rule for the build that makes it and the
# page route that reads it (web/resources/entities.py). A key a curated file or an import writes
# (a person's, a source's, a paper's without an OpenReview id) is at most KEY_PART_MAX characters
# (`CURATED_KEY`, checked where data/ is read); the build joins up to three of them with numbers
# (a role: person-source-n; a conferral: award-paper), so no key it makes is longer than
# ENTITY_KEY_MAX, and `entity` refuses one that is: the route answers every key a build makes.
KEY_PART_MAX = 150
CURATED_KEY = rf"^[a-z0-9][a-z0-9-]{{0,{KEY_PART_MAX - 1}}}$"
ENTITY_KEY_MAX = 3 * KEY_PART_MAX + 50
ENTITY_KEY = re.compile(rf"^[A-Za-z0-9_-]{{1,{ENTITY_KEY_MAX}}}$")


def entity(kind: str, key: str) -> NamedNode:
    """The IRI of an entity: https://w3id.org/iclr-kg/resource/<kind>/<key>."""
    if len(key) > ENTITY_KEY_MAX:  # the characters are the curated patterns'; the length is checked here
        raise InternalError(f"the key {key[:40]}... is {len(key)} characters, past ENTITY_KEY_MAX ({ENTITY_KEY_MAX})")
    return NamedNode(f"{RESOURCE_BASE}{kind}/{key}")
