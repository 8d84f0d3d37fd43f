"""The class's database, ``class.sqlite``: students (hashed tokens), versions with their cards, game pairs, games.

Every SQL statement of the class server lives here, behind a named method;
the rest of classroom/ sees frozen rows (:class:`Student`, :class:`Version`,
:class:`Pair`, :class:`Game`), their statuses as enums and their JSON
columns parsed (a version's :class:`Card` and files, a pair's opening, a
student's roster columns).  What must happen together is one method and one
transaction: a version stored or taken again (:meth:`ClassStore.add_version`),
a pair planned with its games (:meth:`ClassStore.add_pair`), the games a
killed server left voided and queued again (:meth:`ClassStore.requeue_running`).

One connection, shared by the server's threads under a lock; WAL, so
``othello class export`` can read while the server writes, and every row is
committed before anybody is told (a SIGKILL loses nothing that was said).

The schema changes by :data:`MIGRATIONS`, a list applied in order to an
older ``class.sqlite`` when it is opened (nothing in it is lost); the
number of the schema is kept in ``meta``.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import json
import sqlite3
import threading
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from .cards import hide_paths, split_build_log

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS students (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    token_sha256 TEXT NOT NULL UNIQUE,
    extra TEXT NOT NULL DEFAULT '{}',      -- the roster's other columns
    added_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    student TEXT NOT NULL REFERENCES students(id),
    fingerprint TEXT NOT NULL,
    command TEXT NOT NULL,
    build TEXT NOT NULL DEFAULT '',
    openings INTEGER NOT NULL DEFAULT 0,   -- the program declared that it reads openings
    reads_clock INTEGER NOT NULL DEFAULT 0, -- the program declared that it reads the clock line
    files TEXT NOT NULL,                   -- JSON: [[path, bytes], ...]
    bytes INTEGER NOT NULL,
    submitted_at TEXT NOT NULL,
    status TEXT NOT NULL,                  -- checking, admitted, rejected
    reason TEXT NOT NULL DEFAULT '',       -- why rejected, in a line
    card TEXT,                             -- JSON: the admission card
    decided_at TEXT,
    program TEXT NOT NULL DEFAULT '',      -- the program it runs (uploads.program_fingerprint): '' before schema 3
    UNIQUE (student, fingerprint)
);
CREATE TABLE IF NOT EXISTS pairs (
    id INTEGER PRIMARY KEY,
    a TEXT NOT NULL, a_version INTEGER,     -- a version id, NULL for a reference agent
    b TEXT NOT NULL, b_version INTEGER,
    kind TEXT NOT NULL,                    -- climb (against a reference) or ladder (a classmate)
    opening TEXT NOT NULL DEFAULT '[]',    -- JSON: the opening's move lines ([] from the start)
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    pair INTEGER NOT NULL REFERENCES pairs(id),
    game_index INTEGER NOT NULL,           -- 1, 2, ... of its pair (colours alternate)
    white TEXT NOT NULL, white_version INTEGER, white_fp TEXT NOT NULL,
    black TEXT NOT NULL, black_version INTEGER, black_fp TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,                  -- queued, running, finished, void
    result TEXT, winner TEXT, termination TEXT, detail TEXT,
    white_points REAL, plies INTEGER, moves_sha256 TEXT,
    record TEXT, white_stderr TEXT, black_stderr TEXT,
    created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, void_reason TEXT
);
CREATE INDEX IF NOT EXISTS games_status ON games(status);
CREATE INDEX IF NOT EXISTS games_pair ON games(pair);
CREATE INDEX IF NOT EXISTS versions_student ON versions(student);
"""


@dataclass(frozen=True)
class AddColumn:
    """A migration: a column added to a table (an older database gains it, every row taking the default)."""

    table: str
    column: str
    declaration: str

    def apply(self, db: sqlite3.Connection) -> None:
        present = {row["name"] for row in db.execute(f"PRAGMA table_info({self.table})")}
        if self.column not in present:  # a database made by the code of this column's day has it already
            db.execute(f"ALTER TABLE {self.table} ADD COLUMN {self.column} {self.declaration}")


@dataclass(frozen=True)
class AddTable:
    """A migration: a table (and its indexes) added, ``IF NOT EXISTS``: an older database gains it empty (an index
    added alone is built from the rows already there)."""

    statements: tuple[str, ...]

    def apply(self, db: sqlite3.Connection) -> None:
        for statement in self.statements:
            db.execute(statement)


# The instructor's verdicts by hand: every one kept (who, when, what, why), never overwritten; a version's row
# holds the verdict in force, this table how it came to be.
VERDICTS_TABLE = AddTable((
    "CREATE TABLE IF NOT EXISTS verdicts ("
    " id INTEGER PRIMARY KEY,"
    " version INTEGER NOT NULL REFERENCES versions(id),"
    " action TEXT NOT NULL,"  # admit, reject, recheck
    " reason TEXT NOT NULL,"
    " by TEXT NOT NULL,"  # who gave it: the dashboard's instructor, or the user at the command line
    " at TEXT NOT NULL,"
    " was TEXT NOT NULL,"  # the version's status before
    " card TEXT)",  # the version's card when the verdict was given (a re-check's new card replaces it there)
    "CREATE INDEX IF NOT EXISTS verdicts_version ON verdicts(version)",
))

# A student's games, newest first (their page and /api/me at every refresh): without these the query read every
# game's row, records included (a week of a class of 300: 20,000 rows, 120 MB, for each page).
GAMES_BY_PLAYER = AddTable((
    "CREATE INDEX IF NOT EXISTS games_white ON games(white)",
    "CREATE INDEX IF NOT EXISTS games_black ON games(black)",
))

# The copies' comparison (copies.py): each version's code fingerprints, kept so that a restart does not compute
# them all again (300 versions took 40-108 s of a loaded core at every start).  Keyed by the version's fingerprint
# (the same files give the same code fingerprints, whoever sent them) and by the method they were computed with
# (similarity.method_of: the starters, the k-gram sizes, copydetect's version); the starters' own under STARTERS_PRINTS.
COPY_PRINTS_TABLE = AddTable((
    "CREATE TABLE IF NOT EXISTS copy_prints ("
    " fingerprint TEXT NOT NULL,"  # a version's fingerprint, or STARTERS_PRINTS
    " method TEXT NOT NULL,"
    " hashes BLOB NOT NULL,"  # sorted 64-bit integers (similarity.pack_hashes)
    " PRIMARY KEY (fingerprint, method))",
))
STARTERS_PRINTS = "starters"  # the copy_prints row of the starters' fingerprints (no version's fingerprint is a word)

# What the server's worker process works out for the pages (grades.keep_standings): the pages' process reads it
# rather than computing it beside its answers (a class's standings cost up to 0.7 s of interpreter a change, and
# every answer waited behind them for the interpreter).  ``mark`` says what it was worked out from.
WORKED_OUT_TABLE = AddTable((
    "CREATE TABLE IF NOT EXISTS worked_out ("
    " name TEXT PRIMARY KEY,"  # what it is: 'standings'
    " mark TEXT NOT NULL,"  # what it was worked out from (grades.standings_key)
    " at TEXT NOT NULL,"
    " body TEXT NOT NULL)",  # JSON
))

