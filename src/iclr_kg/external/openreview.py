"""OpenReview's API, read politely: one typed record per submission and per profile.

The official client (`openreview-py`) asks API v1 (ICLR up to 2023) or API v2 (2024 on), and the
years record the same facts in different places (`iclr_years.py` says where, year by year): this
module turns any of them into the same `Submission`, so nothing after it knows which year's format
or which API answered. Every page of
records is cached on disk as it arrives (in our records' JSON), so an interrupted fetch resumes
where it stopped and a rerun asks nothing twice.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NamedTuple

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from iclr_kg.config import Settings
from iclr_kg.errors import ImportFailed
from iclr_kg.external.iclr_years import Api, Decision, Presentation, YearFormat, outcome, v2_presentation
from iclr_kg.external.jsoncache import JsonCache
from iclr_kg.external.session import mount_policy
from iclr_kg.identifiers import PROFILE_FIELDS

PAGE_SIZE = 1000  # the API's largest page
# What a service may send before we stop believing it: pages per listing (ICLR's largest year has
# about 12 pages of 1,000), and the length of an id, a name and a title (real ones are far shorter).
MAX_PAGES = 200
Id = Annotated[str, Field(max_length=200)]
Name = Annotated[str, Field(max_length=500)]
Title = Annotated[str, Field(max_length=5_000)]
PROFILE_BATCH = 500
RETRY_BACKOFF = 1.0  # seconds, doubled for each retry after the first (urllib3's Retry)
Progress = Callable[[int, int], None]  # (done, total)


# --------------------------------------------------------------------------------------------
# The records (a cached page is these records' JSON: tuples are stored as lists)


class Author(NamedTuple):
    """An author as the submission lists them. `email`: the id where the year wrote an e-mail
    address (2013-2020), used only to look up the author's profile; it is never written out."""

    name: Name
    profile: Id | None  # a profile id (~Ian_Gemp1), or None
    email: Name | None = None


class Score(NamedTuple):
    """One official review: its note id, the leading number of its rating and confidence, and
    their texts where the year wrote levels ("8: accept, good paper"): the year's scale."""

    id: str
    rating: int | None
    confidence: int | None
    rating_level: str | None = None
    confidence_level: str | None = None


class Submission(BaseModel):
    id: Id
    number: int | None = None
    title: Title
    authors: list[Author]
    decision: Decision | None = None
    presentation: Presentation | None = None
    reviews: list[Score] = []
    unread_decision: str | None = None  # a decision worded as the year's table does not know
    title_withdrawn: bool = False  # OpenReview replaced the title (and authors) with "NA"
    abstract: str = ""  # the authors' abstract, whitespace collapsed ("" where none or redacted)
    keywords: list[str] = []  # the authors' keywords, in their order, each once


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

    id: Id
    name: Name | None = None
    institution: Name | None = None
    domain: str | None = None
    position: str | None = None
    history: list[Position] = []  # pages cached before this field read as no history
    # Its public personal links, by scheme (identifiers.PROFILE_FIELDS), as written: checked when
    # imported. Never an e-mail address (profiles' e-mails are not read at all).
    links: dict[str, Annotated[str, Field(max_length=500)]] = {}

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
_BY_EMAIL = TypeAdapter(dict[str, Profile])


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


def _score(review: dict[str, Any], field: str) -> Score:
    """A review's score (in the year's field: `rating`, or `recommendation` in 2022 and 2023) and
    confidence."""
    content = review.get("content") or {}
    rating, confidence = _value(content, field), _value(content, "confidence")
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


def _decision_text(note: Any, fmt: YearFormat) -> str | None:
    """The decision as the year wrote it, where the year keeps it (a reply, or the note itself)."""
    if fmt.decision is None:
        return None
    suffix, field = fmt.decision
    contents = [note.content or {}] if not suffix else [r.get("content") or {} for r in _replies(note, suffix)]
    texts = [str(_value(c, field)) for c in contents if _value(c, field)]
    return texts[-1] if texts else None


