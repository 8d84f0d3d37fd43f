"""The rules subcommands, driven through click's CliRunner and as a real process."""

import json
import subprocess
import sys

from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import GameRecord, parse_board, parse_move
from test_protocol_formats import REAL_GGF


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


def test_perft_prints_the_leaf_count():
    result = run("perft", "5")
    assert result.exit_code == 0
    assert "perft 5: 1396" in result.output


def test_perft_divide_sums_to_the_total():
    result = run("perft", "4", "--divide")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    parts = [int(line.split()[-1]) for line in lines if line.startswith("(")]
    assert len(parts) == 4 and sum(parts) == 244


def test_perft_rejects_a_negative_depth():
    result = run("perft", "-1")
    assert result.exit_code == 2
    assert "DEPTH" in result.output


def test_show_draws_the_position_after_moves():
    result = run("show", "(W D 3)", "c3")
    assert result.exit_code == 0, result.output
    board = parse_board(result.output)
    assert board.to_move.value == "W"
    assert result.output.rstrip().endswith("legal: B3 C4 F5 E6")
    assert "  3 . . b W" in result.output


def test_show_reads_obf_and_prints_obf():
    start = "---------------------------OX------XO--------------------------- X;"
    result = run("show", "--obf", start, "--as-obf", "d3")
    assert result.exit_code == 0
    assert result.output.strip() == "-" * 19 + "X" + "-" * 7 + "XX" + "-" * 6 + "XO" + "-" * 27 + " O;"


def test_show_refuses_an_illegal_move_with_a_clear_message():
    result = run("show", "(W A 1)")
    assert result.exit_code == 2
    assert "A1 flips no disc" in result.output


def test_replay_prints_every_position_and_the_result(tmp_path):
    path = tmp_path / "game.json"
    path.write_text(GameRecord.from_ggf(REAL_GGF).to_json())
    result = run("replay", str(path))
    assert result.exit_code == 0, result.output
    assert result.output.count("A B C D E F G H") == 2 * 62
    assert "Result: 1/2-1/2 Draw 32-32" in result.output
    ggf = run("replay", str(tmp_path), "--format", "ggf")
    assert ggf.exit_code == 0 and ggf.output.startswith("(;GM[Othello]") and "B[d3//0.01]" in ggf.output


def test_replay_names_the_bad_file(tmp_path):
    path = tmp_path / "game.json"
    path.write_text(json.dumps({"white": "a", "black": "b", "moves": [{"move": "(W A 1)"}]}))
    result = run("replay", str(path))
    assert result.exit_code == 1
    assert str(path) in result.output and "A1 flips no disc" in result.output


def test_python_dash_m_runs_the_same_command():
    out = subprocess.run([sys.executable, "-m", "othello_arena", "show", "d3"], capture_output=True, text=True, check=True)
    assert parse_board(out.stdout) == parse_board(run("show", "d3").output)
    assert parse_board(out.stdout).at(parse_move("(W D 3)").square) is not None
