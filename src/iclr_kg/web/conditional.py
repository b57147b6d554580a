"""What a client may keep: each representation's strong ETag, and the 304 a conditional request
for it gets. Whether an answer may be kept at all is the query text's (`querytext.keepable`, one
answer for the build's kept answers, the result cache, the response memo and clients): its text
says no word after which an answer may change. The read request (web/readrequest.py) asks this once, for the memo, the lean
path and the Flask view alike; the saved queries' kept answers and pages ask it too.

An answer's ETag names its bytes: a result's is the hash of its media type and body (so a repeat
matches however the answer was made: from the result cache or evaluated again, in this
generation or a later one with the same answer); a saved query's kept answer, which is not read
to be sent, is named by its file (a generation's own) and format; a download for a spreadsheet
is another representation of either, with its own tag. Only answers with an ETag are kept whole
by the result cache and web/cache.ResponseMemo, and the memo keeps none it would have to read
past its size limit to decide (a streamed answer carries no Content-Length).
"""

from __future__ import annotations

import hashlib

from flask import Response, request


def strong_etag(*parts: str | bytes) -> str:
    """A strong ETag for a representation made of `parts` (each hashed after its length, so no
    part can pass for two)."""
    digest = hashlib.blake2b(digest_size=12)
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(b"%d:" % len(data))
        digest.update(data)
    return f'"{digest.hexdigest()}"'


def content_etag(body: bytes, media_type: str) -> str:
    """The ETag of a result's bytes in a media type."""
    return strong_etag(media_type, body)


def kept_etag(path: str, format_name: str) -> str:
    """The ETag of a kept answer file (one generation's) sent in a format."""
    return strong_etag(path, format_name)


def variant_etag(etag: str, variant: str) -> str:
    """The ETag of another representation of the same answer (`sheet`: for a spreadsheet)."""
    return f'{etag[:-1]}-{variant}"'


def not_modified(etag: str) -> Response | None:
    """304 if the request's If-None-Match holds `etag` (the client has these bytes), else None."""
    if request.if_none_match.contains(etag.strip('"')):
        return Response(status=304, headers={"ETag": etag, "Vary": "Accept"})
    return None
