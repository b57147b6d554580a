"""Every ICLR edition on OpenReview, as data: where each year keeps its submissions, decisions and
review scores, and what a year's words mean.

ICLR's venues on OpenReview differ by year (openreview-py's venue scripts, the notes of the real
venues, and public crawlers agree on the following). One `YearFormat` per year says where to read;
the importer (`openreview.py`) has no year in its code, only this table. A year that cannot be
imported says why, and docs/openreview.md's table of supported years is checked against this one.

Decisions are read only from words this table knows ("Accept (Oral)", "Accept: notable-top-5%",
"conferencePoster-iclr2013-workshop", ...): a decision worded otherwise is left unknown and
counted by the import, never guessed from its wording.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from iclr_kg import terms
from iclr_kg.errors import ImportFailed

Api = Literal["v1", "v2"]
# A decision and a presentation type by the ontology's notation ("workshop", "notable-top-5%"): the
# tables below are checked against the ontology when this module loads (`_check_notations`).
Decision = str
Presentation = str
Outcome = tuple[Decision, Presentation | None]

FIRST_YEAR = 2013


@dataclass(frozen=True)
class YearFormat:
    """Where one ICLR year's facts are on OpenReview.

    `listings`: the submission invitations (name after `/-/`) and the decision each implies
    (withdrawn, desk-rejected) or None (decided elsewhere). `decision`: where the decision is,
    a reply's (invitation ending, field), or ("", field) for the submission's own content; None:
    the year published none (API v2 decides by the note's `venueid`: there the reply only names
    the presentation where `venue` does not). `reviews`: the ending of the official reviews' invitation and the
    field holding the score; None: not imported (`holds` says why). `author_ids`: what the
    `authorids` are, profile ids or e-mail addresses (looked up as profiles, never stored).
    """

    year: int
    venue: str  # the conference's group id, as OpenReview spells it
    api: Api
    listings: tuple[tuple[str, Decision | None], ...]
    decision: tuple[str, str] | None
    reviews: tuple[str, str] | None
    author_ids: Literal["e-mail", "e-mail or profile", "profile"]
    holds: str  # for docs/openreview.md: what an import of this year has

    @property
    def key(self) -> str:
        """`openreview-iclr-2021`: the import's folder, source key and named graph."""
        return f"openreview-iclr-{self.year}"


_V1_LISTINGS: tuple[tuple[str, Decision | None], ...] = (
    ("Blind_Submission", None),
    ("Withdrawn_Submission", "withdrawn"),
    ("Desk_Rejected_Submission", "desk-rejected"),
)


def _v1(year: int, decision: tuple[str, str], score: str, author_ids: str, holds: str) -> YearFormat:
    return YearFormat(
        year,
        f"ICLR.cc/{year}/Conference",
        "v1",
        _V1_LISTINGS,
        decision,
        ("Official_Review", score),
        author_ids,  # type: ignore[arg-type]
        holds,
    )


YEARS: dict[int, YearFormat] = {
    f.year: f
    for f in (
        YearFormat(
            2013,
            "ICLR.cc/2013/conference",
            "v1",
            (("submission", None),),
            ("", "decision"),
            None,
            "e-mail",
            "submissions with decisions from the submission itself (conference oral or poster, "
            "moved to the workshop track, rejected); no review scores (the early forms have none to read)",
        ),
        YearFormat(
            2014,
            "ICLR.cc/2014/conference",
            "v1",
            (("submission", None),),
            None,
            None,
            "e-mail",
            "submissions only: OpenReview records no decisions for 2014, so no accepted count is stated; "
            "no review scores",
        ),
        YearFormat(
            2017,
            "ICLR.cc/2017/conference",
            "v1",
            (("submission", None),),
            ("acceptance", "decision"),
            ("official/review", "rating"),
            "e-mail or profile",
            "submissions, decisions (a reply per paper, `acceptance`; 'Invite to Workshop Track' is kept "
            "as such), ratings 1-10 and confidences 1-5",
        ),
        _v1(
            2018,
            ("Acceptance_Decision", "decision"),
            "rating",
            "e-mail or profile",
            "submissions, withdrawals, decisions (`Acceptance_Decision`, with 'Invite to Workshop Track'), "
            "ratings 1-10 and confidences 1-5",
        ),
        _v1(
            2019,
            ("Meta_Review", "recommendation"),
            "rating",
            "e-mail or profile",
            "submissions, withdrawals, decisions (the area chair's meta-review `recommendation`), "
            "ratings 1-10 and confidences 1-5",
        ),
        _v1(
            2020,
            ("Decision", "decision"),
            "rating",
            "e-mail or profile",
            "submissions, withdrawals, desk rejections, decisions (talks are 2020's orals), ratings on "
            "the 1/3/6/8 scale; reviews have no confidence",
        ),
        _v1(
            2021,
            ("Decision", "decision"),
            "rating",
            "profile",
            "submissions, withdrawals, desk rejections, decisions, ratings 1-10 and confidences 1-5",
        ),
        _v1(
            2022,
            ("Decision", "decision"),
            "recommendation",
            "profile",
            "as 2021, with each review's score in `recommendation` (1/3/5/6/8/10)",
        ),
        _v1(
            2023,
            ("Decision", "decision"),
            "recommendation",
            "profile",
            "as 2022; accepted papers in tiers notable-top-5%, notable-top-25% and poster (no orals or spotlights)",
        ),
    )
}

