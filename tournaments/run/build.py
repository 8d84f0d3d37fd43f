"""Building an agent: its ``build`` command, once, sandboxed, with a time limit and its output kept (capped).

Every build goes through :func:`run_build`, which starts it with the
referee's own launcher (:func:`othello_arena.referee.launch.run_sandboxed`):
a build is student code, so it runs in the same bubblewrap sandbox as the
agent's games, except that its submission folder is writable (it writes its
program there) and it can find the compilers of the referee's ``PATH``.  Its
output goes to ``build/NAME.log`` through a pipe the referee reads, keeping
the first and last half of :data:`BUILD_LOG_LIMIT` bytes (where a compiler
says what went wrong), never written through a link.  After the time limit,
or when it ends, every process it started is killed.  A failed build is not a
crash of the runner: that agent's games are forfeits with the reason
``build`` and the others play on.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional, Sequence

from ...referee import GameConfig
from ...referee.launch import StartError, run_sandboxed
from ..results.store import BuildResult

BUILD_LOG_LIMIT = 1 << 20  # bytes of a build's output kept: its first half and its last half


def run_build(agent: str, command: str, cwd: Optional[str], log_path: Path, timeout: float,
              config: Optional[GameConfig] = None, hidden: Sequence[Path] = ()) -> BuildResult:
    """Run ``command`` (a shell command) in ``cwd`` for at most ``timeout`` seconds; keep its output in ``log_path``.

    ``config`` gives the sandbox and its limits (as for the agent's games);
    ``hidden`` the folders the build may not see even inside ``cwd`` (the
    tournament's results).  Returns ``ok``, ``failed`` (non-zero exit),
    ``timeout`` (every process killed) or ``error`` (it could not start).
    Never raises for the build's own faults.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(cwd or ".").resolve()
    started = time.monotonic()
    try:
        code, timed_out, over_disk = run_sandboxed(command, folder, log_path, timeout, config or GameConfig(),
                                                   hidden=hidden, log_limit=BUILD_LOG_LIMIT, tools=True)
    except StartError as exc:
        log_path.write_text(f"could not start the build: {exc}\n", encoding="utf-8")
        return BuildResult(agent, "error", None, 0.0, str(log_path), f"could not start: {exc}")
    seconds = time.monotonic() - started
    if over_disk:
        return BuildResult(agent, "failed", None, seconds, str(log_path), f"stopped: {over_disk}")
    if timed_out:
        return BuildResult(agent, "timeout", None, seconds, str(log_path), f"timed out after {timeout:g} s")
    if code != 0:
        return BuildResult(agent, "failed", code, seconds, str(log_path), f"exit {code}")
    return BuildResult(agent, "ok", 0, seconds, str(log_path), "")
