"""Nodes of the champion's table-free solvers (``endgame.shallow``) at N empties: deterministic.

    python bench/endgame_shallow.py --empties 7 --count 10000
    PYTHONPATH=<a copy of another version> python bench/endgame_shallow.py --empties 7 --count 10000

The positions: random legal play (seeded) from the positions of bench/endgame_games.obf down to N
empties, each solved once with a full window and three times with a null window near its score
(as the solver above calls them), the nodes summed.  Compare two versions of ``endgame.py`` by
these counts; the CPU seconds are for information (they depend on the machine's load).
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np

from othello_arena.agents.champion import endgame as E
from othello_arena.protocol import Board, parse_obf

GAMES_SET = Path(__file__).resolve().parent / "endgame_games.obf"


def empties(board: Board) -> int:
    return 64 - bin(board.white | board.black).count("1")


def positions(n: int, count: int, seed: int) -> list[Board]:
    rng = random.Random(seed)
    starts = [parse_obf(line.split("%")[0].strip()) for line in GAMES_SET.read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    found: list[Board] = []
    while len(found) < count:
        board = rng.choice(starts)
        while empties(board) > n and board.legal_moves():
            board = board.play(rng.choice(board.legal_moves()))
        if empties(board) == n and board.legal_moves():
            found.append(board)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--empties", type=int, default=7, help=f"1 to {E.SHALLOW_EMPTIES}")
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    boards = positions(args.empties, args.count, args.seed)
    total = 0
    started = time.process_time()
    for board in boards:
        P, O = np.uint64(board.own), np.uint64(board.opp)
        r = E.shallow(P, O, -65, 65, args.empties)
        score = E.unpack_score(r)
        total += E.unpack_nodes(r)
        for alpha in (score - 3, score - 1, score + 1):
            total += E.unpack_nodes(E.shallow(P, O, alpha, alpha + 1, args.empties))
    print(f"{args.empties} empties, {args.count} positions: {total} nodes, "
          f"{time.process_time() - started:.2f} s of CPU (first calls included)")


if __name__ == "__main__":
    main()
