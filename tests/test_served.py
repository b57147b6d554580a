"""Backends carry what they can do (served.py): callers ask the object, never which kind it is
(issue 68 item 2: embedded-vs-remote was decided again at six sites outside it)."""

from __future__ import annotations

import re
from pathlib import Path

import iclr_kg
from iclr_kg.config import Settings
from iclr_kg.served import Embedded, Remote, Served, served

CAPABILITIES = ("accepts_writes", "evaluates_here", "budgets_time", "builds_here")


def test_each_backend_says_what_it_can_do(tmp_path: Path) -> None:
    embedded: Served = served(Settings(store=tmp_path / "store"))
    remote: Served = served(Settings(store=tmp_path / "store", backend="sparql+http://127.0.0.1:9/sparql"))
    assert isinstance(embedded, Embedded) and isinstance(remote, Remote)  # made, never connected
    said = {name: (getattr(embedded, name), getattr(remote, name)) for name in CAPABILITIES}
    assert said == {
        "accepts_writes": (True, False),  # a remote engine is published to, not written
        "evaluates_here": (True, False),  # its queries are network calls: no lane
        "budgets_time": (False, True),  # a request's calls to the engine share the time limit
        "builds_here": (True, False),
    }
    assert embedded.describe() == str(tmp_path / "store")


def test_no_module_asks_which_kind_of_backend_it_reads() -> None:
    """Only served.py (which chooses), remote/ (the engine) and config.py (the setting) may test
    for the remote backend; the rest asks the backend object."""
    root = Path(iclr_kg.__file__).parent
    asking = re.compile(r"settings\.remote (is|is not) None|served\.remote\b|startswith\(SCHEME\)")
    found = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name not in ("served.py", "config.py") and "remote" not in path.parent.name
        if asking.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
