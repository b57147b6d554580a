"""One error hierarchy: every error class lives in errors.py, each says its exit code and HTTP
status, and the web app answers them all through one handler."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import iclr_kg
from iclr_kg import errors

# Exceptions that never reach a user: internal control flow.
INTERNAL = {
    "iclr_kg.query.streaming.ClientGone",  # raised inside a serializer when the client has gone
    "iclr_kg.reasoning.dred.Fallback",  # an incremental build gives way to a full one; never leaves build()
    "iclr_kg.maintained.plan.NotMaintained",  # an update gives way to recomputing; never leaves updates.apply
}


def all_modules() -> list:
    return [importlib.import_module(m.name) for m in pkgutil.walk_packages(iclr_kg.__path__, "iclr_kg.")]


def test_every_error_class_is_in_errors_py_under_one_base() -> None:
    for module in all_modules():
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                qualified = f"{module.__name__}.{name}"
                if qualified in INTERNAL:
                    continue
                assert module is errors, f"{qualified} is an error class outside errors.py"
    for value in vars(errors).values():
        if inspect.isclass(value) and issubclass(value, Exception) and value.__module__ == errors.__name__:
            assert issubclass(value, errors.IclrKgError), value
            assert value.exit_code in (1, 2, 3) and 400 <= value.http_status < 600, value
            assert value.__name__ in errors.__doc__, (
                f"{value.__name__} is missing from the hierarchy drawn in the docstring"
            )


def test_one_handler_answers_each_error_by_its_status(client) -> None:
    # a request error on the protocol: plain text, 400
    response = client.get("/sparql", query_string={"query": "SELECT * WHERE { ?s ?p }"})
    assert response.status_code == 400 and response.mimetype == "text/plain" and b"syntax" in response.data
    # an unknown format: 400; nothing the Accept header allows: 406
    response = client.get("/sparql", query_string={"query": "ASK {}", "format": "bogus"})
    assert response.status_code == 400
    response = client.get("/sparql", query_string={"query": "ASK {}"}, headers={"Accept": "image/png"})
    assert response.status_code == 406
    # an invalid graph IRI on /data: 400 from the same handler
    assert client.get("/data?graph=a:%00").status_code == 400  # a NUL in the IRI


def test_a_defect_in_a_query_worker_is_a_500_with_its_traceback_logged(real_store, real_settings, capfd) -> None:
    """The worker's catch-all answered any defect of ours as a 503 ("try again later"), so the
    "never a 500" fuzzers could not see one. A request the code made wrong (a substitution that
    is no RDF term: saved-query parameters are checked before they get here) is a defect."""
    from iclr_kg.errors import InternalError
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    pool = QueryPool(1)
    try:
        broken = QueryRequest("SELECT ?x WHERE { ?x ?p ?o } LIMIT 1", substitutions={"x": "not a term"}, formats={})
        with pytest.raises(InternalError, match="a defect in the query worker") as raised:
            pool.start(current_generation(real_settings.store), broken, 10)
        assert raised.value.http_status == 500
        fine = pool.start(
            current_generation(real_settings.store), QueryRequest("ASK {}", formats={"results": "json"}), 10
        )
        assert fine.prefetched is not None and b"true" in fine.prefetched  # the worker lives on
    finally:
        pool.close()
    assert "Traceback" in capfd.readouterr().err


def test_one_envelope_carries_every_error_across_a_process_boundary() -> None:
    """What a child process sends (errors.Failure) is raised in the parent as the same class with
    the same message, so the exit code and the status are the child's; a foreign error is a defect."""
    import pickle

    data = errors.DataError("data/x.yaml", 3, "decision", "Input should be one of 'accepted'")
    for sent in (errors.QueryError("bad"), errors.TooLarge("big"), data, errors.ServiceFailed("down")):
        carried = pickle.loads(pickle.dumps(errors.Failure.of(sent))).exception()
        assert type(carried) is type(sent) and str(carried) == str(sent)
        assert (carried.exit_code, carried.http_status) == (sent.exit_code, sent.http_status)
    defect = errors.Failure.of(KeyError("x")).exception()
    assert type(defect) is errors.InternalError and defect.http_status == 500 and "KeyError" in str(defect)
    assert type(errors.Failure("NoSuchClass", "m").exception()) is errors.InternalError


def test_every_child_process_sends_the_one_envelope() -> None:
    """The five children (query workers, the writer, the store check, a build in a fresh process,
    validation beside a build) send errors.Failure, and no module invents another error tuple."""
    import re
    from pathlib import Path

    package = Path(iclr_kg.__file__).parent
    senders = ["query/pool.py", "updates/writer.py", "store/checking.py", "cli/serving.py", "build/pipeline.py"]
    for name in senders:
        text = (package / name).read_text(encoding="utf-8")
        assert "Failure.of(" in text, name
        assert not re.search(r"""\(\s*["'](error|damaged|ok)["']\s*,""", text), name
