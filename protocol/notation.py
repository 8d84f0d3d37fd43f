"""Text formats: move lines, colour and end lines, board drawings, OBF, transcripts.

Every format comes as a parser and a printer.  Printers write one exact form;
parsers are liberal in what they accept from people and other programs.  The
forms are written down in ``PROTOCOL.md``.
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple, Optional

from .errors import ParseError
from .rules import (
    BLACK,
    WHITE,
    Board,
    Colour,
    Comment,
    Move,
    Result,
    Termination,
    DEFAULT_SIZE,
    BOARD_SIZES,
    bits,
    check_size,
    draw_board,
    parse_line,
    parse_square,
    square,
    square_name,
)

# parse_line, Comment and draw_board live in rules.py (beside Move and Board);
# they are part of this module's formats and are imported from here as well.
__all__ = [
    "Comment", "Drawing", "draw_board", "find_drawings", "format_cells", "format_colour", "format_comment", "format_end", "format_move",
    "format_obf", "format_size", "format_transcript", "is_end_line", "is_size_line", "legal_names", "parse_board",
    "parse_cells", "parse_colour", "parse_end", "parse_line", "parse_message", "parse_move", "parse_obf",
    "parse_size", "parse_transcript", "format_clock_line", "is_clock_line", "parse_clock_line",
]

# ---------------------------------------------------------------------------
# Move lines: "(W D 3)", "(W P)", comments "(C text)"
# ---------------------------------------------------------------------------


def format_move(move: Move) -> str:
    """The exact printed form of a move line, with its newline: ``"(W D 3)\\n"``."""
    return move.line() + "\n"


def format_comment(text: str) -> str:
    """A comment line with its newline; line breaks in ``text`` become spaces."""
    return Comment(" ".join(text.split())).line() + "\n"


def parse_move(text: str, size: int = DEFAULT_SIZE) -> Move:
    """Parse a move line (of a ``size`` x ``size`` board); a comment is an error here."""
    return Move.parse(text, size)


def parse_message(text: str, size: int = DEFAULT_SIZE) -> tuple[list[Comment], list[Move]]:
    """Split the whole text of a ``name.out`` into its comments and moves.

    Blank lines are skipped; any other line that does not parse raises.
    """
    comments: list[Comment] = []
    moves: list[Move] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        parsed = parse_line(raw, size)
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


# The size line (PROTOCOL.md section 9): after the colour in the first NAME.in of a game on a board that is not 8x8.
_SIZE_LINE = re.compile(r"^\(\s*SIZE\s+(\d+)\s*\)$", re.IGNORECASE)


def format_size(size: int) -> str:
    """The size line of a game on a bigger board, with its newline: ``"(SIZE 10)\\n"``."""
    return f"(SIZE {check_size(size)})\n"


def is_size_line(text: str) -> bool:
    """Whether a line is a size line (an agent that plays bigger boards reads it after its colour)."""
    return text.strip().upper().replace(" ", "").startswith("(SIZE")


def parse_size(text: str) -> int:
    """Parse a size line written by :func:`format_size`.

    >>> parse_size("(size 12)")
    12
    >>> parse_size("(SIZE 9)")
    Traceback (most recent call last):
    ...
    othello_arena.protocol.errors.ParseError: not a size line: '(SIZE 9)' (expected (SIZE n) with n one of 10, 12, 14)
    """
    match = _SIZE_LINE.match(text.strip())
    if not match or int(match.group(1)) not in BOARD_SIZES or int(match.group(1)) == DEFAULT_SIZE:
        others = ", ".join(str(n) for n in BOARD_SIZES if n != DEFAULT_SIZE)
        raise ParseError(f"not a size line: {text!r} (expected (SIZE n) with n one of {others})")
    return int(match.group(1))


# The clock line (PROTOCOL.md section 10): the last line of each NAME.in that asks a clock-reading agent for a move.
_CLOCK_LINE = re.compile(r"^\(\s*CLOCK\s+(\d+(?:\.\d*)?)\s*\)$", re.IGNORECASE)


def format_clock_line(bank: float) -> str:
    """The clock line with its newline: the seconds left in the agent's bank, ``"(CLOCK 12.345)\\n"``."""
    return f"(CLOCK {max(0.0, bank):.3f})\n"


