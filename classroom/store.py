"""The class's database, ``class.sqlite``: students (hashed tokens), versions with their cards, game pairs, games.

One connection, shared by the server's threads under a lock; WAL, so
``othello class export`` can read while the server writes, and every row is
committed before anybody is told (a SIGKILL loses nothing that was said).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

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
    game_index INTEGER NOT NULL,           -- 1 or 2 of its pair (colours swapped)
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

INSTRUCTOR = "instructor"  # who a token names when it is the instructor's (never a student id: ids are checked)


def now() -> str:
    """The time now, ISO 8601 in UTC to the second (what every row holds)."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def token_hash(token: str) -> str:
    """What the database keeps of a token: tokens are 32 random bytes, so a plain SHA-256 is enough."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class ClassStore:
    """The class's SQLite database."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.lock = threading.RLock()
        self.db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self.db.row_factory = sqlite3.Row
        with self.lock:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
            columns = {row["name"] for row in self.db.execute("PRAGMA table_info(versions)")}
            if "reads_clock" not in columns:  # a class.sqlite made before the game clock
                self.db.execute("ALTER TABLE versions ADD COLUMN reads_clock INTEGER NOT NULL DEFAULT 0")

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        with self.lock:
            return list(self.db.execute(sql, args))

    def row(self, sql: str, *args: Any) -> Optional[sqlite3.Row]:
        found = self.rows(sql, *args)
        return found[0] if found else None

    def execute(self, sql: str, *args: Any) -> int:
        """Run one statement in its own transaction; return the new row's id."""
        with self.lock:
            cursor = self.db.execute(sql, args)
            return int(cursor.lastrowid or 0)

    def transaction(self) -> "_Transaction":
        return _Transaction(self)

    # -- people ------------------------------------------------------------------

    def set_instructor_token(self, token: str) -> None:
        self.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('instructor_token_sha256', ?)", token_hash(token))

    def add_student(self, student_id: str, name: str, token: str, extra: dict[str, str]) -> None:
        self.execute("INSERT INTO students (id, name, token_sha256, extra, added_at) VALUES (?, ?, ?, ?, ?)",
                     student_id, name, token_hash(token), json.dumps(extra), now())

    def rename_student(self, student_id: str, name: str, extra: dict[str, str]) -> None:
        self.execute("UPDATE students SET name = ?, extra = ? WHERE id = ?", name, json.dumps(extra), student_id)

    def students(self) -> list[sqlite3.Row]:
        return self.rows("SELECT * FROM students ORDER BY id")

    def student(self, student_id: str) -> Optional[sqlite3.Row]:
        return self.row("SELECT * FROM students WHERE id = ?", student_id)

    def who(self, token: str) -> Optional[str]:
        """The student id a token belongs to, :data:`INSTRUCTOR`, or ``None``."""
        if not token:
            return None
        digest = token_hash(token)
        found = self.row("SELECT value FROM meta WHERE key = 'instructor_token_sha256'")
        if found is not None and hmac.compare_digest(found["value"], digest):
            return INSTRUCTOR
        student = self.row("SELECT id, token_sha256 FROM students WHERE token_sha256 = ?", digest)
        if student is not None and hmac.compare_digest(student["token_sha256"], digest):
            return str(student["id"])
        return None

    # -- versions ----------------------------------------------------------------

    def versions(self, student: Optional[str] = None) -> list[sqlite3.Row]:
        if student is None:
            return self.rows("SELECT * FROM versions ORDER BY id")
        return self.rows("SELECT * FROM versions WHERE student = ? ORDER BY id", student)

    def version(self, version_id: int) -> Optional[sqlite3.Row]:
        return self.row("SELECT * FROM versions WHERE id = ?", version_id)

    def current_versions(self) -> list[sqlite3.Row]:
        """Each student's last admitted version (the one that plays)."""
        return self.rows("SELECT v.* FROM versions v WHERE v.status = 'admitted' AND v.id = "
                         "(SELECT MAX(id) FROM versions w WHERE w.student = v.student AND w.status = 'admitted') "
                         "ORDER BY v.student")

    def submissions_since(self, student: str, since: str) -> int:
        found = self.row("SELECT COUNT(*) AS n FROM versions WHERE student = ? AND submitted_at >= ?", student, since)
        return int(found["n"]) if found else 0

    # -- games -------------------------------------------------------------------

    def game(self, game_id: int) -> Optional[sqlite3.Row]:
        return self.row("SELECT * FROM games WHERE id = ?", game_id)

    def finished_games(self) -> list[sqlite3.Row]:
        return self.rows("SELECT * FROM games WHERE status = 'finished' ORDER BY id")


class _Transaction:
    """``with store.transaction() as db:`` several statements committed together (or none)."""

    def __init__(self, store: ClassStore) -> None:
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        self.store.lock.acquire()
        self.store.db.execute("BEGIN IMMEDIATE")
        return self.store.db

    def __exit__(self, kind: Any, *rest: Any) -> None:
        try:
            self.store.db.execute("ROLLBACK" if kind is not None else "COMMIT")
        finally:
            self.store.lock.release()


def as_dicts(rows: Sequence[sqlite3.Row]) -> Iterator[dict[str, Any]]:
    return (dict(row) for row in rows)
