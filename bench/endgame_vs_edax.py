"""The champion's exact solver against Edax's, side by side on the FFO endgame positions.

    python bench/endgame_vs_edax.py --edax /path/to/edax/bin/lEdax-x86-64-v3 --edax-dir /path/to/edax
    python bench/endgame_vs_edax.py --edax ... --edax-dir ... --first 40 --last 59   # the whole suite
    python bench/endgame_vs_edax.py --edax ... --edax-dir ... --only champion       # no Edax

Edax is not part of this project: build it as its own README says (abulmo/edax-reversi).  This
benchmark expects its program (``--edax``, e.g. ``bin/lEdax-x86-64-v3``) and the folder it runs in
(``--edax-dir``), which holds ``data/eval.dat`` and its ``problem/fforum-*.obf`` positions.  Its real weights are not published; a file of
zero weights of the right size makes it run (``--make-zero-eval`` writes one), with worse move
ordering than it normally has.

The two solvers alternate position by position (Edax first on even positions, the champion first on
odd ones), each on one thread, so that the load of a shared machine falls on both alike.  Edax's
time is the one it prints (its start-up and the loading of its weights are left out), the
champion's is the wall time of ``Engine.think(board, exact=True)`` with the compiled code loaded
beforehand and a fresh transposition table per position.  Scores are disc differences for the side
to move, empty squares to the winner, checked against the published best score of each line.
"""

from __future__ import annotations

import argparse
import re
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from othello_arena.agents.champion.agent import load_engine
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import parse_obf

SUITE_FILES = ("fforum-1-19.obf", "fforum-20-39.obf", "fforum-40-59.obf", "fforum-60-79.obf")
SUITE_FIRST = (1, 20, 40, 60)

# One result line of ``lEdax -solve``: " 1|   20   +38        0:01.369      21000788   15340240 a2 B1 ..."
EDAX_LINE = re.compile(r"^\s*\d+\|\s*(\d+)\s+([+-]\d+)\s+(?:(\d+):)?(\d+):(\d+\.\d+)\s+(\d+)\s+\d*\s+(\S+)")


@dataclass
class Solved:
    """One solver's answer to one position."""

    move: str
    score: int
    nodes: int
    seconds: float


@dataclass
class Problem:
    number: int
    obf: str
    best_moves: list[str]  # every move that reaches the published best score
    score: int
    empties: int


def read_problems(edax_dir: Path, first: int, last: int) -> list[Problem]:
    """The FFO positions ``first..last`` from Edax's ``problem/`` folder, with their published scores."""
    problems = []
    for name, start in zip(SUITE_FILES, SUITE_FIRST):
        path = edax_dir / "problem" / name
        if not path.exists():
            continue
        for offset, line in enumerate(path.read_text().splitlines()):
            number = start + offset
            if not line.strip() or not first <= number <= last:
                continue
            obf, _, rest = line.partition(";")
            scores = [(m.strip().upper(), int(s)) for m, s in (item.split(":") for item in rest.split(";") if ":" in item)]
            best = max(s for _, s in scores)
            problems.append(Problem(number, obf.strip() + ";", [m for m, s in scores if s == best], best, obf.count("-")))
    if not problems:
        raise SystemExit(f"no FFO positions {first}-{last} under {edax_dir / 'problem'}")
    return problems


def write_zero_eval(path: Path) -> None:
    """An Edax ``eval.dat`` of the right size with every weight zero."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<II", 0x45444158, 0x4556414C))  # the magic words "EDAX", "EVAL"
        f.write(struct.pack("<III", 4, 4, 0))  # version, release, build
        f.write(struct.pack("<d", 0.0))  # date
        f.write(bytes(61 * 114_364 * 2))  # 61 plies x 114,364 packed 16-bit weights


def solve_edax(edax: Path, edax_dir: Path, problem: Problem, extra: list[str]) -> Solved:
    """Edax's ``-solve`` on one position, one thread."""
    with tempfile.NamedTemporaryFile("w", suffix=".obf", delete=False) as f:
        f.write(problem.obf + "\n")
    try:
        out = subprocess.run([str(edax), "-solve", f.name, "-n", "1", *extra], cwd=edax_dir,
                             capture_output=True, text=True, check=True).stdout
    finally:
        Path(f.name).unlink()
    for line in out.splitlines():
        m = EDAX_LINE.match(line)
        if m:
            _, score, hours, minutes, seconds, nodes, move = m.groups()
            total = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
            return Solved(move.upper(), int(score), int(nodes), total)
    raise SystemExit(f"cannot read Edax's answer:\n{out}")


