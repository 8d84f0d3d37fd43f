"""Node counts of the champion's exact solver on FFO positions: deterministic, unaffected by load.

    python bench/endgame_nodes.py --edax-dir EDAX --first 45 --last 52 [--tt-bits 22]
    python bench/endgame_nodes.py --obf bench/endgame_games.obf [--lines 9 16] --tt-bits 20

(``--obf FILE``: the positions of an OBF file instead of FFO's, named by their line; their score
is the solver's own, with no published one to check.)

For each position: the answer of ``Engine.think(board, exact=True)`` (what a game and
``bench/endgame_vs_edax.py`` run), its nodes, and the nodes of each solver call at the root
(the window and the result), so that a change of the root's windows and a change inside the
search can be told apart.  Compare two versions of the solver by these counts; seconds are given
for information only (they depend on the machine's load).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from endgame_vs_edax import read_problems

from othello_arena.agents.champion import search as S
from othello_arena.agents.champion.agent import load_engine
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import parse_obf, square_name


@dataclass
class Line:
    """A position of an OBF file: its line number (as ``number``), no published score."""

    number: int
    obf: str
    empties: int
    score: Optional[int] = None
    best_moves: tuple[str, ...] = ()


def read_obf(path: Path, lines: Optional[list[int]]) -> list[Line]:
    """The positions of an OBF file (``lines``: only these line numbers)."""
    found = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        obf = text.split("%")[0].strip()
        if not obf or obf.startswith("#") or (lines and number not in lines):
            continue
        found.append(Line(number, obf, obf.split()[0].count("-")))
    if not found:
        raise SystemExit(f"no positions in {path}" + (f" at lines {lines}" if lines else ""))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edax-dir", type=Path, help="the folder holding Edax's problem/ (the FFO positions)")
    parser.add_argument("--obf", type=Path, help="an OBF file instead (one position a line, # comments)")
    parser.add_argument("--lines", type=int, nargs="*", help="with --obf: only these line numbers")
    parser.add_argument("--first", type=int, default=45)
    parser.add_argument("--last", type=int, default=52)
    parser.add_argument("--tt-bits", type=int, default=22, help="the table: 2**N entries (default 22, as Edax's)")
    args = parser.parse_args()
    if (args.edax_dir is None) == (args.obf is None):
        parser.error("give --edax-dir (FFO) or --obf FILE")
    problems = read_problems(args.edax_dir, args.first, args.last) if args.edax_dir else read_obf(args.obf, args.lines)
    load_engine()
    engine = Engine(tt_bits=args.tt_bits)
    calls: list[tuple[int, int, int, int]] = []
    solve_root = engine._solve_root

    def traced(P, O, alpha, beta):  # every root call: window, result, nodes
        before = int(engine.ctl[S.NODES])
        value, sq = solve_root(P, O, alpha, beta)
        calls.append((alpha, beta, value, int(engine.ctl[S.NODES]) - before))
        return value, sq

    engine._solve_root = traced
    total = 0
    print("| # | empties | published | champion | nodes | root calls (window: result, nodes) | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for problem in problems:
        board = parse_obf(problem.obf)
        engine.clear()
        calls.clear()
        started = time.perf_counter()
        result = engine.think(board, exact=True)
        seconds = time.perf_counter() - started
        move = square_name(result.square) if result.square is not None else "pass"
        right = problem.score is None or (int(result.score) == problem.score and move.upper() in problem.best_moves)
        total += result.nodes
        steps = ", ".join(f"({a},{b}): {v:+d} {n / 1e6:.1f} M" for a, b, v, n in calls)
        published = "-" if problem.score is None else f"{'/'.join(problem.best_moves)} {problem.score:+d}"
        print(f"| {problem.number} | {problem.empties} | {published} | "
              f"{move} {int(result.score):+d}{'' if right else ' WRONG'} | {result.nodes / 1e6:.1f} M | {steps} | {seconds:.1f} |",
              flush=True)
    print(f"total: {total / 1e6:.1f} M nodes")


if __name__ == "__main__":
    main()
