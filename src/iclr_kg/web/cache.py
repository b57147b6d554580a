"""A result cache for the endpoint: the store is read-only between builds, so the same query asks
for the same bytes until the next build.

Keys hold the store generation, so a rebuild (or an update) starts afresh without any flush.
Only deterministic queries are kept (no SERVICE, no NOW/RAND/UUID/BNODE), and only results a
worker sent whole in its first message (complete, and under 64 KiB: large results stream
straight through and are never copied), within a byte budget per web process, least recently
used out first.
A hit skips the query worker hop and the evaluation: on repeated point lookups (entity pages,
saved queries) that is most of a request's cost. `ICLR_KG_RESULT_CACHE=0` turns it off.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

# Functions whose value changes between evaluations, and calls to other services.
VOLATILE = re.compile(r"\b(?:SERVICE|NOW|RAND|UUID|STRUUID|BNODE)\b", re.IGNORECASE)
ITEM_LIMIT = 256 * 1024


@dataclass(frozen=True)
class Cached:
    body: bytes
    media_type: str
    etag: str


class ResultCache:
    """LRU of serialized results, bounded in bytes; safe for the web process's threads."""

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.size = 0
        self.hits = self.misses = 0
        self._items: OrderedDict[tuple, Cached] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def cacheable(text: str) -> bool:
        return not VOLATILE.search(text)

    def get(self, key: tuple) -> Cached | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: tuple, body: bytes, media_type: str) -> Cached | None:
        if len(body) > min(ITEM_LIMIT, self.budget):
            return None
        item = Cached(body, media_type, '"' + hashlib.blake2b(repr(key).encode() + body, digest_size=12).hexdigest() + '"')
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.size -= len(old.body)
            self._items[key] = item
            self.size += len(body)
            while self.size > self.budget:
                _, evicted = self._items.popitem(last=False)
                self.size -= len(evicted.body)
        return item
