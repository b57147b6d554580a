"""What a client may keep, decided in one place: whether an answer may be kept at all
(`keepable`), each representation's strong ETag, and the 304 a conditional request for it gets.

An answer may be kept, by the result cache, the response memo or a client, when its query's
text says none of VOLATILE: no function whose value changes between evaluations, no call to
another service. The read request (web/readrequest.py) asks this once, for the memo, the lean
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

from iclr_kg.sparql.querytext import says

# Words after which an answer may change: functions whose value changes between evaluations,
# and calls to other services.
VOLATILE = ("SERVICE", "NOW", "RAND", "UUID", "STRUUID", "BNODE")


def keepable(text: str) -> bool:
    """Whether the answer to the query `text` may be kept and given an ETag: no word of
    VOLATILE in it (querytext.says: as the engine reads the text, comments aside)."""
    return not says(text, *VOLATILE)


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
