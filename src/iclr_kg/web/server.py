"""The HTTP front end: waitress's event loop reads requests, gunicorn supervises the processes.

Why not gunicorn's own `gthread` worker: it hands a connection to a pool thread as soon as the
first byte arrives and that thread then blocks reading the rest of the headers, so a few dozen
clients trickling headers (slowloris) hold every thread and `/health` stops answering. waitress
reads each request whole in one non-blocking loop (select/poll) and only gives complete
requests to its threads, so a slow client costs a socket, not a thread. On top of waitress's
idle timeout, `RequestTimeoutServer` closes a connection whose request (head and body) is not
complete `request_timeout` seconds (the setting ICLR_KG_REQUEST_TIMEOUT)
after its first byte: a trickle cannot keep a socket open.

`gunicorn_worker_class()` runs that loop inside a gunicorn worker process, so `iclr-kg serve` keeps
gunicorn's pre-fork supervision (several web processes sharing one listening socket,
restarts, graceful shutdown, heartbeats) without its thread-per-connection reading.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ThreadedTaskDispatcher

IDLE_TIMEOUT = 60  # seconds a connection may sit idle between requests
CONNECTION_LIMIT = 1000  # open connections per web process before it stops accepting
CHECK_INTERVAL = 2  # seconds between sweeps for expired connections


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


def gunicorn_worker_class(request_timeout: float) -> type:
    """`WaitressWorker`, built on demand: gunicorn is imported only where it is used (not on Windows)."""
    from gunicorn.workers.base import Worker

    class WaitressWorker(Worker):
        """A gunicorn worker process whose HTTP is waitress's event loop (see the module docstring)."""

        def run(self) -> None:
            socket_map: dict[int, Any] = {}
            servers = [
                make_server(self.wsgi, listener.sock, self.cfg.threads, request_timeout, socket_map=socket_map)
                for listener in self.sockets
            ]
            beat = 0.0
            while self.alive and self.ppid == os.getppid():  # stop on SIGTERM, or when the arbiter is gone
                wasyncore.loop(timeout=1.0, map=socket_map, use_poll=True, count=1)
                if time.monotonic() - beat > 1.0:
                    self.notify()  # gunicorn's heartbeat: a worker that stops looping is restarted
                    beat = time.monotonic()
            drain(servers, socket_map, self.cfg.graceful_timeout)

    return WaitressWorker


def drain(servers: list[RequestTimeoutServer], socket_map: dict[int, Any], grace: float) -> None:
    """Stop accepting, let the requests in flight finish (within `grace` seconds), then stop."""
    for server in servers:
        server.accepting = False
        server.del_channel()  # the listening socket itself stays open for the other web processes
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(getattr(c, "requests", None) for c in socket_map.values()):
        wasyncore.loop(timeout=0.2, map=socket_map, use_poll=True, count=1)
    for server in servers:
        server.task_dispatcher.shutdown(timeout=1)
