"""The players of the seeds, in the style of PAIP's Othello: small functions and strategy factories.

Read top to bottom: evaluation functions, the one-move strategies (random,
beginner, the maximizers), minimax and alpha-beta search, then the player of
the heuristics paper (seed 002).  The rules come from the rules core; nothing
here knows how a disc flips.

A strategy is ``(board, colour, time_left) -> move`` (see :mod:`.runtime`).
PAIP's evaluation functions are ``evaluate(player, board)``; ours are
``evaluate(board, colour)``: the value of ``board`` for ``colour``, higher is
better.  Seeds 000/001 put Black first; in our orientation White moves first,
which changes nothing below: every function works for the side it is given.

Seed 002's program plays on boards of 8x8 to 14x14, and so do its players
here (and random, beginner, greedy): their heuristics take the board's
:class:`~othello_arena.protocol.rules.Geometry` (shifts, masks, corners),
and the static weights come from :func:`paper_weights`.  PAIP's square
weights are an 8x8 table: weighted, minimax and alphabeta play 8x8 only.
"""

from __future__ import annotations

import functools
import random as _random
import time
from typing import Callable, Optional

from ..protocol import Board, Colour, Move
from ..protocol.rules import Geometry, geometry, popcount, shift, square
from .runtime import Strategy

Evaluate = Callable[[Board, Colour], float]
MoveStrategy = Callable[[Board, Colour, float], Move]  # a Strategy that never adds comments


def _strategy_name(strategy: MoveStrategy, name: str) -> MoveStrategy:
    strategy.__name__ = strategy.__qualname__ = name
    return strategy


# ---------------------------------------------------------------------------
# Evaluation functions (seeds 000/001)
# ---------------------------------------------------------------------------


def score(board: Board, colour: Colour) -> int:
    """PAIP's ``score``: ``colour``'s discs minus the opponent's."""
    return board.count(colour) - board.count(colour.opponent)


# PAIP's SQUARE_WEIGHTS without the border, row 1 first.  The table is
# symmetric, so it reads the same in our orientation (rows bottom to top).
SQUARE_WEIGHTS = [
    [120, -20, 20, 5, 5, 20, -20, 120],
    [-20, -40, -5, -5, -5, -5, -40, -20],
    [20, -5, 15, 3, 3, 15, -5, 20],
    [5, -5, 3, 3, 3, 3, -5, 5],
    [5, -5, 3, 3, 3, 3, -5, 5],
    [20, -5, 15, 3, 3, 15, -5, 20],
    [-20, -40, -5, -5, -5, -5, -40, -20],
    [120, -20, 20, 5, 5, 20, -20, 120],
]


def weight_masks(table: list[list[int]]) -> list[tuple[int, int]]:
    """Group the squares of a weight table by weight: ``[(weight, bitboard), ...]``.

    Summing ``weight * popcount(discs & mask)`` over a handful of masks is
    much faster in Python than visiting 64 squares.
    """
    masks: dict[int, int] = {}
    size = len(table)
    for row in range(size):
        for col in range(size):
            weight = table[row][col]
            masks[weight] = masks.get(weight, 0) | (1 << square(col, row + 1, size))
    return sorted(masks.items())


SQUARE_WEIGHT_MASKS = weight_masks(SQUARE_WEIGHTS)


def weighted_sum(discs: int, masks: list[tuple[int, int]]) -> int:
    """Sum of the weights of the squares in ``discs``."""
    return sum(weight * popcount(discs & mask) for weight, mask in masks)


def weighted_score(board: Board, colour: Colour) -> int:
    """PAIP's ``weighted_score``: weights of ``colour``'s squares minus the opponent's."""
    return (weighted_sum(board.discs(colour), SQUARE_WEIGHT_MASKS)
            - weighted_sum(board.discs(colour.opponent), SQUARE_WEIGHT_MASKS))


# ---------------------------------------------------------------------------
# One-move strategies
# ---------------------------------------------------------------------------


def random_strategy(seed: Optional[int] = None) -> Strategy:
    """PAIP's ``random_strategy``: any legal move, uniformly at random."""
    rng = _random.Random(seed)

    def strategy(board: Board, colour: Colour, time_left: float) -> Move:
        return rng.choice(board.legal_moves())

    return _strategy_name(strategy, "random")


