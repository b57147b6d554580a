"""Behind a reverse proxy: the client's address and scheme are read from the proxy's headers only
when the proxy is trusted (ICLR_KG_TRUSTED_PROXIES); deploy/'s nginx site and systemd unit,
run as written in front of `iclr-kg serve`."""

from __future__ import annotations

import collections
import configparser
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from iclr_kg.config import Settings
from iclr_kg.errors import SettingsError
from iclr_kg.web import create_app
from testbed.helpers import eventually, free_port, wait_for, web_processes

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
CLIENT_ECHO = "SELECT ?x WHERE { BIND(<x> AS ?x) }"  # a relative IRI resolves against the URL asked


def _endpoint_seen(client, remote: str, **headers: str) -> str:
    """The query endpoint's own URL as the app writes it for a request from `remote`."""
    answer = client.get(
        "/sparql",
        query_string={"query": CLIENT_ECHO, "format": "json"},
        headers=headers,
        environ_base={"REMOTE_ADDR": remote},
    )
    return json.loads(answer.data)["results"]["bindings"][0]["x"]["value"]


def test_forwarded_headers_are_believed_from_trusted_proxies_only(real_store, real_settings: Settings) -> None:
    client = create_app(real_settings.replace(trusted_proxies=("127.0.0.1", "10.0.0.0/8"))).test_client()
    forwarded = {"X-Forwarded-For": "198.51.100.7, 10.1.2.3", "X-Forwarded-Proto": "https"}
    assert _endpoint_seen(client, "127.0.0.1", **forwarded) == "https://localhost/x"
    assert _endpoint_seen(client, "203.0.113.5", **forwarded) == "http://localhost/x"  # not a proxy of ours
    assert (
        _endpoint_seen(client, "127.0.0.1", Forwarded='for="[2001:db8::1]:4711";proto=https') == "https://localhost/x"
    )
    untrusting = create_app(real_settings).test_client()  # the default: no proxy is trusted
    assert _endpoint_seen(untrusting, "127.0.0.1", **forwarded) == "http://localhost/x"