# Years ICLR held that cannot be imported, and why.
NOT_ON_OPENREVIEW = {
    2015: "ICLR 2015 is not on OpenReview: its submissions were reviewed on another site",
    2016: "ICLR 2016's conference track is not on OpenReview (only its workshop track is)",
}

# API v2 (2024 on): one listing, decisions in the submission's `venueid` and `venue`.
V2_HOLDS = (
    "submissions, withdrawals, desk rejections, decisions (the submission's `venue`: oral, spotlight, "
    "poster), ratings and confidences; a venue still under review states no accepted count"
)


def year_format(venue_or_year: str | int) -> YearFormat:
    """The format of an ICLR venue, given as its group id (any case) or its year; a year after the
    table is read as API v2, as every ICLR since 2024 is."""
    text = str(venue_or_year).strip()
    match = re.fullmatch(r"(?:ICLR\.cc/)?(?P<year>(?:19|20)\d\d)(?:/Conference)?", text, re.IGNORECASE)
    if not match:
        raise ImportFailed(f"unsupported venue {text!r}: expected an ICLR year (2021) or ICLR.cc/<year>/Conference")
    year = int(match["year"])
    if year in YEARS:
        return YEARS[year]
    if year in NOT_ON_OPENREVIEW:
        raise ImportFailed(f"{NOT_ON_OPENREVIEW[year]}; nothing to import")
    if year < FIRST_YEAR:
        raise ImportFailed(f"unsupported venue {text!r}: ICLR began in {FIRST_YEAR}")
    return YearFormat(
        year, f"ICLR.cc/{year}/Conference", "v2", (("Submission", None),), ("Decision", "decision"),
        ("Official_Review", "rating"),
        "profile", V2_HOLDS,
    )  # fmt: skip


def supported_years(until: int) -> list[YearFormat]:
    """Every importable year from the first to `until` (the current year, for `--venue all`)."""
    return [year_format(y) for y in range(FIRST_YEAR, until + 1) if y not in NOT_ON_OPENREVIEW]


# --------------------------------------------------------------------------------------------
# What a year's words mean

# Decision texts as ICLR wrote them, lower-cased, to (decision, presentation).
OUTCOMES: dict[str, Outcome] = {
    "accept (oral)": ("accepted", "oral"),
    "accept (talk)": ("accepted", "talk"),  # 2020's orals
    "accept (spotlight)": ("accepted", "spotlight"),
    "accept (poster)": ("accepted", "poster"),
    "accept: notable-top-5%": ("accepted", "notable-top-5%"),  # 2023
    "accept: notable-top-25%": ("accepted", "notable-top-25%"),
    "accept: poster": ("accepted", "poster"),
    "reject": ("rejected", None),
    "invite to workshop track": ("workshop", None),  # 2017, 2018
    "conferenceoral-iclr2013-conference": ("accepted", "oral"),  # 2013, in the submission's content
    "conferenceposter-iclr2013-conference": ("accepted", "poster"),
    "conferenceoral-iclr2013-workshop": ("workshop", None),
    "conferenceposter-iclr2013-workshop": ("workshop", None),
}

# API v2's `venue` of an accepted paper: "ICLR 2024 oral", "ICLR 2025 Spotlight", "ICLR 2024 poster".
V2_VENUE = re.compile(r"^ICLR \d{4} (?P<kind>oral|spotlight|poster)$", re.IGNORECASE)


def outcome(text: str) -> Outcome | None:
    """(decision, presentation) for a decision as the year wrote it; None for words it never used."""
    return OUTCOMES.get(" ".join(text.split()).lower())


def v2_presentation(venue: str) -> Presentation | None:
    match = V2_VENUE.match(" ".join(venue.split()))
    return match["kind"].lower() if match else None


def _check_notations() -> None:
    """Every decision and presentation type these tables name is one the ontology has: a value
    the ontology lacks would fail every build of an import, so it fails here, at once."""
    known = terms.packaged()
    decisions, presentations = known.enumeration("Decision"), known.enumeration("PresentationType")
    named = {d for d, _ in OUTCOMES.values()} | {d for f in YEARS.values() for _, d in f.listings if d}
    shown = {p for _, p in OUTCOMES.values() if p} | {"oral", "spotlight", "poster"}  # V2_VENUE's words
    if named - decisions.keys() or shown - presentations.keys():
        raise ImportError(
            f"iclr_years names values the ontology lacks: {sorted((named - decisions.keys()) | (shown - presentations.keys()))}"
        )


_check_notations()
