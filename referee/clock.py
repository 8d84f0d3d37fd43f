"""The clock of one side: how long it may think, and when its time is up (PROTOCOL.md section 4).

The one place of the rule, used by the referee's games (:mod:`.game`) and
by the conformance checker (:mod:`othello_arena.agents.check`):

- a :class:`TimeControl` is a side's setting, fixed for the game: seconds
  per move (``None``: no limit, a person's default), the grace margin added
  to every deadline, and the start-up allowance on the side's first move;
- a :class:`Clock` is a side's clock while the game runs: it runs from the
  moment its ``NAME.in`` is in place (:meth:`Clock.start`) to the moment its
  complete move is read (:meth:`Clock.stop`), says when the turn's time is
  up (:meth:`Clock.deadline`), and sums the side's thinking time.

The game loop asks the clock and never does the arithmetic itself, so a
game clock (a bank with an increment, as cutechess's ``TimeControl``) goes
in here: the setting gains its base and increment, the clock its bank
(:meth:`Clock.allowance` then the least of the per-move cap and the bank,
:meth:`Clock.stop` takes the move's time from the bank and adds the
increment), and the game loop stays as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

GRACE_SECONDS = 0.25  # PROTOCOL.md section 4: margin for file-event delivery
STARTUP_SECONDS = 5.0  # PROTOCOL.md section 4: extra time on an agent's first move, to start up


@dataclass(frozen=True)
class TimeControl:
    """How long one side may think: ``per_move`` seconds a move (``None``: no limit), ``grace`` on every deadline, ``startup`` more on its first move.

    >>> control = TimeControl(1.0)
    >>> control.allowance(first_move=True), control.allowance(first_move=False)
    (6.25, 1.25)
    >>> control.limit_text(), control.explain(first_move=True)
    ('1 s', '1 + 0.25 s + 5 s to start up')
    """

    per_move: Optional[float]
    grace: float = GRACE_SECONDS
    startup: float = STARTUP_SECONDS

    def __post_init__(self) -> None:
        if self.per_move is not None and not self.per_move > 0:
            raise ValueError(f"time per move must be positive or None (no limit), got {self.per_move!r}")
        for name in ("grace", "startup"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)!r}")

    @property
    def limited(self) -> bool:
        """Whether the side has a time limit at all (a person may have none)."""
        return self.per_move is not None

    def allowance(self, first_move: bool) -> Optional[float]:
        """Seconds from a turn's start to its deadline: the time per move, the grace, and on the first move the start-up."""
        if self.per_move is None:
            return None
        return self.per_move + self.grace + (self.startup if first_move else 0.0)

    def deadline(self, since: float, first_move: bool) -> Optional[float]:
        """When a turn that started at ``since`` (``time.monotonic()``) runs out of time; ``None``: never."""
        allowance = self.allowance(first_move)
        return None if allowance is None else since + allowance

    def limit_text(self) -> str:
        """The limit as the timeout messages name it: ``"5 s"`` (``"no limit"``)."""
        return "no limit" if self.per_move is None else f"{self.per_move:g} s"

    def limit_applied(self, first_move: bool) -> str:
        """The limit and the deadline it gave, as a fault names them: ``"1 s (1.25 s with grace)"``.

        >>> TimeControl(1.0).limit_applied(first_move=True)
        '1 s (6.25 s with grace and start-up)'
        """
        allowance = self.allowance(first_move)
        if allowance is None:
            return "no limit"
        extra = "grace and start-up" if first_move and self.startup else "grace"
        return f"{self.limit_text()} ({allowance:g} s with {extra})"

    def explain(self, first_move: bool) -> str:
        """The whole allowance, part by part: ``"5 + 0.25 s"``, with ``" + 5 s to start up"`` on a first move."""
        if self.per_move is None:
            return "no limit"
        startup = f" + {self.startup:g} s to start up" if first_move and self.startup else ""
        return f"{self.per_move:g} + {self.grace:g} s{startup}"


class Clock:
    """One side's clock in a game: started when its turn begins, stopped when its move is read.

    ``used`` is the side's thinking time so far (every move it was charged
    for), ``moves`` the number of those moves: the first gets the start-up
    allowance.  A person asked again after a bad ``NAME.out`` is not
    charged: the clock runs on from the same start.
    """

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.used = 0.0
        self.moves = 0
        self.started: Optional[float] = None  # when the current turn began; None between turns

    @property
    def first_move(self) -> bool:
        """Whether the side has not been charged for a move yet (its next one gets the start-up allowance)."""
        return self.moves == 0

    def allowance(self) -> Optional[float]:
        """Seconds the side's next move may take, grace included (``None``: no limit)."""
        return self.control.allowance(self.first_move)

    def start(self, at: float) -> None:
        """The side's turn begins at ``at`` (``time.monotonic()``): its ``NAME.in`` is in place."""
        self.started = at

    def deadline(self, since: Optional[float] = None) -> Optional[float]:
        """When the side's time for its next move is up, counted from ``since`` (default: the turn's start)."""
        start = self.started if since is None else since
        assert start is not None, "the clock has not started"
        return self.control.deadline(start, self.first_move)

    def elapsed(self, at: float) -> float:
        """Seconds the current turn has run at ``at``."""
        assert self.started is not None, "the clock has not started"
        return at - self.started

    def expired(self, at: float) -> bool:
        """Whether a move read at ``at`` comes too late."""
        deadline = self.deadline()
        return deadline is not None and at > deadline

    def stop(self, at: float) -> float:
        """The turn ends with a move read at ``at``: charge the side, and return the move's seconds."""
        seconds = self.elapsed(at)
        self.used += seconds
        self.moves += 1
        self.started = None
        return seconds

    def limit_text(self) -> str:
        """The limit as a timeout message names it (see :meth:`TimeControl.limit_text`)."""
        return self.control.limit_text()

    def limit_applied(self) -> str:
        """The limit of the side's current (or next) move and its deadline (see :meth:`TimeControl.limit_applied`)."""
        return self.control.limit_applied(self.first_move)

    def explain(self) -> str:
        """The next move's allowance, part by part (see :meth:`TimeControl.explain`)."""
        return self.control.explain(self.first_move)


__all__ = ["GRACE_SECONDS", "STARTUP_SECONDS", "Clock", "TimeControl"]
