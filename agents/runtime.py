"""The agent side of the file protocol, for agents written in Python.

A *strategy* is a plain function ``(board, colour, time_left) -> move``: it
gets a copy of the position (immutable anyway), its own colour and the
seconds left before the referee's deadline for this move, and returns a
legal :class:`~othello_arena.protocol.Move`.  It may instead return
``(move, comments)``; each comment becomes a ``(C ...)`` line before the move.

:func:`run_agent` runs a strategy exactly as ``protocol/PROTOCOL.md`` says a
program behaves::

    from othello_arena.agents.runtime import run_agent

    def first_move(board, colour, time_left):
        return board.legal_moves()[0]

    raise SystemExit(run_agent(first_move, "alice"))

It waits for ``NAME.in`` (file events through watchdog, with polling as a
fallback), reads and deletes it, checks every opponent move with the rules
core (seed 003: an illegal one is printed and the agent claims the win),
notices the end of the game itself, and writes ``NAME.out`` atomically.
It understands openings (PROTOCOL.md section 8): the moves after the colour
in the first ``NAME.in`` are the moves already played, of either colour, and
play goes on from there.  A strategy needs nothing for that (it gets the
board); one that keeps a position of its own (the GTP bridge) may have a
method ``opening(moves)``, called with those moves before its first turn;
one that manages a game clock itself may have a method ``clock(bank)``,
called with the bank before each of its moves under a clock.
On a bigger board (PROTOCOL.md section 9) the first ``NAME.in`` has a size
line after the colour, ``(SIZE 10)``: the board is then 10x10, and an agent
that does not play that size (``sizes``) says so and exits.
Under a game clock (PROTOCOL.md section 10) each ``NAME.in`` that asks for
a move ends with the clock line, ``(CLOCK 12.345)``, the seconds left in
our bank: the strategy's ``time_left`` is then a share of the bank
(:func:`bank_budget`), not ``OTHELLO_TIME``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Callable, Optional, Sequence, TextIO, Tuple, Union

from ..protocol import (
    BOARD_SIZES,
    Board,
    Colour,
    Comment,
    IllegalMoveError,
    Move,
    ParseError,
    format_comment,
    format_move,
    parse_colour,
    parse_line,
    parse_size,
    popcount,
)
from ..protocol.notation import is_clock_line, is_end_line, is_size_line, parse_clock_line

Answer = Union[Move, Tuple[Move, Sequence[str]]]
Strategy = Callable[[Board, Colour, float], Answer]

DEFAULT_TIME = 60.0
POLL_SECONDS = 0.05  # fallback poll; file events normally wake us far sooner

# Exit codes of an agent process.
EXIT_OK = 0  # the game ended (seen on the board, by the end line, or won on an illegal opponent move)
EXIT_PROTOCOL_ERROR = 2  # NAME.in held something that is not the protocol
EXIT_ORPHANED = 4  # the process that started us (the referee) is gone: nobody will write NAME.in


MIN_MOVES_LEFT = 8  # plan as if at least this many of our moves were left: a bank is never spent in one move


def game_clock() -> tuple[Optional[tuple[float, float]], Optional[float]]:
    """The game clock the referee told us, ``((base, increment), cap per move)`` from ``$OTHELLO_CLOCK`` and ``$OTHELLO_MOVE_CAP``; ``(None, None)`` without."""
    text = os.environ.get("OTHELLO_CLOCK", "").strip()
    if not text:
        return None, None
    base, _, increment = text.partition("+")
    try:
        clock = (float(base), float(increment or 0))
        cap_text = os.environ.get("OTHELLO_MOVE_CAP", "").strip()
        return clock, float(cap_text) if cap_text else None
    except ValueError:
        raise ValueError(f"OTHELLO_CLOCK={text!r} is not BASE+INC in seconds (or OTHELLO_MOVE_CAP not a number)") from None


def bank_budget(bank: float, increment: float, empties: int, cap: Optional[float] = None) -> float:
    """Seconds to think on a move with ``bank`` seconds left: the bank spread over our moves still to come, plus most of the increment.

    Never more than 0.6 of the bank (the increment comes only after the
    move) nor 0.9 of a cap per move.  The starters in other languages use
    the same rule (agents/examples/).

    >>> bank_budget(300.0, 2.0, 60), bank_budget(3.0, 0.1, 10), round(bank_budget(0.1, 0.1, 20), 3)
    (11.6, 0.455, 0.06)
    """
    moves_left = max(MIN_MOVES_LEFT, (empties + 1) // 2)
    budget = min(bank / moves_left + 0.8 * increment, 0.6 * bank)
    return budget if cap is None else min(budget, 0.9 * cap)


class RefereeGone(Exception):
    """The agent's parent process died while the agent waited for ``NAME.in``."""


