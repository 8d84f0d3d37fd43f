"""`othello check` on a busy machine: a move late for want of a core is not held against the agent.

Real processes in the real sandbox, as root and as an unprivileged user: the
agent is pinned to one core (the check's ``cpus``, as a class server's check
is) and two processes spin on that same core the whole time.  The load is
made sure of, not hoped for: from its second move the agent gives up its
claim to a core (nice 19, its autogroup too: tests/cpu_agent.py --starve),
so the spinners get ~98 % of the core and its move waits for one, on any
machine.  What each test asserts holds whatever the machine's own load:

- starved (CPU 0.05 s, clock seconds): ``answers in time`` is UNSURE with the
  clock, CPU and load, and nothing fails;
- thinking 0.6 s of CPU at 0.1 s a move: FAIL (its CPU alone is over the limit);
- sleeping 1 s on a move: FAIL, beside the same
  spinners (it waited for no core: its lateness is its own).

The rule itself, figure by figure, is tested on :class:`MoveTiming` below.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

import pytest
from sandbox_helpers import user  # noqa: F401 (a fixture: root and an unprivileged user)

from othello_arena.referee import sandbox
from othello_arena.referee.busy import MoveTiming, Usage

TESTS = Path(__file__).resolve().parent
needs_sandbox = pytest.mark.skipif(not sandbox.probe().works, reason=f"no sandbox here: {sandbox.probe().problem}")
PINNED = sorted(os.sched_getaffinity(0))[-1]  # the agent's core, which the spinners share

# Runs the check as the user the test names, with two spinners on the agent's core; prints the card as JSON.
DRIVER = r'''
import json, os, subprocess, sys
from othello_arena.agents.check import check_agent
from othello_arena.agents.registry import builtin_agents
from othello_arena.referee.config import GameConfig
from othello_arena.referee.spec import AgentSpec

agent, core, fail_fast = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
spin = "import os, sys; os.sched_setaffinity(0, {%d})\nwhile True: pass" % core
spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
try:
    card = check_agent(AgentSpec.parse(agent, builtins=builtin_agents()), 0.1, attempts=1, fail_fast=fail_fast,
                       limits=GameConfig(cpus=(core,)), workdir=os.environ.get("TMPDIR"))
finally:
    for spinner in spinners:
        spinner.kill()
        spinner.wait()
print(json.dumps({"items": {key: [item.status, item.detail] for key, item in card.items.items()},
                  "lines": card.lines(), "failed": card.failed, "unsure": [item.key for item in card.unsure]}))
'''


def check_beside_spinners(agent: str, user: Optional[str], fail_fast: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="othello-busy-") as scratch:
        os.chmod(scratch, 0o777)
        argv = [sys.executable, "-c", DRIVER, agent, str(PINNED), "1" if fail_fast else "0"]
        if user is not None:
            argv = ["runuser", "-u", user, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd="/",
                              env=dict(os.environ, TMPDIR=scratch))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def cpu_agent(*options: str) -> str:
    return f"victim=python {TESTS / 'cpu_agent.py'} {{name}} " + " ".join(options)


@pytest.mark.slow
@needs_sandbox
def test_a_move_late_for_want_of_a_core_is_unsure_with_its_figures_not_failed(user: Optional[str]) -> None:
    card = check_beside_spinners(cpu_agent("--work", "0.05", "--at", "2", "--starve"), user)
    assert not card["failed"], card["lines"]
    assert card["unsure"] == ["in-time"]
    status, detail = card["items"]["in-time"]
    assert status == "UNSURE"
    assert detail.startswith("could not tell: the machine was busy (load ")
    assert " s of clock and " in detail and " s of CPU (" in detail and " s waiting for a core), 0.35 s allowed" in detail
    assert detail.endswith("; run the check again on a quieter machine")
    verdict = card["lines"][-3:]
    assert any(line.startswith('no check failed; could not tell: "answers in time"') for line in verdict), card["lines"]


@pytest.mark.slow
@needs_sandbox
def test_an_agent_whose_cpu_alone_passes_the_limit_fails_on_a_busy_core() -> None:
    card = check_beside_spinners(cpu_agent("--work", "0.6", "--at", "2"), None, fail_fast=True)
    status, detail = card["items"]["in-time"]
    assert status == "FAIL" and not card["unsure"], card["lines"]
    # late (its CPU in the figures: over the limit, 0.6 s less a clock tick or so), or later than the check
    # watches (its share of the core decides which)
    used = re.search(r"\(limit 0\.1 \+ 0\.25 s; it used (\d+\.\d+) s of CPU", detail)
    assert (used is not None and float(used.group(1)) > 0.35) or detail.startswith("no move within 2.4 s"), detail


@pytest.mark.slow
@needs_sandbox
def test_an_agent_that_sleeps_past_its_time_fails_on_a_busy_core_too() -> None:
    card = check_beside_spinners(cpu_agent("--sleep", "1", "--at", "2"), None, fail_fast=True)
    assert card["items"]["in-time"][0] == "FAIL", card["lines"]
    assert not card["unsure"]


# The rule, figure by figure (the figures as /proc gives them for one move).

def timing(clock: float, cpu: float, waited: Optional[float], load: float = 0.5, queued: bool = False) -> MoveTiming:
    return MoveTiming(clock, Usage(cpu, waited, queued), limit=0.35, load=load, cores=2)


def test_the_rule_blames_the_machine_only_for_a_wait_for_a_core() -> None:
    assert timing(1.34, 0.05, 1.21).machine_to_blame()  # the class's starter at a load of 18
    assert not timing(1.34, 0.05, 0.10).machine_to_blame(), "it slept: its own doing, however busy the machine"
    assert not timing(1.34, 0.05, 0.10, load=18).machine_to_blame()
    assert not timing(1.34, 0.60, 1.00).machine_to_blame(), "its CPU alone is over the limit"
    # No move yet: a thread queued now is in a wait the kernel has not counted yet.
    assert timing(2.4, 0.05, 1.0, queued=True).machine_to_blame(awaiting=True)
    assert not timing(2.4, 0.05, 1.0, queued=True).machine_to_blame()
    assert not timing(2.4, 0.05, 1.0).machine_to_blame(awaiting=True)
    # Without scheduler statistics: the tournaments' sign (CPU under half the clock on a loaded machine) or nothing.
    assert timing(1.34, 0.05, None, load=9.3).machine_to_blame()
    assert not timing(1.34, 0.05, None, load=1.0).machine_to_blame()
    assert not timing(1.34, 0.9, None, load=9.3).machine_to_blame()


def test_the_figures_read_as_the_card_says_them() -> None:
    text = timing(1.34, 0.05, None, load=9.3).busy_text(then="run the check again on a quieter machine")
    assert text == ("could not tell: the machine was busy (load 9.3 on 2 cores): the move took 1.34 s of clock and "
                    "0.05 s of CPU, 0.35 s allowed; run the check again on a quieter machine")
    assert timing(2.4, 0.05, 3.1).figures("move") == ("no move after 2.40 s of clock and 0.05 s of CPU (2.40 s waiting "
                                                      "for a core), 0.35 s allowed")


@pytest.mark.slow
@needs_sandbox
def test_othello_check_prints_the_truth_and_exits_3_when_it_could_not_tell() -> None:
    """The command line, pinned to the spinners' core with everything it starts (its agent inherits the core)."""
    spin = f"import os; os.sched_setaffinity(0, {{{PINNED}}})\nwhile True: pass"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    try:
        done = subprocess.run([sys.executable, "-m", "othello_arena", "check", cpu_agent("--work", "0.05", "--at", "2",
                                                                                           "--starve"),
                               "--time", "0.1", "--attempts", "1", "-q"], capture_output=True, text=True, timeout=600,
                              preexec_fn=lambda: os.sched_setaffinity(0, {PINNED}))
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert done.returncode == 3, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    unsure = [line for line in lines if line.startswith("  UNSURE   answers in time: ")]
    assert len(unsure) == 1 and "could not tell: the machine was busy (load " in unsure[0], done.stdout
    assert " on 1 core): " in unsure[0] and unsure[0].endswith("; run the check again on a quieter machine")
    assert not [line for line in lines if line.startswith("  FAIL")], done.stdout
    assert any(line.startswith('no check failed; could not tell: "answers in time"') for line in lines), done.stdout
