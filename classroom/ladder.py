"""The ladder: every admitted version plays game pairs, on its own, all week; and what a killed server left.

A game pair is two games with the same opening (drawn from the balanced
suite when both programs read openings), colours swapped, as in ``othello
match``.  A newly admitted version first climbs the reference agents from
the weakest, one pair each, until it scores at most ``stop_climb_at`` in a
pair (it lost it badly: the next rung would teach nothing); then it plays
its classmates' current versions nearest to its rating, up to
``pairs_per_opponent`` pairs against each.  A student's newer admitted
version replaces the older one at once: the older one's games not started
are dropped.

Everything is planned in the database first (``pairs``, then its two
``games`` as ``queued``), so a SIGKILL loses nothing: at start,
:func:`recover` voids the games that were running (their directories are
kept) and queues each again under a new id; a queued game is simply played.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import threading
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional

from .arena import (AgentEntry, FinishedGame, GameJob, GameRecord, PlayedGame, Pool, Rating, fit, nth_opening,
                    play_job, read_openings, suite_path)
from .settings import ClassSettings, Reference
from .store import ClassStore, now


@dataclass(frozen=True)
class Player:
    """One side of a ladder game: a student's version, or a reference agent (``version`` None)."""

    label: str
    version: Optional[int]
    fingerprint: str


def reference_fingerprint(reference: Reference) -> str:
    """What a reference agent's games record as its version: the built-in agent and its time."""
    return f"builtin:{reference.builtin}" + (f"@{reference.time_per_move:g}" if reference.time_per_move else "")


def rating_key(label: str, version: Optional[int]) -> str:
    """A player of the rating fit: each version of a student is its own (``alice#3``); a reference its name."""
    return label if version is None else f"{label}#{version}"


def finished_for_ratings(store: ClassStore) -> list[FinishedGame]:
    """The finished ladder games as the rating fit takes them."""
    games = []
    for row in store.finished_games():
        record = GameRecord.from_json(row["record"])
        assert record.result is not None
        games.append(FinishedGame(str(row["id"]), 0, rating_key(row["white"], row["white_version"]),
                                  rating_key(row["black"], row["black_version"]), record.result, row["plies"] or 0))
    return games


_fitted: dict[str, tuple[tuple[int, int], dict[str, Rating]]] = {}  # database -> (its finished games, ratings)
_fitted_lock = threading.Lock()


def ratings(store: ClassStore) -> dict[str, Rating]:
    """Every player's rating (versions as ``alice#3``, references by name), fitted on every finished game.

    Fitted again only when a game finished since (every page asks for them).
    """
    found = store.row("SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS last FROM games WHERE status = 'finished'")
    key = (int(found["n"]), int(found["last"])) if found else (0, 0)
    with _fitted_lock:
        cached = _fitted.get(str(store.path))
        if cached is not None and cached[0] == key:
            return cached[1]
    games = finished_for_ratings(store)
    players = sorted({g.white for g in games} | {g.black for g in games})
    result = fit(players, games)
    with _fitted_lock:
        _fitted[str(store.path)] = (key, result)
    return result


def recover(store: ClassStore, settings: ClassSettings) -> list[int]:
    """After a stop or a kill: void the games that were running and queue each again; return the new ids."""
    replayed = []
    with store.transaction() as db:
        for game in list(db.execute("SELECT * FROM games WHERE status = 'running' ORDER BY id")):
            db.execute("UPDATE games SET status = 'void', void_reason = ? WHERE id = ?",
                       ("the server stopped while it was played: played again", game["id"]))
            cursor = db.execute(
                "INSERT INTO games (pair, game_index, white, white_version, white_fp, black, black_version, black_fp, "
                "seed, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)",
                (game["pair"], game["game_index"], game["white"], game["white_version"], game["white_fp"],
                 game["black"], game["black_version"], game["black_fp"], game["seed"], now()))
            replayed.append(int(cursor.lastrowid or 0))
    return replayed


