"""Building the champion's opening book (:mod:`.book`) by the engine's own deep searches.

The roots are the start position (and every position up to ``--start-plies``
moves from it) and the end of each opening of the balanced suite
(``protocol/data/balanced.txt``).  Each root is searched ``--depth`` plies deep
(:meth:`.engine.Engine.think`, multi-prob-cut as in a game, no clock), and the
line goes on along the move found for ``--line`` more plies, each position
searched as deep in the same table: the replies the other side most likely
plays when it is this engine, and the answers to them.  Those later moves are
the ones a book is for: in a game at 0.5 s a move each side's first move has
the start-up allowance (about 2 s, :data:`.agent.STARTUP_WAIT`) and the next
ones 0.15 s.  Roots are taken in order until the CPU minutes are spent:

    python -m othello_arena.agents.champion.book_building build --depth 16 --line 3 --start-plies 3 --minutes 30
    python -m othello_arena.agents.champion.book_building show

``build`` writes ``data/book.npz`` (:func:`.book.write_book`): the positions,
moves, scores and depths, and how the book was made (the command, depth, line,
roots, CPU seconds, date).
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Optional

from ...protocol import Board, Move
from ...protocol.openings import BALANCED, opening_board, read_openings, suite_path
from .book import BOOK_FILE, SQUARE_MAPS, BookError, Entry, canonical, load_book, write_book


def start_positions(plies: int) -> list[Board]:
    """The start position and every position up to ``plies`` moves from it, one per mirror image, nearest first."""
    found: list[Board] = []
    seen: set[tuple[int, int]] = set()
    layer = [Board()]
    for _ in range(plies + 1):
        following: list[Board] = []
        for board in layer:
            key, _ = canonical(board)
            if key in seen or board.is_game_over():
                continue
            seen.add(key)
            found.append(board)
            following.extend(board.play(move) for move in board.legal_moves())
        layer = following
    return found


def build(roots: Iterable[Board], depth: int, line: int, seconds: float, out: Path, info: dict[str, str],
          log: Callable[[str], None] = print, save_every: int = 50) -> dict[tuple[int, int], Entry]:
    """Search each root and the ``line`` positions after it along the moves found; write ``out`` as it goes.

    Roots are taken in order until ``seconds`` of CPU are spent (the root
    being searched ends its line); positions already in the book are not
    searched again, their move goes on.  The file is rewritten every
    ``save_every`` roots and at the end, so a build cut short leaves a book.
    """
    from .agent import load_engine

    engine = load_engine()
    entries: dict[tuple[int, int], Entry] = {}
    started = time.process_time()
    done = 0
    for root in roots:
        if time.process_time() - started >= seconds:
            break
        engine.clear()
        board = root
        for _ in range(line + 1):
            if board.is_game_over():
                break
            if not board.legal_squares():
                board = board.play(Move(board.to_move, None))
                continue
            key, symmetry = canonical(board)
            entry = entries.get(key)
            if entry is None:
                result = engine.think(board, max_depth=depth, exact=False)
                assert result.square is not None
                entry = Entry(SQUARE_MAPS[symmetry][result.square], result.score, result.depth)
                entries[key] = entry
            square = SQUARE_MAPS[symmetry].index(entry.square)
            board = board.play(Move(board.to_move, square))
        done += 1
        if done % save_every == 0:
            cpu = time.process_time() - started
            write_book(out, entries, {**info, "roots": str(done), "cpu_seconds": f"{cpu:.0f}"})
            log(f"{done} roots, {len(entries)} positions, {cpu:.0f} s CPU")
    cpu = time.process_time() - started
    write_book(out, entries, {**info, "roots": str(done), "cpu_seconds": f"{cpu:.0f}"})
    log(f"{done} roots, {len(entries)} positions, {cpu:.0f} s CPU: wrote {out}")
    return entries


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m othello_arena.agents.champion.book_building",
                                     description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("build", help="search the roots and write the book")
    make.add_argument("--depth", type=int, default=16, help="plies of each position's search")
    make.add_argument("--line", type=int, default=3, help="positions searched after each root, along the moves found")
    make.add_argument("--start-plies", type=int, default=3, help="roots: every position this many moves from the start")
    make.add_argument("--openings", default=BALANCED, help="roots: the end of each opening of this suite (after the start's)")
    make.add_argument("--minutes", type=float, default=35.0, help="CPU minutes; the roots not reached are left out")
    make.add_argument("--out", default=None, help="the book's file (default: the package's data/book.npz)")
    show = commands.add_parser("show", help="say what a book holds and how it was made")
    show.add_argument("--file", default=None, help="the book's file (default: the shipped one)")
    args = parser.parse_args(argv)
    if args.command == "show":
        try:
            book = load_book(args.file)
        except BookError as exc:
            print(exc, file=sys.stderr)
            return 1
        print(f"{len(book)} positions")
        for name, value in sorted(book.info.items()):
            print(f"{name}: {value}")
        return 0
    out = Path(args.out) if args.out else Path(__file__).parent / "data" / BOOK_FILE
    roots = start_positions(args.start_plies) + [opening_board(moves) for moves in read_openings(suite_path(args.openings))]
    info = {
        "command": "python -m othello_arena.agents.champion.book_building " + " ".join(argv if argv is not None else sys.argv[1:]),
        "depth": str(args.depth), "line": str(args.line), "start_plies": str(args.start_plies),
        "openings": args.openings, "roots_available": str(len(roots)),
        "started": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "how": "each root searched --depth plies (Engine.think, exact=False, no clock), then --line more positions "
               "along the move found, in one table per root",
    }
    build(roots, args.depth, args.line, 60.0 * args.minutes, out, info)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
