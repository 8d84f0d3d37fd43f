"""Games on a Dask cluster of separate worker processes: same schedule and standings as on this machine.

The cluster is distributed.LocalCluster with two worker processes (one
thread each) on loopback, which is what `dask worker` on lab machines gives,
minus the network.  Results are written by the runner alone, to its one
database; resume works against the cluster as well.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from tournament_helpers import agent, query, write_tournament

AGENTS = [agent("first", "first"), agent("last", "last"), agent("flips", "flips"),
          agent("shaky", "last", "--crash-at 20")]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    from distributed import LocalCluster

    with warnings.catch_warnings():
        # Dask's own start-up chatter is not ours to fail on.
        warnings.simplefilter("ignore")
        cluster = LocalCluster(processes=True, n_workers=2, threads_per_worker=1, host="127.0.0.1",
                               dashboard_address=":0")
    try:
        yield cluster.scheduler_address
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster.close()


def run(*args: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        result = CliRunner().invoke(cli, ["tournament", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def outcome(directory: Path) -> tuple[list, list]:
    path = directory / "t.toml"
    state = json.loads(run("status", str(path), "--json"))
    standings = [(l["agent"], l["points"], l["wins"], l["draws"], l["losses"], l["disc_difference"],
                  l["forfeits"]["crash"]) for l in state["standings"]]
    games = [(r["key"], r["white"], r["black"], r["winner"], r["reason"], r["white_discs"], r["black_discs"])
             for r in query(directory / "results" / "tournament.sqlite", "SELECT * FROM games ORDER BY key")]
    return standings, games


@pytest.mark.slow
def test_dask_run_and_resume_match_the_local_run(tmp_path: Path, scheduler: str) -> None:
    settings = dict(format="swiss", rounds=2, seed=21, time_per_move=5.0)
    local, remote = tmp_path / "local", tmp_path / "remote"
    local.mkdir()
    remote.mkdir()
    run("run", str(write_tournament(local, AGENTS, concurrency=2, **settings)), "-q")

    path = write_tournament(remote, AGENTS, **settings)
    run("run", str(path), "-q", "--scheduler", scheduler, "--max-games", "3")
    assert json.loads(run("status", str(path), "--json"))["finished"] == 3
    output = run("resume", str(path), "-q", "--scheduler", scheduler)
    assert f"on {scheduler}" in output

    assert outcome(remote) == outcome(local)
    standings, games = outcome(remote)
    assert len(games) == 8 and any(reason == "crash" for *_, reason, _, _ in games)
    # The runner keeps every record and stderr locally, whichever worker played.
    rows = query(remote / "results" / "tournament.sqlite", "SELECT * FROM games")
    assert {row["worker"] for row in rows}
    for row in rows:
        assert (Path(row["game_dir"]) / "game.json").is_file()
        assert "playing" in (Path(row["game_dir"]) / f"{row['white']}.stderr.log").read_text()
    # ... the exact record the worker's referee wrote: its hash and a replay check out.
    assert "OK: all 8 finished games" in run("verify", str(path))


def test_unreachable_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, AGENTS[:2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(cli, ["tournament", "run", str(path), "--scheduler", "tcp://127.0.0.1:9", "--scheduler-timeout", "1",
                                          "-q"])
    assert result.exit_code == 1 and "cannot reach the Dask scheduler" in result.output