def solve_champion(engine: Engine, problem: Problem) -> Solved:
    board = parse_obf(problem.obf)
    engine.clear()
    started = time.perf_counter()
    result = engine.think(board, exact=True)
    seconds = time.perf_counter() - started
    return Solved(result.move_name, int(result.score), result.nodes, seconds)


def cell(s: Optional[Solved], problem: Problem) -> str:
    if s is None:
        return "| - | - | - |"
    verdict = "" if s.score == problem.score and s.move in problem.best_moves else " WRONG"
    return f"| {s.move} {s.score:+d}{verdict} | {s.nodes / 1e6:.1f} M | {s.seconds:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edax", type=Path, help="Edax's binary (lEdax-...)")
    parser.add_argument("--edax-dir", type=Path, required=True, help="the folder Edax runs in (data/eval.dat, problem/)")
    parser.add_argument("--first", type=int, default=40)
    parser.add_argument("--last", type=int, default=44)
    parser.add_argument("--only", choices=("edax", "champion"), help="run one solver only")
    parser.add_argument("--tt-bits", type=int, default=None, help="the champion's table: 2**N entries")
    parser.add_argument("--make-zero-eval", action="store_true", help="write DIR/data/eval.dat of zero weights first")
    parser.add_argument("--edax-args", default="", help="more arguments for Edax, e.g. '-h 22'")
    args = parser.parse_args()
    if args.make_zero_eval:
        write_zero_eval(args.edax_dir / "data" / "eval.dat")
    if args.only != "champion" and args.edax is None:
        parser.error("--edax is needed unless --only champion")
    problems = read_problems(args.edax_dir, args.first, args.last)

    load_engine()  # compiled code loaded before any clock
    engine = Engine() if args.tt_bits is None else Engine(tt_bits=args.tt_bits)
    print("| # | empties | published | Edax move | Edax nodes | Edax s | champion move | champion nodes | champion s | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    totals = {"edax": 0.0, "champion": 0.0}
    nodes = {"edax": 0, "champion": 0}
    wrong = 0
    for i, problem in enumerate(problems):
        order = ["edax", "champion"] if i % 2 == 0 else ["champion", "edax"]
        answers: dict[str, Optional[Solved]] = {"edax": None, "champion": None}
        for who in order:
            if args.only and who != args.only:
                continue
            if who == "edax":
                answers[who] = solve_edax(args.edax.resolve(), args.edax_dir, problem, args.edax_args.split())
            else:
                answers[who] = solve_champion(engine, problem)
            s = answers[who]
            assert s is not None
            totals[who] += s.seconds
            nodes[who] += s.nodes
            if s.score != problem.score or s.move not in problem.best_moves:
                wrong += 1
        e, c = answers["edax"], answers["champion"]
        ratio = f"{c.seconds / e.seconds:.2f}" if e and c and e.seconds > 0 else "-"
        print(f"| {problem.number} | {problem.empties} | {'/'.join(problem.best_moves)} {problem.score:+d} "
              f"{cell(e, problem)} {cell(c, problem)[2:]} {ratio} |", flush=True)
    for who in ("edax", "champion"):
        if totals[who]:
            print(f"{who}: {totals[who]:.2f} s, {nodes[who] / 1e6:.1f} M nodes, {nodes[who] / totals[who] / 1e6:.1f} M nodes/s")
    if totals["edax"] and totals["champion"]:
        print(f"ratio champion / Edax: {totals['champion'] / totals['edax']:.2f}")
    print("all right" if not wrong else f"{wrong} WRONG answers")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
