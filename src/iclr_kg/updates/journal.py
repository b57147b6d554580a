"""The journal: every accepted update, appended and fsynced before it is acknowledged (the
acknowledgement point), read back by the writer that catches up and by every build that replays
it; `iclr-kg updates` lists, exports and drops its entries."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from iclr_kg import vocab
from iclr_kg.atomic import fsync_dir, write_text
from iclr_kg.errors import (
    QueryError,
    StoreError,
)
from iclr_kg.store import (
    JOURNAL,
    JOURNAL_CHECKPOINT,
    build_lock,
    write_lock,
)


@dataclass(frozen=True)
class Entry:
    """One accepted write, as it ran: SPARQL Update text (Graph Store writes are turned into one)."""

    id: int
    at: str  # UTC, ISO 8601
    kind: str  # "update" or "graph-store"
    update: str
    base: str | None = None  # the base IRI its relative IRIs resolved against
    request: str = ""  # the id the web process chose for it: how a client's request finds its entry

    def line(self) -> str:
        """The entry as one journal line."""
        return json.dumps(asdict(self), ensure_ascii=False) + "\n"


class Journal:
    """The append-only file of accepted writes beside the store: one JSON object per line.

    A line is only acknowledged once it and its newline are fsynced; a torn last line (a writer
    killed mid-append) was never acknowledged and is ignored, then cut off by the next append.
    What was read is kept while the file stays the same (its size, time and inode), so that a
    writer does not read the whole journal for each update.
    """

    def __init__(self, store_dir: Path):
        self.path = store_dir / JOURNAL
        self._known: tuple[tuple[int, int, int], list[Entry], int] | None = None

    def entries(self) -> list[Entry]:
        return list(self._read()[0])

    def find(self, request: str) -> Entry | None:
        """The entry the web process's `request` id was journaled as, if it was."""
        return next((e for e in reversed(self._read()[0]) if e.request == request), None)

    def since(self, last: int) -> list[Entry]:
        """The entries after the one numbered `last`."""
        entries = self._read()[0]
        if not entries or entries[-1].id <= last:
            return []
        return [e for e in entries if e.id > last]

    @property
    def intact(self) -> int:
        """The length in bytes of the complete entries (what a generation holding them records)."""
        return self._read()[1]

    def bytes_through(self, last: int) -> int | None:
        """The length in bytes of the journal's lines up to the entry numbered `last` (None: no such entry)."""
        entries = self._read()[0]
        count = next((n for n, e in enumerate(entries, 1) if e.id == last), None)
        if count is None:
            return None
        data = self.prefix(self.intact) or b""
        end = -1
        for _ in range(count):
            end = data.index(b"\n", end + 1)
        return end + 1

    def prefix(self, length: int) -> bytes | None:
        """The journal's first `length` bytes, if it has that many and they end a line."""
        try:
            with open(self.path, "rb") as handle:
                data = handle.read(length)
        except FileNotFoundError:
            return b"" if length == 0 else None
        if len(data) < length or (length and not data.endswith(b"\n")):
            return None
        return data

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return None
        return found.st_size, found.st_mtime_ns, found.st_ino

    def _read(self) -> tuple[list[Entry], int]:
        """The complete entries, and the byte length they take (what follows is a torn line)."""
        stamp = self._stamp()
        if stamp is None:
            return [], 0
        if self._known is not None and self._known[0] == stamp:
            return self._known[1], self._known[2]
        data = self.path.read_bytes()
        intact = data.rfind(b"\n") + 1
        entries = []
        for number, line in enumerate(data[:intact].decode("utf-8").split("\n")[:-1], 1):
            try:
                entries.append(Entry(**json.loads(line)))
            except (ValueError, TypeError) as exc:
                raise StoreError(
                    f"{self.path}:{number}: not a journal entry ({exc}); fix or remove that line"
                ) from None
        if stamp[0] == len(data):
            self._known = (stamp, entries, intact)
        return entries, intact

    def append(self, kind: str, update: str, base: str | None, after: int, request: str = "") -> Entry:
        """Write an entry numbered after both the journal's last and `after`, durably."""
        entries, intact = self._read()
        number = max([after, *(e.id for e in entries[-1:])]) + 1
        entry = Entry(number, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), kind, update, base, request)
        line = entry.line().encode("utf-8")
        created = not self.path.exists()
        with open(self.path, "ab") as handle:
            if intact < handle.tell():
                handle.truncate(intact)  # a torn line from a killed writer
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        if created:
            fsync_dir(self.path.parent)
        stamp = self._stamp()
        if stamp is not None and stamp[0] == intact + len(line):
            self._known = (stamp, [*entries, entry], intact + len(line))
        return entry

    def sync(self) -> None:
        """Make what the journal holds durable (an fsync from any process flushes the file)."""
        with open(self.path, "rb") as handle:
            os.fsync(handle.fileno())

    def cut_torn(self) -> None:
        """Cut off a torn last line (never acknowledged), so that the journal's length is its entries'."""
        stamp, intact = self._stamp(), self._read()[1]
        if stamp is not None and stamp[0] > intact:
            with open(self.path, "ab") as handle:
                handle.truncate(intact)
                os.fsync(handle.fileno())

    def keep_only(self, entries: list[Entry]) -> None:
        """Rewrite the journal with `entries` (after a drop), atomically and durably."""
        write_text(self.path, "".join(e.line() for e in entries), durable=True)


_JOURNALS: dict[Path, Journal] = {}


def journal_of(store_dir: Path) -> Journal:
    """This process's reader of the store's journal (it keeps what it read while the file stays)."""
    journal = _JOURNALS.get(store_dir)
    if journal is None:
        journal = _JOURNALS[store_dir] = Journal(store_dir)
    return journal


def export_text(entries: list[Entry]) -> str:
    """The entries as one SPARQL Update request: our prefixes, then each entry with its base."""
    lines = [f"# iclr-kg update journal: {len(entries)} update(s), oldest first", ""]
    lines += [f"PREFIX {name}: <{iri}>" for name, iri in vocab.QUERY_PREFIXES.items()]
    operations = []
    for entry in entries:
        base = f"BASE <{entry.base}>\n" if entry.base else ""
        operations.append(f"\n# update {entry.id}, {entry.at}, {entry.kind}\n{base}{entry.update.strip()}")
    return "\n".join(lines) + "\n;".join(operations) + "\n"  # `;` on its own line: never inside a comment


def drop(store_dir: Path, ids: set[int] | None) -> list[Entry]:
    """Remove the entries with these ids (None: all) from the journal; returns those removed.
    Not while a build runs (it may be replaying them), and the journal's checkpoint goes with
    them: the next build replays every entry left."""
    with build_lock(store_dir), write_lock(store_dir):
        journal = Journal(store_dir)
        entries = journal.entries()
        known = {e.id for e in entries}
        unknown = sorted((ids or set()) - known)
        if unknown:
            raise QueryError(f"no journaled update {', '.join(map(str, unknown))}; see `iclr-kg updates list`")
        dropped = [e for e in entries if ids is None or e.id in ids]
        (store_dir / JOURNAL_CHECKPOINT).unlink(missing_ok=True)  # it holds what they did: the next build replays all
        journal.keep_only([e for e in entries if e not in dropped])
        return dropped
