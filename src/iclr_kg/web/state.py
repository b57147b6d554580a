"""What the app keeps between requests: the open store (reopened after a rebuild), saved queries."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from flask import current_app, g, has_request_context
from pyoxigraph import Store

from iclr_kg import terms
from iclr_kg.atomic import write_text
from iclr_kg.config import Settings
from iclr_kg.errors import IclrKgError
from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index, current_index, ensure_index, index_path
from iclr_kg.processes import memory_limit
from iclr_kg.query.pool import QueryPool
from iclr_kg.query.saved import SavedQuery, load_saved
from iclr_kg.store import current_generation, journal_behind, kept_beside, open_read_only, prune_kept_beside
from iclr_kg.updates import Writer
from iclr_kg.web.cache import ResponseMemo, ResultCache

if TYPE_CHECKING:
    from iclr_kg.query.local import LocalLane
    from iclr_kg.remote.store import Backend, RemoteStore

T = TypeVar("T")
WARM_AFTER = 2.0  # seconds a new generation must stay current before its kept values are computed
WARM_PATIENCE = 5.0  # seconds the warmer waits for an idle query worker before it skips a value


PINNED = "iclr_kg_generation"  # on flask.g: the generation a request reads (AppState._current)


def state() -> AppState:
    """The app's state, for the request being handled (Flask's current_app)."""
    return current_app.extensions["iclr_kg"]


class AppState:
    """Holds one read-only handle on the current store generation.

    A request's first look at the store checks (one readlink) whether a build or an update has
    swung `current` to a new generation, and pins what it found for the rest of the request
    (`_current`): its store, index, kept values and generation are all of one generation, even
    if another is published meanwhile. A rebuild or an update (from any web process) goes live
    without a restart, for the next request. Nothing here writes: updates go through
    `updates.apply`.
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        # A remote engine (`backend = sparql+URL`) answers instead of the store: see remote/store.py.
        self.backend: Backend | None = None
        if settings.remote:  # imported only then: requests stays out of web processes that do not need it
            from iclr_kg.remote.store import Backend

            self.backend = Backend(settings.remote, settings.backend_auth, timeout=settings.query_timeout)
        self._lock = threading.Lock()
        self._stores: dict[Path, Store] = {}  # the generations requests read now: the newest two
        self.saved: dict[str, SavedQuery] = load_saved(settings.queries_dir)
        # A saved query's default answer, as a request asks it, when it may be kept (web/answers.py).
        self.answered = {
            asked: saved
            for saved in self.saved.values()
            if ResultCache.cacheable(saved.text)
            for asked in saved.default_requests()
        }
        self._pool: QueryPool | None = None
        self.lane: LocalLane | None = None  # set by the server where it can replace this process
        self._writer: Writer | None = None
        # Keyed by generation: an update (from any web process) makes a new one, so nothing stale is served.
        self.cache = ResultCache(settings.result_cache * 2**20) if settings.result_cache > 0 else None
        self._derived: dict[str, tuple[str, Any]] = {}  # name -> (generation, value): see per_generation
        self.memo: ResponseMemo | None = None  # set by create_app: whole responses answered before Flask
        self._indexed: set[Path] = set()  # generations whose index this process found current
        self._warmers: list[Callable[[str], None]] = []  # started for each new generation (warm)
        self._warmed: Path | None = None

    def terms(self) -> terms.Terms:
        """The ontology's terms and labels (read once per ontology file; every generation's
        ontology graph is loaded from it)."""
        return terms.read(self.settings.ontology_dir / "iclr.ttl")

    @property
    def writer(self) -> Writer:
        """The process that runs this web process's writes, started on first use."""
        if self._writer is None:
            memory = self.settings.query_memory
            with self._lock:
                if self._writer is None:
                    self._writer = Writer(memory_limit(memory))
        return self._writer

    def install_lane(self, retire: Callable[[str, bool], None], threads: int) -> None:
        """Evaluate the endpoint's queries in this process (query/local.py): only for a server
        that replaces the process when `retire` is called. Not with a remote engine (its
        queries are network calls), nor with `query_workers = 0` (no time limit asked for)."""
        if self.backend is None and self.settings.query_workers > 0:
            from iclr_kg.query.local import LocalLane

            memory = memory_limit(self.settings.query_memory)
            share = max(1, self.settings.query_workers // 2)
            self.lane = LocalLane(self.store, retire, threads, share, memory)

    @property
    def pool(self) -> QueryPool:
        """The query worker processes, started on first use."""
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = QueryPool(
                        self.settings.query_workers,
                        memory_mib=self.settings.query_memory,
                        backend_auth=self.settings.backend_auth,
                        retire_after=self.settings.query_worker_idle,
                    )
        return self._pool

    def _current(self) -> Path | None:
        """The generation this request reads: the current one when it first asks, then the same
        for the rest of the request (outside a request, the current one each time)."""
        if has_request_context() and PINNED in g:
            return cast(Path | None, g.get(PINNED))
        generation = self._newest()
        if has_request_context():
            setattr(g, PINNED, generation)
        return generation

    def _newest(self) -> Path | None:
        """The current generation, holding every update the writer acknowledged: the writer
        publishes a burst of updates as one generation a little after acknowledging them, so a
        read that comes sooner (one stat of the journal says so) asks it to publish first."""
        generation = current_generation(self.settings.store)
        if generation is None or not self.settings.update_token:
            return generation
        if journal_behind(self.settings.store, generation):
            try:
                self.writer.publish(
                    self.settings.store, reasoner=self.settings.reasoner, timeout=self.settings.query_timeout
                )
            except IclrKgError as exc:  # the update's own request saw the error; readers go on reading
                print(f"reading the generation before the last updates: {exc}", file=sys.stderr, flush=True)
            generation = current_generation(self.settings.store)
        return generation

    def generation_key(self) -> str:
        """The current generation's path, for the workers (each update makes a new generation);
        on a remote backend, the engine's URL and the generation published there."""
        if self.backend is not None:
            store = self.backend.store()
            self._seen(self._remote_folder(store))
            return store.key
        generation = self._current()
        if generation is None:
            open_read_only(self.settings.store)  # raises the clear "no store" error
        self._seen(generation)
        return str(generation)

    def store(self) -> ReadableGraph:
        """A read-only handle on the current generation, reopened when `current` moves (on a
        remote backend: the engine, as published last)."""
        if self.backend is not None:
            return self.backend.store()
        generation = self._current()
        if generation is None:
            return open_read_only(self.settings.store)  # raises the clear "no store" error
        opened = self._stores.get(generation)
        if opened is not None:
            return opened
        with self._lock:
            if generation not in self._stores:
                self._stores[generation] = open_read_only(self.settings.store, generation)
                for older in sorted(self._stores, key=lambda path: path.name)[:-2]:  # requests on it finish
                    del self._stores[older]
            self._seen(generation)
            return self._stores[generation]

    def _seen(self, generation: Path | None) -> None:
        """Start the warmers (`warm`) the first time this process sees a generation; on a remote
        engine, also prune what was kept for its older publications (`prune_kept_beside`)."""
        if generation is not None and generation != self._warmed:
            self._warmed = generation
            if self.backend is not None and generation.parent.is_dir():
                prune_kept_beside(generation)
            for start in self._warmers:
                start(generation.name)

    def index(self) -> Index | None:
        """The current generation's entity index (labels, search, lists); built here if the
        generation predates indexes. None when there is no store yet."""
        if self.backend is not None:
            return self._remote_index()
        generation = self._current()
        if generation is None:
            return None
        self._seen(generation)
        return self._index_of(generation, lambda: Store.read_only(str(generation)))

    def _index_of(self, generation: Path, store: Callable[[], ReadableGraph]) -> Index:
        """The index beside `generation`, checked once per process to be there and of this
        schema (else built from `store()`, under the lock)."""
        path = index_path(generation)
        if path not in self._indexed:
            if not current_index(path):
                with self._lock:
                    generation.parent.mkdir(parents=True, exist_ok=True)
                    ensure_index(store(), generation)
            self._indexed.add(path)
        return Index(path)

    def _remote_index(self) -> Index:
        """The index of the generation published on the remote engine, built from the engine
        once per generation and kept in its folder (labels, search and lists read it)."""
        store = self.backend.store()  # type: ignore[union-attr]
        return self._index_of(self._remote_folder(store), lambda: store)

    def _remote_folder(self, store: RemoteStore) -> Path:
        """Where what this server keeps for a generation published on a remote engine lives
        (its index, its kept values): `STORE/remote/<engine>/<generation>`. The generation's name
        comes from the engine: hashed, never joined onto a path as it is (an absolute path or
        `../` in it would choose where files are written)."""
        folder = self.settings.store / "remote" / hashlib.sha256(store.key.encode()).hexdigest()[:16]
        return folder / hashlib.sha256(store.publication.generation.encode()).hexdigest()[:16]

    def generation_folder(self) -> Path | None:
        """The folder of the generation being read, where values kept for it live: the
        generation itself, or its folder for a remote engine's publication (None: no store)."""
        if self.backend is None:
            folder = self._current()
        else:
            folder = self._remote_folder(self.backend.store())
            folder.parent.mkdir(parents=True, exist_ok=True)  # what is kept lives beside it
        self._seen(folder)
        return folder

    def per_generation(self, name: str, compute: Callable[[], T], kept: bool = False) -> T:
        """`compute()`, once per store generation: what is derived from the store and read often
        (the default graph's size, the editor's vocabulary) is recomputed only when `current` moves.

        `kept`: the value (plain data) is also kept beside the generation (`store.kept_beside`),
        so that the other web processes and a restarted server read it instead of computing it
        again; one process computes it while the others wait for it (an flock)."""
        folder = self.generation_folder()  # one look at `current`: key and file agree
        generation = folder.name if folder else ""
        cached = self._derived.get(name)
        if cached is None or cached[0] != generation:
            value = self._kept(folder, name, compute) if kept and folder is not None else compute()
            cached = self._derived[name] = (generation, value)
        return cached[1]

    def _kept(self, folder: Path, name: str, compute: Callable[[], T]) -> T:
        path = kept_beside(folder, name)
        with open(kept_beside(folder, name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            try:
                return json.loads(path.read_text(encoding="utf-8"))
            except (FileNotFoundError, ValueError):
                value = compute()
                write_text(path, json.dumps(value, ensure_ascii=False))
                return value

    def warm(self, app: Any, values: Callable[[], list[tuple[str, Callable[[], Any]]]]) -> None:
        """Compute kept values (name, compute) for a new generation in the background, one after
        another on one thread (one query worker at most), soon after a request first sees it:
        WARM_AFTER seconds, and while it stays current (a burst of updates makes one generation
        after another). The first reader of /stats or of a saved query then waits for nothing."""

        def run(generation: str) -> None:
            time.sleep(WARM_AFTER)
            with app.app_context():
                for name, compute in values():
                    if getattr(self.generation_folder(), "name", None) != generation:
                        return
                    if not self._worker_idle():
                        continue  # readers first: a reader computes this one when it asks
                    with contextlib.suppress(Exception):  # a failure is the reader's to see, as before
                        self.per_generation(name, compute, kept=True)

        self._warmers.append(lambda generation: threading.Thread(target=run, args=(generation,), daemon=True).start())

    def _worker_idle(self, patience: float = WARM_PATIENCE) -> bool:
        """A query worker is idle now, or becomes idle within `patience` seconds: the warmer
        only uses workers that readers leave free (and waits for none, as a reader would)."""
        if self.settings.query_workers == 0:
            return True
        deadline = time.monotonic() + patience
        while self.pool.idle == 0:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    @property
    def generation(self) -> str:
        if self.backend is not None:
            return self.backend.store().publication.generation
        generation = self._current()
        self._seen(generation)
        return generation.name if generation else ""
