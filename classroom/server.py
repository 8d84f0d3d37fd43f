"""``othello class serve DIR``: the pages and the API here, the admission checks and the ladder in a second process.

The pages run in this process alone; the checks and the games in the
worker it starts (:mod:`.worker`), which dies with it: a check's pure-Python
search holding the interpreter would make every page wait for it.  The
worker starts again by itself if it dies.  Either may be killed: starting
is recovering (the worker's :func:`~.worker.recover_folder`).  One server
per class folder (a lock file says so).

Once started it logs one line per event on stderr, the time first
(:func:`.escapes.event_line`): a submission received or refused for the
rate limit, a card decided, a ladder game finished, the ladder idle or
playing again, a final started or ended, and the server's own faults.  A
line names students, versions and verdicts, never a student's code or
stderr.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import ssl
import threading
from pathlib import Path
from typing import Callable, Optional

from .connections import (ConnectionLimits, ForwardedClients, QuietLoopErrors, connection_budget, guarded_protocol,
                          raise_descriptor_limit, trusted_networks)
from .escapes import log_event, make_loggers_visible
from .site import create_app
from .arena import SandboxUnavailable, is_loopback, listen, require_sandbox
from .roster import keep_private, read_instructor_token
from .service import warm
from .settings import SettingsError, load
from .store import ClassStore
from .worker import WorkerProcess

LOCK_FILE = "server.lock"


class ServerError(RuntimeError):
    """The server cannot start (the message says why)."""


def lock(folder: Path) -> int:
    """Hold the class folder's lock for this process's life; refuse if another server holds it."""
    descriptor = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise ServerError(f"another othello class serve runs on {folder} (it holds {folder / LOCK_FILE})") from None
    return descriptor


def tls_context(certificate: Path, key: Path) -> ssl.SSLContext:
    """The server's TLS context from PEM files; :class:`ServerError` naming the file when they do not load."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(str(certificate), str(key))
    except (OSError, ssl.SSLError) as exc:
        raise ServerError(f"--tls-cert {certificate} with --tls-key {key}: cannot load them: {exc}") from None
    return context


def serve(folder: Path, host: str, port: int, slots: Optional[int], dask: Optional[str],
          echo: Callable[[str], None], tls: Optional[tuple[Path, Path]] = None,
          trusted_proxies: tuple[str, ...] = ()) -> None:
    """Run the class server until interrupted (HTTPS with ``tls``: a certificate and its key).

    ``trusted_proxies``: the reverse proxies' addresses, the only ones whose
    ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed (none by default).
    """
    import uvicorn

    if tls is not None:
        tls_context(*tls)  # refused here, with the file named, rather than deep inside the server's start
    try:
        trusted_networks(trusted_proxies)
    except ValueError as exc:
        raise ServerError(f"--trusted-proxy: {exc}") from None

    try:
        settings = load(folder)
        token = read_instructor_token(settings.folder)
    except SettingsError as exc:
        raise ServerError(str(exc)) from None
    try:
        require_sandbox()  # every build, check and game runs in it: without it, nothing could be admitted
    except SandboxUnavailable as exc:
        raise ServerError(f"the sandbox cannot run here, so no student's program can: {exc}") from None
    if keep_private(settings.folder):
        echo(f"{settings.folder} was open to other users of this machine: now the instructor's only (mode 700)")
    # Every descriptor this user may have, for the connections here and (inherited) for the worker's games.
    descriptors = raise_descriptor_limit()
    held = lock(settings.folder)
    store = ClassStore(settings.database)

    say = log_event  # the server's events and its own faults, for the instructor's terminal

    worker = WorkerProcess(settings.folder, slots, dask, held, say)
    loopback = is_loopback(host)
    # Behind a proxy on this machine the Host header is the public name: the loopback rule (no DNS rebinding from
    # a page this machine's browser opens) would refuse every request; the proxy stands where that rule stood.
    app = create_app(settings, store, worker.wake, loopback and not trusted_proxies, log=say)
    try:
        listener, address = listen(host, port)
    except OSError as exc:
        store.close()
        os.close(held)
        raise ServerError(f"cannot listen on {host}:{port}: {exc}") from None
    if tls is not None:
        address = "https://" + address.removeprefix("http://")
    echo(f"Othello class server for {settings.name} at {address}")
    echo(f"The instructor: {address}?token={token}")
    echo(f"Students: their own link, {address}?token=THEIR_TOKEN (tokens.csv)")
    if not loopback and tls is None:
        echo(f"WARNING: listening on {host}, beyond this machine, without TLS: every token (the instructor's too) "
             "travels in clear text, readable by anyone on the network path. Give --tls-cert and --tls-key, or "
             "serve behind an HTTPS reverse proxy (docs/OPERATORS.md).")
    elif not loopback:
        echo(f"Listening on {host}, beyond this machine, over TLS: anyone who can reach it sees the login page; "
             "every answer still needs a token.")
    if trusted_proxies:
        echo(f"Behind a reverse proxy: X-Forwarded-For and X-Forwarded-Proto are believed from "
             f"{', '.join(trusted_proxies)} only, and each forwarded client is capped as a connection would be.")
    try:
        worker.start()  # its lines follow: what it recovered, the cores, the games at once (it listens meanwhile)
    except RuntimeError as exc:
        listener.close()
        store.close()
        os.close(held)
        raise ServerError(str(exc)) from None
    threading.Thread(target=warm, args=(settings, store, say), name="warm", daemon=True).start()
    # The games run in the worker, with descriptors of their own: the connections have all of these but the reserve.
    limits = ConnectionLimits(total=connection_budget(descriptors, 0), trusted_proxies=trusted_proxies)
    try:
        # uvicorn believes forwarded headers from 127.0.0.1 unless told otherwise: here from the proxies named alone
        config = uvicorn.Config(ForwardedClients(app, limits.per_client) if trusted_proxies else app,
                                proxy_headers=bool(trusted_proxies),
                                forwarded_allow_ips=",".join(trusted_proxies) if trusted_proxies else None,
                                log_level="warning", access_log=False, timeout_graceful_shutdown=2,
                                http=guarded_protocol(limits),
                                ssl_certfile=str(tls[0]) if tls else None, ssl_keyfile=str(tls[1]) if tls else None)
        server = uvicorn.Server(config)
        make_loggers_visible("uvicorn", "uvicorn.error", "uvicorn.access")  # (their handlers exist from Config on)

        async def run() -> None:
            asyncio.get_running_loop().set_exception_handler(QuietLoopErrors(logging.getLogger("uvicorn.error")))
            await server.serve(sockets=[listener])

        asyncio.run(run())
    finally:
        app.state.api.final.stop()  # a final started from the page: resumed by the next one
        worker.stop()
        store.close()
        os.close(held)
        say("stopped (a game or a check it stopped is played or made again at the next start)")
