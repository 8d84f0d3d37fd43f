"""Agents that use the CPU on their turns, for the tests and bench of "a game's CPU is its own" (issue 24).

    python3 cpu_agent.py NAME --spin PROCESSES --seconds S   # the spinner
    python3 cpu_agent.py NAME --work S                        # the victim
    python3 cpu_agent.py NAME --work S --at N [--starve]      # thinks on its Nth move only (starved from then)
    python3 cpu_agent.py NAME --sleep S --at N                # sleeps S seconds on its Nth move (no CPU)

The spinner, on each of its own turns (legal: its opponent is frozen then),
starts ``PROCESSES`` processes that each spin for ``S`` seconds of wall
time, waits for them, then plays.  The victim thinks for ``S`` seconds of
its own CPU time a move (a busy loop, so a move takes longer when it gets
less than a core).  Both play the first legal move.

``--at N``: the victim thinks on its Nth move only.  ``--starve``: from that
move on it gives up its claim to a core (the lowest priority there is for
it: nice 19, its session's autogroup too), so beside busy processes on its
core it waits for one, as on a loaded machine: its clock runs, not its CPU.
"""

from __future__ import annotations

import argparse
import os
import time

from othello_arena.agents.runtime import run_agent
from othello_arena.protocol import Board, Colour, Move


def spin_until(deadline: float) -> None:
    while time.monotonic() < deadline:
        pass


def spinner(processes: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    children = []
    for _ in range(processes):
        pid = os.fork()
        if pid == 0:
            spin_until(deadline)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)


def think(seconds: float) -> None:
    """Use ``seconds`` of this process's CPU time."""
    done = time.process_time() + seconds
    while time.process_time() < done:
        pass


def starve() -> None:
    """Lower this process's priority as far as it may (for itself, and its session's autogroup, where there is one)."""
    os.nice(19)
    try:
        with open("/proc/self/autogroup", "w") as autogroup:  # autogroups share a core by session first
            autogroup.write("19")
    except OSError:
        pass  # no autogroups here: the nice value alone decides


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--spin", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=0.9)
    parser.add_argument("--work", type=float, default=0.0)
    parser.add_argument("--at", type=int, default=0)
    parser.add_argument("--starve", action="store_true")
    parser.add_argument("--sleep", type=float, default=0.0)
    args = parser.parse_args()
    moves = 0

    def strategy(board: Board, colour: Colour, time_left: float) -> Move:
        nonlocal moves
        moves += 1
        if args.spin:
            spinner(args.spin, args.seconds)
        if args.starve and moves == args.at:
            starve()
        if args.work and (not args.at or moves == args.at):
            think(args.work)
        if args.sleep and moves == args.at:
            time.sleep(args.sleep)
        return board.legal_moves()[0]

    return run_agent(strategy, args.name)


if __name__ == "__main__":
    raise SystemExit(main())
