"""The HTTP front ends: granian's Rust HTTP server in web processes that gunicorn supervises,
and waitress for `--server waitress` (one process, any platform).

`iclr-kg serve` (gunicorn): the arbiter forks the web processes, restarts one that dies or
stops its heartbeat, replaces them all gracefully on SIGHUP, and ends them on SIGTERM. In each,
`GranianWorker` serves the app with granian's WSGI server (Rust: hyper and tokio read and write
every byte; Python threads run only the app). Granian's own process manager is not used: it
gives up when a worker ends twice within seconds, and a web process here ends on purpose when
it holds a query it cannot stop (query/local.py: it *retires*, gunicorn starts another at once).

Slow clients: hyper reads headers without a Python thread, and closes a connection whose
headers are not complete `request_timeout` seconds (ICLR_KG_REQUEST_TIMEOUT, at most 60) after
it starts. A body is read on a Python thread, as the app asks for it: granian gets eight of
them per `--threads`, and web/bodylimit.py cuts a body still arriving at the request timeout and
lets one client have only a few arriving at once.

waitress (`--server waitress`): its event loop reads each request whole before a thread runs
the app, and `RequestTimeoutServer` closes a connection whose request (head and body) is not
complete `request_timeout` seconds after its first byte.
"""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ThreadedTaskDispatcher

from iclr_kg.processes import pin_to_cores
from iclr_kg.query.streaming import ClosingBody

IDLE_TIMEOUT = 60  # seconds a connection may sit idle between requests
CONNECTION_LIMIT = 1000  # open connections per web process before it stops accepting
CHECK_INTERVAL = 2  # seconds between sweeps for expired connections
READERS_PER_THREAD = 8  # granian's Python threads per `--threads`: one is held while a body arrives


class RequestTimeoutChannel(HTTPChannel):
    """An HTTP channel that remembers when the request it is reading began."""

    request_started = 0.0

    def received(self, data: bytes) -> bool:
        if data and self.request is None:
            self.request_started = time.monotonic()
        return bool(super().received(data))

    def reading_too_long(self, now: float, limit: float) -> bool:
        """A request has been arriving for longer than `limit` seconds (complete ones are not)."""
        return self.request is not None and not self.request.completed and now - self.request_started > limit


class RequestTimeoutServer(TcpWSGIServer):
    """waitress's TCP server, with a deadline for reading each request on top of its idle timeout."""

    channel_class = RequestTimeoutChannel
    request_timeout = 20.0

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # idle connections (waitress's channel_timeout)
        clock = time.monotonic()
        for channel in list(self.active_channels.values()):
            if isinstance(channel, RequestTimeoutChannel) and channel.reading_too_long(clock, self.request_timeout):
                channel.will_close = True  # the loop closes it on its next pass


def make_server(
    app: Any,
    sock: socket.socket | None,
    threads: int,
    request_timeout: float,
    host: str = "127.0.0.1",
    port: int = 0,
    socket_map: dict[int, Any] | None = None,
) -> RequestTimeoutServer:
    """A waitress server for `app` on an already listening socket (gunicorn's) or on host:port."""
    adjustments = Adjustments(
        host=host,
        port=port,
        threads=threads,
        ident="iclr-kg",
        channel_timeout=IDLE_TIMEOUT,
        cleanup_interval=CHECK_INTERVAL,
        connection_limit=CONNECTION_LIMIT,
        # Forwarded and X-Forwarded-* reach the app, which believes them only from the proxies
        # ICLR_KG_TRUSTED_PROXIES names (web/proxies.py): one rule, whatever the HTTP server.
        clear_untrusted_proxy_headers=False,
        asyncore_use_poll=True,
    )
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(threads)
    socket_map = {} if socket_map is None else socket_map
    if sock is None:
        server = RequestTimeoutServer(app, socket_map, dispatcher=dispatcher, adj=adjustments)
    else:
        sockinfo = (sock.family, sock.type, sock.proto, sock.getsockname())
        server = RequestTimeoutServer(
            app, socket_map, _sock=sock, dispatcher=dispatcher, adj=adjustments, bind_socket=False, sockinfo=sockinfo
        )
    server.request_timeout = request_timeout
    return server


