"""Standings and the crosstable, computed from the finished games.

Points: a win 1, a draw 1/2, a loss 0; a Swiss bye scores 1.  Ties are
broken, in order, by Sonneborn-Berger (the points of the opponents you beat,
plus half those of the opponents you drew: a win against a strong agent is
worth more), then by wins, then by disc difference, then by the Bradley-Terry
rating, then by name.

A forfeit is a game lost on a fault: ``timeout``, ``illegal``, ``malformed``,
``crash``, or ``build`` (the agent's build command failed or timed out, so it
never played), counted against the agent at fault (the loser).

Deterministic agents that start from the same position play the same game
every time.  A game whose agents and moves (opening included) repeat an
earlier game's is a *repeat*: it still scores (it was played), but it adds
no information about who is stronger, so the rating intervals are computed
from the distinct games only, and the table says how many games repeat.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from ...protocol import BLACK, WHITE, Termination
from .ratings import Rating, fit
from .store import FinishedGame

# The ways of losing a game on a fault, counted per agent (every termination but a normal end).
FAULTS = tuple(termination.value for termination in Termination if termination.is_forfeit)


@dataclass(frozen=True)
class Line:
    """One agent's line of the standings (a value: :func:`compute` tallies, then writes it once)."""

    agent: str
    rank: int = 0
    games: int = 0
    points: float = 0.0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    white_wins: int = 0
    white_draws: int = 0
    white_losses: int = 0
    black_wins: int = 0
    black_draws: int = 0
    black_losses: int = 0
    disc_difference: int = 0
    byes: int = 0
    sonneborn_berger: float = 0.0
    forfeits: dict[str, int] = field(default_factory=lambda: {fault: 0 for fault in FAULTS})
    load_flagged: int = 0
    elo: float = 0.0
    elo_error: float = 0.0
    repeats: int = 0  # its games that repeat an earlier game move for move

    @property
    def score_percent(self) -> float:
        return 100.0 * self.points / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["forfeits"] = dict(self.forfeits)
        data["elo"] = round(self.elo, 1)
        data["elo_error"] = round(self.elo_error, 1)
        data["sonneborn_berger"] = round(self.sonneborn_berger, 2)
        return data


@dataclass(frozen=True)
class Standings:
    """The whole table: ranked lines, the crosstable, the ratings."""

    lines: list[Line]
    crosstable: dict[str, dict[str, tuple[float, int]]]  # a -> b -> (points of a against b, games)
    ratings: dict[str, Rating]
    games: int = 0  # the games counted
    repeats: int = 0  # of which repeat an earlier game move for move

    def repeats_note(self) -> str:
        """A sentence for under the table when games repeat, else ``""``."""
        if not self.repeats:
            return ""
        return (f"{self.repeats} of {self.games} games repeat an earlier game move for move (deterministic agents "
                f"from the same start; an opening suite avoids it); the rating intervals use the "
                f"{self.games - self.repeats} distinct games")

    def line(self, agent: str) -> Line:
        for line in self.lines:
            if line.agent == agent:
                return line
        raise KeyError(agent)

    def to_list(self) -> list[dict[str, Any]]:
        return [line.to_dict() for line in self.lines]

    def crosstable_dict(self) -> dict[str, dict[str, dict[str, float]]]:
        return {
            a: {b: {"points": points, "games": games} for b, (points, games) in row.items()}
            for a, row in self.crosstable.items()
        }


