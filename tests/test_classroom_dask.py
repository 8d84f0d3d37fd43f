"""othello class serve --dask: the ladder's games on a Dask cluster's workers, kept in the class's database."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Iterator

import pytest

from test_classroom_final import admitted
from test_classroom_server import games_by_status, get_json, make_class, serving, wait_for


@pytest.fixture()
def scheduler() -> Iterator[str]:
    from distributed import LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dask's own start-up chatter is not ours to fail on
        cluster = LocalCluster(processes=True, n_workers=1, threads_per_worker=2, host="127.0.0.1",
                               dashboard_address=":0")
    try:
        yield cluster.scheduler_address
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster.close()


@pytest.mark.slow
def test_the_ladder_plays_on_dask_workers(tmp_path: Path, scheduler: str) -> None:
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice"], ["greedy"], time=0.25)
    print_ = admitted(folder, "alice", "2026-05-30T10:00:00+00:00", "v1")
    with serving(folder, "--dask", scheduler) as server:
        assert any("Dask at" in line for line in server.lines)
        wait_for(lambda: len(games_by_status(folder).get("finished", [])) == 2, 600, "the pair against greedy")
        # (the answers follow the database within one computation of the marks: STREAM_INTERVAL, not at once)
        wait_for(lambda: all(g["result"] for g in get_json(server.base, "/api/me", tokens["alice"])["games"]), 30,
                 "the finished games in /api/me")
        games = get_json(server.base, "/api/me", tokens["alice"])["games"]
        assert {g["white"] for g in games} == {"alice", "greedy"} and all(g["result"] for g in games)
        assert all(print_ in (g["white_fingerprint"], g["black_fingerprint"]) for g in games)
        record = get_json(server.base, f"/api/games/{games[0]['id']}", tokens["alice"])["record"]
        assert record["moves"] and record["result"]["reason"] == "normal"
    assert not list((folder / "games").iterdir())  # played on the workers: everything came back as data