def game_folder(settings: ClassSettings, game_id: int) -> Path:
    return settings.folder / "games" / f"{game_id:06d}"


class Ladder:
    """Plans the next game pairs and turns games into jobs for a pool (the scheduler thread drives it)."""

    def __init__(self, settings: ClassSettings, store: ClassStore) -> None:
        self.settings, self.store = settings, store
        self.suite = read_openings(suite_path(settings.ladder.openings)) if settings.ladder.openings.lower() != "none" else []

    # -- who plays whom ----------------------------------------------------------

    def drop_superseded(self) -> None:
        """Queued games of versions no longer current are not played (the newer version plays instead)."""
        current = {row["id"] for row in self.store.current_versions()}
        for game in self.store.rows("SELECT id, white_version, black_version FROM games WHERE status = 'queued'"):
            versions = [v for v in (game["white_version"], game["black_version"]) if v is not None]
            if any(v not in current for v in versions):
                self.store.execute("UPDATE games SET status = 'void', void_reason = ? WHERE id = ?",
                                   "a newer version was admitted before this game started", game["id"])

    def plan(self) -> Optional[int]:
        """Plan the next game pair (two queued games); return its id, or ``None`` when nothing is left to play."""
        current = self.store.current_versions()
        if not current:
            return None
        pairs = self.store.rows("SELECT p.*, (SELECT COUNT(*) FROM games g WHERE g.pair = p.id AND "
                                "g.status IN ('queued', 'running')) AS open FROM pairs p")
        first_of = {pair["id"]: pair["a"] for pair in pairs}
        points: dict[int, float] = {}  # what the pair's first player (the version planned for) scored in it
        for game in self.store.rows("SELECT pair, white, white_points FROM games WHERE status = 'finished'"):
            scored = game["white_points"] if game["white"] == first_of.get(game["pair"]) else 1 - game["white_points"]
            points[game["pair"]] = points.get(game["pair"], 0.0) + scored
        played = {row["id"]: 0 for row in current}
        for pair in pairs:
            for side in ("a_version", "b_version"):
                if pair[side] in played:
                    played[pair[side]] += 1
        fitted = ratings(self.store)
        for version in sorted(current, key=lambda row: (played[row["id"]], row["id"])):
            mine = [p for p in pairs if p["a_version"] == version["id"] or p["b_version"] == version["id"]]
            if any(p["open"] for p in mine):
                continue  # one pair at a time per version: the next depends on this one's result
            me = Player(version["student"], version["id"], version["fingerprint"])
            opponent = self._next_rung(version, mine, points) or self._nearest_classmate(version, current, mine, fitted)
            if opponent is not None:
                return self._add_pair(me, opponent, version["openings"], pairs)
        return None

    def _next_rung(self, version: sqlite3.Row, mine: list[sqlite3.Row], points: dict[int, float]) -> Optional[tuple[Player, bool]]:
        for reference in self.settings.references:
            against = [p for p in mine if p["b"] == reference.name and p["b_version"] is None]
            if not against:
                return Player(reference.name, None, reference_fingerprint(reference)), True
            if points.get(against[-1]["id"], 0.0) <= self.settings.ladder.stop_climb_at:
                return None  # lost this rung badly: the climb ends here
        return None

    def _nearest_classmate(self, version: sqlite3.Row, current: list[sqlite3.Row], mine: list[sqlite3.Row],
                           ratings: dict[str, Rating]) -> Optional[tuple[Player, bool]]:
        def rating(row: sqlite3.Row) -> float:
            found = ratings.get(rating_key(row["student"], row["id"]))
            return found.elo if found is not None else 1500.0

        own = rating(version)
        candidates = []
        for other in current:
            if other["student"] == version["student"]:
                continue
            together = [p for p in mine if other["id"] in (p["a_version"], p["b_version"])]
            if len(together) >= self.settings.ladder.pairs_per_opponent:
                continue
            candidates.append((abs(rating(other) - own), len(together), other["id"], other))
        if not candidates:
            return None
        other = min(candidates, key=lambda c: c[:3])[3]
        return Player(other["student"], other["id"], other["fingerprint"]), bool(other["openings"])

    def _add_pair(self, me: Player, opponent_and_openings: tuple[Player, bool], my_openings: int,
                  pairs: list[sqlite3.Row]) -> int:
        opponent, their_openings = opponent_and_openings
        labels = {me.label, opponent.label}
        index = sum(1 for p in pairs if {p["a"], p["b"]} == labels)
        opening: list[str] = []
        if self.suite and my_openings and their_openings:
            # One draw for the whole class: everybody's k-th pair against greedy plays the same opening
            # (fair, and two copies of one program play the very same games: see grades.same_moves_as).
            seed = int(hashlib.sha256(self.settings.name.encode()).hexdigest()[:12], 16)
            opening = [move.line() for move in nth_opening(self.suite, index % len(self.suite), seed)]
        kind = "climb" if opponent.version is None else "ladder"
        with self.store.transaction() as db:
            cursor = db.execute("INSERT INTO pairs (a, a_version, b, b_version, kind, opening, created_at) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (me.label, me.version, opponent.label, opponent.version, kind, json.dumps(opening), now()))
            pair = int(cursor.lastrowid or 0)
            seed = random.SystemRandom().randrange(2**31)
            for number, (white, black) in enumerate(((me, opponent), (opponent, me)), start=1):
                db.execute("INSERT INTO games (pair, game_index, white, white_version, white_fp, black, black_version, "
                           "black_fp, seed, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)",
                           (pair, number, white.label, white.version, white.fingerprint, black.label, black.version,
                            black.fingerprint, seed + number, now()))
        return pair

    # -- games as jobs -------------------------------------------------------------

    def entry(self, label: str, version_id: Optional[int]) -> AgentEntry:
        if version_id is None:
            reference = self.settings.reference(label)
            if reference is None:
                raise LookupError(f"{label} is no longer a reference agent of class.toml")
            return AgentEntry(name=reference.name, builtin=reference.builtin, time_per_move=reference.time_per_move)
        version = self.store.version(version_id)
        assert version is not None
        home = self.settings.folder / "builds" / version["student"] / version["fingerprint"]
        return AgentEntry(name=version["student"], command=version["command"], cwd=str(home),
                          openings=bool(version["openings"]), reads_clock=bool(version["reads_clock"]))

    def job(self, game: sqlite3.Row, remote: bool) -> GameJob:
        white, black = self.entry(game["white"], game["white_version"]), self.entry(game["black"], game["black_version"])
        pair = self.store.row("SELECT opening FROM pairs WHERE id = ?", game["pair"])
        opening = tuple(json.loads(pair["opening"] or "[]") if pair else ())
        config = replace(
            self.settings.game,  # the class's time rule and [referee] limits
            agent_times=tuple((e.name, e.time_per_move) for e in (white, black) if e.time_per_move),
            # no program may see the class's other folders, even where one lies inside a folder it may read
            hidden_paths=tuple(str(self.settings.folder / name) for name in ("submissions", "cards", "checks", "games")))
        out_dir = None if remote else str(game_folder(self.settings, game["id"]))
        return GameJob(f"{game['id']:06d}", white, black, config, int(game["seed"]), opening, out_dir)

    def next_queued(self, exclude: set[int]) -> Optional[sqlite3.Row]:
        for game in self.store.rows("SELECT * FROM games WHERE status = 'queued' ORDER BY id"):
            if game["id"] not in exclude:
                return game
        return None

    def record(self, game_id: int, played: PlayedGame) -> None:
        """Keep a finished game (record, result, both sides' stderr) in one commit."""
        record = GameRecord.from_dict(played.record)
        result = record.result
        assert result is not None
        moves = hashlib.sha256(" ".join(str(m.move) for m in record.moves).encode()).hexdigest()
        winner = result.winner.value if result.winner is not None else None
        white_points = 1.0 if winner == "W" else 0.0 if winner == "B" else 0.5
        if played.game_dir:  # beside game.json: which versions played (the database says it too)
            game = self.store.game(game_id)
            if game is not None:
                sides = {colour: {"player": game[colour], "version": game[f"{colour}_version"],
                                  "fingerprint": game[f"{colour}_fp"]} for colour in ("white", "black")}
                (Path(played.game_dir) / "versions.json").write_text(json.dumps(sides, indent=1), encoding="utf-8")
        self.store.execute(
            "UPDATE games SET status = 'finished', result = ?, winner = ?, termination = ?, detail = ?, "
            "white_points = ?, plies = ?, moves_sha256 = ?, record = ?, white_stderr = ?, black_stderr = ?, "
            "finished_at = ? WHERE id = ? AND status = 'running'",
            {"W": "1-0", "B": "0-1"}.get(winner or "", "1/2-1/2"), winner, result.termination.value, result.detail,
            white_points, len(record.moves), moves, played.record_json, played.white_stderr, played.black_stderr,
            now(), game_id)

    def void(self, game_id: int, why: str) -> None:
        self.store.execute("UPDATE games SET status = 'void', void_reason = ? WHERE id = ?", why, game_id)


class Scheduler(threading.Thread):
    """Keeps ``pool.slots`` ladder games in flight: queued ones first, else a newly planned pair."""

    def __init__(self, ladder: Ladder, pool: Pool, paused: Callable[[], bool] = lambda: False,
                 log: Callable[[str], None] = lambda line: None) -> None:
        super().__init__(name="ladder", daemon=True)
        self.ladder, self.pool, self.paused, self.log = ladder, pool, paused, log
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.running: dict[Any, int] = {}  # future -> game id

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                self._fill()
            except Exception:  # the server's fault (the database, a lost Dask scheduler): said, then tried again
                self.log("ladder: " + traceback.format_exc())
            if self.running:
                done = self.pool.wait(list(self.running), timeout=1.0)
                for future in done:
                    self._finish(future)
            else:
                self.wake.wait(1.0 if self.paused() else 2.0)
                self.wake.clear()

    def _fill(self) -> None:
        self.ladder.drop_superseded()
        # While a version is checked no game starts: the check measures the program's speed, and a
        # student waits for the card (the games in flight finish).  Remote workers load no core here.
        if self.paused() and not self.pool.remote:
            return
        while len(self.running) < self.pool.slots and not self.stopping.is_set():
            game = self.ladder.next_queued(set(self.running.values()))
            if game is None:
                if self.ladder.plan() is None:
                    return
                continue
            try:
                job = self.ladder.job(game, self.pool.remote)
            except LookupError as exc:
                self.ladder.void(game["id"], str(exc))
                continue
            self.ladder.store.execute("UPDATE games SET status = 'running', started_at = ? WHERE id = ?", now(), game["id"])
            self.running[self.pool.submit(job)] = int(game["id"])

    def _finish(self, future: Any) -> None:
        game_id = self.running.pop(future)
        try:
            played = future.result()
        except Exception as exc:  # the game could not be kept (GameFileError, a lost worker): void, said why
            self.ladder.void(game_id, f"no result: {exc}")
            self.log(f"ladder: game {game_id} void: {exc}")
            return
        self.ladder.record(game_id, played)


def game_summary(row: sqlite3.Row) -> dict[str, Any]:
    """A game as lists show it (no stderr, no record)."""
    return {"id": row["id"], "pair": row["pair"], "white": row["white"], "black": row["black"],
            "white_version": row["white_version"], "black_version": row["black_version"],
            "white_fingerprint": row["white_fp"], "black_fingerprint": row["black_fp"],
            "status": row["status"], "result": row["result"], "termination": row["termination"],
            "detail": row["detail"], "plies": row["plies"], "finished_at": row["finished_at"],
            "void_reason": row["void_reason"]}


def game_record(row: sqlite3.Row) -> dict[str, Any]:
    """A game with its record as the referee wrote it (never anyone's stderr)."""
    data = game_summary(row)
    data["record"] = json.loads(row["record"]) if row["record"] else None
    return data

