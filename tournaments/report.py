"""The HTML report: one static file that opens from disk, with no server and no network.

Standings, crosstable, a rating plot and every game replayable move by move
on a drawn board.  Everything is inline (CSS, JavaScript, SVG drawn by the
script); the data is one JSON block in the page.  The positions after every
move are computed here by the rules core, so the page only draws them: the
rules of Othello stay in one place.

Next to ``index.html`` the report writes ``games.ggf`` (every game in GGF, for
NBoard or Edax) and ``status.json`` (as ``status --json``).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from ..protocol import GameRecord, ParseError
from .config import Tournament
from .pairing import active_names
from .runner import status, withdrawn_agents
from .standings import compute
from .store import Store


def position_code(white: int, black: int) -> str:
    """A position as 32 hex digits: White's bitboard then Black's."""
    return f"{white:016x}{black:016x}"


def game_data(row: Any, report_dir: Path) -> dict[str, Any]:
    """One finished game for the page: players, result, moves and every position."""
    data: dict[str, Any] = {
        "key": row["key"],
        "round": row["round"],
        "white": row["white"],
        "black": row["black"],
        "winner": row["winner"],
        "reason": row["reason"],
        "detail": row["detail"] or "",
        "discs": [row["white_discs"], row["black_discs"]],
        "flag": row["load_flag"] or "",
        "moves": [],
        "positions": [],
        "links": {},
    }
    try:
        record = GameRecord.from_dict(json.loads(row["record"]))
    except (ParseError, TypeError, ValueError):
        return data
    for board, entry in record.positions():
        data["positions"].append(position_code(board.white, board.black))
        if entry is not None:
            data["moves"].append(
                {"move": entry.move.line(), "square": entry.move.square, "seconds": round(entry.seconds, 3),
                 "comments": entry.comments[:5], "forfeit": bool(getattr(entry, "forfeit", False))}
            )
    directory = row["game_dir"]
    if directory and Path(directory).is_dir():
        relative = os.path.relpath(directory, report_dir)
        data["links"]["game.json"] = f"{relative}/game.json"
        for name in (row["white"], row["black"]):
            if (Path(directory) / f"{name}.stderr.log").is_file():
                data["links"][f"{name} stderr"] = f"{relative}/{name}.stderr.log"
    return data


def report_data(tournament: Tournament, report_dir: Path) -> dict[str, Any]:
    """Everything the page shows, as plain data."""
    with Store(tournament.database, create=False) as store:
        withdrawn = withdrawn_agents(tournament, store)
        table = compute(active_names(tournament, withdrawn), store.finished_games(exclude=withdrawn), store.byes())
        games = [game_data(row, report_dir) for row in store.game_rows() if row["status"] == "finished"]
    state = status(tournament)
    return {
        "name": tournament.name,
        "format": tournament.format,
        "settings": {
            "games per pairing": tournament.games_per_pairing,
            "colours": tournament.colours,
            "time per move": f"{tournament.time_per_move:g} s",
            "seed": tournament.seed,
            "rounds": state["rounds"]["total"],
        },
        "agents": [{"name": a.name, "how": a.describe()} for a in tournament.agents],
        "scheduled": state["scheduled"],
        "finished": state["finished"],
        "voided_attempts": state["voided_attempts"],
        "unsandboxed": len(state["unsandboxed"]),
        "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "standings": table.to_list(),
        "crosstable": table.crosstable_dict(),
        "rating_model": state["rating_model"],
        "games": games,
        "voided": [
            {"game": item["game"], "white": item["white"], "black": item["black"], "voided": item["voided"],
             "flagged": item in state["repeatedly_voided"],
             "attempts": [{"attempt": a["attempt"], "why": a["why"]} for a in item["attempts"]]}
            for item in state["voided"]
        ],
    }


def render(data: dict[str, Any]) -> str:
    """The page for ``data``: the template with the data inlined."""
    template = resources.files("othello_arena.tournaments").joinpath("templates/report.html").read_text(encoding="utf-8")
    # JSON inside <script>: escape what could end the script element.
    payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return template.replace("__TITLE__", html.escape(str(data["name"]))).replace("__REPORT_DATA__", payload)


def write_report(tournament: Tournament, directory: Path) -> Path:
    """Write ``index.html``, ``games.ggf`` and ``status.json`` into ``directory``; return the page's path."""
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    data = report_data(tournament, directory)
    index = directory / "index.html"
    index.write_text(render(data), encoding="utf-8")
    with Store(tournament.database, create=False) as store:
        ggf = []
        for row in store.game_rows():
            if row["status"] == "finished" and row["record"]:
                try:
                    ggf.append(GameRecord.from_dict(json.loads(row["record"])).to_ggf())
                except (ParseError, ValueError):
                    continue
    (directory / "games.ggf").write_text("\n".join(ggf) + ("\n" if ggf else ""), encoding="utf-8")
    (directory / "status.json").write_text(json.dumps(status(tournament), indent=2) + "\n", encoding="utf-8")
    return index
