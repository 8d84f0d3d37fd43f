"""One agent's processes: start them (sandboxed), watch, suspend, and kill them all.

Each agent starts in a new session, in its own directory, with ``stdin``
closed and its output (standard output and error) drained by a thread into
its log, of which only the first ``stderr_limit`` bytes are kept.

Sandboxed (the default, :mod:`.sandbox`), the agent runs under ``bwrap`` in
its own PID namespace: every process it starts, however it forks or whatever
it does to its environment, descends from the namespace's first process, so
the kernel's child lists find them all, and killing that first process kills
them all.  A cgroup, where the referee may make one, holds the limits and
freezes the whole tree; otherwise processes are limited by ``RLIMIT_NPROC``
(set inside the sandbox) and suspension stops each process with ``SIGSTOP``.

Memory without a cgroup: no address-space limit (``RLIMIT_AS`` breaks the
runtimes that reserve more than they use: a JVM, javac, rustc) but a
watchdog thread that measures the agent while it runs and kills the whole
sandbox once it is over its limit (what it counts, how and how often:
:mod:`.memory`); :attr:`AgentProcess.out_of_memory_mb` then says why.

Unsandboxed (``--sandbox none``, only when asked for), the processes of an
agent are those of its session or process group, every descendant ever
seen, and any process whose environment holds the agent's ``OTHELLO_SEAT``.
``RLIMIT_NPROC`` then counts every process of the *user* (and not at all for
root), so the child gets "the user's current count plus the agent's
allowance", and the referee counts the agent's processes itself.  A program
that clears its environment and double-forks escapes that mode.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import fcntl
import os
import resource
import shutil
import signal
import struct
import subprocess
import termios
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Optional

from . import memory
from .busy import Usage
from .keeper import KEEPER
from .sandbox import AgentCgroup, SandboxPlan, seccomp_file

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class StartError(Exception):
    """The agent's program could not be started (not found, not executable...)."""


@dataclass
class _ProcInfo:
    ppid: int
    pgrp: int
    session: int
    start: int  # start time in clock ticks since boot: tells a pid reuse apart
    cpu_ticks: int
    state: str


def _read_proc(path: str) -> Optional[bytes]:
    """A small file of ``/proc`` whole, or ``None`` if it is gone (bare system calls: read many times a second)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        parts = []
        while chunk := os.read(fd, 1 << 16):
            parts.append(chunk)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_stat(pid: int) -> Optional[_ProcInfo]:
    raw = _read_proc(f"/proc/{pid}/stat")
    if raw is None:
        return None
    data = raw.decode("ascii", "replace")
    fields = data[data.rfind(")") + 2 :].split()
    # fields[0] is field 3 of proc(5): state, ppid, pgrp, session, ..., utime(14), stime(15), ..., starttime(22)
    try:
        return _ProcInfo(
            ppid=int(fields[1]),
            pgrp=int(fields[2]),
            session=int(fields[3]),
            start=int(fields[19]),
            cpu_ticks=int(fields[11]) + int(fields[12]),  # utime + stime of this process
            state=fields[0],
        )
    except (IndexError, ValueError):
        return None


_SCHEDSTAT = os.path.exists("/proc/self/schedstat")  # the kernel keeps scheduler statistics (CONFIG_SCHED_INFO)


def _schedstat(pid: int) -> tuple[int, int, bool]:
    """Of the live threads of ``pid`` (zeros once it is gone): nanoseconds on a core, nanoseconds runnable but
    waiting for one, and whether one of them is runnable now (running or queued: state R)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0, False
    ran, waited, runnable = 0, 0, False
    for tid in threads:
        raw = _read_proc(f"/proc/{pid}/task/{tid}/schedstat")  # on-CPU ns, run-queue wait ns, time slices
        fields = raw.split() if raw else []
        if len(fields) >= 2 and fields[0].isdigit() and fields[1].isdigit():
            ran += int(fields[0])
            waited += int(fields[1])
        stat = _read_proc(f"/proc/{pid}/task/{tid}/stat")
        if stat and stat[stat.rfind(b")") + 2:].startswith(b"R"):
            runnable = True
    return ran, waited, runnable


