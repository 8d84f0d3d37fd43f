"""How each agent used its time, read from game records: the summary after ``play``, ``match`` and in the report.

One function, :func:`time_use`, reads any number of records (``game.json``
as :class:`~othello_arena.protocol.GameRecord`) and gives one
:class:`TimeUse` per agent: its moves, mean and longest move, the moves
that took more than 80 % of the limit that applied to them, under a game
clock the least it had left, the games it lost on time, and the search
depth when it writes it in its comments (``(C depth 9 ...)``).

The limit of a move is the clock module's rule (:class:`~.clock.TimeControl`):
the least of the cap per move and the bank before the move (the record
keeps the bank after each move, ``clock``), plus the start-up allowance on
an agent's first move; the grace is not part of it (a move in the grace is
on time but too close).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..protocol import Colour, GameRecord, Termination
from .clock import STARTUP_SECONDS, TimeControl, parse_clock

NEAR_LIMIT = 0.8  # a move over this share of its limit is close to losing on time
DEPTH = re.compile(r"\bdepth\s*[=:]?\s*(\d+)", re.IGNORECASE)  # "depth 9", "depth=9", "Depth: 9"


@dataclass
class TimeUse:
    """One agent's time over some games (see the module's notes)."""

    agent: str
    games: int = 0
    moves: int = 0
    seconds: float = 0.0
    longest: float = 0.0
    longest_had_startup: bool = False  # the longest move was a first one, with the start-up allowance
    near_limit: int = 0
    cap: Optional[float] = None  # seconds per move (None: no cap)
    clock: str = ""  # its game clock, "300+2" ("": none)
    least_left: Optional[float] = None  # under a clock: the least it had left after a move
    timeouts: int = 0  # games it lost on time
    depths: list[int] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return self.seconds / self.moves if self.moves else 0.0

    def line(self) -> str:
        """``champion: 22 moves, 0.28 s a move on average, 2.13 s at most, 1 over 80 % of the limit (0.5 s); ...``."""
        games = f" in {self.games} games" if self.games > 1 else ""
        parts = [f"{self.agent}: {self.moves} moves{games}, {self.mean:.2f} s a move on average, "
                 f"{self.longest:.2f} s at most"]
        if self.longest_had_startup and self.cap is not None and self.longest > NEAR_LIMIT * self.cap:
            # Else "2.07 s at most; 0 over 80 % of the limit (2 s)" reads as a miscount.
            parts[0] += f" (a first move, which has {STARTUP_SECONDS:g} s more to start up)"
        limit = (f"the least of {self.cap:g} s and the bank left" if self.cap is not None and self.clock
                 else f"{self.cap:g} s" if self.cap is not None else "the bank left")
        if self.cap is not None or self.clock:
            parts.append(f"{self.near_limit} over {NEAR_LIMIT:.0%} of the limit ({limit})".replace("%", " %"))
        if self.clock:
            parts.append(f"clock {self.clock}: {self.least_left or 0.0:.2f} s left at the least")
        if self.timeouts:
            parts.append(f"{self.timeouts} game{'s' if self.timeouts != 1 else ''} lost on time")
        if self.depths:
            low, high = min(self.depths), max(self.depths)
            span = f"depth {low}" if low == high else f"depth {low} to {high}"
            parts.append(f"{span} ({sum(self.depths) / len(self.depths):.1f} on average)")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "games": self.games, "moves": self.moves, "mean": round(self.mean, 4),
                "max": round(self.longest, 4), "near_limit": self.near_limit, "cap": self.cap,
                "clock": self.clock or None,
                "least_left": None if self.least_left is None else round(self.least_left, 4),
                "timeouts": self.timeouts,
                "depth": None if not self.depths else {"min": min(self.depths), "max": max(self.depths),
                                                       "mean": round(sum(self.depths) / len(self.depths), 2)},
                "line": self.line()}


def time_use(records: Iterable[GameRecord]) -> list[TimeUse]:
    """Each agent's time use over ``records``, in the order the agents first appear."""
    found: dict[str, TimeUse] = {}
    for record in records:
        agents = record.extra.get("agents", {})
        times = dict(record.extra.get("referee", {}).get("agent_times", {}) or {})
        for label in dict.fromkeys((record.white, record.black)):
            info = agents.get(label, {}) if isinstance(agents, dict) else {}
            use = found.setdefault(label, TimeUse(label))
            _add_game(use, record, label, info if isinstance(info, dict) else {}, times.get(label, record.time_per_move))
    return list(found.values())


def _add_game(use: TimeUse, record: GameRecord, label: str, info: dict[str, Any], cap: Optional[float]) -> None:
    """Count one game of ``label`` (its entry ``info`` in the record's ``agents``) into ``use``."""
    colours = {colour for colour in ("W", "B") if record.name(Colour(colour)) == label}
    if isinstance(info.get("colour"), str) and info["colour"] in colours:
        colours = {info["colour"]}  # (a game against itself: its entry says which side this one is)
    clock_text = str(info.get("clock") or record.clock or "")
    base, increment = parse_clock(clock_text) if clock_text else (None, 0.0)
    control = TimeControl(cap, base=base, increment=increment)
    use.games += 1
    use.cap = cap
    use.clock = clock_text
    bank = base
    first = True
    timed: list[tuple[float, Optional[float], bool]] = []  # (seconds, the limit it had, a first move)
    for entry in record.moves:
        if entry.move.colour.value not in colours:
            continue
        limit = control.thinking_time(bank)
        timed.append((entry.seconds, None if limit is None else limit + (STARTUP_SECONDS if first else 0.0), first))
        first = False
        use.depths += [int(found.group(1)) for comment in entry.comments for found in DEPTH.finditer(comment)][:1]
        if entry.clock is not None:
            bank = entry.clock
            use.least_left = bank if use.least_left is None else min(use.least_left, bank)
    fault = record.fault
    if fault is not None and fault.colour.value in colours and fault.seconds is not None:
        limit = control.thinking_time(bank)
        timed.append((fault.seconds, None if limit is None else limit + (STARTUP_SECONDS if first else 0.0), first))
        use.depths += [int(found.group(1)) for comment in fault.comments for found in DEPTH.finditer(comment)][:1]
    for seconds, limit, first_move in timed:
        use.moves += 1
        use.seconds += seconds
        if seconds > use.longest:
            use.longest, use.longest_had_startup = seconds, first_move
        if limit is not None and seconds > NEAR_LIMIT * limit:
            use.near_limit += 1
    result = record.result
    if (result is not None and result.termination is Termination.TIMEOUT and result.winner is not None
            and result.winner.value not in colours):
        use.timeouts += 1


__all__ = ["NEAR_LIMIT", "TimeUse", "time_use"]
