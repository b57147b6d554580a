"""Which generations, and which files kept beside them, may go: never the current one, the newest
others, one replaced less than KEEP_SECONDS ago (queries may still read it), or one being written."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import time
from pathlib import Path

from iclr_kg.store.generations import being_written, loader_alive

KEEP_GENERATIONS = 2


KEEP_SECONDS = 300  # a generation replaced less than this ago stays, for the queries still reading it


def prune_kept_beside(current: Path) -> list[str]:
    """For a remote engine's publications (`STORE/remote/<engine>/<generation>`, whose data lives
    in the engine): remove what was kept beside generations other than `current` (indexes,
    answers, counts), except the newest other one and any written within KEEP_SECONDS, which a
    reader may still be on. Returns the generation names pruned. Without this, every publication
    left its index and answers behind for good."""
    others: dict[str, list[os.DirEntry[str]]] = {}
    with os.scandir(current.parent) as listed:
        for entry in listed:
            name = entry.name.lstrip(".").split(".", 1)[0]
            if name != current.name:
                others.setdefault(name, []).append(entry)
    newest = {name: max(e.stat(follow_symlinks=False).st_mtime for e in entries) for name, entries in others.items()}
    spared = set(sorted(newest, key=newest.__getitem__)[-1:]) | {
        name for name, at in newest.items() if at > time.time() - KEEP_SECONDS
    }
    pruned = sorted(set(others) - spared)
    for name in pruned:
        for entry in others[name]:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
    return pruned


def prune_generations(generations: Path, keep: Path) -> None:
    """Delete partial generations (killed builds and updates, not one a build is loading) and
    complete ones that are neither among the newest KEEP_GENERATIONS nor replaced less than
    KEEP_SECONDS ago, so that queries still running on them finish (each update makes one).

    A burst of updates leaves thousands of generations inside KEEP_SECONDS, and this runs after
    each: one listing of the folder, and a generation an update made is dated by its name
    (`_made_at`), not by reading its marker."""
    with os.scandir(generations) as listed:
        entries = {entry.name: entry for entry in listed}
    folders = sorted(  # the generations (what is kept beside one, `<name>.kept/`, has a dot in its name)
        name for name, entry in entries.items() if entry.is_dir(follow_symlinks=False) and "." not in name
    )
    complete = [name for name in folders if f"{name}.complete" in entries or name == keep.name]
    recent = time.time() - KEEP_SECONDS
    replaced_recently = {
        older
        for older, newer in itertools.pairwise(complete)
        if f"{newer}.complete" in entries and _made_at(entries[f"{newer}.complete"], newer) > recent
    }
    newest, completed = set(complete[-KEEP_GENERATIONS:]), set(complete)
    kept, gone = [], []
    for name in folders:
        if name == keep.name or name in newest or name in replaced_recently:
            kept.append(name)
        elif name not in completed and (being_written(generations / name) or loader_alive(generations / name)):
            kept.append(name)  # a build or an update making it in another process
        else:
            gone.append(name)
    if not gone:
        return
    # An update's index is a link to the index it patched (index.patch_index, in place): that file
    # stays while a kept generation links to it, and goes with the last one.
    from iclr_kg.index import SUFFIX as index

    linked = {
        os.readlink(entries[n + index].path) if entries[n + index].is_symlink() else n + index
        for n in kept
        if n + index in entries
    }
    beside: dict[str, list[str]] = {}
    for name in entries:
        beside.setdefault(name.split(".", 1)[0], []).append(name)
    for name in gone:
        shutil.rmtree(generations / name, ignore_errors=True)
        for other in beside.get(name, []):  # its marker, index, reasoning state, kept results
            if other != name and _database_of(other) not in linked:
                if entries[other].is_dir(follow_symlinks=False):
                    shutil.rmtree(generations / other, ignore_errors=True)
                else:
                    (generations / other).unlink(missing_ok=True)
    for name, entry in entries.items():  # an index the generations that linked to it outlived
        owner = name.split(".", 1)[0]
        if index in name and not entry.is_symlink() and owner not in entries and _database_of(name) not in linked:
            (generations / name).unlink(missing_ok=True)


def _database_of(name: str) -> str:
    """The SQLite file a file's name belongs to: its write-ahead log and shared memory go with it."""
    return name.removesuffix("-wal").removesuffix("-shm")


def _made_at(marker: os.DirEntry[str], name: str) -> float:
    """When a generation was completed: an update's from its name (`<build>~<time_ns>`, named as
    it is made, in a few milliseconds), a build's from its marker (a build takes minutes)."""
    stamp = name.rpartition("~")[2]
    if name != stamp and stamp.isdigit():
        return int(stamp) / 1e9
    return marker.stat().st_mtime
