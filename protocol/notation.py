"""Text formats: move lines, colour and end lines, board drawings, OBF, transcripts.

Every format comes as a parser and a printer.  Printers write one exact form;
parsers are liberal in what they accept from people and other programs.  The
forms are written down in ``PROTOCOL.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Union

from .errors import ParseError
from .rules import (
    BLACK,
    COLUMNS,
    WHITE,
    Board,
    Colour,
    Move,
    Outcome,
    bits,
    parse_square,
    square,
    square_name,
)

# ---------------------------------------------------------------------------
# Move lines: "(W D 3)", "(W P)", comments "(C text)"
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Comment:
    """A ``(C any text)`` line: an agent's note, kept in the record, never a move."""

    text: str

    def line(self) -> str:
        return f"(C {self.text})" if self.text else "(C)"


def format_move(move: Move) -> str:
    """The exact printed form of a move line, with its newline: ``"(W D 3)\\n"``."""
    return move.line() + "\n"


def format_comment(text: str) -> str:
    """A comment line with its newline; line breaks in ``text`` become spaces."""
    return Comment(" ".join(text.split())).line() + "\n"


_MOVE_BODY = re.compile(r"^([WB])(?:P0?|([A-Z])([0-9]*))?$")
_WIDE_OPENING = "\uff08\uff3b\u3010"  # full-width ( and [, and a lenticular bracket
_WIDE_CLOSING = "\uff09\uff3d\u3011"


