"""CPU time of the champion's evaluation: nanoseconds a call on random positions, in one compiled loop.

    python bench/evaluation_speed.py [--positions 1000] [--repeats 1000] [--seed 3]

Each call is :func:`~othello_arena.agents.champion.evaluation.evaluate` as the search's ordering
calls it (both sides' legal moves included, about 16 ns of it).  The checksum (the sum of the
values) must be the same for two versions that evaluate alike; the times are CPU seconds of this
process, so run two versions in turn on a loaded machine and compare them pair by pair.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from numba import njit

from othello_arena.agents.champion import evaluation
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import Board


@njit(cache=False)
def _evaluate_all(own, opp, ev, repeats):  # type: ignore[no-untyped-def]
    total = 0
    for _ in range(repeats):
        for i in range(own.shape[0]):
            total += evaluation.evaluate(own[i], opp[i], ev)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    boards = []
    while len(boards) < args.positions:
        board = Board()
        for _ in range(rng.randint(5, 50)):
            moves = board.legal_moves()
            if not moves:
                break
            board = board.play(rng.choice(moves))
        boards.append(board)
    own = np.array([b.own for b in boards], dtype=np.uint64)
    opp = np.array([b.opp for b in boards], dtype=np.uint64)
    ev = Engine(tt_bits=10).ev
    _evaluate_all(own, opp, ev, 1)  # compiled before the clock
    for _ in range(3):
        started = time.process_time()
        checksum = _evaluate_all(own, opp, ev, args.repeats)
        seconds = time.process_time() - started
        print(f"{seconds / (args.positions * args.repeats) * 1e9:.1f} ns an evaluation (CPU), checksum {checksum}")


if __name__ == "__main__":
    main()
