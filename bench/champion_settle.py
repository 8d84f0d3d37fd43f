"""Stopping when the move is settled: the time it saves and what it costs, champion against champion.

    python bench/champion_settle.py --pairs 10 --time 4

One champion stops early when its move is settled (a single legal move, or the same best move for
several iterations with a clear margin over every other, see ``engine.SETTLE_*``); the other uses its
whole budget on every move (``Engine(settle=False)``).  Each pair of games starts from one random
opening (6-10 random plies) and is played twice with the colours swapped.  Both run in this process,
one after the other, each with its own table and the budget the agent gives itself at ``--time``
seconds a move (``agent.move_budget``); no referee.  Prints the settling side's score with a 95 %
interval (normal approximation over game points) and the mean time per move of each side.
"""

from __future__ import annotations

import argparse
import math
import random
import time

from othello_arena.agents.champion.agent import load_engine, move_budget
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import WHITE, Board


def play(opening: Board, settling_is_white: bool, seconds: float, stats: dict[str, list[float]]) -> int:
    """Final disc difference for the settling side (the referee's count)."""
    engines = {True: Engine(settle=True), False: Engine(settle=False)}
    board = opening
    while not board.is_game_over():
        moves = board.legal_moves()
        if moves[0].is_pass:
            board = board.play(moves[0])
            continue
        settling = (board.to_move is WHITE) == settling_is_white
        result = engines[settling].think(board, seconds=move_budget(seconds))
        stats["settle" if settling else "full"].append(result.seconds)
        if settling and result.settled:
            stats["settled"].append(result.seconds)
        board = board.play(result.move(board.to_move))
    me = WHITE if settling_is_white else WHITE.opponent
    return board.count(me) - board.count(me.opponent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--time", type=float, default=4.0, help="seconds per move")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    load_engine()
    rng = random.Random(args.seed)
    points: list[float] = []
    discs = 0
    stats: dict[str, list[float]] = {"settle": [], "full": [], "settled": []}
    started = time.perf_counter()
    for pair in range(args.pairs):
        opening = Board()
        for _ in range(rng.randint(6, 10)):
            opening = opening.play(rng.choice(opening.legal_moves()))
        for settling_is_white in (True, False):
            diff = play(opening, settling_is_white, args.time, stats)
            points.append(1.0 if diff > 0 else 0.5 if diff == 0 else 0.0)
            discs += diff
            print(f"pair {pair + 1} settling side as {'White' if settling_is_white else 'Black'}: {diff:+d}", flush=True)
    n = len(points)
    mean = sum(points) / n
    sd = math.sqrt(sum((p - mean) ** 2 for p in points) / max(1, n - 1))
    wins, draws = points.count(1.0), points.count(0.5)
    print(f"settling vs full budget, {args.time:g} s a move (budget {move_budget(args.time):.2f} s): "
          f"+{wins} ={draws} -{n - wins - draws}, {100 * mean:.1f} % +- {100 * 1.96 * sd / math.sqrt(n):.1f} %, "
          f"discs {discs:+d}, {time.perf_counter() - started:.0f} s")
    for side in ("settle", "full"):
        times = stats[side]
        print(f"  {side:6s}: {len(times)} moves, mean {sum(times) / len(times):.2f} s, total {sum(times):.0f} s")
    settled = stats["settled"]
    print(f"  settled early: {len(settled)} of {len(stats['settle'])} moves, mean {sum(settled) / max(1, len(settled)):.2f} s")


if __name__ == "__main__":
    main()
