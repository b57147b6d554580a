"""OpenReview's API, read politely: one typed record per submission and per profile.

The official client (`openreview-py`) asks API v1 (ICLR up to 2023) or API v2 (2024 on; detected
from the venue's group) and the two record the same facts in different places: this module turns
either into the same `Submission`, so nothing after it knows which API answered. Every page of
records is cached on disk as it arrives (in our records' JSON), so an interrupted fetch resumes
where it stopped and a rerun asks nothing twice.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, TypeAdapter

from iclr_kg.config import Settings
from iclr_kg.errors import ImportFailed
from iclr_kg.external.jsoncache import JsonCache
from iclr_kg.external.session import mount_policy

VENUE = re.compile(r"^ICLR\.cc/(?P<year>(?:19|20)\d\d)/Conference$")
PAGE_SIZE = 1000  # the API's largest page
PROFILE_BATCH = 500
RETRY_BACKOFF = 1.0  # seconds, doubled for each retry after the first (urllib3's Retry)
Progress = Callable[[int, int], None]  # (done, total)
Api = Literal["v1", "v2"]
Decision = Literal["accepted", "rejected", "withdrawn", "desk-rejected"]
Presentation = Literal["oral", "spotlight", "poster", "talk"]


def venue_year(venue: str) -> int:
    """The year of an ICLR venue id; anything else is refused (it also names the cache folder)."""
    match = VENUE.match(venue)
    if not match:
        raise ImportFailed(f"unsupported venue {venue!r}: expected ICLR.cc/<year>/Conference")
    return int(match["year"])


# --------------------------------------------------------------------------------------------
# The records (a cached page is these records' JSON: tuples are stored as lists)


class Author(NamedTuple):
    name: str
    profile: str | None  # a profile id (~Ian_Gemp1), or None: an email, or no account


class Score(NamedTuple):
    """One official review: its note id, the leading number of its rating and confidence, and
    their texts where the year wrote levels ("8: accept, good paper"): the year's scale."""

    id: str
    rating: int | None
    confidence: int | None
    rating_level: str | None = None
    confidence_level: str | None = None


class Submission(BaseModel):
    id: str
    number: int | None = None
    title: str
    authors: list[Author]
    decision: Decision | None = None
    presentation: Presentation | None = None
    reviews: list[Score] = []


class Position(NamedTuple):
    """One entry of a profile's history: where, as what, from which year to which (None: open)."""

    institution: str
    domain: str | None
    position: str | None
    start: int | None
    end: int | None


class Profile(BaseModel):
    """A profile's id, preferred name, current institution (the latest open-ended entry) and its
    whole history, from which the affiliation in a submission's year is read."""

    id: str
    name: str | None = None
    institution: str | None = None
    domain: str | None = None
    position: str | None = None
    history: list[Position] = []  # pages cached before this field read as no history

    def affiliation(self, year: int) -> tuple[str | None, str | None]:
        """(institution, domain) in `year`: the entry that covers it (the latest begun, if
        several), else the current one."""
        covering = [p for p in self.history if (p.start or 0) <= year <= (p.end or 9999)]
        if covering:
            latest = max(covering, key=lambda p: p.start or 0)
            return latest.institution, latest.domain
        return self.institution, self.domain


class Page(BaseModel):
    count: int | None  # the API's total, asked on the first page only
    records: list[Submission]


_PROFILES = TypeAdapter(list[Profile])


# --------------------------------------------------------------------------------------------
# From the API's notes to records


def _value(content: dict[str, Any], key: str) -> Any:
    """A content field in either API: v1 stores values directly, v2 as {"value": ...}."""
    raw = content.get(key)
    return raw.get("value") if isinstance(raw, dict) else raw


def _leading_int(value: Any) -> int | None:
    """OpenReview writes scores as "8: accept, good paper" (or, in newer venues, as 8)."""
    if isinstance(value, (int, float)):
        return int(value)
    match = re.match(r"\s*(\d+)", str(value or ""))
    return int(match.group(1)) if match else None


def _score(review: dict[str, Any]) -> Score:
    """A review's score: `rating` in most years, `recommendation` in 2022 and 2023; and confidence."""
    content = review.get("content") or {}
    rating = _value(content, "rating") if content.get("rating") is not None else _value(content, "recommendation")
    confidence = _value(content, "confidence")
    return Score(review["id"], _leading_int(rating), _leading_int(confidence), _level(rating), _level(confidence))


def _level(value: Any) -> str | None:
    """A scale level as written ("8: accept, good paper"); None for a bare number (no label to keep)."""
    text = " ".join(value.split()) if isinstance(value, str) else ""
    return text if re.match(r"\d+\s*:", text) else None


def _invitations(reply: dict[str, Any]) -> list[str]:
    return reply.get("invitations") or [reply.get("invitation") or ""]


def _replies(note: Any, suffix: str) -> list[dict[str, Any]]:
    replies = (note.details or {}).get("directReplies") or []
    return [r for r in replies if any(i.endswith(suffix) for i in _invitations(r))]


