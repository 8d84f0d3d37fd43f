"""Building an agent: its ``build`` command, once, with a time limit and its output kept (capped).

Every build goes through :func:`run_build`, so whatever confines the build
(a time limit today; the sandbox the agents run in, next) is in one place.
A build is student code: it runs in its own session (its whole process
group is killed on timeout, and whatever it left running is killed when it
ends), its output goes to ``build/NAME.log`` through a pipe the runner reads
(so a build that prints for ever fills at most :data:`BUILD_LOG_LIMIT` bytes
of disk), and that log is written without following a link planted in its
place.  A failed build is not a crash of the runner: that agent's games are
forfeits with the reason ``build`` and the others play on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from typing import Optional

from .store import BuildResult

BUILD_LOG_LIMIT = 1 << 20  # bytes of a build's output kept: its first half and its last half


class _CappedLog:
    """Drains a pipe into a log file: the first half of the limit, then the last half (ring), then a note."""

    def __init__(self, source: int, path: Path, limit: int) -> None:
        self.source = source
        self.path = path
        self.limit = limit
        self.thread = threading.Thread(target=self._drain, name=f"build-log-{path.name}", daemon=True)

    def _drain(self) -> None:
        head = bytearray()
        tail: deque[bytes] = deque()
        tail_size = 0
        total = 0
        half = self.limit // 2
        try:
            while True:
                chunk = os.read(self.source, 65536)
                if not chunk:
                    break
                total += len(chunk)
                room = half - len(head)
                if room > 0:
                    head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    tail.append(chunk)
                    tail_size += len(chunk)
                    while tail_size - len(tail[0]) >= half:
                        tail_size -= len(tail.popleft())
        except OSError:
            pass
        finally:
            os.close(self.source)
        rest = b"".join(tail)[-half:] if half else b""
        cut = total - len(head) - len(rest)
        note = f"\n[... {cut} bytes of build output cut ...]\n".encode() if cut > 0 else b""
        data = bytes(head) + note + rest
        write_log(self.path, data)


def write_log(path: Path, data: bytes) -> None:
    """Write ``path`` without following a link planted there (replaced atomically by a fresh file)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        os.unlink(temp)
    except FileNotFoundError:
        pass
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(temp, path)  # replaces a link or a file at ``path``, never writes through it


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_build(agent: str, command: str, cwd: Optional[str], log_path: Path, timeout: float) -> BuildResult:
    """Run ``command`` (a shell command) in ``cwd`` for at most ``timeout`` seconds; keep its output in ``log_path``.

    Returns ``ok``, ``failed`` (non-zero exit), ``timeout`` (the whole
    process group killed) or ``error`` (it could not start).  Never raises
    for the build's own faults.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            command, shell=True, cwd=cwd, stdin=subprocess.DEVNULL, stdout=write_end, stderr=write_end,
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
    except OSError as exc:
        os.close(read_end)
        os.close(write_end)
        write_log(log_path, f"could not start the build: {exc}\n".encode())
        return BuildResult(agent, "error", None, 0.0, str(log_path), f"could not start: {exc.strerror or exc}")
    os.close(write_end)
    log = _CappedLog(read_end, log_path, BUILD_LOG_LIMIT)
    log.thread.start()
    try:
        code: Optional[int] = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
    except BaseException:  # Ctrl-C during a build: leave nothing running
        _kill_group(process.pid)
        process.wait()
        raise
    # Whatever the build left behind (a daemon, `make &`) dies with it; this
    # also closes the pipe, so the log thread ends.
    _kill_group(process.pid)
    if code is None:
        process.wait()
    log.thread.join(timeout=10.0)
    seconds = time.monotonic() - started
    if code is None:
        return BuildResult(agent, "timeout", None, seconds, str(log_path), f"timed out after {timeout:g} s")
    if code != 0:
        return BuildResult(agent, "failed", code, seconds, str(log_path), f"exit {code}")
    return BuildResult(agent, "ok", 0, seconds, str(log_path), "")
