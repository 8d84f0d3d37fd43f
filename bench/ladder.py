"""Strength ladder: every built-in agent against every other, both colours.

    python bench/ladder.py                      # all built-ins, 2 openings, 1 s per move
    python bench/ladder.py --openings 3 --time 0.5 --agents random,greedy,weighted

Games are played in this process, strategy against strategy, with the rules
core as referee (the file protocol is tested elsewhere; here we want many
games quickly).  Deterministic players would repeat the same game, so each
pair plays from several short random openings (the same openings for every
pair), each with both colours.  Every strategy gets ``--time`` seconds per
move as its ``time_left``; a move slower than that is counted and reported
(it would lose on time under the referee).

Prints a cross table (points of the row agent against the column agent, a
win 1, a draw 1/2) and the ranking by total points.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from collections import defaultdict

from othello_arena.agents.registry import get_strategy, names
from othello_arena.protocol import BLACK, WHITE, Board


def opening(seed: int, plies: int) -> Board:
    """A short random opening, the same for every pair."""
    rng = random.Random(seed)
    board = Board()
    for _ in range(plies):
        board = board.play(rng.choice(board.legal_moves()))
    return board


def play(white, black, board: Board, seconds: float, late: dict, slowest: dict) -> float:
    """Play to the end; return White's points.  Counts each side's moves over time in ``late``."""
    sides = {WHITE: white, BLACK: black}
    while not board.is_game_over():
        name, strategy = sides[board.to_move]
        started = time.monotonic()
        answer = strategy(board, board.to_move, seconds)
        move = answer if not isinstance(answer, tuple) else answer[0]
        spent = time.monotonic() - started
        slowest[name] = max(slowest[name], spent)
        late[name] += spent > seconds
        board = board.play(move)
    w, b = board.count(WHITE), board.count(BLACK)
    return 1.0 if w > b else 0.5 if w == b else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", default=",".join(names()), help="comma-separated built-in agents (default: all)")
    parser.add_argument("--openings", type=int, default=2, help="random openings per pair (each played with both colours)")
    parser.add_argument("--plies", type=int, default=4, help="length of each random opening")
    parser.add_argument("--time", type=float, default=1.0, help="seconds per move given to every agent")
    args = parser.parse_args(argv)
    agents = [name.strip() for name in args.agents.split(",") if name.strip()]
    strategies = {name: get_strategy(name) for name in agents}
    openings = [opening(seed, args.plies) for seed in range(args.openings)]

    points: dict[tuple[str, str], float] = defaultdict(float)
    games: dict[tuple[str, str], int] = defaultdict(int)
    late: dict[str, int] = defaultdict(int)
    slowest: dict[str, float] = defaultdict(float)
    started = time.monotonic()
    for a, b in itertools.combinations(agents, 2):
        for board in openings:
            for white, black in ((a, b), (b, a)):
                score = play((white, strategies[white]), (black, strategies[black]), board, args.time, late, slowest)
                points[white, black] += score
                points[black, white] += 1 - score
                games[white, black] += 1
                games[black, white] += 1
        print(f"  {a} vs {b} done ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    total = {name: sum(points[name, other] for other in agents if other != name) for name in agents}
    played = {name: sum(games[name, other] for other in agents if other != name) for name in agents}
    ranking = sorted(agents, key=lambda name: -total[name])
    width = max(len(name) for name in agents)
    print(f"{args.openings} openings of {args.plies} random plies x 2 colours per pair, {args.time:g} s per move")
    print()
    # columns are numbered like the rows, so the table stays narrow
    header = " " * (width + 4) + " | " + " ".join(f"{number:>4}" for number in range(1, len(ranking) + 1)) + " |  points"
    print(header)
    print("-" * len(header))
    for number, row in enumerate(ranking, 1):
        cells = ["   -" if row == column else f"{points[row, column]:4.1f}" for column in ranking]
        print(f"{number:>2}. {row:<{width}} | " + " ".join(cells) + f" | {total[row]:5.1f}/{played[row]}")
    print()
    print(f"{sum(games.values()) // 2} games in {time.monotonic() - started:.0f} s")
    print("slowest move: " + ", ".join(f"{name} {slowest[name]:.2f} s" for name in ranking))
    over = {name: count for name, count in late.items() if count}
    print("moves over the time limit: " + (", ".join(f"{n} {c}" for n, c in over.items()) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
