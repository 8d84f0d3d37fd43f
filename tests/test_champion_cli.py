"""``othello analyze`` and ``othello train`` through click's CliRunner."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from champion_helpers import position_with_empties
from othello_arena.agents.champion import search as S
from othello_arena.agents.champion.cli import finished_score
from othello_arena.agents.champion.patterns import load_weights
from othello_arena.cli import cli
from othello_arena.protocol import BLACK, WHITE, Board, format_obf, parse_move, parse_obf


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


def test_a_position_with_one_legal_move_and_few_empties_is_still_solved():
    # One empty square, one legal move (White's H8, taking six): the answer is the final score, not a
    # one-ply evaluation cut short because there was nothing to choose (it printed "exact": false).
    one_left = "X" * 32 + "O" * 31 + "- X;"
    board = parse_obf(one_left)
    assert len(board.legal_moves()) == 1
    exact = S.brute_force_score(np.uint64(board.own), np.uint64(board.opp))
    assert exact == 39 - 25
    for args in (["analyze", "--json", one_left], ["analyze", "--json", "--time", "0.5", one_left]):
        report = json.loads(CliRunner().invoke(cli, args).output)
        assert (report["best_move"], report["score"], report["exact"]) == ("H8", exact, True), args
    # and with a dozen empties, a position whose single move is still solved for its score
    rng = random.Random(6)
    while True:
        board = position_with_empties(rng, rng.randint(6, 12))
        moves = board.legal_moves()
        if len(moves) == 1 and not moves[0].is_pass:
            break
    report = json.loads(CliRunner().invoke(cli, ["analyze", "--json", format_obf(board)]).output)
    assert report["exact"] is True
    assert report["score"] == S.brute_force_score(np.uint64(board.own), np.uint64(board.opp))


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


# Published FFO endgame positions (OBF as the suite prints them: X moves first,
# a1 first), with the best move and the score every Othello program gives,
# empty squares going to the winner.
FFO = [
    ("#5", "-OOOOO----OXXO-XXXOXOXX-XXOXOXXOXXOOXOOOXXXXOO-OX-XOOO---XXXXX-- X;", "G8", 32),
    ("#11", "---O-XOX----XXOX---XXOOXO-XXOXOXXXXOOXOX-XOOXXXXXOOOXX-XOOOOOOO- O;", "B3", 30),
]


@pytest.mark.parametrize("name, obf, best, score", FFO, ids=[row[0] for row in FFO])
def test_analyze_takes_a_published_obf_line_as_typed_and_scores_it_as_published(name, obf, best, score):
    # The line starts with "-": no "--" needed before it, and options may come either side.
    result = CliRunner().invoke(cli, ["analyze", "--json", obf, "--exact"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["best_move"], report["score"], report["exact"]) == (best, score, True)
    assert report["score_convention"] == "empties to the winner"
    text = CliRunner().invoke(cli, ["analyze", obf, "--exact"])
    assert text.exit_code == 0, text.output
    assert f"best move {best}  score {score:+d} (exact, empties to the winner)" in text.output


def test_the_engine_counts_empties_for_the_winner_where_the_referee_does_not():
    # White wipes Black out in 9 moves: 13-0 on the board with 51 empties, +64 as scored by everyone.
    board = Board()
    for text in ("(W D 3)", "(B C 3)", "(W B 3)", "(B D 2)", "(W E 1)", "(B D 6)", "(W D 7)", "(B E 3)", "(W F 4)"):
        board = board.play(parse_move(text))
    assert board.is_game_over() and (board.count(WHITE), board.count(BLACK)) == (13, 0)
    for_side_to_move = S.final_score(np.uint64(board.own), np.uint64(board.opp))
    assert for_side_to_move == (64 if board.to_move is WHITE else -64)


def test_a_finished_game_is_scored_by_the_engine_s_rule_without_the_engine():
    wiped_out = Board()
    for text in ("(W D 3)", "(B C 3)", "(W B 3)", "(B D 2)", "(W E 1)", "(B D 6)", "(W D 7)", "(B E 3)", "(W F 4)"):
        wiped_out = wiped_out.play(parse_move(text))
    finished = [wiped_out, parse_obf("X" * 40 + "O" * 24 + " O;"), parse_obf("X" * 32 + "O" * 32 + " X;"),
                parse_obf("X" * 50 + "-" * 14 + " O;")]
    for board in finished:
        assert board.is_game_over()
        assert finished_score(board) == S.final_score(np.uint64(board.own), np.uint64(board.opp)), board.draw()
    assert [finished_score(board) for board in finished[1:]] == [-16, 0, -64]


def othello(*args: str) -> subprocess.CompletedProcess[str]:
    """``othello ARGS`` as a user runs it: a process of its own."""
    return subprocess.run([sys.executable, "-m", "othello_arena", *args], capture_output=True, text=True, timeout=280)


def test_a_file_of_positions_gives_what_each_position_gives_alone(tmp_path):
    rng = random.Random(5)
    lines = [format_obf(position_with_empties(rng, 8)), format_obf(position_with_empties(rng, 10)),
             "X" * 40 + "O" * 24 + " X;"]  # the last a finished game
    path = tmp_path / "positions.obf"
    path.write_text(f"# three positions\n{lines[0]}\n\n{lines[1]}\n% FFO-style comment line\n{lines[2]}\n")
    batch = othello("analyze", "--file", str(path), "--exact", "--json")
    assert batch.returncode == 0, batch.stderr
    reports = json.loads(batch.stdout)
    assert [report.pop("line") for report in reports] == [2, 4, 6]
    alone = []
    for line in lines:
        result = othello("analyze", "--exact", "--json", "--", line)
        assert result.returncode == 0, result.stderr
        alone.append(json.loads(result.stdout))
    for report in reports + alone:
        report.pop("seconds")
    assert reports == alone
    assert alone[2]["best_move"] is None and alone[0]["exact"] and alone[0]["nodes"] > 0
    text = othello("analyze", "--exact", "--file", str(path))
    assert text.returncode == 0, text.stderr
    printed = text.stdout.splitlines()
    assert [line.split()[:2] for line in printed] == [["line", "2"], ["line", "4"], ["line", "6"]]
    for line, report in zip(printed, alone):
        assert f"score {report['score']:+d} (" in line
        assert report["best_move"] is None or f"best move {report['best_move']} " in line


def test_a_file_with_bad_lines_names_each_of_them_and_analyzes_nothing(tmp_path):
    path = tmp_path / "positions.obf"
    good = format_obf(Board())
    path.write_text(f"{good}\nnot a position\n{good}\n{good[:40]} X;\n")
    result = CliRunner().invoke(cli, ["analyze", "--file", str(path), "--json"])
    assert result.exit_code == 2
    assert f"{path}, line 2:" in result.output and f"{path}, line 4:" in result.output
    assert "line 1:" not in result.output and "line 3:" not in result.output
    assert "best_move" not in result.output


def test_analyze_wants_one_position_or_one_file():
    for args in (["analyze"], ["analyze", format_obf(Board()), "--file", "positions.obf"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2 and "give one POSITION, or --file FILE" in result.output


def test_analyze_rejects_a_bad_position():
    result = CliRunner().invoke(cli, ["analyze", "not-a-position"])
    assert result.exit_code == 2


# Two trainings, each compiling the fit and solving endgames: a minute idle, past the suite's 300 s
# at a load average of 20 on two cores (seen as a non-root user).
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_train_is_reproducible_from_its_seed(tmp_path):
    runner = CliRunner()
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    for out in (first, second):
        result = runner.invoke(cli, ["train", "--games", "12", "--seed", "5", "--solve-empties", "10", "--out", str(out)])
        assert result.exit_code == 0, result.output
    a, b = load_weights(str(first)), load_weights(str(second))
    assert np.array_equal(a, b)
    assert np.any(a != 0)
