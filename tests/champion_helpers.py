"""Shared helpers of the champion's tests: random positions reached by legal play."""

from __future__ import annotations

import random
from typing import Optional

from othello_arena.protocol import Board


def random_position(rng: random.Random, plies: int, board: Optional[Board] = None) -> Board:
    """The position after up to ``plies`` random legal moves (passes included)."""
    board = board or Board()
    for _ in range(plies):
        moves = board.legal_moves()
        if not moves:
            break
        board = board.play(rng.choice(moves))
    return board


def position_with_empties(rng: random.Random, empties: int) -> Board:
    """A random position with about ``empties`` empty squares and a move to make."""
    while True:
        board = random_position(rng, 60 - empties)
        if not board.is_game_over():
            return board
