"""What a build did (stages with their seconds, quads per graph, how it was made): filled in by
the pipeline and by an incremental build, read by the CLI. Its own module so that neither of
those imports the other for it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from iclr_kg.progress import Progress, Stage

T = TypeVar("T")


@dataclass
class BuildReport:
    """What a build did: seconds per stage and triples per graph."""

    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    generation: str = ""
    mode: str = "full build"  # "incremental" (build/incremental.py), or why the build was full
    curation: list[str] = field(default_factory=list)  # what a curator should look at
    journal: tuple[int, int] = (0, 0)  # the journal's entries taken from its checkpoint, and those replayed
    progress: Progress = field(default_factory=Progress.silent)
    # What a full build made and still holds (the inferred graph, the closure's hidden facts,
    # the compiled graph's rest; its asserted tuples are freed as they are stored), held until
    # the report goes: the CLI ends its process right after a build (`cli.end_program`), and
    # freeing all of it one by one took 0.21 s at 10,000 papers, after everything was stored.
    made: list[Any] = field(default_factory=list, repr=False)

    @contextlib.contextmanager
    def stage(self, name: str, unit: str = "", total: int | None = None, key: str | None = None) -> Iterator[Stage]:
        """One stage, shown by `progress` and timed under `key` (its name by default) if it
        succeeds: its own `seconds` where it ran elsewhere, else the time the block took."""
        start = time.perf_counter()
        with self.progress.stage(name, total=total, unit=unit) as shown:
            yield shown
        self.timings[key or name] = shown.seconds if shown.seconds is not None else time.perf_counter() - start

    def timed(self, stage: str, run: Callable[[], T], unit: str = "", count: Callable[[T], int] | None = None) -> T:
        """Run one stage (`stage`), with how many `unit` it made, if `count`."""
        with self.stage(stage, unit) as shown:
            result = run()
            if count is not None:
                shown.advance(count(result))
        return result

    def summary(self) -> str:
        total = sum(self.counts.values())
        stages = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.timings.items())
        lines = [
            f"built {total:,} quads in {len(self.counts)} graphs, each also in the merged default graph "
            f"({self.mode}; {stages})"
        ]
        folded, replayed = self.journal
        if folded or replayed:
            lines.append(f"journal: {replayed:,} update(s) replayed, {folded:,} taken from its checkpoint")
        return "\n".join(lines + [f"curation: {line}" for line in self.curation])
