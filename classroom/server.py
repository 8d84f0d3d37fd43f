"""``othello class serve DIR``: the API, the admission worker and the ladder, in one process that may be killed.

Starting is recovering: the games that were running when the server last
stopped (or was killed) are voided and queued again, versions still
``checking`` are checked again, and agent processes a killed server left
are ended.  One server per class folder (a lock file says so).

Once started it logs one line per event on stderr, the time first
(:func:`event_line`): a submission received or refused for the rate limit,
a card decided, a ladder game finished, the ladder idle or playing again,
a final started or ended, and the server's own faults.  A line names
students, versions and verdicts, never a student's code or stderr.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import fcntl
import logging
import os
import ssl
import sys
import threading
from pathlib import Path
from typing import Callable, Optional

from .admission import AdmissionWorker
from .connections import (ConnectionLimits, ForwardedClients, QuietLoopErrors, connection_budget, guarded_protocol,
                          raise_descriptor_limit, trusted_networks)
from .escapes import make_loggers_visible, make_logs_visible, visible
from .final import LadderPause
from .site import create_app
from .arena import (DaskPool, LocalPool, Pool, SandboxUnavailable, cpu_line, default_concurrency, is_loopback,
                    kill_orphans, listen, prepare_builtins, require_sandbox, usable_cores)
from .ladder import Ladder, Scheduler, game_folder, recover
from .roster import keep_private, read_instructor_token
from .service import warm
from .settings import ClassSettings, SettingsError, load
from .store import ClassStore, GameStatus
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


def event_line(text: str) -> str:
    """A line of the server's log: the local time with its offset (``2026-11-28T14:03:07+01:00``), then ``text``.

    ``text`` is made visible (:func:`.escapes.visible`): a line may quote a
    name or a reason that a student's upload chose.
    """
    return f"{dt.datetime.now().astimezone().isoformat(timespec='seconds')} {visible(text)}"


def admission_cores(pool: Pool) -> Optional[tuple[int, ...]]:
    """The cores this machine's ladder games leave free (the admission's), ``None`` when they take them all.

    A Dask pool plays elsewhere: every core here is free.
    """
    if not isinstance(pool, LocalPool):
        return tuple(usable_cores())
    taken = {core for cores in pool.core_sets for core in cores}
    free = tuple(core for core in usable_cores() if core not in taken)
    return free or None


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
    # Every descriptor this user may have: a crowd of connections must not starve the games of theirs.
    descriptors = raise_descriptor_limit()
    held = lock(settings.folder)
    store = ClassStore(settings.database)
    (settings.folder / "games").mkdir(exist_ok=True)
    ended = kill_orphans(settings.folder / "games")
    for leftover in ("checks", "submissions/.incoming"):  # a killed check's games, a half-received upload
        remove_tree(settings.folder / leftover)
    stopped = store.games(GameStatus.RUNNING)  # voided by recover(): their folders are kept, as the referee left them
    replayed = recover(store, settings)
    for game in stopped:  # (a game that ended is made so as it is recorded: Ladder.record)
        make_logs_visible(game_folder(settings, game.id))
    checking = store.checking_versions()
    pool = make_pool(settings, slots, dask)
    ladder = Ladder(settings, store)

    def say(line: str) -> None:  # the server's events and its own faults, for the instructor's terminal
        print(event_line(line), file=sys.stderr, flush=True)

    # Checks run on the cores the ladder's games leave free, one a core, beside them; admission comes before the
    # ladder: while versions wait with no such core free, the ladder starts no game and, once its games in flight
    # have ended, its cores check versions too (where the games take every core, they are the only ones).
    free = admission_cores(pool)
    ladder_lanes = tuple(dict.fromkeys(pool.core_sets)) if isinstance(pool, LocalPool) else ()  # (each set once)
    scheduler: Optional[Scheduler] = None
    admission = AdmissionWorker(settings, store, log=say, cpus=free or (), ladder_lanes=ladder_lanes,
                                ladder_idle=lambda: scheduler is not None and not scheduler.running)
    if free is None:  # the games take every core: checks have the ladder's alone (any core, if it pins none)
        admission.own_lanes = ()
        admission.ladder_lanes = ladder_lanes or ((),)
    # a final started from the dashboard or from a terminal: the ladder starts no game until it ends
    final_running = LadderPause(settings.folder, say, pool.remote)
    scheduler = Scheduler(ladder, pool, paused=lambda: final_running() or admission.wants_ladder_cores(), log=say)
    admission.on_decided = scheduler.wake.set
    loopback = is_loopback(host)
    # Behind a proxy on this machine the Host header is the public name: the loopback rule (no DNS rebinding from
    # a page this machine's browser opens) would refuse every request; the proxy stands where that rule stood.
    app = create_app(settings, store, admission.wake.set, loopback and not trusted_proxies, log=say)
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
    if trusted_proxies:
        echo(f"Behind a reverse proxy: X-Forwarded-For and X-Forwarded-Proto are believed from "
             f"{', '.join(trusted_proxies)} only, and each forwarded client is capped as a connection would be.")
    echo(cpu_line(pool.slots, bool(dask), sandboxed=True))  # every game runs in the sandbox (required above)
    echo("Admission checks: " + (f"one a core on cpu {','.join(map(str, free))}, beside the ladder's games" if free else
                                 "on the ladder's cores, which take every core (-j fewer leaves one)")
         + ("; while versions wait for a core, the ladder starts no game and its cores check them too"
            if ladder_lanes else ""))
    echo(f"Games at once: {pool.slots}" + (f" (Dask at {dask})" if dask else "") + ". Ctrl-C stops it.")
    sys.stdout.flush()
    prepare_builtins([ref.builtin for ref in settings.references], lambda line: echo(line))
    admission.start()
    scheduler.start()
    threading.Thread(target=warm, args=(settings, store), name="warm", daemon=True).start()
    limits = ConnectionLimits(total=connection_budget(descriptors, pool.slots), trusted_proxies=trusted_proxies)
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
        admission.stop()
        scheduler.stop()
        pool.close(abandon=True)
        scheduler.join(timeout=10)
        store.close()
        os.close(held)
        say("stopped (a game or a check it stopped is played or made again at the next start)")
