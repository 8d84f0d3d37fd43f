"""A tiny deterministic agent for the tournament tests (the file protocol, nothing else).

    python3 tournament_agent.py --name NAME --style first|last|flips [--delay S] [--crash-at N] [--sleep-at N]

``first``/``last`` play the lowest/highest legal square, ``flips`` the move
flipping most discs (lowest square on ties): three agents that always play
the same game against each other.  ``--crash-at N`` exits at its Nth move,
``--sleep-at N`` never answers its Nth move (a timeout).  ``--delay`` waits
before each move (keeps games in flight long enough to be killed);
``--first-delay`` only before White's first move.

``--evil ACTION`` does, at its first move, what a hostile student tried
(this runner has no sandbox of its own; these are what it must survive):

- ``stderr-link=PATH``: its ``../DIR.stderr.log`` replaced by a link to PATH;
- ``stderr-sparse``: that log replaced by a sparse file of 100 GB;
- ``game-json-dir``: ``../game.json`` made a directory.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from othello_arena.protocol import Board, Move, flips, parse_colour, parse_end, parse_message
from othello_arena.protocol.notation import is_end_line


def wait_for(path: str) -> str:
    while True:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            os.remove(path)
            return text
        except FileNotFoundError:
            time.sleep(0.002)


def choose(board: Board, style: str) -> Move:
    moves = board.legal_moves()
    if len(moves) == 1 or style == "first":
        return min(moves, key=lambda m: -1 if m.square is None else m.square)
    if style == "last":
        return max(moves, key=lambda m: -1 if m.square is None else m.square)
    return max(moves, key=lambda m: (bin(flips(board.own, board.opp, m.square)).count("1"), -m.square))


def be_evil(action: str, colour: str) -> None:
    here = os.getcwd()
    log = os.path.join(os.path.dirname(here), os.path.basename(here) + ".stderr.log")
    name, _, value = action.partition("=")
    if name == "stderr-link":
        os.symlink(value, log + ".new")
        os.replace(log + ".new", log)
    elif name == "stderr-sparse":
        with open(log + ".new", "wb") as handle:
            handle.write(b"start of a huge log\n")
            handle.truncate(100 * 1024**3)
        os.replace(log + ".new", log)
    elif name == "scratch":  # files of its own, big and small, and a link to a file it must not cost anyone
        with open("big.bin", "wb") as handle:
            handle.write(os.urandom(3 << 20))
        os.mkdir("cache")
        with open(os.path.join("cache", "small.bin"), "wb") as handle:
            handle.write(os.urandom(200 << 10))
        os.symlink(value, "outside")
    elif name == "game-json-dir":
        os.mkdir(os.path.join(os.path.dirname(here), "game.json"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--style", default="first")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--crash-at", type=int, default=0)
    parser.add_argument("--sleep-at", type=int, default=0)
    parser.add_argument("--first-delay", type=float, default=0.0)
    parser.add_argument("--evil", default="")
    # A line written to stderr at the start (a student's traceback), reversed: the command line, which the
    # report shows, does not hold it.
    parser.add_argument("--secret", default="")
    args = parser.parse_args()
    inbox, outbox = f"{args.name}.in", f"{args.name}.out"
    colour = parse_colour(wait_for(inbox))
    board = Board()
    played = 0
    print(f"{args.name}: playing {colour} in the {args.style} style", file=sys.stderr)
    if args.secret:
        print(args.secret[::-1], file=sys.stderr, flush=True)
    while True:
        if board.is_game_over():
            return 0
        if board.to_move == colour:
            played += 1
            if played == args.crash_at:
                print(f"{args.name}: crashing on purpose", file=sys.stderr)
                return 3
            if played == args.sleep_at:
                time.sleep(3600)
            if played == 1 and args.evil:
                be_evil(args.evil, colour.value)
            time.sleep(args.delay + (args.first_delay if played == 1 and colour.value == "W" else 0.0))
            move = choose(board, args.style)
            with open(outbox + ".tmp", "w", encoding="utf-8") as handle:
                handle.write(f"(C move {played})\n{move.line()}\n")
            os.rename(outbox + ".tmp", outbox)
            board = board.play(move)
        else:
            text = wait_for(inbox)
            lines = [line for line in text.splitlines() if line.strip()]
            for line in lines:
                if is_end_line(line):
                    parse_end(line)
                    return 0
            _, moves = parse_message("\n".join(lines))
            for move in moves:
                board = board.play(move)


if __name__ == "__main__":
    sys.exit(main())
