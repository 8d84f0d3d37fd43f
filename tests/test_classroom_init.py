"""othello class init: the roster checked, tokens made once and kept hashed; a version's fingerprint."""

from __future__ import annotations

import csv
import os
import sqlite3
import stat
from pathlib import Path

from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.classroom.settings import load
from othello_arena.classroom.store import ClassStore, token_hash
from othello_arena.referee.fingerprint import fingerprint


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def tokens(folder: Path) -> dict[str, str]:
    with open(folder / "tokens.csv", encoding="utf-8") as handle:
        return {row["id"]: row["token"] for row in csv.DictReader(handle)}


def test_fingerprint_follows_the_files_and_the_lines_not_their_place(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        (folder / "src").mkdir(parents=True)
        write(folder / "agent.py", "print(1)\n")
        write(folder / "src" / "x.c", "int x;\n")
    same = fingerprint(one, "python3 agent.py {name}")
    assert same == fingerprint(two, "python3 agent.py {name}")
    assert len(same) == 64
    assert fingerprint(one, "python3 agent.py {name}", "make") != same  # the build line counts
    assert fingerprint(one, "python3 agent.py") != same  # the command counts
    write(two / "src" / "x.c", "int y;\n")
    assert fingerprint(two, "python3 agent.py {name}") != same  # one changed byte
    (two / "src" / "x.c").rename(two / "src" / "y.c")
    write(two / "src" / "y.c", "int x;\n")
    assert fingerprint(two, "python3 agent.py {name}") != same  # a renamed file


def test_init_makes_the_class_and_a_second_run_only_adds(tmp_path: Path) -> None:
    roster = write(tmp_path / "roster.csv", "id,name,email\nalice,Alice A,a@x\nbob,Bob B,b@x\n")
    folder = tmp_path / "class"
    result = CliRunner().invoke(cli, ["class", "init", str(folder), "--roster", str(roster), "--time", "0.5"])
    assert result.exit_code == 0, result.output
    assert "2 students added" in result.output
    settings = load(folder)
    assert settings.time.per_move == 0.5
    assert [ref.name for ref in settings.references][:2] == ["random", "greedy"]
    assert "champion-0.1s" in [ref.name for ref in settings.references]  # a rung between paper-hard and champion
    first = tokens(folder)
    assert set(first) == {"alice", "bob"} and len(set(first.values())) == 2
    assert stat.S_IMODE((folder / "instructor.token").stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "tokens.csv").stat().st_mode) == 0o600
    instructor = (folder / "instructor.token").read_text().strip()
    # the database keeps hashes only: no token appears in it
    raw = (folder / "class.sqlite").read_bytes() + (folder / "class.sqlite-wal").read_bytes() \
        if (folder / "class.sqlite-wal").exists() else (folder / "class.sqlite").read_bytes()
    for token in [*first.values(), instructor]:
        assert token.encode() not in raw
    db = sqlite3.connect(folder / "class.sqlite")
    assert db.execute("SELECT token_sha256 FROM students WHERE id='alice'").fetchone()[0] == token_hash(first["alice"])
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()

    longer = write(tmp_path / "roster2.csv", "id,name,email\nalice,Alice Able,a@x\nbob,Bob B,b@x\ncarol,Carol C,c@x\n")
    result = CliRunner().invoke(cli, ["class", "init", str(folder), "--roster", str(longer)])
    assert result.exit_code == 0, result.output
    second = tokens(folder)
    assert second["alice"] == first["alice"] and second["bob"] == first["bob"]
    assert "carol" in second
    assert (folder / "instructor.token").read_text().strip() == instructor
    store = ClassStore(folder / "class.sqlite")
    try:
        assert store.who(second["carol"]) == "carol"
        assert store.who(instructor) == "instructor"
        assert store.who("not-a-token") is None
        alice = store.student("alice")
        assert alice is not None and alice.name == "Alice Able"
    finally:
        store.close()


def test_init_refuses_bad_ids_with_their_line_numbers(tmp_path: Path) -> None:
    roster = write(tmp_path / "roster.csv",
                   "id,name\nalice,A\n../evil,E\ngreedy,G\nchampion-0.1s,C\nalice,A again\nok_one,O\n")
    result = CliRunner().invoke(cli, ["class", "init", str(tmp_path / "class"), "--roster", str(roster)])
    assert result.exit_code == 1
    assert "line 3" in result.output and "'../evil' is not a safe name" in result.output
    assert "line 4" in result.output and "reference agent" in result.output
    assert "line 5" in result.output
    assert "line 6" in result.output and "duplicate of line 2" in result.output
    assert "line 7" not in result.output
    assert not (tmp_path / "class" / "tokens.csv").exists()  # nothing half-made: no student has a token


def test_init_wants_the_header(tmp_path: Path) -> None:
    roster = write(tmp_path / "roster.csv", "alice,Alice\n")
    result = CliRunner().invoke(cli, ["class", "init", str(tmp_path / "class"), "--roster", str(roster)])
    assert result.exit_code == 1 and "header with the columns id and name" in result.output


def test_the_class_folder_is_the_instructors_alone(tmp_path: Path) -> None:
    # it holds every student's code, stderr and the tokens: on a shared lab machine, students have accounts too
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nann,Ann\n", encoding="utf-8")
    folder = tmp_path / "class"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)  # as a umask of 022 leaves it
    result = CliRunner().invoke(cli, ["class", "init", str(folder), "--roster", str(roster)])
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert "now the instructor's only" in result.output
    result = CliRunner().invoke(cli, ["class", "init", str(folder), "--roster", str(roster)])
    assert "now the instructor's only" not in result.output  # said once, when it was open
