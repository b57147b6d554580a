"""A store's generations on disk: which is current, opening one read-only, the files kept beside
each (its record, its reasoner's state, its kept answers), and whether one is still being written."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyoxigraph import (
    Store,
)

from iclr_kg.atomic import write_text
from iclr_kg.errors import StoreError, engine_errors

_resolved: dict[tuple[str, str], Path] = {}


def current_generation(store_dir: Path) -> Path | None:
    """The generation directory `current` points at, or None if there is no store yet.

    Called on every request by the web app, so it costs one readlink; the resolved path of a
    link target seen before is remembered.
    """
    try:
        target = os.readlink(os.path.join(store_dir, "current"))
    except OSError:
        return None
    key = (str(store_dir), target)
    resolved = _resolved.get(key)
    if resolved is None:
        resolved = (store_dir / target).resolve()
        if not resolved.is_dir():
            return None
        _resolved[key] = resolved
    return resolved


def open_read_only(store_dir: Path, generation: Path | None = None) -> Store:
    """Open `generation` (by default the current one) for reading; a clear error if there is
    none or it is corrupt."""
    generation = generation or current_generation(store_dir)
    if generation is None:
        raise StoreError(f"no store at {store_dir}: run `iclr-kg build --store {store_dir}` first")
    with engine_errors(f"the store at {generation} cannot be opened: reading it"):
        return Store.read_only(str(generation))


def complete_generation(generation: Path, record: dict[str, Any]) -> None:
    """Mark a flushed and closed generation complete; `record` says what it holds (journal id)."""
    write_text(_marker(generation), json.dumps(record), durable=True)


def generation_record(generation: Path) -> dict[str, Any]:
    """What `complete_generation` recorded (empty for generations from before records)."""
    try:
        text = _marker(generation).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return json.loads(text) if text.strip() else {}


JOURNAL = "journal.jsonl"  # the accepted updates, beside the generations (updates.Journal)
JOURNAL_CHECKPOINT = "journal.checkpoint"  # what a build's replay of them did (updates.checkpoint)


_covered: dict[Path, int] = {}  # generation -> the journal's length in bytes it holds (once recorded)


def journal_behind(store_dir: Path, generation: Path) -> bool:
    """Whether the journal holds an update `generation` lacks: the writer acknowledges an update
    once it is journaled and publishes its generation a little later, with the next ones, so a
    reader that must see every acknowledged update asks the writer to publish first. One stat
    of the journal (its length grows with each update) against the length the generation's
    record says it holds; a generation recorded without one is behind while a journal exists."""
    try:
        size = os.stat(store_dir / JOURNAL).st_size
    except FileNotFoundError:
        return False
    covered = _covered.get(generation)
    if covered is None:
        covered = generation_record(generation).get("journal_bytes", -1)
        if covered >= 0:
            if len(_covered) > 1000:  # generations come and go: forget the old ones
                _covered.clear()
            _covered[generation] = covered
    return size > max(covered, 0)


def _marker(generation: Path) -> Path:
    return generation.with_name(generation.name + ".complete")


def reasoned_path(generation: Path) -> Path:
    """Beside a generation: what an incremental build or update needs from it (the closure's
    hidden facts, quads per graph; build/incremental.py, maintained/)."""
    return generation.with_name(generation.name + ".reasoned")


KEPT = ".kept"  # the folder beside a generation holding what was derived from it and kept


def kept_beside(generation: Path, name: str) -> Path:
    """Beside a generation, in its own folder (`<generation>.kept/`): a result derived from it and
    read often (`/stats`' counts, saved queries' pages and answers), kept so that every web
    process and every restart reads it instead of counting again; pruned with the generation.
    One folder per generation shows what belongs to it (each had ~160 files beside it)."""
    return generation.with_name(generation.name + KEPT) / f"{name}.json"


def kept_for_writing(generation: Path, name: str) -> Path:
    """`kept_beside`, its folder made (a generation whose kept values nobody asked has none)."""
    path = kept_beside(generation, name)
    path.parent.mkdir(exist_ok=True)
    return path


def save_reasoned(generation: Path, state: dict[str, Any]) -> None:
    """Keep `state` beside a published `generation`, whole or not at all. If it cannot be written
    (a full disk), the next build or update recomputes what it would have spared; nothing else
    is lost."""
    path = reasoned_path(generation)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)


def load_reasoned(generation: Path) -> dict[str, Any]:
    """The state `save_reasoned` kept beside `generation` (raises whatever reading it raises)."""
    return pickle.loads(reasoned_path(generation).read_bytes())


def _loading_marker(generation: Path) -> Path:
    return generation.with_name(f"{generation.name}.loading")


@contextlib.contextmanager
def held_while_loading(generation: Path) -> Iterator[None]:
    """Say, for the time a generation is being made, which process makes it: `<id>.loading`
    holds its pid, written before the folder exists. RocksDB creates the folder before it locks
    it, and a prune by another process in between took the folder for a killed build's and
    deleted it under the loader."""
    marker = _loading_marker(generation)
    marker.write_text(str(os.getpid()), encoding="ascii")
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


def loader_alive(folder: Path) -> bool:
    try:
        pid = int(_loading_marker(folder).read_text(encoding="ascii"))
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def open_for_writing_here(generation: Path) -> bool:
    """Whether this process still holds `generation` open for writing: RocksDB keeps its LOCK
    file open while a read-write handle lives (read-only handles take no lock). Read from
    /proc/self/fd, since a POSIX lock taken by this process cannot see its own (and closing a
    second descriptor of LOCK would release RocksDB's)."""
    lock = str(generation / "LOCK")
    with os.scandir("/proc/self/fd") as descriptors:
        for descriptor in descriptors:
            with contextlib.suppress(OSError):
                if os.readlink(descriptor.path) == lock:
                    return True
    return False


def being_written(folder: Path) -> bool:
    """Whether a live process holds the database open for writing (RocksDB's POSIX lock on LOCK)."""
    try:
        with open(folder / "LOCK", "rb+") as handle:
            try:
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.lockf(handle, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def generations(store_dir: Path) -> list[Path]:
    """The complete generations of a store, oldest first (the current one among them)."""
    folder = (store_dir / "generations").resolve()  # as `current_generation` gives it (a store behind a link)
    if not folder.is_dir():
        return []
    current = current_generation(store_dir)
    return sorted(p for p in folder.iterdir() if p.is_dir() and (_marker(p).exists() or p == current))


def built_on(generation: str | None) -> str | None:
    """The date a generation was built, from its name (`20261201T133135...`); None where the name
    says none, as a remote engine's publication record may (it is not ours to trust)."""
    try:
        return dt.datetime.strptime((generation or "")[:15], "%Y%m%dT%H%M%S").date().isoformat()
    except ValueError:
        return None
