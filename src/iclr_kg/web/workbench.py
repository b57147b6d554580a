"""What the query editor asks the server: the vocabulary to complete, the problems to mark, and
short permalinks of queries and their views.

Permalinks live in `permalinks.sqlite` inside the store directory, beside the generations, so a
rebuild keeps them. A link's id is the first 10 characters of the SHA-256 of what it holds (the
same query and view always get the same link, and nothing is stored twice); the table is capped,
since anyone may create links.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from flask import Blueprint, Response, jsonify, redirect, request, url_for
from flask.typing import ResponseReturnValue
from pyoxigraph import NamedNode

from iclr_kg import vocab
from iclr_kg.errors import NotFound, QueryError, RequestError, TooLarge
from iclr_kg.sparql.lint import check
from iclr_kg.web.http import MAX_QUERY_BYTES, json_object
from iclr_kg.web.i18n import problem_shown
from iclr_kg.web.querying import parsed_in_worker
from iclr_kg.web.resources.ontology import ontology_terms
from iclr_kg.web.state import state

blueprint = Blueprint("workbench", __name__)

KEYWORDS = [
    "SELECT",
    "DISTINCT",
    "WHERE",
    "FILTER",
    "OPTIONAL",
    "UNION",
    "MINUS",
    "GRAPH",
    "SERVICE",
    "BIND",
    "VALUES",
    "AS",
    "ORDER",
    "BY",
    "ASC",
    "DESC",
    "LIMIT",
    "OFFSET",
    "GROUP",
    "HAVING",
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "SAMPLE",
    "GROUP_CONCAT",
    "CONSTRUCT",
    "DESCRIBE",
    "ASK",
    "PREFIX",
    "BASE",
    "NOT",
    "EXISTS",
    "IN",
    "STR",
    "LANG",
    "LANGMATCHES",
    "DATATYPE",
    "IRI",
    "BOUND",
    "COALESCE",
    "IF",
    "REGEX",
    "CONTAINS",
    "STRSTARTS",
    "STRENDS",
    "LCASE",
    "UCASE",
    "YEAR",
    "NOW",
    "a",
]
# Anyone may create permalinks, so they are bounded by count, by size (a link must redirect: its
# URL-encoded query stays under what proxies accept in a Location header, 8 KiB at nginx's
# defaults), in total bytes, and per client address.
MAX_PERMALINKS = 100_000
MAX_PERMALINK_URL = 6_000
MAX_PERMALINK_TOTAL = 64 * 2**20
MAX_PERMALINKS_PER_CLIENT = 1_000


# --------------------------------------------------------------------------------------------
# Vocabulary and problems


def vocabulary() -> dict[str, object]:
    """Prefixes, keywords and our ontology's terms with labels and comments (per generation)."""
    return state().per_generation("vocabulary", _vocabulary)


def _vocabulary() -> dict[str, object]:
    sections = ontology_terms(state().store(), NamedNode(vocab.GRAPH_ONTOLOGY))["sections"]
    kinds = {"classes": "class", "object_properties": "property", "datatype_properties": "property"}
    kinds["individuals"] = "individual"
    terms = []
    for section, kind in kinds.items():
        for term in sections[section]:  # type: ignore[index]
            relations = dict(term["relations"])
            terms.append(
                {
                    "name": f"iclr:{term['name']}",
                    "kind": kind,
                    "label": term["label"],
                    "label_zh": term["label_zh"],
                    "comment": term["comment"],
                    "domain": [c.text for c in relations.get("domain", [])],
                    "range": [c.text for c in relations.get("range", [])],
                }
            )
    return {"prefixes": vocab.QUERY_PREFIXES, "keywords": KEYWORDS, "terms": terms, "kinds": vocab.ENTITY_KINDS}


def ontology_local_names() -> frozenset[str]:
    """The local names of our ontology's terms, for lint (terms.py: read once per ontology file)."""
    return state().terms().names


@blueprint.route("/api/vocabulary")
def vocabulary_json() -> Response:
    response = jsonify(vocabulary())
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


@blueprint.route("/api/check", methods=["GET", "POST"])
def check_json() -> Response:
    """The problems of `query` (line, column, length, message, severity), before it runs."""
    text = request.values.get("query", "")
    if len(text.encode("utf-8")) > MAX_QUERY_BYTES:
        raise TooLarge(f"the query is longer than {MAX_QUERY_BYTES} bytes")
    problems = check(text, ontology_local_names(), parsing=parsed_in_worker)
    return jsonify({"problems": [problem_shown(p) for p in problems]})


