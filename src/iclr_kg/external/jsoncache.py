"""A folder of JSON answers from outside services (Wikidata, OpenReview).

A rerun asks nothing twice and an interrupted run resumes; each file is written to a temporary
name and renamed, so a crash never leaves half an answer that a later run would trust.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iclr_kg.atomic import write_text


class JsonCache:
    """`get`/`put` by file name inside `folder`; with `folder=None` it keeps nothing."""

    def __init__(self, folder: Path | None):
        self.folder = folder

    def get(self, name: str) -> Any | None:
        if self.folder is None:
            return None
        path = self.folder / name
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def put(self, name: str, data: Any) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        write_text(self.folder / name, json.dumps(data, ensure_ascii=False))
