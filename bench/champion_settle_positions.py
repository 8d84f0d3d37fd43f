"""The settle rule at a real time limit: seconds per move with and without it, on positions of real games.

    python bench/champion_settle_positions.py --time 60 --games 3 --plies 14 24 34 44

A match at 60 s a move takes about an hour a game, so this measures what a match cannot in a
session: positions are taken from quick self-play games (0.1 s a move, each from a random opening
of 6-10 plies, drawn from ``--seed``) at the given plies; on each, the champion thinks with the
budget the agent gives itself at ``--time`` seconds a move (``agent.move_budget``: 48 s at 60 s),
once stopping when its move is settled (``Engine(settle=True)``, the default) and once using its
budget as before (``settle=False``), each with a fresh table, the two alternating so that both see
the same load.  Prints one line per position (seconds, depth reached, move, why it stopped early)
and the means; where the two choose different moves, the settled move's value by a search of the
full-budget side's depth shows what settling cost there (discs for the side to move).
"""

from __future__ import annotations

import argparse
import random
import time

from othello_arena.agents.champion.agent import load_engine, move_budget
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import Board, Move


def positions(games: int, plies: list[int], seed: int) -> list[tuple[str, Board]]:
    rng = random.Random(seed)
    engine = Engine(tt_bits=18)
    found: list[tuple[str, Board]] = []
    for game in range(1, games + 1):
        board = Board()
        for _ in range(rng.randint(6, 10)):
            board = board.play(rng.choice(board.legal_moves()))
        history = [board]
        while not board.is_game_over():
            moves = board.legal_moves()
            board = board.play(moves[0] if moves[0].is_pass else engine.think(board, seconds=0.1).move(board.to_move))
            history.append(board)
        by_discs = {64 - bin(b.white | b.black).count("1"): b for b in history}
        for wanted in plies:
            empties = 60 - wanted
            if empties in by_discs and by_discs[empties].legal_moves() and not by_discs[empties].legal_moves()[0].is_pass:
                found.append((f"game {game} ply {wanted}", by_discs[empties]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=float, default=60.0, help="the referee's seconds per move")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--plies", type=int, nargs="+", default=[14, 24, 34, 44])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    load_engine()
    budget = move_budget(args.time)
    print(f"budget {budget:.1f} s a move at {args.time:g} s; positions from {args.games} self-play games, seed {args.seed}")
    print("| position | settle: s | depth | move | stopped because | full: s | depth | move | settled move's cost |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    totals = {"settle": 0.0, "full": 0.0}
    same = count = 0
    started = time.perf_counter()
    for name, board in positions(args.games, args.plies, args.seed):
        settle = Engine(settle=True).think(board, seconds=budget)
        full_engine = Engine(settle=False)
        full = full_engine.think(board, seconds=budget)
        totals["settle"] += settle.seconds
        totals["full"] += full.seconds
        count += 1
        cost = ""
        if settle.square == full.square:
            same += 1
        elif settle.square is not None and full.square is not None and not full.exact:
            # both moves searched as deep as the full-budget side saw: what choosing the settled one lost
            def value(square: int) -> float:
                after = board.play(Move(board.to_move, square))
                return -Engine(settle=False).think(after, max_depth=max(1, full.depth - 1)).score

            cost = f"{value(full.square) - value(settle.square):+.2f}"
        print(f"| {name} | {settle.seconds:.1f} | {settle.depth} | {settle.move_name} | {settle.settled or '-'} | "
              f"{full.seconds:.1f} | {full.depth} | {full.move_name} | {cost or ('same move' if settle.square == full.square else '-')} |",
              flush=True)
    if count:
        print(f"\n{count} positions: settle {totals['settle'] / count:.1f} s a move, full budget "
              f"{totals['full'] / count:.1f} s a move (saved {100 * (1 - totals['settle'] / totals['full']):.0f} %); "
              f"same move {same} of {count}; {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
