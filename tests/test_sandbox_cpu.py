"""A game's CPU is its own (issue 24): its agents are pinned to its cores and cannot leave them.

Real processes in real sandboxes: an agent's program, started as the referee
starts every agent (:func:`~othello_arena.referee.launch.run_sandboxed`),
reads its allowed cores from ``/proc/self/status`` (``Cpus_allowed_list``),
tries to take every core with ``sched_setaffinity``, and reads them again, in
itself and in a child.  The tournament's side (each game at once on its own
cores, the record naming them) is in tests/test_tournament_cpu.py.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Optional

import pytest
from sandbox_helpers import user  # noqa: F401 (a fixture: root and an unprivileged user)

from othello_arena.referee import GameConfig, sandbox
from othello_arena.referee.cores import core_sets, describe_sets

needs_sandbox = pytest.mark.skipif(not sandbox.probe().works, reason=f"no sandbox here: {sandbox.probe().problem}")
CORES = sorted(os.sched_getaffinity(0))
PINNED = CORES[-1]  # the core the agent is given: the last this test may use

# The agent: where it may run, whether it may take every core, where it may run then (and its child).
PROBE = r'''
import json, os, subprocess, sys

def allowed():
    with open("/proc/self/status") as status:
        return next(line.split(":", 1)[1].strip() for line in status if line.startswith("Cpus_allowed_list"))

found = {"before": allowed()}
try:
    os.sched_setaffinity(0, range(os.cpu_count() or 1))
    found["setaffinity"] = "done"
except OSError as exc:
    found["setaffinity"] = os.strerror(exc.errno)
found["after"] = allowed()
child = "import os; print(sorted(os.sched_getaffinity(0)))"
found["child"] = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip()
with open("found.json", "w") as handle:
    json.dump(found, handle)
'''

# Started as the referee starts an agent's program (as the user the test runs it as).
DRIVER = r'''
import sys
from pathlib import Path
from othello_arena.referee import GameConfig
from othello_arena.referee.launch import run_sandboxed

folder, cpu, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
# Unsandboxed, RLIMIT_NPROC counts every process and thread of the user: a test run beside others of the
# same user (a browser's threads) could pass it between the count and the fork. This probe is about cores.
processes = {"max_processes": 0} if mode == "none" else {}
code, timed_out, _ = run_sandboxed(f"{sys.executable} probe.py", folder, folder.parent / "probe.log", 30,
                                GameConfig(sandbox=mode, cpus=(cpu,), **processes))
sys.exit(0 if code == 0 and not timed_out else 1)
'''


@pytest.fixture
def folder(user: Optional[str]) -> Iterator[Path]:
    """The agent's folder, under a root the test's user may enter (pytest's own is root's alone)."""
    root = Path(tempfile.mkdtemp(prefix="othello-cpu-"))
    agent = root / "agent"
    agent.mkdir()
    (agent / "probe.py").write_text(PROBE)
    for path in (root, agent, agent / "probe.py"):
        os.chmod(path, 0o777 if path.is_dir() else 0o666)
        if user:
            record = pwd.getpwnam(user)
            os.chown(path, record.pw_uid, record.pw_gid)
    yield agent
    shutil.rmtree(root, ignore_errors=True)


def run_probe(folder: Path, user: Optional[str], mode: str) -> dict[str, str]:
    argv = [sys.executable, "-c", DRIVER, str(folder), str(PINNED), mode]
    if user is not None:
        argv = ["runuser", "-u", user, "--", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    log = folder.parent / "probe.log"
    assert done.returncode == 0, done.stderr + (log.read_text() if log.exists() else "")
    found: dict[str, str] = json.loads((folder / "found.json").read_text())
    return found


@needs_sandbox
def test_a_sandboxed_agent_stays_on_its_games_cores(folder: Path, user: Optional[str]) -> None:
    found = run_probe(folder, user, "bwrap")
    assert found["before"] == str(PINNED)
    assert found["setaffinity"] == os.strerror(1)  # EPERM: the sandbox refuses the call
    assert found["after"] == str(PINNED)
    assert found["child"] == f"[{PINNED}]"


def test_without_the_sandbox_an_agent_is_pinned_but_may_leave(folder: Path, user: Optional[str]) -> None:
    found = run_probe(folder, user, "none")
    assert found["before"] == str(PINNED) and found["child"] != ""
    assert found["setaffinity"] == "done"  # what `--sandbox none` says: it can leave its cores


def test_a_game_cannot_be_pinned_to_a_core_the_referee_may_not_use(tmp_path: Path) -> None:
    from othello_arena.referee.launch import run_sandboxed
    from othello_arena.referee.process import StartError

    outside = max(CORES) + 1
    with pytest.raises(StartError, match=f"cannot pin .* to cpu {outside}: the referee may run on cpu"):
        run_sandboxed("true", tmp_path, tmp_path / "log", 5, GameConfig(sandbox="none", cpus=(outside,)))


def test_game_config_takes_core_numbers_only() -> None:
    assert GameConfig(cpus=(3, 1, 3)).cpus == (1, 3)
    for bad in [(-1,), (True,), ("1",)]:
        with pytest.raises(ValueError, match="cpus: expected core numbers"):
            GameConfig(cpus=bad)  # type: ignore[arg-type]


def test_games_get_disjoint_cores_while_there_are_enough_and_are_told_when_not() -> None:
    assert core_sets(2, [0, 1]) == [(0,), (1,)]
    assert core_sets(1, [0, 1]) == [(1,)]  # cpu 0 spare for the referees
    assert core_sets(3, [0, 1, 2, 3]) == [(1,), (2,), (3,)]
    assert core_sets(2, [2, 5, 7, 9, 11]) == [(5, 7), (9, 11)]  # the usable cores, whatever their numbers
    assert core_sets(5, [0, 1]) == [(0,), (1,), (0,), (1,), (0,)]
    assert describe_sets([(0,), (1,)]) == "cpu: each game on its own core(s), 2 at once: cpu 0, cpu 1"
    assert describe_sets([(5, 7), (9, 11)]).endswith("2 at once: cpu 5+7, cpu 9+11")
    shared = describe_sets(core_sets(5, [0, 1]))
    assert "WARNING" in shared and "games share cores, up to 3 per core" in shared
    assert "not pinned" in describe_sets([])
    with pytest.raises(ValueError, match="need at least one game and one core"):
        core_sets(0, [0, 1])


def test_doctor_says_how_games_at_once_are_kept_apart(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "othello_arena", "doctor"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("cpu: ")]
    assert lines and lines[0].startswith(f"cpu: {len(CORES)} usable core(s)"), done.stdout
    assert any("each game on its own core" in line or "WARNING" in line for line in lines), lines


def test_the_examples_of_core_sets_hold() -> None:
    import doctest

    from othello_arena.referee import cores

    result = doctest.testmod(cores, raise_on_error=False, verbose=False)
    assert result.attempted > 0 and result.failed == 0
