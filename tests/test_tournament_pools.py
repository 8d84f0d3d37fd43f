"""The runner's look at processes, read from /proc: its own children, and the agents a dead runner left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from othello_arena.referee.launch import games_mark
from othello_arena.tournaments.run.pools import _child_pids, kill_orphans

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_the_children_of_this_process_are_found_and_only_they(tmp_path: Path) -> None:
    # A child whose name holds a space and a parenthesis: the parent is read after the name's last ')'.
    named = tmp_path / "a (b) c"
    named.symlink_to(sys.executable)
    child = subprocess.Popen([str(named), "-c", "import time; time.sleep(60)"])
    try:
        found = _child_pids()
        assert child.pid in found
        assert os.getpid() not in found and os.getppid() not in found
    finally:
        child.kill()
        child.wait()
    assert child.pid not in _child_pids()


def test_orphans_under_the_games_folder_are_killed_and_nothing_else(tmp_path: Path) -> None:
    """An agent left in an agent's folder (unsandboxed) or carrying the games' marker (sandboxed) dies; others live."""
    root = tmp_path / "games"
    agent_dir = root / "r01-p001-g1_a_vs_b" / "a"
    agent_dir.mkdir(parents=True)
    marker = f"{games_mark(root)}.r01-p001-g1.a"
    in_folder = subprocess.Popen(SLEEPER, cwd=agent_dir)
    marked = subprocess.Popen(SLEEPER, cwd=tmp_path, env={**os.environ, "OTHELLO_SEAT": marker})
    # Not the games': in the games folder itself (no agent's folder), another folder's marker.
    beside = subprocess.Popen(SLEEPER, cwd=root)
    foreign = subprocess.Popen(SLEEPER, cwd=tmp_path,
                               env={**os.environ, "OTHELLO_SEAT": f"{games_mark(tmp_path / 'other')}.g.a"})
    try:
        assert kill_orphans(root) == 2
        assert in_folder.wait(timeout=10) == -9 and marked.wait(timeout=10) == -9
        assert beside.poll() is None and foreign.poll() is None
    finally:
        for process in (in_folder, marked, beside, foreign):
            process.kill()
            process.wait()