def parse_line(text: str) -> Union[Move, Comment]:
    """Parse one move or comment line.

    Accepted: any case, spaces and tabs anywhere (or none), CRLF, a trailing
    newline or none; a pass as ``(W)``, ``(W P)`` or ``(W P 0)``; a comment
    as ``(C any text)``.  Anything else raises :class:`ParseError` that
    quotes the text and says what was wrong.

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
        raise ParseError(f"could not parse move line {text!r}: expected a column A-H and a row 1-8 after the colour")
    colour = Colour(match.group(1))
    column, row = match.group(2), match.group(3)
    if column is None:
        return Move.pass_(colour)
    if column not in COLUMNS:
        raise ParseError(f"could not parse move line {text!r}: column {column!r} is not A-H (or P for a pass)")
    if not row:
        raise ParseError(f"could not parse move line {text!r}: no row after column {column}")
    if len(row) != 1 or row not in "12345678":
        raise ParseError(f"could not parse move line {text!r}: row {row!r} is not 1-8")
    return Move(colour, square(COLUMNS.index(column), int(row)))


def parse_move(text: str) -> Move:
    """Parse a move line; a comment is an error here."""
    parsed = parse_line(text)
    if isinstance(parsed, Comment):
        raise ParseError(f"expected a move, got the comment {text.strip()!r}")
    return parsed


def parse_message(text: str) -> tuple[list[Comment], list[Move]]:
    """Split the whole text of a ``name.out`` into its comments and moves.

    Blank lines are skipped; any other line that does not parse raises.
    """
    comments: list[Comment] = []
    moves: list[Move] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        parsed = parse_line(raw)
        (comments if isinstance(parsed, Comment) else moves).append(parsed)  # type: ignore[arg-type]
    return comments, moves


# ---------------------------------------------------------------------------
# Colour line and end line
# ---------------------------------------------------------------------------


def format_colour(colour: Colour) -> str:
    """The first message to an agent: its colour alone on a line, ``"W\\n"``."""
    return colour.value + "\n"


def parse_colour(text: str) -> Colour:
    """Parse a colour line (``W``, ``b``, ``White``...)."""
    return Colour.parse(text)


# "build" is never sent to an agent: the tournament runner gives it to the games of an agent whose
# build failed (it never started), so the record says why the game was lost.
END_REASONS = ("normal", "timeout", "illegal", "malformed", "crash", "build")


def format_end(outcome: Outcome) -> str:
    """The last line the referee sends: ``(END W 40 24 normal)``.

    Winner ``W``/``B`` or ``D`` for a draw, then White's and Black's discs
    and the reason.
    """
    winner = outcome.winner.value if outcome.winner else "D"
    return f"(END {winner} {outcome.white_discs} {outcome.black_discs} {outcome.reason})\n"


_END = re.compile(r"^\(\s*END\s+([WBD])\s+(\d+)\s+(\d+)\s+([a-z]+)\s*\)$", re.IGNORECASE)


def parse_end(text: str) -> Outcome:
    """Parse an end line written by :func:`format_end`."""
    match = _END.match(text.strip())
    if not match or match.group(4).lower() not in END_REASONS:
        raise ParseError(f"not an end line: {text!r} (expected e.g. (END W 40 24 normal))")
    w = match.group(1).upper()
    winner = None if w == "D" else Colour(w)
    return Outcome(winner, match.group(4).lower(), int(match.group(2)), int(match.group(3)))


def is_end_line(text: str) -> bool:
    """Whether a line is an end line (so an agent can stop reading)."""
    return text.strip().upper().startswith("(END")


# ---------------------------------------------------------------------------
# Board drawings
# ---------------------------------------------------------------------------

_CELL = {WHITE: "W", BLACK: "B", None: "."}
_HEADER = "    A B C D E F G H"


def draw_board(board: Board, last_move: Optional[Move] = None) -> str:
    """Draw the board as the referee shows it: row 8 at the top.

    The disc of the last move is drawn in lower case.  The last line says
    whose turn it is, or that the game is over, with the disc counts.
    """
    lines = [_HEADER]
    marked = last_move.square if last_move else None
    for row in range(8, 0, -1):
        cells = []
        for col in range(8):
            sq = square(col, row)
            cell = _CELL[board.at(sq)]
            cells.append(cell.lower() if sq == marked else cell)
        lines.append(f"  {row} {' '.join(cells)} {row}")
    lines.append(_HEADER)
    w, b = board.count(WHITE), board.count(BLACK)
    if board.is_game_over():
        lines.append(f"  W {w}  B {b}  game over")
    else:
        lines.append(f"  W {w}  B {b}  {board.to_move.value} to move")
    return "\n".join(lines) + "\n"


_ROW = re.compile(r"^\s*([1-8])?\s*((?:[WBOX.\-*@][ \t]*){8})\s*([1-8])?\s*$", re.IGNORECASE)
_TO_MOVE = re.compile(r"\b([WB])\s+to\s+move\b|\b(white|black)\s+to\s+move\b", re.IGNORECASE)


def parse_board(text: str, to_move: Optional[Colour] = None) -> Board:
    """Parse a drawing made by :func:`draw_board`, or one typed by a person.

    Eight rows of eight cells, top row first (row 8), optionally labelled
    with row numbers.  ``W``/``O`` is white, ``B``/``X``/``@``/``*`` is black,
    ``.``/``-`` empty; lower case (the last-move mark) is accepted.  The side
    to move comes from a ``W to move`` line, else ``to_move``, else White.
    """
    rows: list[tuple[Optional[int], str]] = []
    for raw in text.splitlines():
        if not raw.strip() or raw.strip().upper().replace(" ", "") == "ABCDEFGH":
            continue
        match = _ROW.match(raw)
        if match:
            label = match.group(1) or match.group(3)
            rows.append((int(label) if label else None, "".join(match.group(2).split())))
    if len(rows) != 8:
        raise ParseError(f"a board drawing needs 8 rows of 8 cells, found {len(rows)} in {text!r}")
    labels = [label for label, _ in rows]
    if all(label is not None for label in labels) and labels != list(range(8, 0, -1)):
        raise ParseError(f"board rows must run from 8 at the top down to 1, found rows {labels}")
    white = black = 0
    for index, (_, cells) in enumerate(rows):
        row = 8 - index
        for col, cell in enumerate(cells.upper()):
            bit = 1 << square(col, row)
            if cell in "WO":
                white |= bit
            elif cell in "BX@*":
                black |= bit
    match = _TO_MOVE.search(text)
    if match:
        side = Colour.parse(match.group(1) or match.group(2))
    else:
        side = to_move or WHITE
    return Board(white, black, side)


# ---------------------------------------------------------------------------
# OBF: one line of 64 cells a1..h8 then the side to move
# ---------------------------------------------------------------------------
# Our games map to standard-orientation games by keeping every square's label
# and swapping the colour names (our White moves first, like the standard
# Black).  OBF is read the same way, so that our start position is the
# standard start position there: our White is OBF's X, our Black is O.


def format_obf(board: Board) -> str:
    """The position as an OBF line: ``"---...--- X;"`` (X is our White)."""
    cells = []
    for sq in range(64):
        colour = board.at(sq)
        cells.append("X" if colour is WHITE else "O" if colour is BLACK else "-")
    return "".join(cells) + " " + ("X" if board.to_move is WHITE else "O") + ";"


def parse_obf(text: str) -> Board:
    """Parse an OBF line (64 cells a1..h8, then the side to move; rest ignored)."""
    line = text.strip()
    if len(line) < 64:
        raise ParseError(f"an OBF line needs 64 cells then the side to move, got {text!r}")
    cells, rest = line[:64], line[64:].strip()
    white = black = 0
    for sq, cell in enumerate(cells.upper()):
        if cell in "X*":
            white |= 1 << sq
        elif cell in "O":
            black |= 1 << sq
        elif cell not in "-.":
            raise ParseError(f"bad OBF cell {cell!r} at {square_name(sq)} in {text!r} (expected X, O or -)")
    side = rest[:1].upper()
    if side in ("X", "*"):
        to_move = WHITE
    elif side == "O":
        to_move = BLACK
    else:
        raise ParseError(f"OBF line {text!r} does not say the side to move (X or O after the 64 cells)")
    return Board(white, black, to_move)


# ---------------------------------------------------------------------------
# Transcripts: "d3c3c4..." (passes implied)
# ---------------------------------------------------------------------------


def format_transcript(moves: Iterable[Move]) -> str:
    """The usual compact transcript, lower case, passes left out: ``"d3c3c4"``."""
    return "".join(square_name(m.square).lower() for m in moves if m.square is not None)


def parse_transcript(text: str, board: Optional[Board] = None) -> list[Move]:
    """Read a transcript (``d3c3``, ``D3 C3``, ``d3-c3``...) into moves, passes inserted.

    Each move is checked against the rules from ``board`` (default: start).
    """
    board = board or Board()
    squares = re.findall(r"[A-Ha-h][1-8]|\S", text)
    moves: list[Move] = []
    for token in squares:
        if token in "-,;":
            continue
        try:
            sq = parse_square(token)
        except ParseError:
            raise ParseError(f"bad square {token!r} in transcript {text!r}") from None
        if not board.has_move() and board.has_move(board.to_move.opponent):
            passing = Move.pass_(board.to_move)
            moves.append(passing)
            board = board.play_unchecked(passing)
        move = Move(board.to_move, sq)
        board = board.play(move)
        moves.append(move)
    return moves


def legal_names(board: Board) -> str:
    """The legal squares of the side to move, as ``"C4 D3 E6 F5"``."""
    return " ".join(square_name(sq) for sq in bits(board.legal_squares()))