def serve_forever(server: RequestTimeoutServer) -> None:
    """Run one waitress server until interrupted (the `--server waitress` mode: one process)."""
    print(f"listening on http://{server.effective_host}:{server.effective_port}/", flush=True)
    server.run()


def serve_gunicorn(
    load_app: Callable[[], Any],
    host: str,
    port: int,
    processes: int,
    threads: int,
    request_timeout: float,
    timeout: int = 30,
) -> None:
    """Run gunicorn's arbiter over `processes` web processes serving `load_app()` on host:port
    until it is stopped. `timeout`: seconds a web process may miss its heartbeat."""
    from gunicorn.app.base import BaseApplication

    check_port_free(host, port)
    listeners = listening_sockets(host, port, processes)  # the web processes', kept across reloads

    with tempfile.TemporaryDirectory(prefix="iclr-kg-") as private:
        arbiter = Path(private) / "arbiter.sock"  # see gunicorn_worker_class

        class Server(BaseApplication):
            def load_config(self) -> None:
                options = {
                    "bind": f"unix:{arbiter}",
                    "workers": processes,
                    "threads": threads,
                    "worker_class": gunicorn_worker_class(request_timeout, listeners),
                    "pre_fork": assign_slot,
                    "timeout": timeout,
                    "graceful_timeout": 10,
                    "accesslog": None,
                    "errorlog": "-",
                    "loglevel": "warning",
                }
                for key, value in options.items():
                    self.cfg.set(key, value)

            def load(self) -> Any:
                return load_app()

        Server().run()


