"""The results database: one SQLite file per tournament (stdlib ``sqlite3``, WAL).

Crash safety rests on two rules:

- the schedule of a round is written in one transaction before any of its
  games starts, so a resumed run plays exactly the same games;
- a finished game is written in one transaction (result, moves, times, the
  exact bytes of ``game.json`` with their SHA-256, and both agents' stderr),
  and only if the game is not finished already; so a game is either fully
  counted once or not at all.

A game that was in flight when the runner stopped is not a free re-roll: each
attempt at a game is a row of ``attempts`` (when, by which runner, and why it
was voided), kept for ever, so ``status`` and the report show every game that
had to be replayed and how often.

Each of those commits is on the disk before the runner goes on (``synchronous=FULL``: a power cut
keeps every finished game and every attempt begun), with two economies that keep that promise
(issue 38: on a disk whose sync takes 5-8 ms they were a fifth of a short match's time).  The
set-up's commits (the schema, the binding, a schedule, the games voided at a start) are written
without a sync of their own (:meth:`Store.deferred_sync`): in WAL mode the next synced commit puts
them on the disk too, and no game starts before that commit (its attempt's); a power cut before it
loses only set-up that the next start writes again.  And a game's result and the next game's start
are one transaction (:meth:`Store.finish_then_start`): one sync for both, and the mark is undone
(:meth:`Store.unmark`) if the runner, hearing the result, starts no more games.

Nor is a result replaced by a rerun lost: ``rerun`` copies it whole into
``replaced`` (with when and why) before the game is played again, and a
withdrawn agent's games stay in ``games``; standings and counts leave them out
(:data:`withdrawals`).  The tables and columns are documented in docs/INSTRUCTORS.md
(Tournaments, "Export and the database").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass, fields
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

from ...protocol import BLACK, WHITE, Colour, Result, Termination
from ..schedule.pairing import ScheduledGame

SCHEMA_VERSION = 3
STDERR_LIMIT = 64 * 1024  # characters of each agent's stderr kept in the database

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rounds (
    round INTEGER PRIMARY KEY,
    bye TEXT,
    repeats INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    key TEXT PRIMARY KEY,
    round INTEGER NOT NULL,
    pairing INTEGER NOT NULL,
    game_index INTEGER NOT NULL,
    white TEXT NOT NULL,
    black TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'running', 'finished')),
    attempts INTEGER NOT NULL DEFAULT 0,
    winner TEXT CHECK (winner IN ('W', 'B') OR winner IS NULL),
    reason TEXT,
    detail TEXT,
    white_discs INTEGER,
    black_discs INTEGER,
    plies INTEGER,
    white_seconds REAL,
    black_seconds REAL,
    white_cpu REAL,
    black_cpu REAL,
    load_flag TEXT,
    record TEXT,
    white_stderr TEXT,
    black_stderr TEXT,
    game_dir TEXT,
    worker TEXT,
    started REAL,
    finished REAL,
    record_sha256 TEXT,
    white_version TEXT,
    black_version TEXT
);
CREATE INDEX IF NOT EXISTS games_status ON games(status);
CREATE TABLE IF NOT EXISTS attempts (
    key TEXT NOT NULL REFERENCES games(key),
    attempt INTEGER NOT NULL,
    started REAL NOT NULL,
    ended REAL,
    outcome TEXT NOT NULL DEFAULT 'running' CHECK (outcome IN ('running', 'finished', 'voided')),
    why TEXT,
    runner TEXT,
    files TEXT,
    PRIMARY KEY (key, attempt)
);
CREATE TABLE IF NOT EXISTS withdrawals (
    agent TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    withdrawn REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS replaced (
    key TEXT NOT NULL REFERENCES games(key),
    attempt INTEGER NOT NULL,
    white TEXT NOT NULL,
    black TEXT NOT NULL,
    seed INTEGER NOT NULL,
    winner TEXT,
    reason TEXT,
    detail TEXT,
    white_discs INTEGER,
    black_discs INTEGER,
    plies INTEGER,
    record TEXT,
    record_sha256 TEXT,
    white_stderr TEXT,
    black_stderr TEXT,
    game_dir TEXT,
    finished REAL,
    replaced REAL NOT NULL,
    why TEXT NOT NULL,
    PRIMARY KEY (key, attempt)
);
CREATE TABLE IF NOT EXISTS builds (
    agent TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout', 'error')),
    exit_code INTEGER,
    seconds REAL,
    log TEXT,
    detail TEXT,
    finished REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS checks (
    agent TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    passed INTEGER NOT NULL,
    moves INTEGER NOT NULL,
    mean_move_seconds REAL,
    checked REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS agent_versions (
    agent TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    build_outputs TEXT NOT NULL DEFAULT '[]',
    recorded REAL NOT NULL
);
"""

