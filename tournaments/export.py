"""``othello tournament export``: the results for a spreadsheet (CSV) or a script (JSON).

Three tables, read from the database without the lock (safe while a runner
plays):

- games: one row per scheduled game, played or not, with who won, why, the
  discs, the seconds each side thought, and whether it counts (a withdrawn
  agent's games are listed, marked, and left out of the standings);
- standings: the table ``status`` prints (points, W-D-L, by colour, discs,
  Sonneborn-Berger, Elo with its 95 % interval, forfeits by kind);
- crosstable: one row per ordered pair of agents that met: points, games,
  wins, draws and losses of the first against the second.

CSV files are UTF-8 with a header row and ``\\r\\n`` line ends (what Python's
``csv`` module and spreadsheets expect); JSON is one object holding the same
three lists plus the tournament's settings.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from ..protocol import BLACK, WHITE
from .config import Tournament
from .pairing import active_names
from .runner import withdrawn_agents
from .standings import FAULTS, compute
from .store import Store, result_from_row

GAME_COLUMNS = ["key", "round", "pairing", "game_index", "white", "black", "seed", "status", "counts", "result",
                "winner", "loser", "reason", "detail", "white_discs", "black_discs", "plies", "white_seconds",
                "black_seconds", "load_flag", "attempts", "finished"]
STANDING_COLUMNS = ["rank", "agent", "games", "points", "score_percent", "wins", "draws", "losses", "white_wins",
                    "white_draws", "white_losses", "black_wins", "black_draws", "black_losses", "disc_difference",
                    "byes", "sonneborn_berger", "elo", "elo_error", *(f"forfeits_{f}" for f in FAULTS)]
CROSS_COLUMNS = ["agent", "opponent", "points", "games", "wins", "draws", "losses"]


def tables(tournament: Tournament) -> dict[str, Any]:
    """The three tables as lists of dicts (column order as in the CSV files)."""
    with Store(tournament.database, create=False) as store:
        withdrawn = withdrawn_agents(tournament, store)
        finished = store.finished_games(exclude=withdrawn)
        standings = compute(active_names(tournament, withdrawn), finished, store.byes())
        games = []
        for row in store.game_rows():
            out = row.white in withdrawn or row.black in withdrawn
            result = result_from_row(row) if row.is_finished else None
            names = {WHITE: row.white, BLACK: row.black}
            winner = names[result.winner] if result and result.winner else ""
            loser = names[result.loser] if result and result.loser else ""
            games.append({
                "key": row.key, "round": row.round, "pairing": row.pairing, "game_index": row.game_index,
                "white": row.white, "black": row.black, "seed": row.seed, "status": row.status.value,
                "counts": not out,
                "result": result.score() if result else "",
                "winner": winner, "loser": loser, "reason": row.reason or "", "detail": row.detail or "",
                "white_discs": row.white_discs, "black_discs": row.black_discs, "plies": row.plies,
                "white_seconds": _round(row.white_seconds), "black_seconds": _round(row.black_seconds),
                "load_flag": row.load_flag or "", "attempts": row.attempts, "finished": row.finished,
            })
    lines = []
    for line in standings.lines:
        data = line.to_dict()
        data["score_percent"] = round(line.score_percent, 1)
        for fault in FAULTS:
            data[f"forfeits_{fault}"] = line.forfeits.get(fault, 0)
        lines.append({column: data[column] for column in STANDING_COLUMNS})
    cross = []
    results: dict[tuple[str, str], list[int]] = {}
    for game in finished:
        for agent, opponent in ((game.white, game.black), (game.black, game.white)):
            tally = results.setdefault((agent, opponent), [0, 0, 0])
            tally[{1.0: 0, 0.5: 1, 0.0: 2}[game.points(agent)]] += 1
    order = [line.agent for line in standings.lines]
    for agent in order:
        for opponent in order:
            points, count = standings.crosstable[agent].get(opponent, (0.0, 0))
            if count:
                wins, draws, losses = results.get((agent, opponent), [0, 0, 0])
                cross.append({"agent": agent, "opponent": opponent, "points": points, "games": count,
                              "wins": wins, "draws": draws, "losses": losses})
    return {"games": games, "standings": lines, "crosstable": cross,
            "withdrawn": [{"agent": name, "reason": reason} for name, reason in withdrawn.items()]}


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
