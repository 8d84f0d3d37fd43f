"""``othello match`` as a user times it, against the minimal relay: whole processes, in turn (issue 38).

    python bench/match_vs_minimal.py [--games 20] [--runs 7] [--time 1] [--busy 4] [--label idle]
                                     [--variant LABEL=PYTHONPATH ...]

A is the command of the issue, as a user types it, start-up and exit included::

    othello match "a=./greedy {name}" "b=./greedy {name}" --games 20 --time 1 -j 1

(``python -m othello_arena``: the console script's own start-up is the same
Python; every default: each agent in its bwrap sandbox with its limits and
suspension, each result in SQLite, every game's record and logs).  B is
bench/minimal_referee.py for the same games and agents (fresh processes, the
file relay, legality; no sandbox, no records).  Both play
agents/examples/greedy.c as it is, built here with ``gcc -O2``, in one
working folder.  After one warm-up each, A and B run in turn (A B A B ...,
``--runs`` of each); for each run the wall time and the CPU time of the whole
process tree (``wait4``: the command and every process it reaped: agents,
sandboxes, the keeper) are taken, and A/B pair by pair, so a ratio holds when
the machine's speed drifts.  Printed: each pair, then a markdown row of
medians (and the pairs' min-max) for bench/RESULTS.md, with the load average
(1 minute) at the start and the end.

``--variant before=/tmp/before`` adds ``othello match`` run from another copy
of the package (``/tmp/before/othello_arena``: ``git archive`` of an earlier
commit, compiled), in turn with A and B, each pair against the B beside it.
``--busy N`` runs ``bench/busy_load.py --procs N`` in a session of its own
(as another user's work is) from 20 s before the first run to the end.
The package's modules are compiled first (``compileall``, what ``pip
install`` does), so a shell with ``PYTHONDONTWRITEBYTECODE`` set does not time
the compiling of its sources on every start.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ("a=./greedy {name}", "b=./greedy {name}")
SKIPPED = re.compile(r"/\.|/(tests|bench|docs)/")  # not compiled: what a match never imports


def whole_process(argv: list[str], cwd: Path, env: Optional[dict[str, str]] = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, every process it reaped included) of one run; raises if it fails."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}): {errors.decode(errors='replace')[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games of each run (even)")
    parser.add_argument("--runs", type=int, default=7, help="counted runs of each command, in turn")
    parser.add_argument("--time", type=float, default=1.0, help="othello match's --time")
    parser.add_argument("--busy", type=int, default=0, metavar="N",
                        help="load the machine with bench/busy_load.py --procs N in a session of its own")
    parser.add_argument("--label", default="", help="what the row says about the machine")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL=PYTHONPATH",
                        help="also othello match from another copy of the package, in turn with the others")
    args = parser.parse_args()
    variants: dict[str, str] = {}
    for text in args.variant:
        label, _, path = text.partition("=")
        if not label or not path or label in ("A", "B", *variants):
            parser.error(f"--variant {text!r}: give LABEL=PYTHONPATH, with a label of its own")
        variants[label] = path
    if args.games < 2 or args.games % 2 or args.runs < 1:
        parser.error("--games must be even and at least 2, --runs at least 1")
    compileall.compile_dir(str(ROOT), quiet=1, rx=SKIPPED)
    busy = None
    if args.busy:
        busy = subprocess.Popen([sys.executable, str(ROOT / "bench" / "busy_load.py"), "--procs", str(args.busy),
                                 "--seconds", "3600"], start_new_session=True)
        time.sleep(20)
    try:
        with tempfile.TemporaryDirectory(prefix="match-vs-minimal-") as directory:
            work = Path(directory)
            subprocess.run(["gcc", "-O2", "-o", str(work / "greedy"), str(ROOT / "agents" / "examples" / "greedy.c")],
                           check=True)
            games = ["--games", str(args.games)]
            match = [sys.executable, "-m", "othello_arena", "match", *AGENTS, *games, "--time", f"{args.time:g}", "-j", "1"]
            commands = {"A": match, "B": [sys.executable, str(ROOT / "bench" / "minimal_referee.py"), *AGENTS, *games]}
            envs: dict[str, Optional[dict[str, str]]] = {"A": None, "B": None}
            for label, path in variants.items():
                commands[label], envs[label] = match, {**os.environ, "PYTHONPATH": path}
                compileall.compile_dir(str(Path(path) / "othello_arena"), quiet=1,
                                       rx=SKIPPED)
            print("A = othello match " + " ".join(f"'{a}'" if " " in a else a for a in match[4:]))
            print(f"B = bench/minimal_referee.py {AGENTS[0]!r} {AGENTS[1]!r} {' '.join(games)}")
            for label, path in variants.items():
                print(f"{label} = A from PYTHONPATH={path}")
            figures: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
            loads = [os.getloadavg()[0]]
            for number in range(args.runs + 1):  # the first of each is a warm-up
                for name, argv in commands.items():
                    out = work / f"{name}-{number}"
                    figure = whole_process([*argv, "--out", str(out)], work, envs[name])
                    shutil.rmtree(out, ignore_errors=True)
                    if number:
                        figures[name].append(figure)
                if number:
                    b_wall, b_cpu = figures["B"][-1]
                    print(f"pair {number}: B {b_wall:.3f} s ({b_cpu:.3f} cpu); " + "; ".join(
                        f"{name} {wall:.3f} s ({cpu:.3f} cpu), /B {wall / b_wall:.2f}"
                        for name, (wall, cpu) in ((name, figures[name][-1]) for name in commands if name != "B"))
                        + f"; load {os.getloadavg()[0]:.2f}", flush=True)
            loads.append(os.getloadavg()[0])
    finally:
        if busy is not None:
            os.killpg(busy.pid, signal.SIGTERM)
            busy.wait()

    def median(name: str, which: int) -> float:
        return statistics.median(figure[which] for figure in figures[name])

    print()
    print("| when | machine | load average (1 min) | runs of each | referee | wall s against B's | A/B wall, median "
          "(pairs' min-max) | ms a game against B's | cpu s against B's | A/B cpu |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in commands:
        if name == "B":
            continue
        ratios = [a[0] / b[0] for a, b in zip(figures[name], figures["B"])]
        cpu_ratios = [a[1] / b[1] for a, b in zip(figures[name], figures["B"])]
        print(f"| {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC | {args.label or '-'}"
              f"{f' (busy_load --procs {args.busy}, own session)' if args.busy else ''} | "
              f"{min(loads):.1f}-{max(loads):.1f} | {args.runs} | {'othello match' if name == 'A' else name} | "
              f"{median(name, 0):.2f} / {median('B', 0):.2f} | "
              f"**{statistics.median(ratios):.2f}** ({min(ratios):.2f}-{max(ratios):.2f}) | "
              f"{median(name, 0) / args.games * 1000:.0f} / {median('B', 0) / args.games * 1000:.0f} | "
              f"{median(name, 1):.2f} / {median('B', 1):.2f} | {statistics.median(cpu_ratios):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
