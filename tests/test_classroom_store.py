"""The class's typed store: a class.sqlite made by an older server opens in place and keeps every row; rows come
back typed (statuses as enums, JSON columns parsed); what must be atomic is one transaction."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from othello_arena.classroom.store import (MIGRATIONS, SCHEMA_VERSION, AddColumn, Card, ClassStore, GameStatus,
                                           NewVersion, PairKind, Side, StoreError, VersionStatus)

# class.sqlite as the server wrote it before the store was typed (the schema had no number then).
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS students (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, token_sha256 TEXT NOT NULL UNIQUE,
    extra TEXT NOT NULL DEFAULT '{}', added_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY, student TEXT NOT NULL REFERENCES students(id), fingerprint TEXT NOT NULL,
    command TEXT NOT NULL, build TEXT NOT NULL DEFAULT '', openings INTEGER NOT NULL DEFAULT 0,
    reads_clock INTEGER NOT NULL DEFAULT 0,
    files TEXT NOT NULL, bytes INTEGER NOT NULL, submitted_at TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '', card TEXT, decided_at TEXT, UNIQUE (student, fingerprint));
CREATE TABLE IF NOT EXISTS pairs (
    id INTEGER PRIMARY KEY, a TEXT NOT NULL, a_version INTEGER, b TEXT NOT NULL, b_version INTEGER,
    kind TEXT NOT NULL, opening TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY, pair INTEGER NOT NULL REFERENCES pairs(id), game_index INTEGER NOT NULL,
    white TEXT NOT NULL, white_version INTEGER, white_fp TEXT NOT NULL,
    black TEXT NOT NULL, black_version INTEGER, black_fp TEXT NOT NULL,
    seed INTEGER NOT NULL, status TEXT NOT NULL,
    result TEXT, winner TEXT, termination TEXT, detail TEXT,
    white_points REAL, plies INTEGER, moves_sha256 TEXT,
    record TEXT, white_stderr TEXT, black_stderr TEXT,
    created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, void_reason TEXT);
CREATE INDEX IF NOT EXISTS games_status ON games(status);
CREATE INDEX IF NOT EXISTS games_pair ON games(pair);
CREATE INDEX IF NOT EXISTS versions_student ON versions(student);
"""
BEFORE_THE_CLOCK = OLD_SCHEMA.replace("    reads_clock INTEGER NOT NULL DEFAULT 0,\n", "")
T = "2026-01-01T00:00:00+00:00"
# a card as the server kept it before cards were typed: no build_status, an UNTESTED item (status null)
OLD_CARD = {"student": "alice", "version": 1, "fingerprint": "fpa", "command": "python3 a.py {name}", "build": "",
            "time_per_move": 0.5, "clock": None, "build_log": "", "check": ["PASS  legal moves"],
            "items": [{"key": "pass", "title": "passes when it must", "status": None, "detail": "",
                       "evidence": []}], "stderr": "", "status": "admitted", "reason": ""}


def old_database(path: Path, schema: str) -> dict[str, list[tuple[object, ...]]]:
    """A class.sqlite made by ``schema`` with a row of every kind; return every table's rows as stored."""
    db = sqlite3.connect(path)
    db.executescript(schema)
    db.execute("INSERT INTO meta VALUES ('instructor_token_sha256', 'abc')")
    db.execute("INSERT INTO students VALUES ('alice', 'Alice', 'h1', '{\"email\": \"a@x\"}', ?)", (T,))
    db.execute("INSERT INTO students VALUES ('bob', 'Bob', 'h2', '{}', ?)", (T,))
    db.execute("INSERT INTO versions (student, fingerprint, command, build, openings, files, bytes, submitted_at, "
               "status, reason, card, decided_at) VALUES ('alice', 'fpa', 'python3 a.py {name}', '', 1, "
               "'[[\"a.py\", 12]]', 12, ?, 'admitted', '', ?, ?)", (T, json.dumps(OLD_CARD), T))
    db.execute("INSERT INTO versions (student, fingerprint, command, files, bytes, submitted_at, status) "
               "VALUES ('bob', 'fpb', './b', '[]', 0, ?, 'checking')", (T,))
    db.execute("INSERT INTO pairs VALUES (1, 'alice', 1, 'greedy', NULL, 'climb', '[\"(B D 3)\"]', ?)", (T,))
    for game_id, status in ((1, "finished"), (2, "running"), (3, "queued"), (4, "void")):
        db.execute("INSERT INTO games (id, pair, game_index, white, white_version, white_fp, black, black_version, "
                   "black_fp, seed, status, result, winner, termination, white_points, plies, record, white_stderr, "
                   "created_at, void_reason) VALUES (?, 1, ?, 'alice', 1, 'fpa', 'greedy', NULL, 'builtin:greedy', 7, "
                   "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (game_id, game_id, status, "1-0" if status == "finished" else None,
                    "W" if status == "finished" else None, "normal" if status == "finished" else None,
                    1.0 if status == "finished" else None, 4 if status == "finished" else None,
                    '{"x": 1}' if status == "finished" else None, "alice's stderr", T,
                    "gone" if status == "void" else None))
    db.commit()
    tables = {table: sorted(db.execute(f"SELECT * FROM {table}")) for table in ("students", "versions", "pairs", "games")}
    db.close()
    return tables


