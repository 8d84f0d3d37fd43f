"""What each selective level of the endgame finds on FFO positions, and when (bench/RESULTS.md, issue 39).

    python bench/endgame_levels.py --edax-dir /path/to/edax --first 40 --last 44

Per position, in one fresh engine: the solver's usual first guess, then each level of
:data:`~othello_arena.agents.champion.probcut.ENDGAME_THRESHOLDS` in turn in one table, as
``Engine.think`` runs them, then the exact solve; each cell is the move, its score and the cumulative
nodes and CPU seconds.  The last column is the exact solve alone (``Engine.think(board, exact=True)``
in a fresh engine).  The positions are read from Edax's ``problem/`` folder as by
``bench/endgame_vs_edax.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from endgame_vs_edax import read_problems  # noqa: E402  (bench/ is not a package)

from othello_arena.agents.champion import probcut as PC  # noqa: E402
from othello_arena.agents.champion import search as S  # noqa: E402
from othello_arena.agents.champion.agent import load_engine  # noqa: E402
from othello_arena.agents.champion.engine import Engine  # noqa: E402
from othello_arena.protocol import parse_obf, square_name  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edax-dir", type=Path, required=True, help="the folder holding Edax's problem/fforum-*.obf")
    parser.add_argument("--first", type=int, default=40)
    parser.add_argument("--last", type=int, default=44)
    args = parser.parse_args()
    load_engine()  # the compiled code loaded before any clock
    levels = [f"{t / 100:.1f} sigma" for t in PC.ENDGAME_THRESHOLDS]
    print("| # | empties | " + " | ".join(levels) + " | then exact | exact alone |")
    print("| --- " * (4 + len(levels)) + "|")
    for problem in read_problems(args.edax_dir, args.first, args.last):
        board = parse_obf(problem.obf)
        engine = Engine()
        P, O = np.uint64(board.own), np.uint64(board.opp)
        engine._reset(0)
        started = time.process_time()
        guess = engine._guess(P, O, problem.empties)
        cells = []
        for threshold in (*PC.ENDGAME_THRESHOLDS, 0):
            found = engine._selective_score(P, O, threshold, guess)
            assert found is not None  # no clock, no node limit: never stopped
            score, square = found
            guess = score
            cells.append(f"{square_name(square)} {score:+d}, {engine.ctl[S.NODES] / 1e6:.1f} M, "
                         f"{time.process_time() - started:.2f} s")
        alone = Engine()
        started = time.process_time()
        result = alone.think(board, exact=True)
        cells.append(f"{result.move_name} {result.score:+.0f}, {result.nodes / 1e6:.1f} M, "
                     f"{time.process_time() - started:.2f} s")
        print(f"| {problem.number} | {problem.empties} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