def default_time(value: Optional[float] = None) -> float:
    """Seconds per move: ``value`` if given, else ``$OTHELLO_TIME``, else 60."""
    if value is not None:
        return float(value)
    text = os.environ.get("OTHELLO_TIME", "").strip()
    if not text:
        return DEFAULT_TIME
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(f"OTHELLO_TIME={text!r} is not a number of seconds") from None
    if seconds <= 0:
        raise ValueError(f"OTHELLO_TIME={text!r} must be positive")
    return seconds


class InboxWatcher:
    """Waits for one file to appear in a directory.

    Uses watchdog's file events when it can start an observer, and polls
    every :data:`POLL_SECONDS` anyway, so a missed event (or a machine where
    inotify is exhausted) only costs a few milliseconds.
    """

    def __init__(self, path: Path) -> None:
        self._parent = os.getppid()
        self.path = path
        self._event = threading.Event()
        self._observer = None
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer

            watcher = self

            class _Handler(FileSystemEventHandler):
                def on_any_event(self, event) -> None:  # type: ignore[no-untyped-def]
                    # Any event in the directory just means "look again".
                    watcher._event.set()

            observer = Observer()
            observer.daemon = True
            observer.schedule(_Handler(), str(path.parent), recursive=False)
            observer.start()
            self._observer = observer
        except Exception:  # pragma: no cover - depends on the machine
            self._observer = None

    def wait(self) -> None:
        """Block until the file exists.

        Raises :class:`RefereeGone` if the parent process dies meanwhile (a
        referee killed with SIGKILL cannot stop us, so we stop ourselves).
        """
        while not self.path.exists():
            self._event.wait(POLL_SECONDS)
            self._event.clear()
            if os.getppid() != self._parent:
                raise RefereeGone(f"the process that started this agent ({self._parent}) is gone")

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=1.0)
            self._observer = None

    def __enter__(self) -> "InboxWatcher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_and_delete(path: Path) -> str:
    """Read ``path`` and delete it (the referee writes it by atomic rename)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    return text


def write_atomically(path: Path, text: str) -> None:
    """Write ``path.tmp`` then rename it to ``path``: the reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def choose(strategy: Strategy, board: Board, colour: Colour, time_left: float, log: TextIO) -> tuple[Move, list[str]]:
    """Ask the strategy for a move, and make sure the answer is legal.

    A strategy that raises or returns an illegal move is a bug; rather than
    lose the game for it, the agent reports it on ``log`` and plays the
    first legal move.
    """
    legal = board.legal_moves()
    try:
        answer = strategy(board, colour, time_left)
        move, comments = (answer, []) if isinstance(answer, Move) else (answer[0], list(answer[1]))
    except Exception:
        log.write(f"strategy failed:\n{traceback.format_exc()}playing {legal[0].line()} instead\n")
        return legal[0], []
    if move not in legal:
        why = board.why_illegal(move) if isinstance(move, Move) else "not a Move"
        log.write(f"strategy returned {move!r} ({why}); playing {legal[0].line()} instead\n")
        return legal[0], []
    return move, [str(c) for c in comments]


