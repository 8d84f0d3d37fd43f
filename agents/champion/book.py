"""The champion's opening book: positions of the first moves, each with the move of the engine's own deep search.

Made by the engine itself (:mod:`.book_building`) from the start position and
the balanced openings, and shipped as ``data/book.npz``.  A position is stored
in the canonical form of its eight mirror images
(:func:`...protocol.openings.symmetric_boards`: the least pair of the side to
move's and the other side's discs), so one entry covers every image, whatever
the colour to move; the move is stored in that orientation and turned back to
the board of the game on lookup (:meth:`OpeningBook.lookup`).  This module
imports nothing of the engine: looking up needs no compiled code.

Only the champion agent (:class:`.agent.ChampionStrategy`) consults the book.
The engine itself never does: ``othello analyze`` reports its own search, the
opening suite's generator (``othello openings generate``, the ladder's
openings) scores openings with the engine, and the checker plays its own moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from ...protocol import Board, Move, square_name
from ...protocol.openings import symmetric_boards

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
    own, opp, squares, scores, depths = arrays
    return OpeningBook(own, opp, squares, scores, depths, info)


# -- the file ----------------------------------------------------------------------------------------------


@dataclass
class Entry:
    """A position's line of the book file, the position being its key."""

    square: int  # in the canonical orientation
    score: float
    depth: int


def write_book(out: Path, entries: dict[tuple[int, int], Entry], info: dict[str, str]) -> None:
    """Write the book file (through a temporary file, so a reader never sees half of one)."""
    keys = sorted(entries)
    partial = out.with_name(out.name + ".partial.npz")
    extra: dict[str, Any] = {f"info_{name}": np.str_(value) for name, value in info.items()}
    np.savez_compressed(
        partial,
        format=np.int64(BOOK_FORMAT),
        own=np.array([k[0] for k in keys], dtype=np.uint64),
        opp=np.array([k[1] for k in keys], dtype=np.uint64),
        square=np.array([entries[k].square for k in keys], dtype=np.int8),
        score=np.array([entries[k].score for k in keys], dtype=np.float32),
        depth=np.array([entries[k].depth for k in keys], dtype=np.int8),
        **extra,
    )
    partial.replace(out)
