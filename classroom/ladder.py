"""The ladder: every admitted version plays game pairs, on its own, all week; and what a killed server left.

A game pair is ``[ladder] games_per_pairing`` games (2 by default) with the
same opening (drawn from the balanced suite when both programs read
openings), colours alternating, as in ``othello match``.  Who plays whom is
:mod:`.matchmaking`'s pure function: a newly admitted version climbs the
reference agents, then plays the classmates nearest its rating; this module
gives it a snapshot of the store and writes the pair it plans.  Once the
first pairs are played it goes on with the pairs that teach most, within
``[ladder] games_per_hour``, until the standings are settled; then it is
idle (the dashboard and the server's log say why: :meth:`Ladder.state`) and
starts again when a version arrives.  A student's
newer admitted version replaces the older one at once: the older one's
games not started are dropped.

Everything is planned in the database first (``pairs``, then its games as
``queued``, in one transaction), so a SIGKILL loses nothing: at start,
:func:`recover` voids the games that were running (their directories are
kept) and queues each again under a new id; a queued game is simply played.

A game lost on a timeout that the tournaments flag as caused by the machine's
load (:func:`~othello_arena.tournaments.run.jobs.load_flag`: the agent used
far less CPU than its clock ran, or the load average was over the cores) is
not counted against the student: it is played again with the same seed and
colours, as ``othello tournament rerun --flagged`` does, at most
:data:`LOAD_RETRIES` times, then left void (never scored).  Its files stay
in ``games/``, the flag in its void reason.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import random
import threading
import traceback
from pathlib import Path
from dataclasses import replace
from typing import Any, Callable, Optional, Sequence

from threadpoolctl import threadpool_limits

from .arena import (AgentEntry, Colour, FinishedGame, GameJob, GameRecord, Move, PlayedGame, Pool, Rating, Result,
                    Termination, fit, flagged_timeout, read_openings, suite_path)
from .escapes import make_logs_visible, visible
from .matchmaking import (DEFAULT_RATING, UNRATED, Entrant, Idle, IdleReason, PairPlan, PastPair, Policy, Rung,
                          Snapshot, decide)
from .settings import ClassSettings, Reference
from .store import ClassStore, Game, GameOutcome, GameStatus, Version, now


def reference_fingerprint(reference: Reference) -> str:
    """What a reference agent's games record as its version: the built-in agent and its time."""
    return f"builtin:{reference.builtin}" + (f"@{reference.time_per_move:g}" if reference.time_per_move else "")


def rating_key(label: str, version: Optional[int]) -> str:
    """A player of the rating fit: each version of a student is its own (``alice#3``); a reference its name."""
    return label if version is None else f"{label}#{version}"


_fitted: dict[str, tuple[tuple[int, int], dict[str, Rating]]] = {}  # database -> (its finished games, ratings)
_rating_games: dict[str, dict[int, FinishedGame]] = {}  # database -> finished game id -> the fit's view of it
_fitted_lock = threading.Lock()


def finished_for_ratings(store: ClassStore) -> list[FinishedGame]:
    """The finished ladder games as the rating fit takes them.

    The result from the row's own columns (the winner and how the game
    ended, as :func:`outcome_of` kept them from the record): the fit counts
    points alone, so the discs, which only the record holds, are left 0.
    Parsing each record's JSON took 0.1 ms a game, 2 s at 20,000 games,
    every time one finished.  Each game is made once and kept by its id (a
    finished row never changes): making 20,000 of them again after every
    game was a third of the pages' interpreter time at a class's peak.
    """
    results = store.finished_results()
    with _fitted_lock:
        made = _rating_games.setdefault(str(store.path), {})
    games = []
    for game in results:
        found = made.get(game.id)
        if found is None:
            found = made[game.id] = FinishedGame(
                str(game.id), 0, rating_key(game.white, game.white_version), rating_key(game.black, game.black_version),
                Result(Colour(game.winner) if game.winner else None, Termination.parse(game.termination), 0, 0),
                game.plies)
        games.append(found)
    if len(made) > len(games):  # rows gone (removed by another program): keep only the games read now
        with _fitted_lock:
            _rating_games[str(store.path)] = {int(game.key): game for game in games}
    return games


