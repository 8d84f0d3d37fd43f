"""How long an example agent takes to notice its ``NAME.in``: this tree's copy against another commit's.

Run by hand (never by the tests), from the repository root:

    python bench/example_waits.py greedy.c --games 20 --ref main

Builds ``agents/examples/FILE`` twice, as it is in the working tree (``new``)
and as it is at ``--ref`` (``old``, from ``git show``), and plays one match
between the two (``othello match``, sandboxed, the waiting side frozen, one
game at a time), so both sides share the machine's state move for move.  The
starters play at ``--depth 1`` (instant), so a move's time as the referee
records it (``NAME.in`` in place -> ``NAME.out`` read) is almost all waiting:
for the agent to notice its file, plus the referee's relay.  Printed per side:
its moves, the mean, median and 90th percentile of a move's seconds, and its
seconds per game.
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

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = "agents/examples"

# file -> (build command or None, run command); {src} is the source file, {dir} its folder.
RECIPES: dict[str, tuple[list[str] | None, str]] = {
    "greedy.c": (["gcc", "-O2", "-o", "{dir}/agent", "{src}"], "{dir}/agent {name}"),
    "starter.c": (["gcc", "-O2", "-o", "{dir}/agent", "{src}"], "{dir}/agent {name} --depth 1"),
    "starter.cpp": (["g++", "-O2", "-std=c++17", "-o", "{dir}/agent", "{src}"], "{dir}/agent {name} --depth 1"),
    "starter.rs": (["rustc", "--edition", "2021", "-O", "-o", "{dir}/agent", "{src}"], "{dir}/agent {name} --depth 1"),
    "starter.go": (["go", "build", "-o", "{dir}/agent", "{src}"], "{dir}/agent {name} --depth 1"),
    "Starter.java": (["javac", "-d", "{dir}", "{src}"], "java -cp {dir} Starter {name} --depth 1"),
    "starter.py": (None, f"{sys.executable} {{src}} {{name}} --depth 1"),
    "starter.js": (None, "node {src} {name} --depth 1"),
    "starter.awk": (None, "awk -f {src} -- {name} --depth 1"),
    "corners.awk": (None, "awk -f {src} {name}"),
}


def prepare(example: str, source: str, directory: Path) -> str:
    """Write ``source`` into ``directory``, build it if its language needs it; the agent's command."""
    directory.mkdir()
    src = directory / example
    src.write_text(source)
    build, run = RECIPES[example]
    if build is not None:
        env = dict(os.environ, GOCACHE=str(directory.parent / "go-cache"))
        subprocess.run([part.format(src=src, dir=directory) for part in build], check=True, env=env)
    return run.replace("{src}", str(src)).replace("{dir}", str(directory))


def per_side(match: Path) -> dict[str, list[float]]:
    """Each agent's move times, in seconds, over every game of the match."""
    seconds: dict[str, list[float]] = {}
    for record in match.glob("games/**/game.json"):
        game = json.loads(record.read_text())
        colour_of = {game["white"]: "W", game["black"]: "B"}
        for name, colour in colour_of.items():
            seconds.setdefault(name, []).extend(
                move["seconds"] for move in game["moves"] if move["move"].startswith(f"({colour}"))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example", choices=sorted(RECIPES))
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--ref", default="main", help="the commit to compare with (default: main)")
    args = parser.parse_args()
    new_source = (ROOT / EXAMPLES / args.example).read_text()
    old_source = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.ref}:{EXAMPLES}/{args.example}"],
                                check=True, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        new = prepare(args.example, new_source, work / "new")
        old = prepare(args.example, old_source, work / "old")
        subprocess.run([sys.executable, "-m", "othello_arena", "match", f"openings:new={new}", f"openings:old={old}",
                        "--games", str(args.games), "-j", "1", "--seed", "1", "--out", str(work / "match"), "-q"],
                       check=True, cwd=work)
        seconds = per_side(work / "match")
    print(f"{args.example}: this tree (new) against {args.ref} (old), {args.games} games, one match\n")
    print("| side | moves | mean ms | median ms | p90 ms | s per game |")
    print("| --- | --- | --- | --- | --- | --- |")
    for side in ("new", "old"):
        times = sorted(seconds[side])
        p90 = times[int(len(times) * 0.9)]
        print(f"| {side} | {len(times)} | {statistics.mean(times) * 1000:.2f} | {statistics.median(times) * 1000:.2f} "
              f"| {p90 * 1000:.2f} | {sum(times) / args.games:.3f} |")


if __name__ == "__main__":
    main()
