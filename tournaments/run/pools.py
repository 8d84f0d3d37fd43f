"""Where a tournament's games run: threads of this process, or a Dask cluster; and ending what a runner left.

A pool runs :func:`.jobs.play_job` ``slots`` games at once.  How many by
default (:func:`default_concurrency`): one core per game, one left for the
referees.  On this machine each slot has its own cores
(:func:`~othello_arena.referee.cores.core_sets`), and the game played in
it is pinned to them: an agent's busy turn takes no CPU from the games
beside it.  On a Dask cluster games are not pinned (:func:`cpu_line`).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import queue
import signal
import time
from pathlib import Path
from typing import Any, Callable, Optional, Protocol

from ...referee.cores import core_sets, default_slots, describe_sets, usable_cores
from ...referee.keeper import KEEPER
from .jobs import GameJob, PlayedGame, play_job


class RunnerError(RuntimeError):
    """The tournament cannot run (a setup problem, not an agent's fault)."""

def default_concurrency(cores: Optional[int] = None) -> int:
    """Games at once by default (``concurrency = "auto"``): the usable cores less one, at least one.

    The two agents of a game alternate, so a game needs one core, its own
    (:class:`LocalPool` pins it there); the referees and the runner mostly
    wait on files but still need some CPU: one core is left for them.
    """
    return default_slots(cores or len(usable_cores()))


def game_cores(slots: int) -> list[tuple[int, ...]]:
    """The cores of each of ``slots`` games at once on this machine; ``[]`` where there is no CPU affinity."""
    if not hasattr(os, "sched_setaffinity"):
        return []
    return core_sets(slots, usable_cores())


def cpu_line(slots: int, remote: bool, sandboxed: bool) -> str:
    """The start line saying how the games at once are kept apart (loudly where they are not)."""
    if remote:
        return ("cpu: WARNING: games on a Dask cluster are not pinned to cores: the games of one worker share its "
                "cores (one thread per worker keeps them apart)")
    sets = game_cores(slots)
    line = describe_sets(sets)
    if sets and not sandboxed:
        line += "; WARNING: without the sandbox an agent can leave its cores (sched_setaffinity)"
    return line


class Pool(Protocol):
    """Where games run: ``slots`` games at once; ``remote`` pools return files as data."""

    remote: bool

    @property
    def slots(self) -> int: ...

    def submit(self, job: GameJob, on_event: Optional[Callable[[Any], None]] = None) -> Any: ...

    def wait(self, futures: list[Any], timeout: float) -> list[Any]: ...

    def close(self, abandon: bool) -> None: ...


class LocalPool:
    """Games in threads of this process (each game's agents are processes of their own), each on its own cores.

    A game takes a free slot's cores when it starts and gives them back when
    it ends: two games in flight never hold the same slot.
    """

    remote = False

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=slots, thread_name_prefix="game")
        self.children_before = _child_pids()
        self.core_sets = game_cores(slots)
        self.free_cores: queue.SimpleQueue[tuple[int, ...]] = queue.SimpleQueue()
        for cpus in self.core_sets:
            self.free_cores.put(cpus)

    def submit(self, job: GameJob,
               on_event: Optional[Callable[[Any], None]] = None) -> concurrent.futures.Future[PlayedGame]:
        return self.executor.submit(self._play, job, on_event)

    def _play(self, job: GameJob, on_event: Optional[Callable[[Any], None]]) -> PlayedGame:
        if not self.core_sets:
            return play_job(job, on_event)
        cpus = self.free_cores.get()  # never waits: as many sets as threads
        try:
            return play_job(dataclasses.replace(job, config=dataclasses.replace(job.config, cpus=cpus)), on_event)
        finally:
            self.free_cores.put(cpus)

    def wait(self, futures: list[Any], timeout: float) -> list[Any]:
        done, _ = concurrent.futures.wait(futures, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED)
        return list(done)

    def close(self, abandon: bool) -> None:
        if abandon:
            # The games in flight are abandoned (replayed on resume): end their
            # agents, so the referee threads return at once.
            _terminate_children(self.children_before)
        self.executor.shutdown(wait=True, cancel_futures=True)


