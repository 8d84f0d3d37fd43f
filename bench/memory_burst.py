"""By how much a burst of processes passes the memory limit before the referee's watchdog kills it.

An agent forks 8 processes that each touch 128 MB at once (1 GB in all) under ``--memory 512``; without a
cgroup the referee's watchdog (referee/memory.py) measures the sandbox and kills it once over the limit.
What it held at the kill is read from the burst's own progress files (each process writes how much it
touched after every MB), so each run gives the MB past the limit, a lower bound (up to 1 MB a process and
the pages copied on write after the fork are not in it).  This is a timing: it depends on how soon the
watchdog's thread runs once the memory rises, so it is measured here, run by hand, and never asserted by a
test (tests/test_referee_memory.py asserts the verdict: killed for memory it really held).

    python bench/memory_burst.py [--runs 10] [--memory 512] [--as othello-test]

``--as USER`` runs each game as that user (``runuser``; needs root), as an instructor's server runs
without privileges; the machine's load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BURST = r'''
import mmap, os, sys, time
from othello_arena.agents.runtime import run_agent

def touch(index):
    hoard = mmap.mmap(-1, 128 << 20)  # untouched pages cost nothing: each is counted once written
    with open(f"progress-{index}", "w") as progress:
        for start in range(0, len(hoard), 1 << 20):
            for offset in range(start, start + (1 << 20), 4096):
                hoard[offset] = 1
            progress.seek(0)
            progress.write(f"{start + (1 << 20):12d}")
            progress.flush()
    time.sleep(1000)

def strategy(board, colour, time_left):
    with open("/proc/self/smaps_rollup") as rollup:
        kilobytes = sum(int(line.split()[1]) for line in rollup if line.startswith(("Pss_Anon:", "Pss_Shmem:")))
    with open("baseline", "w") as handle:
        handle.write(str(kilobytes << 10))
    for index in range(8):
        if os.fork() == 0:
            touch(index)
    time.sleep(10)
    return board.legal_moves()[0]

raise SystemExit(run_agent(strategy, sys.argv[1]))
'''


def one_run(folder: Path, memory_mb: int, user: str | None) -> float:
    """MB past the limit at the kill in one game (negative: killed below it, which would be a false verdict)."""
    (folder / "burst.py").write_text(BURST)
    argv = [sys.executable, "-m", "othello_arena", "play", f"burst={sys.executable} {folder / 'burst.py'} burst",
            "random", "--memory", str(memory_mb), "--time", "20", "--seed", "1", "--out", str(folder / "game"),
            "--json", "--quiet"]
    done = subprocess.run(["runuser", "-u", user, "--", *argv] if user else argv, cwd=folder, capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"the game failed: {done.stderr.strip()}")
    detail = json.loads(done.stdout)["result"]["detail"]
    if "memory" not in detail:
        raise SystemExit(f"the burst was not killed for memory: {detail!r}")
    agent = folder / "game" / "burst"
    touched = sum(int(path.read_text()) for path in agent.glob("progress-*"))
    held = int((agent / "baseline").read_text()) + touched
    return (held - (memory_mb << 20)) / (1 << 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--memory", type=int, default=512, help="the limit in MB (default 512)")
    parser.add_argument("--as", dest="user", help="run each game as this user (runuser; needs root)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    past = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="memory-burst-") as name:
            folder = Path(name)
            if args.user:
                os.chmod(folder, 0o777)
            past.append(one_run(folder, args.memory, args.user))
        print(f"run {run + 1}: {past[-1]:+.0f} MB past {args.memory} MB", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"MB past the limit over {len(past)} runs: min {min(past):+.0f}, median {statistics.median(past):+.0f}, "
          f"max {max(past):+.0f}")


if __name__ == "__main__":
    main()