# Columns added since schema 1, added to an older database when a runner opens it.
MIGRATIONS = {"games": {"record_sha256": "TEXT", "white_version": "TEXT", "black_version": "TEXT"}}


_MOVES_KEYS: dict[str, str] = {}  # record_sha256 -> moves key: a record is parsed once per process


def moves_key(record_json: Optional[str], record_sha256: Optional[str] = None) -> str:
    """A hash of a record's agents and whole move list (opening included); ``""`` for no usable record.

    Two games with the same key are the same game played again (deterministic
    agents from the same start): the standings count them once for the
    rating intervals.  The clock times and comments are left out.
    """
    if not record_json:
        return ""
    if record_sha256 and record_sha256 in _MOVES_KEYS:
        return _MOVES_KEYS[record_sha256]
    try:
        data = json.loads(record_json)
        moves = [str(line) for line in data.get("opening", [])] + [str(m["move"]) for m in data.get("moves", [])]
        text = "\n".join([str(data["white"]), str(data["black"]), str(data.get("start", "")), *moves])
    except (ValueError, KeyError, TypeError, AttributeError):
        return ""
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    if record_sha256:
        _MOVES_KEYS[record_sha256] = key
    return key


class StoreError(RuntimeError):
    """The database does not belong to this tournament file (or is damaged)."""


@dataclass(frozen=True)
class FinishedGame:
    """A finished game as the standings need it: who played which colour, and its :class:`Result`."""

    key: str
    round: int
    white: str
    black: str
    result: Result
    plies: int = 0
    load_flag: Optional[str] = None
    # The agents and every move (opening included), hashed: equal keys are the same game played again.
    moves_key: str = ""

    def colour_of(self, agent: str) -> Colour:
        """The colour ``agent`` played (White if it played both: a game against itself)."""
        return WHITE if agent == self.white else BLACK

    def points(self, agent: str) -> float:
        """Points ``agent`` scored in this game: 1, 1/2 or 0."""
        return self.result.points(self.colour_of(agent))

    def loser(self) -> Optional[str]:
        """The name of the agent that lost, ``None`` for a draw."""
        loser = self.result.loser
        return None if loser is None else self.white if loser is WHITE else self.black


@dataclass
class GameOutcome:
    """What the runner stores for one finished game: its result, and what came with it."""

    result: Result
    plies: int = 0
    white_seconds: float = 0.0
    black_seconds: float = 0.0
    white_cpu: Optional[float] = None
    black_cpu: Optional[float] = None
    load_flag: Optional[str] = None
    record: Optional[dict[str, Any]] = None
    white_stderr: str = ""
    black_stderr: str = ""
    game_dir: str = ""
    worker: str = ""
    record_text: Optional[str] = None  # the exact bytes of game.json the referee wrote (UTF-8)
    record_sha256: Optional[str] = None
    white_version: Optional[str] = None  # each program's fingerprint, as game.json names it
    black_version: Optional[str] = None


def result_columns(result: Result) -> tuple[Optional[str], str, str, int, int]:
    """A result as the columns ``winner, reason, detail, white_discs, black_discs`` hold it."""
    return (result.winner.value if result.winner else None, result.termination.value, result.detail,
            result.white_discs, result.black_discs)


def result_from_row(row: "GameRow | ReplacedRow") -> Result:
    """The :class:`Result` of a finished game's row (the inverse of :func:`result_columns`).

    A column changed by hand to something no game ends with raises ``ValueError``.
    """
    if row.reason is None or row.white_discs is None or row.black_discs is None:
        raise ValueError(f"game {row.key}: no result stored")
    return Result(
        Colour(row.winner) if row.winner else None,
        Termination.parse(row.reason),
        row.white_discs,
        row.black_discs,
        row.detail or "",
    )


