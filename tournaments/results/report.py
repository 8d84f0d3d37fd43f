"""The HTML report: one static file that opens from disk, with no server and no network.

Standings, crosstable, a rating plot and every game replayable move by move
on a drawn board.  Everything is inline (CSS, JavaScript, SVG drawn by the
script); the data is one JSON block in the page.  The positions after every
move are computed here by the rules core, so the page only draws them: the
rules of Othello stay in one place.

Next to ``index.html`` the report writes ``games.ggf`` (every game in GGF, for
NBoard or Edax), ``status.json`` (as ``status --json``) and a page per agent
(``agents/NAME.html``: its games, its build, its forfeits).  ``run``,
``resume``, ``rerun`` and ``withdraw`` refresh it.

The report is published to the class, so by default it carries nothing an
agent wrote that is not a move: no stderr, no build log, no source, and no
link to them (a traceback shows a student's source lines to everyone).  The
instructor's own copy (``with_logs=True``, ``othello tournament report
--with-logs``) adds the end of each forfeit's stderr and links to the logs.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any, Optional

from ...protocol import BLACK, WHITE, GameRecord, ParseError, Termination
from ...protocol.openings import format_opening
from ...referee.time_use import time_use
from ..schedule.config import Tournament
from .state import RATING_MODEL, TournamentState, read_state, status_json
from .store import GameRow, result_from_row


def position_code(white: int, black: int) -> str:
    """A position as 32 hex digits: White's bitboard then Black's."""
    return f"{white:016x}{black:016x}"


def game_data(row: GameRow, report_dir: Path, with_logs: bool = False) -> dict[str, Any]:
    """One finished game for the page: players, result, moves and every position (``with_logs``: stderr links)."""
    result = result_from_row(row)
    data: dict[str, Any] = {
        "key": row.key,
        "round": row.round,
        "white": row.white,
        "black": row.black,
        "winner": row.winner,
        "reason": row.reason,
        "detail": row.detail or "",
        "discs": [row.white_discs, row.black_discs],
        "result": result.summary(),
        "counts": True,
        "flag": row.load_flag or "",
        # where a clock ran out: the move the agent did not make in time (the opening's moves apart)
        "timeout_move": (row.plies or 0) + 1 if row.reason == "timeout" else None,
        # each program's version (the fingerprint's first 12 hex digits; game.json keeps all 64)
        "versions": [(row.white_version or "")[:12], (row.black_version or "")[:12]],
        "moves": [],
        "positions": [],
        "links": {},
    }
    try:
        record = GameRecord.from_dict(json.loads(row.record or ""))
    except (ParseError, TypeError, ValueError):
        return data
    if record.opening:
        data["opening"] = format_opening(record.opening)  # the board starts after it
    for board, entry in record.positions():
        data["positions"].append(position_code(board.white, board.black))
        if entry is not None:
            move = {"move": entry.move.line(), "square": entry.move.square, "seconds": round(entry.seconds, 3),
                    "comments": entry.comments[:5], "forfeit": bool(getattr(entry, "forfeit", False))}
            if entry.clock is not None:  # under a game clock: the mover's bank after the move
                move["clock"] = round(entry.clock, 2)
            data["moves"].append(move)
    directory = row.game_dir
    if directory and Path(directory).is_dir():
        relative = os.path.relpath(directory, report_dir)
        data["links"]["game.json"] = f"{relative}/game.json"
        for name in (row.white, row.black) if with_logs else ():
            if (Path(directory) / f"{name}.stderr.log").is_file():
                data["links"][f"{name} stderr"] = f"{relative}/{name}.stderr.log"
    return data


def report_data(tournament: Tournament, report_dir: Path, state: Optional[TournamentState] = None,
                with_logs: bool = False) -> dict[str, Any]:
    """Everything the page shows, as plain data (from ``state``, read here if not given; ``with_logs``: log links)."""
    if state is None:
        state = read_state(tournament)
    flags = {item.game: item.describe() for item in state.flagged}
    return {
        "name": tournament.name,
        "format": tournament.format,
        "settings": {
            **_length(tournament, state),
            "colours": tournament.colours,
            "time": tournament.time_text,
            "seed": tournament.seed,
            **({"openings": f"{tournament.openings.name} (game pairs, drawn by the seed)"}
               if tournament.openings is not None else {}),
        },
        "agents": [{"name": a.name, "how": a.description, "page": f"agents/{a.name}.html", "files": a.files}
                   for a in state.agents],
        "references": list(state.references),
        "withdrawn": [{"agent": item.agent, "reason": item.reason, "games": item.games} for item in state.withdrawn],
        "builds": [{"agent": name, "status": b.status, "detail": b.detail,
                    "log": os.path.relpath(b.log, report_dir) if b.log and with_logs else ""}
                   for name, b in sorted(state.builds.items()) if not b.ok],
        "rounds": _swiss_rounds(state) if tournament.format == "swiss" else [],
        "replaced": len(state.replaced),
        # wins, draws, losses of each agent against each: a cell that cannot be misread
        "wdl": {agent: {opponent: [cell.wins, cell.draws, cell.losses] for opponent, cell in row.items()}
                for agent, row in state.crosstable.items()},
        "scheduled": state.progress.scheduled,
        "finished": state.progress.finished,
        "voided_attempts": state.voided_attempts,
        "unsandboxed": len(state.unsandboxed),
        "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "standings": [{**line, "student_rank": state.student_ranks[line["agent"]],
                       "rank_text": state.rank_text(line["agent"]),
                       # a match: the match's own Elo over pairs, each agent's over the other (not a pool rating)
                       **({"match_elo": list(state.match.elo_of(line["agent"]).parts())} if state.match else {})}
                      for line in state.standings.to_list()],
        "repeats_note": state.standings.repeats_note(),
        "crosstable": state.standings.crosstable_dict(),
        "rating_model": RATING_MODEL,
        "with_logs": with_logs,
        "games": [{**game_data(row, report_dir, with_logs), "counts": state.counts(row),
                   "flag": flags.get(row.key, "")}
                  for row in state.games if row.is_finished],
        "time_use": [use.to_dict() for use in time_use(_records(state))],
        "match": None if state.match is None else {
            "a": state.match.a, "b": state.match.b, "verdict": state.match.verdict(),
            "progress": state.match.progress_line(), "figures": state.match.lines(),
            "games_line": state.progress_text()},
        "voided": [
            {"game": item.game, "white": item.white, "black": item.black, "voided": item.voided,
             "flagged": item.flagged, "attempts": [{"attempt": a.attempt, "why": a.why} for a in item.attempts]}
            for item in state.voided
        ],
    }


def _length(tournament: Tournament, state: TournamentState) -> dict[str, Any]:
    """How long it is, for the header: games per pairing and rounds; a match its SPRT (its count line has its games)."""
    if state.match is None:
        return {"games per pairing": tournament.games_per_pairing, "rounds": state.progress.rounds.total}
    if state.match.sprt is None:
        return {}
    return {"SPRT": f"{state.match.sprt.parameters()}, at most {tournament.games_per_pairing} games"}


def _records(state: TournamentState) -> list[GameRecord]:
    """The records of the finished games (a build forfeit has no moves; an unreadable record is left out)."""
    records = []
    for row in state.games:
        if row.is_finished and row.record and row.reason != Termination.BUILD.value:
            try:
                records.append(GameRecord.from_dict(json.loads(row.record)))
            except (ParseError, TypeError, ValueError, KeyError):
                continue
    return records


def _swiss_rounds(state: TournamentState) -> list[dict[str, Any]]:
    """Each Swiss round's pairings (the first game's colours) and its bye."""
    byes = {row.round: row.bye for row in state.rounds}
    rounds: dict[int, dict[str, Any]] = {}
    for row in state.games:
        entry = rounds.setdefault(row.round, {"round": row.round, "bye": byes.get(row.round), "pairs": []})
        if row.game_index == 1:
            entry["pairs"].append({"white": row.white, "black": row.black, "key": row.key})
    return [rounds[number] for number in sorted(rounds)]


PLACEHOLDER = re.compile(r"__TITLE__|__REPORT_DATA__|__STYLE__")


def _template(name: str) -> str:
    return resources.files("othello_arena.tournaments").joinpath(f"templates/{name}").read_text(encoding="utf-8")


def render(data: dict[str, Any]) -> str:
    """The page for ``data``: the template with the data and the report's stylesheet inlined."""
    template = _template("report.html")
    # JSON inside <script>: escape what could end the script element.
    payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    values = {"__TITLE__": html.escape(str(data["name"])), "__REPORT_DATA__": payload, "__STYLE__": _template("report.css")}
    # One pass over the template: a name holding "__REPORT_DATA__" stays a name (replacing one placeholder
    # after the other would pour the whole data into the <title>).
    return PLACEHOLDER.sub(lambda found: values[found.group(0)], template)


