"""The error hierarchy: bad syntax is kept apart from an illegal move.

Every error is a :class:`ValueError`, and its message quotes the input.
"""

from __future__ import annotations

from typing import Any


class OthelloError(ValueError):
    """Base of every error raised by the protocol package."""


class ParseError(OthelloError):
    """Text that could not be parsed (a move line, a board, a record...)."""


class IllegalMoveError(OthelloError):
    """A move that parsed, but is not legal in the position."""

    def __init__(self, message: str, *, move: Any = None, board: Any = None) -> None:
        super().__init__(message)
        self.move = move
        self.board = board
