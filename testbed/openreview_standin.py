"""A local stand-in for OpenReview's API (v1 or v2), for tests and benchmarks: no internet here.

It answers the endpoints `openreview-py` calls for an import, in OpenReview's JSON shapes:
`GET /notes` (invitation, limit, offset or sort=id with the `after` cursor, details=directReplies;
`count`), `POST /profiles/search` ({"ids": [...]}, or {"emails": [...]}: each profile found
carries the `email` asked, as OpenReview answers) and `GET /groups?id=` (v2 venues carry `domain`).
Venues are made from compact paper descriptions by `venue_notes`, each year in the format
OpenReview used that year (2013's decision in the note, 2017's lower-case venue and per-paper
`acceptance` replies, 2018's `Acceptance_Decision`, 2019's meta-review, 2022's `recommendation`
scores, 2023's notable tiers, API v2 from 2024), so tests write their own fixtures. `fail_after` makes every request after the first N answer 500: an outage mid-import.

    python bench/synth.py --openreview 10000 --out venue.json
    python -m testbed.openreview_standin --venue-file venue.json --port 8765   # as bench/openreview_import.py does
"""

from __future__ import annotations

import argparse
import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DECISIONS_V1 = {
    "oral": "Accept (Oral)",
    "spotlight": "Accept (Spotlight)",
    "poster": "Accept (Poster)",
    "reject": "Reject",
}
RATING_V1 = {
    1: "1: Trivial or wrong",
    3: "3: Clear rejection",
    5: "5: Marginally below acceptance threshold",
    6: "6: Marginally above acceptance threshold",
    8: "8: Top 50% of accepted papers, clear accept",
    10: "10: Top 5% of accepted papers, seminal paper",
}


@dataclass
class Paper:
    """What a test says about one submission; `outcome`: oral, spotlight, poster, reject, withdrawn, desk-rejected."""

    id: str
    title: str
    authors: list[tuple[str, str | None]]  # (name, profile id, an e-mail address, or None)
    outcome: str  # also `workshop` (2013, 2017, 2018) and `pending` (a v2 venue under review)
    reviews: list[tuple[str, int, int]] = field(default_factory=list)  # (review note id, rating, confidence)
    authors_as_text: bool = False  # early 2017 notes: `authors` is one string
    abstract: str = "An abstract."
    keywords: list[str] | str = field(
        default_factory=lambda: ["learning"]
    )  # a str: one comma-separated text (some v1 notes)


def _rating_text(rating: int) -> str:
    return RATING_V1.get(rating, f"{rating}: Rating {rating}")


def venue_id(year: int) -> str:
    """The conference's group id as OpenReview spells it (2013, 2014 and 2017 in lower case)."""
    return f"ICLR.cc/{year}/{'conference' if year in (2013, 2014, 2017) else 'Conference'}"


def venue_notes(api: str, venue: str, papers: list[Paper]) -> dict[str, list[dict[str, Any]]]:
    """Invitation id -> notes with their directReplies, as OpenReview stores the venue."""
    out: dict[str, list[dict[str, Any]]] = {}
    for number, paper in enumerate(papers, start=1):
        invitation, note = (_v2 if api == "v2" else _v1)(venue, number, paper)
        out.setdefault(invitation, []).append(note)
    return out


def _author_id(venue: str, number: int, name: str, profile: str | None) -> str:
    """A profile id, else an email; a never de-anonymized author is the paper's authors group."""
    if name == "Anonymous":
        return f"{venue}/Paper{number}/Authors"
    return profile or f"{name.split()[0].lower()}@example.org"  # a profile id, or an e-mail address


# How each year's v1 venue writes decisions and review scores (openreview-py's venue scripts and the
# notes of the real venues): 2019 puts the decision in the area chair's Meta_Review
# `recommendation`; 2020 calls orals talks and has no review confidence; 2022 and 2023 score
# reviews in `recommendation`; 2023 names its accept tiers notable-top-5% and notable-top-25%.
DECISIONS_2020 = {**DECISIONS_V1, "oral": "Accept (Talk)"}
DECISIONS_2013 = {  # in the submission's own `decision`
    "oral": "conferenceOral-iclr2013-conference",
    "poster": "conferencePoster-iclr2013-conference",
    "workshop": "conferencePoster-iclr2013-workshop",
    "reject": "reject",
}
DECISIONS_2017 = {**DECISIONS_V1, "workshop": "Invite to Workshop Track"}  # and 2018
DECISIONS_2023 = {
    "oral": "Accept: notable-top-5%",
    "spotlight": "Accept: notable-top-25%",
    "poster": "Accept: poster",
    "reject": "Reject",
}


def _review_content(year: int, rating: int, confidence: int) -> dict[str, Any]:
    if year == 2020:
        return {
            "rating": f"{rating}: {'Accept' if rating >= 6 else 'Reject'}",
            "experience_assessment": "I have read many papers in this area.",
        }
    if year in (2022, 2023):
        return {"recommendation": f"{rating}: accept, good paper", "confidence": f"{confidence}: You are confident"}
    return {"rating": _rating_text(rating), "confidence": f"{confidence}: The reviewer is fairly confident"}


