"""The store's two locks (flock): one build at a time, and one writer (an update, or a build while
it publishes) at a time."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

from iclr_kg.errors import StoreError


@contextlib.contextmanager
def build_lock(store_dir: Path) -> Iterator[None]:
    """Hold the store's build lock; a second concurrent build is refused, not queued. A build
    that made the store's folder and failed before anything was published takes it away again
    (an empty folder holding `build.lock` read as a store that is there)."""
    made = not store_dir.exists()
    store_dir.mkdir(parents=True, exist_ok=True)
    with open(store_dir / "build.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"another build of {store_dir} is running; try again when it ends") from None
        try:
            yield
        except BaseException:
            if made and [p.name for p in store_dir.iterdir()] == ["build.lock"]:
                (store_dir / "build.lock").unlink()
                store_dir.rmdir()
            raise
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def write_lock(store_dir: Path) -> Iterator[None]:
    """The store's one-writer lock: held for each update (from any web process) and while a build
    replays the update journal and publishes, so no update falls between the two."""
    store_dir.mkdir(parents=True, exist_ok=True)
    with open(store_dir / "write.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
