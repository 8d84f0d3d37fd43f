"""The class server's second process: the admission checks and the ladder's games, away from the pages.

One Python process runs one thread at a time.  The checks' referee threads
work out their scenarios in pure Python (a check steers its games with a
search), and every such thread that holds the interpreter makes the pages'
event loop wait for it at each of its system calls: with 300 students'
pages open, a check beside them made every answer late (bench/RESULTS.md,
"a class of 300").  So ``othello class serve`` runs the pages in its own
process and starts this one (``python -m othello_arena.classroom.worker
FOLDER --parent PID``) for the admission worker, the ladder's scheduler and
its pool; the two share the class's database, whose change marks already
tell each process what the other wrote.

Starting is recovering, here: each start (the server's, or a start again
after this process died) ends the agent processes a dead worker left,
removes a killed check's folders and a half-received upload, queues again
the games that were running, and checks again the versions still
``checking``.  The server holds the class folder's lock, and this process
holds it too (the descriptor is inherited): while either lives, no other
server starts, so the processes ended here cannot be a live game's.

Talking with the server: its start lines go to the server's stdout, then
``READY`` (or ``ERROR text`` when it cannot start) on the descriptor
``--ready``; a byte on stdin asks the admission worker to look at once (an
upload, a verdict by hand); stdin's end, SIGTERM or SIGINT stop it; it dies
with the server (``PR_SET_PDEATHSIG``).  It runs in a session of its own.  Its events go to stderr, the
server's log.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Callable, Optional, Sequence

from .admission import AdmissionWorker
from .arena import (DaskPool, LocalPool, Pool, cpu_line, default_concurrency, kill_orphans, prepare_builtins,
                    usable_cores)
from .escapes import log_event, make_logs_visible
from .final import LadderPause
from .grades import STANDINGS_SHARE, keep_standings
from .ladder import Ladder, Scheduler, game_folder, recover
from .settings import ClassSettings, SettingsError, load
from .store import ClassStore, GameStatus
from .uploads import remove_tree

READY = "READY"
ERROR = "ERROR "
RESTART_DELAYS = (1.0, 5.0, 30.0)  # seconds before a start again, when the last start died soon after it began
STEADY_SECONDS = 60.0  # a worker that lived this long died of something new: start it again at once
STANDINGS_LOOK_SECONDS = 2.0  # how often the standings' thread looks whether the class changed
STOP_SECONDS = 20.0  # how long a stopping worker may take to end its games and checks before it is killed
_PR_SET_PDEATHSIG = 1


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


def recover_folder(settings: ClassSettings, store: ClassStore) -> Optional[str]:
    """Undo what a stop or a kill left; return the line that says what was done, ``None`` when nothing was."""
    (settings.folder / "games").mkdir(exist_ok=True)
    ended = kill_orphans(settings.folder / "games")
    for leftover in ("checks", "submissions/.incoming"):  # a killed check's games, a half-received upload
        remove_tree(settings.folder / leftover)
    stopped = store.games(GameStatus.RUNNING)  # voided by recover(): their folders are kept, as the referee left them
    replayed = recover(store, settings)
    for game in stopped:  # (a game that ended is made so as it is recorded: Ladder.record)
        make_logs_visible(game_folder(settings, game.id))
    checking = store.checking_versions()
    if not (replayed or checking or ended):
        return None
    return (f"Recovered: {len(replayed)} games voided by the stop are queued again, {len(checking)} versions "
            f"are checked again, {ended} agent processes left over were ended")


def say(line: str) -> None:
    """An event of the admission or the ladder, for the instructor's terminal (the server's log)."""
    log_event(line)


def run(folder: Path, slots: Optional[int], dask: Optional[str], ready: Callable[[str], None],
        stop: threading.Event) -> None:
    """Recover the folder, start the admission worker and the ladder, say ``READY``; run until ``stop`` is set."""
    try:
        settings = load(folder)
    except SettingsError as exc:
        ready(ERROR + str(exc))
        return
    store = ClassStore(settings.database)
    try:
        recovered = recover_folder(settings, store)
        try:
            pool = make_pool(settings, slots, dask)
        except Exception as exc:  # an unreachable Dask scheduler: the server says why and does not start
            ready(ERROR + str(exc))
            return
        if recovered:
            print(recovered, flush=True)
        # Checks run on the cores the ladder's games leave free, one a core, beside them; admission comes before
        # the ladder: while versions wait with no such core free, the ladder starts no game and, once its games in
        # flight have ended, its cores check versions too (where the games take every core, they are the only ones).
        free = admission_cores(pool)
        ladder_lanes = tuple(dict.fromkeys(pool.core_sets)) if isinstance(pool, LocalPool) else ()  # each set once
        scheduler: Optional[Scheduler] = None
        admission = AdmissionWorker(settings, store, log=say, cpus=free or (), ladder_lanes=ladder_lanes,
                                    ladder_idle=lambda: scheduler is not None and not scheduler.running)
        if free is None:  # the games take every core: checks have the ladder's alone (any core, if it pins none)
            admission.own_lanes = ()
            admission.ladder_lanes = ladder_lanes or ((),)
        # a final started from the dashboard or from a terminal: the ladder starts no game until it ends
        final_running = LadderPause(settings.folder, say, pool.remote)
        scheduler = Scheduler(Ladder(settings, store), pool,
                              paused=lambda: final_running() or admission.wants_ladder_cores(), log=say)
        admission.on_decided = scheduler.wake.set
        print(cpu_line(pool.slots, bool(dask), sandboxed=True), flush=True)  # the server required the sandbox
        print("Admission checks: " + (f"one a core on cpu {','.join(map(str, free))}, beside the ladder's games"
                                      if free else "on the ladder's cores, which take every core (-j fewer leaves one)")
              + ("; while versions wait for a core, the ladder starts no game and its cores check them too"
                 if ladder_lanes else ""), flush=True)
        print(f"Games at once: {pool.slots}" + (f" (Dask at {dask})" if dask else "") + ". Ctrl-C stops it.",
              flush=True)
        prepare_builtins([ref.builtin for ref in settings.references], lambda line: print(line, flush=True))
        admission.start()
        scheduler.start()
        threading.Thread(target=_wake_on_input, args=(admission.wake, stop), name="wake", daemon=True).start()
        threading.Thread(target=keep_standings_current, args=(settings, store, stop), name="standings",
                         daemon=True).start()
        ready(READY)
        try:
            stop.wait()
        finally:
            admission.stop()
            scheduler.stop()
            pool.close(abandon=True)
            scheduler.join(timeout=10)
    finally:
        store.close()


def keep_standings_current(settings: ClassSettings, store: ClassStore, stop: threading.Event) -> None:
    """The standings kept current in the database for the pages (:func:`.grades.keep_standings`), until ``stop``.

    Looked at every :data:`STANDINGS_LOOK_SECONDS` (one query), worked out
    again when the class changed, and no sooner than
    :data:`.grades.STANDINGS_SHARE` times what the last working out cost
    after it: at most a fifth of a core, so the checks beside them keep
    theirs.  A fault is said in the log once, and tried again at the next look.
    """
    next_at, said = 0.0, ""
    while not stop.is_set():
        if time.monotonic() >= next_at:
            started = time.thread_time()  # CPU: not the time the thread queued for the interpreter
            try:
                if keep_standings(settings, store):
                    next_at = time.monotonic() + STANDINGS_SHARE * (time.thread_time() - started)
                said = ""
            except Exception:
                fault = traceback.format_exc()
                if fault != said and not stop.is_set():
                    say("working out the standings: " + fault)
                said = fault
        stop.wait(STANDINGS_LOOK_SECONDS)


def _wake_on_input(wake: threading.Event, stop: threading.Event) -> None:
    """Each byte the server writes wakes the admission worker; the end of its pipe (the server gone) stops us."""
    while True:
        try:
            data = os.read(0, 512)
        except OSError:
            data = b""
        if not data:
            stop.set()
            return
        wake.set()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m othello_arena.classroom.worker", description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--parent", type=int, required=True, help="the server's pid: this process dies with it")
    parser.add_argument("--ready", type=int, required=True, help="the descriptor READY or ERROR is written to")
    parser.add_argument("--slots", type=int, default=None)
    parser.add_argument("--dask", default=None)
    args = parser.parse_args(argv)
    # Die with the server: its lock is what makes this process's recovery safe, and a worker left alone would play
    # on beside the next server's.  (Checked after the call: the server may have died before it.)
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != args.parent:
        return 1
    # A session of its own, so a scheduler share of its own (Linux's autogroups share a core between sessions first):
    # the pages keep theirs however many checks and games run here.  Ctrl-C at the terminal reaches the server
    # alone, which then closes our stdin.
    os.setsid()
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda signum, frame: stop.set())
    with os.fdopen(args.ready, "w", encoding="utf-8") as channel:

        def ready(line: str) -> None:
            try:
                channel.write(line.replace("\n", " ") + "\n")
                channel.flush()
            except OSError:  # the server is gone (stopped while we started): stop too
                stop.set()

        run(args.folder, args.slots, args.dask, ready, stop)
    say("the admission checks and the ladder stopped (a game or a check they stopped is played or made again "
        "at the next start)")
    return 0


class WorkerProcess:
    """The server's side: starts the worker, wakes it, starts it again if it dies, stops it with the server."""

    def __init__(self, folder: Path, slots: Optional[int], dask: Optional[str], lock_descriptor: int,
                 log: Callable[[str], None]) -> None:
        self.folder, self.slots, self.dask, self.lock, self.log = folder, slots, dask, lock_descriptor, log
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.stopping = threading.Event()
        self._watcher: Optional[threading.Thread] = None

    def start(self) -> None:
        """Start it and wait until it is ready; :class:`RuntimeError` with its reason when it cannot start."""
        self._spawn()
        self._watcher = threading.Thread(target=self._watch, name="worker-watch", daemon=True)
        self._watcher.start()

    def _spawn(self) -> None:
        read_end, write_end = os.pipe()
        command = [sys.executable, "-m", "othello_arena.classroom.worker", str(self.folder), "--parent",
                   str(os.getpid()), "--ready", str(write_end)]
        if self.slots:
            command += ["--slots", str(self.slots)]
        if self.dask:
            command += ["--dask", self.dask]
        sys.stdout.flush()  # our lines before the worker's, on the same terminal
        try:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, pass_fds=(write_end, self.lock))
        finally:
            os.close(write_end)
        try:
            with os.fdopen(read_end, encoding="utf-8") as channel:
                answer = channel.readline().rstrip("\n")
        except BaseException:  # Ctrl-C while it starts: it is in a session of its own, so stopped from here
            process.terminate()
            self._end(process)
            raise
        if answer != READY:
            self._end(process)
            reason = answer.removeprefix(ERROR) if answer.startswith(ERROR) else \
                f"it ended with status {process.returncode} before it was ready"
            raise RuntimeError(f"the admission checks and the ladder cannot start: {reason}")
        assert process.stdin is not None
        os.set_blocking(process.stdin.fileno(), False)  # a wake never waits (a full pipe has wakes enough)
        self.process = process

    @staticmethod
    def _end(process: subprocess.Popen[bytes]) -> None:
        """Wait for ``process`` to end (what it stopped is made again at the next start); killed if it takes long."""
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def wake(self) -> None:
        """Ask the admission worker to look at once (an upload received, a verdict by hand)."""
        process = self.process
        if process is None or process.stdin is None:
            return
        try:
            os.write(process.stdin.fileno(), b"!")
        except (BlockingIOError, BrokenPipeError, ValueError, OSError):
            pass  # already woken, or dead: a worker started again looks at every version waiting

    def _watch(self) -> None:
        failures = 0  # starts in a row that died before STEADY_SECONDS
        while True:
            process = self.process
            assert process is not None
            began = time.monotonic()
            code = process.wait()
            if self.stopping.is_set():
                return
            failures = 0 if time.monotonic() - began >= STEADY_SECONDS else failures + 1
            self.log(f"the admission checks and the ladder ended unexpectedly (status {code}): started again")
            while True:
                delay = RESTART_DELAYS[min(failures, len(RESTART_DELAYS)) - 1] if failures else 0.0
                if self.stopping.wait(delay):
                    return
                try:
                    self._spawn()  # (its recovery ends the agents the dead one left, and queues its games again)
                    break
                except RuntimeError as exc:
                    self.log(str(exc))
                    failures += 1

    def stop(self) -> None:
        """End the worker: its games and checks stop (made again at the next start); killed if it takes too long."""
        self.stopping.set()
        process = self.process
        if process is None:
            return
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
        self._end(process)


if __name__ == "__main__":
    sys.exit(main())