def _decision_reply(venue: str, year: int, number: int, paper: Paper) -> dict[str, Any] | None:
    table = {2017: DECISIONS_2017, 2018: DECISIONS_2017, 2020: DECISIONS_2020, 2023: DECISIONS_2023}.get(
        year, DECISIONS_V1
    )
    if paper.outcome not in table or year in (2013, 2014):
        return None
    reply = {"id": f"D{paper.id}"[:12], "forum": paper.id, "replyto": paper.id}
    if year in (2017, 2018):
        invitation = f"{venue}/-/paper{number}/acceptance" if year == 2017 else f"{venue}/-/Acceptance_Decision"
        return {
            **reply,
            "invitation": invitation,
            "content": {"title": "Final decision", "decision": table[paper.outcome]},
        }
    if year == 2019:
        return {
            **reply,
            "invitation": f"{venue}/-/Paper{number}/Meta_Review",
            "content": {
                "metareview": "The reviewers agree.",
                "recommendation": table[paper.outcome],
                "confidence": "5: The area chair is absolutely certain",
            },
        }
    return {
        **reply,
        "invitation": f"{venue}/Paper{number}/-/Decision",
        "content": {"title": "Final Decision", "decision": table[paper.outcome]},
    }


def _review_invitation(venue: str, year: int, number: int) -> str:
    if year == 2017:
        return f"{venue}/-/paper{number}/official/review"
    return f"{venue}/-/Paper{number}/Official_Review" if year <= 2019 else f"{venue}/Paper{number}/-/Official_Review"


def _v1(venue: str, number: int, paper: Paper) -> tuple[str, dict[str, Any]]:
    year = int(venue.split("/")[1])
    kind = {"withdrawn": "Withdrawn_Submission", "desk-rejected": "Desk_Rejected_Submission"}.get(
        paper.outcome, "Blind_Submission"
    )
    if year in (2013, 2014, 2017):  # one listing, named in lower case
        kind = "submission"
    replies = [
        {
            "id": rid,
            "forum": paper.id,
            "replyto": paper.id,
            "invitation": _review_invitation(venue, year, number),
            "content": _review_content(year, r, c),
        }
        for rid, r, c in paper.reviews
        if year not in (2013, 2014)
    ]
    decision = _decision_reply(venue, year, number, paper)
    if decision is not None:
        replies.append(decision)
    note = {
        "id": paper.id,
        "forum": paper.id,
        "number": number,
        "invitation": f"{venue}/-/{kind}",
        "cdate": 1601000000000 + number,
        "content": {
            "title": paper.title,
            "authors": ", ".join(a for a, _ in paper.authors)
            if paper.authors_as_text
            else [a for a, _ in paper.authors],
            "authorids": [_author_id(venue, number, a, p) for a, p in paper.authors],
            "abstract": paper.abstract,
            "keywords": paper.keywords,
        },
        "details": {"directReplies": replies},
    }
    if year == 2013 and paper.outcome in DECISIONS_2013:
        note["content"]["decision"] = DECISIONS_2013[paper.outcome]
    return f"{venue}/-/{kind}", note


def _v2(venue: str, number: int, paper: Paper) -> tuple[str, dict[str, Any]]:
    year = venue.split("/")[1]
    venueid, label = {
        "withdrawn": (f"{venue}/Withdrawn_Submission", f"ICLR {year} Conference Withdrawn Submission"),
        "desk-rejected": (f"{venue}/Desk_Rejected_Submission", f"ICLR {year} Conference Desk Rejected Submission"),
        "reject": (f"{venue}/Rejected_Submission", f"Submitted to ICLR {year}"),
        "pending": (f"{venue}/Submission", f"Submitted to ICLR {year}"),  # still under review
    }.get(paper.outcome, (venue, f"ICLR {year} {paper.outcome}"))
    replies = [
        {
            "id": rid,
            "forum": paper.id,
            "replyto": paper.id,
            "invitations": [f"{venue}/Submission{number}/-/Official_Review"],
            # 2024 wrote levels ("8: accept, good paper"); later years bare numbers
            "content": {
                "rating": {"value": f"{r}: accept, good paper" if year == "2024" else r},
                "confidence": {"value": f"{c}: You are confident" if year == "2024" else c},
            },
        }
        for rid, r, c in paper.reviews
    ]
    if paper.outcome in DECISIONS_V1:
        decision = (
            DECISIONS_V1[paper.outcome]
            .replace("Oral", "oral")
            .replace("Spotlight", "spotlight")
            .replace("Poster", "poster")
        )
        replies.append(
            {
                "id": f"D{paper.id}"[:12],
                "forum": paper.id,
                "replyto": paper.id,
                "invitations": [f"{venue}/Submission{number}/-/Decision"],
                "content": {"decision": {"value": decision}},
            }
        )
    note = {
        "id": paper.id,
        "forum": paper.id,
        "number": number,
        "domain": venue,
        "invitations": [f"{venue}/-/Submission", f"{venue}/-/Post_Submission"],
        "content": {
            "title": {"value": paper.title},
            "authors": {"value": [a for a, _ in paper.authors]},
            "authorids": {"value": [_author_id(venue, number, a, p) for a, p in paper.authors]},
            "abstract": {"value": paper.abstract},
            "keywords": {"value": paper.keywords},
            "venue": {"value": label},
            "venueid": {"value": venueid},
        },
        "details": {"directReplies": replies},
    }
    return f"{venue}/-/Submission", note