def _decision(
    note: Any, fmt: YearFormat, listed: Decision | None
) -> tuple[Decision | None, Presentation | None, str | None]:
    """(decision, presentation, unread words) of a submission: its listing's (withdrawn,
    desk-rejected), else where the year records it: API v2 in the note's `venueid` and `venue`,
    API v1 in a reply or the note's content, read by the year table's words."""
    if listed is not None:
        return listed, None, None
    if fmt.api == "v2":
        venueid = str(_value(note.content or {}, "venueid") or "")
        for ending, decision in (("Withdrawn_Submission", "withdrawn"), ("Desk_Rejected_Submission", "desk-rejected"),
                                 ("Rejected_Submission", "rejected")):  # fmt: skip
            if venueid.endswith(ending):
                return decision, None, None
        if venueid != fmt.venue:
            return None, None, None  # still under review
        stated = v2_presentation(str(_value(note.content or {}, "venue") or ""))
        replied = outcome(_decision_text(note, fmt) or "")  # the presentation, where `venue` leaves it out
        return "accepted", stated or (replied[1] if replied else None), None
    text = _decision_text(note, fmt)
    if text is None:
        return None, None, None
    read = outcome(text)
    return (read[0], read[1], None) if read else (None, None, text)


# What OpenReview shows in place of a withdrawn submission's title and authors when they were
# taken down (six ICLR 2019 submissions): the submission, its decision and reviews stay.
REDACTED = "NA"


def _anonymous(name: str, author_id: str) -> bool:
    """Blind submissions that were never de-anonymized list "Anonymous" and a group id
    (ICLR.cc/2019/Conference/Paper123/Authors): no person to import."""
    return name.strip().lower() == "anonymous" or "/" in str(author_id)