class GameStatus(str, Enum):
    """Where a game of the schedule is: the column ``games.status``."""

    SCHEDULED = "scheduled"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(frozen=True)
class StartMark:
    """A game marked running with another game's result (:meth:`Store.finish_then_start`), and its row before."""

    key: str
    attempt: int
    status: str
    started: Optional[float]
    worker: Optional[str]


class AttemptOutcome(str, Enum):
    """How an attempt at a game ended: the column ``attempts.outcome``."""

    RUNNING = "running"
    FINISHED = "finished"
    VOIDED = "voided"


@dataclass(frozen=True)
class GameRow:
    """One row of ``games``: a scheduled game, with its result once it is finished (docs/INSTRUCTORS.md: the database)."""

    key: str
    round: int
    pairing: int
    game_index: int
    white: str
    black: str
    seed: int
    status: GameStatus
    attempts: int
    winner: Optional[str]
    reason: Optional[str]
    detail: Optional[str]
    white_discs: Optional[int]
    black_discs: Optional[int]
    plies: Optional[int]
    white_seconds: Optional[float]
    black_seconds: Optional[float]
    white_cpu: Optional[float]
    black_cpu: Optional[float]
    load_flag: Optional[str]
    record: Optional[str]
    white_stderr: Optional[str]
    black_stderr: Optional[str]
    game_dir: Optional[str]
    worker: Optional[str]
    started: Optional[float]
    finished: Optional[float]  # when it finished (Unix time)
    record_sha256: Optional[str]
    white_version: Optional[str] = None  # the programs' fingerprints (game.json agents.NAME.version)
    black_version: Optional[str] = None

    def version_of(self, agent: str) -> str:
        """The fingerprint of the version of ``agent`` that played this game (``""`` if not recorded)."""
        return (self.white_version if agent == self.white else self.black_version) or ""

    @property
    def is_finished(self) -> bool:
        return self.status is GameStatus.FINISHED

    def plays(self, agent: str) -> bool:
        return agent in (self.white, self.black)

    def stderr_of(self, agent: str) -> str:
        """What ``agent`` wrote to stderr in this game (White's if it played both sides)."""
        return (self.white_stderr if agent == self.white else self.black_stderr) or ""


@dataclass(frozen=True)
class AttemptRow:
    """One row of ``attempts``: one try at playing a game."""

    key: str
    attempt: int
    started: float
    ended: Optional[float]
    outcome: AttemptOutcome
    why: Optional[str]
    runner: Optional[str]
    files: Optional[str]


@dataclass(frozen=True)
class ReplacedRow:
    """One row of ``replaced``: a result a rerun took out of the standings, kept whole."""

    key: str
    attempt: int
    white: str
    black: str
    seed: int
    winner: Optional[str]
    reason: Optional[str]
    detail: Optional[str]
    white_discs: Optional[int]
    black_discs: Optional[int]
    plies: Optional[int]
    record: Optional[str]
    record_sha256: Optional[str]
    white_stderr: Optional[str]
    black_stderr: Optional[str]
    game_dir: Optional[str]
    finished: Optional[float]
    replaced: float
    why: str


@dataclass(frozen=True)
class RoundRow:
    """One row of ``rounds``: a round stored (paired), with a Swiss bye and how many pairings repeat."""

    round: int
    bye: Optional[str]
    repeats: int
    created: float


_Row = TypeVar("_Row", GameRow, AttemptRow, ReplacedRow, RoundRow)
_ENUMS: dict[str, type[Enum]] = {"status": GameStatus, "outcome": AttemptOutcome}


def _typed(kind: type[_Row], row: sqlite3.Row) -> _Row:
    """A database row as ``kind``; a column an older database lacks reads as ``None``."""
    present = set(row.keys())
    values: dict[str, Any] = {}
    for field in fields(kind):
        value = row[field.name] if field.name in present else None
        values[field.name] = _ENUMS[field.name](value) if field.name in _ENUMS else value
    return kind(**values)