# Schema 1 is the first class.sqlite; migration N (1-based) makes schema N + 1.  Append, never edit:
# a database records the number it reached, and opening it applies the rest in order.
MIGRATIONS: list[AddColumn | AddTable] = [
    AddColumn("versions", "reads_clock", "INTEGER NOT NULL DEFAULT 0"),  # the game clock (a version declares it)
    AddColumn("versions", "program", "TEXT NOT NULL DEFAULT ''"),  # the same program sent again is the same version
    VERDICTS_TABLE,  # the instructor's verdicts by hand
    GAMES_BY_PLAYER,  # a student's games found by index
    COPY_PRINTS_TABLE,  # the copies' fingerprints, kept across restarts
    WORKED_OUT_TABLE,  # the standings, worked out by the server's worker for the pages
]
SCHEMA_VERSION = 1 + len(MIGRATIONS)

INSTRUCTOR = "instructor"  # who a token names when it is the instructor's (never a student id: ids are checked)


class StoreError(RuntimeError):
    """class.sqlite cannot be used by this program (made by a newer one)."""


def now() -> str:
    """The time now, ISO 8601 in UTC to the second (what every row holds)."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def token_hash(token: str) -> str:
    """What the database keeps of a token: tokens are 32 random bytes, so a plain SHA-256 is enough."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


# -- the rows ---------------------------------------------------------------------------


class VersionStatus(StrEnum):
    """Where a version is: being built and checked, admitted (it plays), or rejected (the card says why)."""

    CHECKING = "checking"
    ADMITTED = "admitted"
    REJECTED = "rejected"


class VerdictAction(StrEnum):
    """What the instructor may do to a version by hand: admit it, reject it, or have it built and checked again."""

    ADMIT = "admit"
    REJECT = "reject"
    RECHECK = "recheck"

    @property
    def done(self) -> str:
        """The action as a past participle: ``admitted``, ``rejected``, ``re-checked``."""
        return {"admit": "admitted", "reject": "rejected", "recheck": "re-checked"}[self.value]


class GameStatus(StrEnum):
    """Where a ladder game is: planned, being played, played (a result), or void (never counted; the reason kept)."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    VOID = "void"


OPEN_GAMES = (GameStatus.QUEUED, GameStatus.RUNNING)


class PairKind(StrEnum):
    """A pair against a reference agent (the climb) or against a classmate's current version (the ladder)."""

    CLIMB = "climb"
    LADDER = "ladder"


@dataclass(frozen=True)
class Student:
    """One row of ``students``: a student of the roster (the token is kept only as its hash)."""

    id: str
    name: str
    extra: dict[str, str]  # the roster's other columns
    added_at: str


@dataclass(frozen=True)
class Verdict:
    """One row of ``verdicts``: the instructor's verdict on a version by hand, with who gave it, when and why."""

    id: int
    version: int
    action: VerdictAction
    reason: str
    by: str
    at: str
    was: VersionStatus  # the version's status before

    @property
    def text(self) -> str:
        """How a card says it: ``admitted by the instructor: REASON``."""
        return f"{self.action.done} by the instructor: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"version_id": self.version, "action": self.action.value, "reason": self.reason, "by": self.by,
                "at": self.at, "was": self.was.value, "text": self.text}


@dataclass(frozen=True)
class CardItem:
    """One item of the conformance check as a card shows it."""

    key: str
    title: str
    status: Optional[str]  # PASS, FAIL, ADVISORY, UNSURE (the server too busy to time it); None: never exercised (UNTESTED)
    detail: str = ""
    evidence: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "status": self.status, "detail": self.detail,
                "evidence": list(self.evidence)}


@dataclass(frozen=True)
class Card:
    """A version's admission card: the verdict and the evidence (the build's output, the check, the stderr)."""

    student: str
    version: int  # the version's id (the key); ``number`` is what the student reads
    fingerprint: str
    status: VersionStatus
    reason: str
    command: str = ""
    build: str = ""
    time_per_move: Optional[float] = None
    clock: Optional[str] = None
    build_log: str = ""  # the end of the build's own output (the compiler's words), the referee's lines apart
    build_status: Optional[str] = None  # how the build ended, when there was one
    check: tuple[str, ...] = ()
    items: tuple[CardItem, ...] = ()
    stderr: str = ""
    error: str = ""  # the card as stored could not be read: what was wrong (the page shows it as one line)
    number: int = 0  # the version's number among its student's (1, 2, 3...)
    build_environment: tuple[str, ...] = ()  # the referee's lines of the build log: the environment it gave the build
    busy_checks: int = 0  # its checks in a row the server was too busy to time (admission.py: checked again, bounded)

    def to_dict(self) -> dict[str, Any]:
        """The card as the API and ``cards/ID/FP.json`` give it (every key, always): ``version`` is the student's
        number of it, ``id`` the class's key."""
        return {"student": self.student, "version": self.number, "id": self.version, "fingerprint": self.fingerprint,
                "status": self.status.value, "reason": self.reason, "command": self.command, "build": self.build,
                "time_per_move": self.time_per_move, "clock": self.clock, "build_log": self.build_log,
                "build_environment": list(self.build_environment), "build_status": self.build_status,
                "check": list(self.check), "items": [item.to_dict() for item in self.items], "stderr": self.stderr,
                "error": self.error, "busy_checks": self.busy_checks}


@dataclass(frozen=True)
class Version:
    """One row of ``versions``: a version a student sent, and its verdict once built and checked."""

    id: int
    student: str
    fingerprint: str
    command: str
    build: str
    openings: bool  # the program declared that it reads openings
    reads_clock: bool  # ... and the clock line
    files: tuple[tuple[str, int], ...]  # (relative path, bytes)
    bytes: int
    submitted_at: str
    status: VersionStatus
    reason: str
    card: Optional[Card]
    decided_at: Optional[str]
    program: str = ""  # the program it runs: its files, build line and command words ('' if stored before schema 3)
    number: int = 0  # its place among its student's versions, from 1: what a person reads (the id is the class's key)


@dataclass(frozen=True)
class Side:
    """One side of a ladder game: a student's version, or a reference agent (``version`` None)."""

    label: str
    version: Optional[int]
    fingerprint: str


@dataclass(frozen=True)
class Pair:
    """One row of ``pairs``: games planned together, ``a`` the version they were planned for."""

    id: int
    a: str
    a_version: Optional[int]
    b: str
    b_version: Optional[int]
    kind: PairKind
    opening: tuple[str, ...]  # the opening's move lines, () from the start
    created_at: str

    def has_version(self, version: int) -> bool:
        return version in (self.a_version, self.b_version)


@dataclass(frozen=True)
class GameResult:
    """A finished game as the standings and the rating fit read it: the sides, their versions, the result.

    No record and no stderr: the standings of a week of games read none of
    them (:meth:`ClassStore.finished_results`).
    """

    id: int
    pair: int
    white: str
    white_version: Optional[int]
    white_fp: str
    black: str
    black_version: Optional[int]
    black_fp: str
    winner: Optional[str]  # "W", "B", None for a draw
    termination: str
    white_points: float
    plies: int
    moves_sha256: str  # '' when the row has none (the standings then hash the record's moves)


