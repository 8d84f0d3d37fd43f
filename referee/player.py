"""One side of a game as the referee keeps it: its seat, its clock, and what the game notes of it.

A :class:`Player` is an :class:`.seat.AgentSeat` (the agent's directory, its
two files, its processes) plus the game's account of the side: its colour,
its :class:`.clock.Clock`, lost turns, warnings, the move not relayed yet,
and the watch kept on a program's processes and files.  What only a person
(``manual:``) needs, for being asked again after a bad ``NAME.out``
(PROTOCOL.md section 7), is apart in :class:`PersonState`: a program's
player has none.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from ..protocol import Colour, Move
from .clock import Clock
from .config import GameConfig
from .memory import WATCH_INTERVAL
from .seat import AgentSeat
from .spec import AgentSpec
from .trim import trim_directory

EAGAIN_TEXT = "Resource temporarily unavailable"  # strerror(EAGAIN): what fork() past RLIMIT_NPROC gives
STDERR_TAIL_BYTES = 4096  # how much of the end of a crashed program's stderr is searched for it
MONITOR_INTERVAL = 0.25  # seconds between counts of each agent's processes
DISK_INTERVAL = WATCH_INTERVAL  # seconds between two looks at each agent's directory (as at its memory)
MAX_WATCHED_ENTRIES = 10_000  # files and folders in an agent's directory: more is over the limit (a walk costs)
Listing = dict[str, tuple[int, int, int, int]]  # name -> inode, size, mtime, mode


@dataclass
class PersonState:
    """What the referee keeps of a person's side only: the colour held back, the last ``NAME.in``, the refusals."""

    pending_colour: str = ""  # playing second: the colour comes with the first side's move, in one NAME.in
    last_in: str = ""  # the last NAME.in written: written again, under a note, after a bad NAME.out
    retries: int = 0  # NAME.out files refused and asked again
    notes: list[str] = field(default_factory=list)  # what was wrong with them, for the record of the move that follows

    def refuse(self, out_name: str, problem: str) -> None:
        """Count a refused ``NAME.out`` and note what was wrong with it."""
        self.retries += 1
        self.notes.append(f"retry {self.retries}: {out_name} was {problem}")

    def take_notes(self) -> list[str]:
        """The notes for the record of the move that follows, forgotten here."""
        notes, self.notes = self.notes, []
        return notes


