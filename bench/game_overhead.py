"""Per-game overhead of ``othello match`` against a minimal referee, side by side in one run (issue 27).

    python bench/game_overhead.py [--games 20] [--rounds 3] [--label "idle"] [--variant LABEL=PYTHONPATH ...]

A is ``othello match "a=./greedy {name}" "b=./greedy {name}" --games N -j 1 -q``
as a user types it (the defaults: every agent in its sandbox with its limits,
suspension of the waiting side, each result in SQLite, every game's record and
logs); B is bench/minimal_referee.py for the same N games (fresh processes, the
same files and relay, legality checked; no sandbox, no records).  Both play the
same instant agent, agents/examples/greedy.c built here with ``gcc -O2``.

Each round runs A with 2 games, A with N, B with 2, B with N (whole processes,
wall clock); the order of A and B alternates round by round.  A game's time is
(time of N games - time of 2 games) / (N - 2): what one more game costs, with
the start-up of each command (Python, imports, the database, the sandbox check)
taken out alike for both.  On a loaded machine a difference of two wall times
is noisy, so a second figure is given too: the median interval between the
ends of consecutive games of the N-game run (A: the ``finished`` time SQLite
keeps of each game; B: the time it prints at each game's end), each game's
whole cost, its share of the database and the records included, with the
spikes of the load left out.  Printed: each round's figures and A/B, the
machine's load average (1 minute) at the start and the end of the round, and
at the end a markdown table row (medians over the rounds) for bench/RESULTS.md.
For a known load, start ``python bench/busy_load.py --procs 4 --seconds 300 &``
first.  ``--variant before=/tmp/before`` adds ``othello match`` run from another
copy of the package (``/tmp/before/othello_arena``, e.g. ``git archive`` of an
earlier commit), in turn with the others, for a before/after in one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ("a=./greedy {name}", "b=./greedy {name}")


def timed(argv: list[str], cwd: Path, env: Optional[dict[str, str]] = None) -> tuple[float, str]:
    """Wall seconds of one whole command and what it printed; raises if it fails."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, done.stdout


def median_interval(ends: list[float]) -> float:
    """The median time between consecutive game ends, in ms."""
    ends = sorted(ends)
    return statistics.median(later - earlier for earlier, later in zip(ends, ends[1:])) * 1000


Run = Callable[[int, Path], tuple[float, float]]


def match(python_path: str = "") -> Run:
    """``othello match`` (from the package found first on ``python_path``, if given): a run of N games gives its wall
    seconds and the median interval between game ends (ms)."""
    env = {**os.environ, "PYTHONPATH": python_path} if python_path else None

    def run(games: int, work: Path) -> tuple[float, float]:
        out = work / f"match-{time.time_ns()}"
        try:
            seconds, _ = timed([sys.executable, "-m", "othello_arena", "match", *AGENTS, "--games", str(games), "-j", "1",
                                "-q", "--out", str(out)], work, env)
            with sqlite3.connect(out / "tournament.sqlite") as db:
                ends = [row[0] for row in db.execute("SELECT finished FROM games WHERE status = 'finished'")]
            return seconds, median_interval(ends)
        finally:
            shutil.rmtree(out, ignore_errors=True)

    return run


def minimal(games: int, work: Path) -> tuple[float, float]:
    """The minimal referee for ``games`` games: its wall seconds, and the median interval between game ends (ms)."""
    seconds, printed = timed([sys.executable, str(ROOT / "bench" / "minimal_referee.py"), *AGENTS, "--games", str(games)],
                             work)
    ends = [float(line.rsplit(" ", 1)[1]) for line in printed.splitlines() if "ended at" in line]
    return seconds, median_interval(ends)


def per_game(run: Run, games: int, work: Path) -> tuple[float, float]:
    """Milliseconds one more game costs, (N games - 2 games) / (N - 2); and the N-game run's median interval."""
    two, _ = run(2, work)
    many, interval = run(games, work)
    return (many - two) / (games - 2) * 1000, interval


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games of the long run (even, > 2)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--label", default="", help="what the table row says about the machine (idle, load 4...)")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL=PYTHONPATH",
                        help="also othello match from another copy of the package (a folder holding othello_arena, "
                             "e.g. an earlier commit's git archive), in turn with the others")
    args = parser.parse_args()
    if args.games <= 2 or args.games % 2:
        parser.error("--games must be even and more than 2")
    runs: dict[str, Run] = {"match": match(), "minimal": minimal}
    for text in args.variant:
        label, _, path = text.partition("=")
        if not label or not path or label in runs:
            parser.error(f"--variant {text!r}: give LABEL=PYTHONPATH, with a label of its own")
        runs[label] = match(path)
    with tempfile.TemporaryDirectory(prefix="game-overhead-") as directory:
        work = Path(directory)
        subprocess.run(["gcc", "-O2", "-o", str(work / "greedy"), str(ROOT / "agents" / "examples" / "greedy.c")],
                       check=True)
        print(f"{os.cpu_count()} cores; {args.games} games a run, per game = (t[{args.games}] - t[2]) / {args.games - 2}")
        rows: list[dict[str, tuple[float, float]]] = []
        loads: list[float] = []
        for number in range(1, args.rounds + 1):
            start_load = os.getloadavg()[0]
            order = list(runs) if number % 2 else list(runs)[::-1]
            found = {name: per_game(runs[name], args.games, work) for name in order}
            end_load = os.getloadavg()[0]
            rows.append(found)
            loads += [start_load, end_load]
            base, base_step = found["minimal"]
            print(f"round {number}, load average {start_load:.2f} -> {end_load:.2f}: " + "; ".join(
                f"{name} {found[name][0]:.1f} ms a game (median interval {found[name][1]:.1f})"
                + (f", ratio {found[name][0] / base:.2f} ({found[name][1] / base_step:.2f})" if name != "minimal" else "")
                for name in order))

        def figure(name: str, which: int) -> str:
            ratios = [row[name][which] / row["minimal"][which] for row in rows]
            return (f"{statistics.median(row[name][which] for row in rows):.0f} / "
                    f"{statistics.median(row['minimal'][which] for row in rows):.0f} | **{statistics.median(ratios):.2f}** "
                    f"({', '.join(f'{r:.2f}' for r in ratios)})")

        print()
        print("| when | machine | load average (1 min) | games a run | referee | ms a game against the minimal's: "
              "(t[N] - t[2]) / (N - 2) | ratio (each round) | median interval between game ends, ms | ratio (each round) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name in runs:
            if name != "minimal":
                print(f"| {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC | {args.label or '-'} | "
                      f"{min(loads):.1f}-{max(loads):.1f} | {args.games} | {name} | {figure(name, 0)} | {figure(name, 1)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