class DaskPool:
    """Games on a Dask distributed cluster; the runner keeps the only database."""

    remote = True

    def __init__(self, address: str, slots: Optional[int], timeout: float = 20.0) -> None:
        from distributed import Client

        try:
            self.client = Client(address, timeout=f"{timeout}s")
        except OSError as exc:
            raise RunnerError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        self.fixed_slots = slots
        self.checked = 0.0
        self.total_threads = 1

    @property
    def slots(self) -> int:
        """Games in flight: as given, else one per worker thread (workers may join or leave)."""
        if self.fixed_slots:
            return self.fixed_slots
        if time.monotonic() - self.checked > 5.0:
            self.total_threads = max(1, sum(self.client.nthreads().values()))
            self.checked = time.monotonic()
        return self.total_threads

    def submit(self, job: GameJob, on_event: Optional[Callable[[Any], None]] = None) -> Any:
        # The game runs on another machine: no live moves (the display shows who plays whom and since when).
        # pure=False: a game replayed after a crash is a new task, not a cached result.
        return self.client.submit(play_job, job, pure=False, key=f"othello-{job.key}-{time.time_ns()}")

    def wait(self, futures: list[Any], timeout: float) -> list[Any]:
        from distributed import wait

        try:
            done, _ = wait(futures, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:  # also asyncio's and Dask's (aliases since Python 3.11)
            return []
        return list(done)

    def close(self, abandon: bool) -> None:
        self.client.close()


def _proc_pids() -> list[int]:
    """Every process's pid, from ``/proc`` (Linux, as the sandbox and the keeper are)."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _child_pids() -> set[int]:
    """This process's children, from each process's parent in ``/proc/PID/stat``.

    Read directly, not through psutil: its import and its scan of the same
    files took 25-30 ms of CPU at every start of a match (issue 38).
    """
    me = os.getpid()
    children = set()
    for pid in _proc_pids():
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
            if int(stat[stat.rindex(b")") + 1:].split()[1]) == me:  # (the name may hold spaces and parentheses)
                children.add(pid)
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile
    return children


def _real_uid(pid: int) -> int:
    """The real user id of process ``pid`` (the first of ``Uid:`` in its status); OSError if it ended."""
    with open(f"/proc/{pid}/status", "rb") as handle:
        for line in handle:
            if line.startswith(b"Uid:"):
                return int(line.split()[1])
    raise OSError(f"process {pid} has no Uid line")


def _terminate_children(keep: set[int]) -> None:
    """Kill the processes this runner started (the agents of the abandoned games) and theirs."""
    import psutil

    if KEEPER.pid is not None:  # the keeper outlives the runner on purpose (referee/keeper.py)
        keep = keep | {KEEPER.pid}
    for child in psutil.Process().children():
        if child.pid in keep:
            continue
        try:
            family = [child, *child.children(recursive=True)]
        except psutil.Error:
            continue
        for process in family:
            try:
                process.kill()
            except psutil.Error:
                pass


def kill_orphans(root: Path) -> int:
    """End the agent processes a dead runner left under ``root`` (the games directory); return how many.

    An agent process is recognised by the ``OTHELLO_SEAT`` the referee puts
    in its environment (kept by its daemons too), whose first part stands for
    ``root`` (:func:`~othello_arena.referee.launch.games_mark`), or, run
    without the sandbox, by a working directory in an agent's directory
    (``root/GAME/AGENT``); only this user's processes, and only while this
    runner holds the tournament's lock, so none can be a live game's.
    """
    from ...referee.launch import games_mark

    root = root.resolve()
    marker = f"OTHELLO_SEAT={games_mark(root)}.".encode()
    killed = 0
    for pid in _proc_pids():  # (read from /proc directly: see _child_pids)
        try:
            if pid == os.getpid() or _real_uid(pid) != os.getuid():
                continue
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:  # a zombie has none; its environment is empty too
                cwd = ""
            inside = bool(cwd) and len(Path(cwd).parts) > len(root.parts) + 1 and Path(cwd).is_relative_to(root)
            if not inside:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    inside = marker in handle.read()
            if inside:
                os.kill(pid, signal.SIGKILL)
                killed += 1
        except (OSError, ValueError):
            continue
    return killed