def beginner_strategy() -> Strategy:
    """Seed 004's approach: the first legal move found scanning the board.

    The seed keeps its board as ``board[column][row]`` and loops over
    columns, then rows, so the scan goes A1, A2, ... A8, B1, ... H8.
    """

    def strategy(board: Board, colour: Colour, time_left: float) -> Move:
        legal = board.legal_squares()
        n = board.size
        for col in range(n):
            for row in range(1, n + 1):
                sq = square(col, row, n)
                if legal & (1 << sq):
                    return Move(colour, sq, n)
        return Move.pass_(colour, n)

    return _strategy_name(strategy, "beginner")


def maximizer(evaluate: Evaluate) -> Strategy:
    """PAIP's ``maximizer``: the move whose resulting board is best by ``evaluate``.

    Ties go to the first such move in square order.
    """

    def strategy(board: Board, colour: Colour, time_left: float) -> Move:
        def score_move(move: Move) -> float:
            return evaluate(board.play_unchecked(move), colour)

        return max(board.legal_moves(), key=score_move)

    return _strategy_name(strategy, f"maximizer({evaluate.__name__})")


# ---------------------------------------------------------------------------
# Minimax and alpha-beta search (seeds 000/001)
# ---------------------------------------------------------------------------

# A won (lost) game is worth more (less) than any evaluation.  PAIP uses the
# sum of the absolute square weights; we need a bound that also covers the
# paper's evaluation (at most 2100), so we take a larger one.
MAX_VALUE = 1_000_000
MIN_VALUE = -MAX_VALUE


def final_value(board: Board, colour: Colour) -> int:
    """PAIP's ``final_value``: the game is over; a win is MAX_VALUE, a loss MIN_VALUE."""
    diff = score(board, colour)
    if diff < 0:
        return MIN_VALUE
    if diff > 0:
        return MAX_VALUE
    return 0


class OutOfTime(Exception):
    """Raised inside a search when its deadline has passed."""


class Clock:
    """A deadline checked at every node of a search (``None``: no limit)."""

    def __init__(self, deadline: Optional[float] = None) -> None:
        self.deadline = deadline

    def check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime


NO_LIMIT = Clock()


def minimax(board: Board, depth: int, evaluate: Evaluate, clock: Clock = NO_LIMIT) -> tuple[float, Optional[Move]]:
    """PAIP's ``minimax`` for the side to move: ``(value, best move)``, ``depth`` plies deep.

    The value of a position is minus its value for the opponent.  A pass is
    a move like any other (the rules core offers it only when forced); a
    finished game is scored by :func:`final_value`.
    """
    clock.check()
    player = board.to_move
    if depth == 0:
        return evaluate(board, player), None
    moves = board.legal_moves()
    if not moves:
        return final_value(board, player), None

    def value(after: Board) -> float:
        return -minimax(after, depth - 1, evaluate, clock)[0]

    best_value: float = MIN_VALUE - 1
    best_move: Optional[Move] = None
    for move in moves:
        val = value(board.play_unchecked(move))
        if val > best_value:  # ties keep the first move, as alphabeta does
            best_value, best_move = val, move
    return best_value, best_move


def alphabeta(board: Board, alpha: float, beta: float, depth: int, evaluate: Evaluate,
              clock: Clock = NO_LIMIT) -> tuple[float, Optional[Move]]:
    """PAIP's ``alphabeta``: minimax that prunes what the opponent would never allow.

    ``alpha`` is the best value the side to move is already sure of,
    ``beta`` the value the opponent can hold it under; once
    ``alpha >= beta`` the remaining moves cannot matter.
    """
    clock.check()
    player = board.to_move
    if depth == 0:
        return evaluate(board, player), None
    moves = board.legal_moves()
    if not moves:
        return final_value(board, player), None

    def value(after: Board, alpha: float, beta: float) -> float:
        # The opponent's window is ours negated and swapped.
        return -alphabeta(after, -beta, -alpha, depth - 1, evaluate, clock)[0]

    best_move = moves[0]
    for move in moves:
        if alpha >= beta:
            break
        val = value(board.play_unchecked(move), alpha, beta)
        if val > alpha:
            alpha, best_move = val, move
    return alpha, best_move


