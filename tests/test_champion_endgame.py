"""The champion's exact solver is right: its small solvers for the last empties, its
stability cut-off and its table agree with brute force, and it finds the published
scores of the FFO endgame suite.  (Nothing here measures speed.)"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from champion_helpers import position_with_empties, random_position
from othello_arena.agents.champion import endgame as E
from othello_arena.agents.champion import search as S
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import Board, parse_obf, square_name

FFO_FILE = Path(__file__).parent / "data" / "ffo-1-19.txt"


def bits(board: Board) -> tuple[np.uint64, np.uint64]:
    return np.uint64(board.own), np.uint64(board.opp)


def empties(board: Board) -> int:
    return 64 - bin(board.white | board.black).count("1")


def assert_fail_soft(value: int, exact: int, alpha: int, beta: int, what: object) -> None:
    """A fail-soft result in (alpha, beta): exact inside, else a bound on the right side."""
    if value <= alpha:
        assert exact <= value, what
    elif value >= beta:
        assert exact >= value, what
    else:
        assert value == exact, what


def endgame_positions(seed: int, count: int, low: int, high: int) -> list[Board]:
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = position_with_empties(rng, rng.randint(low, high))
        if low <= empties(board) <= high:
            boards.append(board)
    return boards


def test_the_small_solvers_equal_brute_force_in_every_window():
    # 1-7 empties (the table-free solvers), passes and finished lines included.
    for board in endgame_positions(21, 250, 1, E.SHALLOW_EMPTIES):
        P, O = bits(board)
        n = empties(board)
        exact = S.brute_force_score(P, O)
        assert E.unpack_score(E.shallow(P, O, -65, 65, n)) == exact, board.draw()
        for alpha in range(-64, 64, 6):
            for beta in (alpha + 1, alpha + 9):
                value = E.unpack_score(E.shallow(P, O, alpha, beta, n))
                assert_fail_soft(value, exact, alpha, beta, (board.draw(), alpha, beta))


def test_the_small_solvers_count_their_nodes():
    board = endgame_positions(5, 1, 7, 7)[0]
    P, O = bits(board)
    assert E.unpack_nodes(E.shallow(P, O, -65, 65, 7)) > 7


def test_the_solver_equals_brute_force_with_null_windows_and_a_shared_table():
    # 8-11 empties: the table, the stability cut-off and the ordering above the small
    # solvers; the table is kept between windows, so its bounds must stay true.
    engine = Engine(tt_bits=12)  # small: slots are shared and replaced often
    for board in endgame_positions(8, 12, 8, 11):
        P, O = bits(board)
        exact = S.brute_force_score(P, O)
        for alpha in (-40, -20, -9, -3, -1, 0, 1, 4, 10, 20, 40):
            value, _ = engine.solve_window(board, alpha, alpha + 1)
            assert_fail_soft(value, exact, alpha, alpha + 1, (board.draw(), alpha))
        value, square = engine.solve_window(board, -65, 65)
        assert value == exact
        child = board.play(next(m for m in board.legal_moves() if m.square == square))
        assert -S.brute_force_score(*bits(child)) == exact


def test_the_exact_score_from_null_window_tests_is_right_from_any_guess():
    # The root finds the exact score by null-window tests from a guess (MTD(f)); a bad
    # guess costs tests, never the answer, and the move it keeps must reach that score.
    for board in endgame_positions(16, 6, 9, 10):
        P, O = bits(board)
        exact = S.brute_force_score(P, O)
        for guess in (-64.0, -9.0, 0.0, float(exact), 3.0, 64.0):
            engine = Engine(tt_bits=14)
            result = engine._solve(P, O, empties(board), guess)
            assert result is not None and result.exact and not result.outcome_only
            assert result.score == exact, (board.draw(), guess)
            if result.square is None:
                assert not board.has_move()
                continue
            child = board.play(next(m for m in board.legal_moves() if m.square == result.square))
            assert -S.brute_force_score(*bits(child)) == exact, (board.draw(), guess)


def test_stable_discs_never_change_colour():
    rng = random.Random(4)
    checked = 0
    for _ in range(60):
        board = random_position(rng, rng.randint(30, 58))
        if board.is_game_over():
            continue
        for mover_view in (True, False):
            X, Y = (board.own, board.opp) if mover_view else (board.opp, board.own)
            stable = E.stable_count(np.uint64(X), np.uint64(Y))
            # in any continuation X keeps at least that many of its discs
            for _ in range(8):
                end = random_position(rng, 64, board)
                final_own = end.white if X == board.white else end.black
                assert bin(final_own & X).count("1") >= stable, board.draw()
                checked += 1
    assert checked > 100


def test_stable_count_finds_anchored_edges_and_full_lines():
    # X owns the whole first row and A-column pieces anchored on A1: all stable.
    x = 0x00000000000000FF | 0x0000000000010100
    y = 0x0000000000000200
    assert E.stable_count(np.uint64(x), np.uint64(y)) == 10
    # a completely filled board: every disc is stable
    assert E.stable_count(np.uint64(0x00000000FFFFFFFF), np.uint64(0xFFFFFFFF00000000)) == 32


def read_ffo() -> list[tuple[str, str, set[str], int]]:
    rows = []
    for line in FFO_FILE.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        obf, _, rest = line.partition(";")
        name, moves, score = rest.split()
        rows.append((name, obf + ";", set(moves.split("/")), int(score)))
    return rows


@pytest.mark.parametrize("name, obf, best, score", read_ffo(), ids=[row[0] for row in read_ffo()])
def test_the_solver_finds_the_published_ffo_scores(name, obf, best, score):
    board = parse_obf(obf)
    result = Engine(tt_bits=18).think(board, exact=True)
    assert result.exact and not result.outcome_only
    assert (result.score, result.move_name in best) == (score, True), (name, result.move_name, result.score)
    assert square_name(result.square) == result.move_name
