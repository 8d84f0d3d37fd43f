"""The rules of Othello, free of any I/O.

Orientation follows the referee specification (seed 003): columns A-H left to
right, rows 1-8 **bottom to top**.  White starts on D5 and E4, Black on D4 and
E5, and **White moves first**.

Squares are the ints 0-63, ``square = (row - 1) * 8 + column_index``, so A1 is
0, H1 is 7, A8 is 56 and H8 is 63.  A set of squares is a bitboard: a plain
Python int whose bit ``1 << square`` is set for every member.

Everything that needs a rule of the game (the referee, every agent, the
checker, the tournaments) asks this module.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterator, Optional

from .errors import IllegalMoveError, ParseError

# ---------------------------------------------------------------------------
# Colours and squares
# ---------------------------------------------------------------------------


class Colour(str, enum.Enum):
    """A side: ``Colour.WHITE`` ("W", moves first) or ``Colour.BLACK`` ("B")."""

    WHITE = "W"
    BLACK = "B"

    @property
    def opponent(self) -> "Colour":
        """The other side."""
        return Colour.BLACK if self is Colour.WHITE else Colour.WHITE

    @property
    def full_name(self) -> str:
        """``"White"`` or ``"Black"``."""
        return "White" if self is Colour.WHITE else "Black"

    @classmethod
    def parse(cls, text: str) -> "Colour":
        """Read ``W``/``B`` (any case, or the words white/black)."""
        word = text.strip().upper()
        if word in ("W", "WHITE"):
            return cls.WHITE
        if word in ("B", "BLACK"):
            return cls.BLACK
        raise ParseError(f"not a colour: {text!r} (expected W or B)")

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Colour.{self.name}"


WHITE = Colour.WHITE
BLACK = Colour.BLACK

COLUMNS = "ABCDEFGH"
SQUARES = range(64)
SQUARE_NAMES = [f"{COLUMNS[sq % 8]}{sq // 8 + 1}" for sq in SQUARES]


def square(column: int, row: int) -> int:
    """The square at ``column`` 0-7 (A-H) and ``row`` 1-8 (bottom to top)."""
    if not (0 <= column < 8 and 1 <= row <= 8):
        raise ValueError(f"no square at column index {column}, row {row}")
    return (row - 1) * 8 + column


def square_name(sq: int) -> str:
    """The label of a square.

    >>> square_name(0), square_name(19), square_name(63)
    ('A1', 'D3', 'H8')
    """
    return SQUARE_NAMES[sq]


def parse_square(name: str) -> int:
    """The square of a label, in any case; raises :class:`ParseError` on bad input.

    >>> parse_square("d3")
    19
    >>> parse_square("J9")
    Traceback (most recent call last):
    ...
    othello_arena.protocol.errors.ParseError: not a square: 'J9' (expected a column A-H and a row 1-8, like D3)
    """
    text = name.strip().upper()
    if len(text) != 2 or text[0] not in COLUMNS or text[1] not in "12345678":
        raise ParseError(f"not a square: {name!r} (expected a column A-H and a row 1-8, like D3)")
    return square(COLUMNS.index(text[0]), int(text[1]))


def square_column(sq: int) -> int:
    """Column index 0-7 (A-H) of a square."""
    return sq % 8


def square_row(sq: int) -> int:
    """Row 1-8 (bottom to top) of a square."""
    return sq // 8 + 1


def bits(bitboard: int) -> Iterator[int]:
    """The squares of a bitboard, lowest first."""
    while bitboard:
        low = bitboard & -bitboard
        yield low.bit_length() - 1
        bitboard ^= low


def popcount(bitboard: int) -> int:
    """Number of squares in a bitboard."""
    return bin(bitboard).count("1")


# ---------------------------------------------------------------------------
# Bitboard shifts and move generation
# ---------------------------------------------------------------------------

FULL = (1 << 64) - 1
NOT_A = 0xFEFEFEFEFEFEFEFE  # every square but column A
NOT_H = 0x7F7F7F7F7F7F7F7F  # every square but column H

# (shift, mask): a positive shift moves towards H8.  The mask removes the
# squares a shift would reach by wrapping round an edge of the board.
DIRECTIONS = (
    (8, FULL),  # up
    (-8, FULL),  # down
    (1, NOT_A),  # right
    (-1, NOT_H),  # left
    (9, NOT_A),  # up-right
    (7, NOT_H),  # up-left
    (-7, NOT_A),  # down-right
    (-9, NOT_H),  # down-left
)


def shift(bitboard: int, amount: int, mask: int) -> int:
    """Shift every square of ``bitboard`` one step in one direction."""
    if amount > 0:
        return (bitboard << amount) & mask & FULL
    return (bitboard >> -amount) & mask


def legal_squares(own: int, opp: int) -> int:
    """Bitboard of the squares where the side owning ``own`` can play."""
    empty = ~(own | opp) & FULL
    moves = 0
    for amount, mask in DIRECTIONS:
        run = shift(own, amount, mask) & opp
        for _ in range(5):  # a bracketed run is at most six discs long
            run |= shift(run, amount, mask) & opp
        moves |= shift(run, amount, mask) & empty
    return moves


def flips(own: int, opp: int, sq: int) -> int:
    """Bitboard of the opponent discs that a disc on ``sq`` would flip."""
    flipped = 0
    start = 1 << sq
    for amount, mask in DIRECTIONS:
        run = 0
        step = shift(start, amount, mask)
        while step & opp:
            run |= step
            step = shift(step, amount, mask)
        if step & own:
            flipped |= run
    return flipped


# ---------------------------------------------------------------------------
# Moves
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """A move of one colour: a disc on ``square``, or a pass (``square is None``).

    A pass is falsy, like python-chess's null move.  The repr can be pasted
    back as code.

    >>> move = Move.parse("(w d 3)")
    >>> move
    Move.parse('(W D 3)')
    >>> bool(move), bool(Move.pass_(BLACK))
    (True, False)
    >>> Board().play(move).count(WHITE)
    4
    """

    colour: Colour
    square: Optional[int] = None

    @classmethod
    def pass_(cls, colour: Colour) -> "Move":
        """The pass of ``colour``."""
        return cls(colour, None)

    @classmethod
    def parse(cls, line: str) -> "Move":
        """Parse a move line such as ``(W D 3)`` (see :mod:`.notation`)."""
        from .notation import parse_move

        return parse_move(line)

    @property
    def is_pass(self) -> bool:
        return self.square is None

    def __bool__(self) -> bool:
        return self.square is not None

    def line(self) -> str:
        """The move in the referee's notation, without newline: ``(W D 3)``."""
        if self.square is None:
            return f"({self.colour.value} P)"
        col = COLUMNS[self.square % 8]
        return f"({self.colour.value} {col} {self.square // 8 + 1})"

    def __str__(self) -> str:
        return self.line()

    def __repr__(self) -> str:
        return f"Move.parse({self.line()!r})"