def _presentation(text: str) -> Presentation | None:
    lowered = text.lower()
    for kind in ("oral", "spotlight", "poster", "talk"):
        if kind in lowered:
            return kind  # type: ignore[return-value]
    return None


# Where a year's decision is written: a Decision reply's `decision` (2018, 2020 on), or, in 2019,
# the area chair's Meta_Review `recommendation` ("Accept (Oral)", "Accept (Poster)", "Reject").
DECISION_REPLIES = (("Decision", "decision"), ("Meta_Review", "recommendation"), ("Acceptance_Decision", "decision"))


def _decision_from_replies(note: Any) -> tuple[Decision | None, Presentation | None]:
    for suffix, field in DECISION_REPLIES:
        for reply in _replies(note, suffix):
            text = str(_value(reply.get("content") or {}, field) or "")
            if text.lower().startswith("accept"):
                return "accepted", _presentation(text)
            if "reject" in text.lower():
                return "rejected", None
    return None, None


def _decision(note: Any, venue: str, api: Api, invitation: str) -> tuple[Decision | None, Presentation | None]:
    """(decision, presentation) of a submission, from where each API version records them:
    v1 in the submission's invitation and its Decision reply, v2 in its `venueid` and `venue`."""
    venueid = str(_value(note.content or {}, "venueid") or "") if api == "v2" else ""
    for marker in (invitation, venueid):
        if marker.endswith("Withdrawn_Submission"):
            return "withdrawn", None
        if marker.endswith("Desk_Rejected_Submission"):
            return "desk-rejected", None
    if venueid.endswith("Rejected_Submission"):
        return "rejected", None
    if venueid == venue:
        stated = _presentation(str(_value(note.content or {}, "venue") or ""))
        return "accepted", stated or _decision_from_replies(note)[1]
    return _decision_from_replies(note)


def _anonymous(name: str, author_id: str) -> bool:
    """Blind submissions that were never de-anonymized list "Anonymous" and a group id
    (ICLR.cc/2019/Conference/Paper123/Authors): no person to import."""
    return name.strip().lower() == "anonymous" or "/" in str(author_id)


def submission_record(note: Any, venue: str, api: Api, invitation: str, reviews: bool) -> Submission:
    content = note.content or {}
    names = list(_value(content, "authors") or [])
    ids = [str(i) for i in _value(content, "authorids") or []]
    ids += [""] * (len(names) - len(ids))
    authors = [
        Author(name, author_id if author_id.startswith("~") else None)
        for name, author_id in zip(names, ids, strict=False)
        if not _anonymous(name, author_id)
    ]
    decision, presentation = _decision(note, venue, api, invitation)
    scores = [_score(r) for r in (_replies(note, "Official_Review") if reviews else [])]
    title = " ".join(str(_value(content, "title") or "").split())
    return Submission(
        id=note.id,
        number=note.number,
        title=title,
        authors=authors,
        decision=decision,
        presentation=presentation,
        reviews=scores,
    )


def profile_record(profile: Any) -> Profile:
    """Profile id, preferred name, and the current institution (the latest open-ended entry)."""
    content = profile.content or {}
    names = content.get("names") or []
    preferred = next((n for n in names if n.get("preferred")), names[0] if names else {})
    name = preferred.get("fullname") or " ".join(
        p for p in (preferred.get("first"), preferred.get("middle"), preferred.get("last")) if p
    )
    history = [h for h in content.get("history") or [] if (h.get("institution") or {}).get("name")]
    current = [h for h in history if not h.get("end")] or history
    latest = max(current, key=lambda h: h.get("start") or 0) if current else None
    institution = (latest or {}).get("institution") or {}
    return Profile(
        id=profile.id,
        name=name or None,
        institution=institution.get("name"),
        domain=institution.get("domain"),
        position=(latest or {}).get("position"),
        history=[
            Position(
                h["institution"]["name"],
                h["institution"].get("domain") or None,
                h.get("position"),
                _year(h.get("start")),
                _year(h.get("end")),
            )
            for h in history
        ],
    )


def _year(value: Any) -> int | None:
    """A history entry's start or end: a year (2018), or nothing."""
    return int(value) if isinstance(value, (int, float)) or str(value or "").isdigit() else None


# --------------------------------------------------------------------------------------------
# The client


def make_client(settings: Settings, api: Api) -> Any:
    """An openreview-py client for `api`, anonymous, with our retry policy (session.py). The
    backoff does not follow the politeness pause: with no pause, a failing page still waits
    1, 2, 4... seconds between tries instead of being asked six times in a second."""
    import openreview

    if api == "v2":
        client = openreview.api.OpenReviewClient(baseurl=settings.openreview_api_v2)
    else:
        client = openreview.Client(baseurl=settings.openreview_api)
    mount_policy(client.session, settings.openreview_retries, RETRY_BACKOFF)
    return client


