"""The CLI end to end on the real data: build, query, export round trip, clean errors."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import rdflib
from click.testing import CliRunner
from pyoxigraph import DefaultGraph
from rdflib.compare import isomorphic

from iclr_kg.cli import main
from iclr_kg.progress import Progress
from iclr_kg.reasoning.convert import to_rdflib
from iclr_kg.store import open_read_only
from testbed.helpers import CLI, dead_url, run_cli, serving


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store built by the real console script, as a user would run it."""
    store = tmp_path_factory.mktemp("cli") / "store"
    done = subprocess.run([CLI, "build", "--store", str(store)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "built" in done.stdout and "quads" in done.stdout
    return store


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


def test_long_work_says_one_line_per_stage_outside_a_terminal(tmp_path: Path) -> None:
    """Issue #19, item 3: in a log (stderr is a pipe here) each stage is one line with what it
    made and how fast; no bar, no carriage returns."""
    done = run("build", "--store", str(tmp_path / "store"))
    assert done.returncode == 0, done.stderr
    stages = [line.split(":")[0] for line in done.stderr.splitlines()]
    assert stages == ["load", "resolve", "rdf", "reason", "validate (beside reason)", "store"]
    assert re.search(r"^reason: [\d,]+ triples in [\d.]+ s", done.stderr, re.M) and "\r" not in done.stderr
    out = tmp_path / "all.nq"
    exported = run("export", "--store", str(tmp_path / "store"), "-f", "nquads", "-o", str(out))
    # The rate is added past 1,000 items and 0.05 s, so whether it shows depends on the machine's speed.
    assert exported.returncode == 0, exported.stderr
    assert re.fullmatch(r"export: [\d,]+ quads in [\d.]+ s( \([\d,]+/s\))?\n", exported.stderr), exported.stderr
    assert run("export", "--store", str(tmp_path / "store"), "-f", "nquads").stderr == ""  # stdout is the data


@pytest.mark.parametrize(
    "count, seconds, line",
    [
        (0, 0.2, "export: 0.2 s"),
        (999, 2.0, "export: 999 quads in 2.0 s"),
        (5000, 0.01, "export: 5,000 quads in 0.0 s"),
        (5000, 2.0, "export: 5,000 quads in 2.0 s (2,500/s)"),
    ],
)
def test_a_stage_line_adds_a_rate_only_past_a_thousand_items_and_a_twentieth_of_a_second(
    count: int, seconds: float, line: str
) -> None:
    """The line a stage prints in a log, with the stage's time given (not measured), so the
    rate's rule is checked whatever the machine's speed."""
    stream = io.StringIO()
    with Progress(stream, live=False).stage("export", unit="quads") as stage:
        stage.advance(count)
        stage.seconds = seconds
    assert stream.getvalue() == line + "\n"


def test_the_program_ends_right_after_a_build_with_everything_written(tmp_path: Path) -> None:
    """`iclr-kg build` leaves without freeing what it made (`cli.end_program`): its output is
    whole and what it published is complete. `main` called in-process returns as usual."""
    from iclr_kg.index import index_path
    from iclr_kg.store import current_generation, reasoned_path

    store = tmp_path / "store"
    done = run("build", "--store", str(store))
    assert done.returncode == 0, done.stderr
    generation = current_generation(store)
    assert generation is not None and done.stdout.splitlines()[-1] == f"store: {store} -> {generation}"
    assert generation.with_name(generation.name + ".complete").is_file()
    assert index_path(generation).is_file() and reasoned_path(generation).exists()
    assert run("stats", "--store", str(store)).returncode == 0
    in_process = CliRunner().invoke(main, ["build", "--store", str(store), "--full"])
    assert in_process.exit_code == 0 and in_process.output.splitlines()[-1].startswith(f"store: {store} -> ")


def test_count_query_prints_a_count(built: Path) -> None:
    done = run("query", "--store", str(built), "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert done.returncode == 0, done.stderr
    header, value = done.stdout.split()
    assert header == "n" and int(value) > 5000


@pytest.mark.parametrize(
    "fmt, check",
    [
        ("json", lambda out: json.loads(out)["results"]["bindings"][0]["name"]["value"] == "Ian Gemp"),
        ("xml", lambda out: "<literal>Ian Gemp</literal>" in out),
        ("csv", lambda out: out.splitlines()[1].endswith("Ian Gemp")),
        ("tsv", lambda out: '"Ian Gemp"' in out),
    ],
)
def test_result_formats(built: Path, fmt: str, check) -> None:
    done = run(
        "query",
        "--store",
        str(built),
        "-f",
        fmt,
        "SELECT ?name WHERE { paper:NzTU59SYbNq iclr:firstAuthor/iclr:name ?name }",
    )
    assert done.returncode == 0 and check(done.stdout), done.stdout


@pytest.mark.parametrize(
    "fmt, rdflib_format",
    [
        ("turtle", "turtle"),
        ("ntriples", "nt"),
        ("nquads", "nquads"),
        ("trig", "trig"),
        ("jsonld", "json-ld"),
        ("rdfxml", "xml"),
    ],
)
def test_construct_formats_parse(built: Path, fmt: str, rdflib_format: str) -> None:
    done = run("query", "--store", str(built), "-f", fmt, "DESCRIBE paper:NzTU59SYbNq")
    assert done.returncode == 0, done.stderr
    graph = rdflib.Dataset() if fmt in ("nquads", "trig") else rdflib.Graph()
    graph.parse(data=done.stdout, format=rdflib_format)
    assert len(graph) > 5


def test_saved_query_with_parameter(built: Path) -> None:
    done = run(
        "query",
        "--store",
        str(built),
        "--saved",
        "paper-authors",
        "--param",
        "paper=https://w3id.org/iclr-kg/resource/paper/PxTIG12RRHS",
        "-f",
        "csv",
    )
    assert done.returncode == 0, done.stderr
    assert "Yang Song" in done.stdout.splitlines()[1] and len(done.stdout.splitlines()) == 7


def test_query_from_file_and_output_file(built: Path, tmp_path: Path) -> None:
    query = tmp_path / "q.rq"
    query.write_text("ASK { paper:NzTU59SYbNq a schema:ScholarlyArticle }", encoding="utf-8")
    out = tmp_path / "out.json"
    done = run("query", "--store", str(built), str(query), "-f", "json", "-o", str(out))
    assert done.returncode == 0 and json.loads(out.read_text())["boolean"] is True


def test_no_inferred_leaves_out_reasoning(built: Path) -> None:
    ask = "SELECT ?a WHERE { paper:NzTU59SYbNq schema:author ?a }"
    assert len(run("query", "--store", str(built), ask).stdout.splitlines()) == 5
    assert run("query", "--store", str(built), "--no-inferred", ask).stdout.splitlines() == ["a"]


def test_export_turtle_round_trips_through_rdflib(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.ttl"
    assert run("export", "--store", str(built), "--format", "turtle", "-o", str(out)).returncode == 0
    exported = rdflib.Graph().parse(out, format="turtle")
    store = open_read_only(built)
    expected = to_rdflib(store.quads_for_pattern(None, None, None, DefaultGraph()))  # the merged graph
    assert len(exported) == len(expected) > 5000
    assert isomorphic(exported, expected)
    nt = run("export", "--store", str(built), "--format", "ntriples").stdout
    assert isomorphic(rdflib.Graph().parse(data=nt, format="nt"), expected)
    assert "@prefix paper: <https://w3id.org/iclr-kg/resource/paper/>" in out.read_text(encoding="utf-8")
    for fmt, parser in (("jsonld", "json-ld"), ("rdfxml", "xml")):  # pages round two, item 17: JSON-LD too
        written = tmp_path / f"all.{fmt}"
        assert run("export", "--store", str(built), "--format", fmt, "-o", str(written)).returncode == 0
        assert isomorphic(rdflib.Graph().parse(written, format=parser), expected), fmt


def test_export_named_graphs_keep_their_names(built: Path) -> None:
    trig = run("export", "--store", str(built), "--graph", "asserted", "--format", "trig").stdout
    dataset = rdflib.Dataset().parse(data=trig, format="trig")
    names = {str(g.identifier) for g in dataset.graphs() if len(g)}
    assert "https://w3id.org/iclr-kg/graph/source/iclr2024-outstanding-papers" in names
    assert "https://w3id.org/iclr-kg/graph/inferred" not in names
    inferred = run("export", "--store", str(built), "--graph", "inferred", "--format", "nquads").stdout
    assert inferred and all(
        line.endswith("<https://w3id.org/iclr-kg/graph/inferred> .") for line in inferred.splitlines()
    )


def test_stats(built: Path) -> None:
    done = run("stats", "--store", str(built))
    assert done.returncode == 0
    assert "https://w3id.org/iclr-kg/graph/inferred" in done.stdout and "iclr:Paper" in done.stdout


def test_serve_on_a_busy_port_says_only_that(built: Path) -> None:
    """Pages round two, item 17: `serve` printed "serving at ..." before failing on a busy port."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = run("serve", "--store", str(built), "--port", port)
    assert done.returncode != 0 and done.stdout == "", done.stdout
    assert done.stderr == f"error: cannot listen on 127.0.0.1:{port}: Address already in use\n", done.stderr


def test_stats_says_only_the_error_without_a_store(tmp_path: Path) -> None:
    done = run("stats", "--store", str(tmp_path / "none"))
    assert done.returncode != 0 and done.stdout == "" and done.stderr.count("\n") == 1, (done.stdout, done.stderr)


def test_a_failed_first_build_leaves_no_store_folder(tmp_path: Path) -> None:
    """Item 17 too: a build that failed left `store/` with only `build.lock`, which read as a store."""
    (tmp_path / "data" / "sources").mkdir(parents=True)
    done = run_cli(
        "build", "--store", str(tmp_path / "store"), env={**os.environ, "ICLR_KG_DATA_DIR": str(tmp_path / "data")}
    )
    assert done.returncode != 0 and "registry file missing" in done.stderr, done.stderr
    assert not (tmp_path / "store").exists()


def test_an_undeclared_prefix_is_one_line(built: Path) -> None:
    """Item 17: the editor's check and then the engine each said it (two error lines)."""
    done = run("query", "SELECT * WHERE { ?s foo:bar ?o }", "--store", str(built))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: line 1, column 21: the prefix foo: is not declared")
    assert done.stderr.count("\n") == 1, done.stderr


def test_validate_reports_conformance(built: Path) -> None:
    done = run("validate")
    assert done.returncode == 0 and "Conforms" in done.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("query", "SELECT * WHERE { ?s ?p }"), "error: SPARQL syntax error at line 1, column"),
        (("query", "--saved", "no-such-query"), "error: no saved query named 'no-such-query'"),
        (("query", "--saved", "../etc/passwd"), "error: no saved query named '../etc/passwd'"),
        (("query", "--saved", "paper-authors", "--param", "paper=not an iri"), "is not a valid iri"),
        (("query", "-f", "turtle", "SELECT * WHERE { ?s ?p ?o } LIMIT 1"), "is not a result format"),
        (("export", "--graph", "https://example.org/none"), "no graph 'https://example.org/none'"),
    ],
)
def test_errors_are_one_clear_line(built: Path, args: tuple[str, ...], message: str) -> None:
    done = run(args[0], "--store", str(built), *args[1:])
    assert done.returncode != 0
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_missing_store_error(tmp_path: Path) -> None:
    done = run("query", "--store", str(tmp_path / "none"), "ASK {}")
    assert done.returncode == 1 and "no store at" in done.stderr and "iclr-kg build" in done.stderr


def test_bad_data_fails_the_build_naming_file_line_field(tmp_path: Path, built: Path) -> None:
    import shutil

    from iclr_kg.config import resource_dir

    data = tmp_path / "data"
    shutil.copytree(resource_dir("data"), data)
    source = data / "sources" / "iclr2021-outstanding-papers.yaml"
    text = source.read_text(encoding="utf-8").replace("organizations: [DeepMind]", "organizations: [DeepMindz]", 1)
    source.write_text(text, encoding="utf-8")
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "DeepMindz" in l)
    env = {**os.environ, "ICLR_KG_DATA_DIR": str(data)}
    done = subprocess.run([CLI, "build", "--store", str(built)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2
    assert f"iclr2021-outstanding-papers.yaml:{line}: organizations[0]: unknown organization 'DeepMindz'" in done.stderr
    assert run("query", "--store", str(built), "ASK { ?s ?p ?o }").returncode == 0  # old store still serves


def test_debug_shows_traceback(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--debug", "query", "--store", str(tmp_path), "ASK {}"])
    assert result.exception is not None and type(result.exception).__name__ == "StoreError"


@pytest.mark.slow  # starts gunicorn or kills a process on purpose
def test_serve_builds_then_serves_with_gunicorn(tmp_path: Path) -> None:
    import urllib.request

    with serving(tmp_path / "store") as (base, process):
        with urllib.request.urlopen(f"{base}/health", timeout=10) as response:
            status = json.loads(response.read())
        assert status["status"] == "ok" and status["quads"] > 5000
        with urllib.request.urlopen(f"{base}/query", timeout=5) as response:
            assert b"<textarea" in response.read()
    assert "building it first" in process.output and "serving" in process.output and "with gunicorn" in process.output


# Regressions (hardening #14): one line, never a traceback or a clobbered file.


@pytest.mark.parametrize(
    "args, message",
    [
        (("query", "queries/no-such-file.rq"), "no such query file: queries/no-such-file.rq"),
        (("query", "ASK {}", "-o", "/nonexistent-folder/out.csv"), "the folder /nonexistent-folder does not exist"),
        (("query", "ASK {}", "-o", "/tmp"), "is a directory"),
        (("export", "-o", "/nonexistent-folder/out.ttl"), "does not exist"),
    ],
)
def test_cli_mistakes_are_one_line(built: Path, args: tuple[str, ...], message: str) -> None:
    done = run(args[0], "--store", str(built), *args[1:])
    assert done.returncode == 1, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_non_utf8_query_file_is_one_line(built: Path, tmp_path: Path) -> None:
    query = tmp_path / "latin1.rq"
    query.write_bytes('SELECT * WHERE { ?s ?p "caf\xe9" }'.encode("latin-1"))
    done = run("query", "--store", str(built), str(query))
    assert done.returncode == 1 and "is not UTF-8 text" in done.stderr and "Traceback" not in done.stderr


def test_a_failing_query_leaves_an_existing_output_file_alone(built: Path, tmp_path: Path) -> None:

    dead = dead_url("/sparql")  # allow-listed, but nobody answers
    out = tmp_path / "existing.csv"
    out.write_text("precious\n")
    env = {**os.environ, "ICLR_KG_SERVICES": dead}
    done = subprocess.run(
        [CLI, "query", "--store", str(built), "-o", str(out), f"SELECT * WHERE {{ SERVICE <{dead}> {{ ?s ?p ?o }} }}"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1 and "refused the connection" in done.stderr and "Traceback" not in done.stderr, (
        done.stderr
    )
    assert out.read_text() == "precious\n"
    assert [p.name for p in tmp_path.iterdir()] == ["existing.csv"]  # no temporary file left behind
    assert run("query", "--store", str(built), "-o", str(out), "ASK {}").returncode == 0
    assert out.read_text().strip() == "true"


@pytest.mark.parametrize(
    "variable, value, message",
    [
        ("ICLR_KG_QUERY_TIMEOUT", "abc", "ICLR_KG_QUERY_TIMEOUT: 'abc' is not a number"),
        ("ICLR_KG_PORT", "abc", "ICLR_KG_PORT: 'abc' is not a whole number"),
        (
            "ICLR_KG_UPDATE_TOKEN_FILE",
            "/nonexistent/token",
            "ICLR_KG_UPDATE_TOKEN_FILE: cannot read /nonexistent/token",
        ),
        ("ICLR_KG_REASONER", "bogus", "ICLR_KG_REASONER: 'bogus' is not one of fast, owlrl"),
        ("ICLR_KG_QUERY_TIMEOUT", "-3", "must be a positive number"),
    ],
)
def test_bad_settings_are_refused_when_they_load(built: Path, variable: str, value: str, message: str) -> None:
    env = {**os.environ, variable: value}
    done = subprocess.run(
        [CLI, "query", "--store", str(built), "ASK {}"], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 1 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_serve_refuses_a_malformed_saved_query_before_starting(built: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries"
    queries.mkdir()
    (queries / "broken.rq").write_text("# title: Broken\n# description: d\n# param: x weird\nSELECT * {}\n")
    env = {**os.environ, "ICLR_KG_QUERIES_DIR": str(queries)}
    done = subprocess.run(
        [CLI, "serve", "--store", str(built), "--port", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "bad param header" in done.stderr and "Traceback" not in done.stderr


def test_a_query_naming_a_term_the_ontology_lacks_says_so_on_stderr(built: Path) -> None:
    """The editor's warning, on the command line: 0 rows for iclr:titel come with the reason."""
    done = run_cli("query", "--store", str(built), "SELECT ?t WHERE { ?p iclr:titel ?t }")
    assert done.returncode == 0 and done.stdout.strip() == "t"  # runs, and finds nothing
    assert "warning: line 1, column 22: iclr:titel is not in the iclr-kg ontology" in done.stderr
    assert "did you mean iclr:title?" in done.stderr
    clean = run_cli("query", "--store", str(built), "SELECT ?t WHERE { ?p iclr:title ?t } LIMIT 1")
    assert clean.returncode == 0 and clean.stderr == ""
