"""The rules of Othello, free of any I/O.

Orientation follows the referee specification (seed 003): columns A-H left to
right, rows 1-8 **bottom to top**.  White starts on D5 and E4, Black on D4 and
E5, and **White moves first**.

Squares are the ints 0-63, ``square = (row - 1) * 8 + column_index``, so A1 is
0, H1 is 7, A8 is 56 and H8 is 63.  A set of squares is a bitboard: a plain
Python int whose bit ``1 << square`` is set for every member.

The board sizes of seed 002 (8, 10, 12 and 14) follow the same pattern with
the size ``n`` in place of 8: ``square = (row - 1) * n + column_index``,
columns A-N, rows 1-14, the four start discs in the middle.  The size is a
property of the :class:`Board` and of each :class:`Move`; everything that
depends on it (masks, shifts, names) is one :class:`Geometry` per size,
made once.  The 8x8 geometry keeps its hand-written move generator.

Everything that needs a rule of the game (the referee, every agent, the
checker, the tournaments) asks this module.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Union

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

BOARD_SIZES = (8, 10, 12, 14)  # seed 002's sizes; 8 is the protocol's board (PROTOCOL.md section 9)
DEFAULT_SIZE = 8
COLUMN_LETTERS = "ABCDEFGHIJKLMN"  # enough for the largest board
COLUMNS = COLUMN_LETTERS[:8]
SQUARES = range(64)
SQUARE_NAMES = [f"{COLUMNS[sq % 8]}{sq // 8 + 1}" for sq in SQUARES]


def check_size(size: int) -> int:
    """Return ``size`` if it is a board size of the arena (8, 10, 12, 14), else raise ValueError naming it."""
    if isinstance(size, bool) or not isinstance(size, int) or size not in BOARD_SIZES:
        raise ValueError(f"board size {size!r} is not one of {', '.join(map(str, BOARD_SIZES))}")
    return size


def _span(size: int) -> str:
    """``A-H and a row 1-8``: the columns and rows of a board, for messages."""
    return f"a column A-{COLUMN_LETTERS[size - 1]} and a row 1-{size}"


def square(column: int, row: int, size: int = DEFAULT_SIZE) -> int:
    """The square at ``column`` 0..size-1 (A...) and ``row`` 1..size (bottom to top)."""
    if not (0 <= column < size and 1 <= row <= size):
        raise ValueError(f"no square at column index {column}, row {row} on a {size}x{size} board")
    return (row - 1) * size + column


def square_name(sq: int, size: int = DEFAULT_SIZE) -> str:
    """The label of a square.

    >>> square_name(0), square_name(19), square_name(63)
    ('A1', 'D3', 'H8')
    >>> square_name(195, size=14)
    'N14'
    """
    if size == DEFAULT_SIZE:
        return SQUARE_NAMES[sq]
    return geometry(size).names[sq]


def parse_square(name: str, size: int = DEFAULT_SIZE) -> int:
    """The square of a label, in any case; raises :class:`ParseError` on bad input.

    >>> parse_square("d3")
    19
    >>> parse_square("j10", size=10)
    99
    >>> parse_square("J9")
    Traceback (most recent call last):
    ...
    othello_arena.protocol.errors.ParseError: not a square: 'J9' (expected a column A-H and a row 1-8, like D3)
    """
    text = name.strip().upper()
    column, row = text[:1], text[1:]
    if (not column or column not in COLUMN_LETTERS[:size] or not row.isdigit() or row.startswith("0")
            or not 1 <= int(row) <= size or len(row) > 2):
        raise ParseError(f"not a square: {name!r} (expected {_span(size)}, like D3)")
    return square(COLUMN_LETTERS.index(column), int(row), size)


def bits(bitboard: int) -> Iterator[int]:
    """The squares of a bitboard, lowest first."""
    while bitboard:
        low = bitboard & -bitboard
        yield low.bit_length() - 1
        bitboard ^= low


def popcount(bitboard: int) -> int:
    """Number of squares in a bitboard (the compiled engine has its own: ``champion.bitboard.popcount``)."""
    return bitboard.bit_count()


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


class Geometry:
    """Everything about a board that depends on its size: masks, shifts, names, the start discs.

    One per size, made on first use (:func:`geometry`).  The 8x8 geometry
    uses the module's own :func:`legal_squares` and :func:`flips`; the
    others the same algorithm with the size's shifts and masks.
    """

    def __init__(self, size: int) -> None:
        n = self.size = check_size(size)
        self.cells = n * n
        self.full = (1 << self.cells) - 1
        first_column = sum(1 << (row * n) for row in range(n))
        not_first = self.full & ~first_column  # every square but column A
        not_last = self.full & ~(first_column << (n - 1))  # every square but the last column
        self.directions: tuple[tuple[int, int], ...] = (
            (n, self.full), (-n, self.full), (1, not_first), (-1, not_last),
            (n + 1, not_first), (n - 1, not_last), (-(n - 1), not_first), (-(n + 1), not_last),
        )
        self.names = tuple(f"{COLUMN_LETTERS[sq % n]}{sq // n + 1}" for sq in range(self.cells))
        middle = n // 2
        self.start_white = (1 << square(middle - 1, middle + 1, n)) | (1 << square(middle, middle, n))
        self.start_black = (1 << square(middle - 1, middle, n)) | (1 << square(middle, middle + 1, n))
        self.header = "    " + " ".join(COLUMN_LETTERS[:n])
        self.legal_squares: Callable[[int, int], int]
        self.flips: Callable[[int, int, int], int]
        if n == DEFAULT_SIZE:
            self.legal_squares = legal_squares
            self.flips = flips
        else:
            self.legal_squares = self._legal_squares
            self.flips = self._flips

    def _legal_squares(self, own: int, opp: int) -> int:
        full = self.full
        empty = ~(own | opp) & full
        moves = 0
        steps = range(self.size - 3)  # a bracketed run is at most size - 2 discs long
        for amount, mask in self.directions:
            if amount > 0:
                run = (own << amount) & mask & full & opp
                for _ in steps:
                    run |= (run << amount) & mask & full & opp
                moves |= (run << amount) & mask & full & empty
            else:
                back = -amount
                run = (own >> back) & mask & opp
                for _ in steps:
                    run |= (run >> back) & mask & opp
                moves |= (run >> back) & mask & empty
        return moves

    def _flips(self, own: int, opp: int, sq: int) -> int:
        full = self.full
        flipped = 0
        start = 1 << sq
        for amount, mask in self.directions:
            run = 0
            step = (start << amount) & mask & full if amount > 0 else (start >> -amount) & mask
            while step & opp:
                run |= step
                step = (step << amount) & mask & full if amount > 0 else (step >> -amount) & mask
            if step & own:
                flipped |= run
        return flipped

    def __repr__(self) -> str:
        return f"geometry({self.size})"


_GEOMETRIES: dict[int, Geometry] = {}


def geometry(size: int = DEFAULT_SIZE) -> Geometry:
    """The :class:`Geometry` of a board size (8, 10, 12 or 14), made once; ValueError for another size."""
    found = _GEOMETRIES.get(size)
    if found is None:
        found = _GEOMETRIES[size] = Geometry(size)
    return found


# ---------------------------------------------------------------------------
# Moves
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """A move of one colour: a disc on ``square``, or a pass (``square is None``).

    A pass is falsy, like python-chess's null move.  The repr can be pasted
    back as code.  ``size`` is the size of the board the square belongs to
    (the square's number depends on it); 8 unless said.

    >>> move = Move.parse("(w d 3)")
    >>> move
    Move.parse('(W D 3)')
    >>> bool(move), bool(Move.pass_(BLACK))
    (True, False)
    >>> Board().play(move).count(WHITE)
    4
    >>> Move.parse("(b n 14)", size=14)
    Move.parse('(B N 14)', size=14)
    """

    colour: Colour
    square: Optional[int] = None
    size: int = DEFAULT_SIZE

    @classmethod
    def pass_(cls, colour: Colour, size: int = DEFAULT_SIZE) -> "Move":
        """The pass of ``colour``."""
        return cls(colour, None, size)

    @classmethod
    def parse(cls, line: str, size: int = DEFAULT_SIZE) -> "Move":
        """Parse a move line such as ``(W D 3)``; a comment line is an error here (see :func:`parse_line`)."""
        parsed = parse_line(line, size)
        if isinstance(parsed, Comment):
            raise ParseError(f"expected a move, got the comment {line.strip()!r}")
        return parsed

    @property
    def is_pass(self) -> bool:
        return self.square is None

    def __bool__(self) -> bool:
        return self.square is not None

    def line(self) -> str:
        """The move in the referee's notation, without newline: ``(W D 3)``."""
        if self.square is None:
            return f"({self.colour.value} P)"
        n = self.size
        return f"({self.colour.value} {COLUMN_LETTERS[self.square % n]} {self.square // n + 1})"

    def __str__(self) -> str:
        return self.line()

    def __repr__(self) -> str:
        if self.size == DEFAULT_SIZE:
            return f"Move.parse({self.line()!r})"
        return f"Move.parse({self.line()!r}, size={self.size})"


# ---------------------------------------------------------------------------
# Move lines: "(W D 3)", "(W P)", comments "(C text)"
# ---------------------------------------------------------------------------
# The parser lives beside Move.line(), the printer, so that the pair is one
# place and notation.py (every other text format) can stand on this module.


@dataclass(frozen=True)
class Comment:
    """A ``(C any text)`` line: an agent's note, kept in the record, never a move."""

    text: str

    def line(self) -> str:
        return f"(C {self.text})" if self.text else "(C)"


_MOVE_BODY = re.compile(r"^([WB])(?:P0?|([A-Z])([0-9]*))?$")
_WIDE_OPENING = "\uff08\uff3b\u3010"  # full-width ( and [, and a lenticular bracket
_WIDE_CLOSING = "\uff09\uff3d\u3011"


def parse_line(text: str, size: int = DEFAULT_SIZE) -> Union[Move, Comment]:
    """Parse one move or comment line of a ``size`` x ``size`` board (8 unless said).

    Accepted: any case, spaces and tabs anywhere (or none), CRLF, a trailing
    newline or none; a pass as ``(W)``, ``(W P)`` or ``(W P 0)``; a comment
    as ``(C any text)``.  Anything else raises :class:`ParseError` that
    quotes the text and says what was wrong.  On a bigger board the columns
    run to N and the rows to 14: ``(B N 14)``.

    >>> parse_line(" ( b  c3 ) ")
    Move.parse('(B C 3)')
    >>> parse_line("(W P 0)")
    Move.parse('(W P)')
    >>> parse_line("(C depth 9)")
    Comment(text='depth 9')
    >>> parse_line("(W D 9)")
    Traceback (most recent call last):
    ...
    othello_arena.protocol.errors.ParseError: could not parse move line '(W D 9)': row '9' is not 1-8
    """
    stripped = text.strip()
    if not stripped:
        raise ParseError(f"empty move line {text!r}: expected a move such as (W D 3)")
    if stripped[:1] in _WIDE_OPENING or stripped[-1:] in _WIDE_CLOSING:
        # an input method for Chinese or Japanese types these: they look like brackets but are not
        raise ParseError(f"could not parse move line {text!r}: full-width brackets; use the ASCII ( and )")
    if not stripped.startswith("("):
        bare = _MOVE_BODY.match("".join(stripped.split()).upper())
        hint = f": a move without its brackets? write ({stripped})" if bare else ""
        raise ParseError(f"could not parse move line {text!r}: it must start with '('{hint}")
    if not stripped.endswith(")"):
        raise ParseError(f"could not parse move line {text!r}: it must end with ')'")
    inner = stripped[1:-1].strip()
    if inner[:1] in ("C", "c") and (len(inner) == 1 or inner[1] in " \t"):
        return Comment(inner[1:].strip())  # a comment may hold any text, brackets too
    if "(" in inner or ")" in inner:
        raise ParseError(f"could not parse move line {text!r}: one move per line, in one pair of parentheses")
    body = "".join(inner.split()).upper()
    if not body:
        raise ParseError(f"could not parse move line {text!r}: no colour between the parentheses")
    if body[0] not in "WB":
        raise ParseError(f"could not parse move line {text!r}: colour {inner.split()[0]!r} is not W or B")
    match = _MOVE_BODY.match(body)
    if not match:
        rest = body[1:]
        if rest[:1] == "P":
            raise ParseError(f"could not parse move line {text!r}: a pass is written (W P)")
        raise ParseError(f"could not parse move line {text!r}: expected {_span(size)} after the colour")
    colour = Colour(match.group(1))
    column, row = match.group(2), match.group(3)
    if column is None:
        return Move.pass_(colour, size)
    if column not in COLUMN_LETTERS[:size]:
        last = COLUMN_LETTERS[size - 1]
        raise ParseError(f"could not parse move line {text!r}: column {column!r} is not A-{last} (or P for a pass)")
    if not row:
        raise ParseError(f"could not parse move line {text!r}: no row after column {column}")
    if len(row) > 2 or row.startswith("0") or not 1 <= int(row) <= size:
        raise ParseError(f"could not parse move line {text!r}: row {row!r} is not 1-{size}")
    return Move(colour, square(COLUMN_LETTERS.index(column), int(row), size), size)


# ---------------------------------------------------------------------------
# The end of a game
# ---------------------------------------------------------------------------


class Termination(str, enum.Enum):
    """How a game ended: python-chess's ``Termination``, fastchess's ``MatchTermination``.

    Every way but ``NORMAL`` is a forfeit: the side at fault loses, whatever
    the discs on the board.  ``BUILD`` is never sent to an agent: the
    tournament runner gives it to the games of an agent whose build failed
    (it never started), so the record says why the game was lost.  The
    values are the words the end line, ``game.json`` and the database hold.
    """

    NORMAL = "normal"  # neither side can place a disc: most discs wins
    TIMEOUT = "timeout"  # no complete move within the time per move and its grace
    ILLEGAL = "illegal"  # a move the rules refuse
    MALFORMED = "malformed"  # a NAME.out that is not a move line
    CRASH = "crash"  # the program exited, could not start, or broke the protocol's files
    BUILD = "build"  # its build command failed or timed out: it never played

    @classmethod
    def parse(cls, word: str) -> "Termination":
        """The termination named ``word`` (``"timeout"``); ``ValueError`` for an unknown word."""
        try:
            return cls(word)
        except ValueError:
            known = ", ".join(t.value for t in cls)
            raise ValueError(f"unknown result reason {word!r}; expected one of {known}") from None

    @property
    def is_forfeit(self) -> bool:
        """Whether the game was lost on a fault rather than on the board."""
        return self is not Termination.NORMAL

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Termination.{self.name}"


# How each forfeit reads, said before the discs: with a fault the winner may
# well have fewer discs on the board ("White wins 13-36 (timeout)" puzzled people).
_LOSES = {
    Termination.TIMEOUT: "loses on time",
    Termination.ILLEGAL: "loses by an illegal move",
    Termination.MALFORMED: "loses by a malformed move",
    Termination.CRASH: "loses: its program crashed",
    Termination.BUILD: "loses: its build failed",
}


@dataclass(frozen=True)
class Result:
    """The end of a game, one value from the referee to the report.

    The winner (``None`` for a draw), how the game ended, both sides' discs
    as the board stood, and a sentence for people (``detail``: what the
    faulty agent did); a fault also says at which move it happened
    (``move_number``, 1-based, counted as in the record's moves: the move the
    referee was waiting for).  The referee makes it, ``game.json`` and the end line
    carry it, the tournament store keeps it, the standings count it.

    >>> result = Result(BLACK, Termination.TIMEOUT, 13, 36)
    >>> result.points(BLACK), result.loser
    (1.0, Colour.WHITE)
    >>> result.summary()
    '0-1 White loses on time (13-36 on the board)'
    """

    winner: Optional[Colour]
    termination: Termination
    white_discs: int
    black_discs: int
    detail: str = ""
    move_number: Optional[int] = None

    def __post_init__(self) -> None:
        # Termination is a str: a word ("timeout") given in its place becomes its member, an unknown word is refused.
        object.__setattr__(self, "termination", Termination.parse(self.termination))

    @property
    def is_draw(self) -> bool:
        return self.winner is None

    @property
    def loser(self) -> Optional[Colour]:
        """The side that lost, ``None`` for a draw."""
        return None if self.winner is None else self.winner.opponent

    def discs(self, colour: Colour) -> int:
        """``colour``'s discs on the board at the end."""
        return self.white_discs if colour is WHITE else self.black_discs

    def points(self, colour: Colour) -> float:
        """What the game scores for ``colour``: 1 a win, 1/2 a draw, 0 a loss."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner is colour else 0.0

    def score(self) -> str:
        """``1-0``, ``0-1`` or ``1/2-1/2`` (White's points first, as in chess)."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner is WHITE else "0-1"

    def summary(self, white: str = "White", black: str = "Black") -> str:
        """The result in words for people, how it ended before the discs; the one summary text.

        ``white`` and ``black`` name the sides (default: the colours).

        >>> Result(WHITE, Termination.NORMAL, 40, 24).summary()
        '1-0 White wins 40-24'
        >>> Result(WHITE, Termination.CRASH, 3, 2).summary("alice", "bob")
        '1-0 bob loses: its program crashed (3-2 on the board)'
        >>> Result(None, Termination.BUILD, 2, 2).summary()
        '1/2-1/2 Draw: neither build succeeded'
        """
        discs = f"{self.white_discs}-{self.black_discs}"
        names = {WHITE: white, BLACK: black}
        if self.winner is None:
            if self.termination is Termination.BUILD:
                return f"{self.score()} Draw: neither build succeeded"
            how = "" if self.termination is Termination.NORMAL else f" ({self.termination})"
            return f"{self.score()} Draw {discs}{how}"
        if self.termination is Termination.NORMAL:
            return f"{self.score()} {names[self.winner]} wins {discs}"
        words = f"{self.score()} {names[self.winner.opponent]} {_LOSES[self.termination]}"
        if self.termination is Termination.BUILD:
            return words  # it never played: the board is the start position
        return f"{words} ({discs} on the board)"


# ---------------------------------------------------------------------------
# The board
# ---------------------------------------------------------------------------

START_WHITE = (1 << square(3, 5)) | (1 << square(4, 4))  # D5, E4
START_BLACK = (1 << square(3, 4)) | (1 << square(4, 5))  # D4, E5


@dataclass(frozen=True)
class Board:
    """A position: the discs of each side, the side to move, and the board's size.

    Boards are immutable; :meth:`play` returns the next position.  The
    default discs are the start position of the board's size:
    ``Board(size=10)`` is the start of a 10x10 game (also ``Board.start(10)``).
    """

    white: int = START_WHITE
    black: int = START_BLACK
    to_move: Colour = WHITE
    size: int = DEFAULT_SIZE

    def __post_init__(self) -> None:
        if self.size != DEFAULT_SIZE:
            shape = geometry(self.size)  # ValueError for a size that is not one of BOARD_SIZES
            if self.white == START_WHITE and self.black == START_BLACK:
                object.__setattr__(self, "white", shape.start_white)
                object.__setattr__(self, "black", shape.start_black)
            full = shape.full
        else:
            full = FULL
        if self.white & self.black:
            raise ValueError("a square holds both a white and a black disc")
        if (self.white | self.black) & ~full:
            raise ValueError(f"bitboards must fit in {self.size * self.size} bits on a {self.size}x{self.size} board")

    @classmethod
    def start(cls, size: int = DEFAULT_SIZE) -> "Board":
        """The start position of a ``size`` x ``size`` game: four discs in the middle, White to move."""
        return cls(size=size)

    @property
    def geometry(self) -> Geometry:
        """The masks, shifts and names of this board's size."""
        return geometry(self.size)

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
        return ~(self.white | self.black) & geometry(self.size).full

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

    def square_name(self, sq: int) -> str:
        """The label of ``sq`` on this board (``N14`` on a 14x14 board)."""
        return square_name(sq, self.size)

    # -- moves ---------------------------------------------------------------

    def legal_squares(self, colour: Optional[Colour] = None) -> int:
        """Bitboard of the squares where ``colour`` (default: side to move) can play."""
        colour = colour or self.to_move
        own, opp = self.discs(colour), self.discs(colour.opponent)
        if self.size == DEFAULT_SIZE:
            return legal_squares(own, opp)
        return geometry(self.size).legal_squares(own, opp)

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
            return [Move(self.to_move, sq, self.size) for sq in bits(squares)]
        if self.has_move(self.to_move.opponent):
            return [Move.pass_(self.to_move, self.size)]
        return []

    def why_illegal(self, move: Move) -> Optional[str]:
        """``None`` if ``move`` is legal here, else a sentence saying why not."""
        if move.size != self.size:
            return f"the move is for a board of size {move.size}, and this board is {self.size}x{self.size}"
        if self.is_game_over():
            return "the game is over"
        if move.colour is not self.to_move:
            return f"it is {self.to_move.full_name}'s turn, not {move.colour.full_name}'s"
        legal = self.legal_squares()
        if move.square is None:
            if legal:
                names = " ".join(self.square_name(sq) for sq in bits(legal))
                return f"a pass is legal only with no other move, and {self.to_move.full_name} can play {names}"
            return None
        name = self.square_name(move.square)
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
            return Board(self.white, self.black, self.to_move.opponent, self.size)
        own, opp = self.own, self.opp
        if self.size == DEFAULT_SIZE:
            flipped = flips(own, opp, move.square)
        else:
            flipped = geometry(self.size).flips(own, opp, move.square)
        own |= flipped | (1 << move.square)
        opp &= ~flipped
        if self.to_move is WHITE:
            return Board(own, opp, BLACK, self.size)
        return Board(opp, own, WHITE, self.size)

    # -- the end -------------------------------------------------------------

    def outcome(self) -> Optional["Result"]:
        """The result if the game is over (most discs wins), else ``None``."""
        if not self.is_game_over():
            return None
        w, b = self.count(WHITE), self.count(BLACK)
        winner = WHITE if w > b else BLACK if b > w else None
        return Result(winner, Termination.NORMAL, w, b)

    # -- drawing -------------------------------------------------------------

    def draw(self, last_move: Optional[Move] = None) -> str:
        """The referee's drawing of the board (see :func:`draw_board`)."""
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
    if board.size != DEFAULT_SIZE:
        shape = geometry(board.size)
        return _perft_sized(own, opp, depth, shape.legal_squares, shape.flips)
    return _perft(own, opp, depth)


def _perft_sized(own: int, opp: int, depth: int, legal: Callable[[int, int], int],
                 flip: Callable[[int, int, int], int]) -> int:
    # _perft for any size, with the size's move generator passed in (8x8 keeps its own, a little faster)
    moves = legal(own, opp)
    if not moves:
        if not legal(opp, own):
            return 1
        return 1 if depth == 1 else _perft_sized(opp, own, depth - 1, legal, flip)
    if depth == 1:
        return popcount(moves)
    total = 0
    for sq in bits(moves):
        flipped = flip(own, opp, sq)
        total += _perft_sized(opp & ~flipped, own | flipped | (1 << sq), depth - 1, legal, flip)
    return total


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


# ---------------------------------------------------------------------------
# Drawing a board
# ---------------------------------------------------------------------------

_CELL = {WHITE: "W", BLACK: "B", None: "."}


def draw_board(board: Board, last_move: Optional[Move] = None) -> str:
    """Draw the board as the referee shows it: the top row (8 on 8x8) first.

    The disc of the last move is drawn in lower case.  The last line says
    whose turn it is, or that the game is over, with the disc counts.
    Row labels take two places on a 10x10 board and bigger.
    """
    n = board.size
    header = geometry(n).header
    lines = [header]
    marked = last_move.square if last_move else None
    for row in range(n, 0, -1):
        cells = []
        for col in range(n):
            sq = square(col, row, n)
            cell = _CELL[board.at(sq)]
            cells.append(cell.lower() if sq == marked else cell)
        lines.append(f"{row:>3} {' '.join(cells)} {row}")
    lines.append(header)
    w, b = board.count(WHITE), board.count(BLACK)
    if board.is_game_over():
        lines.append(f"  W {w}  B {b}  game over")
    else:
        lines.append(f"  W {w}  B {b}  {board.to_move.value} to move")
    return "\n".join(lines) + "\n"
