"""Threads with a stack deep enough for what Oxigraph recurses on.

Oxigraph parses, plans and evaluates a query or an update by recursion over its tree; a thread
whose stack runs out dies with the whole process (SIGSEGV). On the 8 MiB a thread gets by
default, a few thousand operators, nested groups or BINDs were enough (the figures:
docs/performance.md#deep-stacks). querytext.py bounds the brackets and operators of a text;
what it does not count (BIND, FILTER, UNION... one after another) costs several characters a
level, and the text's length is bounded too.

So every thread that hands text to Oxigraph is started here, with `STACK` bytes: 32 times the
default, which holds the bounded chains with room to spare and more levels of any other kind
than the longest text accepted can write. The stack is address space, not memory: pages are
touched only as deep as a query goes; a process capped in address space (a query worker, the
writer) gives it a quarter of its cap (`stack_within`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

STACK = 256 * 2**20

_creating = threading.Lock()  # threading.stack_size is the process's: set it, start, set it back


def start_thread(
    target: Callable[..., Any], *, name: str, args: tuple[Any, ...] = (), daemon: bool = True, stack: int = STACK
) -> threading.Thread:
    """Start `target(*args)` on a new thread with a `stack`-byte stack (0: the platform's default)."""
    with _creating:
        before = threading.stack_size(stack)
        try:
            thread = threading.Thread(target=target, args=args, name=name, daemon=daemon)
            thread.start()
        finally:
            threading.stack_size(before)
    return thread


def stack_within(memory_mib: int) -> int:
    """The stack for a thread of a process capped at `memory_mib` MiB of address space (0: none)."""
    return STACK if memory_mib <= 0 else min(STACK, memory_mib * 2**20 // 4)