class Player(AgentSeat):
    """The referee's view of one side: its seat, its clock, and what the game keeps of it (faults, notes)."""

    def __init__(self, spec: AgentSpec, colour: Colour, directory: Path, config: GameConfig) -> None:
        # The agent's output is kept beside its directory, not in it: only the
        # referee writes it (an agent cannot rewrite it past its cap or turn it
        # into a link).
        super().__init__(spec, directory, directory.parent / f"{directory.name}.stderr.log")
        self.colour = colour
        self.clock = Clock(config.time_control(spec.label, spec.is_manual))
        self.person = PersonState() if spec.is_manual else None
        self.lost_turns = 0
        self.warnings: list[str] = []
        self.unsent: Optional[Move] = None  # the opponent's last move, not relayed yet
        # A program's processes and files, watched:
        self.start_error = ""
        self.limits = ""  # how its limits were enforced: "cgroup v1", "cgroup v2" or "watchdog and rlimits"
        self.over_limit = 0  # processes counted over the limit (then killed)
        self.over_disk = 0  # bytes found in its directory over the limit (then killed)
        self.over_entries = 0  # files and folders found in its directory over MAX_WATCHED_ENTRIES (then killed)
        self.trimmed: Optional[dict[str, Any]] = None  # what the referee removed from its directory after the game
        self.snapshot: Optional[Listing] = None

    @property
    def suspended(self) -> bool:
        return self.process is not None and self.process.suspended

    @property
    def pending_colour(self) -> str:
        """A person's colour line held back for their first ``NAME.in`` (``""`` for a program)."""
        return self.person.pending_colour if self.person else ""

    def limit_note(self) -> str:
        """What the agent's cgroup saw of its limits: why it likely failed, or ``""``."""
        if self.process is not None and (memory := self.process.memory_note()):
            return memory
        cgroup = self.process.cgroup if self.process else None
        if cgroup is None:
            return self._rlimit_note()
        if refusals := cgroup.fork_refusals():
            return f": refused {refusals} new processes at the limit of {cgroup.max_processes - 2}"
        return ""

    def _rlimit_note(self) -> str:
        """Under rlimits the kernel refuses a fork past RLIMIT_NPROC (EAGAIN) and counts nothing for us:
        the program's own report of the refusal, at the end of its stderr, is the evidence."""
        if "rlimits" not in self.limits:
            return ""
        try:
            with open(self.stderr_path, "rb") as handle:
                handle.seek(max(0, handle.seek(0, 2) - STDERR_TAIL_BYTES))
                tail = handle.read().decode("utf-8", "replace")
        except OSError:
            return ""
        if EAGAIN_TEXT in tail:
            return (f": a new process was refused at the sandbox's limit on processes "
                    f"(its stderr says \"{EAGAIN_TEXT}\")")
        return ""

    def enforce_limits(self, max_processes: int, disk_bytes: int, count: bool = True) -> bool:
        """Count the processes (if ``count``) and the directory's bytes; kill all at once over a limit (0: none).
        Returns whether it did.  A stopped agent writes nothing: its directory is not walked then."""
        if self.process is None:
            return False
        killed = False
        if count and (found := self.process.scan_tree()) > max_processes > 0 and not self.over_limit:
            self.over_limit = found
            self.process.kill_all(term_grace=0)
            killed = True
        if disk_bytes and not self.over_disk and not self.over_entries and not self.process.suspended:
            used, entries = _directory_usage(self.directory, disk_bytes, MAX_WATCHED_ENTRIES)
            if used > disk_bytes or entries > MAX_WATCHED_ENTRIES:
                self.over_disk, self.over_entries = (used, 0) if used > disk_bytes else (0, entries)
                self.process.kill_all(term_grace=0)
                killed = True
        return killed

    def limit_breach(self, max_processes: int, disk_mb: int) -> str:
        """Which limit :meth:`enforce_limits` found broken, in a sentence naming the side; ``""`` if none."""
        if self.over_limit:
            return f"{self.label} ran {self.over_limit} processes, more than the {max_processes} allowed"
        if self.over_disk:
            return f"{self.label} kept {self.over_disk >> 20} MB in its directory, more than the {disk_mb} MB allowed"
        if self.over_entries:
            return (f"{self.label} kept more than {MAX_WATCHED_ENTRIES} files and folders in its directory "
                    "(the most the referee watches)")
        return ""

    def trim(self, keep_mb: int, why: str) -> None:
        """Remove what the agent keeps in its directory beyond ``keep_mb`` MB, the largest files first (not
        ``NAME.in`` or ``NAME.out``), once its processes are gone; :attr:`trimmed` says what went, and ``why``."""
        if self.dir_fd < 0:
            return
        done = trim_directory(self.dir_fd, keep_mb << 20, spare=(self.in_name, self.out_name))
        if done.files:
            self.trimmed = done.entry(why)

    def take_snapshot(self) -> None:
        self.snapshot = _listing(self.dir_fd)

    def changes_since_snapshot(self) -> list[str]:
        if self.snapshot is None:
            return []
        now = _listing(self.dir_fd)
        before = self.snapshot
        self.snapshot = None
        changes = [f"{name} created" for name in sorted(set(now) - set(before))]
        changes += [f"{name} deleted" for name in sorted(set(before) - set(now))]
        changes += [f"{name} changed" for name in sorted(set(now) & set(before)) if now[name] != before[name]]
        return changes

    def record_entry(self, out_dir: Path) -> dict[str, Any]:
        """The side's entry under ``agents`` in ``game.json``: where it played, its time, what its processes did."""
        info: dict[str, Any] = {
            "colour": self.colour.value,
            "directory": str(self.directory.relative_to(out_dir)),
            "stderr_log": str(self.stderr_path.relative_to(out_dir)),
            "seconds": round(self.clock.used, 4),
            **self.spec.start_entry(),  # how to start it again (``othello replay --rerun``)
        }
        if self.spec.version:
            info["version"] = self.spec.version
        if self.clock.control.clock_text:  # its game clock, and what was left of it at the end
            info["clock"] = self.clock.control.clock_text
            info["bank"] = round(self.clock.bank or 0.0, 4)
        if self.process is not None:
            if self.process.cgroup is not None:  # what the kernel refused it
                info["oom_kills"] = self.process.cgroup.oom_kills()
                info["refused_processes"] = self.process.cgroup.fork_refusals()
            info["cpu_seconds"] = round(self.process.cpu_seconds(), 3)
            info["exit_code"] = self.process.returncode
            info["peak_processes"] = self.process.peak_processes
            if self.process.peak_memory:  # measured by the referee's watchdog (no cgroup)
                info["peak_memory_mb"] = round(self.process.peak_memory / (1 << 20), 1)
        if self.trimmed:
            info["trimmed"] = self.trimmed
        if self.start_error:
            info["start_error"] = self.start_error
        if self.lost_turns:
            info["lost_turns"] = self.lost_turns
        if self.person and self.person.retries:
            info["retries"] = self.person.retries
        if self.warnings:
            info["warnings"] = self.warnings
        return info


class LimitMonitor:
    """A thread that counts the sides' processes (and their CPU time) and their directories' bytes while the game runs.

    A side over a limit is ended at once (:meth:`Player.enforce_limits`) and
    ``on_kill`` is called, so that the game loop wakes and says why.
    """

    def __init__(self, players: Iterable[Player], config: GameConfig, on_kill: Callable[[], None]) -> None:
        self.players = list(players)
        self.max_processes = config.max_processes
        self.disk_bytes = config.disk_mb << 20
        self.on_kill = on_kill
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="referee-monitor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop counting (a monitor never started stops at once)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        # The directories every DISK_INTERVAL, the processes every MONITOR_INTERVAL.
        every = max(1, round(MONITOR_INTERVAL / DISK_INTERVAL))
        tick = 0
        while not self._stop.wait(DISK_INTERVAL):
            tick += 1
            for player in self.players:
                if player.enforce_limits(self.max_processes, self.disk_bytes, count=tick % every == 0):
                    self.on_kill()


def _directory_usage(directory: Path, limit: int, max_entries: int) -> tuple[int, int]:
    """Bytes the agent keeps in its directory (blocks really used), counted up to just past ``limit``, and the
    entries seen, counted up to just past ``max_entries`` (walking more would be the referee's cost).

    Links are not followed.
    """
    used, entries, stack = 0, 0, [str(directory)]
    while stack and used <= limit:
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    entries += 1
                    if entries > max_entries:
                        return used, entries
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    used += info.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return used, entries


def _listing(dir_fd: int) -> Listing:
    result = {}
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return {}
    for name in names:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        result[name] = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)
    return result