@dataclass(frozen=True)
class BuildResult:
    """How an agent's build command ended: ``ok``, ``failed`` (non-zero exit), ``timeout`` or ``error``."""

    agent: str
    status: str
    exit_code: Optional[int] = None
    seconds: float = 0.0
    log: str = ""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Store:
    """A tournament's SQLite database."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise StoreError(f"{self.path}: no results yet (run the tournament first)")
        # The results folder holds every student's games, stderr and build logs:
        # made the instructor's alone (on a lab server other users are students).
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # isolation_level=None: we open every transaction ourselves, so each
        # one is exactly the statements we mean to be atomic.
        self.db = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")  # (on a new file synced as it is made: a power cut leaves no torn header)
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")
        if create:
            with self.deferred_sync(), self.transaction():
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                for table, columns in MIGRATIONS.items():
                    present = {row["name"] for row in self.db.execute(f"PRAGMA table_info({table})")}
                    for column, kind in columns.items():
                        if column not in present:
                            self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                self.set_meta("schema", str(SCHEMA_VERSION))
        # create=False (status, report): only read, never take the write lock
        # from a runner that may be playing right now.

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions -----------------------------------------------------------

    class _Transaction:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                return self.db
            except BaseException:
                # Ctrl-C (SIGTERM) landing just after BEGIN: __exit__ will not run, so end the
                # transaction here, or the runner's last act (voiding the games in flight) fails.
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise

        def __exit__(self, kind: object, value: object, tb: object) -> None:
            if kind is None:
                self.db.execute("COMMIT")
            else:
                self.db.execute("ROLLBACK")

    def transaction(self) -> "Store._Transaction":
        """``with store.transaction():`` runs its statements atomically."""
        return Store._Transaction(self.db)

    @contextlib.contextmanager
    def deferred_sync(self) -> Iterator[None]:
        """Set-up commits that need not reach the disk before the next synced one (WAL: it syncs them too).

        Only for writes that a power cut may roll back because whoever
        starts next writes them again (a schema, a binding, a schedule drawn
        from the seed, games voided at a start); never for a result or an
        attempt begun, which are synced commits of their own.
        """
        self.db.execute("PRAGMA synchronous=NORMAL")
        try:
            yield
        finally:
            self.db.execute("PRAGMA synchronous=FULL")

    # -- meta -------------------------------------------------------------------

    def get_meta(self, key: str) -> Optional[str]:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def bind(self, basis: str, settings: dict[str, Any],
             legacy_key: Optional[Callable[[list[str]], str]] = None) -> None:
        """Tie the database to a tournament's schedule rules (``basis``); refuse different ones.

        The agents may change (see :meth:`Tournament.schedule_basis`).  A
        schema 2 database kept a key that included the agents; it is checked
        with the agents it was started with (``legacy_key(names)``) and then
        upgraded, so a tournament started before keeps going.
        """
        existing = self.get_meta("schedule_basis")
        old_key = self.get_meta("schedule_key")
        if existing is None and old_key is not None:
            names = [agent["name"] for agent in self.settings().get("agents", []) if isinstance(agent, dict)]
            existing = basis if legacy_key is not None and legacy_key(names) == old_key else "(changed)"
        if existing is not None and existing != basis:
            raise StoreError(
                f"{self.path} holds a tournament with a different schedule (format, games per pairing, colours, "
                "seed, rounds or gauntlet changed since it started; agents may be added or withdrawn); use another "
                "results directory, or delete the database to start over"
            )
        with self.transaction():
            if self.get_meta("created") is None:
                self.set_meta("created", repr(time.time()))
            self.set_meta("schedule_basis", basis)
            self.set_meta("settings", json.dumps(settings))

    # -- withdrawals --------------------------------------------------------------

    def withdrawals(self) -> dict[str, str]:
        """Agents withdrawn by ``othello tournament withdraw``, with the reason given."""
        if not self._has_table("withdrawals"):
            return {}
        return {row["agent"]: row["reason"] for row in self.db.execute("SELECT * FROM withdrawals ORDER BY withdrawn")}

    def withdraw(self, agent: str, reason: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO withdrawals (agent, reason, withdrawn) VALUES (?, ?, ?)",
                       (agent, reason, time.time()))

    # -- reruns -----------------------------------------------------------------

    def replace_results(self, agent: Optional[str], why: str, exclude: Iterable[str] = (),
                        flagged: bool = False) -> list[GameRow]:
        """Put every finished game of ``agent`` back in the queue, its result copied into ``replaced`` first.

        With ``flagged``, only its games whose timeout was flagged as caused
        by load (``agent`` ``None``: everyone's).
        Games against an agent in ``exclude`` (withdrawn) are left alone.
        Returns the rows as they were (their ``game_dir`` is moved aside by
        the runner).  One transaction: either every result is kept in
        ``replaced`` and queued again, or nothing changed.
        """
        out = set(exclude)
        with self.transaction() as db:
            rows = [row for row in (_typed(GameRow, raw) for raw in db.execute(
                "SELECT * FROM games WHERE status = 'finished' ORDER BY round, pairing, game_index"))
                if row.white not in out and row.black not in out and (agent is None or row.plays(agent))
                and (row.load_flag or not flagged)]
            now = time.time()
            for row in rows:
                db.execute(
                    "INSERT INTO replaced (key, attempt, white, black, seed, winner, reason, detail, white_discs, "
                    "black_discs, plies, record, record_sha256, white_stderr, black_stderr, game_dir, finished, "
                    "replaced, why) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (row.key, row.attempts, row.white, row.black, row.seed, row.winner,
                     row.reason, row.detail, row.white_discs, row.black_discs, row.plies,
                     row.record, row.record_sha256, row.white_stderr, row.black_stderr,
                     row.game_dir, row.finished, now, why),
                )
                db.execute(
                    "UPDATE games SET status = 'scheduled', winner = NULL, reason = NULL, detail = NULL, "
                    "white_discs = NULL, black_discs = NULL, plies = NULL, white_seconds = NULL, "
                    "black_seconds = NULL, white_cpu = NULL, black_cpu = NULL, load_flag = NULL, record = NULL, "
                    "white_stderr = NULL, black_stderr = NULL, game_dir = NULL, worker = NULL, finished = NULL, "
                    "record_sha256 = NULL, white_version = NULL, black_version = NULL WHERE key = ?", (row.key,))
            return rows

    def set_replaced_files(self, key: str, attempt: int, files: str) -> None:
        """Where the files of a replaced result were moved (``games/replaced/``)."""
        with self.transaction() as db:
            db.execute("UPDATE replaced SET game_dir = ? WHERE key = ? AND attempt = ?", (files, key, attempt))

    def replaced_rows(self) -> list[ReplacedRow]:
        """Every result a rerun replaced, oldest first."""
        if not self._has_table("replaced"):
            return []
        return [_typed(ReplacedRow, row) for row in self.db.execute("SELECT * FROM replaced ORDER BY replaced, key")]

    def settings(self) -> dict[str, Any]:
        text = self.get_meta("settings")
        return json.loads(text) if text else {}

    # -- the schedule -----------------------------------------------------------

    def has_round(self, number: int) -> bool:
        return self.db.execute("SELECT 1 FROM rounds WHERE round = ?", (number,)).fetchone() is not None

    def rounds(self) -> list[RoundRow]:
        """Every round stored (paired), in order."""
        return [_typed(RoundRow, row) for row in self.db.execute("SELECT * FROM rounds ORDER BY round")]

    def add_round(self, number: int, games: list[ScheduledGame], bye: Optional[str] = None, repeats: int = 0) -> None:
        """Store a round's games atomically (nothing if the round is stored already)."""
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM rounds WHERE round = ?", (number,)).fetchone():
                return
            db.execute(
                "INSERT INTO rounds (round, bye, repeats, created) VALUES (?, ?, ?, ?)",
                (number, bye, repeats, time.time()),
            )
            db.executemany(
                "INSERT INTO games (key, round, pairing, game_index, white, black, seed) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(g.key, g.round, g.pairing, g.index, g.white, g.black, g.seed) for g in games],
            )

    def scheduled_games(self, exclude: Iterable[str] = ()) -> list[ScheduledGame]:
        """Every game of the stored schedule, in playing order (less the games of agents in ``exclude``)."""
        out = set(exclude)
        return [game for game in map(_scheduled, self.db.execute("SELECT * FROM games ORDER BY round, pairing, game_index"))
                if game.white not in out and game.black not in out]

    def unfinished_games(self, exclude: Iterable[str] = ()) -> list[ScheduledGame]:
        """The games still to play, less those of agents in ``exclude`` (withdrawn: never played)."""
        out = set(exclude)
        rows = self.db.execute("SELECT * FROM games WHERE status != 'finished' ORDER BY round, pairing, game_index")
        return [game for game in map(_scheduled, rows) if game.white not in out and game.black not in out]

    def mark_running(self, key: str, worker: str = "", runner: str = "") -> int:
        """Start a new attempt at a game; return its number (1 for the first)."""
        with self.transaction() as db:
            return self._mark_running(db, key, worker, runner)

    @staticmethod
    def _mark_running(db: sqlite3.Connection, key: str, worker: str, runner: str) -> int:
        now = time.time()
        db.execute(
            "UPDATE games SET status = 'running', attempts = attempts + 1, started = ?, worker = ? "
            "WHERE key = ? AND status != 'finished'",
            (now, worker, key),
        )
        row = db.execute("SELECT attempts FROM games WHERE key = ?", (key,)).fetchone()
        attempt = int(row["attempts"]) if row else 0
        db.execute(
            "INSERT OR REPLACE INTO attempts (key, attempt, started, outcome, runner) VALUES (?, ?, ?, 'running', ?)",
            (key, attempt, now, runner),
        )
        return attempt

    def finish_then_start(self, key: str, outcome: GameOutcome, next_key: str,
                          runner: str = "") -> tuple[bool, Optional["StartMark"]]:
        """:meth:`finish` ``key`` and :meth:`mark_running` ``next_key`` in one transaction: one sync for both.

        Returns what :meth:`finish` does, and the next game's mark (``None``
        if that game is finished already, so not marked), which
        :meth:`unmark` takes back if the game is not started after all.
        """
        with self.transaction() as db:
            finished = self._finish(db, key, outcome)
            before = db.execute("SELECT status, started, worker FROM games WHERE key = ?", (next_key,)).fetchone()
            if before is None or before["status"] == GameStatus.FINISHED.value:
                return finished, None
            attempt = self._mark_running(db, next_key, "", runner)
            return finished, StartMark(next_key, attempt, str(before["status"]), before["started"], before["worker"])

    def unmark(self, mark: "StartMark") -> None:
        """Take back a mark of :meth:`finish_then_start` whose game never started: its row as it was, no attempt."""
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE games SET status = ?, attempts = attempts - 1, started = ?, worker = ? "
                "WHERE key = ? AND status = 'running' AND attempts = ?",
                (mark.status, mark.started, mark.worker, mark.key, mark.attempt),
            )
            if cursor.rowcount == 1:
                db.execute("DELETE FROM attempts WHERE key = ? AND attempt = ? AND outcome = 'running'",
                           (mark.key, mark.attempt))

    def void(self, key: str, why: str) -> None:
        """The attempt in flight at ``key`` ended with no result (``why``); the game goes back to the queue."""
        with self.transaction() as db:
            self._void(db, key, why)

    def void_running(self, why: str) -> list[str]:
        """Every game left running (by a runner that stopped or died) is voided; return their keys."""
        with self.transaction() as db:
            keys = [row["key"] for row in db.execute("SELECT key FROM games WHERE status = 'running'")]
            for key in keys:
                self._void(db, key, why)
            return keys

    @staticmethod
    def _void(db: sqlite3.Connection, key: str, why: str) -> None:
        db.execute("UPDATE games SET status = 'scheduled' WHERE key = ? AND status = 'running'", (key,))
        db.execute(
            "UPDATE attempts SET outcome = 'voided', ended = ?, why = ? WHERE key = ? AND outcome = 'running'",
            (time.time(), why, key),
        )

    def set_attempt_files(self, key: str, attempt: int, files: str) -> None:
        """Where the files of a voided attempt were kept (moved aside before the replay)."""
        with self.transaction() as db:
            db.execute("UPDATE attempts SET files = ? WHERE key = ? AND attempt = ?", (files, key, attempt))

    def attempt_rows(self) -> list[AttemptRow]:
        """Every attempt at every game, in playing order (empty for a schema 1 database not yet migrated)."""
        if not self._has_table("attempts"):
            return []
        return [_typed(AttemptRow, row) for row in self.db.execute(
            "SELECT a.* FROM attempts a JOIN games g ON g.key = a.key ORDER BY g.round, g.pairing, g.game_index, a.attempt"
        )]

    def voided(self) -> dict[str, list[AttemptRow]]:
        """The voided attempts of each game that has any."""
        result: dict[str, list[AttemptRow]] = {}
        for row in self.attempt_rows():
            if row.outcome is AttemptOutcome.VOIDED:
                result.setdefault(row.key, []).append(row)
        return result

    # -- builds -----------------------------------------------------------------

    def set_build(self, build: BuildResult) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO builds (agent, status, exit_code, seconds, log, detail, finished) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (build.agent, build.status, build.exit_code, build.seconds, build.log, build.detail, time.time()),
            )

    def builds(self) -> dict[str, BuildResult]:
        if not self._has_table("builds"):
            return {}
        return {
            row["agent"]: BuildResult(row["agent"], row["status"], row["exit_code"], row["seconds"] or 0.0,
                                      row["log"] or "", row["detail"] or "")
            for row in self.db.execute("SELECT * FROM builds")
        }

    # -- checks (othello tournament check-agents) -----------------------------------

    def record_check(self, agent: str, version: str, passed: bool, moves: int, mean_move_seconds: Optional[float]) -> None:
        """Keep an agent's last conformance check: its version, verdict and the mean time of its moves."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO checks (agent, version, passed, moves, mean_move_seconds, checked)"
                            " VALUES (?, ?, ?, ?, ?, ?)", (agent, version, int(passed), moves, mean_move_seconds, time.time()))

    def checked_move_times(self) -> dict[str, float]:
        """Each checked agent's mean seconds per move in its last check (agents that made no move left out)."""
        if not self._has_table("checks"):
            return {}
        return {row["agent"]: row["mean_move_seconds"] for row in self.db.execute(
            "SELECT agent, mean_move_seconds FROM checks WHERE mean_move_seconds IS NOT NULL")}

    # -- versions -----------------------------------------------------------------

    def agent_versions(self) -> dict[str, tuple[str, list[str]]]:
        """Each agent's last recorded version, with the paths its build wrote into its folder (left out of it)."""
        if not self._has_table("agent_versions"):
            return {}
        return {row["agent"]: (row["version"], list(json.loads(row["build_outputs"] or "[]")))
                for row in self.db.execute("SELECT * FROM agent_versions")}

    def set_agent_version(self, agent: str, version: str, build_outputs: Iterable[str]) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO agent_versions (agent, version, build_outputs, recorded) "
                       "VALUES (?, ?, ?, ?)", (agent, version, json.dumps(sorted(set(build_outputs))), time.time()))

    def versions_played(self, agent: str) -> dict[str, int]:
        """How many finished games each recorded version of ``agent`` played (games recorded without one left out)."""
        counts: dict[str, int] = {}
        for row in self.db.execute("SELECT white, white_version, black_version FROM games "
                                   "WHERE status = 'finished' AND (white = ? OR black = ?)", (agent, agent)):
            version = row["white_version"] if row["white"] == agent else row["black_version"]
            if version:
                counts[version] = counts.get(version, 0) + 1
        return counts

    def _has_table(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None

    # -- results ----------------------------------------------------------------

    def finish(self, key: str, outcome: GameOutcome) -> bool:
        """Store a finished game atomically; ``False`` if it was finished already (never counted twice)."""
        with self.transaction() as db:
            return self._finish(db, key, outcome)

    @staticmethod
    def _finish(db: sqlite3.Connection, key: str, outcome: GameOutcome) -> bool:
        record_text = outcome.record_text
        if record_text is None and outcome.record is not None:
            record_text = json.dumps(outcome.record)
        cursor = db.execute(
            """UPDATE games SET status = 'finished', winner = ?, reason = ?, detail = ?, white_discs = ?,
               black_discs = ?, plies = ?, white_seconds = ?, black_seconds = ?, white_cpu = ?, black_cpu = ?,
               load_flag = ?, record = ?, white_stderr = ?, black_stderr = ?, game_dir = ?, worker = ?,
               finished = ?, record_sha256 = ?, white_version = ?, black_version = ?
               WHERE key = ? AND status != 'finished'""",
            (
                *result_columns(outcome.result), outcome.plies, outcome.white_seconds, outcome.black_seconds, outcome.white_cpu,
                outcome.black_cpu, outcome.load_flag, record_text, _truncate(outcome.white_stderr),
                _truncate(outcome.black_stderr), outcome.game_dir, outcome.worker, time.time(),
                outcome.record_sha256, outcome.white_version, outcome.black_version, key,
            ),
        )
        if cursor.rowcount != 1:
            return False
        db.execute(
            "UPDATE attempts SET outcome = 'finished', ended = ? WHERE key = ? AND outcome = 'running'",
            (time.time(), key),
        )
        return True

    def finished_games(self, exclude: Iterable[str] = ()) -> list[FinishedGame]:
        """The finished games that count: less those of agents in ``exclude`` (withdrawn)."""
        out = set(exclude)
        rows = self.db.execute(
            "SELECT * FROM games WHERE status = 'finished' ORDER BY round, pairing, game_index"
        )
        return [_finished(row) for row in map(_game_row, rows) if row.white not in out and row.black not in out]

    def finished_game(self, key: str) -> Optional[FinishedGame]:
        """Game ``key`` if it is finished, else ``None`` (a match asks after each game whether its pair is complete)."""
        row = self.db.execute("SELECT * FROM games WHERE key = ? AND status = 'finished'", (key,)).fetchone()
        return _finished(_game_row(row)) if row is not None else None

    def game_rows(self) -> Iterator[GameRow]:
        """Every game row with all its columns (for reports and exports)."""
        return map(_game_row, self.db.execute("SELECT * FROM games ORDER BY round, pairing, game_index"))

    def game_row(self, key: str) -> Optional[GameRow]:
        """Game ``key``'s row, ``None`` if the schedule has no such game."""
        row = self.db.execute("SELECT * FROM games WHERE key = ?", (key,)).fetchone()
        return None if row is None else _game_row(row)

    def counts(self, exclude: Iterable[str] = ()) -> dict[str, int]:
        """``{"scheduled": all games so far, "finished": ..., "running": ..., "excluded": ...}``.

        The games of agents in ``exclude`` (withdrawn) are counted apart
        (``excluded``), never in the others: the counts then add up.
        """
        out = set(exclude)
        counts = {"scheduled": 0, "finished": 0, "running": 0, "excluded": 0}
        for row in self.db.execute("SELECT white, black, status FROM games"):
            if row["white"] in out or row["black"] in out:
                counts["excluded"] += 1
                continue
            counts["scheduled"] += 1
            if row["status"] in ("finished", "running"):
                counts[row["status"]] += 1
        return counts

    def byes(self) -> dict[str, int]:
        """How many byes each agent has had (Swiss with an odd field)."""
        result: dict[str, int] = {}
        for row in self.db.execute("SELECT bye FROM rounds WHERE bye IS NOT NULL"):
            result[row["bye"]] = result.get(row["bye"], 0) + 1
        return result


def _game_row(row: sqlite3.Row) -> GameRow:
    return _typed(GameRow, row)


def _finished(row: GameRow) -> FinishedGame:
    return FinishedGame(
        row.key, row.round, row.white, row.black, result_from_row(row), row.plies or 0,
        row.load_flag, moves_key(row.record, row.record_sha256),
    )


def _scheduled(raw: sqlite3.Row) -> ScheduledGame:
    row = _game_row(raw)
    return ScheduledGame(row.key, row.round, row.pairing, row.game_index, row.white, row.black, row.seed)


def _truncate(text: str) -> str:
    if len(text) <= STDERR_LIMIT:
        return text
    return text[: STDERR_LIMIT // 2] + f"\n[... {len(text) - STDERR_LIMIT} characters cut ...]\n" + text[-STDERR_LIMIT // 2:]
