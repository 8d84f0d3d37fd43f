"""Node counts of the champion's midgame search on random positions: deterministic, unaffected by load.

    python bench/midgame_nodes.py [--positions 12] [--depth 9] [--seed 5]

For each position (up to 30 random plies from the start, drawn from the seed): the value, the move
and the nodes of one NegaScout search to ``--depth`` in a fresh table.  Two versions of the search
that agree on every line search the same tree; seconds are given for information only (the CPU
seconds of the process compare two versions run in turn on a loaded machine better than the wall's).
"""

from __future__ import annotations

import argparse
import random
import time

from othello_arena.agents.champion import search as S
from othello_arena.agents.champion.agent import load_engine
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import Board, square_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=12)
    parser.add_argument("--depth", type=int, default=9)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    load_engine()
    engine = Engine(tt_bits=20)
    rng = random.Random(args.seed)
    total = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    print("| position | plies | value | move | nodes |")
    print("| --- | --- | --- | --- | --- |")
    for number in range(1, args.positions + 1):
        board, plies = Board(), rng.randint(4, 30)
        for _ in range(plies):
            moves = board.legal_moves()
            if not moves:
                break
            board = board.play(rng.choice(moves))
        if board.is_game_over():
            continue
        engine.clear()
        value, square = engine.search_depth(board, args.depth)
        nodes = int(engine.ctl[S.NODES])
        total += nodes
        move = square_name(square) if square >= 0 else "pass"
        print(f"| {number} | {plies} | {value} | {move} | {nodes} |", flush=True)
    print(f"total: {total} nodes, {time.perf_counter() - started:.2f} s, {time.process_time() - cpu_started:.2f} s CPU")


if __name__ == "__main__":
    main()