@pytest.mark.parametrize("schema", [OLD_SCHEMA, BEFORE_THE_CLOCK], ids=["typed-store's-eve", "before-the-clock"])
def test_an_older_class_database_opens_in_place_and_keeps_every_row(tmp_path: Path, schema: str) -> None:
    path = tmp_path / "class.sqlite"
    before = old_database(path, schema)
    store = ClassStore(path)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 1 + len(MIGRATIONS)
        assert store.who("") is None
        students = store.students()
        assert [(s.id, s.name, s.extra) for s in students] == [("alice", "Alice", {"email": "a@x"}), ("bob", "Bob", {})]
        alice, bob = store.versions()
        assert alice.status is VersionStatus.ADMITTED and alice.openings and not alice.reads_clock
        assert alice.files == (("a.py", 12),) and alice.bytes == 12
        # the card as it was, with what a card says now: its id apart from its number, the referee's lines apart
        assert alice.card is not None and alice.card.to_dict() == {**OLD_CARD, "id": 1, "build_status": None,
                                                                   "error": "", "build_environment": [],
                                                                   "busy_checks": 0}
        # each student's versions numbered from 1 (bob's first is the class's second row): no column needed
        assert (alice.number, bob.number, alice.card.number) == (1, 1, 1) and (alice.id, bob.id) == (1, 2)
        assert alice.card.items[0].status is None  # UNTESTED stays so
        assert bob.status is VersionStatus.CHECKING and bob.card is None and bob.reads_clock is False
        assert [v.id for v in store.current_versions()] == [alice.id]
        assert [v.id for v in store.checking_versions()] == [bob.id]
        (pair,) = store.pairs()
        assert pair.kind is PairKind.CLIMB and pair.opening == ("(B D 3)",) and pair.b_version is None
        games = store.games()
        assert [g.status for g in games] == [GameStatus.FINISHED, GameStatus.RUNNING, GameStatus.QUEUED, GameStatus.VOID]
        assert games[0].white_points == 1.0 and games[0].stderr_of("alice") == "alice's stderr"
        assert (games[0].white_number, games[0].black_number, games[0].number_of("alice")) == (1, None, 1)
        assert store.game_counts() == {status: 1 for status in GameStatus}
        (tally,) = store.pair_tallies()
        assert (tally.points, tally.open) == (1.0, 2)  # alice won the finished game; one running, one queued
    finally:
        store.close()
    # every row kept as it was (a column added takes its default), and opening it again changes nothing
    db = sqlite3.connect(path)
    after = {table: sorted(db.execute(f"SELECT * FROM {table}")) for table in before}
    columns = [row[1] for row in db.execute("PRAGMA table_info(versions)")]
    db.close()
    assert {table: rows for table, rows in after.items() if table != "versions"} == \
        {table: rows for table, rows in before.items() if table != "versions"}
    # each version's row as it was, by column name, less the columns a migration adds (each takes its default)
    old = sqlite3.connect(":memory:")
    old.executescript(schema)
    old_columns = [row[1] for row in old.execute("PRAGMA table_info(versions)")]
    old.close()
    columns_added = [migration for migration in MIGRATIONS if isinstance(migration, AddColumn)]
    added = {migration.column: default for migration, default in zip(columns_added, (0, ""))}
    assert len(added) == len(columns_added), "a migration added: say its column's default here"

    def kept(names: list[str], row: tuple[object, ...]) -> dict[str, object]:
        return {name: value for name, value in zip(names, row) if name not in added}

    assert [kept(columns, row) for row in after["versions"]] == [kept(old_columns, row) for row in before["versions"]]
    assert all(dict(zip(columns, row))[name] == default for row in after["versions"] for name, default in added.items())
    reopened = ClassStore(path)  # the tables a migration adds are there, empty
    try:
        assert reopened.verdicts() == []
    finally:
        reopened.close()
    db = sqlite3.connect(path)
    assert sorted(db.execute("SELECT * FROM games")) == after["games"]
    db.close()


