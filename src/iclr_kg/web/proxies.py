"""Who the client is, behind a reverse proxy we trust (`ICLR_KG_TRUSTED_PROXIES`).

Behind nginx or Caddy every request comes from the proxy's address; the client's is in
`X-Forwarded-For` (or RFC 7239's `Forwarded: for=`), and `X-Forwarded-Proto` (`proto=`) says
whether the client used https. Those headers are believed only from the configured proxies: from
anyone else they are a client's own words and are ignored. Werkzeug's ProxyFix trusts a count of
hops from whoever connects, so it cannot say that; this middleware does.

What it sets is what the rest of the app reads: `REMOTE_ADDR` (per-client admission, permalink
quotas, logs) and `wsgi.url_scheme` (the URLs the app writes: the service description, VoID,
sitemaps, permalinks, the base of queries). The proxy's own address stays in
`iclr_kg.proxy` for the logs.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Iterable
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# One element of a Forwarded header: `for=192.0.2.60;proto=https`, `for="[2001:db8::1]:4711"`
_PAIR = re.compile(r'(?i)\b(for|proto)\s*=\s*("[^"]*"|[^;,\s]*)')


def networks(addresses: Iterable[str]) -> tuple[Network, ...]:
    """The trusted proxies as networks (`127.0.0.1`, `10.0.0.0/8`, `::1`); a bad one raises ValueError."""
    return tuple(ipaddress.ip_network(a.strip(), strict=False) for a in addresses if a.strip())


class TrustedProxies:
    """WSGI middleware: the client's address and scheme from a trusted proxy's headers."""

    def __init__(self, app: Callable[..., Any], trusted: tuple[Network, ...]):
        self.app, self.trusted = app, trusted
        # Parsing an address took a tenth of a hot request's Python time; the same few recur.
        self._is_trusted = functools.lru_cache(maxsize=4096)(self._decide)  # type: ignore[method-assign]

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        peer = environ.get("REMOTE_ADDR", "")
        if self.trusted and self._is_trusted(peer):
            hops, scheme = self._forwarded(environ)
            client = next((h for h in reversed(hops) if not self._is_trusted(h)), hops[0] if hops else None)
            if client:
                environ["iclr_kg.proxy"] = peer
                environ["REMOTE_ADDR"] = client
            if scheme in ("http", "https"):
                environ["wsgi.url_scheme"] = scheme
        return self.app(environ, start_response)

    def _is_trusted(self, address: str) -> bool:
        return self._decide(address)

    def _decide(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    @staticmethod
    def _forwarded(environ: dict[str, Any]) -> tuple[list[str], str]:
        """The addresses the request went through, client first, and the client's scheme: from the
        X-Forwarded-* headers where there are any (the shipped nginx site appends X-Forwarded-For
        and sets X-Forwarded-Proto, and a client's own `Forwarded` passes through a proxy that does
        not set it: believed first, it let any client choose its address and scheme), else from
        `Forwarded`, for a proxy that sends only that."""
        forwarded = environ.get("HTTP_FORWARDED", "")
        if forwarded and "HTTP_X_FORWARDED_FOR" not in environ:
            hops, scheme = [], ""
            for element in forwarded.split(","):
                pairs = {k.lower(): v.strip('"') for k, v in _PAIR.findall(element)}
                if "for" in pairs:
                    hops.append(_address(pairs["for"]))
                scheme = scheme or pairs.get("proto", "").lower()
            return [h for h in hops if h], scheme
        hops = [_address(h) for h in environ.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        scheme = environ.get("HTTP_X_FORWARDED_PROTO", "").split(",")[0].strip().lower()
        return [h for h in hops if h], scheme


@functools.lru_cache(maxsize=4096)
def _address(text: str) -> str:
    """An address as a header writes it (`192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]:80`),
    without its port; "" for anything that is not an IP address (`unknown`, `_hidden`)."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return ""
