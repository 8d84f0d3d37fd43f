#!/usr/bin/env python3
"""starter.py: a starter Othello Arena agent in Python (the file protocol, see PROTOCOL.md).

Strategy: iterative-deepening alpha-beta (negamax) over a square-weight table,
under its own clock.  The same program exists in C, C++, Java, JavaScript,
Rust, Go and awk (starter.*, Starter.java): same search, same evaluation, same
move for the same position at the same depth.  Standard library only.

Run:    othello play "openings:starter=python3 starter.py {name}" random
        othello check "openings:starter=python3 starter.py {name}"

Usage:  starter.py [NAME] [--depth N] [--analyze]
  NAME        its files are NAME.in and NAME.out (default: $OTHELLO_NAME, else "starter")
  --depth N   search exactly N plies, no clock (to debug, or to compare versions)
  --analyze   no game: read positions from standard input, one a line,
              64 characters A1 B1 .. H1 A2 .. H8 ('W', 'B', '.') then a space and
              the side to move ('W' or 'B'); print the chosen move line for each

The time per move is $OTHELLO_TIME seconds (default 60); see START_FRACTION.
It reads openings (PROTOCOL.md section 8): the moves after the colour in its first NAME.in.
Under a game clock (PROTOCOL.md section 10: $OTHELLO_CLOCK, declared with
"clock:starter=...") it reads its bank, the (CLOCK seconds) line, and
thinks a share of it: see move_seconds().

Where to improve it: evaluate() (the evaluation), ordered() (move ordering),
START_FRACTION / ABORT_FRACTION (the time budget).
"""

import ctypes
import os
import select
import sys
import time

WHITE, BLACK, EMPTY = 1, -1, 0  # a colour's opponent is -colour (negamax)
INF = 1_000_000  # above any score: a won game is at most 64 * 1000

# The board is a list of 64 squares: index = (row - 1) * 8 + column, A1 = 0, H1 = 7, H8 = 63.
DIRECTIONS = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]  # (column, row) steps

# The evaluation: a value per square (corners good, the squares next to them bad).
# The table is symmetric, so it reads the same whichever way the rows are numbered.
WEIGHTS = [
    100, -20, 10, 5, 5, 10, -20, 100,
    -20, -50, -2, -2, -2, -2, -50, -20,
    10, -2, 1, 1, 1, 1, -2, 10,
    5, -2, 1, 0, 0, 1, -2, 5,
    5, -2, 1, 0, 0, 1, -2, 5,
    10, -2, 1, 1, 1, 1, -2, 10,
    -20, -50, -2, -2, -2, -2, -50, -20,
    100, -20, 10, 5, 5, 10, -20, 100,
]

# The time budget (TUNE HERE): of the OTHELLO_TIME seconds per move, start a new
# depth only before START_FRACTION of them, and abandon a depth still running at
# ABORT_FRACTION (then the best move of the last finished depth is played).
# PROTOCOL.md section 4: answer by 0.9 * time, the referee allows time + 0.25 s.
START_FRACTION = 0.40
ABORT_FRACTION = 0.80


# -- the rules ----------------------------------------------------------------------


def start_board():
    board = [EMPTY] * 64
    board[27], board[28], board[35], board[36] = BLACK, WHITE, WHITE, BLACK  # D4 E4 D5 E5
    return board


def flipped(board, sq, colour):
    """The squares a disc of `colour` on `sq` would flip (empty: not a legal move)."""
    if board[sq] != EMPTY:
        return []
    result = []
    for dc, dr in DIRECTIONS:
        col, row, run = sq % 8 + dc, sq // 8 + dr, []
        while 0 <= col < 8 and 0 <= row < 8 and board[row * 8 + col] == -colour:
            run.append(row * 8 + col)
            col, row = col + dc, row + dr
        if run and 0 <= col < 8 and 0 <= row < 8 and board[row * 8 + col] == colour:
            result += run
    return result


def legal_moves(board, colour):
    """The legal squares of `colour`, in A1..H8 order."""
    return [sq for sq in range(64) if board[sq] == EMPTY and flipped(board, sq, colour)]


def play(board, sq, colour):
    """A new board: `colour` plays on `sq` (a legal move)."""
    after = list(board)
    for square in flipped(board, sq, colour) + [sq]:
        after[square] = colour
    return after


def game_over(board):
    return not legal_moves(board, WHITE) and not legal_moves(board, BLACK)


# -- the search -----------------------------------------------------------------------


def evaluate(board, colour):
    """The position seen by `colour` (IMPROVE HERE: mobility, stable discs, parity...)."""
    return sum(WEIGHTS[sq] * board[sq] for sq in range(64)) * colour


def final_score(board, colour):
    """A finished game: the disc difference, scaled above any evaluation."""
    return sum(board) * colour * 1000


def ordered(moves):
    """Likely best first, so that alpha-beta cuts more (IMPROVE HERE): by square weight.

    The sort is stable (ties keep A1..H8 order): every translation orders the same way.
    """
    return sorted(moves, key=lambda sq: -WEIGHTS[sq])


