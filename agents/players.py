"""The players of the seeds, PAIP style: small functions and strategy factories.

A strategy is ``(board, colour, time_left) -> move`` (see :mod:`.runtime`).
"""

from __future__ import annotations

import random as _random
from typing import Optional

from ..protocol import Board, Colour, Move
from .runtime import Strategy


def random_strategy(seed: Optional[int] = None) -> Strategy:
    """PAIP's ``random_strategy``: any legal move, uniformly at random."""
    rng = _random.Random(seed)

    def strategy(board: Board, colour: Colour, time_left: float) -> Move:
        return rng.choice(board.legal_moves())

    return strategy
