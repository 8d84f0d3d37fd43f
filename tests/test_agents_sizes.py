"""Seed 002's players (and random, beginner, greedy) on bigger boards: the heuristics by positions, games in process."""

from __future__ import annotations

import pytest

from othello_arena.agents.players import (
    PAPER_WEIGHTS,
    beginner_strategy,
    corners,
    corners_heuristic,
    greedy,
    paper_easy,
    paper_hard,
    paper_weights,
    random_strategy,
    stable_discs,
    static_weight_heuristic,
)
from othello_arena.protocol import BLACK, WHITE, Board, Move, parse_board, square


def test_paper_weights_of_8_are_the_papers_matrix_and_bigger_ones_keep_its_pattern() -> None:
    assert paper_weights(8) == PAPER_WEIGHTS
    for size in (10, 12, 14):
        table = paper_weights(size)
        assert len(table) == size and all(len(row) == size for row in table)
        assert table == [list(row) for row in zip(*table)] and table == table[::-1]  # symmetric like the paper's
        assert (table[0][0], table[0][1], table[1][1], table[0][size // 2], table[1][size // 2]) == (4, -3, -4, 2, -1)


def test_corners_of_a_14x14_board() -> None:
    assert corners(14) == sum(1 << square(c, r, 14) for c in (0, 13) for r in (1, 14))


# White holds J1 (a corner of 10x10) with a run of discs along the bottom row; Black has I1's neighbour I2.
CORNER_10 = """
    A B C D E F G H I J
 10 . . . . . . . . . . 10
  9 . . . . . . . . . . 9
  8 . . . . . . . . . . 8
  7 . . . . . . . . . . 7
  6 . . . . W B . . . . 6
  5 . . . . B W . . . . 5
  4 . . . . . . . . . . 4
  3 . . . . . . . . . . 3
  2 . . . . . . . . B . 2
  1 . . . . . . W W W W 1
    A B C D E F G H I J
  B to move
"""


def test_the_corner_and_the_discs_leaning_on_it_are_stable_on_10x10() -> None:
    board = parse_board(CORNER_10)
    assert board.size == 10 and board.to_move is BLACK
    stable = stable_discs(board, WHITE)
    assert stable == sum(1 << square(c, 1, 10) for c in range(6, 10))  # G1..J1: the corner and its edge run
    assert stable_discs(board, BLACK) == 0
    assert corners_heuristic(board, WHITE) == 100.0
    assert static_weight_heuristic(board, WHITE) > 0


def test_seed_002s_player_takes_a_10x10_corner_when_it_can() -> None:
    # Black to move can take A10 (flipping B9 along the diagonal to C8), or play elsewhere
    board = parse_board("""
 10 . . . . . . . . . .
  9 . W . . . . . . . .
  8 . . B . . . . . . .
  7 . . . . . . . . . .
  6 . . . . W B . . . .
  5 . . . . B W . . . .
  4 . . . . . . . . . .
  3 . . . . . . . . . .
  2 . . . . . . . . . .
  1 . . . . . . . . . .
  B to move
""")
    assert Move.parse("(B A 10)", 10) in board.legal_moves()
    # one ply deep, the corner and the weights decide (deeper, the paper's corners heuristic already counts
    # A10 as Black's while White cannot take it, so the hard player may well wait)
    assert paper_easy()(board, BLACK, 30.0) == Move.parse("(B A 10)", 10)
    assert paper_hard()(board, BLACK, 30.0) in board.legal_moves()


@pytest.mark.parametrize("size", [12, 14])
def test_the_players_finish_games_on_bigger_boards(size: int) -> None:
    players = [random_strategy(1), beginner_strategy(), greedy(), paper_easy()]
    for white in players:
        board = Board.start(size)
        black = players[(players.index(white) + 1) % len(players)]
        while not board.is_game_over():
            side = white if board.to_move is WHITE else black
            move = side(board, board.to_move, 30.0)
            assert isinstance(move, Move) and move.size == size
            board = board.play(move)
        assert board.outcome() is not None


def test_beginner_scans_columns_then_rows_on_a_bigger_board() -> None:
    board = Board.start(12)
    # the first legal square scanning A1, A2, ... A12, B1, ...: column first, then row
    legal = sorted(board.legal_moves(), key=lambda m: ((m.square or 0) % 12, (m.square or 0) // 12))
    assert beginner_strategy()(board, WHITE, 1.0) == legal[0]
