"""``othello tournament check-agents``: the whole class built as the runner builds it and checked, a card each.

Real builds (gcc in the sandbox), real agents through the conformance check.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from tournament_helpers import AGENT, write_tournament


def test_check_agents_gives_a_card_per_agent_and_exit_1_with_the_compilers_error(tmp_path: Path) -> None:
    good = tmp_path / "students" / "alice"
    good.mkdir(parents=True)
    shutil.copy(AGENT, good / "agent.py")
    broken = tmp_path / "students" / "bob"
    broken.mkdir(parents=True)
    (broken / "bob.c").write_text("int main(void) { return missing_symbol_of_bob; }\n")
    tables = [
        '[[agents]]\nname = "alice"\ncwd = "students/alice"\n'
        f'command = {json.dumps(f"{sys.executable} agent.py --name {{name}} --style first")}\n'
        'build = "echo compiled alice"\n',
        '[[agents]]\nname = "bob"\ncwd = "students/bob"\ncommand = "./bob"\nbuild = "gcc -o bob bob.c"\n',
        '[[agents]]\nname = "greedy"\n',
    ]
    path = write_tournament(tmp_path, tables, time_per_move=2.0)
    out = tmp_path / "cards"
    result = CliRunner().invoke(cli, ["tournament", "check-agents", str(path), "--out", str(out), "--attempts", "0"],
                                catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert sorted(card.name for card in out.iterdir()) == ["alice.txt", "bob.txt", "greedy.txt"]
    bob = (out / "bob.txt").read_text()
    assert "the check of bob" in bob and "build: failed (exit 1)" in bob
    assert "missing_symbol_of_bob" in bob and "error" in bob  # the compiler's own words
    assert "alice" not in bob and "greedy" not in bob  # forwardable: nobody else's name
    alice = (out / "alice.txt").read_text()
    assert "build: ok" in alice and "all checks passed" in alice
    assert "all checks passed" in (out / "greedy.txt").read_text()
    lines = result.output.splitlines()
    assert any(line.startswith("bob ") and "build failed" in line for line in lines)
    assert any(line.startswith("alice ") and "passed" in line for line in lines)
    assert "2 of 3 agents passed; failed: bob" in result.output
    # Nothing played; what the checks measured is kept for the duration estimate of `tournament check`.
    check = CliRunner().invoke(cli, ["tournament", "check", str(path)], catch_exceptions=False)
    estimate = check.output.split("typically about")[1].splitlines()[0]
    assert "in check-agents (" in estimate and "alice " in estimate and "greedy " in estimate
    assert "no measure yet for bob" in estimate  # its build failed: never checked
    assert "A database exists" not in check.output  # no game stored


@pytest.mark.slow
def test_an_agent_with_an_item_the_check_could_not_exercise_is_listed_as_passed(tmp_path: Path) -> None:
    """UNTESTED is no failure: a strong program never steered into a pass passes the class's check."""
    from test_agents_check_passes import MOBILITY

    home = tmp_path / "students" / "carol"
    home.mkdir(parents=True)
    (home / "agent.py").write_text(MOBILITY, encoding="utf-8")
    table = ('[[agents]]\nname = "carol"\ncwd = "students/carol"\n'
             f'command = {json.dumps(f"{sys.executable} agent.py {{name}}")}\n')
    path = write_tournament(tmp_path, [table, '[[agents]]\nname = "greedy"\n'], time_per_move=1.0)
    out = tmp_path / "cards"
    result = CliRunner().invoke(cli, ["tournament", "check-agents", str(path), "--out", str(out), "--attempts", "0"],
                                catch_exceptions=False)
    carol = (out / "carol.txt").read_text()
    assert "UNTESTED" in carol and "does not count against it" in carol, carol
    assert result.exit_code == 0, result.output
    assert "2 of 2 agents passed" in result.output
