"""Where the graph a server or a command reads lives, one object per backend, chosen once from
the settings (`served`): the embedded store's current generation, or the publication on a remote
SPARQL engine (remote/store.py).

Each gives, for what it serves now, a `Generation`: the folder where values kept for it live
(the generation itself; for a publication, a folder of ours named by hashes), the key a query
worker opens it by, its name, and a handle on it behind `graph.ReadableGraph`. A caller that
pins one Generation reads one generation throughout (web/state.py pins one per request).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Protocol

from iclr_kg.config import Settings
from iclr_kg.graph import ReadableGraph
from iclr_kg.store import current_generation, open_read_only, prune_kept_beside

if TYPE_CHECKING:
    from iclr_kg.remote.store import Backend, RemoteStore


@dataclass(frozen=True)
class Generation:
    """One generation as served: `folder` (where values kept for it live), `key` (what a query
    worker opens it by), `name` (as pages and VoID name it)."""

    folder: Path
    key: str
    name: str
    handle: ReadableGraph | None = field(default=None, compare=False)  # a remote publication's store


class Served(Protocol):
    remote: bool

    def current(self) -> Generation | None:
        """What is served now (None: nothing yet)."""

    def open(self, generation: Generation) -> ReadableGraph:
        """A read-only handle on `generation`."""

    def missing(self) -> NoReturn:
        """Raise the clear error that nothing is served yet."""

    def seen(self, generation: Generation) -> None:
        """Told the first time a process serves `generation`."""


class Embedded:
    """The store's generations on disk: the current one (after `catch_up`, which may publish
    what the writer acknowledged and has not yet published)."""

    remote = False

    def __init__(self, store_dir: Path, catch_up: Callable[[Path], Path | None] | None = None):
        self.store_dir, self.catch_up = store_dir, catch_up

    def current(self) -> Generation | None:
        generation = current_generation(self.store_dir)
        if generation is not None and self.catch_up is not None:
            generation = self.catch_up(generation)
        return None if generation is None else Generation(generation, str(generation), generation.name)

    def open(self, generation: Generation) -> ReadableGraph:
        return open_read_only(self.store_dir, generation.folder)

    def missing(self) -> NoReturn:
        open_read_only(self.store_dir)  # raises the clear "no store" error
        raise AssertionError("a store appeared while it was missing")

    def seen(self, generation: Generation) -> None:
        """Nothing: pruning what is kept beside generations is the writer's and the builds'."""


class Remote:
    """The publication on a remote engine, looked up again now and then (remote.store.Backend),
    with a folder of ours for what this server keeps for it: `STORE/remote/<engine>/<generation>`.
    The generation's name comes from the engine: hashed, never joined onto a path as it is (an
    absolute path or `../` in it would choose where files are written)."""

    remote = True

    def __init__(self, settings: Settings):
        from iclr_kg.remote.store import Backend  # here: requests stays out of processes that do not need it

        assert settings.remote is not None
        self.store_dir = settings.store
        self.backend: Backend = Backend(settings.remote, settings.backend_auth, timeout=settings.query_timeout)

    def current(self) -> Generation:
        store = self.backend.store()
        folder = self.folder_of(store)
        folder.parent.mkdir(parents=True, exist_ok=True)  # what is kept lives beside it
        return Generation(folder, store.key, store.publication.generation, store)

    def folder_of(self, store: RemoteStore) -> Path:
        engine = hashlib.sha256(store.key.encode()).hexdigest()[:16]
        return (
            self.store_dir / "remote" / engine / hashlib.sha256(store.publication.generation.encode()).hexdigest()[:16]
        )

    def open(self, generation: Generation) -> ReadableGraph:
        return generation.handle if generation.handle is not None else self.backend.store()

    def missing(self) -> NoReturn:
        raise AssertionError("a remote engine's publication is never missing once connected")

    def seen(self, generation: Generation) -> None:
        """What was kept for the engine's older publications goes."""
        if generation.folder.parent.is_dir():
            prune_kept_beside(generation.folder)


def served(settings: Settings, catch_up: Callable[[Path], Path | None] | None = None) -> Embedded | Remote:
    """The backend the settings name (`backend`): the embedded store, or a remote engine."""
    return Remote(settings) if settings.remote is not None else Embedded(settings.store, catch_up)


def current_key(settings: Settings) -> str:
    """The key a query worker opens what is served now by (a command's, outside a server)."""
    backend = served(settings)
    generation = backend.current()
    if generation is None:
        backend.missing()
    return generation.key