def is_clock_line(text: str) -> bool:
    """Whether a line is a clock line (an agent that declared ``clock:`` reads it)."""
    return text.strip().upper().replace(" ", "").startswith("(CLOCK")


def parse_clock_line(text: str) -> float:
    """The bank of a clock line written by :func:`format_clock_line`.

    >>> parse_clock_line("(CLOCK 12.345)"), parse_clock_line("(clock 3)")
    (12.345, 3.0)
    >>> parse_clock_line("(CLOCK -1)")
    Traceback (most recent call last):
    ...
    othello_arena.protocol.errors.ParseError: not a clock line: '(CLOCK -1)' (expected (CLOCK seconds), e.g. (CLOCK 12.345))
    """
    match = _CLOCK_LINE.match(text.strip())
    if not match:
        raise ParseError(f"not a clock line: {text!r} (expected (CLOCK seconds), e.g. (CLOCK 12.345))")
    return float(match.group(1))


def format_end(result: Result) -> str:
    """The last line the referee sends: ``(END W 40 24 normal)``.

    Winner ``W``/``B`` or ``D`` for a draw, then White's and Black's discs
    and how the game ended (the result's detail is not sent).
    """
    winner = result.winner.value if result.winner else "D"
    return f"(END {winner} {result.white_discs} {result.black_discs} {result.termination.value})\n"


_END = re.compile(r"^\(\s*END\s+([WBD])\s+(\d+)\s+(\d+)\s+([a-z]+)\s*\)$", re.IGNORECASE)


def parse_end(text: str) -> Result:
    """Parse an end line written by :func:`format_end`.

    >>> parse_end("(END B 24 40 timeout)")
    Result(winner=Colour.BLACK, termination=Termination.TIMEOUT, white_discs=24, black_discs=40, detail='', move_number=None)
    >>> format_end(parse_end("(end d 32 32 normal)"))
    '(END D 32 32 normal)\\n'
    """
    match = _END.match(text.strip())
    if not match or match.group(4).lower() not in {t.value for t in Termination}:
        raise ParseError(f"not an end line: {text!r} (expected e.g. (END W 40 24 normal))")
    w = match.group(1).upper()
    winner = None if w == "D" else Colour(w)
    return Result(winner, Termination(match.group(4).lower()), int(match.group(2)), int(match.group(3)))


def is_end_line(text: str) -> bool:
    """Whether a line is an end line (so an agent can stop reading)."""
    return text.strip().upper().startswith("(END")


# ---------------------------------------------------------------------------
# Board drawings
# ---------------------------------------------------------------------------

_ROW = re.compile(r"^\s*(\d{1,2})?\s*((?:[WBOX.\-*@][ \t]*){8,14})\s*(\d{1,2})?\s*$", re.IGNORECASE)
_TO_MOVE = re.compile(r"\b([WB])\s+to\s+move\b|\b(white|black)\s+to\s+move\b", re.IGNORECASE)


def parse_board(text: str, to_move: Optional[Colour] = None) -> Board:
    """Parse a drawing made by :func:`draw_board`, or one typed by a person.

    Eight rows of eight cells, top row first (row 8), optionally labelled
    with row numbers (or n rows of n cells for a bigger board: the size is
    the number of rows).  ``W``/``O`` is white, ``B``/``X``/``@``/``*`` is black,
    ``.``/``-`` empty; lower case (the last-move mark) is accepted.  The side
    to move comes from a ``W to move`` line, else ``to_move``, else White.
    """
    rows: list[tuple[Optional[int], str]] = []
    for raw in text.splitlines():
        if not raw.strip() or raw.strip().upper().replace(" ", "").startswith("ABCDEFGH"):
            continue
        match = _ROW.match(raw)
        if match:
            label = match.group(1) or match.group(3)
            rows.append((int(label) if label else None, "".join(match.group(2).split())))
    n = len(rows)
    if n not in BOARD_SIZES or any(len(cells) != n for _, cells in rows):
        raise ParseError(f"a board drawing needs 8 rows of 8 cells (or n rows of n cells, n one of "
                         f"{', '.join(map(str, BOARD_SIZES))}), found {n} rows in {text!r}")
    labels = [label for label, _ in rows]
    if all(label is not None for label in labels) and labels != list(range(n, 0, -1)):
        raise ParseError(f"board rows must run from {n} at the top down to 1, found rows {labels}")
    white = black = 0
    for index, (_, cells) in enumerate(rows):
        row = n - index
        for col, cell in enumerate(cells.upper()):
            bit = 1 << square(col, row, n)
            if cell in "WO":
                white |= bit
            elif cell in "BX@*":
                black |= bit
    match = _TO_MOVE.search(text)
    if match:
        side = Colour.parse(match.group(1) or match.group(2))
    else:
        side = to_move or WHITE
    return Board(white, black, side, n)


