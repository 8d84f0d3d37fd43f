"""Openings: the first moves of a game, given to the agents before they play.

An opening is a list of moves from the start position, checked by the rules.
An *opening file* holds one opening a line, in either form (PROTOCOL.md,
section 8)::

    # a comment line, and blank lines, are skipped
    d3 c5 f6 f5 e6 e3
    (W D 3) (B C 5) (W F 6)

The first form is the usual transcript (squares, passes implied, spaces
optional); the second our move lines, side by side.  :func:`format_opening`
writes the first form.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence, Union

from .errors import IllegalMoveError, ParseError
from .notation import parse_move, parse_transcript
from .rules import Board, Move, square_name

_MOVE_LINE = re.compile(r"\([^()]*\)")


def parse_opening(text: str) -> list[Move]:
    """Read one opening, ``d3 c5 f6`` or ``(W D 3) (B C 5) (W F 6)``, checked from the start position.

    Raises :class:`ParseError` for bad syntax and :class:`IllegalMoveError`
    for a move the rules refuse; both messages quote ``text``.
    """
    text = text.strip()
    if "(" not in text:
        try:
            return parse_transcript(text)
        except IllegalMoveError as exc:
            raise IllegalMoveError(f"opening {text!r}: {exc}") from None
        except ParseError as exc:
            raise ParseError(f"opening {text!r}: {exc}") from None
    leftover = _MOVE_LINE.sub("", text).strip()
    if leftover:
        raise ParseError(f"opening {text!r}: {leftover!r} is not a move line")
    moves = [parse_move(group) for group in _MOVE_LINE.findall(text)]
    opening_board(moves, text)
    return moves


def format_opening(moves: Iterable[Move]) -> str:
    """An opening as squares, lower case, passes left out: ``"d3 c5 f6"``."""
    return " ".join(square_name(m.square).lower() for m in moves if m.square is not None)


def opening_board(moves: Sequence[Move], text: str = "") -> Board:
    """The position after ``moves`` from the start; the game must not be over there.

    Raises :class:`IllegalMoveError` (a move the rules refuse, or an opening
    that ends the game) quoting ``text`` or the moves.
    """
    what = text or format_opening(moves) or "(empty)"
    board = Board()
    for number, move in enumerate(moves, 1):
        try:
            board = board.play(move)
        except IllegalMoveError as exc:
            raise IllegalMoveError(f"opening {what!r}, move {number}: {exc}") from None
    if board.is_game_over():
        raise IllegalMoveError(f"opening {what!r} ends the game: nothing is left to play")
    return board


def parse_openings(text: str, source: str = "openings") -> list[list[Move]]:
    """Read an opening file's text: one opening a line; blank lines and ``#`` comments skipped.

    Errors name ``source`` and the line number.
    """
    openings = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            openings.append(parse_opening(line))
        except (ParseError, IllegalMoveError) as exc:
            raise type(exc)(f"{source}, line {number}: {exc}") from None
    return openings


BALANCED = "balanced"  # the name of the suite shipped with the package


def suite_path(value: str, base: Optional[Path] = None) -> Path:
    """The opening file ``value`` names: ``"balanced"`` is the shipped suite, else a path (relative to ``base``)."""
    if value.strip().lower() == BALANCED:
        return Path(__file__).resolve().parent / "data" / "balanced.txt"
    path = Path(value).expanduser()
    return path if path.is_absolute() or base is None else base / path


def read_openings(path: Union[str, Path]) -> list[list[Move]]:
    """Read an opening file (:func:`parse_openings`)."""
    path = Path(path)
    return parse_openings(path.read_text(encoding="utf-8-sig"), str(path))


def format_openings(openings: Iterable[Sequence[Move]]) -> str:
    """An opening file: one opening a line as squares (:func:`format_opening`)."""
    return "".join(format_opening(moves) + "\n" for moves in openings)


# The eight symmetries of the square board, as (column, row) -> (column, row) with 0-7 each.
_SYMMETRIES: tuple[Callable[[int, int], tuple[int, int]], ...] = (
    lambda c, r: (c, r), lambda c, r: (7 - c, r), lambda c, r: (c, 7 - r), lambda c, r: (7 - c, 7 - r),
    lambda c, r: (r, c), lambda c, r: (7 - r, c), lambda c, r: (r, 7 - c), lambda c, r: (7 - r, 7 - c),
)
_PERMUTATIONS = tuple(
    tuple(to[0] + 8 * to[1] for to in (f(sq % 8, sq // 8) for sq in range(64))) for f in _SYMMETRIES
)


def _mapped(bitboard: int, permutation: tuple[int, ...]) -> int:
    out = 0
    while bitboard:
        low = bitboard & -bitboard
        out |= 1 << permutation[low.bit_length() - 1]
        bitboard ^= low
    return out


def symmetric_boards(board: Board) -> list[Board]:
    """The board under each of the eight symmetries of the square (rotations and reflections)."""
    return [Board(_mapped(board.white, p), _mapped(board.black, p), board.to_move) for p in _PERMUTATIONS]


def canonical_key(board: Board) -> tuple[int, int, str]:
    """The same key for a position and its mirror images: two openings with one key are the same opening."""
    return min((b.white, b.black, b.to_move.value) for b in symmetric_boards(board))


__all__ = ["BALANCED", "suite_path", "canonical_key", "symmetric_boards", "format_opening", "format_openings", "opening_board", "parse_opening", "parse_openings", "read_openings"]
