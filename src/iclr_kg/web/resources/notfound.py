"""Any path no route matches: our 404, with suggestions (errors.NotFound)."""

from __future__ import annotations

from flask import Response, request

from iclr_kg.errors import NotFound
from iclr_kg.web.http import error_response


def not_found(_: Exception) -> Response:
    """Werkzeug's 404 (no route matched) answered as ours."""
    return error_response(NotFound("Not found.", near=request.path))
