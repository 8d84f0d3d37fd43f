"""othello class final: each student's last version admitted before the deadline, played by the tournament runner."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from test_classroom_server import EXAMPLES, make_class

from othello_arena.referee.fingerprint import fingerprint


def admitted(folder: Path, student: str, submitted_at: str, marker: str) -> str:
    """A version as admission leaves it: its files, its built copy, its row (admitted)."""
    source = folder / "submissions" / student / "x"
    source.mkdir(parents=True)
    (source / "starter.py").write_text((EXAMPLES / "starter.py").read_text() + f"\n# {marker}\n")
    print_ = fingerprint(source, "python3 starter.py {name}")
    source = source.rename(source.parent / print_)
    shutil.copytree(source, folder / "builds" / student / print_)
    db = sqlite3.connect(folder / "class.sqlite")
    db.execute("INSERT INTO versions (student, fingerprint, command, build, openings, files, bytes, submitted_at, "
               "status, card) VALUES (?, ?, 'python3 starter.py {name}', '', 1, '[]', 0, ?, 'admitted', '{}')",
               (student, print_, submitted_at))
    db.commit()
    db.close()
    return print_


@pytest.mark.slow
def test_the_final_plays_the_last_versions_before_the_deadline(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice", "bob"], ["random", "greedy"], time=0.25)
    text = (folder / "class.toml").read_text().replace("references = []", 'references = ["greedy"]')
    text = text.replace('# deadline = "2026-12-04T18:00:00+01:00"', 'deadline = "2026-06-01T12:00:00+00:00"')
    (folder / "class.toml").write_text(text)
    before = admitted(folder, "alice", "2026-05-30T10:00:00+00:00", "v1")
    admitted(folder, "alice", "2026-06-02T10:00:00+00:00", "v2 (late)")
    bob = admitted(folder, "bob", "2026-05-31T10:00:00+00:00", "bob")
    result = subprocess.run([sys.executable, "-m", "othello_arena", "class", "final", str(folder), "-j", "2"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    final = (folder / "final.toml").read_text()
    assert before in final and bob in final and "v2" not in final and f"builds/alice/{before}" in final
    assert 'name = "greedy"' in final
    games = sqlite3.connect(folder / "final" / "results" / "tournament.sqlite")
    players = {name for row in games.execute("SELECT white, black FROM games") for name in row}
    games.close()
    assert players == {"alice", "bob", "greedy"}
    assert (folder / "final" / "results" / "report").is_dir()
