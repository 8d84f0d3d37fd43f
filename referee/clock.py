"""The clock of one side: how long it may think, and when its time is up (PROTOCOL.md sections 4 and 10).

The one place of the rule, used by the referee's games (:mod:`.game`) and
by the conformance checker (:mod:`othello_arena.agents.check`):

- a :class:`TimeControl` is a side's setting, fixed for the game: seconds
  per move (``None``: no limit, a person's default), a game clock of
  ``base`` seconds with ``increment`` seconds after each move (issue 25:
  ``--clock 300+2``, as cutechess's time controls; ``None``: none), the
  grace margin added to every deadline, and the start-up allowance on the
  side's first move;
- a :class:`Clock` is a side's clock while the game runs: it runs from the
  moment its ``NAME.in`` is in place (:meth:`Clock.start`) to the moment its
  complete move is read (:meth:`Clock.stop`), says when the turn's time is
  up (:meth:`Clock.deadline`), sums the side's thinking time and keeps its
  bank: a move may take the least of the per-move cap and the bank (plus
  the grace, and the start-up on the first move); :meth:`Clock.stop` takes
  the move's time from the bank and adds the increment.

The game loop asks the clock and never does the arithmetic itself.

A :class:`TimeRule` is a game's rule as its settings give it (seconds per
move, a game clock, a cap on a move under it), read by :func:`time_rule`
alone from every front end and said by :attr:`TimeRule.text` alone.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable, Optional

GRACE_SECONDS = 0.25  # PROTOCOL.md section 4: margin for file-event delivery
STARTUP_SECONDS = 5.0  # PROTOCOL.md section 4: extra time on an agent's first move, to start up
MAX_CLOCK_BASE = 24 * 3600.0  # a bank beyond a day is a typo (milliseconds?), not a game
MAX_CLOCK_INCREMENT = 3600.0
FAIR_SHARE_MOVES = 30  # a side's moves in a game of Othello, about: OTHELLO_TIME under a clock spreads the bank over them
_CLOCK_FORM = re.compile(r"\s*([^+\s]*)\s*\+\s*([^+\s]*)\s*")


def parse_clock(text: str) -> tuple[float, float]:
    """``"BASE+INC"`` (seconds) as ``(base, increment)``; a bad value raises ``ValueError`` naming it and the form.

    >>> parse_clock("300+2"), parse_clock("3+0.1"), parse_clock("60+0")
    ((300.0, 2.0), (3.0, 0.1), (60.0, 0.0))
    >>> parse_clock("5")
    Traceback (most recent call last):
    ValueError: clock '5': expected BASE+INC in seconds, e.g. 300+2 (5 minutes, 2 s more after each move) or 60+0
    >>> parse_clock("+1")
    Traceback (most recent call last):
    ValueError: clock '+1': the base (before '+') is missing: expected BASE+INC in seconds, e.g. 300+2 (5 minutes, 2 s more after each move) or 60+0
    """
    form = "expected BASE+INC in seconds, e.g. 300+2 (5 minutes, 2 s more after each move) or 60+0"
    match = _CLOCK_FORM.fullmatch(text)
    if match is None:
        raise ValueError(f"clock {text!r}: {form}")
    numbers = []
    for part, what, high in ((match.group(1), "base (before '+')", MAX_CLOCK_BASE),
                             (match.group(2), "increment (after '+')", MAX_CLOCK_INCREMENT)):
        if not part:
            raise ValueError(f"clock {text!r}: the {what} is missing: {form}")
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"clock {text!r}: the {what} {part!r} is not a number of seconds: {form}") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"clock {text!r}: the {what} must be a number of seconds, 0 or more: {form}")
        if value > high:
            raise ValueError(f"clock {text!r}: the {what} of {value:g} s is more than the {high:g} s allowed: {form}")
        numbers.append(value)
    if numbers[0] <= 0:
        raise ValueError(f"clock {text!r}: the base must be more than 0 seconds: {form}")
    return numbers[0], numbers[1]


def format_clock(base: float, increment: float) -> str:
    """``(300.0, 2.0)`` as ``"300+2"``, the form :func:`parse_clock` reads."""
    return f"{base:g}+{increment:g}"


@dataclass(frozen=True)
class TimeControl:
    """How long one side may think: ``per_move`` seconds a move (``None``: no cap), a game clock of ``base`` seconds and ``increment`` after each move (``None``: none), ``grace`` on every deadline, ``startup`` more on its first move.

    >>> control = TimeControl(1.0)
    >>> control.allowance(first_move=True), control.allowance(first_move=False)
    (6.25, 1.25)
    >>> control.limit_text(), control.explain(first_move=True)
    ('1 s', '1 + 0.25 s + 5 s to start up')
    >>> clocked = TimeControl(2.0, base=3.0, increment=0.1)
    >>> clocked.clock_text, clocked.allowance(first_move=False), clocked.allowance(False, bank=0.5)
    ('3+0.1', 2.25, 0.75)
    >>> clocked.fair_share()
    0.2
    """

    per_move: Optional[float]
    grace: float = GRACE_SECONDS
    startup: float = STARTUP_SECONDS
    base: Optional[float] = None
    increment: float = 0.0

    def __post_init__(self) -> None:
        if self.per_move is not None and not self.per_move > 0:
            raise ValueError(f"time per move must be positive or None (no limit), got {self.per_move!r}")
        for name in ("grace", "startup", "increment"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)!r}")
        if self.base is not None:
            parse_clock(format_clock(self.base, self.increment))  # the same bounds as the command line's

    @property
    def limited(self) -> bool:
        """Whether the side has a time limit at all (a person may have none)."""
        return self.per_move is not None or self.base is not None

    @property
    def clock_text(self) -> str:
        """The game clock as ``"300+2"``; ``""`` without one."""
        return "" if self.base is None else format_clock(self.base, self.increment)

    def thinking_time(self, bank: Optional[float] = None) -> Optional[float]:
        """Seconds a move may think, before grace and start-up: the least of the cap and the bank (default: a full bank)."""
        bank = self.base if bank is None else bank
        limits = [limit for limit in (self.per_move, bank) if limit is not None]
        return min(limits) if limits else None

    def allowance(self, first_move: bool, bank: Optional[float] = None) -> Optional[float]:
        """Seconds from a turn's start to its deadline: the thinking time, the grace, and on the first move the start-up."""
        thinking = self.thinking_time(bank)
        if thinking is None:
            return None
        return thinking + self.grace + (self.startup if first_move else 0.0)

    def deadline(self, since: float, first_move: bool) -> Optional[float]:
        """When a turn that started at ``since`` (``time.monotonic()``) runs out of time, with a full bank; ``None``: never."""
        allowance = self.allowance(first_move)
        return None if allowance is None else since + allowance

    def fair_share(self) -> Optional[float]:
        """Seconds per move a side told only ``OTHELLO_TIME`` should think: the cap, or under a clock its bank spread over a game's moves plus the increment, within the cap.

        An agent written to the plain protocol thinks ``OTHELLO_TIME`` a move
        and so finishes a game under a clock it does not know of.
        """
        if self.base is None:
            return self.per_move
        share = float(f"{self.base / FAIR_SHARE_MOVES + self.increment:.3g}")
        return share if self.per_move is None else min(share, self.per_move)

    def limit_text(self, bank: Optional[float] = None) -> str:
        """The limit as the timeout messages name it: ``"5 s"``, ``"no limit"``, under a clock ``"1.2 s (clock 3+0.1: 1.2 s left before the move)"``."""
        thinking = self.thinking_time(bank)
        if thinking is None:
            return "no limit"
        if self.base is None:
            return f"{thinking:g} s"
        left = self.base if bank is None else bank
        return f"{thinking:.3g} s (clock {self.clock_text}: {left:.3f} s left before the move)"

    def limit_applied(self, first_move: bool, bank: Optional[float] = None) -> str:
        """The limit and the deadline it gave, as a fault names them: ``"1 s (1.25 s with grace)"``.

        >>> TimeControl(1.0).limit_applied(first_move=True)
        '1 s (6.25 s with grace and start-up)'
        """
        allowance = self.allowance(first_move, bank)
        if allowance is None:
            return "no limit"
        extra = "grace and start-up" if first_move and self.startup else "grace"
        return f"{self.limit_text(bank)} ({allowance:g} s with {extra})"

    def explain(self, first_move: bool, bank: Optional[float] = None) -> str:
        """The whole allowance, part by part: ``"5 + 0.25 s"``, with ``" + 5 s to start up"`` on a first move."""
        thinking = self.thinking_time(bank)
        if thinking is None:
            return "no limit"
        startup = f" + {self.startup:g} s to start up" if first_move and self.startup else ""
        return f"{thinking:.3g} + {self.grace:g} s{startup}"