def _children(pid: int) -> list[int]:
    children: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return children
    for tid in threads:
        listed = _read_proc(f"/proc/{pid}/task/{tid}/children")
        if listed:
            children += [int(child) for child in listed.split() if child.isdigit()]
    return children


def _has_marker(pid: int, marker: bytes) -> bool:
    if pid == os.getpid():
        return False
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return marker in handle.read().split(b"\0")
    except OSError:
        return False


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _user_process_count() -> int:
    uid = os.getuid()
    count = 0
    for pid in _all_pids():
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                count += 1
        except OSError:
            continue
    return count


_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _limits(nproc: int, file_mb: int, cgroup_joins: list[str], cpus: tuple[int, ...] = (),
            open_files: int = 0) -> Callable[[], None]:
    parent = os.getpid()
    if open_files:  # never above the referee's own hard limit (which the child could not raise)
        open_files = min(open_files, resource.getrlimit(resource.RLIMIT_NOFILE)[1])

    def apply() -> None:  # runs in the child between fork and exec: keep it tiny
        # Die with the referee from the first instruction on: bwrap's own
        # --die-with-parent only starts once bwrap runs, and a referee killed
        # in between would leave an orphan sandbox playing on for ever.
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the referee died before the line above
            os._exit(1)
        for join in cgroup_joins:  # join the agent's cgroup before anything else runs (AgentCgroup.join_paths)
            with open(join, "w") as handle:
                handle.write("0")
        if cpus:  # the game's cores, inherited by bwrap and every process the agent starts
            os.sched_setaffinity(0, cpus)
        if nproc:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if file_mb:
            size = file_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        if open_files:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


# Looks at a process told to end: a pause that doubles from the first to the last (the seconds of a
# fixed 10 ms pause were lost at the end of most games, for a process that took a millisecond to exit).
_EXIT_LOOK_FIRST_PAUSE = 0.0005
_EXIT_LOOK_MAX_PAUSE = 0.01
_KILLED_WAIT = 0.03  # how long what SIGKILL was sent to is looked at, and sent it again, before the keeper is left it

def _fresh_file(path: Path) -> BinaryIO:
    """A new file at ``path`` for writing, replacing (never following) whatever is there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    return os.fdopen(fd, "wb")


def _program_missing(argv: list[str], cwd: Path, search_path: str) -> Optional[str]:
    """Why the command's program cannot be started, or ``None`` (checked before bwrap hides the error)."""
    program = argv[0]
    if "/" in program:
        path = cwd / program
        if not path.exists():
            if os.path.isabs(program):
                return f"no such program ({path})"
            # A relative path that exists where othello runs was made absolute (AgentSpec.parse): this one did not.
            return (f"no such program: {program} was not found in the agent's home, the folder you ran othello in "
                    "(or its tournament cwd): is it built, and are you in its folder?")
        return _not_runnable(path)
    if shutil.which(program, path=search_path) is None:
        return f"no such program in PATH ({search_path})"
    return None


def _not_runnable(path: Path) -> Optional[str]:
    """Why the file at ``path`` cannot be run, or ``None``: a directory is not a program."""
    if path.is_dir():
        return f"{path} is a directory, not a program (give the program inside it, e.g. {path}/NAME)"
    if not os.access(path, os.X_OK):
        return f"permission denied: {path} is not executable (chmod +x, or run it with its interpreter)"
    return None


