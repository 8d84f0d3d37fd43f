"""`othello check`: the conformance checker, on a good agent and on broken ones."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.agents.check import FAIL, PASS, check_agent
from othello_arena.agents.cli import check as check_command
from othello_arena.referee.spec import AgentSpec

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def broken(fault: str) -> str:
    return f"bad=python {TESTS / 'broken_agent.py'} {fault} {{name}}"


def card_for(agent: str, seconds: float = 1.0, attempts: int = 4, startup: float = 5.0):
    return check_agent(AgentSpec.parse(agent), seconds, attempts=attempts, startup=startup)


def test_a_correct_agent_passes_every_check():
    card = card_for(broken("none"))
    assert {key: item.status for key, item in card.items.items()} == {key: PASS for key in card.items}
    assert card.passed


@pytest.mark.parametrize("fault, failed", [
    ("keep-in", {"deletes", "black"}),
    ("slow", {"in-time"}),
    ("no-pass", {"must-pass"}),
    ("strict", {"liberal"}),
    ("linger", {"full-game"}),
])
def test_each_fault_fails_its_check(fault, failed):
    card = card_for(broken(fault), attempts=1, startup=1.0)
    statuses = {key: item.status for key, item in card.items.items()}
    assert {key for key, status in statuses.items() if status == FAIL} >= failed, card.lines()
    assert not card.passed


def test_an_agent_that_plays_on_after_an_illegal_move_gets_an_advisory_only():
    card = card_for(broken("trusting"))
    assert card["illegal"].status == "ADVISORY"
    assert card.passed, card.lines()


def test_cli_exit_codes_and_report_card():
    good = CliRunner().invoke(check_command, ["-q", "--time", "1", broken("none")])
    assert good.exit_code == 0, good.output
    assert "all checks passed" in good.output
    assert good.output.count("PASS") == 9
    bad = CliRunner().invoke(check_command, ["-q", "--time", "1", "--attempts", "1", broken("strict")])
    assert bad.exit_code == 1
    assert "FAIL     copes with a lower-case move line and CRLF" in bad.output
    unknown = CliRunner().invoke(check_command, ["nobody"])
    assert unknown.exit_code == 2 and "known" in unknown.output


def test_an_agent_that_cannot_start_fails_cleanly():
    card = card_for("ghost=/nonexistent/ghost", attempts=0)
    assert not card.passed
    assert "cannot start" in card["white"].detail


# -- the agents we ship pass (all of them are checked by hand too: see bench/RESULTS.md) -----

RHINO = shutil.which("gtp-rhino") or ("/usr/games/gtp-rhino" if Path("/usr/games/gtp-rhino").exists() else None)


@pytest.fixture(scope="module")
def greedy_c(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    binary = tmp_path_factory.mktemp("build") / "greedy"
    subprocess.run(["gcc", "-O2", "-Wall", "-o", str(binary), str(ROOT / "agents" / "examples" / "greedy.c")], check=True)
    return binary


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["builtin", "c", "awk", "bridge"])
def test_shipped_agents_pass_the_checker(kind, greedy_c):
    agents = {
        "builtin": "paper-easy",
        "c": f"cgreedy={greedy_c} {{name}}",
        "awk": f"corners=awk -f {ROOT / 'agents' / 'examples' / 'corners.awk'} {{name}}",
        "bridge": f"rhino={sys.executable} -m othello_arena bridge gtp --name {{name}} -- {RHINO} -l 1 -b 0",
    }
    if kind == "bridge" and RHINO is None:
        pytest.skip("needs gtp-rhino")
    # gtp-rhino plays on its own clock (the bridge sends time_settings), so on a loaded machine its
    # games differ and a forced pass may take more steered games to reach.
    card = card_for(agents[kind], seconds=2.0, attempts=30 if kind == "bridge" else 12)
    assert card.passed, "\n".join(card.lines())


def test_a_situation_never_reached_is_untested_not_passed():
    from othello_arena.agents.check import ReportCard

    card = ReportCard("strong", 1.0)
    for key, item in card.items.items():
        if key != "must-pass":
            item.grade(True)
    card["must-pass"].detail = "no game of 10 reached that situation (try more --attempts)"
    assert not card.passed
    assert "  UNTESTED passes when it must: no game of 10" in "\n".join(card.lines())
    assert card.lines()[-1].startswith("no check failed, but some could not be exercised")
