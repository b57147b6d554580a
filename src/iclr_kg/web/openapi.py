"""The OpenAPI 3 description of the HTTP API, served at /openapi.json."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from flask import Blueprint, jsonify

from iclr_kg.identifiers import ROUTES
from iclr_kg.sparql.formats import RDF_FORMATS, RESULT_FORMATS

blueprint = Blueprint("openapi", __name__)

TEXT = {"text/plain": {"schema": {"type": "string"}}}
JSON = {"application/json": {"schema": {"type": "object"}}}
HTML = {"text/html": {"schema": {"type": "string"}}}
RESULTS: dict[str, Any] = {f.media_type: {"schema": {}} for f in RESULT_FORMATS.values()}
RDF: dict[str, Any] = {f.media_type: {"schema": {}} for f in RDF_FORMATS.values()}
FORMAT = {
    "name": "format",
    "in": "query",
    "required": False,
    "schema": {"type": "string"},
    "description": "Output format, overriding Accept: json, xml, csv, tsv, turtle, ntriples, nquads, trig, jsonld, rdfxml (and the aliases SPARQL clients send).",
}


def path_parameters(*names: str, enums: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """A path's parameters, in order: each a required string, limited to its `enums` if listed."""
    enums = enums or {}
    return [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {"type": "string", **({"enum": enums[name]} if name in enums else {})},
        }
        for name in names
    ]


ERRORS = {
    "400": {
        "description": "Bad request: syntax error (the parser's message), bad parameter, update on the query endpoint, SERVICE not allowed",
        "content": TEXT,
    },
    "406": {"description": "No acceptable output format", "content": TEXT},
    "413": {"description": "Query or body too large", "content": TEXT},
    "415": {"description": "Unsupported request body type", "content": TEXT},
    "503": {"description": "Query stopped at its time limit, or all query workers busy", "content": {**TEXT, **HTML}},
}
QUERY_PARAMS = [
    {
        "name": "query",
        "in": "query",
        "required": False,
        "schema": {"type": "string"},
        "description": "A SPARQL 1.1 query.",
    },
    FORMAT,
    {"name": "default-graph-uri", "in": "query", "required": False, "schema": {"type": "string"}},
    {"name": "named-graph-uri", "in": "query", "required": False, "schema": {"type": "string"}},
    {
        "name": "inferred",
        "in": "query",
        "required": False,
        "schema": {"type": "string", "enum": ["true", "false"]},
        "description": "false leaves the inferred graph out of the default graph.",
    },
    {
        "name": "timeout",
        "in": "query",
        "required": False,
        "schema": {"type": "string"},
        "description": "A lower time limit in seconds than the configured one.",
    },
]


