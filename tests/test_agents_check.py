"""`othello check`: the conformance checker, on a good agent and on broken ones."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.agents.check import FAIL, PASS, check_agent
from othello_arena.agents.cli import check as check_command
from othello_arena.agents.registry import builtin_agents
from othello_arena.protocol import WHITE, GameRecord
from othello_arena.referee.spec import AgentSpec

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def broken(fault: str) -> str:
    return f"bad=python {TESTS / 'broken_agent.py'} {fault} {{name}}"


def card_for(agent: str, seconds: float = 1.0, attempts: int = 4, startup: float = 5.0):
    return check_agent(AgentSpec.parse(agent, builtins=builtin_agents()), seconds, attempts=attempts, startup=startup)


def test_a_correct_agent_passes_every_check():
    card = card_for(broken("none"))
    assert {key: item.status for key, item in card.items.items()} == {key: PASS for key in card.items}
    assert card.passed
    # A good agent's card reads as good: no advice, no hint, and one slowest-move figure with its name.
    text = "\n".join(card.lines())
    assert "advi" not in text.lower() and "hint" not in text
    assert text.count("slowest move") == 1 and f"answers in time: slowest move {card.slowest:.2f} s of 1.25 s allowed" in text


@pytest.mark.parametrize("fault, failed", [
    ("keep-in", {"deletes", "black"}),
    ("slow", {"in-time"}),
    ("no-pass", {"must-pass"}),
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
    assert "it should say so on stderr and exit" in card["illegal"].detail
    # Apart from the items, after the verdict: advice, not a failure.
    lines = card.lines()
    verdict = lines.index("all checks passed")
    assert lines[verdict + 1].startswith("advice (good manners the referee does not require")
    assert lines[verdict + 2].startswith("  notices an illegal opponent move: it answered (W A 1)")
    assert lines[verdict + 2].endswith("(the referee never relays an illegal move)")
    assert not any("notices an illegal" in line for line in lines[:verdict])


def test_lower_case_and_crlf_which_the_referee_never_sends_are_advisory():
    card = card_for(broken("strict"), attempts=1, startup=1.0)
    assert card["liberal"].status == "ADVISORY", card.lines()
    assert card.passed, card.lines()
    assert "(the referee writes upper case only)" in "\n".join(card.lines())


def test_cli_exit_codes_and_report_card():
    good = CliRunner().invoke(check_command, ["-q", "--time", "1", broken("none")])
    assert good.exit_code == 0, good.output
    assert "all checks passed" in good.output
    assert good.output.count("PASS") == 9
    bad = CliRunner().invoke(check_command, ["-q", "--time", "1", "--attempts", "1", broken("linger")])
    assert bad.exit_code == 1
    assert "FAIL     plays a game to the end and exits" in bad.output
    unknown = CliRunner().invoke(check_command, ["nobody"])
    assert unknown.exit_code == 2 and "known" in unknown.output


def test_an_agent_that_cannot_start_fails_cleanly():
    card = card_for("ghost=/nonexistent/ghost", attempts=0)
    assert not card.passed
    assert "no program `/nonexistent/ghost`" in card["white"].detail


# -- the report card shows the cause of a failure (issue 11.7) ---------------------------


def test_a_program_not_built_yet_is_named_and_gets_no_pass_for_speed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(check_command, ["-q", "--time", "1", "--attempts", "0", "bob=./bob {name}"])
    assert result.exit_code == 1
    assert f"no program `./bob` here ({tmp_path.resolve()}): build it first?" in result.output
    assert "PASS" not in result.output  # not even "answers in time"


def test_a_crash_mid_game_shows_the_move_the_position_and_the_agents_output(tmp_path):
    card = check_agent(AgentSpec.parse(broken("index-error")), 1.0, attempts=0, startup=1.0, workdir=tmp_path)
    text = "\n".join(card.lines())
    white = card["white"]
    assert white.status == FAIL
    assert "in game1 (as White, White to play move 5):" in white.evidence[0], white.evidence
    assert "    A B C D E F G H" in white.evidence[1]  # the position, drawn
    assert "  | IndexError: list index out of range" in white.evidence[-1]
    assert "  | thinking about move 3" in text  # the tail of its output, under the FAIL
    assert card.kept is not None and card.kept.parent == tmp_path
    assert (card.kept / "game1.stderr.log").read_text().count("IndexError") == 1
    assert f"the games' files are kept in {card.kept}" in text


def test_a_passing_agent_leaves_no_folder(tmp_path):
    card = check_agent(AgentSpec.parse(broken("none")), 1.0, attempts=2, workdir=tmp_path)
    assert card.passed and card.kept is None
    assert list(tmp_path.iterdir()) == []


def test_an_agent_with_a_hard_coded_name_is_told_to_use_it():
    # the program always waits for bob.in, but was called player: said once, for every item it fails
    card = card_for(f"player=python {TESTS / 'broken_agent.py'} none bob", attempts=0, startup=1.0)
    text = "\n".join(card.lines())
    assert card["white"].detail.endswith("; it never read player.in")
    assert card["black"].detail.endswith(": it never read player.in")
    assert text.count("hard-coded") == 1
    assert "hint: it never read player.in: is the name hard-coded? then call it by that name" in text
    # What the program waited for, when it can be found: a C binary's string, a script's text.
    # What the wait was made of: the limit part by part, then the checker's watch.
    assert re.search(r"no move within \d+\.\d s: 1 \+ 0\.25 s \+ 1 s to start up allowed, 2 s more watched",
                     card["white"].detail), card["white"].detail


def test_the_hard_coded_name_is_found_in_the_program(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    (tmp_path / "bob.c").write_text('#include <stdio.h>\n#include <unistd.h>\n'
                                    'int main(void) { while (!fopen("bob.in", "r")) usleep(10000); return 0; }\n')
    subprocess.run(["gcc", "-O2", "-o", str(tmp_path / "bob"), str(tmp_path / "bob.c")], check=True)
    card = check_agent(AgentSpec.parse("player=./bob", base=tmp_path), 1.0, attempts=0, startup=1.0)
    text = "\n".join(card.lines())
    assert text.count("hard-coded") == 1, text
    assert ("hint: it never read player.in: it waits for bob.in (its program names it), so the name is hard-coded: "
            f"call it by that name, `bob={tmp_path / 'bob'} ...`, or give the program `{{name}}`") in text


@pytest.fixture(scope="module")
def carol_home(tmp_path_factory) -> Path:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK")
    home = tmp_path_factory.mktemp("carol")
    for name in ("Carol.java", "carol.txt"):
        shutil.copy(TESTS / "data" / "home" / name, home)
    subprocess.run(["javac", "Carol.java"], cwd=home, check=True)
    return home


def test_a_jvm_that_cannot_find_its_class_is_told_about_home(carol_home):
    card = check_agent(AgentSpec.parse("carol=java Carol {name}", base=carol_home), 2.0, attempts=0, startup=5.0)
    evidence = "\n".join(card["white"].evidence)
    assert "Could not find or load main class Carol" in evidence
    assert "use `java -cp {home} CLASS`" in evidence
    assert check_agent(AgentSpec.parse("carol=java -cp {home} Carol {name}", base=carol_home), 2.0, attempts=4).passed


# -- the agents we ship pass (all of them are checked by hand too: see bench/RESULTS.md) -----

RHINO = shutil.which("gtp-rhino") or ("/usr/games/gtp-rhino" if Path("/usr/games/gtp-rhino").exists() else None)


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
    card["must-pass"].detail = "the check never reached a position where your program must pass (in 10 games)"
    assert not card.passed and not card.failed  # not a PASS, and not a failure either (tests/test_agents_check_passes.py)
    assert "  UNTESTED passes when it must: the check never reached" in "\n".join(card.lines())
    assert card.lines()[-1].startswith('no check failed; not tested: "passes when it must"')


def test_an_agent_that_quits_when_its_parent_is_process_1_is_told_about_the_pid_namespace():
    card = card_for(broken("orphan-check"), attempts=0, startup=1.0)
    assert not card.passed
    text = "\n".join(card.lines())
    assert "exited (code 0) before its first move" in text, text
    assert "getppid() == 1" in text and "PID namespace" in text


def test_a_move_printed_on_standard_output_is_named_and_what_depends_on_a_move_is_untested():
    card = card_for(broken("stdout"), attempts=1, startup=1.0)
    assert "your program printed (W D 3) on standard output: write it to bad.out" in card["white"].detail
    assert card["black"].status == FAIL and "on standard output" in card["black"].detail
    for key in ("illegal", "full-game", "in-time", "liberal"):  # no false PASS, no second failure
        assert card[key].status is None and "no move was ever read" in card[key].detail, card.lines()
    # each scripted game is kept as a record that replays and reruns
    assert card.kept is not None
    record = GameRecord.load(str(card.kept / "game1.json"))
    assert record.white == "bad" and record.fault is not None and record.fault.colour is WHITE
    assert record.extra["agents"]["bad"]["command"][-2:] == ["stdout", "{name}"]
    assert "othello replay" in "\n".join(card.lines())
    shutil.rmtree(card.kept)


def test_a_board_upside_down_gets_the_orientation_hint():
    card = card_for(broken("flipped"), attempts=0, startup=1.0)
    assert card["white"].status == FAIL and card["white"].detail.startswith("illegal move"), card.lines()
    text = "\n".join(card.lines())
    assert "is its board upside down" in text and "White starts on D5 and E4" in text
    assert "without reading and deleting" not in text  # it read its colour file: it refused the move


def test_an_agent_that_exits_before_taking_its_colour_is_told_it_did_not_read_and_delete_it():
    card = card_for(broken("orphan-check"), attempts=0, startup=1.0)
    assert "without reading and deleting bad.in" in card["black"].detail


def test_fail_fast_stops_at_the_first_failure():
    result = CliRunner().invoke(check_command, [broken("orphan-check"), "--time", "1", "--startup-time", "1",
                                                "--fail-fast", "-q"])
    assert result.exit_code == 1, result.output
    assert "othello check" in result.output and "(1 s per move, 1 games)" in result.output
    assert "FAIL     starts as White" in result.output and "UNTESTED starts as Black" in result.output
    assert "stopped at the first failure (--fail-fast)" in result.output