@blueprint.route("/api/labels", methods=["POST"])
def labels_json() -> Response:
    """Names of entities by IRI (at most 2,000 at a time), for the graph and tree views: the body
    is `{"iris": [...]}`; anything else is a 400 that says what is wrong."""
    asked = json_object("body").get("iris", [])
    if not isinstance(asked, list) or not all(isinstance(i, str) for i in asked):
        raise RequestError('"iris" must be a list of IRIs (strings)')
    iris = asked[:2000]
    index = state().index()
    found = index.labels(iris) if index else {}
    return jsonify({iri: names[0] for iri, names in found.items()})


# --------------------------------------------------------------------------------------------
# Permalinks


@contextlib.contextmanager
def _links() -> Iterator[sqlite3.Connection]:
    path: Path = state().settings.store / "permalinks.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=10)
    try:
        db.execute("CREATE TABLE IF NOT EXISTS link (id TEXT PRIMARY KEY, body TEXT NOT NULL, created TEXT NOT NULL)")
        columns = {row[1] for row in db.execute("PRAGMA table_info(link)")}
        if "client" not in columns:  # links made before links were counted per client
            db.execute("ALTER TABLE link ADD COLUMN client TEXT")
            db.execute("CREATE INDEX IF NOT EXISTS link_client ON link (client)")
        yield db
        db.commit()
    finally:
        db.close()


def link_id(body: str) -> str:
    digest = hashlib.sha256(body.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")[:10]


@blueprint.route("/q", methods=["POST"])
def create_link() -> ResponseReturnValue:
    """A permalink for `query` and `view` (a form post redirects to it; JSON clients get its URL)."""
    text = request.values.get("query", "")
    view = request.values.get("view", "table")
    if not text.strip():
        raise QueryError("nothing to link: the query is empty")
    if len(text.encode("utf-8")) > MAX_QUERY_BYTES or len(view) > 500:
        raise TooLarge(f"the query is longer than {MAX_QUERY_BYTES} bytes")
    target = url_for("pages.index", query=text, view=view)
    if len(target) > MAX_PERMALINK_URL:
        raise TooLarge(
            f"the query is too long for a permalink ({len(target):,} bytes as a URL; at most "
            f"{MAX_PERMALINK_URL:,}): share it as a file, or save it in queries/"
        )
    body = json.dumps({"query": text, "view": view}, ensure_ascii=False, sort_keys=True)
    ident = link_id(body)
    with _links() as db:
        if db.execute("SELECT 1 FROM link WHERE id = ?", (ident,)).fetchone() is None:
            _check_room(db, request.remote_addr)
            db.execute("INSERT INTO link VALUES (?, ?, datetime('now'), ?)", (ident, body, request.remote_addr))
    url = url_for("workbench.open_link", ident=ident, _external=True)
    if request.accept_mimetypes.best_match(["text/html", "application/json"]) == "application/json":
        return jsonify({"id": ident, "url": url})
    return redirect(url, code=303)


def _check_room(db: sqlite3.Connection, client: str | None) -> None:
    """Refuse a new link past the deployment's count or bytes, or past this client's share."""
    count, size = db.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(body)), 0) FROM link").fetchone()
    if count >= MAX_PERMALINKS or size >= MAX_PERMALINK_TOTAL:
        raise TooLarge("this deployment holds as many permalinks as it keeps; share the long URL instead")
    mine = db.execute("SELECT COUNT(*) FROM link WHERE client = ?", (client,)).fetchone()[0]
    if mine >= MAX_PERMALINKS_PER_CLIENT:
        raise TooLarge(f"this address has made {mine:,} permalinks, as many as one address may; share the long URL")


@blueprint.route("/q/<ident>")
def open_link(ident: str) -> ResponseReturnValue:
    """The query page with the linked query and view (a redirect, so the page's URL says it all)."""
    with _links() as db:
        row = db.execute("SELECT body FROM link WHERE id = ?", (ident,)).fetchone()
    if row is None:
        raise NotFound(f"No shared query link {ident!r} here.")
    body = json.loads(row[0])
    return redirect(url_for("pages.index", query=body["query"], view=body.get("view", "table")))