def ratings(store: ClassStore) -> dict[str, Rating]:
    """Every player's rating (versions as ``alice#3``, references by name), fitted on every finished game.

    Fitted again only when a game finished since (every page asks for them).
    """
    key = store.finished_mark()
    with _fitted_lock:
        cached = _fitted.get(str(store.path))
        if cached is not None and cached[0] == key:
            return cached[1]
    games = finished_for_ratings(store)
    players = sorted({g.white for g in games} | {g.black for g in games})
    # One thread for the linear algebra: its matrices are small (a player a version), and a BLAS thread pool on
    # a machine whose cores are busy (the ladder's games, the checks) made each solve 60-100x slower (measured:
    # 0.36 s against 4.6 ms for 300 players at a load of 14 on 2 cores, 2 s a fit).
    with threadpool_limits(limits=1):
        result = fit(players, games)
    with _fitted_lock:
        _fitted[str(store.path)] = (key, result)
    return result


def recover(store: ClassStore, settings: ClassSettings) -> list[int]:
    """After a stop or a kill: void the games that were running and queue each again; return the new ids."""
    return store.requeue_running("the server stopped while it was played: played again")


def game_folder(settings: ClassSettings, game_id: int) -> Path:
    return settings.folder / "games" / f"{game_id:06d}"


@functools.lru_cache(maxsize=4)
def opening_suite(name: str) -> tuple[Sequence[Move], ...]:
    """The ladder's openings (``[ladder] openings``), read once: every dashboard asks the ladder for its state."""
    return tuple(read_openings(suite_path(name))) if name.lower() != "none" else ()


def hour_ago() -> str:
    """The time an hour ago, as the store's rows hold times."""
    return (dt.datetime.fromisoformat(now()) - dt.timedelta(hours=1)).isoformat()


