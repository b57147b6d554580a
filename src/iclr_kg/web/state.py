"""What the app keeps between requests: the open store (reopened after a rebuild), saved queries."""

from __future__ import annotations

import threading
from pathlib import Path

from pyoxigraph import Store

from ..config import Settings
from ..saved import SavedQuery, load_saved
from ..pool import QueryPool
from .cache import ResponseMemo, ResultCache
from ..store import current_generation, open_read_only


class AppState:
    """Holds one read-only handle on the current store generation.

    Each request asks for `store()`, which checks (one readlink) whether a build has swung
    `current` to a new generation and, if so, opens that one: a rebuild goes live without a
    restart, and requests already running finish on the handle they had.
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        self._lock = threading.Lock()
        self._generation: Path | None = None
        self._store: Store | None = None
        self._writable: Store | None = None
        self._writable_generation: Path | None = None
        self.saved: dict[str, SavedQuery] = load_saved(settings.queries_dir)
        self._pool: QueryPool | None = None
        self.updates = 0  # bumped by /update so workers reopen a fresh snapshot
        # No cache with updates enabled: an update in one web process would not reach the others' caches.
        cached = settings.result_cache > 0 and not settings.update_token
        self.cache = ResultCache(settings.result_cache * 2**20) if cached else None
        self.memo: ResponseMemo | None = None  # set by create_app: whole responses answered before Flask

    @property
    def pool(self) -> QueryPool:
        """The query worker processes, started on first use."""
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = QueryPool(self.settings.query_workers, memory_mib=self.settings.query_memory)
        return self._pool

    def generation_key(self) -> Path | str:
        """The current generation's path (plus the update count) for the workers."""
        generation = current_generation(self.settings.store)
        if generation is None:
            open_read_only(self.settings.store)  # raises the clear "no store" error
        return f"{generation}#{self.updates}" if self.updates else str(generation)

    def store(self) -> Store:
        """The store to query: read-only, or the writable handle when updates are enabled."""
        if self.settings.update_token:
            return self.writable_store()
        generation = current_generation(self.settings.store)
        if self._store is not None and generation == self._generation:
            return self._store
        with self._lock:
            if self._store is None or generation != self._generation:
                self._store = open_read_only(self.settings.store)
                self._generation = generation
            return self._store

    def writable_store(self) -> Store:
        """A read-write handle on the current generation (only used with an update token).

        Updates change the served generation only; the next build, from data/, replaces them.
        """
        generation = current_generation(self.settings.store)
        with self._lock:
            if self._writable is None or generation != self._writable_generation:
                if generation is None:
                    open_read_only(self.settings.store)  # raises the clear "no store" error
                self._writable = Store(str(generation))
                self._writable_generation = generation
            return self._writable

    @property
    def generation(self) -> str:
        generation = current_generation(self.settings.store)
        return generation.name if generation else ""
