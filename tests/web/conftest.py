"""Web fixtures: the app on the real graph (Flask test client) and a real waitress server."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from iclr_kg.config import Settings
from iclr_kg.web import create_app
from testbed.helpers import eventually


@pytest.fixture(scope="session")
def app(real_store, real_settings: Settings) -> Flask:
    return create_app(real_settings)


# What `build` reads: overriding any of these makes a store of its own, not the session's copy.
BUILD_SETTINGS = {"data_dir", "ontology_dir", "imports_dir", "reasoner", "validator"}


@pytest.fixture
def tiny_app(tiny_data, tiny_built: Path):
    """A tiny store, built, and a test client for it (Datasette's make_app_client): call it with
    setting overrides; returns (settings, client). The store is a copy of the session's tiny
    build (the same data), the test's own to write to."""
    from iclr_kg.build.pipeline import build

    def make(**overrides: object) -> tuple[Settings, FlaskClient]:
        settings = tiny_data().replace(**overrides) if overrides else tiny_data()
        if BUILD_SETTINGS & overrides.keys():
            build(settings)
        else:
            shutil.copytree(tiny_built, settings.store, symlinks=True)  # `current` is a relative link
        return settings, create_app(settings).test_client()

    return make


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture(scope="session")
def server(app: Flask) -> Iterator[str]:
    """The app behind our waitress front end (`--server waitress`) on a free 127.0.0.1 port."""
    from iclr_kg.web.server import make_server

    wsgi = make_server(app, None, 4, 20.0, host="127.0.0.1", port=0)
    thread = threading.Thread(target=wsgi.run, daemon=True)
    thread.start()
    port = wsgi.effective_port

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return False

    eventually(listening, "the test server listening", 10)
    yield f"http://127.0.0.1:{port}"
    wsgi.close()
