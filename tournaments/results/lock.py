"""One runner per tournament: an exclusive lock held for the whole of ``run`` or ``resume``.

Two runners on one database each thought the other's games were theirs and
turned them into false ``crash`` forfeits.  The lock is an OS lock
(``flock``) on ``DATABASE.lock``, next to the database: the kernel drops it
when its holder dies in any way (SIGKILL included), so a stale lock never
blocks a resume, and nobody has to guess from a PID file whether its owner
is still alive.  The file's text names the holder (PID, host, start time) for
the message of the runner that is refused.  The descriptor is close-on-exec:
an agent started by the runner never inherits (and so never keeps) the lock.
``status``, ``report`` and ``export`` never take it; they only ask whether it
is held (a game marked running is running only if a runner holds the lock).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Any, Optional


RETRIES = 6


class LockHeldError(RuntimeError):
    """Another runner holds the tournament's lock; the message names its PID and host."""

    def __init__(self, path: Path, holder: dict[str, Any]) -> None:
        self.path = path
        self.holder = holder
        since = holder.get("started")
        when = time.strftime(" since %Y-%m-%d %H:%M:%S", time.localtime(since)) if isinstance(since, (int, float)) else ""
        super().__init__(
            f"another runner is playing this tournament: pid {holder.get('pid', '?')} on host "
            f"{holder.get('host', '?')}{when} holds {path}; wait for it to finish or stop it "
            "(Ctrl-C or kill PID), then resume"
        )


def lock_path(database: Path) -> Path:
    """The lock file of the tournament whose database is ``database``."""
    return Path(f"{database}.lock")


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8", errors="replace") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class RunnerLock:
    """``with RunnerLock(path):`` holds the tournament exclusively, or raises :class:`LockHeldError` at once."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.fd: Optional[int] = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            # A few tries over a fraction of a second: `status` takes a shared
            # lock for an instant to ask whether a runner is there.
            for attempt in range(RETRIES):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if attempt == RETRIES - 1:
                        raise
                    time.sleep(0.05)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise LockHeldError(self.path, holder) from None
        except BaseException:
            os.close(fd)
            raise
        text = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()})
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "RunnerLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(database: Path) -> Optional[dict[str, Any]]:
    """Who holds the tournament's lock right now (``{"pid", "host", "started"}``), or ``None`` if nobody."""
    path = lock_path(database)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            # A shared lock is granted only when no runner holds the exclusive one.
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd) or {"pid": "?", "host": "?"}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