# The seconds per move where none is given and there is no game clock: one game at the command line
# (``othello play``, ``othello match``), an agent's check (``othello check``), a file (a tournament's, class.toml).
PLAY_SECONDS = 60.0
CHECK_SECONDS = 5.0
FILE_SECONDS = 1.0


@dataclass(frozen=True)
class TimeRule:
    """A game's time rule for its programs: seconds per move, a game clock, or a clock with a cap on a move.

    The one value every front end makes (:func:`time_rule`: the command
    line's ``--time``/``--clock``, a tournament file's and class.toml's
    ``time_per_move``/``clock``) and every page and line says (:attr:`text`).
    ``per_move`` is ``None`` (no cap) only under a clock.

    >>> TimeRule(2.0).text, TimeRule(None, (300.0, 2.0)).text, TimeRule(10.0, (300.0, 2.0)).text
    ('2 s per move', 'clock 300+2', 'clock 300+2, 10 s per move at most')
    >>> TimeRule(None, (300.0, 2.0)).move_seconds  # 300 s over 30 moves, plus 2
    12.0
    """

    per_move: Optional[float]
    clock: Optional[tuple[float, float]] = None

    def __post_init__(self) -> None:
        if self.per_move is None and self.clock is None:
            raise ValueError("time per move may be None (no cap) only under a game clock")
        if self.per_move is not None and (isinstance(self.per_move, bool) or not self.per_move > 0):
            raise ValueError(f"time per move must be a positive number of seconds, got {self.per_move!r}")
        if self.clock is not None:
            parse_clock(format_clock(*self.clock))  # the bounds of --clock
            object.__setattr__(self, "clock", (float(self.clock[0]), float(self.clock[1])))
        if self.per_move is not None:
            object.__setattr__(self, "per_move", float(self.per_move))

    @property
    def clock_text(self) -> str:
        """The game clock as ``"300+2"``; ``""`` without one."""
        return "" if self.clock is None else format_clock(*self.clock)

    @property
    def control(self) -> TimeControl:
        """The time control of a program under this rule (no odds: see ``GameConfig.time_control``)."""
        if self.clock is None:
            return TimeControl(self.per_move)
        return TimeControl(self.per_move, base=self.clock[0], increment=self.clock[1])

    @property
    def move_seconds(self) -> float:
        """Seconds a move should take: the per-move time, or under a clock without a cap a fair share of the bank."""
        share = self.control.fair_share()
        assert share is not None, "a rule always limits a program's time"
        return share

    @property
    def text(self) -> str:
        """The rule as every page and line says it: ``2 s per move``, ``clock 300+2``, ``clock 300+2, 10 s per move at most``."""
        parts = [f"clock {self.clock_text}"] if self.clock is not None else []
        if self.per_move is not None:
            parts.append(f"{self.per_move:g} s per move" + (" at most" if self.clock is not None else ""))
        return ", ".join(parts)

    def text_with_odds(self, agent_times: Iterable[tuple[str, float]] = (),
                       agent_clocks: Iterable[tuple[str, tuple[float, float]]] = ()) -> str:
        """:attr:`text` with the agents' own times and clocks (odds): ``2 s per move (rhino 120 s, fox clock 60+1)``."""
        own = [f"{label} {seconds:g} s" for label, seconds in agent_times]
        own += [f"{label} clock {format_clock(*clock)}" for label, clock in agent_clocks]
        return self.text + (f" ({', '.join(own)})" if own else "")

    def file_keys(self) -> dict[str, float | str]:
        """The rule as a file's keys (a tournament file's ``[tournament]``, class.toml's ``[class]``): what :func:`time_rule` reads back."""
        keys: dict[str, float | str] = {}
        if self.per_move is not None:
            keys["time_per_move"] = self.per_move
        if self.clock is not None:
            keys["clock"] = self.clock_text
        return keys


