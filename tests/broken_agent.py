"""A deliberately faulty agent for the checker's tests: ``python broken_agent.py FAULT NAME``.

It plays the first legal move, through its files, with one fault:

- ``none``: no fault (a small correct agent);
- ``keep-in``: never deletes NAME.in (it remembers what it has read);
- ``slow``: takes twice its time on its third move;
- ``no-pass``: when it must pass, it exits instead;
- ``strict``: cannot read a lower-case move line or CRLF (exits);
- ``linger``: never exits, even after the end line;
- ``trusting``: plays on after an illegal opponent move;
- ``index-error``: crashes with a Python ``IndexError`` on its third move;
- ``orphan-check``: quits when its parent is process 1, the C idiom ``if (getppid() == 1) exit(0);``;
- ``stdout``: prints its moves on standard output instead of writing NAME.out;
- ``flipped``: counts rows from the top (its board upside down): every square it reads or writes is mirrored;
- ``echo``: writes each move to NAME.out and echoes it on stderr, as many students do; its third move is D4 (never
  empty: an illegal move);
- ``drift``: from its third move on, puts the opponent's discs down without flipping any (its board drifts from the
  referee's, as with a flip-direction bug).

``--board comments`` (or ``--board stderr``) after the name: before each of its moves it draws its own board, as the
referee draws one, in ``(C ...)`` comment lines above its move in NAME.out (or on standard error), as students do to
debug theirs.  ``--board upside-down`` draws it on standard error as an array printed in index order: row 1 at the
top, no row numbers, ``X`` for White and ``O`` for Black.
"""

import os
import sys
import time

from othello_arena.protocol import WHITE, Board, Colour, Move, parse_line, square_name
from othello_arena.protocol.notation import is_end_line

fault, name = sys.argv[1], sys.argv[2]
shows_board = sys.argv[sys.argv.index("--board") + 1] if "--board" in sys.argv else ""
seconds = float(os.environ.get("OTHELLO_TIME", "5"))
inbox, outbox = f"{name}.in", f"{name}.out"
seen = None  # keep-in: the content already read


def take() -> str:
    global seen
    while True:
        try:
            with open(inbox) as handle:
                text = handle.read()
        except FileNotFoundError:
            text = None
        if text is not None and (fault != "keep-in" or text != seen):
            if fault == "keep-in":
                seen = text
            else:
                os.unlink(inbox)
            return text
        time.sleep(0.01)


def mirrored(move: Move) -> Move:
    """The move with its row counted from the other edge (``flipped`` only)."""
    if fault != "flipped" or move.square is None:
        return move
    name = square_name(move.square)
    return parse_line(f"({move.colour.value} {name[0]} {9 - int(name[1:])})")


def put(move: Move) -> None:
    move = mirrored(move)
    if fault == "stdout":
        print(move.line(), flush=True)
        return
    if fault == "echo":
        print(move.line(), file=sys.stderr, flush=True)
    drawing = board.draw().splitlines()[:-1]  # its own board before its move (not the line of whose turn it is)
    if shows_board == "stderr":
        print("my board:\n" + "\n".join(drawing), file=sys.stderr, flush=True)
    if shows_board == "upside-down":
        rows = [line[4:19].replace("W", "X").replace("B", "O") for line in reversed(drawing[1:-1])]
        print("my board:\n" + "\n".join(rows), file=sys.stderr, flush=True)
    with open(outbox + ".tmp", "w") as handle:
        if shows_board == "comments":
            handle.write("".join(f"(C {line})\n" for line in drawing))
        handle.write(move.line() + "\n")
    os.replace(outbox + ".tmp", outbox)


def placed(board: Board, move: Move) -> Board:
    """The opponent's disc put down and nothing flipped (``drift`` only)."""
    bit = 1 << move.square
    white, black = (board.white | bit, board.black) if move.colour is WHITE else (board.white, board.black | bit)
    return Board(white, black, move.colour.opponent)


if fault == "orphan-check" and os.getppid() == 1:
    sys.exit(0)  # "the referee is gone": but in the sandbox the parent is process 1 from the start
board = Board()
me = Colour.parse(take())
moves_made = 0
while True:
    if board.to_move is me and not board.is_game_over():
        move = board.legal_moves()[0]
        if not move and fault == "no-pass":
            sys.exit(3)
        moves_made += 1
        if fault == "index-error" and moves_made == 3:
            print("thinking about move 3", flush=True)
            move = board.legal_moves()[99]
        if fault == "echo" and moves_made == 3:
            move = parse_line(f"({me.value} D 4)")
        if fault == "slow" and moves_made == 3:
            time.sleep(2 * seconds)
        put(move)
        board = board.play(move)
    text = take()
    for line in text.splitlines():
        if not line.strip():
            continue
        if is_end_line(line):
            if fault == "linger":
                time.sleep(3600)
            sys.exit(0)
        if fault == "strict" and (line != line.upper() or line.endswith("\r")):
            sys.exit(4)
        move = mirrored(parse_line(line))
        if not board.is_legal(move):
            if fault == "trusting":
                board = board.play_unchecked(move) if move.square is None else board.play_unchecked(Move(move.colour, None))
                continue
            print(f"illegal move {line}: I win", file=sys.stderr)
            sys.exit(0)
        board = placed(board, move) if fault == "drift" and moves_made >= 3 and move.square is not None else board.play(move)
    if board.is_game_over() and fault != "linger":
        sys.exit(0)
