"""How long a tournament should take: the worst case from the clock, a typical case from measured moves.

The worst case is every game running to its last move with every move
using its whole time: games x moves x seconds per move / games at once.
The typical case puts each agent's measured mean seconds per move (from the
finished games in the database, else from its last ``check-agents``) in
place of its time, and the whole time for an agent never measured.  Both count a game as every square filled
(60 moves on 8x8): few games end much sooner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...referee.clock import parse_clock
from ..schedule import pairing
from ..schedule.config import Tournament
from .state import planned_games
from .store import Store


@dataclass(frozen=True)
class Estimate:
    """The expected duration of a tournament's games, in seconds, and what it rests on."""

    games: int
    moves_per_game: int
    concurrency: int
    worst: float
    typical: float
    measured: dict[str, float]  # agent -> mean seconds per move in its earlier games
    unmeasured: list[str]
    checked: dict[str, float] = field(default_factory=dict)  # agent -> in its last check (no game yet)

    def lines(self) -> list[str]:
        out = [f"Duration at {self.concurrency} game(s) at once: at most {duration(self.worst)} "
               f"({self.games} games x {self.moves_per_game} moves x the time per move / {self.concurrency})"]
        sources = []
        if self.measured:
            sources.append("the move times measured in earlier games ("
                           + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in sorted(self.measured.items())) + ")")
        if self.checked:
            sources.append("in check-agents (" + ", ".join(f"{name} {seconds:.2f} s"
                                                        for name, seconds in sorted(self.checked.items())) + ")")
        if sources:
            out.append(f"  typically about {duration(self.typical)}, from " + " and ".join(sources)
                       + (f"; no measure yet for {', '.join(self.unmeasured)} (its whole time counted)"
                          if self.unmeasured else ""))
        else:
            out.append("  no typical estimate yet: no game played and no agent checked "
                       "(`othello tournament check-agents`, or the first games, measure the agents' moves)")
        return out


def duration(seconds: float) -> str:
    """``1 h 05 min``, ``12 min``, ``40 s``: a duration as people read it."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def measured_move_times(store: Optional[Store]) -> dict[str, float]:
    """Each agent's mean seconds per move over its finished games (White moves first: it has the odd plies)."""
    seconds: dict[str, float] = {}
    moves: dict[str, int] = {}
    if store is None:
        return {}
    for row in store.game_rows():
        if not row.is_finished or not row.plies:
            continue
        for name, used, count in ((row.white, row.white_seconds, (row.plies + 1) // 2),
                                  (row.black, row.black_seconds, row.plies // 2)):
            if used is not None and count:
                seconds[name] = seconds.get(name, 0.0) + used
                moves[name] = moves.get(name, 0) + count
    return {name: seconds[name] / moves[name] for name in seconds}


def estimate(tournament: Tournament, concurrency: int, store: Optional[Store] = None) -> Estimate:
    """The worst and typical duration of ``tournament``'s games at ``concurrency`` games at once."""
    size = int(tournament.referee.get("size", 8) or 8)
    moves = size * size - 4
    own = {agent.name: agent.time_per_move or tournament.time_per_move for agent in tournament.agents}
    measured = {name: seconds for name, seconds in measured_move_times(store).items() if name in own}
    checked = {name: seconds for name, seconds in (store.checked_move_times() if store else {}).items()
               if name in own and name not in measured}
    timed = {**checked, **measured}
    schedule = pairing.fixed_schedule(tournament, tournament.withdrawn)
    if schedule is not None:
        pairs = [(game.white, game.black) for game in schedule]
    else:  # Swiss: who meets whom is not known yet; every agent's time alike
        pairs = [("", "")] * planned_games(tournament, tournament.withdrawn)
    worst = typical = 0.0
    for white, black in pairs:
        for name, count in ((white, (moves + 1) // 2), (black, moves // 2)):
            limit = own.get(name, tournament.time_per_move)
            side = count * limit if limit is not None else _bank_for(tournament, name, count)
            worst += side
            typical += min(side, count * timed[name]) if name in timed else side
    unmeasured = sorted(name for name in own if name not in timed and name not in tournament.withdrawn)
    slots = max(1, concurrency)
    return Estimate(len(pairs), moves, slots, worst / slots, typical / slots, measured, unmeasured, checked)


def _bank_for(tournament: Tournament, name: str, moves: int) -> float:
    """The most a side can think in a game of ``moves`` of its moves under its game clock: the bank and every increment."""
    agent = next((entry for entry in tournament.agents if entry.name == name), None)
    text = (agent.clock if agent is not None else None) or tournament.clock
    if not text:
        return 0.0
    base, increment = parse_clock(text)
    return base + moves * increment