class Ladder:
    """Plans the next game pairs and turns games into jobs for a pool (the scheduler thread drives it)."""

    def __init__(self, settings: ClassSettings, store: ClassStore) -> None:
        self.settings, self.store = settings, store
        self.suite = opening_suite(settings.ladder.openings)
        self.idle: Optional[Idle] = None  # why the last plan() planned nothing

    # -- who plays whom ----------------------------------------------------------

    def drop_superseded(self) -> None:
        """Queued games of versions no longer current are not played (the newer version plays instead)."""
        current = {version.id for version in self.store.current_versions(cards=False)}
        for game in self.store.games(GameStatus.QUEUED):
            if any(v is not None and v not in current for v in (game.white_version, game.black_version)):
                self.store.void_game(game.id, "a newer version was admitted before this game started")

    def snapshot(self) -> Snapshot:
        """What the pairing looks at, read from the store (:mod:`.matchmaking`)."""
        fitted = ratings(self.store)

        def rating(version: Version) -> tuple[float, float]:
            found = fitted.get(rating_key(version.student, version.id))
            return (found.elo, found.error) if found is not None else (DEFAULT_RATING, UNRATED)

        current = tuple(Entrant(v.id, v.student, v.fingerprint, v.openings, *rating(v))
                        for v in self.store.current_versions(cards=False))
        pairs = tuple(PastPair(t.pair.a, t.pair.a_version, t.pair.b, t.pair.b_version, t.points, t.open)
                      for t in self.store.pair_tallies())
        references = tuple(Rung(ref.name, reference_fingerprint(ref)) for ref in self.settings.references)
        settings = self.settings.ladder
        policy = Policy(self.settings.name, settings.stop_climb_at, settings.pairs_per_opponent,
                        settings.games_per_pairing, settings.settle_elo, settings.games_per_hour)
        budget = None
        if settings.games_per_hour:
            budget = max(0, settings.games_per_hour - self.store.games_started_or_queued_since(hour_ago()))
        return Snapshot(current, pairs, references, policy, self.suite, budget)

    def plan(self) -> Optional[int]:
        """Plan the next game pair (its games queued); return its id, or ``None`` (:attr:`idle` says why)."""
        decided = decide(self.snapshot())
        if isinstance(decided, Idle):
            self.idle = decided
            return None
        self.idle = None
        return self.write(decided)

    def state(self) -> str:
        """What the ladder is doing, in a line for the instructor: playing (how many games), or idle and why."""
        return self.playing() or self.idle_state()

    def playing(self) -> Optional[str]:
        """The ladder's state when it has games running or queued (one query), else ``None``."""
        counts = self.store.game_counts()
        running, queued = counts.get(GameStatus.RUNNING, 0), counts.get(GameStatus.QUEUED, 0)
        if running or queued:
            return f"playing: {running} game{'s' * (running != 1)} running, {queued} queued"
        return None

    def idle_state(self) -> str:
        """Why the ladder plans nothing, or that it plans its next pair: a whole plan (its snapshot, the ratings)."""
        decided = decide(self.snapshot())
        return decided.text() if isinstance(decided, Idle) else "playing: the next pair is being planned"

    def write(self, planned: PairPlan) -> int:
        """Store a planned pair and its games in one transaction; each game's seed one more than the one before."""
        seed = random.SystemRandom().randrange(2**31)
        games = [(white, black, seed + number) for number, (white, black) in enumerate(planned.games, start=1)]
        return self.store.add_pair(planned.a, planned.b, planned.kind, planned.opening, games)

    # -- games as jobs -------------------------------------------------------------

    def entry(self, label: str, version_id: Optional[int]) -> AgentEntry:
        if version_id is None:
            reference = self.settings.reference(label)
            if reference is None:
                raise LookupError(f"{label} is no longer a reference agent of class.toml")
            return AgentEntry(name=reference.name, builtin=reference.builtin, time_per_move=reference.time_per_move)
        version = self.store.version(version_id)
        assert version is not None
        home = self.settings.folder / "builds" / version.student / version.fingerprint
        return AgentEntry(name=version.student, command=version.command, cwd=str(home),
                          openings=version.openings, reads_clock=version.reads_clock)

    def job(self, game: Game, remote: bool) -> GameJob:
        white, black = self.entry(game.white, game.white_version), self.entry(game.black, game.black_version)
        pair = self.store.pair(game.pair)
        opening = pair.opening if pair else ()
        config = replace(
            self.settings.game,  # the class's time rule and [referee] limits
            agent_times=tuple((e.name, e.time_per_move) for e in (white, black) if e.time_per_move),
            # no program may see the class's other folders, even where one lies inside a folder it may read
            hidden_paths=tuple(str(self.settings.folder / name) for name in ("submissions", "cards", "checks", "games")))
        out_dir = None if remote else str(game_folder(self.settings, game.id))
        return GameJob(f"{game.id:06d}", white, black, config, game.seed, opening, out_dir)

    def next_queued(self, exclude: set[int]) -> Optional[Game]:
        return next((game for game in self.store.games(GameStatus.QUEUED) if game.id not in exclude), None)

    def record(self, game_id: int, played: PlayedGame) -> None:
        """Keep a finished game (record, result, both sides' stderr) in one commit."""
        if played.game_dir:  # beside game.json: which versions played (the database says it too)
            game = self.store.game(game_id)
            if game is not None:
                # "version": the student's number of it, as their page says; "version_id": the database's key
                sides = {colour: {"player": side.label, "version": game.number_of(side.label), "version_id": side.version,
                                  "fingerprint": side.fingerprint}
                         for colour, side in zip(("white", "black"), game.sides)}
                (Path(played.game_dir) / "versions.json").write_text(json.dumps(sides, indent=1), encoding="utf-8")
            make_logs_visible(Path(played.game_dir))  # its stderr logs: no agent's terminal escape acts on a cat
        self.store.finish_game(game_id, outcome_of(GameRecord.from_dict(played.record), played.record_json,
                                                   visible(played.white_stderr), visible(played.black_stderr)))

    def void(self, game_id: int, why: str) -> None:
        self.store.void_game(game_id, why)


SERVER_RETRIES = 3  # times a game the server could not keep is queued again
LOAD_RETRIES = 3  # times a game lost on a timeout flagged as caused by load is played again (then void, unscored)
LOAD_VOID = "a timeout the machine's load may have caused (not counted against anyone)"  # its void reason begins so


def moves_sha256(record: GameRecord) -> str:
    """The game's moves without who played them, hashed: equal for two copies of one program in the same game."""
    return hashlib.sha256(" ".join(str(m.move) for m in record.moves).encode()).hexdigest()


def outcome_of(record: GameRecord, record_json: str, white_stderr: str = "", black_stderr: str = "") -> GameOutcome:
    """What a played game's record adds to its row: the result three ways (text, winner, White's points), the moves' hash."""
    result = record.result
    assert result is not None
    moves = moves_sha256(record)
    winner = result.winner.value if result.winner is not None else None
    white_points = 1.0 if winner == "W" else 0.0 if winner == "B" else 0.5
    return GameOutcome({"W": "1-0", "B": "0-1"}.get(winner or "", "1/2-1/2"), winner, result.termination.value,
                       result.detail, white_points, len(record.moves), moves, record_json, white_stderr, black_stderr)


