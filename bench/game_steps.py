"""Where a game's time goes in ``othello match``: the median moment each step of a game ends (issue 27).

    python bench/game_steps.py [--games 20] [-- MATCH OPTIONS...]
    python bench/game_steps.py --joins 30

Runs ``othello match "a=./greedy {name}" "b=./greedy {name}" --games N -j 1 -q``
in this process (agents/examples/greedy.c built with ``gcc -O2``, the
defaults: sandbox, limits, suspension, SQLite, records) with the referee's and
the runner's steps wrapped: each step notes the moment it ends, as
milliseconds since its game's ``play_job`` began, and the table gives the
median over the games of each moment (the k-th call of a step is its own row).
The game runs in a thread of the runner's pool, so a profile of the main
thread would show only its wait.  ``--joins N`` measures instead what a child
pays to join an agent's cgroups between fork and exec, as the referee's does
(N fresh agent cgroups, one child each, 30 ms apart as games space their
starts), through ``cgroup.procs`` and through ``tasks`` (cgroup v1), in turn.  Steps named by a build that lacks them are
left out, so a copy of an earlier commit can be timed too
(``PYTHONPATH=/tmp/before python bench/game_steps.py``, ``/tmp/before/othello_arena``
being that copy).  The wrappers cost a little of their own: read the gaps,
not the last digit.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent

# (module, class or None, function, label, also its start): the steps of a game, in the order they happen
STEPS = [
    ("referee.game", "_Game", "setup", "setup", True),
    ("referee.process", "AgentProcess", "start", "agent start", True),
    ("referee.game", "_Game", "start_colours", "colours written (the second side took its own)", False),
    ("referee.game", "_Game", "play", "last move judged", False),
    ("referee.process", "AgentProcess", "wait_exit", "agent exited", False),
    ("referee.process", "AgentProcess", "kill_all", "agent's processes ended", False),
    ("referee.game", "_Game", "teardown", "teardown", True),
    ("referee.game", "_Game", "finish", "game.json written", False),
    ("tournaments.results.store", "Store", "finish", "result committed (SQLite)", False),
    ("tournaments.results.store", "Store", "mark_running", "next game marked running (SQLite)", False),
]

games: list[list[tuple[str, float]]] = []


def note(label: str) -> None:
    if games:
        games[-1].append((label, time.perf_counter()))


def wrap(owner: Any, name: str, label: str, start: bool) -> None:
    function = getattr(owner, name)

    @functools.wraps(function)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if start:
            note(f"{label} (start)")
        try:
            return function(*args, **kwargs)
        finally:
            note(label)

    setattr(owner, name, wrapped)


def first_move_reader(read_move: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(read_move)
    def wrapped(game: Any, mover: Any) -> Any:
        result = read_move(game, mover)
        if len(game.record.moves) == 0:
            note("first move read")
        return result

    return wrapped


def joins(starts: int) -> int:
    """The time a forked child takes to write itself into an agent's cgroups, by each file, in turn."""
    from othello_arena.referee.sandbox import CgroupRoot

    root, why = CgroupRoot.find()
    if root is None:
        print(f"no cgroup here: {why}")
        return 1
    names = ["cgroup.procs", "tasks"] if root.version == 1 else ["cgroup.procs"]
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(starts):
        for name in names:
            group = root.make(256, 64)
            read, write = os.pipe()
            child = os.fork()
            if child == 0:
                began = time.perf_counter()
                for folder in group.folder_paths():
                    with open(f"{folder}/{name}", "w") as handle:
                        handle.write("0")
                os.write(write, repr(time.perf_counter() - began).encode())
                os._exit(0)
            os.waitpid(child, 0)
            seconds[name].append(float(os.read(read, 100)))
            os.close(read)
            os.close(write)
            group.remove()
            time.sleep(0.03)
    print(f"cgroup v{root.version}, {len(root.folders)} folders an agent, {starts} starts each, load average "
          f"{os.getloadavg()[0]:.2f}\n")
    print("| joined through | median ms | p90 ms | max ms |")
    print("|---|---|---|---|")
    for name, values in seconds.items():
        values.sort()
        print(f"| {name} | {statistics.median(values) * 1000:.2f} | {values[int(len(values) * 0.9)] * 1000:.2f} | "
              f"{values[-1] * 1000:.2f} |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--joins", type=int, default=0, metavar="N", help="time N cgroup joins by each file instead")
    parser.add_argument("extra", nargs="*", help="more options of othello match (after --)")
    args = parser.parse_args()
    if args.joins:
        return joins(args.joins)
    import importlib

    import othello_arena
    from othello_arena import cli
    from othello_arena.referee import game as game_module
    from othello_arena.tournaments.run import pools

    for module_name, class_name, function, label, start in STEPS:
        module = importlib.import_module(f"othello_arena.{module_name}")
        owner = getattr(module, class_name) if class_name else module
        if hasattr(owner, function):
            wrap(owner, function, label, start)
    game_module._Game.read_move = first_move_reader(game_module._Game.read_move)  # type: ignore[method-assign]
    play_job = pools.play_job

    def timed_job(job: Any, on_event: Optional[Callable[[Any], None]] = None) -> Any:
        games.append([("play_job start", time.perf_counter())])
        try:
            return play_job(job, on_event)
        finally:
            note("play_job end")

    pools.play_job = timed_job  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="game-steps-") as directory:
        work = Path(directory)
        subprocess.run(["gcc", "-O2", "-o", str(work / "greedy"), str(ROOT / "agents" / "examples" / "greedy.c")],
                       check=True)
        os.chdir(work)
        load = os.getloadavg()[0]
        started = time.perf_counter()
        cli.cli.main(["match", "a=./greedy {name}", "b=./greedy {name}", "--games", str(args.games), "-j", "1", "-q",
                      "--out", str(work / "match"), *args.extra], standalone_mode=False)
        seconds = time.perf_counter() - started
    moments: dict[str, list[float]] = collections.defaultdict(list)
    for index, steps in enumerate(games):
        begun = steps[0][1]
        if index + 1 < len(games):
            steps = [*steps, ("next game's play_job start", games[index + 1][0][1])]
        seen: collections.Counter[str] = collections.Counter()
        for label, moment in steps:
            seen[label] += 1
            moments[label if seen[label] == 1 else f"{label} #{seen[label]}"].append((moment - begun) * 1000)
    print(f"othello_arena from {Path(othello_arena.__file__).parent}; {len(games)} games in {seconds:.2f} s; "
          f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}\n")
    print("| ms since the game's play_job began (median) | step |")
    print("|---|---|")
    for label in sorted(moments, key=lambda name: statistics.median(moments[name])):
        print(f"| {statistics.median(moments[label]):.1f} | {label} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