def detect_api(settings: Settings, venue: str) -> Api:
    """ "v2" if the venue's group on the v2 API has a domain (OpenReview's own test), else "v1"."""
    import openreview

    client = make_client(settings, "v2")

    def domain() -> str | None:
        try:
            return getattr(client.get_group(venue), "domain", None)
        except IndexError:  # an empty list of groups
            return None
        except openreview.OpenReviewException as exc:
            detail = exc.args[0] if exc.args else None
            if isinstance(detail, dict) and (detail.get("name") == "NotFoundError" or detail.get("status") == 404):
                return None  # not a group of the v2 API
            raise

    return "v2" if _call(settings.openreview_api_v2, domain) else "v1"


def _call(base: str, request: Callable[[], Any]) -> Any:
    """Run one client call; any failure becomes one clear ImportFailed naming the service."""
    import openreview
    import requests

    try:
        return request()
    except openreview.OpenReviewException as exc:
        detail = exc.args[0] if exc.args else exc
        message = detail.get("message", detail) if isinstance(detail, dict) else detail
        raise ImportFailed(f"OpenReview at {base} answered with an error: {message}") from exc
    except requests.RequestException as exc:
        raise ImportFailed(f"OpenReview at {base} could not be reached: {exc.__class__.__name__}: {exc}") from exc
    except (IndexError, KeyError, ValueError) as exc:
        raise ImportFailed(f"OpenReview at {base} answered in an unexpected shape: {exc!r}") from exc


@dataclass
class Fetcher:
    """Pages of submissions and batches of profiles, each cached on disk once fetched."""

    settings: Settings
    venue: str
    api: Api
    cache: Path
    reviews: bool = False
    progress: Progress | None = None
    requests: int = 0
    _client: Any = None
    _last: float = 0.0

    @property
    def base(self) -> str:
        return self.settings.openreview_api_v2 if self.api == "v2" else self.settings.openreview_api

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = make_client(self.settings, self.api)
        return self._client

    def _pace(self) -> None:
        wait = self.settings.openreview_pause - (time.monotonic() - self._last)
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()

    def _cached(self, name: str, fetch: Callable[[], Any]) -> Any:
        """A page's JSON from the disk cache, else fetched (paced) and cached whole before use."""
        cache = JsonCache(self.cache)
        data = cache.get(name)
        if data is None:
            self._pace()
            self.requests += 1
            data = _call(self.base, fetch)
            cache.put(name, data)
        return data

    def invitations(self) -> list[str]:
        if self.api == "v2":
            return [f"{self.venue}/-/Submission"]
        return [
            f"{self.venue}/-/{name}"
            for name in ("Blind_Submission", "Withdrawn_Submission", "Desk_Rejected_Submission")
        ]

    def submissions(self, limit: int | None = None) -> list[Submission]:
        """Every submission of the venue (at most `limit`), page by page in id order.

        Pages follow the client's own cursor (sort=id, after=<last id>), so page n+1 is asked
        after the last id of page n as cached: a resumed import continues exactly there.
        """
        records: list[Submission] = []
        total = 0
        for invitation in self.invitations():
            after: str | None = None
            number = 0
            while limit is None or len(records) < limit:
                size = PAGE_SIZE if limit is None else min(PAGE_SIZE, limit - len(records))
                page = Page.model_validate(
                    self._cached(
                        f"{invitation.rsplit('/', 1)[1]}-{number:05d}-{size}.json",
                        lambda: self._fetch_page(invitation, after, size),  # noqa: B023 - called at once
                    )
                )
                total += page.count or 0
                records += page.records
                if self.progress:
                    self.progress(len(records), min(total, limit or total))
                if len(page.records) < size:
                    break
                after, number = page.records[-1].id, number + 1
        return records

    def _fetch_page(self, invitation: str, after: str | None, size: int) -> dict[str, Any]:
        query = {"invitation": invitation, "limit": size, "details": "directReplies", "sort": "id"}
        if after is None:
            notes, count = self.client.get_notes(**query, with_count=True)
        else:
            notes, count = self.client.get_notes(**query, after=after), None
        records = [submission_record(n, self.venue, self.api, invitation, self.reviews) for n in notes]
        return Page(count=count, records=records).model_dump(mode="json")

    def profiles(self, ids: Iterable[str]) -> dict[str, Profile]:
        wanted = sorted(set(ids))
        found: dict[str, Profile] = {}
        for start in range(0, len(wanted), PROFILE_BATCH):
            batch = wanted[start : start + PROFILE_BATCH]
            name = f"profiles-{start:07d}-{len(batch)}.json"
            records = _PROFILES.validate_python(self._cached(name, lambda: self._fetch_profiles(batch)))  # noqa: B023
            found.update((r.id, r) for r in records)
        return found

    def _fetch_profiles(self, ids: list[str]) -> list[dict[str, Any]]:
        return _PROFILES.dump_python([profile_record(p) for p in self.client.search_profiles(ids=ids)], mode="json")
