"""What ``othello`` loads: its help imports no subcommand, and a call loads only what it needs (issue 27).

Checked through ``sys.modules`` of a real ``othello`` process, never by timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from othello_arena.cli import SUBCOMMANDS, cli

# Writes the modules the command loaded into the file named first, then runs the command.
PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from othello_arena.cli import cli
cli(sys.argv[1:], prog_name="othello")
"""

# A finished game: every square taken (White 40, Black 24), White (X) to move: nothing to search.
FULL_BOARD = "X" * 40 + "O" * 24 + " X;"

HEAVY = ("numba", "numpy", "othello_arena.referee.game", "othello_arena.tournaments", "watchdog", "psutil", "hashlib")


def loaded_by(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    out = tmp_path / "modules.json"
    result = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], capture_output=True, text=True, timeout=120)
    return result, json.loads(out.read_text())


def heavy(modules: list[str]) -> list[str]:
    return [name for name in modules if any(name == h or name.startswith(h + ".") for h in HEAVY)]


def test_help_imports_no_subcommand_and_lists_them_all(tmp_path):
    result, modules = loaded_by(tmp_path, "--help")
    assert result.returncode == 0, result.stderr
    assert heavy(modules) == []
    assert not [name for name in modules if name.endswith(".cli") and name != "othello_arena.cli"]
    for name in SUBCOMMANDS:
        assert f"\n  {name} " in result.stdout


def test_analyze_of_a_finished_game_loads_no_engine_and_gives_its_final_score(tmp_path):
    result, modules = loaded_by(tmp_path, "analyze", "--json", FULL_BOARD)
    assert result.returncode == 0, result.stderr
    assert "othello_arena.agents.champion.cli" in modules  # the probe sees what the command loaded
    assert heavy(modules) == []
    report = json.loads(result.stdout)
    # 40-24 on a full board, White to move: +16, exact, no move to make.
    assert (report["best_move"], report["score"], report["exact"], report["nodes"]) == (None, 16, True, 0)


def test_the_help_table_is_the_one_click_makes_from_the_loaded_commands():
    ctx = click.Context(cli, info_name="othello")
    read, loaded = click.HelpFormatter(), click.HelpFormatter()
    cli.format_commands(ctx, read)  # from the docstrings in the source
    click.Group.format_commands(cli, ctx, loaded)  # click's own: imports every subcommand
    assert read.getvalue() == loaded.getvalue()
    assert "analyze" in read.getvalue()


def test_a_subcommand_still_runs_and_shows_its_own_help():
    result = CliRunner().invoke(cli, ["analyze", "--help"])
    assert result.exit_code == 0, result.output
    assert "--file" in result.output
