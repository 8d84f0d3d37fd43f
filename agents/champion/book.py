"""The champion's opening book: positions of the first moves, each with the move of the engine's own deep search.

Made by the engine itself (:func:`build`).  The roots are the start position
(and every position up to ``--start-plies`` moves from it) and the end of each
opening of the balanced suite (``protocol/data/balanced.txt``).  Each root is
searched ``--depth`` plies deep (:meth:`.engine.Engine.think`, multi-prob-cut
as in a game, no clock), and the line goes on along the move found for
``--line`` more plies, each position searched as deep in the same table: the
replies the other side most likely plays when it is this engine, and the
answers to them.  Those later moves are the ones a book is for: in a game at
0.5 s a move each side's first move has the start-up allowance (about 2 s,
:data:`.agent.STARTUP_WAIT`) and the next ones 0.15 s.

A position is stored in the canonical form of its eight mirror images
(:func:`...protocol.openings.symmetric_boards`: the least pair of the side to
move's and the other side's discs), so one entry covers every image, whatever
the colour to move; the move is stored in that orientation and turned back to
the board of the game on lookup (:meth:`OpeningBook.lookup`).

    python -m othello_arena.agents.champion.book build --depth 16 --line 3 --minutes 35
    python -m othello_arena.agents.champion.book show

``build`` writes ``data/book.npz``: the positions, moves, scores and depths,
and how the book was made (the command, depth, line, roots, CPU seconds, date).

Only the champion agent (:class:`.agent.ChampionStrategy`) consults the book.
The engine itself never does: ``othello analyze`` reports its own search, the
opening suite's generator (``othello openings generate``) scores openings with
the engine, and the checker plays its own moves.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Callable, Iterable, Optional, Union

import numpy as np

from ...protocol import Board, Move, square_name
from ...protocol.openings import BALANCED, opening_board, read_openings, suite_path, symmetric_boards

BOOK_FILE = "book.npz"
BOOK_FORMAT = 1  # the file's layout; a book of another format is refused with a message
SIZE = 8  # the book holds 8x8 positions only, as the engine plays


def _square_maps() -> tuple[tuple[int, ...], ...]:
    """For each symmetry (in :func:`symmetric_boards`' order) the image of every square: the symmetry's rule is protocol's."""
    images = [symmetric_boards(Board(1 << square, 0)) for square in range(SIZE * SIZE)]
    return tuple(tuple(images[square][symmetry].white.bit_length() - 1 for square in range(SIZE * SIZE))
                 for symmetry in range(8))


SQUARE_MAPS = _square_maps()


def canonical(board: Board) -> tuple[tuple[int, int], int]:
    """``((own, opp), symmetry)``: the least image of ``board`` (the side to move's discs, the other's) and which symmetry gives it."""
    images = symmetric_boards(board)
    keys = [(image.own, image.opp) for image in images]
    symmetry = min(range(len(keys)), key=keys.__getitem__)
    return keys[symmetry], symmetry


@dataclass(frozen=True)
class BookMove:
    """A move of the book, on the board it was asked for."""

    move: Move
    score: float  # discs for the side to move, the book's search
    depth: int  # plies of that search

    def comments(self) -> list[str]:
        """The ``(C ...)`` text of a move played from the book (no "depth N": a game's depth is of its searches)."""
        name = square_name(self.move.square) if self.move.square is not None else "PASS"
        return [f"champion book move {name}: the book's search of {self.depth} plies, eval {self.score:+.2f}"]


class BookError(ValueError):
    """A book file that cannot be used: missing, unreadable, or not a book of this format."""


class OpeningBook:
    """The positions of a book file, looked up under the eight symmetries."""

    def __init__(self, own: np.ndarray, opp: np.ndarray, squares: np.ndarray, scores: np.ndarray,
                 depths: np.ndarray, info: dict[str, str]) -> None:
        self.info = info
        self._moves = {(int(p), int(o)): (int(s), float(v), int(d))
                       for p, o, s, v, d in zip(own.tolist(), opp.tolist(), squares.tolist(), scores.tolist(),
                                                depths.tolist())}

    def __len__(self) -> int:
        return len(self._moves)

    def lookup(self, board: Board) -> Optional[BookMove]:
        """The book's move on ``board`` itself (not its canonical image), or ``None`` when the position is not in the book.

        An entry whose move is not legal on the board (a book made under
        other rules, a damaged file) is no move: the search decides.
        """
        if board.size != SIZE:
            return None
        key, symmetry = canonical(board)
        entry = self._moves.get(key)
        if entry is None:
            return None
        stored, score, depth = entry
        square = SQUARE_MAPS[symmetry].index(stored)  # back from the canonical image to this board
        if not board.legal_squares() >> square & 1:
            return None
        return BookMove(Move(board.to_move, square), score, depth)


def book_path() -> Path:
    """The shipped book: ``data/book.npz`` beside this module."""
    ref = resources.files(__package__).joinpath("data", BOOK_FILE)
    with resources.as_file(ref) as real:
        return Path(real)


def load_book(path: Union[str, Path, None] = None) -> OpeningBook:
    """The book of ``path`` (default: the shipped one); :class:`BookError` naming the file and what is wrong."""
    path = Path(path) if path is not None else book_path()
    try:
        with np.load(path, allow_pickle=False) as data:
            fmt = int(data["format"])
            if fmt != BOOK_FORMAT:
                raise BookError(f"opening book {path}: format {fmt}, this version reads format {BOOK_FORMAT}")
            arrays = [np.asarray(data[name]) for name in ("own", "opp", "square", "score", "depth")]
            info = {name[len("info_"):]: str(data[name]) for name in data.files if name.startswith("info_")}
    except BookError:
        raise
    except FileNotFoundError:
        raise BookError(f"opening book {path}: no such file") from None
    except KeyError as exc:
        raise BookError(f"opening book {path}: not a book file, no array {exc}") from None
    except (OSError, ValueError, EOFError) as exc:  # zipfile.BadZipFile is an OSError; np.load raises ValueError
        raise BookError(f"opening book {path}: unreadable: {exc}") from None
    lengths = {len(array) for array in arrays}
    if len(lengths) != 1:
        raise BookError(f"opening book {path}: its arrays have different lengths {sorted(lengths)}")
    if len(arrays[2]) and (arrays[2].min() < 0 or arrays[2].max() >= SIZE * SIZE):
        raise BookError(f"opening book {path}: a square outside 0-63")
    return OpeningBook(*arrays, info=info)


# -- building ------------------------------------------------------------------------------------------------


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


@dataclass
class Entry:
    square: int  # in the canonical orientation
    score: float
    depth: int


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


def write_book(out: Path, entries: dict[tuple[int, int], Entry], info: dict[str, str]) -> None:
    """Write the book file (through a temporary file, so a reader never sees half of one)."""
    keys = sorted(entries)
    partial = out.with_name(out.name + ".partial.npz")
    np.savez_compressed(
        partial,
        format=np.int64(BOOK_FORMAT),
        own=np.array([k[0] for k in keys], dtype=np.uint64),
        opp=np.array([k[1] for k in keys], dtype=np.uint64),
        square=np.array([entries[k].square for k in keys], dtype=np.int8),
        score=np.array([entries[k].score for k in keys], dtype=np.float32),
        depth=np.array([entries[k].depth for k in keys], dtype=np.int8),
        **{f"info_{name}": np.str_(value) for name, value in info.items()},
    )
    partial.replace(out)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m othello_arena.agents.champion.book",
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
        "command": "python -m othello_arena.agents.champion.book " + " ".join(argv if argv is not None else sys.argv[1:]),
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