def _author_names(value: Any, ids: list[str]) -> list[str]:
    """The authors' names: a list, or (early 2017 notes) one string, split at commas and "and"
    only where that gives as many names as there are ids."""
    if not isinstance(value, str):
        return [str(n) for n in value or []]
    parts = [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", value) if p.strip()]
    return parts if len(parts) == len(ids) else [value.strip()]


def _keywords(value: Any) -> list[str]:
    """The keywords: a list in both APIs, or (some v1 notes) one string separated by commas or
    semicolons; each once, whitespace collapsed, at most 30 (a field pasted full of them)."""
    items = re.split(r"[,;]", value) if isinstance(value, str) else value or []
    words = (" ".join(str(item).split()) for item in items if isinstance(item, (str, int, float)))
    return list(dict.fromkeys(w for w in words if w and w != REDACTED))[:30]


def _author(name: str, author_id: str) -> Author:
    if author_id.startswith("~"):
        return Author(name, author_id)
    return Author(name, None, author_id.strip().lower() if "@" in author_id else None)


def submission_record(note: Any, fmt: YearFormat, listed: Decision | None, reviews: bool) -> Submission:
    """One submission as our record, read where `fmt` says the year keeps each fact."""
    content = note.content or {}
    ids = [str(i) for i in _value(content, "authorids") or []]
    names = _author_names(_value(content, "authors"), ids)
    ids += [""] * (len(names) - len(ids))
    authors = [
        _author(name, i)
        for name, i in zip(names, ids, strict=False)
        if not _anonymous(name, i) and name.strip() != REDACTED
    ]
    title = " ".join(str(_value(content, "title") or "").split())
    abstract = " ".join(str(_value(content, "abstract") or "").split())
    decision, presentation, unread = _decision(note, fmt, listed)
    scores = [_score(r, fmt.reviews[1]) for r in _replies(note, fmt.reviews[0])] if reviews and fmt.reviews else []
    return Submission(
        id=note.id,
        number=note.number,
        title="" if title == REDACTED else title,
        title_withdrawn=title == REDACTED,
        abstract="" if abstract == REDACTED or title == REDACTED else abstract,
        keywords=[] if title == REDACTED else _keywords(_value(content, "keywords")),
        authors=authors,
        decision=decision,
        presentation=presentation,
        reviews=scores,
        unread_decision=unread,
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
        links={
            scheme: str(content[field]).strip()
            for field, scheme in PROFILE_FIELDS.items()
            if isinstance(content.get(field), str) and content[field].strip()
        },
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


def _call(base: str, request: Callable[[], Any]) -> Any:
    """Run one client call; any failure becomes one clear ImportFailed naming the service."""
    import openreview
    import requests

    try:
        return request()
    except ValidationError as exc:  # a record past the lengths we accept (Id, Name, Title)
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise ImportFailed(f"OpenReview at {base} sent a record we refuse: {where}: {error['msg']}") from None
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
    fmt: YearFormat
    cache: Path
    reviews: bool = False
    progress: Progress | None = None
    requests: int = 0
    _client: Any = None
    _last: float = 0.0

    @property
    def api(self) -> Api:
        return self.fmt.api

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

    def submissions(self, limit: int | None = None) -> list[Submission]:
        """Every submission of the venue (at most `limit`), listing by listing, page by page in id order.

        Pages follow the client's own cursor (sort=id, after=<last id>), so page n+1 is asked
        after the last id of page n as cached: a resumed import continues exactly there.
        """
        records: list[Submission] = []
        total = 0
        for listing, listed in self.fmt.listings:
            invitation = f"{self.fmt.venue}/-/{listing}"
            after: str | None = None
            number = 0
            while limit is None or len(records) < limit:
                size = PAGE_SIZE if limit is None else min(PAGE_SIZE, limit - len(records))
                page = Page.model_validate(
                    self._cached(
                        f"{listing.replace('/', '-')}-{number:05d}-{size}.json",
                        lambda: self._fetch_page(invitation, listed, after, size),  # noqa: B023 - called at once
                    )
                )
                if after is not None and page.records and page.records[0].id <= after:
                    raise ImportFailed(
                        f"OpenReview at {self.base} answered the page after {after} of {invitation} with records "
                        "that do not come after it: the listing does not move on, so the import stopped"
                    )
                if number >= MAX_PAGES:
                    raise ImportFailed(
                        f"OpenReview at {self.base} listed more than {MAX_PAGES} pages of {PAGE_SIZE:,} for "
                        f"{invitation}; no ICLR edition has that many submissions, so the import stopped"
                    )
                total += page.count or 0
                records += page.records
                if self.progress:
                    self.progress(len(records), min(total, limit or total))
                if len(page.records) < size:
                    break
                after, number = page.records[-1].id, number + 1
        return records

    def _fetch_page(self, invitation: str, listed: Decision | None, after: str | None, size: int) -> dict[str, Any]:
        query = {"invitation": invitation, "limit": size, "details": "directReplies", "sort": "id"}
        if after is None:
            notes, count = self.client.get_notes(**query, with_count=True)
        else:
            notes, count = self.client.get_notes(**query, after=after), None
        records = [submission_record(n, self.fmt, listed, self.reviews) for n in notes]
        return Page(count=count, records=records).model_dump(mode="json")

    def profiles(self, ids: Iterable[str]) -> dict[str, Profile]:
        """Profile id -> profile, for every id a profile has."""
        return self._batches(
            "profiles", ids, self._fetch_profiles, lambda d: {r.id: r for r in _PROFILES.validate_python(d)}
        )

    def _fetch_profiles(self, ids: list[str]) -> list[dict[str, Any]]:
        return _PROFILES.dump_python([profile_record(p) for p in self.client.search_profiles(ids=ids)], mode="json")

    def profiles_by_email(self, emails: Iterable[str]) -> dict[str, Profile]:
        """E-mail -> the one profile that has it (openreview-py's `search_profiles(emails=...)`);
        an address no profile has, or more than one has, finds nothing."""
        return self._batches("emails", emails, self._fetch_by_email, _BY_EMAIL.validate_python)

    def _batches(
        self,
        name: str,
        keys: Iterable[str],
        fetch: Callable[[list[str]], Any],
        read: Callable[[Any], dict[str, Profile]],
    ) -> dict[str, Profile]:
        """Look `keys` up in batches, each cached as `<name>-<start>-<size>.json` once fetched."""
        wanted = sorted(set(keys))
        found: dict[str, Profile] = {}
        for start in range(0, len(wanted), PROFILE_BATCH):
            batch = wanted[start : start + PROFILE_BATCH]
            found.update(read(self._cached(f"{name}-{start:07d}-{len(batch)}.json", lambda: fetch(batch))))  # noqa: B023
        return found

    def _fetch_by_email(self, emails: list[str]) -> dict[str, Any]:
        answer = self.client.search_profiles(emails=emails) or {}
        unique = {email: found[0] for email, found in answer.items() if len({p.id for p in found}) == 1}
        return _BY_EMAIL.dump_python({e: profile_record(p) for e, p in unique.items()}, mode="json")