class AgentSession:
    """One game seen from the agent's side: the board, our colour, the files."""

    def __init__(self, strategy: Strategy, name: str, directory: Path, time_per_move: float, log: TextIO,
                 sizes: Sequence[int] = BOARD_SIZES) -> None:
        self.strategy = strategy
        self.sizes = tuple(sizes)
        self.name = name
        self.inbox = directory / f"{name}.in"
        self.outbox = directory / f"{name}.out"
        self.time_per_move = time_per_move
        self.log = log
        self.board = Board()
        self.colour: Optional[Colour] = None
        self._history: list[Move] = []  # the moves of the first file (an opening)
        self.clock, self.move_cap = game_clock()
        self.bank: Optional[float] = None  # our bank, from the last clock line

    def run(self) -> int:
        with InboxWatcher(self.inbox) as watcher:
            while True:
                watcher.wait()
                started = time.monotonic()
                text = read_and_delete(self.inbox)
                status = self.handle(text)
                if status is not None:
                    return status
                if self.colour is self.board.to_move:
                    finished = self.move(started)
                    if finished:
                        self.wait_until_collected()
                        return EXIT_OK

    def handle(self, text: str) -> Optional[int]:
        """Take in one ``NAME.in``; return an exit code if the agent must stop.

        In the first file, the moves after the colour line are the moves
        already played (an opening, or a person's colour with White's first
        move): moves of either colour, each checked by the rules.
        """
        first_file = self.colour is None
        for raw in text.splitlines():
            if not raw.strip():
                continue
            if self.colour is None:
                try:
                    self.colour = parse_colour(raw)
                except ParseError as exc:
                    self.log.write(f"{self.name}: expected my colour in {self.inbox.name}: {exc}\n")
                    return EXIT_PROTOCOL_ERROR
                continue
            if is_end_line(raw):
                return EXIT_OK
            if is_clock_line(raw):
                try:
                    self.bank = parse_clock_line(raw)
                except ParseError as exc:
                    self.log.write(f"{self.name}: cannot read {self.inbox.name}: {exc}\n")
                    return EXIT_PROTOCOL_ERROR
                continue
            if first_file and not self._history and is_size_line(raw):
                try:
                    size = parse_size(raw)
                except ParseError as exc:
                    self.log.write(f"{self.name}: cannot read {self.inbox.name}: {exc}\n")
                    return EXIT_PROTOCOL_ERROR
                if size not in self.sizes:
                    plays = ", ".join(f"{n}x{n}" for n in self.sizes)
                    self.log.write(f"{self.name}: this game is on a {size}x{size} board, and this agent plays "
                                   f"only on {plays}\n")
                    return EXIT_PROTOCOL_ERROR
                self.board = Board.start(size)
                continue
            try:
                parsed = parse_line(raw, self.board.size)
            except ParseError as exc:
                self.log.write(f"{self.name}: cannot read {self.inbox.name}: {exc}\n")
                return EXIT_PROTOCOL_ERROR
            if isinstance(parsed, Comment):
                continue
            if first_file:
                try:
                    self.board = self.board.play(parsed)
                    self._history.append(parsed)
                except IllegalMoveError as exc:
                    self.log.write(f"{self.name}: the opening in {self.inbox.name} has an {exc}\n")
                    return EXIT_PROTOCOL_ERROR
                continue
            if parsed.colour is self.colour:
                self.log.write(f"{self.name}: {self.inbox.name} holds my own colour's move {parsed.line()}\n")
                return EXIT_PROTOCOL_ERROR
            if not parsed and parsed.colour is self.board.to_move and self.board.has_move():
                # With --illegal lose-turn the referee relays an illegal move as a pass
                # (PROTOCOL.md section 5): the opponent has lost its turn.
                self.board = self.board.play_unchecked(parsed)
                continue
            try:
                self.board = self.board.play(parsed)
            except IllegalMoveError as exc:
                # Seed 003: check the opponent's move; if illegal, say so and claim the game.
                message = f"{self.name}: the opponent played an {exc}; {self.colour.full_name} ({self.colour.value}) wins\n"
                self.log.write(message)
                print(message, end="", flush=True)
                return EXIT_OK
        if first_file and self._history:
            tell = getattr(self.strategy, "opening", None)
            if callable(tell):
                tell(self.history())
        if self.colour is not None and self.board.is_game_over():
            return EXIT_OK  # the opponent's move ended the game: no end line needed
        return None

    def history(self) -> list[Move]:
        """The moves played so far (kept while the first file is read)."""
        return list(self._history)

    def move(self, started: float) -> bool:
        """Play our move; return whether it ended the game."""
        assert self.colour is not None
        budget = self.time_per_move
        if self.bank is not None:
            increment = self.clock[1] if self.clock else 0.0
            budget = bank_budget(self.bank, increment, popcount(self.board.empty), self.move_cap)
        time_left = budget - (time.monotonic() - started)
        tell = getattr(self.strategy, "clock", None)
        if callable(tell):
            tell(self.bank)  # None without a game clock
        move, comments = choose(self.strategy, self.board, self.colour, time_left, self.log)
        text = "".join(format_comment(c) for c in comments) + format_move(move)
        write_atomically(self.outbox, text)
        self.board = self.board.play(move)
        return self.board.is_game_over()

    def wait_until_collected(self) -> None:
        """After our game-ending move, give the referee time to take it before we exit.

        A referee may see our exit before it reads ``NAME.out``; waiting until
        the file is taken or the end line arrives (at most a few seconds)
        avoids looking like a crash.
        """
        deadline = time.monotonic() + min(self.time_per_move, 5.0) + 0.5
        while self.outbox.exists() and not self.inbox.exists() and time.monotonic() < deadline:
            time.sleep(0.02)


def run_agent(
    strategy: Strategy,
    name: str,
    directory: Union[str, os.PathLike[str]] = ".",
    time_per_move: Optional[float] = None,
    log: Optional[TextIO] = None,
    sizes: Sequence[int] = BOARD_SIZES,
) -> int:
    """Play one game through ``NAME.in``/``NAME.out`` in ``directory``; return the exit code.

    ``time_per_move`` defaults to ``$OTHELLO_TIME``, else 60 seconds.
    Problems are reported on ``log`` (default: standard error).  ``sizes``
    are the board sizes the strategy plays (a game of another size is
    refused with a sentence on ``log``).
    """
    session = AgentSession(strategy, name, Path(directory), default_time(time_per_move), log or sys.stderr, sizes)
    try:
        return session.run()
    except RefereeGone as exc:
        print(f"{name}: {exc}; exiting", file=log or sys.stderr)
        return EXIT_ORPHANED