def test_a_database_of_a_newer_schema_is_refused_not_damaged(tmp_path: Path) -> None:
    path = tmp_path / "class.sqlite"
    ClassStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer othello"):
        ClassStore(path)


def test_the_same_version_sent_at_once_from_many_threads_is_one_row(tmp_path: Path) -> None:
    store = ClassStore(tmp_path / "class.sqlite")
    try:
        store.add_student("alice", "Alice", "token", {})
        new = NewVersion("alice", "fp", "python3 a.py", "", False, False, (("a.py", 3),))
        results: list[bool] = []

        def send() -> None:
            results.append(store.add_version(new, check_again=lambda _: False)[1])

        threads = [threading.Thread(target=send) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results) == [False] * 7 + [True] and len(store.versions()) == 1
        # rejected by a fault of the server's: the same files sent again are checked again, in the same row
        (version,) = store.versions()
        store.decide(Card("alice", version.id, "fp", VersionStatus.REJECTED, "the server could not"))
        again, checked = store.add_version(new, check_again=lambda v: v.reason.startswith("the server"))
        assert checked and again.id == version.id and again.status is VersionStatus.CHECKING and again.card is None
    finally:
        store.close()


def test_a_pair_and_its_games_are_one_transaction_and_a_kill_requeues_what_ran(tmp_path: Path) -> None:
    store = ClassStore(tmp_path / "class.sqlite")
    try:
        me, them = Side("alice", 1, "fpa"), Side("greedy", None, "builtin:greedy")
        with pytest.raises(sqlite3.IntegrityError):  # a game no row can hold: the pair is not kept either
            store.add_pair(me, them, PairKind.CLIMB, (), [(me, them, 1), (them, me, None)])  # type: ignore[list-item]
        assert store.pairs() == [] and store.games() == []
        pair = store.add_pair(me, them, PairKind.CLIMB, ["(B D 3)"], [(me, them, 1), (them, me, 2)])
        first, second = store.games()
        assert (first.pair, first.game_index, first.sides, first.seed) == (pair, 1, (me, them), 1)
        assert (second.game_index, second.sides) == (2, (them, me))
        store.start_game(first.id)
        (replayed,) = store.requeue_running("stopped")
        voided, again = store.game(first.id), store.game(replayed)
        assert voided is not None and voided.status is GameStatus.VOID and voided.void_reason == "stopped"
        assert again is not None and again.status is GameStatus.QUEUED and again.sides == first.sides
    finally:
        store.close()


def test_versions_are_numbered_per_student_and_keep_their_number(tmp_path: Path) -> None:
    """Sent in turns, each student's versions are their 1, 2, 3 (the class's ids go on counting across students);
    a game names each side's version by that number, and the instructor's command finds a version by it."""
    store = ClassStore(tmp_path / "class.sqlite")
    try:
        for student in ("alice", "bob"):
            store.add_student(student, student.title(), f"token-{student}", {})
        sent = []
        for turn, student in enumerate(["alice", "bob", "alice", "bob", "alice"]):
            new = NewVersion(student, f"fp{turn}", "python3 a.py {name}", "", False, False, (("a.py", 3),))
            version, _ = store.add_version(new, check_again=lambda version: False)
            sent.append((student, version.id, version.number))
        assert sent == [("alice", 1, 1), ("bob", 2, 1), ("alice", 3, 2), ("bob", 4, 2), ("alice", 5, 3)]
        assert [v.number for v in store.versions("alice")] == [1, 2, 3]
        assert [(v.student, v.number) for v in store.versions()] == [(s, n) for s, _, n in sent]
        assert store.version(4) is not None and store.version(4).number == 2  # type: ignore[union-attr]
        found = store.numbered_version("alice", 3)
        assert found is not None and found.id == 5
        assert store.numbered_version("alice", 4) is None and store.numbered_version("alice", 0) is None
        pair = store.add_pair(Side("alice", 5, "fp4"), Side("bob", 4, "fp3"), PairKind.LADDER, (),
                              [(Side("alice", 5, "fp4"), Side("bob", 4, "fp3"), 1)])
        (game,) = [g for g in store.games() if g.pair == pair]
        assert (game.white_number, game.black_number, game.number_of("bob")) == (3, 2, 2)
    finally:
        store.close()