def time_rule(time_per_move: Optional[float], clock: Optional[str], default: float) -> TimeRule:
    """The time rule of ``time_per_move`` and ``clock`` as given (``None``: not given), the one reading of every front end.

    Without a clock: the seconds given, else ``default``.  Under a clock
    the bank rules: ``time_per_move`` caps a single move only where it is
    given.  A bad clock raises ``ValueError`` naming it (:func:`parse_clock`).

    >>> time_rule(None, None, PLAY_SECONDS), time_rule(None, "300+2", PLAY_SECONDS), time_rule(5, "300+2", 1.0)
    (TimeRule(per_move=60.0, clock=None), TimeRule(per_move=None, clock=(300.0, 2.0)), TimeRule(per_move=5.0, clock=(300.0, 2.0)))
    """
    if clock is None:
        return TimeRule(default if time_per_move is None else time_per_move)
    return TimeRule(time_per_move, parse_clock(clock))


class Clock:
    """One side's clock in a game: started when its turn begins, stopped when its move is read.

    ``used`` is the side's thinking time so far (every move it was charged
    for), ``moves`` the number of those moves: the first gets the start-up
    allowance.  ``bank`` is what is left of a game clock (``None``: none):
    each move takes its seconds from it (not the start-up allowance of the
    first move), never below 0 (a move in the grace is on time), then adds
    the increment.  A person asked again after a bad ``NAME.out`` is not
    charged: the clock runs on from the same start.

    >>> clock = Clock(TimeControl(None, grace=0.25, startup=5.0, base=3.0, increment=0.1))
    >>> clock.start(0.0); clock.allowance(), clock.stop(5.5), clock.bank
    (8.25, 5.5, 2.6)
    >>> clock.start(10.0); clock.allowance(), clock.expired(12.9), clock.expired(12.8)
    (2.85, True, False)
    >>> round(clock.stop(12.8), 3), round(clock.bank, 3), clock.limit_text()
    (2.8, 0.1, '2.6 s (clock 3+0.1: 2.600 s left before the move)')
    """

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.used = 0.0
        self.moves = 0
        self.bank: Optional[float] = control.base
        self.bank_before = self.bank  # the bank when the current (or last) turn began: the timeout detail names it
        self.started: Optional[float] = None  # when the current turn began; None between turns

    @property
    def first_move(self) -> bool:
        """Whether the side has not been charged for a move yet (its next one gets the start-up allowance)."""
        return self.moves == 0

    def allowance(self) -> Optional[float]:
        """Seconds the side's next move may take, grace included (``None``: no limit)."""
        return self.control.allowance(self.first_move, self.bank)

    def start(self, at: float) -> None:
        """The side's turn begins at ``at`` (``time.monotonic()``): its ``NAME.in`` is in place."""
        self.started = at
        self.bank_before = self.bank

    def deadline(self, since: Optional[float] = None) -> Optional[float]:
        """When the side's time for its next move is up, counted from ``since`` (default: the turn's start)."""
        start = self.started if since is None else since
        assert start is not None, "the clock has not started"
        allowance = self.allowance()
        return None if allowance is None else start + allowance

    def elapsed(self, at: float) -> float:
        """Seconds the current turn has run at ``at``."""
        assert self.started is not None, "the clock has not started"
        return at - self.started

    def expired(self, at: float) -> bool:
        """Whether a move read at ``at`` comes too late."""
        deadline = self.deadline()
        return deadline is not None and at > deadline

    def stop(self, at: float) -> float:
        """The turn ends with a move read at ``at``: charge the side (its bank too), and return the move's seconds."""
        seconds = self.elapsed(at)
        if self.bank is not None:
            charged = seconds - (self.control.startup if self.first_move else 0.0)
            self.bank = max(0.0, self.bank - max(0.0, charged)) + self.control.increment
        self.used += seconds
        self.moves += 1
        self.started = None
        return seconds

    def end_without_move(self, seconds: float) -> None:
        """The turn ended in a fault before any move was read (no move in time, a crash): its ``seconds`` were used.

        Charged like :meth:`stop` (without the increment: no move was made),
        so a side's time in the record counts the turn it lost on, as it does
        for a move read too late.
        """
        if self.started is None:
            return
        if self.bank is not None:
            charged = seconds - (self.control.startup if self.first_move else 0.0)
            self.bank = max(0.0, self.bank - max(0.0, charged))
        self.used += seconds
        self.started = None

    def remaining(self, at: float) -> Optional[float]:
        """What the bank would hold if the turn running at ``at`` ended then, before the increment (``None``: no clock).

        For the displays' ticking clocks.
        """
        if self.bank is None:
            return None
        if self.started is None:
            return self.bank
        charged = self.elapsed(at) - (self.control.startup if self.first_move else 0.0)
        return max(0.0, self.bank - max(0.0, charged))

    def limit_text(self) -> str:
        """The limit of the current (or last) turn as a timeout message names it (see :meth:`TimeControl.limit_text`)."""
        return self.control.limit_text(self.bank_before)

    def limit_applied(self) -> str:
        """The limit of the side's current (or next) move and its deadline (see :meth:`TimeControl.limit_applied`)."""
        return self.control.limit_applied(self.first_move, self.bank)

    def explain(self) -> str:
        """The next move's allowance, part by part (see :meth:`TimeControl.explain`)."""
        return self.control.explain(self.first_move, self.bank)


__all__ = ["CHECK_SECONDS", "FAIR_SHARE_MOVES", "FILE_SECONDS", "GRACE_SECONDS", "PLAY_SECONDS", "STARTUP_SECONDS", "Clock",
           "TimeControl", "TimeRule", "format_clock", "parse_clock", "time_rule"]
