"""Progress of long work, one helper for every command that takes a while.

On a terminal each stage is a live tqdm bar (stage, count, rate, time left where the total is
known); elsewhere (a log, a pipe, CI) nothing moves and each stage says one line when it ends:
`reason: 512,448 triples in 12.9 s (39,700/s)`. The build, the OpenReview import, Wikidata
linking and exports all report through `Progress`; library code takes one and defaults to
`Progress.silent()`, so tests and the web app print nothing.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterable, Iterator
from typing import IO, TypeVar

from tqdm import tqdm

from iclr_kg.config import Settings

T = TypeVar("T")


class Stage:
    """One stage under way: `advance` as work gets done, `total` once it is known."""

    def __init__(self, bar: tqdm | None) -> None:
        self.bar, self.count = bar, 0
        self.seconds: float | None = None  # the stage's own time, where it ran elsewhere (a child process)

    def advance(self, n: int = 1) -> None:
        self.count += n
        if self.bar is not None:
            self.bar.update(n)

    def total(self, total: int) -> None:
        if self.bar is not None:
            self.bar.total = total
            self.bar.refresh()

    def track(self, items: Iterable[T], every: int = 10_000) -> Iterator[T]:
        """Pass `items` through, advancing every `every` items (a bar update per item is slow)."""
        pending = 0
        for item in items:
            yield item
            pending += 1
            if pending == every:
                self.advance(pending)
                pending = 0
        self.advance(pending)


class Progress:
    """Where stages report: a terminal (bars), a stream (a line per stage), or nowhere."""

    def __init__(self, stream: IO[str] | None, live: bool) -> None:
        self.stream, self.live = stream, live

    @classmethod
    def for_terminal(cls, settings: Settings, stream: IO[str] = sys.stderr) -> Progress:
        """Bars if `stream` is a terminal (and `settings.progress`), else a line per stage."""
        return cls(stream, stream.isatty() and settings.progress)

    @classmethod
    def silent(cls) -> Progress:
        return cls(None, False)

    @contextlib.contextmanager
    def stage(self, name: str, total: int | None = None, unit: str = "items") -> Iterator[Stage]:
        """A stage: a bar while it runs on a terminal; one line when it ends elsewhere."""
        started = time.perf_counter()
        bar = (
            tqdm(
                total=total,
                desc=name,
                unit=f" {unit}",
                unit_scale=True,
                file=self.stream,
                leave=True,
                dynamic_ncols=True,
            )
            if self.live
            else None
        )
        stage = Stage(bar)
        try:
            yield stage
        except BaseException:  # the error is the one line said: a failed stage says nothing
            if bar is not None:
                bar.leave = False
                bar.close()
            raise
        if bar is not None:
            bar.close()
        elif self.stream is not None:
            seconds = stage.seconds if stage.seconds is not None else time.perf_counter() - started
            rate = f" ({stage.count / seconds:,.0f}/s)" if stage.count >= 1000 and seconds > 0.05 else ""
            counted = f"{stage.count:,} {unit} in " if stage.count else ""
            print(f"{name}: {counted}{seconds:.1f} s{rate}", file=self.stream, flush=True)
