"""Exact endgame solving: time and nodes on positions with 14 to 24 empties.

    python bench/endgame.py [--empties 14 16 18 20] [--count 5] [--seed 1]
    python bench/endgame.py --ffo           # the published FFO positions #5, #11 and #40 only

The positions come from self-play (random openings, then the engine at
depth 4 with seed 002's heuristics, simplified: ``evaluation.evaluate_paper_simplified``), stopped at the given number of empty
squares; they are printed as OBF lines (X = White, who moves first) so any
other solver can check the scores.  The score is the exact final disc
difference for the side to move, empty squares to the winner (as every
Othello program and the published suites count).
"""

from __future__ import annotations

import argparse
import random
import time

from othello_arena.agents.champion import evaluation
from othello_arena.agents.champion.agent import load_engine
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import Board, Move, format_obf, parse_obf


# Published test positions (OBF, as in the FFO endgame suite; X moves), with
# their known best move and exact score.  #40 (20 empties) was checked
# against the bitboards of a public engine's test (0x0101312303010100,
# 0x9E7ECEDCFC1E0800, up to a half turn of the board).
FFO = [
    ("-OOOOO----OXXO-XXXOXOXX-XXOXOXXOXXOOXOOOXXXXOO-OX-XOOO---XXXXX-- X;", "#5", "G8", 32),
    ("---O-XOX----XXOX---XXOOXO-XXOXOXXXXOOXOX-XOOXXXXXOOOXX-XOOOOOOO- O;", "#11", "B3", 30),
    ("O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X;", "#40", "A2", 38),
]


def position(rng: random.Random, empties: int, player: Engine) -> Board:
    while True:
        board = Board()
        for _ in range(rng.randint(6, 14)):
            board = board.play(rng.choice(board.legal_moves()))
        while not board.is_game_over() and 64 - bin(board.white | board.black).count("1") > empties:
            moves = board.legal_moves()
            if moves[0].is_pass:
                board = board.play(moves[0])
            else:
                board = board.play(Move(board.to_move, player.search_depth(board, 4)[1]))
        if not board.is_game_over() and board.legal_squares() and 64 - bin(board.white | board.black).count("1") == empties:
            return board


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--empties", type=int, nargs="+", default=[14, 16, 18, 20])
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ffo", action="store_true", help="solve the published FFO positions instead")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    if args.ffo:
        load_engine()  # compiled code loaded before any clock
        for obf, name, best, score in FFO:
            board = parse_obf(obf)
            started = time.perf_counter()
            result = Engine().think(board, exact=True)
            seconds = time.perf_counter() - started
            verdict = "ok" if result.score == score else f"WRONG (published {score})"
            print(f"FFO {name}: best {result.move_name} (published {best})  score {result.score:+.0f} {verdict}  "
                  f"nodes {result.nodes:,}  {seconds:.2f}s")
        return
    player = Engine(tt_bits=16, eval_kind=evaluation.EVAL_PAPER_SIMPLIFIED)
    solver = Engine()
    for empties in args.empties:
        times = []
        for _ in range(args.count):
            board = position(rng, empties, player)
            solver.clear()
            started = time.perf_counter()
            result = solver.think(board, exact=True)
            seconds = time.perf_counter() - started
            times.append(seconds)
            print(f"{format_obf(board)}  {empties} empties  best {result.move_name}  score {result.score:+.0f}  "
                  f"nodes {result.nodes:,}  {seconds:.2f}s  ({result.nodes / seconds / 1e6:.1f} M nodes/s)")
        print(f"== {empties} empties: mean {sum(times) / len(times):.2f}s, max {max(times):.2f}s over {len(times)} positions")


if __name__ == "__main__":
    main()
