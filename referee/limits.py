"""Which limits hold for an agent, for this user on this machine, and by what: one line each.

``othello doctor`` prints these lines, and ``othello tournament run`` prints
them at its start, a limit that is not enforced as a ``WARNING`` line saying
what to do.  Each limit is one function of :data:`LIMITS`, from the game's
configuration and the machine's :class:`~.sandbox.Isolation` (``None``:
``--sandbox none``) to a :class:`LimitLine`; a new limit is one more function
in that tuple.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional

from . import memory
from .config import GameConfig
from .disk import DISK_INTERVAL, MAX_WATCHED_ENTRIES
from .player import MONITOR_INTERVAL
from .sandbox import Isolation

_AS_YOURSELF = "agents run as yourself (--sandbox none)"


@dataclass(frozen=True)
class LimitLine:
    """One limit: its ``name``, ``how`` it is enforced (or, when it is not, what to do), and whether it is."""

    name: str
    how: str
    enforced: bool = True

    def text(self) -> str:
        """``memory: ...``, or, when not enforced (wholly), ``WARNING: memory: ...``."""
        return f"{self.name}: {self.how}" if self.enforced else f"WARNING: {self.name}: {self.how}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:g} ms"


def memory_line(config: GameConfig, isolation: Optional[Isolation]) -> LimitLine:
    cgroup = isolation.cgroup if isolation is not None else None
    kernel = None if cgroup is None else f"{'delegated ' if cgroup.delegated else ''}cgroup v{cgroup.version}"
    how, enforced = memory.describe(config.memory_mb, kernel, sandboxed=isolation is not None)
    return LimitLine("memory", how, enforced)


def processes_line(config: GameConfig, isolation: Optional[Isolation]) -> LimitLine:
    if not config.max_processes:
        return LimitLine("processes", "NOT enforced: no limit set (--processes 0, max_processes = 0): give one", False)
    limit = f"{config.max_processes} at once"
    if isolation is not None and isolation.cgroup is not None:
        return LimitLine("processes", f"{limit}, by the kernel (cgroup v{isolation.cgroup.version} pids.max)")
    if isolation is not None:
        return LimitLine("processes", f"{limit}, by the kernel (RLIMIT_NPROC inside the sandbox's user namespace)")
    if os.geteuid() == 0:
        return LimitLine("processes", f"only in part: {limit}, counted by the referee every {_ms(MONITOR_INTERVAL)} only "
                                      f"(RLIMIT_NPROC does not hold for root; {_AS_YOURSELF})", False)
    return LimitLine("processes", f"only in part: {limit}: RLIMIT_NPROC counts all of your processes, and the referee counts the "
                                  f"agent's every {_ms(MONITOR_INTERVAL)} ({_AS_YOURSELF})", False)


def file_size_line(config: GameConfig, isolation: Optional[Isolation]) -> LimitLine:
    if not config.disk_mb:
        return LimitLine("file size", "NOT enforced: no limit set (--disk 0, disk_mb = 0): give one in MB", False)
    return LimitLine("file size", f"{config.disk_mb} MB per file, by the kernel (RLIMIT_FSIZE)")


def disk_line(config: GameConfig, isolation: Optional[Isolation]) -> LimitLine:
    if not config.disk_mb:
        return LimitLine("disk", "NOT enforced: no limit set (--disk 0, disk_mb = 0): an agent may fill its folder; give one in MB",
                         False)
    keep_mb, why = config.files_kept()
    return LimitLine("disk", f"{config.disk_mb} MB in its folder, watched every {_ms(DISK_INTERVAL)} (at most "
                             f"{MAX_WATCHED_ENTRIES} files and folders), killed over it; after the game, what it "
                             f"keeps {why} is removed, the largest files first")


def tmpfs_line(config: GameConfig, isolation: Optional[Isolation]) -> LimitLine:
    if isolation is None:
        return LimitLine("/tmp and /dev/shm", f"NOT limited: the host's own, shared with everyone ({_AS_YOURSELF}): "
                                              "use the sandbox", False)
    shm = memory.describe_shm(config.memory_mb)
    return LimitLine("/tmp and /dev/shm", f"the sandbox's own, in memory: /tmp {config.disk_mb or 1024} MB, "
                                          f"/dev/shm {shm}; /dev and every other folder read-only")


LIMITS: tuple[Callable[[GameConfig, Optional[Isolation]], LimitLine], ...] = (
    memory_line, processes_line, file_size_line, disk_line, tmpfs_line,
)


def limit_lines(config: GameConfig, isolation: Optional[Isolation]) -> list[LimitLine]:
    """Every limit of :data:`LIMITS` for games of ``config`` here (``isolation`` ``None``: unsandboxed)."""
    return [line(config, isolation) for line in LIMITS]


__all__ = ["LIMITS", "LimitLine", "limit_lines"]
