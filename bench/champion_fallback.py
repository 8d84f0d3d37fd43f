"""The champion's fallback (its move while the engine is still loading) against paper-normal.

    python bench/champion_fallback.py --pairs 10 --time 1

Each pair of games starts from one random opening (4-8 random plies) and is
played twice with the colours swapped.  The fallback gets exactly what the
champion gives it when its engine is not ready (0.6 of the move budget at
``--time`` seconds a move); paper-normal (seed 002, depth 2) gets the whole
``--time``.  Both run in this process, one after the other, without the
referee: this measures the players, not the files.
"""

from __future__ import annotations

import argparse
import random
import time

from othello_arena.agents.champion.agent import fallback_move, move_budget
from othello_arena.agents.players import paper_normal
from othello_arena.protocol import WHITE, Board


def play(opening: Board, fallback_is_white: bool, seconds: float) -> int:
    """Final disc difference for the fallback's side (the referee's count)."""
    normal = paper_normal()
    board = opening
    while not board.is_game_over():
        moves = board.legal_moves()
        if moves[0].is_pass:
            board = board.play(moves[0])
            continue
        fallback_to_move = (board.to_move is WHITE) == fallback_is_white
        if fallback_to_move:
            move = fallback_move(board, 0.6 * move_budget(seconds))
        else:
            answer = normal(board, board.to_move, seconds)
            move = answer[0] if isinstance(answer, tuple) else answer
        board = board.play(move)
    me = WHITE if fallback_is_white else WHITE.opponent
    return board.count(me) - board.count(me.opponent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--time", type=float, default=1.0, help="seconds per move")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    wins = draws = losses = 0
    discs = 0
    started = time.perf_counter()
    for pair in range(args.pairs):
        opening = Board()
        for _ in range(rng.randint(4, 8)):
            opening = opening.play(rng.choice(opening.legal_moves()))
        for fallback_is_white in (True, False):
            diff = play(opening, fallback_is_white, args.time)
            wins += diff > 0
            draws += diff == 0
            losses += diff < 0
            discs += diff
            print(f"pair {pair + 1} fallback as {'White' if fallback_is_white else 'Black'}: {diff:+d}", flush=True)
    games = wins + draws + losses
    points = wins + 0.5 * draws
    print(f"fallback vs paper-normal, {args.time:g} s a move: +{wins} ={draws} -{losses}, "
          f"{points}/{games} points ({100 * points / games:.1f} %), discs {discs:+d}, "
          f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