def game_clock():
    """$OTHELLO_CLOCK "BASE+INC" and $OTHELLO_MOVE_CAP (PROTOCOL.md section 10): (increment, cap or None)."""
    increment = float((os.environ.get("OTHELLO_CLOCK") or "0+0").partition("+")[2] or 0)
    cap = os.environ.get("OTHELLO_MOVE_CAP")
    return increment, float(cap) if cap else None


def move_seconds(seconds, bank, board, increment, cap):
    """Seconds for this move: $OTHELLO_TIME, or under a game clock the bank spread over our moves
    still to come (half the empty squares, at least 8) plus most of the increment, never more
    than 0.6 of the bank (the increment comes after the move) nor 0.9 of a cap.  (TUNE HERE)"""
    if seconds is None or bank is None:
        return seconds
    moves_left = max(8, (board.count(EMPTY) + 1) // 2)
    budget = min(bank / moves_left + 0.8 * increment, 0.6 * bank)
    return budget if cap is None else min(budget, 0.9 * cap)


class TimeUp(Exception):
    """The clock ran out in the middle of a depth."""


class Clock:
    """Deadlines of one move; `None` seconds: no clock (fixed depth)."""

    def __init__(self, seconds):
        now = time.monotonic()
        self.start_by = None if seconds is None else now + START_FRACTION * seconds
        self.abort_at = None if seconds is None else now + ABORT_FRACTION * seconds

    def may_start_depth(self):
        return self.start_by is None or time.monotonic() < self.start_by

    def check(self):
        if self.abort_at is not None and time.monotonic() >= self.abort_at:
            raise TimeUp()


def negamax(board, colour, depth, alpha, beta, clock):
    """The value of `board` for `colour` to move, searched `depth` plies (a pass is a ply)."""
    clock.check()
    if depth == 0:
        return evaluate(board, colour)
    moves = legal_moves(board, colour)
    if not moves:
        if not legal_moves(board, -colour):
            return final_score(board, colour)
        return -negamax(board, -colour, depth - 1, -beta, -alpha, clock)
    best = -INF
    for sq in ordered(moves):
        score = -negamax(play(board, sq, colour), -colour, depth - 1, -beta, -alpha, clock)
        if score > best:
            best = score
            if best > alpha:
                alpha = best
                if alpha >= beta:
                    break  # the opponent will not allow this line
    return best


def search_root(board, colour, moves, depth, clock):
    """(best move, its score) at `depth`; the first of equal moves wins."""
    best_move, alpha = moves[0], -INF
    for sq in moves:
        score = -negamax(play(board, sq, colour), -colour, depth - 1, -INF, -alpha, clock)
        if score > alpha:
            best_move, alpha = sq, score
    return best_move, alpha


def think(board, colour, clock, max_depth):
    """Iterative deepening: (move or None to pass, last finished depth, its score)."""
    moves = ordered(legal_moves(board, colour))
    if len(moves) <= 1:
        return (moves[0] if moves else None), 0, 0
    best, done, score = moves[0], 0, 0
    limit = min(max_depth, board.count(EMPTY))  # deeper than the empty squares is no deeper
    depth = 1
    while depth <= limit and clock.may_start_depth():
        try:
            # the previous depth's best move first: it is the likeliest best again
            best, score = search_root(board, colour, [best] + [m for m in moves if m != best], depth, clock)
        except TimeUp:
            break  # keep the best move of the last finished depth
        done = depth
        depth += 1
    return best, done, score


# -- the file protocol ----------------------------------------------------------------


def move_line(colour, sq):
    c = "W" if colour == WHITE else "B"
    return f"({c} P)" if sq is None else f"({c} {'ABCDEFGH'[sq % 8]} {sq // 8 + 1})"


def parse_line(line):
    """Read a line liberally ("(w d 3)", "(WD3)", "(B P)", "(B)"): ("move", colour, sq or None),
    ("end",), ("clock", seconds) for the bank, ("skip",) for a comment or blank line, ("bad",) for anything else."""
    text = "".join(ch for ch in line.upper() if ch not in " \t\r\n()")
    if text.startswith("CLOCK"):
        try:
            return ("clock", float(text[5:]))
        except ValueError:
            return ("bad",)
    if not text or text[0] == "C":
        return ("skip",)
    if text.startswith("END"):
        return ("end",)
    if text[0] not in "WB":
        return ("bad",)
    colour = WHITE if text[0] == "W" else BLACK
    if len(text) == 1 or text[1] == "P":
        return ("move", colour, None)
    if len(text) >= 3 and text[1] in "ABCDEFGH" and text[2] in "12345678":
        return ("move", colour, (int(text[2]) - 1) * 8 + "ABCDEFGH".index(text[1]))
    return ("bad",)


class DirectoryWatch:
    """Waiting for a file in our directory, without sleeping longer than needed.

    On Linux the kernel wakes us the moment a file of the directory is renamed
    into place, closed after writing or deleted (inotify, as the referee itself
    waits).  The standard library has no inotify, so we call libc's through
    ctypes; where that cannot be had (another system, no inotify left) we look
    again after a pause that doubles from 0.1 ms to 10 ms: quick when the
    answer is quick, cheap when it is slow.  Made once, before we first look
    for a file, so that no event can slip in between looking and waiting.
    """

    IN_CLOSE_WRITE, IN_MOVED_TO, IN_DELETE = 0x8, 0x80, 0x200  # <sys/inotify.h>

    def __init__(self):
        self.fd = -1
        try:
            libc = ctypes.CDLL(None)  # the C library Python itself runs on
            self.fd = libc.inotify_init()
            mask = self.IN_MOVED_TO | self.IN_CLOSE_WRITE | self.IN_DELETE
            if self.fd >= 0 and libc.inotify_add_watch(self.fd, b".", mask) < 0:
                os.close(self.fd)
                self.fd = -1
        except (OSError, AttributeError):  # no libc to load, or one without inotify
            self.fd = -1

    def wait(self, pause):
        """Sleep until the directory changes (at most 10 ms: a lost event costs no more), or for
        `pause` seconds; returns the next pause."""
        if self.fd >= 0:
            if select.select([self.fd], [], [], 0.01)[0]:
                os.read(self.fd, 4096)  # the events only wake us: we look at the files
            return pause
        time.sleep(pause)
        return min(pause * 2, 0.01)


def take_file(path, watch):
    """Wait for `path` (the referee writes it atomically), read it, delete it."""
    pause = 0.0001
    while True:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            break
        except FileNotFoundError:
            pause = watch.wait(pause)
    os.remove(path)
    return text.splitlines()


def put_move(name, text):
    """Write NAME.out atomically: a temporary file, then a rename."""
    with open(name + ".out.tmp", "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(name + ".out.tmp", name + ".out")


def wait_collected(name, watch):
    """After our last move: let the referee take NAME.out (or send the end line), at most 2 s."""
    pause = 0.0001
    for _ in range(200):
        if not os.path.exists(name + ".out") or os.path.exists(name + ".in"):
            return
        pause = watch.wait(pause)


def play_game(name, seconds, max_depth):
    board, to_move = start_board(), WHITE
    increment, cap = game_clock()
    bank = None  # under a game clock: the seconds left, from the (CLOCK ...) line
    watch = DirectoryWatch()
    lines = take_file(name + ".in", watch)
    arrived = time.monotonic()  # our clock starts when NAME.in is there
    me = WHITE if lines and lines[0].strip().upper().startswith("W") else BLACK
    lines = lines[1:]  # in an opening game (PROTOCOL.md section 8), the moves already played follow the colour
    while True:
        for line in lines:
            parsed = parse_line(line)
            if parsed[0] == "skip":
                continue
            if parsed[0] == "clock":
                bank = parsed[1]
                continue
            if parsed[0] == "end":
                return
            # Every move is checked, the opponent's and the opening's.  A pass is always taken:
            # with --illegal lose-turn the referee relays an illegal move as a pass.
            legal = parsed[0] == "move" and parsed[1] == to_move
            if legal and parsed[2] is not None:
                legal = bool(flipped(board, parsed[2], to_move))
            if not legal:
                winner = "White" if me == WHITE else "Black"
                sys.stderr.write(f"illegal move received: {line.strip()}; {winner} wins\n")
                sys.exit(1)
            if parsed[2] is not None:
                board = play(board, parsed[2], to_move)
            to_move = -to_move
        if game_over(board):
            return
        if to_move == me:
            budget = move_seconds(seconds, bank, board, increment, cap)
            clock = Clock(None if budget is None else budget - (time.monotonic() - arrived))
            sq, depth, score = think(board, me, clock, max_depth)
            put_move(name, f"(C depth {depth} score {score})\n{move_line(me, sq)}\n")
            if sq is not None:
                board = play(board, sq, me)
            to_move = -me
            if game_over(board):
                wait_collected(name, watch)
                return
        lines = take_file(name + ".in", watch)
        arrived = time.monotonic()


def analyze(seconds, max_depth):
    """--analyze: one position a line on standard input, the chosen move line on standard output."""
    for line in sys.stdin:
        if not line.strip():
            continue
        cells, side = line.split()
        board = [{"W": WHITE, "B": BLACK}.get(ch, EMPTY) for ch in cells]
        colour = WHITE if side == "W" else BLACK
        sq, _, _ = think(board, colour, Clock(seconds), max_depth)
        print(move_line(colour, sq), flush=True)


def main(argv):
    name, max_depth, analyzing = os.environ.get("OTHELLO_NAME") or "starter", None, False
    args = iter(argv)
    for arg in args:
        if arg == "--depth":
            max_depth = int(next(args))
        elif arg == "--analyze":
            analyzing = True
        else:
            name = arg
    seconds = None if max_depth is not None else float(os.environ.get("OTHELLO_TIME") or 60)
    max_depth = max_depth if max_depth is not None else 64
    if analyzing:
        analyze(seconds, max_depth)
    else:
        play_game(name, seconds, max_depth)


if __name__ == "__main__":
    main(sys.argv[1:])