def spec() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "iclr-kg",
            "version": version("iclr-kg"),
            "description": "SPARQL endpoint and Linked Data pages of the ICLR knowledge graph.",
        },
        "paths": {
            "/sparql": {
                "get": {
                    "summary": "SPARQL 1.1 Protocol query (no query: service description or the query page)",
                    "parameters": QUERY_PARAMS,
                    "responses": {
                        "200": {"description": "Results", "content": {**RESULTS, **RDF}},
                        "302": {"description": "Browsers go to the query page"},
                        **ERRORS,
                    },
                },
                "post": {
                    "summary": "SPARQL 1.1 Protocol query by POST",
                    "parameters": QUERY_PARAMS[1:],
                    "requestBody": {
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": {"type": "object", "properties": {"query": {"type": "string"}}}
                            },
                            "application/sparql-query": {"schema": {"type": "string"}},
                        }
                    },
                    "responses": {"200": {"description": "Results", "content": {**RESULTS, **RDF}}, **ERRORS},
                },
            },
            "/queries": {
                "get": {
                    "summary": "The saved queries",
                    "parameters": [FORMAT],
                    "responses": {
                        "200": {
                            "description": "List",
                            "content": {**HTML, "application/json": {"schema": {"type": "array"}}},
                        }
                    },
                }
            },
            "/queries/{name}": {
                "get": {
                    "summary": "Run a saved query (parameters by name in the query string)",
                    "parameters": [
                        *path_parameters("name"),
                        FORMAT,
                        {"name": "timeout", "in": "query", "required": False, "schema": {"type": "string"}},
                    ],
                    "responses": {
                        "200": {"description": "Results", "content": {**HTML, **RESULTS, **RDF}},
                        "404": {"description": "No such saved query", "content": HTML},
                        **ERRORS,
                    },
                }
            },
            "/resource/{kind}/{key}": {
                "get": {
                    "summary": "An entity: HTML page or RDF by Accept",
                    "parameters": [
                        *path_parameters("kind", "key"),
                        FORMAT,
                    ],
                    "responses": {
                        "200": {"description": "The entity", "content": {**HTML, **RDF}},
                        "404": {"description": "Unknown entity", "content": HTML},
                        **ERRORS,
                    },
                }
            },
            "/id/{scheme}/{value}": {
                "get": {
                    "summary": "The entity known elsewhere by an identifier (ORCID, dblp, ROR, arXiv, DOI, Semantic Scholar, OpenReview, Wikidata...)",
                    "parameters": [
                        *path_parameters("scheme", "value", enums={"scheme": list(ROUTES)}),
                    ],
                    "responses": {
                        "303": {"description": "See the entity's page"},
                        "404": {
                            "description": "No entity is known by it here (the page offers a search)",
                            "content": HTML,
                        },
                        **ERRORS,
                    },
                }
            },
            "/ontology": {
                "get": {
                    "summary": "The ontology: HTML documentation or RDF",
                    "parameters": [FORMAT],
                    "responses": {"200": {"description": "Ontology", "content": {**HTML, **RDF}}, **ERRORS},
                }
            },
            "/data": {
                "get": {
                    "summary": "Graph Store Protocol, read only",
                    "parameters": [
                        {"name": "graph", "in": "query", "required": False, "schema": {"type": "string"}},
                        {
                            "name": "default",
                            "in": "query",
                            "required": False,
                            "allowEmptyValue": True,
                            "schema": {"type": "string"},
                        },
                        FORMAT,
                    ],
                    "responses": {
                        "200": {"description": "The graph", "content": RDF},
                        "404": {"description": "No such graph", "content": TEXT},
                        **ERRORS,
                    },
                }
            },
            "/health": {
                "get": {
                    "summary": "Status",
                    "responses": {
                        "200": {
                            "description": "Store open",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                        "503": {
                            "description": "No store",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                    },
                }
            },
            "/stats": {
                "get": {
                    "summary": "Counts per graph and class",
                    "responses": {"200": {"description": "Page", "content": HTML}},
                }
            },
            "/downloads": {
                "get": {
                    "summary": "The Data page: the graph now, and every release with its files' formats, sizes and SHA-256",
                    "responses": {"200": {"description": "Page", "content": HTML}},
                }
            },
            "/release/{version}/{name}": {
                "get": {
                    "summary": "A released file, at the address its DCAT downloadURL gives (only files its SHA256SUMS lists)",
                    "parameters": [
                        *path_parameters("version", "name"),
                    ],
                    "responses": {
                        "200": {"description": "The file"},
                        "404": {"description": "No such release, or a file it does not list"},
                    },
                }
            },
            "/resource/{kind}/": {
                "get": {
                    "summary": "Every entity of a kind, 100 a page",
                    "parameters": [
                        *path_parameters("kind"),
                        {
                            "name": "sort",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "string", "enum": ["name", "year", "papers"]},
                        },
                        {"name": "page", "in": "query", "required": False, "schema": {"type": "string"}},
                    ],
                    "responses": {
                        "200": {"description": "List", "content": HTML},
                        "404": {"description": "No such kind or page", "content": HTML},
                    },
                }
            },
            "/search": {
                "get": {
                    "summary": "Entities by name, title, alias or Chinese name",
                    "parameters": [
                        {"name": "q", "in": "query", "required": False, "schema": {"type": "string"}},
                        {"name": "kind", "in": "query", "required": False, "schema": {"type": "string"}},
                        {"name": "limit", "in": "query", "required": False, "schema": {"type": "string"}},
                        FORMAT,
                    ],
                    "responses": {"200": {"description": "Matches", "content": {**HTML, **JSON}}},
                }
            },
            "/.well-known/void": {
                "get": {
                    "summary": "The dataset described in VoID",
                    "parameters": [FORMAT],
                    "responses": {"200": {"description": "VoID", "content": RDF}, **ERRORS},
                }
            },
            "/api/vocabulary": {
                "get": {
                    "summary": "What the editor completes: prefixes, keywords, the ontology's terms",
                    "responses": {"200": {"description": "Vocabulary", "content": JSON}},
                }
            },
            "/api/check": {
                "get": {
                    "summary": "A query's problems with line and column (checked in a query worker)",
                    "parameters": [QUERY_PARAMS[0]],
                    "responses": {"200": {"description": "Problems", "content": JSON}, **ERRORS},
                }
            },
            "/q/{ident}": {
                "get": {
                    "summary": "A permalink: redirects to the query page with its query and view",
                    "parameters": path_parameters("ident"),
                    "responses": {
                        "302": {"description": "The query page"},
                        "404": {"description": "No such link", "content": HTML},
                    },
                }
            },
        },
    }


@blueprint.route("/openapi.json")
def openapi() -> Any:
    return jsonify(spec())
