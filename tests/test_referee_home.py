"""``{home}``: agents whose command needs their own submission folder (a JVM's class path, a package)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from othello_arena.referee import AgentSpec, GameConfig, play_game
from othello_arena.tournaments.schedule.config import AgentEntry
from othello_arena.tournaments.run.jobs import agent_spec

HOME = Path(__file__).resolve().parent / "data" / "home"
CONFIG = GameConfig(time_per_move=5, end_grace=0.5)


def test_home_is_where_the_command_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = AgentSpec.parse("carol=java -cp {home} Carol {name}", base=tmp_path)
    assert spec.argv(Path("/games/g1/carol"), 2) == ["java", "-cp", str(tmp_path.resolve()), "Carol", "carol"]
    monkeypatch.chdir(tmp_path)
    assert AgentSpec.parse("x=./x --data {home}/w.txt").argv(Path("/g"), 1)[-1] == f"{tmp_path.resolve()}/w.txt"
    # a tournament agent's home is its cwd
    entry = AgentEntry(name="carol", command="java -cp {home} Carol {name}", cwd=str(HOME))
    assert agent_spec(entry).argv(Path("/g"), 1)[2] == str(HOME)


@pytest.fixture(scope="module")
def java_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK")
    home = tmp_path_factory.mktemp("carol")
    shutil.copy(HOME / "Carol.java", home)
    shutil.copy(HOME / "carol.txt", home)
    subprocess.run(["javac", "Carol.java"], cwd=home, check=True)
    return home


def test_a_java_class_runs_from_its_submission_folder(tmp_path: Path, java_home: Path) -> None:
    carol = AgentSpec.parse("carol=java -cp {home} Carol {name}", base=java_home)
    record = play_game(carol, AgentSpec.builtin("random"), CONFIG, tmp_path / "g")
    assert record.result is not None and record.result.termination == "normal", record.result
    assert (tmp_path / "g" / "carol.stderr.log").read_text().startswith("carol is ready")


def test_a_python_package_and_its_data_file_run_from_their_submission_folder(tmp_path: Path) -> None:
    # PYTHONPATH is set inside the command (env), so it reaches the agent in any sandbox
    pkg = AgentSpec.parse(
        f"pkg=env PYTHONPATH={{home}} {sys.executable} -m firstmove {{name}} {{home}}/firstmove.txt", base=HOME)
    record = play_game(AgentSpec.builtin("random"), pkg, CONFIG, tmp_path / "g")
    assert record.result is not None and record.result.termination == "normal", record.result
    assert (tmp_path / "g" / "pkg.stderr.log").read_text().startswith("firstmove is ready")
