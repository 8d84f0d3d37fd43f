"""The floor for a game's overhead: a minimal referee of the file protocol, in plain Python (issue 27).

    python bench/minimal_referee.py --games 20 "a=./greedy {name}" "b=./greedy {name}" [--out DIR]

Each game starts both agents afresh, each in its own directory (``DIR/gN/NAME``,
with ``OTHELLO_NAME``, ``OTHELLO_DIR`` and ``OTHELLO_TIME`` set), writes their
colours, then relays every move as PROTOCOL.md says: it waits (inotify, as the
real referee does) for the mover's complete ``NAME.out``, deletes it, checks
the move with the rules core (:mod:`othello_arena.protocol`), writes it
atomically into the other side's ``NAME.in`` (once the colour file was taken),
and at the end sends both sides the end line and waits for them to exit.
Colours alternate game by game.

What it leaves out, on purpose (it is the floor to compare ``othello match``
with, bench/game_overhead.py): the sandbox, limits and suspension of the
waiting side, clocks and time-outs, faults as results (an illegal or
malformed move or a crash just stops the run), the game records, the
database, events and logs (the agents' output goes to /dev/null).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from othello_arena.protocol import BLACK, WHITE, Board, Colour, Move, format_colour, format_end, format_move, parse_message

_LIBC = ctypes.CDLL(None, use_errno=True)
_IN_CLOSE_WRITE, _IN_MOVED_TO, _IN_DELETE = 0x8, 0x80, 0x200


class Side:
    """One agent in one game: its directory, its two files, its process, an inotify watch on its directory."""

    def __init__(self, name: str, command: str, game_dir: Path, colour: Colour) -> None:
        self.directory = game_dir / name
        self.directory.mkdir(parents=True)
        self.colour = colour
        self.in_path, self.out_path = self.directory / f"{name}.in", self.directory / f"{name}.out"
        self.watch = _LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        _LIBC.inotify_add_watch(self.watch, str(self.directory).encode(), _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_DELETE)
        argv = [os.path.abspath(word) if word.startswith("./") else word
                for word in shlex.split(command.replace("{name}", name))]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OTHELLO_NAME": name,
               "OTHELLO_DIR": str(self.directory), "OTHELLO_TIME": "60"}
        self.process = subprocess.Popen(argv, cwd=self.directory, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_change(self) -> None:
        if select.select([self.watch], [], [], 0.5)[0]:
            try:
                while os.read(self.watch, 4096):
                    pass
            except BlockingIOError:
                pass

    def send(self, text: str) -> None:
        temporary = self.directory.parent / f".{self.in_path.name}.tmp"  # outside the watched directories
        temporary.write_text(text)
        os.rename(temporary, self.in_path)

    def take_move(self) -> Move:
        """The move of a complete ``NAME.out`` (deleted once read)."""
        while True:
            try:
                text = self.out_path.read_text()
            except FileNotFoundError:
                text = ""
            if text.endswith("\n"):
                self.out_path.unlink()
                _, moves = parse_message(text)
                if len(moves) != 1:
                    raise SystemExit(f"{self.out_path}: not one move line: {text!r}")
                return moves[0]
            self.wait_change()

    def wait_taken(self) -> None:
        while self.in_path.exists():
            self.wait_change()

    def close(self) -> None:
        # A blocking wait (a timed Popen.wait polls, sleeping up to 50 ms); killed if it has not exited in 5 s.
        killer = threading.Timer(5.0, self.process.kill)
        killer.start()
        self.process.wait()
        killer.cancel()
        os.close(self.watch)


def play(white: tuple[str, str], black: tuple[str, str], game_dir: Path) -> str:
    """One game; returns its end line."""
    sides = {WHITE: Side(*white, game_dir, WHITE), BLACK: Side(*black, game_dir, BLACK)}
    try:
        for side in sides.values():
            side.send(format_colour(side.colour))
        board, mover, first = Board.start(), sides[WHITE], True
        while (result := board.outcome()) is None:
            move = mover.take_move()
            why = board.why_illegal(move)
            if why is not None:
                raise SystemExit(f"{mover.out_path}: illegal move {move.line()}: {why}")
            board = board.play_unchecked(move)
            other = sides[mover.colour.opponent]
            if first:  # Black's colour file must be taken before White's first move replaces it
                other.wait_taken()
                first = False
            if board.outcome() is None:
                other.send(format_move(move))
            mover = other
        end = format_end(result)
        mover.send(format_move(move) + end)  # the side that did not see the last move
        sides[mover.colour.opponent].send(end)
        return end.strip()
    finally:
        for side in sides.values():
            side.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="NAME=COMMAND, {name} replaced")
    parser.add_argument("b", help="NAME=COMMAND, {name} replaced")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--out", type=Path, help="where the game directories go (default: a temporary folder)")
    args = parser.parse_args()
    agents = [tuple(text.split("=", 1)) for text in (args.a, args.b)]
    out = args.out or Path(tempfile.mkdtemp(prefix="minimal-referee-"))
    try:
        for number in range(1, args.games + 1):
            white, black = agents if number % 2 else agents[::-1]
            end = play(white, black, out / f"g{number}")  # type: ignore[arg-type]
            print(f"game {number}: {white[0]} (W) vs {black[0]} (B): {end}; ended at {time.time():.6f}", flush=True)
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
