"""A game's CPU is its own (issue 24): the victim's slowest move alone, and beside a spinner, pinned or not.

    python bench/cpu_neighbour.py [--runs 3] [--work 0.5] [--time 1.0] [--spin 8] [--spin-seconds 0.9] [--calm 2.5]

Each run is a real tournament (the runner, the referee, bwrap) at
concurrency 2, played by the agents of tests/cpu_agent.py:

- ``alone``: the victim (``--work`` seconds of CPU a move, ``--time`` a
  move) against a quick agent, nothing beside it;
- ``pinned``: the same game beside a game where the spinner starts
  ``--spin`` busy processes for ``--spin-seconds`` on each of its own turns,
  each game on its own cores (what the runner does);
- ``unpinned``: the same two games with the pinning switched off (the pool's
  core sets emptied: the runner before issue 24).

The modes alternate run by run, so the machine's load hits them alike.  For
the victim: its slowest move (its first left out: it includes the start of
Python), its median move, and how its game ended; with the load average
before each run.  On a shared machine, ``--calm L`` waits before each run
until the one-minute load average is below L (at most ``--calm-wait``
seconds): other people's processes are on no game's cores and would
otherwise decide the figures.  Run by hand; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from othello_arena.protocol import GameRecord
from othello_arena.tournaments.run.pools import LocalPool, Pool
from othello_arena.tournaments.run.runner import Runner
from othello_arena.tournaments.schedule import config

ROOT = Path(__file__).resolve().parent.parent
CPU_AGENT = ROOT / "tests" / "cpu_agent.py"
QUICK_AGENT = ROOT / "tests" / "tournament_agent.py"


def table(name: str, command: str) -> str:
    return f"[[agents]]\nname = {json.dumps(name)}\ncommand = {json.dumps(command)}\n"


def tournament_file(directory: Path, args: argparse.Namespace, beside: bool) -> Path:
    quick = f"{sys.executable} {QUICK_AGENT} --name {{name}} --style first"
    agents = []
    if beside:
        agents += [table("spinner", f"{sys.executable} {CPU_AGENT} {{name}} --spin {args.spin} "
                                    f"--seconds {args.spin_seconds}"), table("quick1", quick)]
    agents += [table("victim", f"{sys.executable} {CPU_AGENT} {{name}} --work {args.work}"), table("quick2", quick)]
    path = directory / "t.toml"
    path.write_text("[tournament]\nformat = \"swiss\"\nrounds = 1\ngames_per_pairing = 1\ncolours = \"random\"\n"
                    f"time_per_move = {args.time}\nconcurrency = 2\nseed = 3\nresults = \"results\"\n\n"
                    + "\n".join(agents), encoding="utf-8")
    return path


class UnpinnedRunner(Runner):
    def make_pool(self) -> Pool:
        pool = LocalPool(self.concurrency or 2)
        pool.core_sets = []  # the runner before issue 24: every game on every core
        return pool


def run_once(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="othello-cpu-bench-") as directory:
        tournament = config.load(tournament_file(Path(directory), args, beside=mode != "alone"))
        runner = (UnpinnedRunner if mode == "unpinned" else Runner)(tournament)
        try:
            runner.prepare()
            runner.run()
        finally:
            runner.close()
        games = [GameRecord.load(str(p)) for p in Path(directory).glob("results/games/*/game.json")]
    victim = next(game for game in games if "victim" in (game.white, game.black))
    colour = "W" if victim.white == "victim" else "B"
    moves = [entry.seconds for entry in victim.moves if entry.move.colour.value == colour]
    if victim.fault is not None and victim.fault.colour.value == colour and victim.fault.seconds is not None:
        moves.append(victim.fault.seconds)  # the move it lost on (a timeout): the slowest of all
    moves = moves[1:] or moves
    assert victim.result is not None
    return {"mode": mode, "load": load, "slowest": max(moves), "median": statistics.median(moves),
            "end": victim.result.termination.value, "cpus": victim.extra["referee"].get("cpus")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=float, default=0.5)
    parser.add_argument("--time", type=float, default=1.0)
    parser.add_argument("--spin", type=int, default=8)
    parser.add_argument("--spin-seconds", type=float, default=0.9)
    parser.add_argument("--modes", default="alone,pinned,unpinned")
    parser.add_argument("--calm", type=float, default=0.0, help="wait until the load average is below this")
    parser.add_argument("--calm-wait", type=float, default=600.0)
    args = parser.parse_args()
    modes = args.modes.split(",")
    print(f"victim: {args.work} s of CPU a move, {args.time} s a move; spinner: {args.spin} processes x "
          f"{args.spin_seconds} s a turn; {len(os.sched_getaffinity(0))} usable cores")
    results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    for run in range(args.runs):
        for mode in modes:
            waited = time.monotonic()
            while args.calm and os.getloadavg()[0] >= args.calm and time.monotonic() - waited < args.calm_wait:
                time.sleep(5)
            found = run_once(mode, args)
            results[mode].append(found)
            print(f"run {run + 1} {mode:9} load {found['load']:5.2f}  slowest {found['slowest']:.3f} s  "
                  f"median {found['median']:.3f} s  {found['end']}  cpus {found['cpus']}", flush=True)
    print("\n| mode | runs | victim's slowest move, s (median of runs; min-max) | its median move, s | "
          "lost on time | load average |")
    print("| --- | --- | --- | --- | --- | --- |")
    for mode, found in results.items():
        slowest = [f["slowest"] for f in found]
        print(f"| {mode} | {len(found)} | {statistics.median(slowest):.3f} ({min(slowest):.3f}-{max(slowest):.3f}) | "
              f"{statistics.median(f['median'] for f in found):.3f} | "
              f"{sum(f['end'] == 'timeout' for f in found)} of {len(found)} | "
              f"{min(f['load'] for f in found):.1f}-{max(f['load'] for f in found):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
