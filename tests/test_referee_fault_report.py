"""``othello play`` and ``othello match`` show why an agent lost on a fault: its output's last lines and the known hints."""

from __future__ import annotations

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
