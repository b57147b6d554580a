"""Write a file whole or not at all: a temporary name beside it, renamed only on success."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .errors import IclrKgError


def check_writable(path: Path) -> None:
    """Refuse, before any work is done, an output path that cannot be written as a file."""
    if path.is_dir():
        raise IclrKgError(f"{path} is a directory; give a file name")
    if not path.parent.is_dir():
        raise IclrKgError(f"cannot write {path}: the folder {path.parent} does not exist")


@contextlib.contextmanager
def atomic_output(path: Path, mode: str = "wb") -> Iterator[IO]:
    """A file object for `path`; the file appears (or is replaced) only if the block succeeds,
    so a query that fails half-way never clobbers what was there."""
    check_writable(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