# A row of a board as programs print theirs: a row number before or after it (or both, or none), n cells of
# W/O (white), B/X (black), ./- (empty), apart or separated by spaces, tabs, | or commas.  Not * or @: programs
# mark legal moves with them as often as discs.
_PRINTED_ROW = re.compile(r"^\s*(\d{1,2})?\s*[|:]?\s*((?:[WBOX.\-][ \t|,]*){8,14}?)\s*[|:]?\s*(\d{1,2})?\s*$",
                          re.IGNORECASE)


class Drawing(NamedTuple):
    """A board drawn in a program's text: its discs (``board``, White to move: the side is not read), whether its
    rows were numbered (``labelled``: else row n was taken to be the top one, as PROTOCOL.md draws it), the
    offset in the text just after its last row (``end``), and for rows without numbers the same rows read with
    row 1 at the top (``upside_down``; ``None`` when numbered)."""

    board: Board
    labelled: bool
    end: int
    upside_down: Optional[Board] = None


def find_drawings(text: str, size: int = DEFAULT_SIZE) -> list[Drawing]:
    """Every ``size`` x ``size`` board drawn in ``text`` (an agent's output or its comments), in order.

    A drawing is ``size`` consecutive lines of ``size`` cells each (read as
    :func:`parse_board` reads cells; ``|`` and commas may separate them),
    column A first.  Numbered rows are placed by their numbers, counted from
    1 (or from 0) upwards or downwards; rows without numbers are read top row
    first (row ``size`` at the top, as PROTOCOL.md draws it).  Anything else
    (a run of another length, numbers out of order) is no drawing.

    >>> [d.board == Board() for d in find_drawings(Board().draw() + "thinking\\n" + Board().draw())]
    [True, True]
    >>> upside_down = "\\n".join(f"{row} " + Board().draw().splitlines()[9 - row][4:19] for row in range(1, 9))
    >>> [(d.board == Board(), d.labelled) for d in find_drawings(upside_down)]
    [(True, True)]
    """
    found: list[Drawing] = []
    run: list[tuple[Optional[int], str]] = []
    offset = 0

    def close(end: int) -> None:
        if len(run) == size:
            drawing = _drawing(run, size, end)
            if drawing is not None:
                found.append(drawing)
        run.clear()

    for raw in text.splitlines(keepends=True):
        match = _PRINTED_ROW.match(raw.rstrip("\r\n"))
        cells = "".join(ch for ch in match.group(2) if ch not in " \t|,") if match else ""
        if match and len(cells) == size:
            label = match.group(1) or match.group(3)
            run.append((int(label) if label else None, cells))
            if len(run) > size:  # more rows than a board: not one
                run.clear()
        else:
            close(offset)
        offset += len(raw)
    close(offset)
    return found


def _drawing(rows: list[tuple[Optional[int], str]], size: int, end: int) -> Optional[Drawing]:
    """One drawing's rows as a board; ``None`` if their numbers do not say which row is which."""
    labels = [label for label, _ in rows if label is not None]
    if not labels:
        top_down = list(range(size, 0, -1))
        return Drawing(_drawn(rows, top_down, size), False, end, _drawn(rows, top_down[::-1], size))
    if len(labels) < len(rows):
        return None
    numbers = [label + 1 for label in labels] if min(labels) == 0 else labels
    if numbers not in (list(range(size, 0, -1)), list(range(1, size + 1))):
        return None
    return Drawing(_drawn(rows, numbers, size), True, end)


def _drawn(rows: list[tuple[Optional[int], str]], numbers: list[int], size: int) -> Board:
    """The discs of drawn ``rows``, the i-th row being row ``numbers[i]``."""
    white = black = 0
    for row, (_, cells) in zip(numbers, rows):
        for col, cell in enumerate(cells.upper()):
            bit = 1 << square(col, row, size)
            if cell in "WO":
                white |= bit
            elif cell in "BX":
                black |= bit
    return Board(white, black, WHITE, size)


