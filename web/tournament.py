"""A tournament seen from the web app: read from its database and its game files, never written.

The runner (``othello tournament run``, perhaps in another terminal) is the
only writer.  This module opens the database read-only at each look
(``Store(create=False)``, SQLite's WAL lets a reader in while the runner
writes), follows each game in progress through its live log, and reads a
finished game from the record the database keeps.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Optional

from ..protocol import GameRecord, ParseError
from ..tournaments.results.pairs import MatchState
from ..tournaments.results.paths import game_directory
from ..tournaments.results.state import TournamentState, read_state
from ..tournaments.results.store import GameRow, GameStatus, StoreError, result_from_row
from ..tournaments.run.livelog import read_live_log
from ..tournaments.schedule.config import Tournament
from .gameview import entries_from_record, game_view

STDERR_TAIL = 3000  # characters of an agent's stderr shown under each of its forfeits
FRESH_SECONDS = 0.3  # a snapshot this recent is shared by every page that asks


class TournamentView:
    """Snapshots of one tournament for the pages (standings, crosstable, games in progress, one game, one agent).

    Every page reads the one read model (:func:`~othello_arena.tournaments.results.state.read_state`), a snapshot
    shared for :data:`FRESH_SECONDS`.
    """

    def __init__(self, tournament: Tournament) -> None:
        self.tournament = tournament
        self._lock = threading.Lock()
        self._cached: Optional[tuple[float, TournamentState, dict[str, Any]]] = None

    @property
    def results_dir(self) -> Path:
        return self.tournament.results_dir.resolve()

    def _snapshot(self) -> tuple[Optional[TournamentState], dict[str, Any]]:
        """The state now (``None`` if the database cannot be read) and the overview built from it."""
        with self._lock:
            if self._cached is not None and time.monotonic() - self._cached[0] < FRESH_SECONDS:
                return self._cached[1], self._cached[2]
            state: Optional[TournamentState]
            try:
                state = read_state(self.tournament, must_exist=False)
            except StoreError as exc:
                return None, self._empty(waiting=str(exc))
            data = self._overview(state)
            self._cached = (time.monotonic(), state, data)
            return state, data

    def _state(self) -> Optional[TournamentState]:
        return self._snapshot()[0]

    def overview(self) -> dict[str, Any]:
        """Standings, crosstable, ratings, every game's state, each game in progress with its board."""
        return self._snapshot()[1]

    def _empty(self, waiting: str) -> dict[str, Any]:
        t = self.tournament
        return {"name": t.name, "format": t.format, "time_per_move": t.time_per_move,
                "agents": [{"name": a.name, "how": a.describe()} for a in t.agents],
                "standings": [], "crosstable": {}, "games": [], "live": [], "waiting": waiting}

    def _overview(self, state: TournamentState) -> dict[str, Any]:
        t = self.tournament
        if not state.started:
            data = self._empty(f"no results yet in {t.database}: start the tournament (othello tournament run {t.path})")
            data["standings"] = [{"rank": 0, "agent": name, "games": 0, "points": 0, "wins": 0, "draws": 0,
                                  "losses": 0, "disc_difference": 0, "elo": 0, "elo_error": 0, "forfeits": {},
                                  "reference": name in t.references, "shown_rank": "", "forfeits_text": "",
                                  "elo_text": ""}
                                 for name in t.agent_names]
            return data
        data = self._empty("")
        data["standings"] = [_shown_line(line, state) for line in state.standings.to_list()]
        data["crosstable"] = state.standings.crosstable_dict()
        data["withdrawn"] = state.withdrawn_names
        data["counts"] = {"scheduled": state.progress.scheduled, "finished": state.progress.finished,
                          "running": state.running, "text": state.progress_text()}
        for row in state.games:
            if not state.listed(row):
                continue
            status = state.shown_status(row)
            game = {"key": row.key, "round": row.round, "white": row.white, "black": row.black,
                    "status": status, "result": "", "reason": row.reason or ""}
            if row.is_finished:
                game["result"] = result_from_row(row).summary()
            data["games"].append(game)
            if status == GameStatus.RUNNING.value:
                entries = read_live_log(game_directory(t, row.key, row.white, row.black))
                view = game_view(entries, row.white, row.black)
                view["key"] = row.key
                data["live"].append(view)
        if state.match is not None:
            data["match"] = match_view(state.match)
        data["now"] = time.time()
        return data

    def game(self, key: str, with_logs: bool = False) -> Optional[dict[str, Any]]:
        """One game: finished (from its record in the database), in progress (its live log) or still to play.

        ``with_logs``: with links to the agents' stderr logs (for the token's holder).
        """
        state = self._state()
        row = state.game(key) if state is not None else None
        if row is None:
            return None
        if row.is_finished and row.record:
            try:
                view = game_view(entries_from_record(GameRecord.from_dict(json.loads(row.record))))
            except (ParseError, ValueError, TypeError, KeyError) as exc:
                view = game_view([], row.white, row.black)
                view["problem"] = f"the record of this game cannot be read: {exc}"
            if row.reason == "build":
                view["result_text"] = result_from_row(row).summary()
        elif row.status is GameStatus.RUNNING:
            view = game_view(read_live_log(game_directory(self.tournament, key, row.white, row.black)),
                             row.white, row.black)
        else:
            view = game_view([], row.white, row.black)
        view.update(key=key, status=row.status.value, round=row.round, detail=row.detail or "",
                    links=self._links(row, with_logs))
        return view

    def _links(self, row: GameRow, with_logs: bool) -> dict[str, str]:
        """The game's files that may be downloaded, as paths under the results directory."""
        directory = row.game_dir or ""
        links: dict[str, str] = {}
        if not directory:
            return links
        try:
            relative = Path(directory).resolve().relative_to(self.results_dir)
        except ValueError:
            return links
        links["game.json"] = f"{relative.as_posix()}/game.json"
        for name in (row.white, row.black) if with_logs else ():
            links[f"{name}.stderr.log"] = f"{relative.as_posix()}/{name}.stderr.log"
        return links

    def agent(self, name: str, with_logs: bool = False) -> Optional[dict[str, Any]]:
        """One agent: its line of the standings, its games, its forfeits (``with_logs``: with the end of its stderr)."""
        if name not in self.tournament.agent_names:
            return None
        state, overview = self._snapshot()
        entry = self.tournament.agent(name)
        data: dict[str, Any] = {"name": name, "how": entry.describe(), "line": None, "games": [], "forfeits": [],
                                "tournament": self.tournament.name, "with_logs": with_logs}
        for line in overview["standings"]:
            if line["agent"] == name:
                data["line"] = line
        summary = state.agent(name) if state is not None else None
        if state is None or summary is None:
            return data
        for row in (game for game in state.games if game.key in set(summary.games) and state.listed(game)):
            words = result_from_row(row).summary() if row.is_finished else row.status.value
            data["games"].append({"key": row.key, "white": row.white, "black": row.black, "result": words})
            colour = "W" if row.white == name else "B"
            if row.is_finished and row.reason not in ("normal", None) and row.winner not in (colour, None):
                forfeit: dict[str, Any] = {"key": row.key, "result": words, "reason": row.reason,
                                           "detail": row.detail or ""}
                if with_logs:
                    stderr = row.stderr_of(name)
                    forfeit.update(stderr_tail=stderr[-STDERR_TAIL:], stderr_length=len(stderr))
                data["forfeits"].append(forfeit)
        return data


def _shown_line(line: dict[str, Any], state: TournamentState) -> dict[str, Any]:
    """A line of the standings as the page shows it: the rank among the students (``ref`` for a reference).

    A match's page shows, in place of the pool rating, the match's own Elo
    over pairs (each agent's over the other), as the terminal prints it.
    """
    rank = state.student_ranks.get(line["agent"])
    forfeits = ", ".join(f"{count} {kind}" for kind, count in line["forfeits"].items() if count)
    if state.match is not None:
        elo = state.match.elo_text(line["agent"])
    else:
        elo = f"{round(line['elo'])} ± {round(line['elo_error'])}"
    return {**line, "reference": rank is None, "shown_rank": state.rank_text(line["agent"]),
            "tied": "-" in state.rank_text(line["agent"]), "forfeits_text": forfeits,
            "elo_text": elo}


def match_view(match: MatchState) -> dict[str, Any]:
    """A match's figures for its page: the verdict, the short line and every figure, as ``othello match`` prints them."""
    return {"a": match.a, "b": match.b, "verdict": match.verdict(), "progress": match.progress_line(),
            "figures": match.lines(), "games": match.games, "expected_games": match.expected_games()}
