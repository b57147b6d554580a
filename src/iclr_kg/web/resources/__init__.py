"""Linked Data, read: entity pages and lists (/resource/...), identifiers elsewhere (/id/...), the
ontology (/ontology), Graph Store reads (/data), and the 404 of any path no route matches.

A module per job; this table is every route of the blueprint, so that one screen says which
function answers which URL (endpoint names stay `resources.<name>`, as templates link them)."""

from __future__ import annotations

from flask import Blueprint

from iclr_kg.web.resources import by_identifier, entities, graphstore, lists, notfound, ontology

blueprint = Blueprint("resources", __name__)
blueprint.add_url_rule("/resource/<kind>/<key>", view_func=entities.resource)
blueprint.add_url_rule("/resource/<kind>/", view_func=lists.browse)
blueprint.add_url_rule("/id/<scheme>/<path:value>", view_func=by_identifier.by_identifier)
blueprint.add_url_rule("/ontology", view_func=ontology.ontology)
blueprint.add_url_rule("/data", view_func=graphstore.data)
blueprint.add_url_rule("/data/<path:_>", view_func=graphstore.data_direct)
blueprint.app_errorhandler(404)(notfound.not_found)
