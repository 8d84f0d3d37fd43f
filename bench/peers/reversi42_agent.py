"""reversi42 (PyPI, pure Python) as a file-protocol agent, for benchmarks only (not shipped).

    othello match champion "openings:r42=python bench/peers/reversi42_agent.py {name}" \
        --games 20 --openings balanced --time 2 --seed 1 -j 1 --out DIR

Plays reversi42's strongest player, Apocalyptron (alpha-beta with null-move, futility,
late-move and multi-cut pruning, aspiration windows, killer and history ordering, a
transposition table, its opening book), on one core: its parallel search is turned off, as
the champion uses one core too.  Temperature 0: the same move in the same position.

Apocalyptron has no clock of its own (it searches to a fixed depth, 7-12 in its menu), so
this adapter deepens it one ply at a time, up to ``--depth``, while the next iteration is
expected to end within ``--share`` of the move's time; ``--share 0`` searches ``--depth``
deep on every move instead (the weaker rungs of a ladder).  ``--measure SECONDS`` plays a
self-play game and prints the time and depth of its moves.

The peer keeps its own game: the moves of the opening and of the opponent (found as the new
disc since our last look, or a pass when there is none) are replayed on it, so its opening
book sees the real history.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from othello_arena.agents.runtime import run_agent
from othello_arena.protocol import WHITE, Board, Colour, Move

# reversi42 prints banners and search reports on stdout; the agent's stdout is not the protocol,
# but keep it quiet all the same (its log is NAME.stderr.log).
with contextlib.redirect_stdout(sys.stderr):
    from Players.PlayerApocalyptron import PlayerApocalyptron
    from AI.Apocalyptron import ApocalyptronConfigBuilder
    from Reversi.Game import Game
    from Reversi.Game import Move as PeerMove

# Our White moves first from D5/E4, as standard Othello's Black does from the same squares:
# the squares are the same (A1 = 0, column + 8 * row), the colour names swap.
def peer_colour(colour: Colour) -> str:
    return "B" if colour is WHITE else "W"


def peer_move(sq: int) -> PeerMove:
    return PeerMove(sq % 8 + 1, sq // 8 + 1)


def occupied(board: Board) -> int:
    return board.white | board.black


class Reversi42Strategy:
    """``(board, colour, time_left) -> move`` backed by reversi42's Apocalyptron."""

    def __init__(self, max_depth: int, share: float) -> None:
        self.max_depth = max_depth
        self.share = share
        self.depths: list[int] = []  # the depth of each move's search
        builder = (ApocalyptronConfigBuilder().with_depth(max_depth).enable_iterative_deepening()
                   .enable_all_optimizations().enable_parallel(False).with_temperature(0.0).quiet_mode())
        with contextlib.redirect_stdout(sys.stderr):
            self.player = PlayerApocalyptron(depth=max_depth, show_book_options=False, config_builder=builder)
        self.game = Game(8)
        self.seen = Board()  # the position the peer's game stands at

    def opening(self, moves: list[Move]) -> None:
        for move in moves:
            self._replay(move)
            self.seen = self.seen.play(move)

    def _replay(self, move: Move) -> None:
        if self.game.turn != peer_colour(move.colour):
            raise RuntimeError(f"out of step: {move.line()} with {self.game.turn} to move in the peer's game")
        if move:
            self.game.move(peer_move(move.square))
        else:
            self.game.pass_turn()

    def _catch_up(self, board: Board) -> None:
        """Replay the opponent's move (or pass) that leads from ``self.seen`` to ``board``."""
        if board == self.seen:
            return
        new = occupied(board) & ~occupied(self.seen)
        colour = self.seen.to_move
        move = Move(colour, new.bit_length() - 1) if new else Move.pass_(colour)
        self._replay(move)
        self.seen = self.seen.play(move)
        if self.seen != board:
            raise RuntimeError("out of step with the referee's position")

    def __call__(self, board: Board, colour: Colour, time_left: float) -> Move:
        self._catch_up(board)
        if not board.has_move():
            move = Move.pass_(colour)
        else:
            move = Move(colour, self._search(time_left))
        self._replay(move)
        self.seen = board.play(move)
        return move

    def _search(self, time_left: float) -> int:
        """Deepen one ply at a time up to ``max_depth`` while the next iteration should fit in the budget.

        reversi42 7.0.13 keeps the depth its last search reached and, asked again for that
        depth or less, answers with that search's move: that lets each call go one ply deeper
        on the same position, but the memory must be cleared before a new position (else it
        answers with the old position's move, illegal here, and falls back to its first legal
        move).  Its search cannot be stopped, so the next iteration's time is guessed from the
        growth of the last two.
        """
        started = time.perf_counter()
        budget = self.share * time_left
        search = self.player.bitboard_engine.search_strategy.search
        search.max_depth_reached = 0
        last = previous = 0.0
        first = self.max_depth if self.share <= 0 else 1
        for depth in range(first, self.max_depth + 1):
            self.player.deep = depth
            before = time.perf_counter()
            with contextlib.redirect_stdout(sys.stderr):
                answer = self.player.get_move(self.game, self.game.get_move_list())
            previous, last = last, time.perf_counter() - before
            growth = min(max(last / previous, 3.0), 8.0) if previous > 0.001 else 4.0
            if time.perf_counter() - started + last * growth > budget:
                break
        self.depths.append(depth)
        return (answer.y - 1) * 8 + answer.x - 1


def measure(max_depth: int, share: float, seconds: float, plies: int) -> None:
    """Time and depth per move over a self-play game (to check the settings fit the clock)."""
    strategy = Reversi42Strategy(max_depth, share)
    board, slowest, total, n = Board(), 0.0, 0.0, 0
    while not board.is_game_over() and n < plies:
        started = time.perf_counter()
        move = strategy(board, board.to_move, seconds)
        spent = time.perf_counter() - started
        slowest, total, n = max(slowest, spent), total + spent, n + 1
        board = board.play(move)
    print(f"--depth {max_depth} --share {share} at {seconds} s a move: {n} moves, mean {total / n:.2f} s, "
          f"slowest {slowest:.2f} s, depths {strategy.depths}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", nargs="?")
    parser.add_argument("--depth", type=int, default=12,
                        help="deepest search (default 12, the deepest level reversi42 offers)")
    parser.add_argument("--share", type=float, default=0.25,
                        help="share of the move's time to plan for (default 0.25: the search cannot be stopped, so it plans well within the clock); 0: always search --depth deep")
    parser.add_argument("--measure", type=float, metavar="SECONDS",
                        help="play a self-play game at SECONDS a move and print the time and depth of the moves")
    parser.add_argument("--plies", type=int, default=60)
    args = parser.parse_args()
    if args.measure:
        measure(args.depth, args.share, args.measure, args.plies)
        return 0
    if not args.name:
        parser.error("the agent's name is needed")
    return run_agent(Reversi42Strategy(args.depth, args.share), args.name)


if __name__ == "__main__":
    raise SystemExit(main())