def public_report_dir(tournament: Tournament) -> Path:
    """Where ``run`` keeps the published report (and ``othello serve`` serves it to everybody)."""
    return tournament.results_dir / "report"


def write_report(tournament: Tournament, directory: Path, with_logs: bool = False) -> Path:
    """Write ``index.html``, ``games.ggf``, ``status.json`` and the agents' pages into ``directory``; return the page.

    ``with_logs``: the instructor's copy, with the agents' stderr and build
    logs; never into the published report's folder (:func:`public_report_dir`).
    """
    directory = Path(directory).resolve()
    if with_logs and directory == public_report_dir(tournament).resolve():
        raise ValueError(f"{directory} is the published report (othello serve shows it to everybody): "
                         "write the copy with logs elsewhere (-o DIR)")
    directory.mkdir(parents=True, exist_ok=True)
    state = read_state(tournament)
    data = report_data(tournament, directory, state, with_logs)
    index = directory / "index.html"
    index.write_text(render(data), encoding="utf-8")
    ggf = []
    for row in state.games:
        # A build forfeit was never played: nothing for a GGF viewer (and GGF has no word for it).
        if row.is_finished and row.record and row.reason != Termination.BUILD.value:
            try:
                ggf.append(GameRecord.from_dict(json.loads(row.record)).to_ggf())
            except (ParseError, ValueError):
                continue
    (directory / "games.ggf").write_text("\n".join(ggf) + ("\n" if ggf else ""), encoding="utf-8")
    (directory / "status.json").write_text(json.dumps(status_json(state), indent=2) + "\n", encoding="utf-8")
    write_agent_pages(state, directory, data, with_logs)
    return index


