"""Write a file whole or not at all: a temporary name beside it, renamed only on success."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from iclr_kg.errors import IclrKgError


def check_writable(path: Path) -> None:
    """Refuse, before any work is done, an output path that cannot be written as a file."""
    if path.is_dir():
        raise IclrKgError(f"{path} is a directory; give a file name")
    if not path.parent.is_dir():
        raise IclrKgError(f"cannot write {path}: the folder {path.parent} does not exist")


@contextlib.contextmanager
def atomic_output(path: Path, mode: str = "wb", durable: bool = False) -> Iterator[IO]:
    """A file object for `path`; the file appears (or is replaced) only if the block succeeds,
    so a query that fails half-way never clobbers what was there. `durable`: on disk (fsynced,
    the folder too) before this returns, for what a crash must not lose."""
    check_writable(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, mode, encoding=None if "b" in mode else "utf-8") as handle:
            yield handle
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
        if durable:
            fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str, durable: bool = False) -> None:
    """Replace `path` with `text` (UTF-8), whole or not at all."""
    with atomic_output(path, "w", durable=durable) as out:
        out.write(text)


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