SAFETY = 0.6  # a searcher stops at this fraction of its time left (the rest is for files and the machine's load)

Search = Callable[[Board, int, Evaluate, Clock], tuple[float, Optional[Move]]]


def deepening(search: Search, depth: int, evaluate: Evaluate) -> MoveStrategy:
    """Run ``search`` at depth 1, 2, ... ``depth``, keeping the deepest finished answer.

    With time to spare this returns exactly the fixed-depth answer; when the
    clock runs short (a loaded machine, a short time limit) the agent still
    answers in time, with the best move of the last finished depth.
    """

    def strategy(board: Board, colour: Colour, time_left: float) -> Move:
        clock = Clock(time.monotonic() + SAFETY * time_left)
        moves = board.legal_moves()
        best = moves[0]
        if len(moves) == 1:
            return best
        for d in range(1, depth + 1):
            try:
                _, move = search(board, d, evaluate, clock)
            except OutOfTime:
                break
            if move is not None:
                best = move
        return best

    return strategy


def minimax_searcher(depth: int, evaluate: Evaluate) -> MoveStrategy:
    """PAIP's ``minimax_searcher``: a strategy searching ``depth`` plies with minimax."""
    strategy = deepening(lambda b, d, ev, clock: minimax(b, d, ev, clock), depth, evaluate)
    return _strategy_name(strategy, f"minimax_searcher({depth}, {evaluate.__name__})")


def alphabeta_searcher(depth: int, evaluate: Evaluate) -> MoveStrategy:
    """PAIP's ``alphabeta_searcher``: a strategy searching ``depth`` plies with alpha-beta."""
    strategy = deepening(lambda b, d, ev, clock: alphabeta(b, MIN_VALUE, MAX_VALUE, d, ev, clock), depth, evaluate)
    return _strategy_name(strategy, f"alphabeta_searcher({depth}, {evaluate.__name__})")


# ---------------------------------------------------------------------------
# The heuristics paper (seed 002): six heuristics, each scaled to -100..100
# ---------------------------------------------------------------------------
# Each heuristic is written for "Max", the player the computer plays, against
# "Min", its opponent.


def ratio(mine: float, theirs: float) -> float:
    """The paper's scaling: ``100 * (mine - theirs) / (mine + theirs)``, 0 when both are 0."""
    total = mine + theirs
    return 100.0 * (mine - theirs) / total if total else 0.0


def score_heuristic(board: Board, me: Colour) -> float:
    """1) Score: the disc counts."""
    return ratio(board.count(me), board.count(me.opponent))


def mobility_heuristic(board: Board, me: Colour) -> float:
    """2) Mobility: the number of legal moves of each side."""
    return ratio(popcount(board.legal_squares(me)), popcount(board.legal_squares(me.opponent)))


def neighbours(bitboard: int, shape: Geometry = geometry(8)) -> int:
    """Squares next to (in any of the eight directions) a square of ``bitboard`` (on a board of ``shape``)."""
    around = 0
    for amount, mask in shape.directions:
        around |= shift(bitboard, amount, mask)
    return around


def potential_mobility(board: Board, colour: Colour) -> int:
    """Empty squares beside at least one opponent disc that are not legal moves now."""
    around = neighbours(board.discs(colour.opponent), board.geometry)
    return popcount(around & board.empty & ~board.legal_squares(colour))


def potential_mobility_heuristic(board: Board, me: Colour) -> float:
    """3) Potential mobility: mobility in the near future."""
    return ratio(potential_mobility(board, me), potential_mobility(board, me.opponent))


@functools.cache
def corners(size: int) -> int:
    """The four corners of a ``size`` x ``size`` board, as a bitboard."""
    last = size - 1
    return sum(1 << square(col, row, size) for col in (0, last) for row in (1, size))


CORNERS = corners(8)