STDERR_TAIL = 3000  # characters of an agent's stderr shown under each of its forfeits (the copy with logs)
NO_LOGS = ("The agents' stderr and build logs are not published; the instructor has them "
           "(othello tournament report --with-logs).")


def write_agent_pages(state: TournamentState, directory: Path, data: dict[str, Any], with_logs: bool = False) -> None:
    """``agents/NAME.html`` for each agent: its games, its build, its forfeits (``with_logs``: its stderr, its build log)."""
    pages = directory / "agents"
    pages.mkdir(parents=True, exist_ok=True)
    lines = {line["agent"]: line for line in data["standings"]}
    builds = {b["agent"]: b for b in data["builds"]}
    withdrawn = {w["agent"]: w["reason"] for w in data["withdrawn"]}
    rows = [row for row in state.games if row.is_finished]
    style = _template("report.css")  # the report's own look, inlined: each page opens from disk on its own
    for agent in data["agents"]:
        name = agent["name"]
        e = html.escape
        parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                 f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{e(name)}: "
                 f"{e(str(data['name']))}</title><style>{style}</style></head><body>",
                 f"<header><p><a href=\"../index.html\">&larr; {e(str(data['name']))}</a></p>"
                 f"<h1>{e(name)}</h1><p>{e(agent['how'])}"
                 + (f" &middot; reads and writes {e(agent['files'])}.in / {e(agent['files'])}.out" if agent["files"] else "")
                 + "</p></header><main>"]
        if name in withdrawn:
            parts.append(f"<p class=\"flag\" id=\"withdrawn\">Withdrawn: {e(withdrawn[name])}. "
                         "Its games are kept below but do not count.</p>")
        line = lines.get(name)
        if line:
            rank = ("A reference agent" if line["student_rank"] is None else f"Rank {line['rank_text']}"
                    + (" (statistically tied: the evidence does not separate these ranks)" if "-" in line["rank_text"] else ""))
            parts.append(f"<p id=\"summary\">{rank} &middot; {line['points']:g} points from "
                         f"{line['games']} games &middot; {line['wins']} won, {line['draws']} drawn, "
                         f"{line['losses']} lost</p>")
        if name in builds:
            build = builds[name]
            log = f" <a href=\"../{e(build['log'])}\">Build log</a>" if build["log"] else ""
            parts.append(f"<p class=\"flag\" id=\"build\">The build {e(build['status'])} ({e(build['detail'])}): every "
                         f"game is lost by forfeit.{log}</p>")
        parts.append("<h2>Games</h2><table id=\"games\"><tr><th class=\"name\">game</th><th class=\"name\">White</th>"
                     "<th class=\"name\">Black</th><th class=\"name\">result</th></tr>")
        forfeits = []
        for row in rows:
            if name not in (row.white, row.black):
                continue
            result = result_from_row(row)
            words = result.summary()
            parts.append(f"<tr><td class=\"name\"><a href=\"../index.html#game={e(row.key)}\">{e(row.key)}</a></td>"
                         f"<td class=\"name\">{e(row.white)}</td><td class=\"name\">{e(row.black)}</td>"
                         f"<td class=\"name\">{e(words)}</td></tr>")
            colour = WHITE if row.white == name else BLACK
            if result.termination.is_forfeit and result.loser is colour:
                forfeits.append((row, colour, words))
        parts.append("</table>")
        if forfeits:
            parts.append(f"<h2 id=\"forfeits\">Forfeits ({len(forfeits)})</h2>")
            if not with_logs:
                parts.append(f"<p class=\"muted\">{NO_LOGS}</p>")
            for row, colour, words in forfeits:
                if not with_logs:
                    parts.append(f"<h3>{e(row.key)}: {e(words)}</h3><p>{e(row.detail or '')}</p>")
                    continue
                stderr = (row.white_stderr if colour is WHITE else row.black_stderr) or ""  # White's if it played both
                tail = stderr[-STDERR_TAIL:]
                parts.append(f"<h3>{e(row.key)}: {e(words)}</h3><p>{e(row.detail or '')}</p>"
                             f"<p class=\"muted\">The end of its stderr ({len(stderr)} characters kept):</p>"
                             f"<pre class=\"stderr\">{e(tail) or '(nothing)'}</pre>")
        parts.append("</main></body></html>")
        (pages / f"{name}.html").write_text("\n".join(parts) + "\n", encoding="utf-8")

