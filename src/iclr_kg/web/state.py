"""What the app keeps between requests: the open store (reopened after a rebuild), saved queries."""

from __future__ import annotations

import contextlib
import fcntl
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from flask import current_app, has_request_context, request

from iclr_kg import terms
from iclr_kg.atomic import write_text
from iclr_kg.config import Settings
from iclr_kg.errors import IclrKgError
from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index, current_index, ensure_index, index_path
from iclr_kg.processes import memory_limit
from iclr_kg.query.pool import Evaluator, InProcess, OnWorkers, QueryPool, Target
from iclr_kg.served import Generation, Served, served
from iclr_kg.sparql.querytext import keepable
from iclr_kg.sparql.saved import SavedQuery, load_saved
from iclr_kg.store import current_generation, journal_behind, kept_beside, kept_for_writing
from iclr_kg.updates import Writer
from iclr_kg.web.cache import ResponseMemo, ResultCache

if TYPE_CHECKING:
    from iclr_kg.query.local import LocalLane

T = TypeVar("T")
WARM_AFTER = 2.0  # seconds a new generation must stay current before its kept values are computed
WARM_PATIENCE = 5.0  # seconds the warmer waits for an idle query worker before it skips a value


PINNED = "iclr_kg.generation"  # in a request's WSGI environ: the generation it reads (AppState.pin)


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
        # What is read: the store's generations, or a remote engine's publication (served.py).
        self.served: Served = served(settings, catch_up=self._caught_up)
        self._lock = threading.Lock()
        self._stores: dict[str, ReadableGraph] = {}  # the generations requests read now (by key): the newest two
        self.saved: dict[str, SavedQuery] = load_saved(settings.queries_dir)
        # A saved query's default answer, as a request asks it, when it may be kept (web/answers.py).
        self.answered = {
            asked: saved for saved in self.saved.values() if keepable(saved.text) for asked in saved.default_requests()
        }
        self._pool: QueryPool | None = None
        # Where queries run, chosen once (query/pool.py's Evaluator): in the request's thread
        # (`query_workers = 0`), or in worker processes; `install_lane` puts the lane in front.
        self.evaluator: Evaluator = InProcess() if settings.query_workers == 0 else OnWorkers(lambda: self.pool)
        self.lane: LocalLane | None = None  # set by the server where it can replace this process
        self._writer: Writer | None = None
        # Keyed by generation: an update (from any web process) makes a new one, so nothing stale is served.
        self.cache = ResultCache(settings.result_cache * 2**20) if settings.result_cache > 0 else None
        self._derived: dict[str, tuple[str, Any]] = {}  # name -> (generation, value): see per_generation
        self.memo: ResponseMemo | None = None  # set by create_app: whole responses answered before Flask
        self._indexed: set[Path] = set()  # generations whose index this process found current
        self._warmers: list[Callable[[str], None]] = []  # started for each new generation (warm)
        self._warmed: Generation | None = None

    def terms(self) -> terms.Terms:
        """The ontology's terms and labels (read once per ontology file; every generation's
        ontology graph is loaded from it)."""
        return terms.read(self.ontology_file)

    @property
    def ontology_file(self) -> Path:
        """The ontology the pages and the lint read (query workers too: QueryRequest.ontology)."""
        return self.settings.ontology_dir / "iclr.ttl"

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
        if self.served.evaluates_here and self.settings.query_workers > 0:
            from iclr_kg.query.local import LocalLane

            memory = memory_limit(self.settings.query_memory)
            share = max(1, self.settings.query_workers // 2)
            self.lane = LocalLane(
                self.store, retire, threads, share, memory, self.settings.client_queries, fallback=self.evaluator
            )
            self.evaluator = self.lane

    def start_workers(self) -> None:
        """Start the query worker pool now, in the background (a web process that serves calls it
        as it starts): the first page that lints a query, counts or warms a value does not wait
        for an interpreter to start (1-2 s). One worker starts, what a server at rest keeps."""
        if self.settings.query_workers > 0:
            threading.Thread(target=lambda: self.pool, name="iclr-kg-start-workers", daemon=True).start()

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
                        client_queries=self.settings.client_queries,
                        start=1,  # what a server at rest keeps; concurrent queries start the others
                    )
        return self._pool

    def pin(self, environ: dict[str, Any]) -> Generation | None:
        """The generation the request of `environ` reads: what is served when it first asks,
        kept in its environ for the rest of the request, for the WSGI layers in front of Flask
        and the Flask view alike (one lookup per request: web/readrequest.py)."""
        if PINNED in environ:
            return cast(Generation | None, environ[PINNED])
        generation = environ[PINNED] = self.served.current()
        if generation is not None:
            self._seen(generation)
        return generation

    def pinned_key(self, environ: dict[str, Any]) -> str | None:
        """The key of the generation the request of `environ` reads (`pin`; None: nothing yet)."""
        generation = self.pin(environ)
        return None if generation is None else generation.key

    def _current(self) -> Generation | None:
        """The generation this request reads (`pin`; outside a request, what is served now)."""
        if has_request_context():
            return self.pin(request.environ)
        generation = self.served.current()
        if generation is not None:
            self._seen(generation)
        return generation

    def pinned(self, environ: dict[str, Any] | None = None) -> Generation:
        """The generation this request (or the one of `environ`) reads; the clear error where
        there is none yet."""
        generation = self._current() if environ is None else self.pin(environ)
        if generation is None:
            self.served.missing()
        return generation

    def _caught_up(self, generation: Path) -> Path | None:
        """The current generation, holding every update the writer acknowledged: the writer
        publishes a burst of updates as one generation a little after acknowledging them, so a
        read that comes sooner (one stat of the journal says so) asks it to publish first."""
        if not self.settings.update_token or not journal_behind(self.settings.store, generation):
            return generation
        try:
            self.writer.publish(
                self.settings.store, reasoner=self.settings.reasoner, timeout=self.settings.query_timeout
            )
        except IclrKgError as exc:  # the update's own request saw the error; readers go on reading
            print(f"reading the generation before the last updates: {exc}", file=sys.stderr, flush=True)
        return current_generation(self.settings.store)

    def generation_key(self) -> str:
        """What the query workers open the generation this request reads by: its path (each
        update makes a new generation), or the engine's URL and the generation published there."""
        return self.pinned().key

    def store(self) -> ReadableGraph:
        """A read-only handle on the generation this request reads."""
        return self.opened(self.pinned())

    def target(self, generation: Callable[[], Generation] | None = None) -> Target:
        """What a query of this request reads (query/pool.py's Target): `generation`, else the
        one this request pins, each looked at only by the evaluator that needs it."""
        return _Reads(self, generation or self.pinned)

    def opened(self, generation: Generation) -> ReadableGraph:
        """A read-only handle on `generation`, opened once per generation (the newest two stay
        open: requests on the older one finish); StoreDamaged where it was found damaged."""
        self.served.intact(generation)
        opened = self._stores.get(generation.key)
        if opened is not None:
            return opened
        with self._lock:
            if generation.key not in self._stores:
                self._stores[generation.key] = self.served.open(generation)
                for older in list(self._stores)[:-2]:  # opened in time order
                    del self._stores[older]
            return self._stores[generation.key]

    def _seen(self, generation: Generation) -> None:
        """Start the warmers (`warm`) the first time this process sees a generation (and let the
        backend tidy what it kept for the ones before)."""
        if generation != self._warmed:
            self._warmed = generation
            self.served.seen(generation)
            for start in self._warmers:
                start(generation.folder.name)  # as per_generation names it

    def index(self) -> Index | None:
        """The entity index of the generation this request reads (labels, search, lists): built
        here if the generation predates indexes, or, for a remote engine's publication, from the
        engine once and kept in its folder. None when there is no store yet."""
        generation = self._current()
        if generation is None:
            return None
        path = index_path(generation.folder)
        if path not in self._indexed:
            if not current_index(path):
                graph = self.store()  # opened before the lock, which opening takes
                with self._lock:
                    ensure_index(graph, generation.folder)
            self._indexed.add(path)
        return Index(path)

    def generation_folder(self) -> Path | None:
        """The folder of the generation being read, where values kept for it live: the
        generation itself, or its folder for a remote engine's publication (None: no store)."""
        generation = self._current()
        return generation.folder if generation is not None else None

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
        path = kept_for_writing(folder, name)
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
        """The name of the generation this request reads ("" before the first build)."""
        generation = self._current()
        return generation.name if generation is not None else ""


class _Reads:
    """The Target of one request's queries: a generation, and this process's handle on it."""

    def __init__(self, state: AppState, generation: Callable[[], Generation]):
        self.state, self.generation = state, generation

    def key(self) -> str:
        return self.generation().key

    def graph(self) -> ReadableGraph:
        return self.state.opened(self.generation())

    def intact(self) -> bool:
        return self.state.served.intact(self.generation())
