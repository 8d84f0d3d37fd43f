"""What the sandbox costs to start an agent: bwrap against a plain start, side by side.

    python bench/sandbox_startup.py [--runs 50]

Each run starts a program through the referee's own launcher
(``referee.launch.start_agent``, exactly as a game does: limits, cgroup or
rlimits, the minimal environment) and waits for it to exit.  ``/bin/true``
shows the sandbox's own cost; a Python that imports nothing shows it beside a
typical agent's start-up.  The runs of the modes alternate, so load on the
machine hits both alike; the figure to read is the difference of medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from othello_arena.referee import AgentSpec, GameConfig
from othello_arena.referee.launch import isolation_for, start_agent


def start_once(argv: list[str], config: GameConfig, folder: Path) -> float:
    spec = AgentSpec.program("bench", argv)
    isolation = isolation_for(config)
    folder.mkdir()
    exited = threading.Event()
    started = time.perf_counter()
    # The launcher's own exit watcher (a blocking wait) tells the moment it ended.
    process = start_agent(spec, folder, config, folder.parent / f"{folder.name}.log", isolation, on_exit=exited.set)
    exited.wait(30)
    seconds = time.perf_counter() - started
    process.kill_all(term_grace=0)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    programs = {"/bin/true": ["/bin/true"], "python -c pass": [sys.executable, "-S", "-c", "pass"]}
    modes = {"bwrap": GameConfig(sandbox="bwrap"), "none": GameConfig(sandbox="none")}
    print(f"{args.runs} starts each, alternating; load average {os.getloadavg()[0]:.2f}\n")
    print("| program | sandbox | median ms | p90 ms |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="othello-bench-") as temp:
        for label, argv in programs.items():
            times: dict[str, list[float]] = {mode: [] for mode in modes}
            for run in range(args.runs):
                for mode, config in modes.items():
                    times[mode].append(start_once(argv, config, Path(temp) / f"{mode}-{label.replace('/', '_')[:8]}-{run}"))
            for mode, values in times.items():
                values.sort()
                print(f"| {label} | {mode} | {statistics.median(values) * 1000:.1f} | "
                      f"{values[int(0.9 * (len(values) - 1))] * 1000:.1f} |")
            extra = statistics.median(times["bwrap"]) - statistics.median(times["none"])
            print(f"| {label} | cost of the sandbox | {extra * 1000:.1f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
