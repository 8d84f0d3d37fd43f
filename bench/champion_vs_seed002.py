"""The learned pattern evaluation against seed 002's six heuristics (simplified), at equal depth.

    python bench/champion_vs_seed002.py [--pairs 100] [--depth 4] [--seed 1] [--weights FILE]

Each pair of games starts from the same random opening (4 to 10 random
plies) and is played twice with the colours swapped; both sides search with
the same compiled NegaScout to the same fixed depth and neither uses the
endgame solver, so the evaluation is the only difference.  The opponent is
``evaluation.evaluate_paper_simplified``: seed 002's heuristics with the static
weighting unscaled and stability from edges and corners only (the seed
players' ``players.paper_evaluate`` also counts full lines).  Prints wins,
draws, losses of the learned evaluation, its score (a win 1, a draw 1/2)
with a 95% margin, and the mean disc difference.
"""

from __future__ import annotations

import argparse
import math
import random
import time

from othello_arena.agents.champion import evaluation
from othello_arena.agents.champion.engine import Engine
from othello_arena.agents.champion.patterns import load_weights
from othello_arena.protocol import WHITE, Board, Move


def play(board: Board, engines: dict, depth: int) -> int:
    """Play to the end; return White's disc difference."""
    while not board.is_game_over():
        moves = board.legal_moves()
        if moves[0].is_pass:
            board = board.play(moves[0])
            continue
        _, sq = engines[board.to_move].search_depth(board, depth)
        board = board.play(Move(board.to_move, sq))
    return board.count(WHITE) - board.count(WHITE.opponent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--weights", default=None, help="weights file (default: the shipped one)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    weights = None if args.weights is None else load_weights(args.weights)
    learned = Engine(tt_bits=18, eval_kind=evaluation.EVAL_PATTERNS, weights=weights)
    seed002 = Engine(tt_bits=18, eval_kind=evaluation.EVAL_PAPER_SIMPLIFIED)
    results = []  # per game: 1, 0.5, 0 for the learned evaluation
    diffs = []
    started = time.perf_counter()
    for _ in range(args.pairs):
        board = Board()
        for _ in range(rng.randint(4, 10)):
            board = board.play(rng.choice(board.legal_moves()))
        for learned_colour in (board.to_move, board.to_move.opponent):
            learned.clear()
            seed002.clear()
            engines = {learned_colour: learned, learned_colour.opponent: seed002}
            white_diff = play(board, engines, args.depth)
            diff = white_diff if learned_colour is WHITE else -white_diff
            diffs.append(diff)
            results.append(1.0 if diff > 0 else 0.5 if diff == 0 else 0.0)
    n = len(results)
    score = sum(results) / n
    sd = math.sqrt(sum((r - score) ** 2 for r in results) / max(1, n - 1))
    wins = sum(r == 1.0 for r in results)
    draws = sum(r == 0.5 for r in results)
    print(f"depth {args.depth}, {n} games ({args.pairs} openings x 2 colours), seed {args.seed}, "
          f"{time.perf_counter() - started:.0f}s")
    print(f"learned vs seed 002 (simplified): +{wins} ={draws} -{n - wins - draws}  score {100 * score:.1f}% "
          f"+- {100 * 1.96 * sd / math.sqrt(n):.1f}% (95%)  mean discs {sum(diffs) / n:+.1f}")


if __name__ == "__main__":
    main()
