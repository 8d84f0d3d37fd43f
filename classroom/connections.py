"""The class server's doors: connections capped per client and in all, a deadline to send a request's head.

A class server faces its whole class over a network, and a client needs no
token to open connections: slowloris (many connections, each sending a
header now and then) took the server to its 1024 file descriptors once,
every real request timed out, the referee could not open its files, and the
event loop logged ``Too many open files`` 2.45 M times in a minute.  So:

- the process's file-descriptor limit is raised to its hard limit at start,
  and the connections may use it all but a reserve kept for the games,
  admission checks and the database (:func:`connection_budget`);
- no client (an IP address) may hold more than ``per_client`` connections,
  and no more than ``total`` are open at once: past either, the connection
  is answered 503 with ``Retry-After`` and closed at once;
- a request's head (request line and headers) must arrive within
  ``head_seconds`` of its first byte (or of the connection, for the first):
  a connection that dawdles is closed (uvicorn has a keep-alive timeout but
  none for a head being sent slowly);
- the event loop's own errors (an accept that failed) are logged at most
  once every few seconds, with a count of those left out.

Behind a reverse proxy (``--trusted-proxy``) every connection comes from
the proxy, so the per-client cap counts what the proxy forwards instead:
a connection from a trusted proxy is held to the total alone, and
:class:`ForwardedClients` holds each forwarded client (``X-Forwarded-For``,
read by uvicorn from the trusted addresses only) to ``per_client`` requests
at once; else the proxy's one address would hold the whole class to 64.

The protocol is uvicorn's h11 one with these checks added, handed to
uvicorn as its ``http`` protocol class.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import resource
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Optional

import h11
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_SECONDS = 10.0  # a real browser sends its head in one packet; 10 s is generous on any campus network
PER_CLIENT = 64  # one NAT'd lab room may share an address: a page, its event stream and its loads each
RESERVE_PER_GAME = 64  # descriptors a game needs: the referee's files, two sandboxes, pipes
RESERVE_BASE = 256  # the database, the log, the admission worker's checks, Python's own
LOG_EVERY_SECONDS = 5.0
RETRY_SECONDS = 5  # the Retry-After of a connection or request refused for the caps


def trusted_networks(addresses: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The proxies' addresses (``10.0.0.5``, ``::1``, ``10.0.0.0/24``) as networks; ``ValueError`` naming a bad one."""
    found = []
    for address in addresses:
        try:
            found.append(ipaddress.ip_network(address.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{address!r} is not an IP address or network (e.g. 127.0.0.1, ::1, 10.0.0.0/24)") from None
    return tuple(found)


@dataclass(frozen=True)
class ConnectionLimits:
    """How many connections the server takes, from one client and in all, and how long a head may take.

    ``trusted_proxies``: the reverse proxies' addresses (:func:`trusted_networks`),
    whose connections only the total caps (:class:`ForwardedClients` caps their clients).
    """

    per_client: int = PER_CLIENT
    total: int = 512
    head_seconds: float = HEAD_SECONDS
    trusted_proxies: tuple[str, ...] = ()

    @cached_property
    def proxy_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        return trusted_networks(self.trusted_proxies)

    def is_proxy(self, address: Optional[str]) -> bool:
        """Whether ``address`` (a connection's) is one of the trusted proxies'."""
        if not address or not self.trusted_proxies:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.proxy_networks)


def raise_descriptor_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (no privilege needed); return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 1 << 16)
    if soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass  # some containers refuse: keep the soft limit, the budget below follows it
    return soft


def connection_budget(descriptors: int, games_at_once: int) -> int:
    """How many connections may be open at once: the descriptors left after the games' and the server's own reserve."""
    reserve = RESERVE_BASE + RESERVE_PER_GAME * max(1, games_at_once)
    return max(16, descriptors - reserve)


