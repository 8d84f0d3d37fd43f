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
from ..tournaments.config import Tournament
from ..tournaments.livelog import read_live_log
from ..tournaments.lock import holder as lock_holder
from ..tournaments.pairing import active_names
from ..tournaments.runner import game_directory, progress, withdrawn_agents
from ..tournaments.standings import compute
from ..tournaments.store import GameRow, GameStatus, Store, StoreError, result_from_row
from .gameview import entries_from_record, game_view

STDERR_TAIL = 3000  # characters of an agent's stderr shown under each of its forfeits
FRESH_SECONDS = 0.3  # a snapshot this recent is shared by every page that asks


class TournamentView:
    """Snapshots of one tournament for the pages (standings, crosstable, games in progress, one game, one agent)."""

    def __init__(self, tournament: Tournament) -> None:
        self.tournament = tournament
        self._lock = threading.Lock()
        self._cached: tuple[float, dict[str, Any]] | None = None

    @property
    def results_dir(self) -> Path:
        return self.tournament.results_dir.resolve()

    def _store(self) -> Optional[Store]:
        if not Path(self.tournament.database).exists():
            return None
        return Store(self.tournament.database, create=False)

    def overview(self) -> dict[str, Any]:
        """Standings, crosstable, ratings, every game's state, each game in progress with its board."""
        with self._lock:
            if self._cached is not None and time.monotonic() - self._cached[0] < FRESH_SECONDS:
                return self._cached[1]
            data = self._overview()
            self._cached = (time.monotonic(), data)
            return data

    def _overview(self) -> dict[str, Any]:
        t = self.tournament
        data: dict[str, Any] = {"name": t.name, "format": t.format, "time_per_move": t.time_per_move,
                                "agents": [{"name": a.name, "how": a.describe()} for a in t.agents],
                                "standings": [], "crosstable": {}, "games": [], "live": [], "waiting": ""}
        try:
            store = self._store()
        except StoreError as exc:
            data["waiting"] = str(exc)
            return data
        if store is None:
            data["waiting"] = f"no results yet in {t.database}: start the tournament (othello tournament run {t.path})"
            data["standings"] = [{"rank": 0, "agent": name, "games": 0, "points": 0, "wins": 0, "draws": 0,
                                  "losses": 0, "disc_difference": 0, "elo": 0, "elo_error": 0, "forfeits": {}}
                                 for name in t.agent_names]
            return data
        # A game marked running is being played only while a runner holds the lock (as for
        # ``status``); otherwise its runner stopped mid-game, and resume will play it again.
        runner_there = lock_holder(t.database) is not None
        with store:
            withdrawn = withdrawn_agents(t, store)
            table = compute(active_names(t, withdrawn), store.finished_games(exclude=withdrawn), store.byes())
            rows = list(store.game_rows())
            counts = progress(t, store)
        data["standings"] = table.to_list()
        data["crosstable"] = table.crosstable_dict()
        data["withdrawn"] = withdrawn
        data["counts"] = {key: counts[key] for key in ("scheduled", "finished", "running")}
        if not runner_there:
            data["counts"]["running"] = 0
        for row in rows:
            status = row.status.value if row.status is not GameStatus.RUNNING or runner_there else "interrupted"
            game = {"key": row.key, "round": row.round, "white": row.white, "black": row.black,
                    "status": status, "result": "", "reason": row.reason or ""}
            if row.is_finished:
                game["result"] = result_from_row(row).summary()
            data["games"].append(game)
            if status == "running":
                entries = read_live_log(game_directory(t, row.key, row.white, row.black))
                view = game_view(entries, row.white, row.black)
                view["key"] = row.key
                data["live"].append(view)
        data["now"] = time.time()
        return data

    def game(self, key: str) -> Optional[dict[str, Any]]:
        """One game: finished (from its record in the database), in progress (its live log) or still to play."""
        try:
            store = self._store()
        except StoreError:
            return None
        if store is None:
            return None
        with store:
            row = store.game_row(key)
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
                    links=self._links(row))
        return view

    def _links(self, row: GameRow) -> dict[str, str]:
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
        for name in (row.white, row.black):
            links[f"{name}.stderr.log"] = f"{relative.as_posix()}/{name}.stderr.log"
        return links

    def agent(self, name: str) -> Optional[dict[str, Any]]:
        """One agent: its line of the standings, its games, its forfeits with the end of its stderr."""
        if name not in self.tournament.agent_names:
            return None
        overview = self.overview()
        entry = self.tournament.agent(name)
        data: dict[str, Any] = {"name": name, "how": entry.describe(), "line": None, "games": [], "forfeits": [],
                                "tournament": self.tournament.name}
        for line in overview["standings"]:
            if line["agent"] == name:
                data["line"] = line
        try:
            store = self._store()
        except StoreError:
            return data
        if store is None:
            return data
        with store:
            rows = [row for row in store.game_rows() if name in (row.white, row.black)]
        for row in rows:
            words = (result_from_row(row).summary()
                     if row.is_finished else row.status.value)
            data["games"].append({"key": row.key, "white": row.white, "black": row.black, "result": words})
            colour = "W" if row.white == name else "B"
            if row.is_finished and row.reason not in ("normal", None) and row.winner not in (colour, None):
                stderr = (row.white_stderr if colour == "W" else row.black_stderr) or ""
                data["forfeits"].append({"key": row.key, "result": words, "reason": row.reason,
                                         "detail": row.detail or "", "stderr_tail": stderr[-STDERR_TAIL:],
                                         "stderr_length": len(stderr)})
        return data