def compute(
    players: Sequence[str],
    games: Iterable[FinishedGame],
    byes: Optional[Mapping[str, int]] = None,
) -> Standings:
    """Rank ``players`` from their finished ``games`` (and Swiss ``byes``)."""
    games = list(games)
    # Each agent's tally, field by field as in Line (frozen: written once, below).
    lines: dict[str, dict[str, Any]] = {name: asdict(Line(name)) for name in players}
    cross: dict[str, dict[str, tuple[float, int]]] = {a: {} for a in players}
    seen: set[str] = set()
    distinct: list[FinishedGame] = []
    counted = repeats = 0
    for game in games:
        if game.white not in lines or game.black not in lines:
            continue
        counted += 1
        if game.moves_key and game.moves_key in seen:
            repeats += 1
            lines[game.white]["repeats"] += 1
            lines[game.black]["repeats"] += 1
        else:
            seen.add(game.moves_key)
            distinct.append(game)
        result = game.result
        for agent, opponent, colour in ((game.white, game.black, WHITE), (game.black, game.white, BLACK)):
            line = lines[agent]
            points = result.points(colour)
            line["games"] += 1
            line["points"] += points
            line["disc_difference"] += result.discs(colour) - result.discs(colour.opponent)
            outcome = "wins" if points == 1.0 else "draws" if points == 0.5 else "losses"
            line[outcome] += 1
            line[("white_" if colour is WHITE else "black_") + outcome] += 1
            if result.termination is Termination.BUILD and result.winner is None:
                line["forfeits"]["build"] += 1  # both agents failed to build: a draw, and a forfeit for each
            elif points == 0.0 and result.termination.is_forfeit:
                line["forfeits"][result.termination.value] += 1
                if game.load_flag:
                    line["load_flagged"] += 1
            before = cross[agent].get(opponent, (0.0, 0))
            cross[agent][opponent] = (before[0] + points, before[1] + 1)
    for name, count in (byes or {}).items():
        if name in lines:
            lines[name]["byes"] += count
            lines[name]["points"] += float(count)

    for name, line in lines.items():
        line["sonneborn_berger"] = sum(
            lines[opponent]["points"] * (points / count)
            for opponent, (points, count) in cross[name].items()
            if count
        )

    ratings = fit(players, games)
    if repeats:
        # The estimate uses every game; its interval only the distinct ones (a repeat is no new evidence).
        spread = fit(players, distinct)
        ratings = {name: Rating(name, rating.elo, spread[name].error) for name, rating in ratings.items()}
    for name, rating in ratings.items():
        lines[name]["elo"] = rating.elo
        lines[name]["elo_error"] = rating.error

    order = {name: i for i, name in enumerate(players)}
    ranked = sorted(
        lines.values(),
        key=lambda l: (-l["points"], -l["sonneborn_berger"], -l["wins"], -l["disc_difference"], -round(l["elo"], 6),
                       order[l["agent"]]),
    )
    previous: Optional[tuple[Any, ...]] = None
    for position, line in enumerate(ranked, 1):
        key = (line["points"], round(line["sonneborn_berger"], 9), line["wins"], line["disc_difference"],
               round(line["elo"], 6))
        line["rank"] = ranked[position - 2]["rank"] if previous == key else position
        previous = key
    return Standings([Line(**line) for line in ranked], cross, ratings, counted, repeats)


def format_table(standings: Standings, *, width: Optional[int] = None,
                 elo: Optional[Mapping[str, str]] = None) -> str:
    """The standings as a plain-text table (for terminals and logs).

    ``elo``: each agent's Elo as text, in place of the pool rating (a match
    shows its own Elo over pairs, each side's over the other).
    """
    column = max([11, *(len(text) for text in (elo or {}).values())])
    header = (f"{'#':>3} {'agent':<16} {'games':>5} {'points':>6} {'W-D-L':>9} {'white':>9} {'black':>9} {'discs':>6} "
              f"{'SB':>6} {'Elo':>{column}} {'forfeits':<12}")
    rows = [header, "-" * len(header)]
    for line in standings.lines:
        forfeits = " ".join(f"{k[0].upper()}{v}" for k, v in line.forfeits.items() if v) or "-"
        rating = f"{line.elo:>5.0f}±{line.elo_error:<4.0f}" if elo is None else f"{elo.get(line.agent, ''):>{column}}"
        rows.append(
            f"{line.rank:>3} {line.agent[:16]:<16} {line.games:>5} {line.points:>6.1f} "
            f"{line.wins:>3}-{line.draws}-{line.losses:<3} "
            f"{line.white_wins:>3}-{line.white_draws}-{line.white_losses:<3} "
            f"{line.black_wins:>3}-{line.black_draws}-{line.black_losses:<3} "
            f"{line.disc_difference:>+6d} {line.sonneborn_berger:>6.2f} "
            f"{rating} {forfeits:<12}"
        )
    if standings.repeats:
        rows.append(standings.repeats_note())
    return "\n".join(rows)


def format_crosstable(standings: Standings) -> str:
    """The crosstable as text: row agent's points against each column agent."""
    names = [line.agent for line in standings.lines]
    short = [name[:6] for name in names]
    rows = [f"{'':<16} " + " ".join(f"{s:>6}" for s in short)]
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append(f"{'x':>6}")
            else:
                points, games = standings.crosstable[a].get(b, (0.0, 0))
                cells.append(f"{_half(points) + '/' + str(games) if games else '.':>6}")
        rows.append(f"{a[:16]:<16} " + " ".join(cells))
    return "\n".join(rows)


def _half(points: float) -> str:
    whole = int(points)
    return f"{whole}½" if points - whole == 0.5 and whole else "½" if points == 0.5 else f"{points:g}"
