"""The rules core and the file protocol of Othello Arena.

This package imports nothing else of the project: the referee, the agents and
the tournaments stand on it.
"""

from .errors import IllegalMoveError, OthelloError, ParseError
from .notation import (
    Comment,
    draw_board,
    format_colour,
    format_comment,
    format_end,
    format_move,
    format_obf,
    format_size,
    format_transcript,
    is_size_line,
    parse_board,
    parse_colour,
    parse_end,
    parse_line,
    parse_message,
    parse_move,
    parse_obf,
    parse_size,
    parse_transcript,
)
from .record import FaultyMove, GameRecord, MoveRecord
from .rules import (
    BLACK,
    BOARD_SIZES,
    DEFAULT_SIZE,
    WHITE,
    Board,
    Colour,
    Move,
    Result,
    Termination,
    bits,
    check_size,
    flips,
    geometry,
    legal_squares,
    parse_square,
    perft,
    popcount,
    square,
    square_name,
)

__all__ = [
    "BLACK", "BOARD_SIZES", "DEFAULT_SIZE", "WHITE", "check_size", "format_size", "geometry", "is_size_line",
    "parse_size", "Board", "Colour", "Comment", "GameRecord", "IllegalMoveError", "Move",
    "FaultyMove", "MoveRecord", "OthelloError", "ParseError", "Result", "Termination", "bits", "draw_board", "flips",
    "format_colour", "format_comment", "format_end", "format_move", "format_obf", "format_transcript",
    "legal_squares", "parse_board", "parse_colour", "parse_end", "parse_line", "parse_message",
    "parse_move", "parse_obf", "parse_square", "parse_transcript", "perft", "popcount", "square",
    "square_name",
]