@dataclass(frozen=True)
class PairTally:
    """A pair and where its games are: the points its ``a`` scored in the finished ones, how many are still open."""

    pair: Pair
    points: float
    open: int


@dataclass(frozen=True)
class Game:
    """One row of ``games``: a ladder game, planned, played or void."""

    id: int
    pair: int
    game_index: int
    white: str
    white_version: Optional[int]
    white_fp: str
    black: str
    black_version: Optional[int]
    black_fp: str
    seed: int
    status: GameStatus
    result: Optional[str]  # "1-0", "0-1", "1/2-1/2"
    winner: Optional[str]  # "W", "B", None
    termination: Optional[str]
    detail: Optional[str]
    white_points: Optional[float]
    plies: Optional[int]
    moves_sha256: Optional[str]
    record: Optional[str]  # game.json's text as the referee wrote it
    white_stderr: Optional[str]
    black_stderr: Optional[str]
    created_at: str
    started_at: Optional[str]
    finished_at: Optional[str]
    void_reason: Optional[str]
    white_number: Optional[int] = None  # White's version as its student numbers it (None: a reference agent)
    black_number: Optional[int] = None

    def number_of(self, player: str) -> Optional[int]:
        """``player``'s version in this game as its student numbers it (White's if it played both sides)."""
        return self.white_number if player == self.white else self.black_number

    @property
    def sides(self) -> tuple[Side, Side]:
        """White's side and Black's."""
        return Side(self.white, self.white_version, self.white_fp), Side(self.black, self.black_version, self.black_fp)

    def plays(self, player: str) -> bool:
        return player in (self.white, self.black)

    def stderr_of(self, player: str) -> str:
        """What ``player`` wrote to stderr in this game (White's if it played both sides)."""
        return (self.white_stderr if player == self.white else self.black_stderr) or ""

    def colour_of(self, player: str) -> str:
        """``White`` or ``Black``: the colour ``player`` has in this game."""
        return "White" if player == self.white else "Black"

    def opponent_of(self, player: str) -> str:
        return self.black if player == self.white else self.white

    def outcome_for(self, player: str) -> str:
        """``won``, ``lost`` or ``draw`` for ``player`` once finished; until then the game's status."""
        if self.status is not GameStatus.FINISHED:
            return self.status.value
        won = {"1-0": "W", "0-1": "B"}.get(self.result or "")
        mine = "W" if player == self.white else "B"
        return "draw" if won is None else "won" if won == mine else "lost"


@dataclass(frozen=True)
class GameOutcome:
    """What a played game adds to its row (:meth:`ClassStore.finish_game`)."""

    result: str
    winner: Optional[str]
    termination: str
    detail: str
    white_points: float
    plies: int
    moves_sha256: str
    record: str
    white_stderr: str = ""
    black_stderr: str = ""


@dataclass(frozen=True)
class NewVersion:
    """A version as received, before it is stored (:meth:`ClassStore.add_version`)."""

    student: str
    fingerprint: str
    command: str
    build: str
    openings: bool
    reads_clock: bool
    files: tuple[tuple[str, int], ...]
    program: str = ""  # uploads.program_fingerprint: '' matches no other version

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.files)


# -- from columns to rows ---------------------------------------------------------------------


