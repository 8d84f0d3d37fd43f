"""The keeper: a referee's agents end with it, however it ends, even while they start.

The referee makes bwrap's outer process die with it (``PR_SET_PDEATHSIG``,
checked against the race in :mod:`.process`), and ``--die-with-parent`` asks
bwrap to take the sandbox down with that.  One window stays open: bwrap's
process *inside* the namespace sets its own death signal only after its
set-up, so a referee killed in those milliseconds leaves it, and the agent
under it, running for ever (bubblewrap issue #633, still open).  A tournament
runner starts agents all the time, so a SIGKILL of the runner lands in that
window about once in ten.

So every process that starts agents also starts one keeper: a small process
in a session of its own that learns from a pipe which agents are alive
(``watch`` and ``forget`` lines, one JSON object each).  When the pipe ends,
the referee is gone (it exited, or was killed: the kernel closes the pipe
either way), and the keeper kills whatever is left of the agents it still
watches: every process of their cgroups (thawed first: a process frozen by
the cgroup v1 freezer would hold off ``SIGKILL``) and every process whose
environment holds their ``OTHELLO_SEAT`` marker (bwrap's and the agent's
own; unique to one agent in one game, so that one agent's cleanup never
touches another's); then it removes their cgroups.  A referee that ends its
agents itself says ``forget`` first, so at a normal exit the keeper has
nothing to do.

This file is also the keeper's program (``python -I -S keeper.py``): it
imports nothing but the standard library.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterable, Optional

# -- the referee's side ----------------------------------------------------------


class Keeper:
    """The referee's handle on its keeper process (started on the first agent, restarted if it died)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen[bytes]] = None
        self._owner = 0  # the pid that started it: a forked child needs a keeper of its own
        self._watched: dict[int, str] = {}  # id -> its watch line, sent again to a new keeper
        self._next = 0

    @property
    def pid(self) -> Optional[int]:
        """The keeper's pid while it runs (so a runner killing its children spares it)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def watch(self, marker: bytes, cgroup_folders: Iterable[str]) -> int:
        """Watch an agent about to start; returns the id to :meth:`forget` it by once it has ended."""
        with self._lock:
            self._next += 1
            ident = self._next
            line = json.dumps({"watch": ident, "marker": marker.decode("utf-8", "surrogateescape"),
                               "cgroups": sorted(cgroup_folders)}) + "\n"
            self._watched[ident] = line
            self._send(line)
            return ident

    def forget(self, ident: int) -> None:
        """The agent has ended (every process of it killed and reaped): nothing left to do for it."""
        with self._lock:
            if self._watched.pop(ident, None) is not None:
                self._send(json.dumps({"forget": ident}) + "\n")

    def _running(self) -> bool:
        return self._process is not None and self._owner == os.getpid() and self._process.poll() is None

    def _send(self, line: str) -> None:
        for _ in range(2):
            if not self._running():
                if not self._start():
                    return  # no keeper (no process left to start?): bwrap's own die-with-parent still holds
                line = "".join(self._watched.values())  # a new keeper learns every agent still watched
            assert self._process is not None and self._process.stdin is not None
            try:
                self._process.stdin.write(line.encode())
                self._process.stdin.flush()
                return
            except (OSError, ValueError):  # it died (killed by hand?)
                self._process = None

    def _start(self) -> bool:
        # Its own session: Ctrl-C in the terminal and a kill of the runner's
        # process group leave it, so it can clean up after them.  None of our
        # output: whoever reads the referee's output to its end must not wait
        # for the keeper too.
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(Path(__file__).resolve())],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                cwd="/", close_fds=True, start_new_session=True,
            )
        except OSError:
            self._process = None
            return False
        self._owner = os.getpid()
        return True

    def close(self, timeout: float = 1.0) -> None:
        """End the pipe as the process exits: the keeper ends what it still watches (normally nothing) and exits.

        The kernel would close the pipe a moment later anyway; closing it
        here, and reaping the keeper when it is quick, keeps the exit tidy
        (no ``ResourceWarning: subprocess ... is still running`` from a
        :class:`subprocess.Popen` dropped while its process ran).
        """
        with self._lock:
            process = self._process
            if process is None or self._owner != os.getpid():
                return  # none, or a forked child's copy: the parent's keeper is not this process's to end
            self._process = None
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=timeout)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass  # still cleaning up after agents: it goes on by itself, in its own session


KEEPER = Keeper()
atexit.register(KEEPER.close)


# -- the keeper's side ----------------------------------------------------------


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        pass


def _cgroup_pids(folders: list[Path]) -> set[int]:
    pids: set[int] = set()
    for folder in folders:
        try:
            pids.update(int(pid) for pid in (folder / "cgroup.procs").read_text().split())
        except (OSError, ValueError):
            continue
    return pids


def _marked(marker: bytes) -> set[int]:
    """Processes whose environment holds ``marker`` (an agent's, and its bwrap's)."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                if marker in handle.read().split(b"\0"):
                    found.add(int(name))
        except OSError:
            continue
    return found


def end_agent(marker: bytes, folders: list[Path], timeout: float = 5.0) -> int:
    """Kill every process of one agent and remove its cgroups; return how many processes were killed."""
    for folder in folders:
        _write(folder / "cgroup.kill", "1")  # cgroup v2: the whole cgroup, frozen or not
        _write(folder / "freezer.state", "THAWED")  # cgroup v1: a frozen process would hold off SIGKILL
    killed: set[int] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = _cgroup_pids(folders) | (_marked(marker) if marker else set())
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.02)
    for folder in folders:
        while True:
            try:
                folder.rmdir()
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
    return len(killed)


def main() -> None:
    watched: dict[int, tuple[bytes, list[Path]]] = {}
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
            if "watch" in message:
                marker = message["marker"].encode("utf-8", "surrogateescape")
                watched[int(message["watch"])] = (marker, [Path(folder) for folder in message["cgroups"]])
            elif "forget" in message:
                watched.pop(int(message["forget"]), None)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # only the referee writes here; a torn line is no reason to stop watching
    # The pipe ended: the referee is gone.
    for marker, folders in watched.values():
        end_agent(marker, folders)


if __name__ == "__main__":
    main()
