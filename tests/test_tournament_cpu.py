"""A game's CPU is its own, in a tournament (issue 24): games at once run on different cores.

The heavy test is issue 24's "Done when": at concurrency 2, a spinner starts
8 busy processes for 0.9 s on each of its own turns, and a victim in the
game beside it thinks for 0.4 s of CPU a move with 1 s a move: the victim
loses no game on time, and the records say the two games ran on different
cores.  (Its slowest move alone and beside the spinner, pinned or not, are
measured by hand: bench/cpu_neighbour.py, figures in bench/RESULTS.md; no
timing is asserted here beyond the timeout itself.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tournament_helpers import agent, write_tournament

from othello_arena.cli import cli
from othello_arena.protocol import GameRecord, Termination
from othello_arena.referee import sandbox
from othello_arena.tournaments.run.pools import LocalPool, cpu_line

CPU_AGENT = Path(__file__).resolve().parent / "cpu_agent.py"


def cpu_agent(name: str, *options: str) -> str:
    command = f"{sys.executable} {CPU_AGENT} {{name}} {' '.join(options)}"
    return f"[[agents]]\nname = {json.dumps(name)}\ncommand = {json.dumps(command)}\n"


def neighbours(directory: Path, victim_work: float = 0.4) -> Path:
    """Two games at once (a Swiss round of four): the spinner against one agent, the victim against another."""
    agents = [cpu_agent("spinner", "--spin", "8", "--seconds", "0.9"), agent("quick1"),
              cpu_agent("victim", "--work", str(victim_work)), agent("quick2")]
    return write_tournament(directory, agents, format="swiss", rounds=1, games_per_pairing=1, colours="random",
                            time_per_move=1.0, concurrency=2, seed=3)


def records(results: Path) -> list[GameRecord]:
    return [GameRecord.load(str(path)) for path in sorted(results.glob("games/*/game.json"))]


@pytest.mark.slow
@pytest.mark.skipif(not sandbox.probe().works, reason=f"no sandbox here: {sandbox.probe().problem}")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: two games at once cannot have their own")
def test_a_spinning_agent_does_not_make_the_game_beside_it_lose_on_time(tmp_path: Path) -> None:
    path = neighbours(tmp_path)
    done = CliRunner().invoke(cli, ["tournament", "run", str(path), "--quiet"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "cpu: each game on its own core(s), 2 at once: cpu 0, cpu 1" in done.output
    games = records(tmp_path / "results")
    assert len(games) == 2
    victims = [game for game in games if "victim" in (game.white, game.black)]
    assert len(victims) == 1 and victims[0].result is not None
    assert victims[0].result.termination is not Termination.TIMEOUT, victims[0].result
    assert victims[0].result.termination is Termination.NORMAL, victims[0].result
    cores = [game.extra["referee"]["cpus"] for game in games]
    assert sorted(cores) == [[0], [1]], cores
    spinner = next(game for game in games if "spinner" in (game.white, game.black))
    assert spinner.result is not None and spinner.result.termination is Termination.NORMAL, spinner.result


def test_the_local_pool_gives_each_slot_its_own_cores_and_the_start_line_says_so() -> None:
    cores = sorted(os.sched_getaffinity(0))
    pool = LocalPool(1)
    try:
        assert pool.core_sets == [(cores[-1],)]  # the first core spare when there are two or more
    finally:
        pool.close(abandon=False)
    assert cpu_line(1, remote=False, sandboxed=True).startswith("cpu: each game on its own core(s), 1 at once")
    assert "WARNING: without the sandbox" in cpu_line(1, remote=False, sandboxed=False)
    assert "WARNING: games on a Dask cluster are not pinned" in cpu_line(2, remote=True, sandboxed=True)
    crowded = cpu_line(len(cores) + 1, remote=False, sandboxed=True)
    assert "WARNING" in crowded and "games share cores, up to 2 per core" in crowded
