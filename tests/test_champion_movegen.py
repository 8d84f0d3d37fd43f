"""The compiled move generator agrees with the rules core, square for square."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from champion_helpers import random_position
from othello_arena.agents.champion import bitboard as bb
from othello_arena.protocol import Board, bits, flips, legal_squares, perft, square

# Published perft counts from the start (a pass is a move, a finished game a leaf).
PERFT_FROM_START = [1, 4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288]


def test_perft_from_the_start_matches_the_published_counts():
    P, O = bb.board_bits(Board())
    assert [bb.perft(P, O, depth) for depth in range(len(PERFT_FROM_START))] == PERFT_FROM_START


def test_perft_matches_the_rules_core_on_random_positions():
    rng = random.Random(5)
    for _ in range(25):
        board = random_position(rng, rng.randint(0, 55))
        P, O = bb.board_bits(board)
        assert bb.perft(P, O, 3) == perft(board, 3), board.draw()


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 60))
def test_legal_moves_and_flips_match_the_rules_core(seed, plies):
    board = random_position(random.Random(seed), plies)
    for own, opp in ((board.own, board.opp), (board.opp, board.own)):
        P, O = np.uint64(own), np.uint64(opp)
        moves = int(bb.legal_moves(P, O))
        assert moves == legal_squares(own, opp)
        for sq in range(64):
            if not (own | opp) >> sq & 1:
                assert int(bb.flips(P, O, sq)) == flips(own, opp, sq)


def test_moves_along_every_edge_do_not_wrap_round_the_board():
    # Black discs on the H column next to white discs on the A column of the
    # next row up: a wrapping shift would see a bracket that is not there.
    white = (1 << square(0, 2)) | (1 << square(0, 4))
    black = (1 << square(7, 1)) | (1 << square(7, 3)) | (1 << square(6, 1))
    P, O = np.uint64(white), np.uint64(black)
    assert int(bb.legal_moves(P, O)) == legal_squares(white, black)
    assert [sq for sq in bits(int(bb.legal_moves(O, P)))] == list(bits(legal_squares(black, white)))


def test_popcount_and_first_square():
    for value in (1, 3, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x0102040810204080):
        x = np.uint64(value)
        assert bb.popcount_py(x) == bin(value).count("1")
        assert bb.first_square_py(x) == (value & -value).bit_length() - 1