def corners_heuristic(board: Board, me: Colour) -> float:
    """4) Corners captured: held corners plus corners only one side could take next.

    Corners both sides could take ("common") count against Max: the next
    move is the opponent's.
    """
    four = corners(board.size)
    mine_legal = board.legal_squares(me) & four
    theirs_legal = board.legal_squares(me.opponent) & four
    common = popcount(mine_legal & theirs_legal)
    mine = popcount(board.discs(me) & four) + popcount(mine_legal & ~theirs_legal)
    theirs = popcount(board.discs(me.opponent) & four) + popcount(theirs_legal & ~mine_legal)
    total = mine + common + theirs
    return 100.0 * (mine - common - theirs) / total if total else 0.0


Direction = tuple[int, int]


def axes(shape: Geometry) -> list[tuple[Direction, Direction]]:
    """The four lines through a square, each as its two opposite directions."""
    d = shape.directions
    return [(d[0], d[1]), (d[2], d[3]), (d[4], d[7]), (d[5], d[6])]


AXES = axes(geometry(8))


def _has_neighbour(direction: Direction, opposite: Direction, shape: Geometry = geometry(8)) -> int:
    """Squares that have a neighbour on the board in ``direction``."""
    return shift(shape.full, *opposite)


def filled_lines(occupied: int, shape: Geometry = geometry(8)) -> list[int]:
    """For each axis, the squares whose whole line along it is occupied.

    No disc can ever be placed on such a line, so nothing on it flips along it.
    """
    result = []
    for forward, backward in axes(shape):
        full_both = shape.full
        for direction, opposite in ((forward, backward), (backward, forward)):
            # run: occupied squares from which every square onwards in `direction` is occupied
            run = occupied & ~_has_neighbour(direction, opposite, shape)
            for _ in range(shape.size - 1):
                run |= occupied & shift(run, *opposite)
            full_both &= run
        result.append(full_both)
    return result


def stable_discs(board: Board, colour: Colour, lines: Optional[list[int]] = None) -> int:
    """Discs of ``colour`` that can never be flipped.

    A disc is stable when, along each of the four lines through it, it sits
    at the board's edge, or next to a stable disc of its colour, or the line
    is full.  Starting from nothing, stable discs are added until none can
    be (the corners come first, then what leans on them).
    """
    discs = board.discs(colour)
    shape = board.geometry
    if lines is None:
        lines = filled_lines(board.white | board.black, shape)
    safe_by_axis = []
    board_axes = axes(shape)
    for (forward, backward), full in zip(board_axes, lines):
        edge = ~_has_neighbour(forward, backward, shape) | ~_has_neighbour(backward, forward, shape)
        safe_by_axis.append((edge | full) & shape.full)
    stable = 0
    while True:
        candidate = discs & ~stable
        for (forward, backward), safe in zip(board_axes, safe_by_axis):
            leaning = shift(stable, *backward) | shift(stable, *forward)
            candidate &= safe | leaning
        if not candidate:
            return stable
        stable |= candidate


def stability_heuristic(board: Board, me: Colour) -> float:
    """5) Stability: discs the opponent can never flip."""
    lines = filled_lines(board.white | board.black, board.geometry)
    return ratio(popcount(stable_discs(board, me, lines)), popcount(stable_discs(board, me.opponent, lines)))


# The paper's static weight matrix (symmetric, so orientation does not matter).
PAPER_WEIGHTS = [
    [4, -3, 2, 2, 2, 2, -3, 4],
    [-3, -4, -1, -1, -1, -1, -4, -3],
    [2, -1, 1, 0, 0, 1, -1, 2],
    [2, -1, 0, 1, 1, 0, -1, 2],
    [2, -1, 0, 1, 1, 0, -1, 2],
    [2, -1, 1, 0, 0, 1, -1, 2],
    [-3, -4, -1, -1, -1, -1, -4, -3],
    [4, -3, 2, 2, 2, 2, -3, 4],
]


