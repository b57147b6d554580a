"""Static files served as a browser wants them: versioned URLs cached for a year, and text
compressed (Flask-Compress: pages, JSON and JavaScript; never SPARQL results, which stream).

Whether an answer is gzip'd is decided in one place, `chosen_encoding`, from what the client's
Accept-Encoding means (`*` offers gzip, `gzip;q=0` refuses it): Flask-Compress compresses only
where it says gzip, the Data page's exports stream gzip'd where it does, and the response memo
(web/cache.py) keys each kept response on it.

Every static URL the app writes carries `?v=` the hash of the static files' contents (Flask's
url_defaults adds it to `url_for('static', ...)`; the workbench appends it to the libraries it
loads). A request with the current version is answered `Cache-Control: public, max-age=31536000,
immutable`: a new release changes the version, so no browser keeps a stale file. Without it (an
old link), the file is served to be revalidated, as before.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from flask import Flask, Response, request
from flask_compress import Compress

YEAR = 365 * 24 * 3600
COMPRESSED = [
    "text/html",
    "text/css",
    "text/javascript",
    "application/javascript",
    "application/json",
    "application/ld+json",
    "image/svg+xml",
]


ENCODING = "gzip"  # the one content coding we send


@functools.lru_cache(maxsize=128)
def chosen_encoding(accept_encoding: str) -> str | None:
    """The content coding an answer to this Accept-Encoding header gets, "gzip" or None (the
    bytes as they are): gzip where the client names it, or `*`, with a weight above zero and at
    least that of `identity` where it names that too (RFC 9110 12.5.3; Flask-Compress's own
    choice wherever the two could differ, so its compression is called only where this says gzip).
    The same few headers come again and again: each is worked out once per process."""
    weights: dict[str, float] = {}
    for part in accept_encoding.lower().split(","):
        coding, _, params = part.partition(";")
        name, _, value = params.strip().partition("=")
        try:
            weight = float(value) if name.strip() == "q" else 1.0
        except ValueError:
            weight = 1.0
        weights.setdefault(coding.strip(), weight)
    offered = weights.get(ENCODING, weights.get("*", 0.0) if "identity" not in weights else 0.0)
    return ENCODING if offered > 0 and offered >= weights.get("identity", 0.0) else None


def static_version(folder: Path) -> str:
    """A short hash of every static file's path and content: the version in their URLs."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


class _StaticCache:
    """Flask-Compress's cache of compressed bodies, kept for static files only (their content
    is fixed by their version), by path: whatever the query string, one entry per file, and at
    most `limit` bytes in all (a page's key is None and is never kept)."""

    def __init__(self, limit: int = 64 * 2**20) -> None:
        self.bodies: dict[str, bytes] = {}
        self.limit = limit

    def get(self, key: str) -> bytes | None:
        return self.bodies.get(key)

    def set(self, key: str, value: bytes) -> None:
        if key.endswith(";None") or key in self.bodies:
            return
        if sum(map(len, self.bodies.values())) + len(value) <= self.limit:
            self.bodies[key] = value


def install(app: Flask) -> None:
    version = static_version(Path(app.static_folder or "static"))
    app.config.update(
        COMPRESS_MIMETYPES=COMPRESSED,
        COMPRESS_ALGORITHM=[ENCODING],
        COMPRESS_STREAMS=False,  # results and exports stream: compressing them would hold them back
        COMPRESS_MIN_SIZE=1024,
        COMPRESS_REGISTER=False,  # called below, for what it may compress only: results vary on nothing new
    )
    cache = _StaticCache()
    app.config["COMPRESS_CACHE_BACKEND"] = lambda: cache
    # by path: `?r=1`, `?r=2`... name the same file (keyed by the whole URL, 500 of them took 83 MiB)
    app.config["COMPRESS_CACHE_KEY"] = lambda req: req.path if req.endpoint == "static" else None
    app.jinja_env.globals["static_version"] = version

    @app.url_defaults
    def versioned(endpoint: str, values: dict[str, Any]) -> None:
        if endpoint == "static":
            values.setdefault("v", version)

    compress = Compress(app)

    @app.after_request
    def cache_and_compress(response: Response) -> Response:
        if request.endpoint == "static" and response.status_code == 200:
            if request.args.get("v") == version:
                response.headers["Cache-Control"] = f"public, max-age={YEAR}, immutable"
            if response.mimetype in COMPRESSED and chosen_encoding(request.headers.get("Accept-Encoding", "")):
                response.direct_passthrough = False  # a file, read whole so that it can be compressed
                opened, body = response.response, response.get_data()
                if hasattr(opened, "close"):
                    opened.close()
                response.set_data(body)
        if response.mimetype not in COMPRESSED:
            return response
        if chosen_encoding(request.headers.get("Accept-Encoding", "")) is None:
            response.vary.add("Accept-Encoding")  # what Flask-Compress says of the answers it leaves as they are
            return response
        return compress.after_request(response)
