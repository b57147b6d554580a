"""Where the graph a server or a command reads lives, one object per backend, chosen once from
the settings (`served`): the embedded store's current generation, or the publication on a remote
SPARQL engine (remote/store.py).

Each gives, for what it serves now, a `Generation`: the folder where values kept for it live
(the generation itself; for a publication, a folder of ours named by hashes), the key a query
worker opens it by (`open_key`), its name, and a handle on it behind `graph.ReadableGraph`. A
caller that pins one Generation reads one generation throughout (web/state.py pins one per
request). Each carries what it can do (`Served`: accepts writes, evaluates in this process, a
time budget per request, built here), as rdflib's Store and Datasette's Database do: callers
ask the object, never which kind it is; `served` is the one place that chooses.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Protocol

from iclr_kg.config import SCHEME, Settings
from iclr_kg.errors import StoreDamaged
from iclr_kg.graph import ReadableGraph
from iclr_kg.processes import memory_limit
from iclr_kg.store import current_generation, damage, open_read_only, prune_kept_beside, refuse_damaged

if TYPE_CHECKING:
    from iclr_kg.remote.store import Backend, RemoteStore


READ_BACK_PATIENCE = 3.0  # seconds a query waits for a new generation to be read back (Embedded.intact)


@dataclass(frozen=True)
class Generation:
    """One generation as served: `folder` (where values kept for it live), `key` (what a query
    worker opens it by), `name` (as pages and VoID name it)."""

    folder: Path
    key: str
    name: str
    handle: ReadableGraph | None = field(default=None, compare=False)  # a remote publication's store


class Served(Protocol):
    """A backend: what it can do, and what it serves now."""

    accepts_writes: bool  # /update and Graph Store writes apply to it (a remote one is published to)
    evaluates_here: bool  # a web process may evaluate its queries itself (query/local.py's lane)
    budgets_time: bool  # a request's calls to it share the query time limit (remote.client.time_budget)
    builds_here: bool  # `serve` builds what it serves when there is nothing yet

    def describe(self) -> str:
        """What `serve` says it serves (a remote one is asked: it answers, something is published)."""

    def reader(self) -> ReadableGraph:
        """The graph a command reads now."""

    def current(self) -> Generation | None:
        """What is served now (None: nothing yet)."""

    def open(self, generation: Generation) -> ReadableGraph:
        """A read-only handle on `generation`."""

    def missing(self) -> NoReturn:
        """Raise the clear error that nothing is served yet."""

    def seen(self, generation: Generation) -> None:
        """Told the first time a process serves `generation`."""

    def intact(self, generation: Generation) -> bool:
        """Whether `generation` was found to read back whole, so a query may be evaluated where it
        cannot be stopped (a web process); StoreDamaged where it was found damaged."""

    def check(self, generation: Generation) -> None:
        """Find whether `generation` reads back whole (waiting for it); StoreDamaged if not."""


class Embedded:
    """The store's generations on disk: the current one (after `catch_up`, which may publish
    what the writer acknowledged and has not yet published), each read back once before a query
    runs where it cannot be stopped (store/checking.py: `damage`)."""

    accepts_writes = evaluates_here = builds_here = True
    budgets_time = False

    def __init__(self, store_dir: Path, catch_up: Callable[[Path], Path | None] | None = None, memory_mib: int = 2048):
        self.store_dir, self.catch_up, self.memory_mib = store_dir, catch_up, memory_mib
        self._found: dict[Path, str | None] = {}  # generation -> its damage (None: intact); absent: not yet read
        self._reading: dict[Path, threading.Event] = {}  # set once the generation's reading concludes

    def describe(self) -> str:
        return str(self.store_dir)

    def reader(self) -> ReadableGraph:
        """The current generation, refused (StoreDamaged) where it does not read back whole: a
        command's reading would fail halfway or swell."""
        generation = current_generation(self.store_dir)
        if generation is not None:
            refuse_damaged(generation, self.memory_mib)
        return open_read_only(self.store_dir, generation)

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
        """The generation is read back in the background (pruning what is kept beside generations
        is the writer's and the builds')."""
        if generation.folder not in self._reading:
            self._reading[generation.folder] = threading.Event()
            threading.Thread(target=self._read_back, args=(generation.folder,), daemon=True).start()

    def intact(self, generation: Generation) -> bool:
        """As Served says; a generation being read back is waited for up to READ_BACK_PATIENCE
        seconds (a damaged one is found within a second, the queries that came meanwhile never
        reach it), then queries go to workers until it is known."""
        reading = self._reading.get(generation.folder)
        if reading is not None:
            reading.wait(READ_BACK_PATIENCE)
        found = self._found.get(generation.folder, "")
        if found:
            raise StoreDamaged(generation.folder, found)
        return found is None

    def check(self, generation: Generation) -> None:
        if generation.folder not in self._found:
            self._read_back(generation.folder)
        self.intact(generation)

    def _read_back(self, folder: Path) -> None:
        if len(self._found) > 100:  # generations come and go: forget the old ones
            self._found.clear()
            self._reading = {folder: self._reading[folder]} if folder in self._reading else {}
        try:
            self._found[folder] = damage(folder, self.memory_mib)
        finally:
            if folder in self._reading:
                self._reading[folder].set()


class Remote:
    """The publication on a remote engine, looked up again now and then (remote.store.Backend),
    with a folder of ours for what this server keeps for it: `STORE/remote/<engine>/<generation>`.
    The generation's name comes from the engine: hashed, never joined onto a path as it is (an
    absolute path or `../` in it would choose where files are written)."""

    accepts_writes = evaluates_here = builds_here = False
    budgets_time = True

    def __init__(self, settings: Settings):
        from iclr_kg.remote.store import Backend  # here: requests stays out of processes that do not need it

        assert settings.remote is not None
        self.settings, self.store_dir = settings, settings.store
        self.backend: Backend = Backend(settings.remote, settings.backend_auth, timeout=settings.query_timeout)

    def describe(self) -> str:
        return f"{self.settings.backend} (generation {self.reader().publication.generation})"

    def reader(self) -> RemoteStore:
        from iclr_kg.remote.store import open_remote

        return open_remote(self.settings)

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

    def intact(self, generation: Generation) -> bool:
        """Always: the engine reads its own files (and a query here is a network call)."""
        return True

    def check(self, generation: Generation) -> None:
        """Nothing: the engine's own."""


def served(settings: Settings, catch_up: Callable[[Path], Path | None] | None = None) -> Served:
    """The backend the settings name (`backend`): the embedded store, or a remote engine."""
    if settings.remote is not None:
        return Remote(settings)
    return Embedded(settings.store, catch_up, memory_limit(settings.query_memory))


def current_key(settings: Settings) -> str:
    """The key a query worker opens what is served now by (a command's, outside a server), once
    it was found to read back whole (StoreDamaged if not)."""
    backend = served(settings)
    generation = backend.current()
    if generation is None:
        backend.missing()
    backend.check(generation)
    return generation.key


def open_key(key: str, backend_auth: str | None) -> ReadableGraph:
    """The graph a query worker reads for a generation's key (`Generation.key`): a generation's
    folder, or a remote engine's publication (`RemoteStore.key`, with the scheme in front)."""
    if key.startswith(SCHEME):  # requests and the client are imported only by workers that need them
        from iclr_kg.remote.store import open_key as remote_key

        return remote_key(key, backend_auth)
    from pyoxigraph import Store

    return Store.read_only(key.split("#", 1)[0])
