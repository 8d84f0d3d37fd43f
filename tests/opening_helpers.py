"""Play the referee's part by hand from an opening (PROTOCOL.md section 8), through real files."""

from __future__ import annotations

import random
from typing import Sequence

from agents_helpers import HandDriver

from othello_arena.protocol import Board, Colour, Move
from othello_arena.protocol.openings import opening_board


def play_from_opening(driver: HandDriver, colour: Colour, opening: Sequence[Move],
                      seed: int = 7) -> list[tuple[Board, Move]]:
    """A whole game: the agent plays ``colour`` after ``opening``, the test seeded random moves.

    The first NAME.in holds the colour and the opening's moves; every move of
    the agent must be legal on the test's own board (``Board.play`` raises
    otherwise).  Returns each position the agent moved in, with its move.
    """
    rng = random.Random(seed)
    board = opening_board(list(opening))
    driver.send(colour.value + "\n" + "".join(move.line() + "\n" for move in opening))
    driver.wait_taken()
    chosen: list[tuple[Board, Move]] = []
    while not board.is_game_over():
        if board.to_move is colour:
            _, move = driver.receive()
            assert move.colour is colour, move
            chosen.append((board, move))
            board = board.play(move)
        else:
            move = rng.choice(board.legal_moves())
            board = board.play(move)
            driver.send(move.line() + "\n")
            if not board.is_game_over():
                driver.wait_taken()
    return chosen