def _json(text: Optional[str], default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def _card(text: Optional[str], row: sqlite3.Row) -> Optional[Card]:
    """A card's JSON as a :class:`Card`; a key a card of an older server lacks reads as the version's own value.

    A card that cannot be read (a wrong type, an unknown status) is a card
    with its ``error`` said, never an exception: one bad card must not take
    the dashboard and the student's page down with it.
    """
    data = _json(text, None)
    if text and not isinstance(data, dict):
        return _unreadable_card(row, "its JSON is not an object")
    if not isinstance(data, dict):
        return None
    try:
        return _parse_card(data, row)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        return _unreadable_card(row, f"{type(exc).__name__}: {exc}")


def _unreadable_card(row: sqlite3.Row, why: str) -> Card:
    try:
        status = VersionStatus(row["status"])
    except ValueError:
        status = VersionStatus.REJECTED
    return Card(str(row["student"]), int(row["id"]), str(row["fingerprint"]), status, str(row["reason"]),
                command=str(row["command"]), build=str(row["build"]), number=_row_number(row),
                error=f"this version's card could not be read ({why[:300]}): the server kept it as it was")


def _parse_card(data: dict[str, Any], row: sqlite3.Row) -> Card:
    time = data.get("time_per_move")
    items = tuple(CardItem(str(item.get("key", "")), str(item.get("title", "")),
                           None if item.get("status") is None else str(item["status"]),
                           str(item.get("detail") or ""), tuple(str(line) for line in item.get("evidence") or ()))
                  for item in data.get("items") or () if isinstance(item, dict))
    build_log, environment = str(data.get("build_log") or ""), data.get("build_environment")
    card = Card(
        # the card is its row's: its id and number are the row's (an older card's "version" was the id)
        student=str(data.get("student", row["student"])), version=int(row["id"]), number=_row_number(row),
        fingerprint=str(data.get("fingerprint", row["fingerprint"])),
        status=VersionStatus(data.get("status", row["status"])), reason=str(data.get("reason", row["reason"])),
        command=str(data.get("command", row["command"])), build=str(data.get("build", row["build"])),
        time_per_move=float(time) if isinstance(time, (int, float)) else None,
        clock=str(data["clock"]) if data.get("clock") else None, build_log=build_log,
        build_environment=tuple(str(line) for line in environment or ()),
        build_status=str(data["build_status"]) if data.get("build_status") else None,
        check=tuple(str(line) for line in data.get("check") or ()), items=items, stderr=str(data.get("stderr") or ""),
        error=str(data.get("error") or ""), busy_checks=int(data.get("busy_checks") or 0))
    return card if environment is not None else _as_kept_today(card)


def _as_kept_today(card: Card) -> Card:
    """A card kept before the referee's lines were set apart from the build's output and the server's paths left
    out: the referee's lines (they head its build log) apart, and every path of the server's hidden (its
    build folder is not known here: ``…`` too)."""
    environment, build_log = split_build_log(card.build_log)
    items = tuple(replace(item, detail=hide_paths(item.detail), evidence=tuple(map(hide_paths, item.evidence)))
                  for item in card.items)
    return replace(card, build_log=hide_paths(build_log), build_environment=tuple(map(hide_paths, environment)),
                   check=tuple(map(hide_paths, card.check)), items=items, stderr=hide_paths(card.stderr))


def _row_number(row: sqlite3.Row) -> int:
    return int(row["number"]) if "number" in row.keys() else 0


def _student(row: sqlite3.Row) -> Student:
    extra = _json(row["extra"], {})
    return Student(row["id"], row["name"], {str(k): str(v) for k, v in extra.items()} if isinstance(extra, dict) else {},
                   row["added_at"])


def _version(row: sqlite3.Row, cards: bool = True) -> Version:
    """A version's row; ``cards=False``: its card left ``None``, not parsed (a few KB of JSON a version)."""
    files = tuple((str(path), int(size)) for path, size in _json(row["files"], []))
    return Version(int(row["id"]), row["student"], row["fingerprint"], row["command"], row["build"],
                   bool(row["openings"]), bool(row["reads_clock"]), files, int(row["bytes"]), row["submitted_at"],
                   VersionStatus(row["status"]), row["reason"], _card(row["card"], row) if cards else None,
                   row["decided_at"], row["program"], int(row["number"]))


def _verdict(row: sqlite3.Row) -> Verdict:
    return Verdict(int(row["id"]), int(row["version"]), VerdictAction(row["action"]), row["reason"], row["by"],
                   row["at"], VersionStatus(row["was"]))


def _pair(row: sqlite3.Row) -> Pair:
    return Pair(int(row["id"]), row["a"], row["a_version"], row["b"], row["b_version"], PairKind(row["kind"]),
                _opening(row["opening"]), row["created_at"])


@functools.lru_cache(maxsize=4096)
def _opening(text: Optional[str]) -> tuple[str, ...]:
    """A pair's opening as its move lines: parsed once for each opening (a week's 10,000 pairs share a suite's few)."""
    return tuple(str(line) for line in _json(text, []))


def _game(row: sqlite3.Row) -> Game:
    return Game(
        id=int(row["id"]), pair=int(row["pair"]), game_index=int(row["game_index"]),
        white=row["white"], white_version=row["white_version"], white_fp=row["white_fp"],
        black=row["black"], black_version=row["black_version"], black_fp=row["black_fp"],
        seed=int(row["seed"]), status=GameStatus(row["status"]), result=row["result"], winner=row["winner"],
        termination=row["termination"], detail=row["detail"], white_points=row["white_points"], plies=row["plies"],
        moves_sha256=row["moves_sha256"], record=row["record"], white_stderr=row["white_stderr"],
        black_stderr=row["black_stderr"], created_at=row["created_at"], started_at=row["started_at"],
        finished_at=row["finished_at"], void_reason=row["void_reason"],
        white_number=row["white_number"] or None, black_number=row["black_number"] or None)


# A version's number is its place among its student's versions (1, 2, 3 for each student): what every page, answer
# and line a person reads calls it, while the id, counted across the class, stays the key (and in the API's URLs).
# Derived, never stored: versions are never deleted, so a student's third version stays their third, and a row
# written by any code of any day (or a test) is numbered alike.
_NUMBER = "(SELECT COUNT(*) FROM versions n WHERE n.student = {student} AND n.id <= {id})"
_VERSIONS = "SELECT *, " + _NUMBER.format(student="versions.student", id="versions.id") + " AS number FROM versions"
_GAME_NUMBERS = (_NUMBER.format(student="games.white", id="games.white_version") + " AS white_number, "
                 + _NUMBER.format(student="games.black", id="games.black_version") + " AS black_number")


def _result(row: sqlite3.Row) -> GameResult:
    return GameResult(int(row["id"]), int(row["pair"]), row["white"], row["white_version"], row["white_fp"],
                      row["black"], row["black_version"], row["black_fp"], row["winner"], row["termination"] or "",
                      float(row["white_points"] or 0.0), int(row["plies"] or 0), row["moves_sha256"] or "")


_RESULT_COLUMNS = ("id, pair, white, white_version, white_fp, black, black_version, black_fp, winner, termination, "
                   "white_points, plies, moves_sha256")

_LISTED = ("id, pair, game_index, white, white_version, white_fp, black, black_version, black_fp, seed, status, result, "
           "winner, termination, detail, white_points, plies, moves_sha256, NULL AS record, NULL AS white_stderr, "
           "NULL AS black_stderr, created_at, started_at, finished_at, void_reason")


def _select_games(records: bool) -> str:
    """``SELECT ... FROM games`` with each side's version number: every column, or (``records=False``) all but the
    record and stderr, as ``NULL``."""
    return "SELECT " + ("*" if records else _LISTED) + ", " + _GAME_NUMBERS + " FROM games"


_GAMES = _select_games(True)

_INSERT_GAME = ("INSERT INTO games (pair, game_index, white, white_version, white_fp, black, black_version, black_fp, "
                "seed, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


class ClassStore:
    """The class's SQLite database."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.lock = threading.RLock()
        self.db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self.db.row_factory = sqlite3.Row
        # The finished games read so far (finished_results): a finished row never changes, so each is read once.
        self._results: dict[int, GameResult] = {}
        self._results_sorted: tuple[GameResult, ...] = ()
        self._results_from = 0  # every game below this id had ended (finished or void) when it was last read
        self._pairs: list[Pair] = []  # every pair read so far, oldest first (pairs)
        self._done_tallies: dict[int, PairTally] = {}  # the tallies of pairs with no open game left (pair_tallies)
        self._tallies_from = 0  # the oldest pair that had an open game when last counted
        self._ended_games: dict[int, Game] = {}  # listed rows of ended games (latest_games): they never change
        self._ended_window = 0  # the largest window latest_games was asked for
        with self.lock:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        # The point reads that come before a request's work (whose token it is, the version or game it names) have
        # a connection of their own: on the shared one they waited behind any thread's long query, or its write
        # waiting for the other process's (``lock``), and the event loop that asks them held every answer and
        # stream of the class meanwhile.  Reads only; WAL lets them run beside the other connection's writes.
        self.quick_lock = threading.Lock()
        self.quick = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self.quick.row_factory = sqlite3.Row

    def _migrate(self) -> None:
        """Make the tables (a new database) or bring an older one to :data:`SCHEMA_VERSION`, in one transaction."""
        with self._transaction() as db:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            found = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            # a class.sqlite made before the schema was numbered: schema 1, or a later one whose
            # columns AddColumn finds already there
            reached = int(found["value"]) if found else 1
            if reached > SCHEMA_VERSION:
                raise StoreError(f"{self.path}: schema {reached}, made by a newer othello (this one knows "
                                 f"{SCHEMA_VERSION}): upgrade othello-arena")
            for migration in MIGRATIONS[reached - 1:]:
                migration.apply(db)
            # CREATE TABLE made a new database at the newest schema: the migrations before found their columns
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))

    def close(self) -> None:
        with self.lock:
            self.db.close()
        with self.quick_lock:
            self.quick.close()

    def _quick_rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        """A point read on the connection of its own (never behind ``lock``)."""
        with self.quick_lock:
            return list(self.quick.execute(sql, args))

    def _quick_row(self, sql: str, *args: Any) -> Optional[sqlite3.Row]:
        found = self._quick_rows(sql, *args)
        return found[0] if found else None

    def _rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        with self.lock:
            return list(self.db.execute(sql, args))

    def _row(self, sql: str, *args: Any) -> Optional[sqlite3.Row]:
        found = self._rows(sql, *args)
        return found[0] if found else None

    def _execute(self, sql: str, *args: Any) -> int:
        """Run one statement in its own transaction; return the new row's id."""
        with self.lock:
            cursor = self.db.execute(sql, args)
            return int(cursor.lastrowid or 0)

    def _transaction(self) -> "_Transaction":
        return _Transaction(self)

    def schema_version(self) -> int:
        found = self._row("SELECT value FROM meta WHERE key = 'schema'")
        return int(found["value"]) if found else 1

    # -- people ------------------------------------------------------------------

    def set_instructor_token(self, token: str) -> None:
        self._execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('instructor_token_sha256', ?)", token_hash(token))

    def add_student(self, student_id: str, name: str, token: str, extra: dict[str, str]) -> None:
        self._execute("INSERT INTO students (id, name, token_sha256, extra, added_at) VALUES (?, ?, ?, ?, ?)",
                      student_id, name, token_hash(token), json.dumps(extra), now())

    def rename_student(self, student_id: str, name: str, extra: dict[str, str]) -> None:
        self._execute("UPDATE students SET name = ?, extra = ? WHERE id = ?", name, json.dumps(extra), student_id)

    def students(self) -> list[Student]:
        return [_student(row) for row in self._rows("SELECT * FROM students ORDER BY id")]

    def student(self, student_id: str) -> Optional[Student]:
        found = self._quick_row("SELECT * FROM students WHERE id = ?", student_id)
        return None if found is None else _student(found)

    def who(self, token: str) -> Optional[str]:
        """The student id a token belongs to, :data:`INSTRUCTOR`, or ``None``."""
        if not token:
            return None
        digest = token_hash(token)
        found = self._quick_row("SELECT value FROM meta WHERE key = 'instructor_token_sha256'")
        if found is not None and hmac.compare_digest(found["value"], digest):
            return INSTRUCTOR
        student = self._quick_row("SELECT id, token_sha256 FROM students WHERE token_sha256 = ?", digest)
        if student is not None and hmac.compare_digest(student["token_sha256"], digest):
            return str(student["id"])
        return None

    # -- versions ----------------------------------------------------------------

    def versions(self, student: Optional[str] = None, cards: bool = True) -> list[Version]:
        """Every version (of ``student``), oldest first; ``cards=False``: without their cards (``None``, not parsed)."""
        if student is None:
            return [_version(row, cards) for row in self._rows(f"{_VERSIONS} ORDER BY id")]
        return [_version(row, cards) for row in self._rows(f"{_VERSIONS} WHERE student = ? ORDER BY id", student)]

    def version(self, version_id: int) -> Optional[Version]:
        found = self._quick_row(f"{_VERSIONS} WHERE id = ?", version_id)
        return None if found is None else _version(found)

    def own_versions_state(self, student: str) -> tuple[Any, ...]:
        """What of ``student``'s versions can change (status, reason, when decided) and their verdicts' ids, read on
        the point reads' connection, so fresh at every call: the key of their ``/api/me``, which then never says
        "checking" after ``/api/versions/ID`` said "admitted" (the class's marks follow a computation later)."""
        versions = tuple(tuple(row) for row in self._quick_rows(
            "SELECT id, status, reason, decided_at FROM versions WHERE student = ? ORDER BY id", student))
        verdicts = tuple(row[0] for row in self._quick_rows(
            "SELECT verdicts.id FROM verdicts JOIN versions ON verdicts.version = versions.id "
            "WHERE versions.student = ? ORDER BY verdicts.id", student))
        return versions, verdicts

    def numbered_version(self, student: str, number: int) -> Optional[Version]:
        """``student``'s version by its number among theirs (1: their first), or ``None``."""
        if number < 1:
            return None
        found = self._row(f"{_VERSIONS} WHERE student = ? ORDER BY id LIMIT 1 OFFSET ?", student, number - 1)
        return None if found is None else _version(found)

    def current_versions(self, cards: bool = True) -> list[Version]:
        """Each student's last admitted version (the one that plays), by student; ``cards=False``: without cards."""
        return [_version(row, cards) for row in self._rows(
            f"{_VERSIONS} WHERE status = ? AND id = "
            "(SELECT MAX(id) FROM versions w WHERE w.student = versions.student AND w.status = ?) ORDER BY student",
            VersionStatus.ADMITTED.value, VersionStatus.ADMITTED.value)]

    def admitted_versions(self, cards: bool = True) -> list[Version]:
        """Every admitted version, oldest first; ``cards=False``: without their cards."""
        return [_version(row, cards) for row in self._rows(f"{_VERSIONS} WHERE status = ? ORDER BY id",
                                                           VersionStatus.ADMITTED.value)]

    def checking_versions(self) -> list[Version]:
        """The versions waiting for their card, oldest first."""
        return [_version(row) for row in self._rows(f"{_VERSIONS} WHERE status = ? ORDER BY id",
                                                    VersionStatus.CHECKING.value)]

    def next_to_check(self) -> Optional[Version]:
        """The oldest version waiting for its card."""
        found = self._row(f"{_VERSIONS} WHERE status = ? ORDER BY id LIMIT 1", VersionStatus.CHECKING.value)
        return None if found is None else _version(found)

    def last_decided_by_student(self) -> dict[str, str]:
        """When each student's last version got its card (ISO time), for the admission's turns."""
        return {str(row["student"]): str(row["last"]) for row in
                self._rows("SELECT student, MAX(decided_at) AS last FROM versions WHERE decided_at IS NOT NULL "
                           "GROUP BY student")}

    def submissions_since(self, student: str, since: str) -> list[str]:
        """When ``student``'s versions stored at ``since`` or later were submitted (ISO 8601, oldest first)."""
        rows = self._rows("SELECT submitted_at FROM versions WHERE student = ? AND submitted_at >= ? "
                          "ORDER BY submitted_at", student, since)
        return [str(row["submitted_at"]) for row in rows]

    def add_version(self, new: NewVersion, check_again: Callable[[Version], bool]) -> tuple[Version, bool]:
        """Store a version to be checked; return its row and whether it is to be checked (new, or again).

        The same files sent again are the version already stored (``False``),
        and so is the same program (``new.program``: the same files and build
        line, a command with the same words, only spaced or quoted otherwise):
        the referee would start the very same process, so its games and
        rating go on rather than start from nothing.  Unless ``check_again``
        says its verdict is to be given anew: it is then put back to
        ``checking``.  The look-up and the insert are one transaction: the
        same version sent twice at once is one.
        """
        select = f"{_VERSIONS} WHERE student = ? AND fingerprint = ?"
        with self._transaction() as db:
            found = db.execute(select, (new.student, new.fingerprint)).fetchone()
            if found is None and new.program:
                found = db.execute(f"{_VERSIONS} WHERE student = ? AND program = ? ORDER BY id LIMIT 1",
                                   (new.student, new.program)).fetchone()
            if found is not None:
                existing = _version(found)
                if not check_again(existing):
                    return existing, False
                db.execute("UPDATE versions SET status = ?, reason = '', card = NULL WHERE id = ?",
                           (VersionStatus.CHECKING.value, existing.id))
                return _version(db.execute(f"{_VERSIONS} WHERE id = ?", (existing.id,)).fetchone()), True
            db.execute("INSERT INTO versions (student, fingerprint, command, build, openings, reads_clock, files, "
                       "bytes, submitted_at, status, program) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (new.student, new.fingerprint, new.command, new.build, int(new.openings),
                        int(new.reads_clock), json.dumps([list(item) for item in new.files]), new.bytes, now(),
                        VersionStatus.CHECKING.value, new.program))
            return _version(db.execute(select, (new.student, new.fingerprint)).fetchone()), True

    def decide(self, card: Card) -> None:
        """Keep a version's verdict and its card (the card names the version)."""
        self._execute("UPDATE versions SET status = ?, reason = ?, card = ?, decided_at = ? WHERE id = ?",
                      card.status.value, card.reason, json.dumps(card.to_dict()), now(), card.version)

    # -- the instructor's verdicts by hand ----------------------------------------------

    def give_verdict(self, version_id: int, action: VerdictAction, reason: str, by: str, status: VersionStatus,
                     shown: str) -> Verdict:
        """Keep the instructor's verdict on a version and put it in force, in one transaction.

        The version takes ``status`` with ``shown`` as its reason; its card
        stays until a re-check's new one comes, and is kept in the verdict's
        row too (nothing recorded is lost).  Unless it is now admitted,
        its games not started are voided, saying why: a rejected or re-checked
        version stops playing at once.  ``LookupError`` for no such version.
        """
        with self._transaction() as db:
            found = db.execute(f"{_VERSIONS} WHERE id = ?", (version_id,)).fetchone()
            if found is None:
                raise LookupError(f"no version {version_id}")
            cursor = db.execute("INSERT INTO verdicts (version, action, reason, by, at, was, card) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (version_id, action.value, reason, by, now(), found["status"], found["card"]))
            db.execute("UPDATE versions SET status = ?, reason = ?, decided_at = ? WHERE id = ?",
                       (status.value, shown, None if status is VersionStatus.CHECKING else now(), version_id))
            if status is not VersionStatus.ADMITTED:
                db.execute("UPDATE games SET status = ?, void_reason = ? WHERE status = ? AND "
                           "(white_version = ? OR black_version = ?)",
                           (GameStatus.VOID.value, f"{found['student']}'s version {found['number']} was {action.done} "
                            "by the instructor before this game started", GameStatus.QUEUED.value, version_id, version_id))
            return _verdict(db.execute("SELECT * FROM verdicts WHERE id = ?", (cursor.lastrowid,)).fetchone())

    def verdicts(self, version_id: Optional[int] = None) -> list[Verdict]:
        """The instructor's verdicts by hand (on one version), oldest first."""
        if version_id is None:
            return [_verdict(row) for row in self._rows("SELECT * FROM verdicts ORDER BY id")]
        return [_verdict(row) for row in self._quick_rows("SELECT * FROM verdicts WHERE version = ? ORDER BY id",
                                                          version_id)]

    # -- the copies' fingerprints ----------------------------------------------------

    def worked_out_mark(self, name: str) -> Optional[str]:
        """The mark of what is kept under ``name`` (:data:`WORKED_OUT_TABLE`), ``None`` when nothing is."""
        found = self._row("SELECT mark FROM worked_out WHERE name = ?", name)
        return str(found["mark"]) if found else None

    def worked_out(self, name: str) -> Optional[tuple[str, str]]:
        """(mark, body) of what is kept under ``name``, ``None`` when nothing is."""
        found = self._row("SELECT mark, body FROM worked_out WHERE name = ?", name)
        return (str(found["mark"]), str(found["body"])) if found else None

    def keep_worked_out(self, name: str, mark: str, body: str) -> None:
        self._execute("INSERT OR REPLACE INTO worked_out (name, mark, at, body) VALUES (?, ?, ?, ?)",
                      name, mark, now(), body)

    def copy_prints(self, method: str) -> dict[str, bytes]:
        """The code fingerprints kept under ``method``, by version fingerprint (and :data:`STARTERS_PRINTS`)."""
        return {str(row["fingerprint"]): bytes(row["hashes"])
                for row in self._rows("SELECT fingerprint, hashes FROM copy_prints WHERE method = ?", method)}

    def keep_copy_prints(self, method: str, prints: dict[str, bytes]) -> None:
        """Keep code fingerprints computed under ``method`` (by version fingerprint), and forget those of any other
        method (the starters or the tool changed: they are never read again), in one transaction."""
        with self._transaction() as db:
            db.execute("DELETE FROM copy_prints WHERE method != ?", (method,))
            db.executemany("INSERT OR REPLACE INTO copy_prints (fingerprint, method, hashes) VALUES (?, ?, ?)",
                           [(fingerprint, method, data) for fingerprint, data in prints.items()])

    # -- pairs and games ------------------------------------------------------------

    def pairs(self) -> list[Pair]:
        """Every pair, oldest first: each row read once (a pair's row never changes once planned)."""
        with self.lock:
            known = self._pairs[-1].id if self._pairs else 0
            found = self._row("SELECT COUNT(*) AS n FROM pairs WHERE id <= ?", known)
            if len(self._pairs) > (int(found["n"]) if found else 0):
                self._pairs = []  # rows removed by another program: read again whole
                known = 0
            self._pairs += [_pair(row) for row in self._rows("SELECT * FROM pairs WHERE id > ? ORDER BY id", known)]
            return list(self._pairs)

    def pair(self, pair_id: int) -> Optional[Pair]:
        found = self._row("SELECT * FROM pairs WHERE id = ?", pair_id)
        return None if found is None else _pair(found)

    def pair_tallies(self, _again: bool = True) -> list[PairTally]:
        """Every pair with the points its ``a`` scored in its finished games and the number of its open games.

        A pair none of whose games is open any more is done for good (only
        a queued or running game is voided or queued again): its tally is
        kept, and each call counts the pairs from the oldest one still open
        on (the ladder's every plan asked for a week's 10,000).
        """
        open_marks = ", ".join("?" for _ in OPEN_GAMES)
        with self.lock:
            pairs = {pair.id: pair for pair in self.pairs()}
            rows = self._rows(
                "SELECT p.id, "
                "(SELECT COALESCE(SUM(CASE WHEN g.white = p.a THEN g.white_points ELSE 1 - g.white_points END), 0) "
                " FROM games g WHERE g.pair = p.id AND g.status = ?) AS points, "
                f"(SELECT COUNT(*) FROM games g WHERE g.pair = p.id AND g.status IN ({open_marks})) AS open "
                "FROM pairs p WHERE p.id >= ? ORDER BY p.id", GameStatus.FINISHED.value,
                *(status.value for status in OPEN_GAMES), self._tallies_from)
            fresh = [PairTally(pairs[int(row["id"])], float(row["points"]), int(row["open"])) for row in rows
                     if int(row["id"]) in pairs]  # (a pair planned since pairs() read them: counted next time)
            done = [self._done_tallies[key] for key in sorted(self._done_tallies)]  # every pair below _tallies_from
            if len(done) + len(fresh) != len(pairs) and _again:  # rows removed by another program: read again whole
                self._pairs, self._done_tallies, self._tallies_from = [], {}, 0
                return self.pair_tallies(_again=False)
            still_open = [tally.pair.id for tally in fresh if tally.open]
            self._tallies_from = still_open[0] if still_open else fresh[-1].pair.id + 1 if fresh else self._tallies_from
            self._done_tallies.update((tally.pair.id, tally) for tally in fresh if tally.pair.id < self._tallies_from)
            return done + fresh

    def add_pair(self, a: Side, b: Side, kind: PairKind, opening: Iterable[str],
                 games: Iterable[tuple[Side, Side, int]]) -> int:
        """Plan a pair and its games (``(white, black, seed)``, queued in this order) in one transaction; its id."""
        with self._transaction() as db:
            cursor = db.execute("INSERT INTO pairs (a, a_version, b, b_version, kind, opening, created_at) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (a.label, a.version, b.label, b.version, kind.value, json.dumps(list(opening)), now()))
            pair = int(cursor.lastrowid or 0)
            for number, (white, black, seed) in enumerate(games, start=1):
                db.execute(_INSERT_GAME, (pair, number, white.label, white.version, white.fingerprint, black.label,
                                          black.version, black.fingerprint, seed, GameStatus.QUEUED.value, now()))
        return pair

    def game(self, game_id: int) -> Optional[Game]:
        found = self._quick_row(f"{_GAMES} WHERE id = ?", game_id)
        return None if found is None else _game(found)

    def games(self, status: Optional[GameStatus] = None, latest: Optional[int] = None,
              records: bool = True) -> list[Game]:
        """The games (with ``status``), oldest first; ``latest``: only the newest so many, newest first.

        ``records=False``: without their records and stderr (``None``, never
        read: what a list shows; a page of 500 games read 3 MB of them).
        """
        where = "" if status is None else " WHERE status = ?"
        order = " ORDER BY id" if latest is None else " ORDER BY id DESC LIMIT ?"
        args: list[Any] = ([] if status is None else [status.value]) + ([] if latest is None else [latest])
        return [_game(row) for row in self._rows(_select_games(records) + where + order, *args)]

    def latest_games(self, latest: int) -> list[Game]:
        """The newest ``latest`` games, newest first, without records and stderr: what ``games(latest=latest,
        records=False)`` gives, each row that had ended (finished or void) when read kept and never read again.

        An ended row never changes (only a queued or running game is
        started, finished, voided or queued again under a new id), so each
        call reads the ids of the window and the rows not kept: a few, where
        the dashboard's 300 and the class view's 2,000 rows with their
        version numbers took 10-40 ms a view.
        """
        ended = (GameStatus.FINISHED.value, GameStatus.VOID.value)
        with self.lock:
            ids = [int(row[0]) for row in self.db.execute("SELECT id FROM games ORDER BY id DESC LIMIT ?", (latest,))]
            missing = [game_id for game_id in ids if game_id not in self._ended_games]
            fresh: dict[int, Game] = {}
            for start in range(0, len(missing), 500):
                chunk = missing[start:start + 500]
                marks = ", ".join("?" for _ in chunk)
                fresh.update((game.id, game) for game in map(_game, self._rows(
                    f"{_select_games(False)} WHERE id IN ({marks})", *chunk)))
            for game_id, game in fresh.items():
                if game.status.value in ended:
                    self._ended_games[game_id] = game
            # keep what the largest window asked holds, not the whole week (a smaller window, the dashboard's 300
            # beside the class view's 2,000, must not drop what the larger one reads next)
            self._ended_window = max(self._ended_window, latest)
            if ids and latest >= self._ended_window and len(self._ended_games) > 2 * len(ids):
                oldest = ids[-1]
                self._ended_games = {key: game for key, game in self._ended_games.items() if key >= oldest}
            return [self._ended_games.get(game_id) or fresh[game_id] for game_id in ids]

    def finished_games(self) -> list[Game]:
        """Every finished game, oldest first."""
        return self.games(GameStatus.FINISHED)

    def finished_results(self) -> tuple[GameResult, ...]:
        """Every finished game's result (no record, no stderr), oldest first: what the standings and the fit read.

        A read model kept up to date by reading only what may have changed:
        a finished row never changes, and every game below the lowest id
        still queued or running had ended when that id was read, so each
        call reads the finished games from the last such id on (a few,
        where the whole table was 20,000 rows).  Should the count of
        finished games ever disagree (rows removed by another program), it
        is read again whole.
        """
        with self.lock:
            open_marks = ", ".join("?" for _ in OPEN_GAMES)
            # read before the rows: a game that ends meanwhile has an id at or above it, and is read below
            low = self._row(f"SELECT COALESCE(MIN(id), (SELECT COALESCE(MAX(id), 0) + 1 FROM games)) AS low "
                            f"FROM games WHERE status IN ({open_marks})", *(status.value for status in OPEN_GAMES))
            new = [_result(row) for row in self._rows(f"SELECT {_RESULT_COLUMNS} FROM games WHERE status = ? AND "
                                                      "id >= ?", GameStatus.FINISHED.value, self._results_from)]
            changed = False
            for result in new:
                if result.id not in self._results:
                    self._results[result.id] = result
                    changed = True
            self._results_from = int(low["low"]) if low else 0
            if self.finished_mark()[0] != len(self._results):
                self._results = {result.id: result for result in map(_result, self._rows(
                    f"SELECT {_RESULT_COLUMNS} FROM games WHERE status = ?", GameStatus.FINISHED.value))}
                changed = True
            if changed:
                self._results_sorted = tuple(self._results[key] for key in sorted(self._results))
            return self._results_sorted

    def game_states(self, from_id: int) -> tuple[int, list[tuple[int, str, str, bool, bool, GameStatus]]]:
        """(the lowest id still queued or running, else one past the last game; each game from ``from_id`` on as
        ``(id, white, black, white is a version, black is a version, status)``): what may have changed in the games
        lists since a reader last saw ``from_id`` as that lowest id (a row below it never changes)."""
        with self.lock:
            open_marks = ", ".join("?" for _ in OPEN_GAMES)
            low = self._row(f"SELECT COALESCE(MIN(id), (SELECT COALESCE(MAX(id), 0) + 1 FROM games)) AS low "
                            f"FROM games WHERE status IN ({open_marks})", *(status.value for status in OPEN_GAMES))
            rows = self._rows("SELECT id, white, black, white_version, black_version, status FROM games WHERE id >= ? "
                              "ORDER BY id", from_id)
        return (int(low["low"]) if low else 0,
                [(int(row["id"]), row["white"], row["black"], row["white_version"] is not None,
                  row["black_version"] is not None, GameStatus(row["status"])) for row in rows])

    def standings_mark(self) -> tuple[int, int, str, str]:
        """A value that changes whenever what the standings read does: a game finished, a version stored or its
        status changed (a card, a verdict), a student added or renamed.  Read by one query, each time asked."""
        found = self._row(
            "SELECT (SELECT COUNT(*) FROM games WHERE status = ?) AS n, "
            "(SELECT COALESCE(MAX(id), 0) FROM games WHERE status = ?) AS last, "
            "(SELECT COALESCE(group_concat(id || ' ' || status, ','), '') FROM versions) AS versions, "
            "(SELECT COALESCE(group_concat(id || ' ' || name, char(10)), '') FROM students) AS students",
            GameStatus.FINISHED.value, GameStatus.FINISHED.value)
        assert found is not None
        return int(found["n"]), int(found["last"]), str(found["versions"]), str(found["students"])

    def roster_mark(self) -> tuple[str, str, str]:
        """A value that changes whenever the class's people or versions do as the dashboard lists them: a student
        added or renamed, a version stored, its status, reason or card changed (a card comes with its decision time),
        a verdict given.  One query (the versions' short columns only: their cards are not read)."""
        found = self._row(
            "SELECT (SELECT COALESCE(group_concat(id || ' ' || status || ' ' || COALESCE(decided_at, '-') || ' ' || "
            "reason, char(10)), '') FROM versions) AS versions, "
            "(SELECT COUNT(*) || ' ' || COALESCE(MAX(id), 0) FROM verdicts) AS verdicts, "
            "(SELECT COALESCE(group_concat(id || ' ' || name || ' ' || extra, char(10)), '') FROM students) AS students")
        assert found is not None
        return str(found["versions"]), str(found["verdicts"]), str(found["students"])

    def games_of_student(self, student: str, latest: int, records: bool = True) -> list[Game]:
        """The newest ``latest`` games one of ``student``'s versions played (or is to play), newest first;
        ``records=False``: without their records and stderr (``None``)."""
        return [_game(row) for row in self._rows(
            _select_games(records) + " WHERE (white = ? AND white_version IS NOT NULL) OR "
            "(black = ? AND black_version IS NOT NULL) ORDER BY id DESC LIMIT ?", student, student, latest)]

    def game_counts(self) -> dict[GameStatus, int]:
        """How many games are in each status (statuses with none left out)."""
        return {GameStatus(row["status"]): int(row["n"])
                for row in self._rows("SELECT status, COUNT(*) AS n FROM games GROUP BY status")}

    def change_mark(self) -> tuple[int, int]:
        """A value that changes whenever a row does, written by this server or by another process (``othello class``
        commands): the event streams compute nothing while it stays the same."""
        with self.lock:
            return self.db.total_changes, int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def finished_mark(self) -> tuple[int, int]:
        """(how many games are finished, the last one's id): it changes when a game finishes."""
        found = self._row("SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS last FROM games WHERE status = ?",
                          GameStatus.FINISHED.value)
        return (int(found["n"]), int(found["last"])) if found else (0, 0)

    def start_game(self, game_id: int) -> None:
        self._execute("UPDATE games SET status = ?, started_at = ? WHERE id = ?", GameStatus.RUNNING.value, now(), game_id)

    def finish_game(self, game_id: int, outcome: GameOutcome) -> bool:
        """Keep a played game (record, result, both sides' stderr) in one commit; ``False`` if it was not running."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE games SET status = ?, result = ?, winner = ?, termination = ?, detail = ?, white_points = ?, "
                "plies = ?, moves_sha256 = ?, record = ?, white_stderr = ?, black_stderr = ?, finished_at = ? "
                "WHERE id = ? AND status = ?",
                (GameStatus.FINISHED.value, outcome.result, outcome.winner, outcome.termination, outcome.detail,
                 outcome.white_points, outcome.plies, outcome.moves_sha256, outcome.record, outcome.white_stderr,
                 outcome.black_stderr, now(), game_id, GameStatus.RUNNING.value))
            return cursor.rowcount == 1

    def void_game(self, game_id: int, why: str) -> None:
        """A game that will not count (never played, or no result): kept, with why."""
        self._execute("UPDATE games SET status = ?, void_reason = ? WHERE id = ?", GameStatus.VOID.value, why, game_id)

    def requeue_running(self, why: str) -> list[int]:
        """Void every game left running (``why``) and queue each again under a new id, in one transaction; the ids."""
        replayed = []
        with self._transaction() as db:
            for game in [_game(row) for row in db.execute(f"{_GAMES} WHERE status = ? ORDER BY id",
                                                          (GameStatus.RUNNING.value,))]:
                db.execute("UPDATE games SET status = ?, void_reason = ? WHERE id = ?",
                           (GameStatus.VOID.value, why, game.id))
                cursor = db.execute(_INSERT_GAME, (game.pair, game.game_index, game.white, game.white_version,
                                                   game.white_fp, game.black, game.black_version, game.black_fp,
                                                   game.seed, GameStatus.QUEUED.value, now()))
                replayed.append(int(cursor.lastrowid or 0))
        return replayed

    def requeue_game(self, game_id: int, why: str, at_most: int) -> Optional[int]:
        """Void a running game the server could not keep (``why``) and queue it again under a new id, in one
        transaction, unless its pair's game was voided ``at_most`` times already; the new id, or ``None``."""
        with self._transaction() as db:
            found = db.execute(f"{_GAMES} WHERE id = ?", (game_id,)).fetchone()
            if found is None:
                return None
            game = _game(found)
            db.execute("UPDATE games SET status = ?, void_reason = ? WHERE id = ?", (GameStatus.VOID.value, why, game.id))
            voided = db.execute("SELECT COUNT(*) FROM games WHERE pair = ? AND game_index = ? AND status = ?",
                                (game.pair, game.game_index, GameStatus.VOID.value)).fetchone()[0]
            if voided > at_most:
                return None
            cursor = db.execute(_INSERT_GAME, (game.pair, game.game_index, game.white, game.white_version, game.white_fp,
                                               game.black, game.black_version, game.black_fp, game.seed,
                                               GameStatus.QUEUED.value, now()))
            return int(cursor.lastrowid or 0)

    def games_started_or_queued_since(self, since: str) -> int:
        """The games started at ``since`` or later, and those queued (to start soon): the ladder's hourly budget."""
        found = self._row("SELECT COUNT(*) AS n FROM games WHERE started_at >= ? OR status = ?",
                          since, GameStatus.QUEUED.value)
        return int(found["n"]) if found else 0


class _Transaction:
    """``with store._transaction() as db:`` several statements committed together (or none)."""

    def __init__(self, store: ClassStore) -> None:
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        self.store.lock.acquire()
        try:
            self.store.db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.store.lock.release()
            raise
        return self.store.db

    def __exit__(self, kind: Any, *rest: Any) -> None:
        try:
            self.store.db.execute("ROLLBACK" if kind is not None else "COMMIT")
        finally:
            self.store.lock.release()


__all__ = ["ClassStore", "StoreError", "Student", "Version", "VersionStatus", "Card", "CardItem", "Pair", "PairKind",
           "PairTally", "Game", "GameResult", "GameStatus", "Verdict", "VerdictAction", "AddTable", "GameOutcome", "NewVersion", "Side", "INSTRUCTOR", "now", "token_hash",
           "MIGRATIONS", "SCHEMA_VERSION", "STARTERS_PRINTS"]
