"""One HTTP policy for every outside service we call (OpenReview, Wikidata): requests with urllib3.

A service that is busy (429) or briefly down (5xx, a refused or dropped connection) is asked again
after a backoff that doubles, and never sooner than its `Retry-After`; a stalled connection fails
after a timeout instead of hanging the command. The policy lives in one adapter, mounted on our
own session (Wikidata) or on a client library's (openreview-py keeps its `requests` session).
"""

from __future__ import annotations

from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from iclr_kg import __version__

REQUEST_TIMEOUT = 60.0
RETRY_STATUSES = (429, 500, 502, 503, 504)
USER_AGENT = f"iclr-kg/{__version__} (https://w3id.org/iclr-kg; scholarly knowledge graph; python-requests)"


class _TimeoutAdapter(HTTPAdapter):
    """Retries by `Retry`, and a default timeout for callers (openreview-py) that set none."""

    def __init__(self, timeout: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.timeout = timeout

    def send(self, request, **kwargs):
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        return super().send(request, **kwargs)


def retry_policy(retries: int, backoff: float) -> Retry:
    """`retries` more attempts on 429, 5xx and connection errors, waiting `backoff` × 2ⁿ (at most
    two minutes) or the service's Retry-After if longer; the last answer is returned, not raised,
    so the caller can say what the service said."""
    return Retry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=max(backoff, 0.0),
        backoff_max=120,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=None,  # OpenReview's profile search is a POST that only reads
        raise_on_status=False,
        respect_retry_after_header=True,
    )


def mount_policy(session: requests.Session, retries: int, backoff: float, timeout: float = REQUEST_TIMEOUT) -> None:
    """Give `session` our retry policy and timeout for both schemes."""
    adapter = _TimeoutAdapter(timeout, max_retries=retry_policy(retries, backoff))
    session.mount("http://", adapter)
    session.mount("https://", adapter)


def polite_session(retries: int, backoff: float, timeout: float = REQUEST_TIMEOUT) -> requests.Session:
    """A session that says who we are (services ask bots for a descriptive User-Agent) and retries."""
    session = requests.Session()
    session.headers.update({"User-Agent": USER_AGENT, "Accept": "application/json"})
    mount_policy(session, retries, backoff, timeout)
    return session
