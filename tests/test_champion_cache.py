"""The champion's compiled code: cached outside the package, compiled before the clock (issue 11, items 1 and 3).

One real game (``othello play champion random``, a real process each) with an
empty cache folder of its own: the referee prepares the champion first, the
cache fills, the package folder gets no compiled file, and every move of the
champion comes from its engine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import othello_arena
from othello_arena.referee.config import CACHE_DIR_VARIABLE, compiled_cache_dir

PACKAGE = Path(othello_arena.__file__).resolve().parent

pytestmark = pytest.mark.slow  # the champion compiles once here (7-30 s)


def numba_files(root: Path) -> dict[Path, float]:
    """numba's cache files under ``root``, with their modification times."""
    return {p: p.stat().st_mtime for p in root.rglob("*") if p.suffix in (".nbi", ".nbc")}


@pytest.fixture(scope="module")
def cold_game(tmp_path_factory):
    """A game of the champion at 1 s a move, started with an empty compiled-code cache."""
    root = tmp_path_factory.mktemp("cold")
    cache = root / "cache"
    before = numba_files(PACKAGE)
    env = dict(os.environ, **{CACHE_DIR_VARIABLE: str(cache)})
    done = subprocess.run(
        [sys.executable, "-m", "othello_arena", "play", "champion", "random", "--time", "1", "--seed", "3",
         "--out", str(root / "game"), "--quiet"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return {"cache": cache, "before": before, "done": done,
            "record": json.loads((root / "game" / "game.json").read_text()), "env": env}


def test_the_cache_folder_is_the_users_or_the_one_named(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "mine"))
    assert compiled_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(CACHE_DIR_VARIABLE)
    assert "othello-arena" in str(compiled_cache_dir())
    assert not compiled_cache_dir().resolve().is_relative_to(PACKAGE)


def test_compiled_code_goes_to_the_cache_and_never_into_the_package(cold_game):
    # Issue 11: numba's files in site-packages/.../champion/__pycache__ shadowed a later editable install.
    after = numba_files(PACKAGE)
    written = [p for p, mtime in after.items() if cold_game["before"].get(p) != mtime]
    assert written == [], f"compiled code written inside the package: {written}"
    cached = numba_files(cold_game["cache"])
    assert any(p.suffix == ".nbc" for p in cached) and any(p.suffix == ".nbi" for p in cached)


def test_the_champion_is_compiled_before_the_clock_and_plays_every_move_with_its_engine(cold_game):
    assert "Preparing champion (compiling, first time only)" in cold_game["done"].stderr
    record = cold_game["record"]
    letter = "W" if record["white"] == "champion" else "B"
    moves = [m for m in record["moves"] if m["move"].startswith(f"({letter} ") and not m["move"].endswith(" P)")]
    assert len(moves) >= 10
    for move in moves:
        assert move["comments"] and move["comments"][0].startswith("champion "), move
        assert not any("still loading" in text for text in move["comments"]), move


def test_a_prepared_champion_is_not_prepared_again(cold_game):
    done = subprocess.run(
        [sys.executable, "-c",
         "from othello_arena.agents.registry import prepare; import sys; "
         "sys.exit(0 if prepare(['random', 'champion', 'champion'], print) else 1)"],
        env=cold_game["env"], capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # no progress line: nothing compiled


def test_the_tournament_runner_prepares_the_champion_before_its_games(cold_game, tmp_path, monkeypatch):
    from tournament_helpers import agent, write_tournament

    from othello_arena.agents.champion.prepare import ready_mark

    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(cold_game["cache"]))
    ready_mark().unlink()  # the compiled code stays: preparing again only loads it
    path = write_tournament(tmp_path, ['[[agents]]\nname = "champion"\n', agent("first")],
                            time_per_move=0.5)
    done = subprocess.run([sys.executable, "-m", "othello_arena", "tournament", "run", str(path), "-q"],
                          env=cold_game["env"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Preparing champion" in done.stdout + done.stderr
    assert ready_mark().exists()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap for a read-only cache")
def test_a_read_only_cache_is_loaded_and_never_written(cold_game, tmp_path):
    # The referee's sandbox binds the cache read-only: the engine must load from it...
    cache = cold_game["cache"]
    before = numba_files(cache)
    load = ("from othello_arena.agents.champion.agent import load_engine; "
            "from othello_arena.protocol import Board; print(load_engine(14).think(Board(), max_depth=4).move_name)")
    read_only = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(cache), str(cache)]
    done = subprocess.run(read_only + [sys.executable, "-c", load], env=cold_game["env"],
                          capture_output=True, text=True, timeout=300)
    if done.returncode and "bwrap:" in done.stderr:
        pytest.skip(f"bubblewrap cannot run here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert "cannot write" not in done.stderr
    assert numba_files(cache) == before
    # ...and an empty read-only cache (another numba's, say) still gives a working engine.
    empty = tmp_path / "empty"
    (empty / "numba").mkdir(parents=True)
    env = dict(cold_game["env"], **{CACHE_DIR_VARIABLE: str(empty)})
    done = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(empty), str(empty),
                           sys.executable, "-c", load], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "cannot write the compiled-code cache" in done.stderr
    assert numba_files(empty) == {}