def guarded_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with ``limits`` enforced (a class per server: the limits are its own)."""

    # The connections open from each address, this one's among them: counted as they open and close (counting
    # them among all at each new one cost a scan of every open stream: 300 at a class's peak).
    open_from: dict[Optional[str], int] = {}

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._head_timer: Optional[asyncio.TimerHandle] = None
            address = self.client[0] if self.client else None
            self._counted_as, self._counted = address, True
            open_from[address] = open_from.get(address, 0) + 1
            # a proxy's clients are capped as it forwards them
            same = 0 if limits.is_proxy(address) else open_from[address]
            if len(self.connections) > limits.total or same > limits.per_client:
                who = "from your address" if same > limits.per_client else "in all"
                self._refuse(f"too many connections {who}: close some and try again")
                return
            self._arm_head_timer()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.is_closing():
                return
            if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
                self._arm_head_timer()  # part of a head has come: the rest must follow in time
            else:
                self._disarm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_head_timer()
            if getattr(self, "_counted", False):  # (once: a connection is lost once, but a count must never go wrong)
                self._counted = False
                left = open_from[self._counted_as] - 1
                if left:
                    open_from[self._counted_as] = left
                else:
                    del open_from[self._counted_as]
            super().connection_lost(exc)

        def _arm_head_timer(self) -> None:
            if self._head_timer is None:
                self._head_timer = self.loop.call_later(limits.head_seconds, self._head_too_slow)

        def _disarm_head_timer(self) -> None:
            timer = getattr(self, "_head_timer", None)
            if timer is not None:
                timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self._refuse(f"the request's head took more than {limits.head_seconds:g} s", status=408)

        def _refuse(self, why: str, status: int = 503) -> None:
            body = (why + "\n").encode("utf-8")
            phrase = {408: b"Request Timeout", 503: b"Service Unavailable"}[status]
            self.transport.write(b"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: %d\r\n"
                                 b"Connection: close\r\nContent-Length: %d\r\n\r\n%s"
                                 % (status, phrase, RETRY_SECONDS, len(body), body))
            self.transport.close()

    return GuardedH11Protocol


class ForwardedClients:
    """ASGI middleware: no forwarded client holds more than ``per_client`` requests at once (503, ``Retry-After``).

    It runs inside uvicorn's proxy-headers middleware, so ``scope["client"]``
    is the client the trusted proxy named in ``X-Forwarded-For`` (and the
    connection's own address for a request that came straight in, which the
    per-client connection cap holds already: one request at a time per
    connection).  A request in flight is what a connection was without a
    proxy: an open event stream, a page being sent, an upload being read.
    """

    def __init__(self, app: ASGIApp, per_client: int = PER_CLIENT) -> None:
        self.app, self.per_client = app, per_client
        self.open: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = str(client[0]) if client else ""
        if self.open.get(address, 0) >= self.per_client:
            body = f"too many requests at once from your address (more than {self.per_client}): try again\n".encode()
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"retry-after", str(RETRY_SECONDS).encode()),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        self.open[address] = self.open.get(address, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open[address] -= 1
            if not self.open[address]:
                del self.open[address]


class QuietLoopErrors:
    """An event loop exception handler that logs the same kind of error at most once every few seconds.

    When every descriptor is in use, asyncio's accept fails and logs a
    traceback each time it retries: 122 MB of log in a minute, once.  The
    first is logged, then one line every :data:`LOG_EVERY_SECONDS` with the
    count left out.
    """

    def __init__(self, logger: logging.Logger, every: float = LOG_EVERY_SECONDS) -> None:
        self.logger, self.every = logger, every
        self.last: dict[str, float] = {}
        self.left_out: dict[str, int] = {}

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        kind = f"{context.get('message', '')}: {type(error).__name__ if error else ''}"
        now = time.monotonic()
        if now - self.last.get(kind, -self.every) < self.every:
            self.left_out[kind] = self.left_out.get(kind, 0) + 1
            return
        self.last[kind] = now
        skipped = self.left_out.pop(kind, 0)
        more = f" ({skipped} more like it in the last {self.every:g} s were not logged)" if skipped else ""
        self.logger.error("%s: %s%s", context.get("message", "event loop error"), error, more)
