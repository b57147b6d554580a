"""Faults: a build killed at any moment, concurrent builds, a corrupt store, serving through a rebuild."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from iclr_kg.build.pipeline import build
from iclr_kg.config import Settings
from iclr_kg.store import current_generation, damage, open_read_only
from testbed import synth
from testbed.helpers import CLI, eventually, free_port, query_workers_started, serving, wait_for

from .conftest import select

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"


@pytest.fixture(scope="module")
def big_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Synthetic data large enough that a build takes about a second, to kill at different points."""
    return synth.write(400, tmp_path_factory.mktemp("big") / "data")


@pytest.fixture(scope="module")
def big_build(big_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, str]], float]:
    """What COUNT answers on a store built whole from `big_data`, and the seconds `iclr-kg build`
    took to make it: the kills below land at fractions of that, wherever the build is today."""
    store = tmp_path_factory.mktemp("big-store")
    start = time.perf_counter()
    subprocess.run([CLI, "build", "--store", str(store)], env=_with_data(big_data), check=True, capture_output=True)
    return select(open_read_only(store), COUNT), time.perf_counter() - start


def _with_data(data: Path) -> dict[str, str]:
    return {**os.environ, "ICLR_KG_DATA_DIR": str(data)}


@pytest.mark.parametrize("fraction", [0.1, 0.4, 0.7, 0.95, 1.5])
def test_a_build_killed_at_any_point_leaves_the_old_store(
    tiny_data, big_data: Path, big_build: tuple[list[dict[str, str]], float], fraction: float
) -> None:
    """Killed before it publishes, a build leaves the old store as it was; killed after (while it
    saves its incremental state or prints its report), the new store is already whole."""
    _kill_a_build(tiny_data(), big_data, big_build[0], lambda process, before: time.sleep(fraction * big_build[1]))


def test_a_build_killed_right_after_it_publishes_leaves_the_new_store_whole(
    tiny_data, big_data: Path, big_build: tuple[list[dict[str, str]], float]
) -> None:
    """Regression: the kill once landed between publishing and the process's end, and the test
    expected the old store; the new one was whole, as it must be."""

    def until_published(process: subprocess.Popen, before: Path) -> None:
        while process.poll() is None and current_generation(settings.store) == before:
            time.sleep(0.001)

    settings = tiny_data()
    assert _kill_a_build(settings, big_data, big_build[0], until_published) == "new"