@dataclass
class AgentProcess:
    """A started agent: its main process and everything it spawned."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    log_path: Path
    memory_mb: int = 0
    max_processes: int = 0
    stderr_limit: int = 1 << 20
    on_exit: Optional[Callable[[], None]] = None
    marker: bytes = b""  # an environment entry only this agent's processes have (OTHELLO_SEAT=...)
    file_mb: int = 0  # RLIMIT_FSIZE: the largest file any of its processes may write
    sandbox: Optional[SandboxPlan] = None  # run inside bwrap (see .sandbox)
    cgroup: Optional[AgentCgroup] = None  # the limits and the freezer of the whole tree
    cpus: tuple[int, ...] = ()  # the game's cores (see .cores); empty: any
    popen: Optional[subprocess.Popen[bytes]] = field(default=None, init=False)
    known: dict[int, int] = field(default_factory=dict, init=False)  # pid -> start time
    cpu: dict[int, int] = field(default_factory=dict, init=False)  # pid -> cpu ticks last seen
    waited: dict[int, int] = field(default_factory=dict, init=False)  # pid -> ns its threads waited for a core, last seen
    peak_processes: int = field(default=0, init=False)
    peak_memory: int = field(default=0, init=False)  # bytes: the watchdog's largest bound (0: not watched)
    out_of_memory_mb: int = field(default=0, init=False)  # the limit the watchdog found broken (then killed)
    suspended: bool = field(default=False, init=False)
    kept: int = field(default=0, init=False)  # its id with the keeper (0: not watched)
    _threads: list[threading.Thread] = field(default_factory=list, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _ending: threading.Event = field(default_factory=threading.Event, init=False)  # stops the watchdog
    _exited: threading.Event = field(default_factory=threading.Event, init=False)  # set by the exit thread
    _inner: int = field(default=0, init=False)  # the first process of its PID namespace (sandboxed), once seen

    # -- start ------------------------------------------------------------------

    def start(self) -> None:
        """Start the program; raises :class:`StartError` with a clear message."""
        nproc = 0
        argv, cwd = self.argv, self.cwd
        seccomp = None
        if self.cpus and not set(self.cpus) <= os.sched_getaffinity(0):
            raise StartError(f"cannot pin {self.argv[0]!r} to cpu {', '.join(map(str, self.cpus))}: the referee "
                             f"may run on cpu {', '.join(map(str, sorted(os.sched_getaffinity(0))))} only")
        if self.sandbox is not None:
            missing = _program_missing(self.argv, self.cwd, self.env.get("PATH", ""))
            if missing:
                raise StartError(f"cannot start {self.argv[0]!r}: {missing}")
            seccomp = seccomp_file()
            argv, cwd = self.sandbox.command(self.argv, self.cwd, seccomp), self.sandbox.directory
        elif self.max_processes and os.geteuid() != 0:
            nproc = _user_process_count() + self.max_processes
        joins = self.cgroup.join_paths() if self.cgroup is not None else []
        # Watched before it exists: a referee killed during the start leaves nothing behind (see .keeper).
        self.kept = KEEPER.watch(self.marker, self.cgroup.folder_paths() if self.cgroup is not None else [])
        try:
            self.popen = subprocess.Popen(
                argv,
                cwd=cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                pass_fds=(seccomp,) if seccomp is not None else (),
                preexec_fn=_limits(nproc, self.file_mb, joins, self.cpus,
                                   memory.OPEN_FILES if self.sandbox is not None else 0),
            )
        except OSError as exc:
            KEEPER.forget(self.kept)
            if isinstance(exc, FileNotFoundError):
                raise StartError(f"cannot start {self.argv[0]!r}: no such program (in {self.cwd})") from None
            if isinstance(exc, PermissionError):
                located = shutil.which(self.argv[0], path=self.env.get("PATH")) if "/" not in self.argv[0] else None
                why = _not_runnable(Path(located) if located else self.cwd / self.argv[0])
                raise StartError(f"cannot start {self.argv[0]!r}: {why or 'permission denied (is it executable?)'}") from None
            raise StartError(f"cannot start {self.argv[0]!r}: {exc}") from None
        finally:
            if seccomp is not None:
                os.close(seccomp)  # the child has its copy; bwrap reads it
        info = _read_stat(self.popen.pid)
        self.known[self.popen.pid] = info.start if info else 0
        self._spawn(self._drain, "stderr")
        self._spawn(self._wait, "exit")
        if self.memory_mb and self.cgroup is None:  # a cgroup holds the memory of the whole tree itself
            self._spawn(self._watch_memory, "memory")

    def _spawn(self, target: Callable[[], None], what: str) -> None:
        thread = threading.Thread(target=target, name=f"agent-{what}-{self.pid}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def _wait(self) -> None:
        assert self.popen is not None
        self.popen.wait()
        self._exited.set()
        if self.on_exit:
            self.on_exit()

    def _watch_memory(self) -> None:
        """The memory watchdog (:mod:`.memory`): kill the whole sandbox once over ``memory_mb``."""
        interval, _ = memory.watch_interval()
        wait, last, last_at = interval, 0, time.monotonic()
        while not self._ending.wait(wait):
            if self.exited:
                return
            if self.suspended:
                wait = interval
                continue
            processes, root = self._memory_scan()
            bound, over = memory.measure(processes, root, self.memory_mb)
            self.peak_memory = max(self.peak_memory, bound)
            if over:
                self.out_of_memory_mb = self.memory_mb
                if self.sandbox is not None:  # the namespace's first process: its death takes every other at once
                    for pid in _children(self.pid):
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.kill(pid, signal.SIGKILL)
                self.kill_all(term_grace=0)
                return
            now = time.monotonic()
            wait = memory.next_wait(bound, bound - last, now - last_at, self.memory_mb, interval)
            last, last_at = bound, now

    def _memory_scan(self) -> tuple[list[str], str]:
        """The ``/proc`` folders of the agent's processes now, and its sandbox's root in ``/proc`` (``""``: none).

        Sandboxed, every process of its PID namespace (:func:`.memory.sandbox_processes`: none until the
        sandbox's own ``/proc`` is there); unsandboxed, those of :meth:`scan_tree`.
        """
        if self.sandbox is None:
            return [f"/proc/{pid}" for pid in self._tree()], ""
        if not self._inner:
            inner = _children(self.pid)
            if not inner:
                return [], ""
            self._inner = inner[0]
        root = f"/proc/{self._inner}/root"
        return memory.sandbox_processes(root), root

    def _drain(self) -> None:
        """Copy the agent's output into its log: the first half of the cap as it comes, the last half at the end.

        The end is kept because that is where a crash is told (a traceback,
        a JVM's exception); what lies between is dropped and counted.  The
        log is created fresh and never through a link planted in its place.
        """
        assert self.popen is not None and self.popen.stdout is not None
        head_room = self.stderr_limit - self.stderr_limit // 2
        tail_room = self.stderr_limit // 2
        kept = total = 0
        tail: collections.deque[bytes] = collections.deque()
        tail_size = 0
        with _fresh_file(self.log_path) as log:
            while True:
                chunk = self.popen.stdout.read1(1 << 16)  # type: ignore[attr-defined]
                if not chunk:
                    break
                total += len(chunk)
                if kept < head_room:
                    log.write(chunk[: head_room - kept])
                    log.flush()
                    taken = min(len(chunk), head_room - kept)
                    kept += taken
                    chunk = chunk[taken:]
                if chunk and tail_room:
                    tail.append(chunk)
                    tail_size += len(chunk)
                    while tail_size - len(tail[0]) >= tail_room:
                        tail_size -= len(tail.popleft())
            rest = b"".join(tail)[-tail_room:] if tail_room else b""
            dropped = total - kept - len(rest)
            if dropped:
                log.write(f"\n[referee: {dropped} more bytes of output dropped]\n".encode())
            log.write(rest)
        self.popen.stdout.close()

    # -- state ------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self.popen.pid if self.popen else 0

    @property
    def returncode(self) -> Optional[int]:
        return self.popen.poll() if self.popen else None

    @property
    def exited(self) -> bool:
        return self.returncode is not None

    def scan_tree(self) -> int:
        """Cheap count of the agent's processes: its process tree, by the kernel's child lists.

        Used every fraction of a second during the game; :meth:`scan` (all
        of ``/proc``) also finds orphans left in the agent's group.
        """
        if not self.popen:
            return 0
        count = len(self._tree() - self._wrappers())
        self.peak_processes = max(self.peak_processes, count)
        return count

    def _tree(self) -> set[int]:
        """Every live process of the agent's tree (bwrap's too), by the kernel's child lists; remembers them."""
        with self._lock:
            # (pid, start time known or 0): a known pid whose start differs is another process now
            frontier = list(self.known.items())
            alive: set[int] = set()
            while frontier:
                pid, start = frontier.pop()
                if pid in alive:
                    continue
                info = _read_stat(pid)
                if info is None:
                    if start:
                        self.known.pop(pid, None)  # gone for good: never looked at again
                    continue
                if info.state == "Z" or (start and info.start != start):
                    continue
                alive.add(pid)
                self.known[pid] = info.start
                self.cpu[pid] = max(self.cpu.get(pid, 0), info.cpu_ticks)
                frontier.extend((child, 0) for child in _children(pid))
            return alive

    def _wrappers(self) -> set[int]:
        """bwrap's own two processes (outside, and the PID namespace's first): not the agent's."""
        if self.sandbox is None or not self.popen:
            return set()
        return {self.popen.pid, *_children(self.popen.pid)}

    def scan(self) -> int:
        """Find the agent's processes now, looking at all of ``/proc``; return how many are alive.

        An agent's process is one of its session or process group, one seen
        before, a descendant of those, or one whose environment holds the
        agent's ``OTHELLO_SEAT`` (inherited by every descendant, so a daemon
        that left the session and lost its parent is still found).
        """
        if not self.popen:
            return 0
        if self.sandbox is not None:  # the PID namespace: the tree is every process of the agent
            return self.scan_tree()
        leader = self.popen.pid
        leader_start = self.known.get(leader, 0)
        table = {pid: info for pid in _all_pids() if (info := _read_stat(pid)) is not None}
        with self._lock:
            alive = set()
            for pid, info in table.items():
                if info.state == "Z":
                    continue
                if pid in self.known and self.known[pid] != info.start:
                    self.known.pop(pid, None)  # a reused pid
                if (
                    info.session == leader or info.pgrp == leader or pid in self.known
                    or (self.marker and info.start >= leader_start and _has_marker(pid, self.marker))
                ):
                    alive.add(pid)
            # descendants of all these, following parent links
            changed = True
            while changed:
                changed = False
                for pid, info in table.items():
                    if pid not in alive and info.state != "Z" and info.ppid in alive:
                        alive.add(pid)
                        changed = True
            for pid in alive:
                info = table[pid]
                self.known.setdefault(pid, info.start)
                self.cpu[pid] = max(self.cpu.get(pid, 0), info.cpu_ticks)
            self.peak_processes = max(self.peak_processes, len(alive))
            return len(alive)

    def memory_note(self) -> str:
        """``": out of memory (the limit is N MB for all its processes)"`` if its watchdog or its cgroup killed it, else ``""``."""
        if self.out_of_memory_mb:
            limit = self.out_of_memory_mb
        elif self.cgroup is not None and self.cgroup.oom_kills():
            limit = self.cgroup.memory_mb
        else:
            return ""
        return memory.note(limit)

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of every process of the agent seen so far."""
        with self._lock:
            return sum(self.cpu.values()) / _CLOCK_TICKS

    def usage(self, look_at_queue: bool = False) -> Usage:
        """The CPU of every process of the agent so far, and how long their threads waited for a core (run queue).

        Looks at the processes now (a scan), so it is read where a move's
        figures are wanted, not every poll.  The wait is ``None`` where the
        kernel keeps no scheduler statistics (``/proc/PID/task/TID/schedstat``).
        ``look_at_queue``: also whether it is held in the run queue now (:meth:`held_in_queue`, 50 ms).
        """
        if self.popen:
            self.scan()
        if not _SCHEDSTAT:
            return Usage(self.cpu_seconds(), None)
        queued = look_at_queue and self.held_in_queue()
        for pid in self.pids():
            waited = _schedstat(pid)[1]
            with self._lock:
                self.waited[pid] = max(self.waited.get(pid, 0), waited)
        with self._lock:
            total = sum(self.waited.values())
        return Usage(self.cpu_seconds(), total / 1e9, queued)

    def runnable(self) -> bool:
        """Whether a thread of the agent is runnable now (on a core or queued for one)."""
        return any(_schedstat(pid)[2] for pid in self.pids())

    def held_in_queue(self, window: float = 0.05, looks: int = 5) -> bool:
        """Whether the agent is kept from a core now: runnable at every look over ``window`` seconds, yet on a core
        for less than half of it.  (A wait in progress is not in the kernel's count yet; an agent that polls
        is runnable at moments only, one that thinks on a free core is on it all the time.)"""
        pids = self.pids()
        before = sum(_schedstat(pid)[0] for pid in pids)
        for look in range(looks):
            if look:
                time.sleep(window / (looks - 1))
            if not any(_schedstat(pid)[2] for pid in pids):
                return False
        return sum(_schedstat(pid)[0] for pid in pids) - before < window / 2 * 1e9

    def pids(self) -> list[int]:
        """Alive processes known to belong to the agent (for the polling watcher)."""
        with self._lock:
            return [pid for pid, start in self.known.items() if _alive(pid, start)]

    # -- signals ------------------------------------------------------------------

    def _signal_all(self, signum: int) -> None:
        if not self.popen:
            return
        outer = self._outer()
        if not outer:
            try:
                os.killpg(self.popen.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass
        with self._lock:
            targets = list(self.known.items())
        for pid, start in targets:
            if pid not in outer and _alive(pid, start):
                try:
                    os.kill(pid, signum)
                except (ProcessLookupError, PermissionError):
                    pass

    def suspend(self) -> None:
        """Stop every process of the agent while it waits: freeze its cgroup, else ``SIGSTOP`` each."""
        if not self.popen or self.suspended:
            return
        self.suspended = True
        if self.cgroup is not None and self.cgroup.can_freeze and self.cgroup.freeze(True):
            return
        if self.cgroup is not None:
            # The cgroup lists every process of the agent in one read (a tree
            # scan reads two files a thread): stop them all.
            outer = self._outer()
            for pid in self.cgroup.pids():
                if pid not in outer:
                    try:
                        os.kill(pid, signal.SIGSTOP)
                    except (ProcessLookupError, PermissionError):
                        pass
            return
        self.scan_tree()
        self._signal_all(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a suspended agent run again."""
        if not self.popen or not self.suspended:
            return
        self.suspended = False
        if self.cgroup is not None and self.cgroup.can_freeze:
            self.cgroup.freeze(False)
        if self.cgroup is not None:
            for pid in self.cgroup.pids():
                try:
                    os.kill(pid, signal.SIGCONT)
                except (ProcessLookupError, PermissionError):
                    pass
            return
        self._signal_all(signal.SIGCONT)

    def wait_stopped(self, timeout: float = 0.2) -> None:
        """After :meth:`suspend`: wait until every process is really stopped (see :meth:`stop_stragglers`)."""
        deadline = time.monotonic() + timeout
        pause = 0.0001  # a sleeping process stops within microseconds: look again soon, then less often
        while not self.stop_stragglers() and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(pause * 2, 0.002)

    def stop_stragglers(self) -> bool:
        """After :meth:`suspend`, one look without waiting: stop again what still runs; whether none does.

        Without a freezer a process may fork between the scan and its
        ``SIGSTOP``: the tree is scanned again and every newcomer stopped,
        until a look finds none running.  A process sent ``SIGSTOP`` stops
        only once the system runs it again, which takes milliseconds on a
        busy machine: the referee looks again later rather than wait
        (:meth:`wait_stopped` waits).  True, too, once resumed.
        """
        if not self.suspended:
            return True
        if self.cgroup is not None and self.cgroup.can_freeze and self.cgroup.freeze(True, timeout=0):
            return True
        if self.cgroup is not None:
            targets = [(pid, 0) for pid in self.cgroup.pids()]
        else:
            if self.sandbox is not None:
                self.scan_tree()
            with self._lock:
                targets = list(self.known.items())
        outer = self._outer()
        running = [
            pid for pid, start in targets
            if pid not in outer and (info := _read_stat(pid)) is not None and (start == 0 or info.start == start)
            and info.state not in ("T", "t", "Z", "X")
        ]
        for pid in running:
            try:
                os.kill(pid, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                pass
        return not running

    def _outer(self) -> set[int]:
        # bwrap's process outside the namespace only waits for the inside one:
        # it is never stopped (so it still reaps and reports the exit).
        return {self.popen.pid} if self.sandbox is not None and self.popen else set()

    def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the main process to exit.

        Woken by the exit thread the moment it has reaped the process (a
        timed ``Popen.wait`` beside that thread's blocking one cannot reap it
        and polls, sleeping up to 50 ms between looks: issue 27).
        """
        if not self.popen:
            return True
        return self._exited.wait(timeout)

    def output_logged(self, timeout: float) -> bool:
        """Wait until what the agent has written to its output so far is in its log: nothing left unread in the pipe,
        and the log's size the same twice 5 ms apart.  Whether that happened within ``timeout`` seconds (not for an
        agent that keeps writing).

        A rerun reads it after each answer, while the agent waits for its next
        ``NAME.in``: the log's size then marks where the next move's output
        begins (the drain copies it a moment after the agent wrote it).
        """
        stream = self.popen.stdout if self.popen is not None else None
        deadline = time.monotonic() + timeout
        size = -1
        while True:
            try:
                unread = struct.unpack("i", fcntl.ioctl(stream.fileno(), termios.FIONREAD, b"\0" * 4))[0] if stream else 0
            except (OSError, ValueError):  # closed: the drain has read it all
                unread = 0
            try:
                now = self.log_path.stat().st_size
            except OSError:
                now = 0
            if unread == 0 and now == size:
                return True
            if time.monotonic() > deadline:
                return False
            size = now
            time.sleep(0.005)

    def kill_all(self, term_grace: float = 0.2) -> None:
        """``SIGTERM`` every process of the agent, then ``SIGKILL`` what is left."""
        if not self.popen:
            return
        self._ending.set()
        self.scan()
        self.resume()
        self._signal_all(signal.SIGCONT)
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + term_grace
        pause = _EXIT_LOOK_FIRST_PAUSE
        while time.monotonic() < deadline and self._any_alive():
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, _EXIT_LOOK_MAX_PAUSE)
        if self.sandbox is not None:
            # The namespace's first process: when it dies the kernel kills
            # every process in the namespace, wherever it hid.
            for pid in _children(self.popen.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if self.cgroup is not None:
            self.cgroup.kill()
        deadline, pause = time.monotonic() + _KILLED_WAIT, _EXIT_LOOK_FIRST_PAUSE
        while True:
            self.scan()
            if not self._any_alive():
                break
            self._signal_all(signal.SIGKILL)
            if time.monotonic() >= deadline:
                break
            time.sleep(pause)
            pause = min(pause * 2, _EXIT_LOOK_MAX_PAUSE)
        self._exited.wait(5)  # reaped by the exit thread
        for thread in self._threads:
            if thread is not threading.current_thread():  # (the watchdog kills from its own thread)
                thread.join(timeout=2)
        if self.cgroup is not None:
            self.cgroup.remove()
        if not self._any_alive():
            KEEPER.forget(self.kept)  # else the keeper ends what is left when this referee exits

    def _any_alive(self) -> bool:
        if self.popen and self.popen.poll() is None:
            return True
        with self._lock:
            return any(_alive(pid, start) for pid, start in self.known.items())


def _alive(pid: int, start: int) -> bool:
    info = _read_stat(pid)
    return info is not None and info.state != "Z" and (start == 0 or info.start == start)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`KeyboardInterrupt` (main thread only).

    For the commands that run games in the foreground (``othello play``,
    ``othello check``): a referee stopped with SIGTERM then unwinds like one
    stopped with Ctrl-C, and stops its agents on the way out instead of
    leaving them orphaned.  :func:`play_game` itself installs no handler.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