# ---------------------------------------------------------------------------
# OBF: one line of 64 cells a1..h8 then the side to move
# ---------------------------------------------------------------------------
# Our games map to standard-orientation games by keeping every square's label
# and swapping the colour names (our White moves first, like the standard
# Black).  OBF is read the same way, so that our start position is the
# standard start position there: our White is OBF's X, our Black is O.


def format_cells(board: Board, white: str, black: str, empty: str) -> str:
    """The 64 squares A1..H8 (n*n on a bigger board), one character each: how OBF and GGF write a board."""
    marks = {WHITE: white, BLACK: black, None: empty}
    return "".join(marks[board.at(sq)] for sq in range(board.size * board.size))


def parse_cells(cells: str, white: str, black: str, to_move: Colour, size: int = DEFAULT_SIZE) -> Board:
    """The board of :func:`format_cells`' 64 (n*n) characters: one of ``white`` or ``black``, anything else empty."""
    white_discs = sum(1 << sq for sq, cell in enumerate(cells) if cell in white)
    black_discs = sum(1 << sq for sq, cell in enumerate(cells) if cell in black)
    return Board(white_discs, black_discs, to_move, size)


def format_obf(board: Board) -> str:
    """The position as an OBF line: ``"---...--- X;"`` (X is our White)."""
    return format_cells(board, "X", "O", "-") + " " + ("X" if board.to_move is WHITE else "O") + ";"


def parse_obf(text: str, size: int = DEFAULT_SIZE) -> Board:
    """Parse an OBF line (64 cells a1..h8, then the side to move; rest ignored).

    With ``size`` the line has ``size * size`` cells (OBF itself is 8x8:
    game records of bigger boards use the same form).
    """
    line = text.strip()
    cells_count = check_size(size) ** 2
    if len(line) < cells_count:
        raise ParseError(f"an OBF line needs {cells_count} cells then the side to move, got {text!r}")
    cells, rest = line[:cells_count].upper(), line[cells_count:].strip()
    for sq, cell in enumerate(cells):
        if cell not in "X*O-.":
            raise ParseError(f"bad OBF cell {cell!r} at {square_name(sq, size)} in {text!r} (expected X, O or -)")
    side = rest[:1].upper()
    if side in ("X", "*"):
        to_move = WHITE
    elif side == "O":
        to_move = BLACK
    else:
        raise ParseError(f"OBF line {text!r} does not say the side to move (X or O after the 64 cells)")
    return parse_cells(cells, "X*", "O", to_move, size)


# ---------------------------------------------------------------------------
# Transcripts: "d3c3c4..." (passes implied)
# ---------------------------------------------------------------------------


def format_transcript(moves: Iterable[Move]) -> str:
    """The usual compact transcript, lower case, passes left out: ``"d3c3c4"``."""
    return "".join(square_name(m.square, m.size).lower() for m in moves if m.square is not None)


def parse_transcript(text: str, board: Optional[Board] = None) -> list[Move]:
    """Read a transcript (``d3c3``, ``D3 C3``, ``d3-c3``...) into moves, passes inserted.

    Each move is checked against the rules from ``board`` (default: the
    8x8 start); on a bigger board squares run to ``n14``.
    """
    board = board or Board()
    pattern = r"[A-Ha-h][1-8]|\S" if board.size == DEFAULT_SIZE else r"[A-Na-n](?:1[0-4]|[1-9])|\S"
    squares = re.findall(pattern, text)
    moves: list[Move] = []
    for token in squares:
        if token in "-,;":
            continue
        try:
            sq = parse_square(token, board.size)
        except ParseError:
            raise ParseError(f"bad square {token!r} in transcript {text!r}") from None
        if not board.has_move() and board.has_move(board.to_move.opponent):
            passing = Move.pass_(board.to_move, board.size)
            moves.append(passing)
            board = board.play_unchecked(passing)
        move = Move(board.to_move, sq, board.size)
        board = board.play(move)
        moves.append(move)
    return moves


def legal_names(board: Board) -> str:
    """The legal squares of the side to move, as ``"C4 D3 E6 F5"``."""
    return " ".join(board.square_name(sq) for sq in bits(board.legal_squares()))
