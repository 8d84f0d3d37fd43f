"""``othello analyze`` and ``othello train`` through click's CliRunner."""

from __future__ import annotations

import json
import random

import numpy as np
from click.testing import CliRunner

from champion_helpers import position_with_empties
from othello_arena.agents.champion import search as S
from othello_arena.agents.champion.patterns import load_weights
from othello_arena.cli import cli
from othello_arena.protocol import Board, format_obf


def test_analyze_json_gives_the_exact_score_of_an_endgame():
    board = position_with_empties(random.Random(21), 9)
    exact = S.brute_force_score(np.uint64(board.own), np.uint64(board.opp))
    result = CliRunner().invoke(cli, ["analyze", "--json", "--", format_obf(board)])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert set(report) >= {"best_move", "score", "exact", "depth", "nodes", "seconds"}
    assert report["exact"] is True and report["score"] == exact
    legal = [m.line() for m in board.legal_moves()]
    assert any(report["best_move"] == f"{line[3]}{line[5]}" for line in legal)


def test_analyze_reads_a_drawn_board_from_stdin():
    drawing = Board().draw()
    result = CliRunner().invoke(cli, ["analyze", "-", "--time", "0.3", "--no-exact", "--json"], input=drawing)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["best_move"] in {"D3", "C4", "F5", "E6"}
    assert report["exact"] is False


def test_analyze_prints_a_board_and_the_iterations(tmp_path):
    path = tmp_path / "position.obf"
    path.write_text(format_obf(Board()) + "\n")
    result = CliRunner().invoke(cli, ["analyze", str(path), "--depth", "3"])
    assert result.exit_code == 0, result.output
    assert "best move" in result.output and "depth  3" in result.output


def test_analyze_rejects_a_bad_position():
    result = CliRunner().invoke(cli, ["analyze", "not-a-position"])
    assert result.exit_code == 2


def test_train_is_reproducible_from_its_seed(tmp_path):
    runner = CliRunner()
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    for out in (first, second):
        result = runner.invoke(cli, ["train", "--games", "12", "--seed", "5", "--solve-empties", "10", "--out", str(out)])
        assert result.exit_code == 0, result.output
    a, b = load_weights(str(first)), load_weights(str(second))
    assert np.array_equal(a, b)
    assert np.any(a != 0)