def test_the_client_behind_a_trusted_proxy_is_the_last_address_it_did_not_add() -> None:
    from iclr_kg.web.proxies import TrustedProxies, networks

    seen: dict[str, str] = {}

    def app(environ, start_response):  # type: ignore[no-untyped-def]
        seen.update(addr=environ["REMOTE_ADDR"], scheme=environ["wsgi.url_scheme"])
        return []

    proxy = TrustedProxies(app, networks(["127.0.0.1", "10.0.0.0/8"]))

    def via(peer: str, **headers: str) -> tuple[str, str]:
        proxy({"REMOTE_ADDR": peer, "wsgi.url_scheme": "http", **headers}, lambda *a: None)
        return seen["addr"], seen["scheme"]

    # a client that writes its own X-Forwarded-For cannot choose its address: nginx appends the real one
    assert via("127.0.0.1", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7, 10.0.0.2") == ("198.51.100.7", "http")
    assert via("127.0.0.1", HTTP_X_FORWARDED_FOR="unknown, 10.0.0.2") == ("10.0.0.2", "http")  # all ours
    assert via("127.0.0.1", HTTP_FORWARDED="for=192.0.2.60;proto=https, for=10.0.0.2") == ("192.0.2.60", "https")
    assert via("127.0.0.1", HTTP_X_FORWARDED_PROTO="gopher") == ("127.0.0.1", "http")
    # issue #54 item 2: behind nginx a client's own Forwarded passed through and was believed first
    nginx = {"HTTP_X_FORWARDED_FOR": "198.51.100.7", "HTTP_X_FORWARDED_PROTO": "http"}
    assert via("127.0.0.1", HTTP_FORWARDED="for=6.6.6.6;proto=https", **nginx) == ("198.51.100.7", "http")
    assert via("192.0.2.1", HTTP_X_FORWARDED_FOR="198.51.100.7") == ("192.0.2.1", "http")


def test_a_trusted_proxy_that_is_not_an_address_is_a_settings_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICLR_KG_TRUSTED_PROXIES", "127.0.0.1, nginx.local")
    with pytest.raises(SettingsError, match="not an IP address or network"):
        Settings.from_env()


# --------------------------------------------------------------------------------------------
# deploy/, as written: the systemd unit starts `iclr-kg serve`, nginx's site fronts it


def _unit(text: str) -> dict[str, list[str]]:
    """The unit's [Service] settings, each key with all its values (Environment= repeats)."""
    values: dict[str, list[str]] = {}
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    section = ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and not line.lstrip().startswith("#") and section == "Service":
            key, _, value = line.partition("=")
            values.setdefault(key.strip(), []).append(value.strip())
    return values


@pytest.fixture(scope="module")
def deployed(
    real_store, real_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, subprocess.Popen]]:
    """deploy/iclr-kg.service's command and environment, then nginx with deploy/nginx-site.conf in
    front of it, on free 127.0.0.1 ports; only paths and ports are changed. Yields (nginx's URL,
    the unit's main process)."""
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        pytest.skip("nginx is not installed (apt-get install nginx; .ci/run does)")
    root = tmp_path_factory.mktemp("srv")
    (root / ".venv").symlink_to(Path(sys.prefix))
    (root / "var").mkdir()
    (root / "var" / "store").symlink_to(real_settings.store)
    app_port, web_port = free_port(), free_port()
    unit_text = (DEPLOY / "iclr-kg.service").read_text().replace("/srv/iclr-kg", str(root))
    unit_text = unit_text.replace("ICLR_KG_PORT=8000", f"ICLR_KG_PORT={app_port}")
    if shutil.which("systemd-analyze"):
        unit_file = root / "iclr-kg.service"
        unit_file.write_text(unit_text.replace("User=iclr-kg", "User=root"))
        verified = subprocess.run(
            ["systemd-analyze", "verify", str(unit_file)], check=False, capture_output=True, text=True
        )
        assert verified.returncode == 0, verified.stderr
    service = _unit(unit_text)
    env = {k: v for k, _, v in (e.partition("=") for e in service["Environment"])}
    env["ICLR_KG_SERVICES"] = ",".join(real_settings.services)
    app = subprocess.Popen(
        service["ExecStart"][0].split(),
        cwd=service["WorkingDirectory"][0],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("ICLR_KG_")}, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    site = (DEPLOY / "nginx-site.conf").read_text()
    site = site.replace("127.0.0.1:8000", f"127.0.0.1:{app_port}").replace(
        "listen 80;", f"listen 127.0.0.1:{web_port};"
    )
    prefix = tmp_path_factory.mktemp("nginx")
    (prefix / "logs").mkdir()
    (prefix / "site.conf").write_text(site)
    (prefix / "nginx.conf").write_text(
        f"pid {prefix}/nginx.pid;\nerror_log {prefix}/logs/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  client_body_temp_path {prefix}/body;\n  proxy_temp_path {prefix}/proxy;\n"
        f"  include {prefix}/site.conf;\n}}\n"
    )
    proxy = subprocess.Popen([nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"])
    try:
        wait_for(f"http://127.0.0.1:{app_port}/health", 120)
        wait_for(f"http://127.0.0.1:{web_port}/health", 30)
        yield f"http://127.0.0.1:{web_port}", app
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        app.terminate()
        app.wait(timeout=30)


def _ask(base: str, query: str, source: str, timeout: float = 30) -> tuple[int, str]:
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout, source_address=(source, 0))
    try:
        connection.request(
            "GET", "/sparql?" + urllib.parse.urlencode({"query": query, "timeout": "6", "format": "json"})
        )
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def test_behind_nginx_each_client_keeps_its_share_and_urls_name_the_proxy(
    deployed: tuple[str, subprocess.Popen],
) -> None:
    web, _ = deployed
    status, body = _ask(web, CLIENT_ECHO, "127.0.0.2")
    assert status == 200 and f'"{web}/x"' in body  # the Host nginx was asked for, not the app's own
    outcomes: list[tuple[int, str]] = []
    greedy = [threading.Thread(target=lambda: outcomes.append(_ask(web, RUNAWAY, "127.0.0.2"))) for _ in range(12)]
    for thread in greedy:
        thread.start()
    eventually(  # the runaways hold 127.0.0.2's share of workers once one of them is refused
        lambda: any(status == 429 and "its share" in body for status, body in outcomes), "127.0.0.2's share taken"
    )
    others = [_ask(web, "ASK { ?s ?p ?o }", "127.0.0.3") for _ in range(4)]
    for thread in greedy:
        thread.join(timeout=60)
    assert [status for status, _ in others] == [200] * 4, others  # all behind nginx, yet another client
    assert any(status == 429 and "its share" in body for status, body in outcomes), outcomes


WEB_PROCESSES = 2  # `iclr-kg serve`'s default, which the unit keeps


def test_the_units_reload_restarts_the_web_processes_gracefully(deployed: tuple[str, subprocess.Popen]) -> None:
    """ExecReload (`kill -HUP $MAINPID`): gunicorn starts new web processes and retires the old
    ones; the site answers all along, to clients opening a new connection for every request
    (the listening sockets outlive the processes: none is refused or reset)."""
    web, main = deployed
    # An earlier test's runaway may have retired a web process: its replacement is started first,
    # so that `before` holds every web process this reload must replace.
    eventually(lambda: len(web_processes(main)) == WEB_PROCESSES, "the unit's web processes all running", 60)
    before = web_processes(main)
    replaced = threading.Event()
    statuses: list[int] = []

    def client(source: str) -> None:
        while not replaced.is_set():
            try:
                statuses.append(_ask(web, "ASK {}", source)[0])
            except (OSError, http.client.HTTPException):  # refused, reset, closed unanswered
                statuses.append(0)

    clients = [threading.Thread(target=client, args=(f"127.0.0.{4 + n}",)) for n in range(4)]
    for thread in clients:
        thread.start()
    main.send_signal(signal.SIGHUP)
    last_seen = [before]

    def all_replaced() -> bool:
        last_seen[0] = now = web_processes(main)
        return not (before & now) and len(now) == WEB_PROCESSES

    try:
        eventually(all_replaced, "the web processes replaced", 60)
    except AssertionError as failed:
        raise AssertionError(f"{failed}: {sorted(before)} before the reload, {sorted(last_seen[0])} now") from None
    answered = len(statuses)
    eventually(lambda: len(statuses) >= answered + 8, "the new processes answering too")
    replaced.set()
    for thread in clients:
        thread.join(timeout=60)
    assert main.poll() is None
    assert statuses and set(statuses) == {200}, collections.Counter(statuses)
