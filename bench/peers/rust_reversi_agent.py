"""rust-reversi (PyPI, Rust with Python bindings) as a file-protocol agent, for benchmarks only.

    othello match champion "openings:rr=python bench/peers/rust_reversi_agent.py {name} --player alphabeta" \
        --games 20 --openings balanced --time 2 --seed 1 -j 1 --out DIR

``--player`` picks one of the library's searches, strongest first (a ladder):

``alphabeta``
    ``AlphaBetaSearch`` with ``MatrixEvaluator`` (the classic weighted-square table below),
    iterative deepening until its time is up (``get_move_with_timeout``);
``mcts``
    ``MctsSearch`` (c = 1, expand threshold 10: the library's suggested values) until its time is up;
``piece``
    ``AlphaBetaSearch`` with ``PieceEvaluator`` (disc count) at depth 3, the README's example player.

Its time is ``--share`` (0.8, what the champion gives itself) of the seconds the referee leaves
for the move.  The library takes a position as it stands (``set_board``): nothing to replay.
"""

from __future__ import annotations

import argparse

import rust_reversi as rr

from othello_arena.agents.runtime import run_agent
from othello_arena.protocol import WHITE, Board, Colour, Move

# The classic weighted-square table (corners good, X- and C-squares bad), rows 1-8.
SQUARE_WEIGHTS = [
    [100, -20, 10, 5, 5, 10, -20, 100],
    [-20, -50, -2, -2, -2, -2, -50, -20],
    [10, -2, -1, -1, -1, -1, -2, 10],
    [5, -2, -1, -1, -1, -1, -2, 5],
    [5, -2, -1, -1, -1, -1, -2, 5],
    [10, -2, -1, -1, -1, -1, -2, 10],
    [-20, -50, -2, -2, -2, -2, -50, -20],
    [100, -20, 10, 5, 5, 10, -20, 100],
]
WIN_SCORE = 1 << 12  # above any table score: a won game outranks every estimate


def mirror_bits(bits: int) -> int:
    return int(f"{bits:064b}"[::-1], 2)


def make_search(player: str):
    if player == "alphabeta":
        return rr.AlphaBetaSearch(rr.MatrixEvaluator(SQUARE_WEIGHTS), 60, WIN_SCORE), True
    if player == "mcts":
        return rr.MctsSearch(1_000_000, 1.0, 10), True
    if player == "piece":
        return rr.AlphaBetaSearch(rr.PieceEvaluator(), 3, WIN_SCORE), False
    raise ValueError(f"unknown player {player!r}")


class RustReversiStrategy:
    """``(board, colour, time_left) -> move`` backed by one of rust-reversi's searches."""

    def __init__(self, player: str, share: float) -> None:
        self.search, self.timed = make_search(player)
        self.share = share

    def __call__(self, board: Board, colour: Colour, time_left: float) -> Move:
        if not board.has_move():
            return Move.pass_(colour)
        # Our White moves first from D5/E4 like standard Black: colour names swapped.  The
        # library numbers its moves as we do (A1 = 0, column + 8 * row) but its bitboards
        # the other way round (A1 is the highest bit).
        peer = rr.Board()
        peer.set_board(mirror_bits(board.own), mirror_bits(board.opp), rr.Turn.BLACK if colour is WHITE else rr.Turn.WHITE)
        if self.timed:
            sq = self.search.get_move_with_timeout(peer, max(1, int(self.share * time_left * 1000)))
        else:
            sq = self.search.get_move(peer)
        return Move(colour, sq)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name")
    parser.add_argument("--player", choices=["alphabeta", "mcts", "piece"], default="alphabeta")
    parser.add_argument("--share", type=float, default=0.8, help="share of the move's time to search (default 0.8)")
    args = parser.parse_args()
    return run_agent(RustReversiStrategy(args.player, args.share), args.name)


if __name__ == "__main__":
    raise SystemExit(main())