# ---------------------------------------------------------------------------
# The board
# ---------------------------------------------------------------------------

START_WHITE = (1 << square(3, 5)) | (1 << square(4, 4))  # D5, E4
START_BLACK = (1 << square(3, 4)) | (1 << square(4, 5))  # D4, E5


@dataclass(frozen=True)
class Outcome:
    """How a game ended: the winner (``None`` for a draw), why, and the discs."""

    winner: Optional[Colour]
    reason: str
    white_discs: int
    black_discs: int

    @property
    def is_draw(self) -> bool:
        return self.winner is None


@dataclass(frozen=True)
class Board:
    """A position: the discs of each side and the side to move.

    Boards are immutable; :meth:`play` returns the next position.
    """

    white: int = START_WHITE
    black: int = START_BLACK
    to_move: Colour = WHITE

    def __post_init__(self) -> None:
        if self.white & self.black:
            raise ValueError("a square holds both a white and a black disc")
        if (self.white | self.black) & ~FULL:
            raise ValueError("bitboards must fit in 64 bits")

    # -- the two sides -----------------------------------------------------

    def discs(self, colour: Colour) -> int:
        """Bitboard of ``colour``'s discs."""
        return self.white if colour is WHITE else self.black

    @property
    def own(self) -> int:
        """Discs of the side to move."""
        return self.discs(self.to_move)

    @property
    def opp(self) -> int:
        """Discs of the side not to move."""
        return self.discs(self.to_move.opponent)

    @property
    def empty(self) -> int:
        return ~(self.white | self.black) & FULL

    def count(self, colour: Colour) -> int:
        """Number of ``colour``'s discs on the board."""
        return popcount(self.discs(colour))

    def at(self, sq: int) -> Optional[Colour]:
        """The colour of the disc on ``sq``, or ``None`` if empty."""
        bit = 1 << sq
        if self.white & bit:
            return WHITE
        if self.black & bit:
            return BLACK
        return None

    # -- moves ---------------------------------------------------------------

    def legal_squares(self, colour: Optional[Colour] = None) -> int:
        """Bitboard of the squares where ``colour`` (default: side to move) can play."""
        colour = colour or self.to_move
        return legal_squares(self.discs(colour), self.discs(colour.opponent))

    def has_move(self, colour: Optional[Colour] = None) -> bool:
        """Whether ``colour`` has a move other than a pass."""
        return self.legal_squares(colour) != 0

    def is_game_over(self) -> bool:
        """Neither side can place a disc (a full board is one case of this)."""
        return not self.has_move(WHITE) and not self.has_move(BLACK)

    def legal_moves(self) -> list[Move]:
        """Legal moves of the side to move: its disc moves, else a lone pass.

        Empty once the game is over.
        """
        squares = self.legal_squares()
        if squares:
            return [Move(self.to_move, sq) for sq in bits(squares)]
        if self.has_move(self.to_move.opponent):
            return [Move.pass_(self.to_move)]
        return []

    def why_illegal(self, move: Move) -> Optional[str]:
        """``None`` if ``move`` is legal here, else a sentence saying why not."""
        if self.is_game_over():
            return "the game is over"
        if move.colour is not self.to_move:
            return f"it is {self.to_move.full_name}'s turn, not {move.colour.full_name}'s"
        legal = self.legal_squares()
        if move.square is None:
            if legal:
                names = " ".join(square_name(sq) for sq in bits(legal))
                return f"a pass is legal only with no other move, and {self.to_move.full_name} can play {names}"
            return None
        name = square_name(move.square)
        if self.at(move.square) is not None:
            return f"{name} is occupied"
        if not legal & (1 << move.square):
            return f"{name} flips no disc"
        return None

    def is_legal(self, move: Move) -> bool:
        return self.why_illegal(move) is None

    def play(self, move: Move) -> "Board":
        """The position after ``move``; raises :class:`IllegalMoveError` if illegal."""
        reason = self.why_illegal(move)
        if reason is not None:
            raise IllegalMoveError(f"illegal move {move.line()}: {reason}", move=move, board=self)
        return self.play_unchecked(move)

    def play_unchecked(self, move: Move) -> "Board":
        """The position after a move already known to be legal."""
        if move.square is None:
            return Board(self.white, self.black, self.to_move.opponent)
        own, opp = self.own, self.opp
        flipped = flips(own, opp, move.square)
        own |= flipped | (1 << move.square)
        opp &= ~flipped
        if self.to_move is WHITE:
            return Board(own, opp, BLACK)
        return Board(opp, own, WHITE)

    # -- the end -------------------------------------------------------------

    def outcome(self) -> Optional[Outcome]:
        """The result if the game is over (most discs wins), else ``None``."""
        if not self.is_game_over():
            return None
        w, b = self.count(WHITE), self.count(BLACK)
        winner = WHITE if w > b else BLACK if b > w else None
        return Outcome(winner, "normal", w, b)

    # -- notation shortcuts ----------------------------------------------------

    def draw(self, last_move: Optional[Move] = None) -> str:
        """The referee's drawing of the board (see :func:`.notation.draw_board`)."""
        from .notation import draw_board

        return draw_board(self, last_move)

    def __str__(self) -> str:
        return self.draw()


def perft(board: Board, depth: int) -> int:
    """Leaves of the game tree ``depth`` plies deep.

    A pass counts as a move and a finished game is a leaf, whatever depth
    remains (the convention of the published Othello perft counts).
    """
    if depth == 0:
        return 1
    own, opp = board.own, board.opp
    return _perft(own, opp, depth)


def _perft(own: int, opp: int, depth: int) -> int:
    moves = legal_squares(own, opp)
    if not moves:
        if not legal_squares(opp, own):
            return 1  # game over: a leaf
        return 1 if depth == 1 else _perft(opp, own, depth - 1)
    if depth == 1:
        return popcount(moves)
    total = 0
    for sq in bits(moves):
        flipped = flips(own, opp, sq)
        total += _perft(opp & ~flipped, own | flipped | (1 << sq), depth - 1)
    return total
