"""The check's steering CPU: 30 games of a random player against ``steering_move``, the exact search's answers
kept for a whole game or made afresh at each move, alternately, twice (``python bench/check_steering.py``).

The check steers its games toward positions where the agent must pass (agents/check.py); that search runs in the
class server's worker beside every check, so its CPU is what a class at its peak pays per check.
"""

from __future__ import annotations

import random
import time

from othello_arena.agents.check import steering_move
from othello_arena.protocol import BLACK, WHITE, Board


def steered_game(seed: int, keep: bool) -> float:
    """One game, the checker steering against a random player; the steering's CPU, seconds."""
    rng, player = random.Random(seed), random.Random(seed + 1000)
    board = Board()
    victim = WHITE if seed % 2 else BLACK
    memo: dict[Board, bool] = {}
    cpu = 0.0
    while not board.is_game_over():
        if board.to_move is victim:
            move = player.choice(board.legal_moves())
        else:
            started = time.thread_time()
            move = steering_move(board, victim, rng, memo=memo if keep else None)
            cpu += time.thread_time() - started
        board = board.play_unchecked(move)
    return cpu


def main() -> None:
    for keep in (False, True, False, True):
        total = sum(steered_game(seed, keep) for seed in range(30))
        print(f"{'kept for the game' if keep else 'fresh at each move':20s} {total:6.2f} s of CPU over 30 games")


if __name__ == "__main__":
    main()
