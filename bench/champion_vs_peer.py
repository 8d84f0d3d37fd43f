"""The champion against a real peer engine speaking GTP, over balanced openings with colours swapped.

    python bench/champion_vs_peer.py --peer "/usr/games/gtp-rhino -l 4" --pairs 10 --time 2
    python bench/champion_vs_peer.py --peer "/usr/games/gtp-rhino -l 5" --pairs 10 --time 2

A thin adapter around the repository's GTP bridge (``agents/bridge.py``, what ``othello bridge gtp``
runs): the peer is told the opening's moves, then asked ``genmove`` on its turns; the champion is
``Engine.think`` with the budget its agent gives itself at ``--time`` seconds a move
(``agent.move_budget``).  Both run from this process, one after the other (no referee, no files):
this measures the players.

Openings: random legal moves (``--plies``, 8 by default) from the start, kept only when the champion,
searching 10 plies deep, sees neither side more than ``--balance`` discs ahead; each is played twice,
the champion once with each colour.  The score's 95 % interval is over the pairs of games (the two
games of an opening are not independent), by the normal approximation.
"""

from __future__ import annotations

import argparse
import math
import random
import shlex
import time

from othello_arena.agents.bridge import GTPBridge, GTPEngine
from othello_arena.agents.champion.agent import load_engine, move_budget
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import WHITE, Board, Move


def balanced_openings(count: int, plies: int, balance: float, seed: int) -> list[list[Move]]:
    """``count`` openings of ``plies`` random moves that the champion finds balanced."""
    rng = random.Random(seed)
    judge = Engine(settle=False)
    openings = []
    while len(openings) < count:
        board, moves = Board(), []
        for _ in range(plies):
            move = rng.choice(board.legal_moves())
            moves.append(move)
            board = board.play(move)
        if board.is_game_over():
            continue
        judge.clear()
        if abs(judge.think(board, max_depth=10, exact=False).score) <= balance:
            openings.append(moves)
    return openings


def play(opening: list[Move], champion_is_white: bool, peer: list[str], seconds: float) -> tuple[int, float]:
    """Final disc difference for the champion (the referee's count), and its slowest move."""
    engine = Engine()
    gtp = GTPEngine(peer)
    try:
        bridge = GTPBridge(gtp, time_per_move=seconds)
        board = Board()
        for move in opening:
            bridge.tell(move)
            board = board.play(move)
        bridge.known = board
        slowest = 0.0
        while not board.is_game_over():
            champion_to_move = (board.to_move is WHITE) == champion_is_white
            if champion_to_move:
                moves = board.legal_moves()
                if moves[0].is_pass:
                    move = moves[0]
                else:
                    result = engine.think(board, seconds=move_budget(seconds))
                    slowest = max(slowest, result.seconds)
                    move = result.move(board.to_move)
            else:
                move, _ = bridge(board, board.to_move, seconds)
            board = board.play(move)
    finally:
        gtp.close()
    me = WHITE if champion_is_white else WHITE.opponent
    return board.count(me) - board.count(me.opponent), slowest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", default="/usr/games/gtp-rhino -l 4", help="the GTP engine's command line")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--time", type=float, default=2.0, help="seconds per move")
    parser.add_argument("--plies", type=int, default=8)
    parser.add_argument("--balance", type=float, default=4.0, help="largest |score| of an opening, in discs")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    peer = shlex.split(args.peer)
    load_engine()
    started = time.perf_counter()
    pair_points = []
    wins = draws = losses = discs = 0
    slowest = 0.0
    for i, opening in enumerate(balanced_openings(args.pairs, args.plies, args.balance, args.seed)):
        points = 0.0
        for champion_is_white in (True, False):
            diff, slow = play(opening, champion_is_white, peer, args.time)
            slowest = max(slowest, slow)
            wins, draws, losses = wins + (diff > 0), draws + (diff == 0), losses + (diff < 0)
            points += 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
            discs += diff
            line = "".join(m.line() for m in opening)
            print(f"opening {i + 1} {line} champion {'White' if champion_is_white else 'Black'}: {diff:+d}", flush=True)
        pair_points.append(points / 2)
    n = len(pair_points)
    mean = sum(pair_points) / n
    sd = math.sqrt(sum((p - mean) ** 2 for p in pair_points) / max(1, n - 1))
    print(f"champion vs {args.peer}, {args.time:g} s a move: +{wins} ={draws} -{losses}, "
          f"score {100 * mean:.1f} % +- {100 * 1.96 * sd / math.sqrt(n):.1f} % (95 %, over {n} pairs), "
          f"discs {discs:+d}, slowest champion move {slowest:.2f} s, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
