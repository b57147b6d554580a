"""docs/http-api.md's routes table is the app's URL map: every route it names is served, and
every route served is named there (a documented address of one
entity kind, `/resource/award/`, is served by its rule) (a reader's one page of what the web app answers)."""

from __future__ import annotations

import re
from pathlib import Path

from flask import Flask

PAGE = Path(__file__).resolve().parents[2] / "docs" / "http-api.md"
# What a browser or a crawler asks for by convention, not what a reader looks up.
UNLISTED = {"/static/<>", "/favicon.ico", "/sitemap-pages.xml", "/sitemap-<>-<>.xml"}


def _shape(route: str) -> str:
    """`/resource/<kind>/<key>` and `/resource/<string:kind>/<path:key>` alike: `/resource/<>/<>`."""
    return re.sub(r"<[^>]*>", "<>", route.split("?")[0])


def _documented() -> set[str]:
    table = PAGE.read_text(encoding="utf-8").split("## Routes", 1)[1].split("\n## ", 1)[0]
    first_cells = [row.split("|")[1] for row in table.splitlines() if row.startswith("| `")]
    return {_shape(route) for cell in first_cells for route in re.findall(r"`(/[^`]*)`", cell)}


def test_the_routes_table_is_the_url_map(app: Flask) -> None:
    served = {_shape(rule.rule) for rule in app.url_map.iter_rules()} - UNLISTED
    documented = _documented()
    patterns = [re.compile(re.escape(shape).replace("<>", "[^/]+") + "$") for shape in served]
    not_served = {route for route in documented - served if not any(p.match(route) for p in patterns)}
    assert not not_served, f"documented, not served: {sorted(not_served)}"
    assert not served - documented, f"served, not in docs/http-api.md's routes: {sorted(served - documented)}"
