"""The champion as a strategy for the agent runtime, with its time manager.

The engine is loaded (numba's compiled code: from the cache, or compiled the
first time) in a background thread as soon as the strategy is made, so the
agent is ready to watch for its files at once.  The referee compiles it
before the game (:mod:`.prepare`), so loading takes about a second; should a
move come before the engine is ready all the same (a cache that could not be
prepared), the strategy answers with seed 002's player in plain Python
(:func:`fallback_move`), as strong as ``paper-normal`` or stronger, instead of
losing on time.

The strategy plays from its opening book (:mod:`.book`, loaded first, in
milliseconds) wherever the position, or one of its mirror images, is in it;
elsewhere it searches.  A book that cannot be read leaves the search to play
every move, and the first move's comment says why.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from ...protocol import Board, Colour, Move, parse_obf
from ...referee.clock import GRACE_SECONDS
from ..players import SAFETY, paper_searcher

if TYPE_CHECKING:
    from .book import OpeningBook
    from .engine import Engine


def move_budget(time_left: float) -> float:
    """Seconds the search may use when ``time_left`` remain before the referee's deadline.

    PROTOCOL.md asks to answer by 0.9 of the time (the referee's grace
    margin of 0.25 s comes on top).  On a loaded machine the move reaches
    the referee up to about 0.4 s after the search stops (waking up,
    writing the file, the referee's file event), measured in matches with
    two games at once; so the budget is 0.9 of the time less half a
    second, and never more than 0.8 of it.  Below about a second that
    leaves nothing, so the budget never falls under 0.3 of the time: the
    move still arrives within the time plus the grace margin even 0.4 s late.
    """
    return max(0.01, 0.3 * time_left, min(0.8 * time_left, 0.9 * time_left - 0.5))


LATENCY_SECONDS = 0.5  # from the end of a search to the referee's reading of the move, on a loaded machine (above)


def bank_move_budget(share: float, bank: float) -> float:
    """Seconds of search under a game clock, given the runtime's ``share`` of the bank (:func:`~othello_arena.agents.runtime.bank_budget`).

    The share is a target, not a deadline: the deadline is the whole bank
    plus the grace margin, so nearly all of the share is searched, keeping
    the half second of latency of :func:`move_budget` from the bank's end.

    >>> bank_move_budget(10.0, 100.0), bank_move_budget(0.3, 0.5), bank_move_budget(0.1, 0.2)
    (9.0, 0.25, 0.01)
    """
    return max(0.01, min(0.9 * share, bank + GRACE_SECONDS - LATENCY_SECONDS))


STARTUP_WAIT = 2.0  # seconds of the referee's start-up allowance the first move may wait for the engine
FALLBACK_DEPTH = 6  # the deepening stops on the clock well before, at a few seconds a move


def fallback_move(board: Board, seconds: float) -> Move:
    """Seed 002's player in plain Python, deepening (depth 1, 2, ...) for about ``seconds``.

    The same search and evaluation as ``paper-normal`` (depth 2) and
    ``paper-hard`` (depth 3), so it plays like paper-normal or better
    whenever depth 2 fits in the time (bench/RESULTS.md measures it).
    """
    # paper_searcher stops at SAFETY of the time it is given.
    return paper_searcher(FALLBACK_DEPTH)(board, board.to_move, seconds / SAFETY)


# A position with four empty squares (e8-h8), X (White) to move: the solver's warm-up.
_FOUR_EMPTIES = parse_obf("X" * 30 + "O" * 30 + "---- X")


def load_engine(tt_bits: Optional[int] = None) -> "Engine":
    """A new engine with every compiled function it calls in a game loaded (or compiled) and run once.

    :mod:`.prepare` runs this to fill the compiled-code cache, so that a
    game never compiles: the cache may be read-only then.
    """
    from .engine import DEFAULT_TT_BITS, Engine

    engine = Engine(tt_bits=tt_bits or DEFAULT_TT_BITS)
    # Every search path, each on a position where it ends at once: the first call of a
    # compiled function loads all of its code whatever the position.  (The solver on the
    # start position, cut short after 2000 nodes, took 0.1 s of analyze's start-up: its
    # node limit is looked at every 1024 nodes, each with a 3-ply ordering search.)
    engine.think(Board(), max_depth=3)
    engine.solve_window(_FOUR_EMPTIES, -64, 64)
    engine.evaluate(Board())  # called from Python when the side to move must pass
    engine.clear()
    return engine


class ChampionStrategy:
    """``(board, colour, time_left) -> (move, comments)`` backed by the compiled engine and the opening book.

    ``book``: ``True`` for the shipped book (:func:`.book.book_path`), a path
    for another book file, ``False`` for none (every move searched).
    """

    _bank: Optional[float] = None  # under a game clock: the bank before this move (see :meth:`clock`)
    _book: Optional["OpeningBook"] = None
    _notes: tuple[str, ...] = ()  # said in the next move's comments (a book that could not be read)

    def __init__(self, tt_bits: Optional[int] = None, background: bool = True,
                 book: Union[bool, str, Path] = True) -> None:
        self._engine: Optional[Engine] = None
        self._book_source = book
        self._ready = threading.Event()
        self._error: Optional[BaseException] = None
        self._tt_bits = tt_bits
        self._first_move = True
        if background:
            threading.Thread(target=self._load, name="champion-load", daemon=True).start()
        else:
            self._load()

    def _load_book(self) -> None:
        if self._book_source is False:
            return
        from .book import BookError, load_book

        try:
            self._book = load_book(None if self._book_source is True else self._book_source)
        except BookError as exc:
            note = f"champion plays without its opening book: {exc}"
            self._notes += (note,)
            print(note, file=sys.stderr, flush=True)

    def _load(self) -> None:
        self._load_book()  # milliseconds: a book move needs no engine
        try:
            self._engine = load_engine(self._tt_bits)
        except BaseException as exc:  # reported at the first move, not lost in a thread
            self._error = exc
        finally:
            self._ready.set()

    def wait_ready(self, timeout: Optional[float] = None) -> bool:
        """Wait until the engine is loaded; return whether it is."""
        self._ready.wait(timeout)
        return self._engine is not None

    @property
    def loading(self) -> bool:
        """Still loading (or compiling) the engine: neither ready nor failed yet."""
        return not self._ready.is_set()

    def clock(self, bank: Optional[float]) -> None:
        """The bank before this move under a game clock (PROTOCOL.md section 10); ``None``: a time per move."""
        self._bank = bank

    @property
    def book(self) -> Optional["OpeningBook"]:
        """The opening book in use, ``None`` when there is none (not asked for, or not readable)."""
        return self._book

    def __call__(self, board: Board, colour: Colour, time_left: float) -> tuple[Move, list[str]]:
        move, comments = self._move(board, colour, time_left)
        notes, self._notes = self._notes, ()
        return move, comments + list(notes)

    def _move(self, board: Board, colour: Colour, time_left: float) -> tuple[Move, list[str]]:
        started = time.monotonic()
        budget = move_budget(time_left) if self._bank is None else bank_move_budget(time_left, self._bank)
        if self._first_move:
            # The referee's start-up allowance (PROTOCOL.md section 4, 5 s by
            # default) is there for loading a JIT's code: a prepared cache
            # loads in about a second, so the first move may wait for it.
            self._first_move = False
            budget += STARTUP_WAIT
            self._ready.wait(STARTUP_WAIT)
        if self._book is not None:
            found = self._book.lookup(board)
            if found is not None:
                return found.move, found.comments()
        if not self._ready.is_set():
            # The loading thread held the interpreter while our NAME.in
            # arrived, so the runtime may have noticed the file late: the
            # clock is older than ``time_left`` says.
            left = budget - (time.monotonic() - started)
            return fallback_move(board, max(0.01, 0.6 * left)), ["champion engine still loading: seed 002 player"]
        if self._engine is None:
            raise RuntimeError("the champion's engine failed to load") from self._error
        remaining = budget - (time.monotonic() - started)
        result = self._engine.think(board, seconds=max(0.01, remaining))
        return result.move(colour), result.comments()


def champion_strategy() -> ChampionStrategy:
    """A fresh champion (its own engine and table), loading in the background."""
    return ChampionStrategy()