def profile(
    profile_id: str,
    name: str,
    institution: str | None,
    domain: str | None = None,
    position: str = "Researcher",
    links: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A profile as OpenReview's API returns it; `links`: its personal links by field (`orcid`,
    `dblp`, `semanticScholar`, `gscholar`, `homepage`: URLs as people paste them), and its e-mail
    addresses, which the importer must never read."""
    history = (
        [
            {
                "position": position,
                "start": 2018,
                "end": None,
                "institution": {"name": institution, "domain": domain or ""},
            }
        ]
        if institution
        else []
    )
    return {
        "id": profile_id,
        "active": True,
        "content": {
            "names": [{"fullname": name, "username": profile_id, "preferred": True}],
            "history": history,
            "emails": [f"{profile_id.strip('~').lower()}@example.org"],
            "preferredEmail": f"{profile_id.strip('~').lower()}@example.org",
            **(links or {}),
        },
    }


class StandIn(ThreadingHTTPServer):
    """The server: `notes` by invitation, `profiles` by id, `groups` by id; counts what it is asked."""

    daemon_threads = True

    def __init__(
        self,
        notes: dict[str, list[dict[str, Any]]],
        profiles: dict[str, dict[str, Any]],
        groups: dict[str, dict[str, Any]] | None = None,
        port: int = 0,
        emails: dict[str, str] | None = None,
    ):
        super().__init__(("127.0.0.1", port), _Handler)
        self.notes, self.profiles, self.groups = notes, profiles, groups or {}
        self.emails = emails or {}  # e-mail address -> profile id (confirmed on that profile)
        self.requests: list[str] = []
        self.fail_after: int | None = None
        # A hostile service: `ignore_cursor` answers every page from the start, whatever `after`
        # says; `endless` makes up a full page of new notes after any cursor, for ever.
        self.ignore_cursor = False
        self.endless = False
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> StandIn:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: StandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _failing(self) -> bool:
        with self.server.lock:
            self.server.requests.append(f"{self.command} {self.path}")
            failing = self.server.fail_after is not None and len(self.server.requests) > self.server.fail_after
        if failing:
            self._send(500, {"name": "Error", "message": "Internal server error (stand-in outage)"})
        return failing

    def do_GET(self) -> None:
        if self._failing():
            return
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        if url.path == "/notes":
            notes = self.server.notes.get(query.get("invitation", ""), [])
            if query.get("sort", "").startswith("id"):  # the client's cursor paging: sort=id, after=<last id>
                notes = sorted(notes, key=lambda n: n["id"])
            offset, limit = int(query.get("offset", 0)), int(query.get("limit", 1000))
            if self.server.endless and notes:
                notes = [{**notes[0], "id": f"{query.get('after', '')}z{i:04d}"} for i in range(limit)]
            elif "after" in query and not self.server.ignore_cursor:
                notes = [n for n in notes if n["id"] > query["after"]]
            page = notes[offset : offset + limit]
            if "directReplies" not in query.get("details", ""):
                page = [{k: v for k, v in n.items() if k != "details"} for n in page]
            self._send(200, {"notes": page, "count": len(notes)})
        elif url.path == "/groups":
            group = self.server.groups.get(query.get("id", ""))
            if group is None:
                self._send(
                    404, {"name": "NotFoundError", "message": f"Group Not Found: {query.get('id')}", "status": 404}
                )
            else:
                self._send(200, {"groups": [group]})
        else:
            self._send(404, {"name": "NotFoundError", "message": "Not Found", "status": 404})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self._failing():
            return
        if urllib.parse.urlsplit(self.path).path == "/profiles/search":
            if "emails" in body:  # one entry per address found, naming it (openreview-py groups them by it)
                asked = [(e, self.server.emails.get(e)) for e in body["emails"]]
                found = [{**self.server.profiles[p], "email": e} for e, p in asked if p in self.server.profiles]
            else:
                found = [self.server.profiles[i] for i in body.get("ids", []) if i in self.server.profiles]
            self._send(200, {"profiles": found, "count": len(found)})
        else:
            self._send(404, {"name": "NotFoundError", "message": "Not Found", "status": 404})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--venue-file", type=Path, required=True, help="JSON {notes, profiles, groups} (bench/synth.py --openreview)"
    )
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    venue = json.loads(args.venue_file.read_text(encoding="utf-8"))
    server = StandIn(venue["notes"], venue["profiles"], venue.get("groups"), port=args.port)
    print(f"OpenReview stand-in on {server.url}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
