"""``othello class serve DIR``: the API, the admission worker and the ladder, in one process that may be killed.

Starting is recovering: the games that were running when the server last
stopped (or was killed) are voided and queued again, versions still
``checking`` are checked again, and agent processes a killed server left
are ended.  One server per class folder (a lock file says so).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import ssl
import sys
from pathlib import Path
from typing import Callable, Optional

from .admission import AdmissionWorker
from .final import LadderPause
from .connections import ConnectionLimits, QuietLoopErrors, connection_budget, guarded_protocol, raise_descriptor_limit
from .site import create_app
from .arena import (DaskPool, LocalPool, Pool, SandboxUnavailable, cpu_line, default_concurrency, is_loopback,
                    kill_orphans, listen, prepare_builtins, require_sandbox)
from .ladder import Ladder, Scheduler, recover
from .roster import keep_private, read_instructor_token
from .settings import ClassSettings, SettingsError, load
from .store import ClassStore
from .uploads import remove_tree

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


def make_pool(settings: ClassSettings, slots: Optional[int], dask: Optional[str]) -> Pool:
    if dask:
        return DaskPool(dask, slots)
    return LocalPool(slots or settings.ladder.concurrency or default_concurrency())


def tls_context(certificate: Path, key: Path) -> ssl.SSLContext:
    """The server's TLS context from PEM files; :class:`ServerError` naming the file when they do not load."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(str(certificate), str(key))
    except (OSError, ssl.SSLError) as exc:
        raise ServerError(f"--tls-cert {certificate} with --tls-key {key}: cannot load them: {exc}") from None
    return context


def serve(folder: Path, host: str, port: int, slots: Optional[int], dask: Optional[str],
          echo: Callable[[str], None], tls: Optional[tuple[Path, Path]] = None) -> None:
    """Run the class server until interrupted (HTTPS with ``tls``: a certificate and its key)."""
    import uvicorn

    if tls is not None:
        tls_context(*tls)  # refused here, with the file named, rather than deep inside the server's start

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
    # Every descriptor this user may have: a crowd of connections must not starve the games of theirs.
    descriptors = raise_descriptor_limit()
    held = lock(settings.folder)
    store = ClassStore(settings.database)
    (settings.folder / "games").mkdir(exist_ok=True)
    ended = kill_orphans(settings.folder / "games")
    for leftover in ("checks", "submissions/.incoming"):  # a killed check's games, a half-received upload
        remove_tree(settings.folder / leftover)
    replayed = recover(store, settings)
    checking = store.checking_versions()
    pool = make_pool(settings, slots, dask)
    ladder = Ladder(settings, store)

    def say(line: str) -> None:  # the server's own faults, for the instructor's terminal
        print(line, file=sys.stderr, flush=True)

    admission = AdmissionWorker(settings, store, log=say)
    # a final started from the dashboard or from a terminal: the ladder starts no game until it ends
    final_running = LadderPause(settings.folder, say, pool.remote)
    scheduler = Scheduler(ladder, pool, paused=lambda: final_running() or admission.busy.is_set(), log=say)
    admission.on_decided = scheduler.wake.set
    loopback = is_loopback(host)
    app = create_app(settings, store, admission.wake.set, loopback)
    try:
        listener, address = listen(host, port)
    except OSError as exc:
        raise ServerError(f"cannot listen on {host}:{port}: {exc}") from None
    if tls is not None:
        address = "https://" + address.removeprefix("http://")
    echo(f"Othello class server for {settings.name} at {address}")
    echo(f"The instructor: {address}?token={token}")
    echo(f"Students: their own link, {address}?token=THEIR_TOKEN (tokens.csv)")
    if replayed or checking or ended:
        echo(f"Recovered: {len(replayed)} games voided by the stop are queued again, {len(checking)} versions "
             f"are checked again, {ended} agent processes left over were ended")
    if not loopback and tls is None:
        echo(f"WARNING: listening on {host}, beyond this machine, without TLS: every token (the instructor's too) "
             "travels in clear text, readable by anyone on the network path. Give --tls-cert and --tls-key, or "
             "serve behind an HTTPS reverse proxy (docs/OPERATORS.md).")
    elif not loopback:
        echo(f"Listening on {host}, beyond this machine, over TLS: anyone who can reach it sees the login page; "
             "every answer still needs a token.")
    echo(cpu_line(pool.slots, bool(dask), sandboxed=True))  # every game runs in the sandbox (required above)
    echo(f"Games at once: {pool.slots}" + (f" (Dask at {dask})" if dask else "") + ". Ctrl-C stops it.")
    sys.stdout.flush()
    prepare_builtins([ref.builtin for ref in settings.references], lambda line: echo(line))
    admission.start()
    scheduler.start()
    limits = ConnectionLimits(total=connection_budget(descriptors, pool.slots))
    try:
        config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=2,
                                http=guarded_protocol(limits),
                                ssl_certfile=str(tls[0]) if tls else None, ssl_keyfile=str(tls[1]) if tls else None)
        server = uvicorn.Server(config)

        async def run() -> None:
            asyncio.get_running_loop().set_exception_handler(QuietLoopErrors(logging.getLogger("uvicorn.error")))
            await server.serve(sockets=[listener])

        asyncio.run(run())
    finally:
        app.state.api.final.stop()  # a final started from the page: resumed by the next one
        admission.stop()
        scheduler.stop()
        pool.close(abandon=True)
        scheduler.join(timeout=10)
        store.close()
        os.close(held)