class Scheduler(threading.Thread):
    """Keeps ``pool.slots`` ladder games in flight: queued ones first, else a newly planned pair."""

    def __init__(self, ladder: Ladder, pool: Pool, paused: Callable[[], bool] = lambda: False,
                 log: Callable[[str], None] = lambda line: None) -> None:
        super().__init__(name="ladder", daemon=True)
        self.ladder, self.pool, self.paused, self.log = ladder, pool, paused, log
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.running: dict[Any, int] = {}  # future -> game id
        self.said: Optional[IdleReason] = None  # the idle the log said last (each said once, not every loop)

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
                    self._say_idle()
                    return
                if self.said in (IdleReason.SETTLED, IdleReason.ALONE):
                    self.log("ladder: playing again (the class's versions changed)")
                    self.said = None
                continue
            try:
                job = self.ladder.job(game, self.pool.remote)
            except LookupError as exc:
                self.ladder.void(game.id, str(exc))
                continue
            if self.paused() and not self.pool.remote:
                return  # (asked again: planning took a while, and a check may have been given these cores meanwhile)
            self.ladder.store.start_game(game.id)
            self.running[self.pool.submit(job)] = game.id

    def _say_idle(self) -> None:
        """Say in the log, once, that the ladder is idle and why (not while it waits for games in play)."""
        idle = self.ladder.idle
        if idle is None or idle.reason in (IdleReason.PLAYING, IdleReason.NOBODY) or idle.reason == self.said:
            return
        self.said = idle.reason
        self.log("ladder: " + idle.text())

    def _finish(self, future: Any) -> None:
        game_id = self.running.pop(future)
        try:
            played = future.result()
        except Exception as exc:  # the game could not be kept (GameFileError, a lost worker, no descriptors left)
            # A fault of the server's, never of an agent (an agent's fault is a result): the game is played again,
            # a few times at most, so that a lasting fault does not spin.  Once, six games voided by
            # "[Errno 24] Too many open files" were never planned again and their pairs stayed half played.
            again = self.ladder.store.requeue_game(game_id, f"no result, the server's fault: {exc}", SERVER_RETRIES)
            self.log(f"ladder: game {game_id} void: {exc}" + (f"; queued again as game {again}" if again
                                                               else f"; not queued again after {SERVER_RETRIES} tries"))
            return
        flag = flagged_timeout(played)
        if flag is not None:
            again = self.ladder.store.requeue_game(game_id, f"{LOAD_VOID}: {flag}", LOAD_RETRIES)
            self.log(f"ladder: game {game_id} void, {LOAD_VOID}: {flag}" + (
                f"; played again as game {again}" if again else f"; not played again after {LOAD_RETRIES} tries"))
            return
        self.ladder.record(game_id, played)
        game = self.ladder.store.game(game_id)
        if game is not None:
            self.log(finished_line(game))


def finished_line(game: Game) -> str:
    """The server's log line for a finished ladder game: who played whom, the result and how it ended (no stderr)."""
    def side(label: str, number: Optional[int]) -> str:  # a version as its student numbers it; a reference by name
        return label if number is None else f"{label} (version {number})"

    how = ", ".join(part for part in (game.termination, f"{game.plies} moves" if game.plies is not None else "") if part)
    return (f"game {game.id}: {side(game.white, game.white_number)} (White) vs {side(game.black, game.black_number)} "
            f"(Black): {game.result}" + (f" ({how})" if how else ""))


def game_summary(game: Game) -> dict[str, Any]:
    """A game as lists show it (no stderr, no record)."""
    return {"id": game.id, "pair": game.pair, "white": game.white, "black": game.black,
            # each side's version as its student numbers it (1, 2, 3...): what a person reads
            "white_version": game.white_number, "black_version": game.black_number,
            "white_fingerprint": game.white_fp, "black_fingerprint": game.black_fp,
            "status": game.status.value, "result": game.result, "termination": game.termination,
            "detail": game.detail, "plies": game.plies, "finished_at": game.finished_at,
            "void_reason": game.void_reason}


def game_record(game: Game) -> dict[str, Any]:
    """A game with its record as the referee wrote it (never anyone's stderr)."""
    data = game_summary(game)
    data["record"] = json.loads(game.record) if game.record else None
    return data