def paper_weights(size: int) -> list[list[int]]:
    """The paper's static weights for a ``size`` x ``size`` board (:data:`PAPER_WEIGHTS` for 8).

    The paper gives the 8x8 matrix and says it has "similar matrices for
    larger boards" without printing them.  Ours follow the 8x8 one by each
    square's distance to the nearest edge in its row and column: corner 4,
    the squares beside it on the edge (C) -3, diagonally inside it (X) -4,
    the rest of the edge 2, the rest of the second ring -1, and inside that
    1 on the diagonals (where both distances are equal) and 0 elsewhere.
    For 8 this is exactly the paper's matrix.
    """
    table = []
    for row in range(size):
        line = []
        for col in range(size):
            near, far = sorted((min(row, size - 1 - row), min(col, size - 1 - col)))
            if near == 0:
                weight = 4 if far == 0 else -3 if far == 1 else 2
            elif near == 1:
                weight = -4 if far == 1 else -1
            else:
                weight = 1 if near == far else 0
            line.append(weight)
        table.append(line)
    return table


@functools.cache
def paper_weight_masks(size: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """:func:`weight_masks` of the paper's weights and of their absolute values, for a board size."""
    table = paper_weights(size)
    return weight_masks(table), weight_masks([[abs(w) for w in row] for row in table])


PAPER_WEIGHT_MASKS, PAPER_ABS_WEIGHT_MASKS = paper_weight_masks(8)


def static_weight_heuristic(board: Board, me: Colour) -> float:
    """6) Static weighting: Max's square weights minus Min's.

    The paper scales every heuristic to -100..100 but gives no formula for
    this one; we divide by the total absolute weight of the occupied squares.
    """
    weights, absolute = paper_weight_masks(board.size)
    difference = (weighted_sum(board.discs(me), weights)
                  - weighted_sum(board.discs(me.opponent), weights))
    total = weighted_sum(board.white | board.black, absolute)
    return 100.0 * difference / total if total else 0.0


# The paper's linear combination: score, mobility and potential mobility
# weigh 1, static weighting 2, stability and corners 8.
PAPER_HEURISTICS: list[tuple[float, Evaluate]] = [
    (1, score_heuristic),
    (1, mobility_heuristic),
    (1, potential_mobility_heuristic),
    (2, static_weight_heuristic),
    (8, stability_heuristic),
    (8, corners_heuristic),
]


def paper_evaluate(board: Board, me: Colour) -> float:
    """The paper's heuristic value of ``board`` for ``me`` (at most 2100 in size)."""
    return sum(weight * heuristic(board, me) for weight, heuristic in PAPER_HEURISTICS)


def paper_searcher(depth: int) -> MoveStrategy:
    """The paper's computer player: alpha-beta ``depth`` plies deep over :func:`paper_evaluate`.

    The paper evaluates every leaf from the computer's side (its corners
    heuristic is not symmetric), so the leaf value for the opponent is
    minus the value for us rather than the opponent's own evaluation.
    """

    def strategy(board: Board, colour: Colour, time_left: float) -> Move:
        def evaluate(leaf: Board, player: Colour) -> float:
            value = paper_evaluate(leaf, colour)
            return value if player is colour else -value

        evaluate.__name__ = "paper_evaluate"
        return alphabeta_searcher(depth, evaluate)(board, colour, time_left)

    return _strategy_name(strategy, f"paper_searcher({depth})")


# ---------------------------------------------------------------------------
# The built-in players, by name (see registry.py)
# ---------------------------------------------------------------------------

MINIMAX_DEPTH = 3
ALPHABETA_DEPTH = 4


def greedy() -> Strategy:
    """Maximise discs now: ``maximizer(score)``."""
    return maximizer(score)


def weighted() -> Strategy:
    """Maximise PAIP's square weights now: ``maximizer(weighted_score)``."""
    return maximizer(weighted_score)


def minimax_player() -> Strategy:
    """``minimax_searcher(3, weighted_score)``."""
    return minimax_searcher(MINIMAX_DEPTH, weighted_score)


def alphabeta_player() -> Strategy:
    """``alphabeta_searcher(4, weighted_score)``."""
    return alphabeta_searcher(ALPHABETA_DEPTH, weighted_score)


def paper_easy() -> Strategy:
    """Seed 002's easy player: depth 1."""
    return paper_searcher(1)


def paper_normal() -> Strategy:
    """Seed 002's normal player: depth 2."""
    return paper_searcher(2)


def paper_hard() -> Strategy:
    """Seed 002's hard player: depth 3."""
    return paper_searcher(3)

