"""Child processes of ours (query workers, the update writer, store checks): how they start,
and the memory they may take.

Low in the layout on purpose: the query pool, the store and the writer all start children, and
none of them may import another for it (that was an import cycle: pool -> store -> pool).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import sys
import threading
from typing import Any, NoReturn

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# How a child of ours exits when it runs out of the memory it may take (`limit_address_space`):
# its parent tells the limit from a crash by it, says so and starts a fresh child
OUT_OF_MEMORY = 3


def exit_out_of_memory() -> NoReturn:
    """End this child at once, as having run out of memory (no cleanup: memory is what it lacks)."""
    os._exit(OUT_OF_MEMORY)


def default_query_memory() -> int:
    """MiB of address space per query worker: a twelfth of the machine, between 1 and 4 GiB.

    Two web processes with four workers each then stay within two thirds of memory even if every
    worker runs a runaway query at once."""
    try:
        total = PAGE_SIZE * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError, AttributeError):
        return 2048
    return max(1024, min(4096, total // 12))


def memory_limit(setting: int | None) -> int:
    """MiB of address space for a query worker, the writer or a store check: the setting
    (`ICLR_KG_QUERY_MEMORY`; 0 means no limit), or `default_query_memory()` where it is unset."""
    return default_query_memory() if setting is None else setting


M_ARENA_MAX = -8  # mallopt(3), glibc's <malloc.h>


def limit_address_space(memory_mib: int) -> None:
    """Cap this process (a query worker, the update writer, a store check) at `memory_mib` MiB of
    address space, so a runaway query aborts it, not the machine; 0: no cap.

    glibc gives each new thread its own malloc arena and reserves 64 MiB of address space for
    it. RocksDB and Oxigraph start threads, so a worker that had answered `ASK {}` held many times
    its resident memory as address space, and a capped worker could not start a thread
    ("Resource temporarily unavailable") and died on its first query. Two arenas keep the
    reservation near what is used, so the cap measures memory (docs/performance.md, measured choices)."""
    if memory_mib <= 0:
        return
    with contextlib.suppress(OSError, AttributeError):  # not glibc: no arenas to cap
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 2)
    limit = memory_mib * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


_SPAWN_LOCK = threading.Lock()
_UNPINNED: set[int] | None = None  # the CPUs this process could use before `pin_to_cores`


def pin_to_cores(slot: int, slots: int) -> None:
    """Keep this web process (the calling thread and every thread it starts after) on its
    share of the CPUs: slot i of n takes every n-th one from the i-th.

    A query is evaluated on an evaluator thread while the request's thread waits (query/local.py).
    Unpinned, the scheduler woke the evaluator on the other core, away from the data the request
    thread had just touched, and a join cost more CPU per request than with the process on one
    core (docs/performance.md, measured choices).
    The children it starts are not pinned (`start_without_main`)."""
    global _UNPINNED
    if not hasattr(os, "sched_setaffinity"):
        return
    cpus = sorted(os.sched_getaffinity(0))
    share = set(cpus[slot % slots :: slots]) if slots <= len(cpus) else {cpus[slot % len(cpus)]}
    if len(cpus) > 1:
        _UNPINNED = set(cpus)
        os.sched_setaffinity(0, share)


def start_without_main(process: Any) -> None:
    """Start a spawned process without re-importing the parent's main module in it, on every
    CPU this process had before `pin_to_cores`.

    A spawned child imports the parent's `__main__` first (multiprocessing's rule, so that
    functions defined there can be found). Ours is the `iclr-kg` script or gunicorn: importing
    it brings the CLI, the settings' pydantic models and click into every query worker, 9 MiB
    each for code a worker never runs (its target lives in this package). multiprocessing
    decides from `__main__.__spec__` and `__main__.__file__` while `start()` runs, so they are
    hidden for that moment (under a lock: two threads starting workers must not interleave).
    """
    main = sys.modules["__main__"]
    with _SPAWN_LOCK:
        saved = {name: main.__dict__[name] for name in ("__spec__", "__file__") if name in main.__dict__}
        pinned = os.sched_getaffinity(0) if _UNPINNED is not None else None
        try:
            main.__dict__["__spec__"] = None
            main.__dict__.pop("__file__", None)
            if _UNPINNED is not None:  # the child inherits the starting thread's CPUs: all of them
                os.sched_setaffinity(0, _UNPINNED)
            process.start()
        finally:
            main.__dict__.update(saved)
            if "__file__" not in saved:
                main.__dict__.pop("__file__", None)
            if pinned is not None:
                os.sched_setaffinity(0, pinned)
