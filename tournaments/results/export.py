"""``othello tournament export``: the results for a spreadsheet (CSV) or a script (JSON).

Three tables, read from the database without the lock (safe while a runner
plays):

- games: one row per scheduled game, played or not, with who won, why, the
  discs, the seconds each side thought, and whether it counts (a withdrawn
  agent's games are listed, marked, and left out of the standings);
- standings: the table ``status`` prints (points, W-D-L, by colour, discs,
  Sonneborn-Berger, Elo with its 95 % interval, forfeits by kind), a grade
  sheet: each agent's student ``id`` from the roster first, and ``reference``
  true for a reference agent, whose ``rank`` is empty (the students are
  ranked among themselves only);
- crosstable: one row per ordered pair of agents that met: points, games,
  wins, draws and losses of the first against the second.

CSV files are UTF-8 with a header row and ``\\r\\n`` line ends (what Python's
``csv`` module and spreadsheets expect); JSON is one object holding the same
three lists plus the tournament's settings.  Times (a game's ``finished``)
are ISO 8601 in UTC (``2026-11-25T19:46:27Z``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Optional

from ...protocol import BLACK, WHITE
from ..schedule.config import Tournament
from .standings import FAULTS
from .state import TournamentState, iso_time, read_state
from .store import result_from_row

GAME_COLUMNS = ["key", "round", "pairing", "game_index", "white", "black", "seed", "status", "counts", "result",
                "winner", "loser", "reason", "detail", "white_discs", "black_discs", "plies", "white_seconds",
                "black_seconds", "load_flag", "attempts", "finished", "white_version", "black_version"]
STANDING_COLUMNS = ["id", "rank", "rank_best", "rank_worst", "agent", "reference", "games", "points", "score_percent", "wins", "draws", "losses", "white_wins",
                    "white_draws", "white_losses", "black_wins", "black_draws", "black_losses", "disc_difference",
                    "byes", "sonneborn_berger", "elo", "elo_error", *(f"forfeits_{f}" for f in FAULTS)]
CROSS_COLUMNS = ["id", "agent", "opponent", "points", "games", "wins", "draws", "losses"]


def tables(tournament: Tournament, state: Optional[TournamentState] = None) -> dict[str, Any]:
    """The three tables as lists of dicts (column order as in the CSV files), from ``state`` (read if not given)."""
    if state is None:
        state = read_state(tournament)
    games = []
    for row in state.games:
        result = result_from_row(row) if row.is_finished else None
        names = {WHITE: row.white, BLACK: row.black}
        games.append({
            "key": row.key, "round": row.round, "pairing": row.pairing, "game_index": row.game_index,
            "white": row.white, "black": row.black, "seed": row.seed, "status": row.status.value,
            "counts": state.counts(row),
            "result": result.score() if result else "",
            "winner": names[result.winner] if result and result.winner else "",
            "loser": names[result.loser] if result and result.loser else "",
            "reason": row.reason or "", "detail": row.detail or "",
            "white_discs": row.white_discs, "black_discs": row.black_discs, "plies": row.plies,
            "white_seconds": _round(row.white_seconds), "black_seconds": _round(row.black_seconds),
            "load_flag": row.load_flag or "", "attempts": row.attempts, "finished": iso_time(row.finished),
            "white_version": row.white_version or "", "black_version": row.black_version or "",
        })
    ids = {agent.name: agent.id for agent in state.agents}
    ranks = state.student_ranks
    lines = []
    for line in state.standings.lines:
        data = line.to_dict()
        # rank_best..rank_worst: the ranks the evidence allows (equal: separated from every neighbour); two
        # numeric columns, never "2-4", which a spreadsheet reads as a date.
        best, worst = state.student_rank_ranges.get(line.agent) or ("", "")
        data.update(id=ids.get(line.agent, ""), rank=ranks[line.agent], rank_best=best, rank_worst=worst,
                    reference=line.agent in state.references)
        data["score_percent"] = round(line.score_percent, 1)
        for fault in FAULTS:
            data[f"forfeits_{fault}"] = line.forfeits.get(fault, 0)
        lines.append({column: data[column] for column in STANDING_COLUMNS})
    order = [line.agent for line in state.standings.lines]
    cross = [{"id": ids.get(agent, ""), "agent": agent, "opponent": opponent, "points": cell.points, "games": cell.games,
              "wins": cell.wins, "draws": cell.draws, "losses": cell.losses}
             for agent in order for opponent in order
             for cell in [state.crosstable.get(agent, {}).get(opponent)] if cell is not None]
    return {"games": games, "standings": lines, "crosstable": cross,
            "withdrawn": [{"agent": item.agent, "reason": item.reason} for item in state.withdrawn]}


def _round(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


def export(tournament: Tournament, directory: Path, fmt: str) -> list[Path]:
    """Write the tables into ``directory`` as ``csv`` (three files) or ``json`` (one); return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    data = tables(tournament)
    if fmt == "json":
        path = directory / "tournament.json"
        payload = {"name": tournament.name, "format": tournament.format, "settings": tournament.to_dict(), **data}
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        return [path]
    if fmt != "csv":
        raise ValueError(f"export format {fmt!r}: expected csv or json")
    paths = []
    for name, columns in (("games", GAME_COLUMNS), ("standings", STANDING_COLUMNS), ("crosstable", CROSS_COLUMNS)):
        path = directory / f"{name}.csv"
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            for item in data[name]:
                writer.writerow({key: ("" if value is None else value) for key, value in item.items()})
        paths.append(path)
    return paths
