"""Games per minute of a round robin of instant agents, at concurrency 1 and 2.

    python bench/tournament_throughput.py [--agents random,greedy,beginner,weighted] [--games-per-pairing 2]
                                          [--concurrency 1,2] [--time-per-move 5]

Each run is a fresh tournament (its own temporary results directory) played by
the real runner and referee, so the figure includes everything a tournament
pays per game: starting two agent processes, the file protocol for every move,
writing game.json and committing the result to SQLite.  Built-in agents are
Python processes; their start-up dominates a game of instant moves.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from othello_arena.tournaments.schedule import config
from othello_arena.tournaments.run.runner import Runner
from othello_arena.tournaments.run.jobs import usable_cores


def run_once(agents: list[str], games_per_pairing: int, concurrency: int, time_per_move: float,
             sandbox: str = "bwrap", suspend: bool = True) -> tuple[int, float]:
    with tempfile.TemporaryDirectory(prefix="othello-bench-") as directory:
        path = Path(directory) / "bench.toml"
        names = ", ".join(f'"{name}"' for name in agents)
        path.write_text(
            f"agents = [{names}]\n[tournament]\ngames_per_pairing = {games_per_pairing}\n"
            f"time_per_move = {time_per_move}\nresults = \"results\"\n"
            f"[referee]\nsandbox = \"{sandbox}\"\nsuspend_waiting = {'true' if suspend else 'false'}\n",
            encoding="utf-8",
        )
        tournament = config.load(path)
        runner = Runner(tournament, concurrency=concurrency)
        try:
            runner.prepare()
            started = time.perf_counter()
            runner.run()
            seconds = time.perf_counter() - started
            return runner.store.counts()["finished"], seconds
        finally:
            runner.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="random,greedy,beginner,weighted")
    parser.add_argument("--games-per-pairing", type=int, default=2)
    parser.add_argument("--concurrency", default="1,2")
    parser.add_argument("--time-per-move", type=float, default=5.0)
    parser.add_argument("--modes", default="bwrap+suspend,bwrap,none",
                        help="sandbox modes side by side: bwrap+suspend (the default), bwrap, none")
    args = parser.parse_args()
    agents = args.agents.split(",")
    print(f"{len(agents)} agents ({', '.join(agents)}), round robin, {args.games_per_pairing} games per pairing; "
          f"{usable_cores()} cores, load average {os.getloadavg()[0]:.2f}")
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        for mode in args.modes.split(","):
            sandbox, suspend = mode.split("+")[0], mode.endswith("+suspend")
            games, seconds = run_once(agents, args.games_per_pairing, concurrency, args.time_per_move, sandbox, suspend)
            print(f"concurrency {concurrency}, {mode:>13}: {games} games in {seconds:.1f} s = "
                  f"{games / seconds * 60:.0f} games/minute")
    return 0


if __name__ == "__main__":
    sys.exit(main())