def _kill_a_build(
    settings: Settings,
    data: Path,
    whole: list[dict[str, str]],
    wait: Callable[[subprocess.Popen, Path], None],
) -> str:
    """Build `settings` (tiny), start `iclr-kg build` of `data` over it, SIGKILL it once `wait`
    returns, and check the store: the old one as it was or the new one whole (COUNT = `whole`);
    then the next build works and removes what the killed one left. Says which store it found."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("iclr_kg.store.pruning.KEEP_SECONDS", 0)  # no grace for readers of replaced generations here
        build(settings)
        before, count = current_generation(settings.store), select(open_read_only(settings.store), COUNT)
        process = subprocess.Popen(
            [CLI, "build", "--store", str(settings.store)],
            env=_with_data(data),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait(process, before)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        assert process.returncode in (0, -signal.SIGKILL)
        found = "old" if current_generation(settings.store) == before else "new"
        if found == "old":
            assert process.returncode == -signal.SIGKILL
            assert select(open_read_only(settings.store), COUNT) == count
        else:
            assert select(open_read_only(settings.store), COUNT) == whole != count
        good = current_generation(settings.store)
        build(settings)  # the lock died with the process; the next build works and prunes leftovers
        assert _generations_left(settings.store) == {good, current_generation(settings.store)}  # the killed one's gone
    return found


def _generations_left(store: Path) -> set[Path]:
    """The generation folders in `store`; what is kept beside one (`<id>.kept/`) belongs to one of
    them (no leftovers of a killed or partial build)."""
    folders = {p for p in (store / "generations").iterdir() if p.is_dir()}
    generations = {p for p in folders if "." not in p.name}
    assert {p.name for p in folders - generations} <= {g.name + ".kept" for g in generations}
    return generations


def test_partial_generations_are_removed_and_never_count_as_kept(tiny_store: Settings) -> None:
    """Regression (hardening #12): killed builds left 0-quad folders; the next good build kept
    them and deleted the previous good generation."""
    settings = tiny_store
    good = current_generation(settings.store)
    for name in ("20991231T000000-1-1", "20991231T000000-1-2"):  # newer names than any real build
        (settings.store / "generations" / name).mkdir()
    build(settings)
    assert _generations_left(settings.store) == {good, current_generation(settings.store)}
    assert int(select(open_read_only(settings.store), COUNT)[0]["n"]) > 0


def test_a_generation_being_made_by_a_live_process_is_never_pruned(tiny_store: Settings) -> None:
    """Regression: RocksDB creates a generation's folder before it locks it; an update's prune in
    between deleted a build's folder under it (the build then failed on a missing .sst file). The
    `.loading` marker, written first, names the process making it."""
    import multiprocessing

    settings = tiny_store
    generations = settings.store / "generations"
    alive, dead = generations / "20991231T000000-1-1", generations / "20991231T000000-1-2"
    child = multiprocessing.get_context("spawn").Process(target=int)
    child.start()
    child.join()
    for folder, pid in ((alive, os.getpid()), (dead, child.pid)):
        folder.mkdir()
        folder.with_name(f"{folder.name}.loading").write_text(str(pid))
    build(settings)
    assert alive.exists() and not dead.exists()


def _locked(lock_file: Path) -> bool:
    """Whether a process holds a flock on `lock_file`, read from /proc/locks: probing by taking
    the lock ourselves could make the build we wait for find it taken."""
    if not lock_file.exists():
        return False
    inode = os.stat(lock_file).st_ino
    with open("/proc/locks", encoding="ascii") as locks:
        return any(f[1] == "FLOCK" and f[5].rsplit(":", 1)[-1] == str(inode) for f in map(str.split, locks))


def test_a_second_build_is_refused_with_a_clear_message(tiny_data, big_data: Path) -> None:
    settings = tiny_data()
    env = _with_data(big_data)
    first = subprocess.Popen(
        [CLI, "build", "--store", str(settings.store)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        eventually(
            lambda: _locked(settings.store / "build.lock") or first.poll() is not None,
            "the first build taking the lock",
            60,
        )
        assert first.poll() is None, "the first build ended before it took the lock"
        first.send_signal(signal.SIGSTOP)  # held there: it could finish (in about a second) before the second starts
        second = subprocess.run(
            [CLI, "build", "--store", str(settings.store)], env=env, capture_output=True, text=True, check=False
        )
        assert second.returncode == 1
        assert "another build of" in second.stderr and "is running" in second.stderr
    finally:
        first.send_signal(signal.SIGCONT)
        assert first.wait(timeout=300) == 0  # and, let go, it finishes


def test_a_corrupt_store_fails_at_start_with_a_clear_error(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / "generations" / "broken").mkdir(parents=True)
    (store / "generations" / "broken" / "CURRENT").write_text("garbage")
    (store / "current").symlink_to("generations/broken")
    done = subprocess.run(
        [CLI, "serve", "--store", str(store), "--port", "1"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert "cannot be opened" in done.stderr and "Traceback" not in done.stderr


def test_serve_keeps_serving_during_a_rebuild_and_switches_after(tiny_store: Settings, big_data: Path) -> None:
    settings = tiny_store
    with serving(settings.store) as (base, _):
        url = (
            f"{base}/sparql?query=" + urllib.parse.quote("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }") + "&format=json"
        )

        def count() -> int:
            with urllib.request.urlopen(url, timeout=20) as response:
                return int(json.loads(response.read())["results"]["bindings"][0]["n"]["value"])

        before = count()
        env = _with_data(big_data)
        rebuild = threading.Thread(
            target=subprocess.run,
            args=([CLI, "build", "--store", str(settings.store)],),
            kwargs={"env": env, "capture_output": True, "check": True},
        )
        rebuild.start()
        during = []
        while rebuild.is_alive():
            during.append(count())  # every request during the rebuild is answered
        rebuild.join()
        assert during and all(n == before for n in during[:1])
        assert count() > before  # the new store is live without a restart


def test_check_store_names_a_damaged_generation(tiny_store: Settings) -> None:
    """Regression (hardening #8): damaged SST files made stats hang or abort; check-store reads
    every generation whole in a child process with limits and names the damaged one."""
    settings = tiny_store
    ok = subprocess.run(
        [CLI, "check-store", "--store", str(settings.store)], capture_output=True, text=True, timeout=120, check=False
    )
    assert ok.returncode == 0 and ok.stdout.startswith("ok") and "(current)" in ok.stdout
    generation = current_generation(settings.store)
    for sst in generation.glob("*.sst"):
        data = bytearray(sst.read_bytes())
        for offset in range(len(data) // 4, len(data) * 3 // 4, 997):
            data[offset] ^= 0xFF
        sst.write_bytes(bytes(data))
    done = subprocess.run(
        [CLI, "check-store", "--store", str(settings.store)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"DAMAGED  {generation.name} (current)" in done.stdout and "iclr-kg build" in done.stderr
    assert "Traceback" not in done.stderr
    # stats and query read the damaged store in a worker under the limits: one line, no abort, no file
    out = settings.store.parent / "out.csv"
    for args in (["stats"], ["query", "SELECT * WHERE { ?s ?p ?o }", "-o", str(out)], ["export", "-o", str(out)]):
        failed = subprocess.run(
            [CLI, *args, "--store", str(settings.store)], capture_output=True, text=True, timeout=120, check=False
        )
        assert failed.returncode == 1, (args, failed.stdout, failed.stderr)
        assert failed.stderr.startswith("error: ") and failed.stderr.count("\n") == 1, failed.stderr
        assert "Traceback" not in failed.stderr
    assert not out.exists()


def test_a_damaged_store_behind_a_link_is_named_in_one_line(tiny_store: Settings) -> None:
    """Round four's item 14: a store reached through a symbolic link lost its current generation
    (check-store said DAMAGED without "(current)" and exited 0), and a missing table file made
    `stats` print the reader's allocator lines and blame the query's memory alone."""
    settings = tiny_store
    generation = current_generation(settings.store)
    largest = max(generation.glob("*.sst"), key=lambda p: p.stat().st_size)
    largest.unlink()
    link = settings.store.parent / "linked-store"
    link.symlink_to(settings.store)
    done = subprocess.run(
        [CLI, "check-store", "--store", str(link)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"DAMAGED  {generation.name} (current): " in done.stdout and largest.name in done.stdout
    failed = subprocess.run(
        [CLI, "stats", "--store", str(link)], capture_output=True, text=True, timeout=120, check=False
    )
    assert failed.returncode == 1 and failed.stdout == "", failed.stdout
    assert failed.stderr.startswith("error: ") and failed.stderr.count("\n") == 1, failed.stderr
    assert "iclr-kg check-store" in failed.stderr and "memory allocation" not in failed.stderr


# --- the journal and builds -------------------------------------------------------------------


def _race_triples(store: Path) -> set[int]:
    rows = open_read_only(store).query("SELECT ?n WHERE { <urn:race> <urn:n> ?n }")
    return {int(row["n"].value) for row in rows}


def test_a_torn_journal_line_is_ignored_and_cut_and_a_broken_one_is_named(tiny_store: Settings) -> None:
    """A writer killed mid-append leaves a last line without its newline: it was never
    acknowledged, so it is not replayed, and the next append cuts it off. A complete line that
    is not an entry stops the build with the file and line named."""
    from iclr_kg.errors import StoreError
    from iclr_kg.store import JOURNAL
    from iclr_kg.updates import Journal, apply

    settings = tiny_store
    apply(settings.store, "INSERT DATA { <urn:race> <urn:n> 1 }")
    journal = settings.store / JOURNAL
    with open(journal, "ab") as handle:
        handle.write(
            b'{"id": 2, "at": "2026-12-01T00:00:00Z", "kind": "update", "update": "INSERT DATA { <urn:race> <urn'
        )
    assert [e.id for e in Journal(settings.store).entries()] == [1]
    build(settings)  # replays entry 1 only
    assert _race_triples(settings.store) == {1}
    apply(settings.store, "INSERT DATA { <urn:race> <urn:n> 3 }")
    lines = journal.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(json.loads(line)["update"].startswith("INSERT DATA") for line in lines)
    assert _race_triples(settings.store) == {1, 3}
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write("not json\n")
    with pytest.raises(StoreError, match=rf"{JOURNAL}:3: not a journal entry"):
        build(settings)
    assert _race_triples(settings.store) == {1, 3}  # the last good store stays


def test_updates_racing_builds_are_all_kept(tiny_store: Settings) -> None:
    """Builds (in their own processes) and updates (here) at the same time: every acknowledged
    update is in the store at the end, whichever generation each build started from."""
    from iclr_kg.updates import apply

    settings = tiny_store
    acknowledged: list[int] = []
    env = {**os.environ, "ICLR_KG_DATA_DIR": str(settings.data_dir), "ICLR_KG_PROGRESS": "0"}

    def updates() -> None:
        for n in range(12):
            apply(settings.store, f"INSERT DATA {{ <urn:race> <urn:n> {n} }}")
            acknowledged.append(n)

    writer = threading.Thread(target=updates)
    writer.start()
    for _ in range(3):
        done = subprocess.run(
            [CLI, "build", "--full", "--store", str(settings.store)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    writer.join(timeout=120)
    assert acknowledged == list(range(12))
    assert _race_triples(settings.store) == set(acknowledged)
    build(settings)  # and once more from data/, replaying the journal
    assert _race_triples(settings.store) == set(acknowledged)


def _tree_rss(tree: psutil.Process) -> int:
    total = 0
    for process in [tree, *tree.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += process.memory_info().rss
    return total


def _settled_rss(tree: psutil.Process, seconds: float = 30) -> int:
    """The process tree's resident memory once it stops growing (by less than 8 MiB in half a
    second), or after `seconds`."""
    deadline, last = time.monotonic() + seconds, _tree_rss(tree)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _tree_rss(tree)
        if abs(now - last) < 8 * 2**20:
            return now
        last = now
    return last


def _damage_table_files(generation: Path) -> None:
    """Random bytes over blocks in the middle of each table file, as damage on disk leaves them."""
    rng = random.Random(11)
    for sst in sorted(generation.glob("*.sst")):
        size = sst.stat().st_size
        if size < 16 * 1024:  # too small to hold data blocks apart from its index: open would fail
            continue
        with open(sst, "r+b") as handle:
            for i in range(8):
                handle.seek(size // 4 + size // 2 * i // 8)
                handle.write(rng.randbytes(256))


@pytest.mark.slow
def test_a_damaged_generation_answers_503_and_the_web_processes_survive(tiny_data) -> None:
    """Issue 69, item 9: on damaged table files a whole-store COUNT grew the web tree past
    1.5 GiB within 4 s, then answered "time limit" and retired the web process (pyoxigraph's
    aggregates go on pulling from an iterator that repeats its error). The generation is read
    back before any query runs on it: a clear 503, nothing grows, the same web processes."""
    settings = tiny_data()
    build(settings)
    _damage_table_files(current_generation(settings.store))
    port = free_port()
    server = subprocess.Popen(
        [CLI, "serve", "--store", str(settings.store), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(base + "/robots.txt", 120)  # /health says 503 on a damaged store
        assert server.poll() is None
        query_workers_started(server, 1)  # started as the web processes start
        tree = psutil.Process(server.pid)
        web = sorted(p.pid for p in tree.children())
        before = _settled_rss(tree)  # the workers done importing
        for text in (
            "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
            "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }",
            "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
        ):
            started = time.monotonic()
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"{base}/sparql?" + urllib.parse.urlencode({"query": text}), timeout=60)
            message = refused.value.read().decode()
            refused.value.close()
            assert refused.value.code == 503, message
            assert "the store looks damaged" in message and "iclr-kg build" in message, message
            assert time.monotonic() - started < 10
        health = pytest.raises(urllib.error.HTTPError, urllib.request.urlopen, base + "/health", timeout=60)
        assert health.value.code == 503
        health.value.close()
        time.sleep(1)
        assert sorted(p.pid for p in tree.children()) == web  # no web process retired
        after = _tree_rss(tree)
        assert after - before < 256 * 2**20, (before, after)
    finally:
        server.terminate()
        server.communicate(timeout=30)


def test_commands_on_a_damaged_generation_say_one_line(tiny_data) -> None:
    """Issue 69, item 9: `export -o FILE` printed its progress line, then the error; `query`
    blamed the query's memory. Each says, in one line, that the store looks damaged and what to do."""
    settings = tiny_data()
    build(settings)
    _damage_table_files(current_generation(settings.store))
    out = settings.store.parent / "out.ttl"
    env = {**os.environ, "ICLR_KG_PROGRESS": "0"}  # progress as lines, as in a log
    for args in (
        ["export", "-o", str(out)],
        ["query", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "-o", str(out)],
        ["query", "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"],
    ):
        failed = subprocess.run(
            [CLI, *args, "--store", str(settings.store)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert failed.returncode == 1, (args, failed.stdout, failed.stderr)
        assert failed.stderr.startswith("error: the store looks damaged"), failed.stderr
        assert failed.stderr.count("\n") == 1 and "iclr-kg build" in failed.stderr, failed.stderr
        assert failed.stdout == ""
    assert not out.exists()


def test_a_generation_its_writer_published_is_served_without_a_read_back(tiny_data) -> None:
    """A build or an update vouches for the generation it wrote (`checking.vouch_intact`), so no
    reader reads the whole store back before serving it: each update makes a generation, and a
    read-back costs seconds at 50,000 papers. What changed on disk after (the damage the test
    above makes) is read back as before."""
    from iclr_kg.store.checking import INTEGRITY, table_files
    from iclr_kg.store.generations import kept_beside
    from iclr_kg.updates import apply

    settings = tiny_data()
    build(settings)
    built = current_generation(settings.store)
    apply(settings.store, "INSERT DATA { <urn:vouched> <urn:p> 1 }")
    updated = current_generation(settings.store)
    assert updated != built
    for generation in (built, updated):
        record = json.loads(kept_beside(generation, INTEGRITY).read_text(encoding="utf-8"))
        assert record == {"files": table_files(generation), "damage": None}
    _damage_table_files(updated)
    generation = updated
    assert damage(generation) is not None