def gunicorn_worker_class(request_timeout: float, listeners: list[socket.socket]) -> type:
    """`GranianWorker` serving on `listeners` (from `listening_sockets`), built on demand:
    gunicorn and granian are imported only where they are used (not on Windows).

    Each web process accepts on a socket of its own slot (`assign_slot`): the kernel spreads
    new connections over the slots' sockets (SO_REUSEPORT), where on one shared socket the first
    process to wake took every connection of a burst (one process answered at 112% CPU while
    the other idled, measured). The sockets are the arbiter's, opened once: a web process that
    is replaced or retires leaves its slot's socket listening, with the connections queued on
    it, for the process that takes its place. (When each process bound its own, a reload
    refused connections until the new processes listened and reset those queued on the old
    ones: nginx answered 502.) gunicorn's own bind is only the arbiter's: `iclr-kg serve` gives
    it a private Unix socket that no client uses."""
    from gunicorn.workers.base import Worker

    class GranianWorker(Worker):
        """A gunicorn worker process whose HTTP is granian's (Rust, hyper), on its slot's socket."""

        def run(self) -> None:
            slot = getattr(self, "slot", 0) % len(listeners)  # TTIN may add processes beyond the slots
            pin_to_cores(slot, len(listeners))  # before any thread is started
            self.retiring = threading.Event()
            self.at_once = False
            counted = InFlight(self.wsgi)
            lane_state = getattr(self.wsgi, "extensions", {}).get("iclr_kg")
            if lane_state is not None:  # this process may evaluate queries: it can be replaced
                lane_state.install_lane(self.retire, self.cfg.threads)
                lane_state.start_workers()
            python_threads = self.cfg.threads * READERS_PER_THREAD  # web/bodylimit.py: reading a body holds one
            stop = serve_granian(counted, listeners[slot], python_threads, request_timeout, self.age)
            while self.alive and self.ppid == os.getppid() and not self.retiring.is_set():
                self.notify()  # gunicorn's heartbeat: a worker that stops looping is restarted
                self.retiring.wait(1.0)
            stop.set()  # granian stops accepting; the requests in flight go on
            grace = 0.2 if self.at_once else float(self.cfg.graceful_timeout)
            counted.wait_idle(grace)
            # A retiring process holds a query that cannot be stopped: its thread would keep the
            # interpreter from ending, so the process ends here (gunicorn starts another).
            os._exit(0)

        def retire(self, reason: str, at_once: bool = False) -> None:
            """Stop this web process and let gunicorn start a fresh one (query/local.py)."""
            self.log.warning("web process %s retires: %s", os.getpid(), reason)
            self.at_once = at_once
            self.retiring.set()

    return GranianWorker


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` sockets listening on host:port together (SO_REUSEPORT), one per web process slot,
    inherited by the processes gunicorn forks; set as granian sets its own (reuse, no delay)."""
    listeners = []
    for _ in range(count):
        listener = socket.socket(_family(host), socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        # as granian's own listener: the connections accepted inherit it; without, a response
        # written in two parts waited 40 ms for the client's delayed ACK (the floor: 540 req/s)
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        listener.bind((host, port))
        listener.listen(1024)
        listener.set_inheritable(True)
        listeners.append(listener)
    return listeners


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def assign_slot(arbiter: Any, worker: Any) -> None:
    """gunicorn's pre_fork hook: the new web process takes the slot with the fewest processes.
    On a reload the new processes start while the old ones still run, so each slot gets one
    new process beside its old one; a process that died is out of the arbiter's list already,
    so its replacement takes its slot."""
    taken = [getattr(other, "slot", 0) for other in arbiter.WORKERS.values()]
    worker.slot = min(range(arbiter.num_workers), key=lambda slot: (taken.count(slot), slot))


class InFlight:
    """The WSGI app, counting the requests whose response is not yet sent, so that a process
    that stops lets them finish first. A list body (a whole small answer) is done when the app
    returns: it stays a list, which granian sends in one write."""

    def __init__(self, app: Any):
        self.app = app
        self._open: list[None] = []  # one item per request in flight: append and pop are atomic

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        self._open.append(None)
        try:
            body = self.app(environ, start_response)
        except BaseException:
            self._open.pop()
            raise
        if isinstance(body, list):
            self._open.pop()
            return body
        return ClosingBody(body, self._open.pop)

    def wait_idle(self, grace: float) -> None:
        deadline = time.monotonic() + grace
        while self._open and time.monotonic() < deadline:
            time.sleep(0.02)


def check_port_free(host: str, port: int) -> None:
    """SettingsError unless host:port can be listened on. The probe binds without SO_REUSEPORT,
    so it fails where anything listens already, another `iclr-kg serve` included: the web
    processes' SO_REUSEPORT would otherwise share the port with it silently."""
    from iclr_kg.errors import SettingsError

    try:
        with socket.socket(_family(host)) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise SettingsError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def serve_granian(app: Any, listener: socket.socket, threads: int, request_timeout: float, worker_id: int) -> Any:
    """Serve `app` with granian's WSGI server on `listener`, in this process; returns the signal
    that stops it. Granian's own process manager is not used: gunicorn's arbiter supervises (it
    replaces a retiring process at once, where granian's exits when a worker ends twice within
    seconds). These are granian's internals, so its version is pinned."""
    from granian import _granian
    from granian._futures import _new_cbscheduler
    from granian.http import HTTP1Settings
    from granian.wsgi import _callback_wrapper

    # (descriptor, Unix socket?, backlog), as granian pickles one for its workers (granian/net.py)
    socket_holder: Any = _granian.SocketHolder
    held = socket_holder(os.dup(listener.fileno()), False, 1024)
    http1 = HTTP1Settings(header_read_timeout=int(min(60.0, request_timeout) * 1000))
    no_tls: tuple[Any, ...] = (False, None, None, None, "tls1.3", None, [], False)
    # As granian 2.8.9's own worker calls it (granian/server/mp.py; its .pyi is older): id, the
    # socket (as granian's workers get their parent's), no IPC, 1 runtime thread, 512 I/O threads,
    # `threads` Python threads kept 30 s, backpressure, HTTP/1 only, its settings, no HTTP/2, no
    # static files, no TLS, no metrics.
    worker_type: Any = _granian.WSGIWorker
    server = worker_type(
        worker_id, (None, held), None, 1, 512, threads, 30, CONNECTION_LIMIT, "1", http1, None, None, *no_tls,
        (None, None),
    )  # fmt: skip
    stop = _granian.WorkerSignal()
    loop = asyncio.new_event_loop()
    scheduler = _new_cbscheduler(loop, _callback_wrapper(app, {}, None), impl_asyncio=True)
    server.serve_mtr(scheduler, loop, stop)
    return stop
