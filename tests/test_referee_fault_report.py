"""``othello play`` and ``othello match`` show why an agent lost on a fault: its output's last lines and the known hints."""

from __future__ import annotations

import json

import sys
from pathlib import Path

from click.testing import CliRunner

from othello_arena.cli import cli

# A JVM started without its class path says this and exits 1 (the mistake of `tiny=java Tiny {name}`).
NO_CLASS = (f"tiny={sys.executable} -c \"import sys; print('Error: Could not find or load main class Tiny', "
            "file=sys.stderr); sys.exit(1)\"")


def test_play_shows_a_crashed_agents_last_output_and_the_hint(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["play", NO_CLASS, "random", "--time", "2", "--seed", "1",
                                      "--out", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert "tiny loses: its program crashed" in result.output
    assert "tiny at move " in result.output
    assert "| Error: Could not find or load main class Tiny" in result.output
    assert "hint: the JVM looked for the class in the game folder" in result.output and "-cp {home}" in result.output


def test_match_shows_each_faulty_game_with_the_output_and_the_hint(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["match", NO_CLASS, "random", "--games", "2", "--time", "2", "--seed", "1",
                                      "-j", "1", "--out", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert result.output.count("| Error: Could not find or load main class Tiny") == 2, result.output
    assert result.output.count("hint: the JVM looked for the class") == 2


BROKEN = Path(__file__).resolve().parent / "broken_agent.py"


def test_a_move_echoed_on_stderr_is_no_stdout_mistake_and_a_move_printed_instead_is(tmp_path: Path) -> None:
    """The stdout hint only when the move really went to standard output: a student's agent that writes every move
    to its NAME.out and echoes it on stderr was told, after an illegal move, to write it to NAME.out."""
    echo = f"v1={sys.executable} {BROKEN} echo {{name}}"
    result = CliRunner().invoke(cli, ["play", echo, "random", "--time", "2", "--seed", "1", "--out", str(tmp_path / "e")])
    assert result.exit_code == 0, result.output
    assert "v1 loses" in result.output and "illegal" in result.output, result.output
    assert "| (W " in result.output or "| (B " in result.output  # its echoes are in its output's last lines
    assert "on standard output" not in result.output, result.output
    # ...and the next step is named, a command that works as printed.
    record = json.loads((tmp_path / "e" / "game.json").read_text())
    at = record["result"]["move_number"]
    assert f"to see it again: othello replay {tmp_path / 'e'} --rerun v1 --at {at} " in result.output
    again = CliRunner().invoke(cli, ["replay", str(tmp_path / "e"), "--rerun", "v1", "--at", str(at)])
    assert again.exit_code == 0 and "recorded: " in again.output and "(the same)" in again.output, again.output
    printing = f"v2={sys.executable} {BROKEN} stdout {{name}}"
    result = CliRunner().invoke(cli, ["play", printing, "random", "--time", "1", "--seed", "1",
                                      "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "hint: your program printed (" in result.output and "on standard output: write it to v2.out" in result.output
