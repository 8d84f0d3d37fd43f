"""The compiled evaluation of a position: the learned patterns, or seed 002's heuristics simplified.

Values are from the side to move, in centi-discs (:data:`SCALE` per disc).
An estimate always stays below :data:`WIN_BONUS`, what the search
(:mod:`.search`) adds to the disc difference of a finished game, so that a
sure win outranks any estimate.

The evaluation is chosen per engine by ``ev = (kind, weights, inst_squares,
inst_length, inst_offset)``: ``kind`` is :data:`EVAL_PATTERNS` (the learned
pattern evaluation, its features and weights from :mod:`.patterns`) or
:data:`EVAL_PAPER_SIMPLIFIED` (seed 002's six hand-tuned heuristics,
simplified: :func:`evaluate_paper_simplified`).  Everything here runs under
numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..players import PAPER_WEIGHTS
from .bitboard import ONE, U64, ZERO, first_square, legal_moves, popcount
from .compiled_cache import tolerate_read_only_cache, use_compiled_cache
from .patterns import STAGE_WIDTH

use_compiled_cache()  # before the first @njit (see compiled_cache.py)

SCALE = 100
WIN_BONUS = 10_000

EVAL_PATTERNS = 0
EVAL_PAPER_SIMPLIFIED = 1

CORNERS = U64(0x8100000000000081)
_NOT_A = U64(0xFEFEFEFEFEFEFEFE)
_NOT_H = U64(0x7F7F7F7F7F7F7F7F)
_COL_A = U64(0x0101010101010101)
_COL_H = U64(0x8080808080808080)
_ROW_1 = U64(0x00000000000000FF)
_ROW_8 = U64(0xFF00000000000000)

# Seed 002's static weighting matrix, from the readable seed player (symmetric,
# so its orientation does not matter).
PAPER_SQUARE_WEIGHTS = np.array(PAPER_WEIGHTS, dtype=np.int64).ravel()


@njit(cache=True, inline="always")
def neighbours(x: np.uint64) -> np.uint64:
    """Squares next to any square of ``x`` (8 directions)."""
    left = (x >> U64(1)) & _NOT_H
    right = (x << U64(1)) & _NOT_A
    row = x | left | right
    return (row | (row << U64(8)) | (row >> U64(8))) & ~x


@njit(cache=True)
def stable_discs(P: np.uint64, O: np.uint64) -> np.uint64:
    """Discs of ``P`` that can never be flipped (the usual sufficient test).

    A disc is taken as stable when, on each of the four lines through it, a
    neighbour on one side is the board's edge or a stable disc of its own
    colour.  This finds the discs anchored on corners and edges; it misses
    a few discs kept stable by full lines, which is safe for an evaluation.
    """
    stable = ZERO
    while True:
        horiz = ((stable << U64(1)) & _NOT_A) | ((stable >> U64(1)) & _NOT_H) | _COL_A | _COL_H
        vert = (stable << U64(8)) | (stable >> U64(8)) | _ROW_1 | _ROW_8
        diag9 = ((stable << U64(9)) & _NOT_A) | ((stable >> U64(9)) & _NOT_H) | _ROW_1 | _ROW_8 | _COL_A | _COL_H
        diag7 = ((stable << U64(7)) & _NOT_H) | ((stable >> U64(7)) & _NOT_A) | _ROW_1 | _ROW_8 | _COL_A | _COL_H
        grown = P & horiz & vert & diag9 & diag7
        if grown == stable:
            return stable
        stable = grown


@njit(cache=True, inline="always")
def _ratio(a: int, b: int) -> float:
    if a + b == 0:
        return 0.0
    return 100.0 * (a - b) / (a + b)


@njit(cache=True)
def evaluate_paper_simplified(P: np.uint64, O: np.uint64) -> int:
    """Seed 002's six heuristics, simplified for speed: not :func:`~othello_arena.agents.players.paper_evaluate`.

    Score + mobility + potential mobility + 2 static weighting + 8 stability
    + 8 corners, as the paper weighs them, with two simplifications: static
    weighting is the plain weighted disc sum (the seed player scales it to
    -100..100 by the occupied squares' weights), and stability counts only
    the discs anchored on edges and corners (:func:`stable_discs`; the seed
    player also counts discs on full lines).  Round 1 of training and the
    benchmarks' opponent use it; the seed players (``paper-*``) do not.
    """
    empty = ~(P | O)
    moves_p = legal_moves(P, O)
    moves_o = legal_moves(O, P)
    score = _ratio(popcount(P), popcount(O))
    mobility = _ratio(popcount(moves_p), popcount(moves_o))
    potential = _ratio(popcount(neighbours(O) & empty & ~moves_p), popcount(neighbours(P) & empty & ~moves_o))
    static = 0
    x = P
    while x:
        static += PAPER_SQUARE_WEIGHTS[first_square(x)]
        x &= x - ONE
    x = O
    while x:
        static -= PAPER_SQUARE_WEIGHTS[first_square(x)]
        x &= x - ONE
    stability = _ratio(popcount(stable_discs(P, O)), popcount(stable_discs(O, P)))
    own_corners = popcount(P & CORNERS) + popcount(moves_p & ~moves_o & CORNERS)
    opp_corners = popcount(O & CORNERS) + popcount(moves_o & ~moves_p & CORNERS)
    common = popcount(moves_p & moves_o & CORNERS)
    total_c = own_corners + opp_corners + common
    corners = 0.0 if total_c == 0 else 100.0 * (own_corners - common - opp_corners) / total_c
    value = score + mobility + potential + 2.0 * static + 8.0 * stability + 8.0 * corners
    return np.int64(value)


@njit(cache=True)
def pattern_indices(P, O, inst_sq, inst_len, inst_off, out) -> int:
    """Write the weight index of every feature of the position into ``out``.

    One index per pattern instance (its configuration read in base 3: 0
    empty, 1 side to move, 2 other side), then the scalar features (mobility
    of each side, potential mobility of each side, parity), each one-hot.
    Returns the stage (empties // STAGE_WIDTH).  Shared by the evaluation and
    the training, so both read positions the same way.
    """
    n_inst = inst_sq.shape[0]
    for i in range(n_inst):
        idx = 0
        for k in range(inst_len[i]):
            s = U64(inst_sq[i, k])
            idx = idx * 3 + np.int64((P >> s) & ONE) + 2 * np.int64((O >> s) & ONE)
        out[i] = inst_off[i] + idx
    empty = ~(P | O)
    mp = legal_moves(P, O)
    mo = legal_moves(O, P)
    base = inst_off[n_inst]
    out[n_inst] = base + min(popcount(mp), 31)
    out[n_inst + 1] = base + 32 + min(popcount(mo), 31)
    out[n_inst + 2] = base + 64 + min(popcount(neighbours(O) & empty), 31)
    out[n_inst + 3] = base + 96 + min(popcount(neighbours(P) & empty), 31)
    n_empty = popcount(empty)
    out[n_inst + 4] = base + 128 + (n_empty & 1)
    return n_empty


@njit(cache=True)
def evaluate_patterns(P, O, weights, inst_sq, inst_len, inst_off) -> int:
    """The learned evaluation, in centi-discs for the side to move."""
    return _evaluate_patterns(P, O, legal_moves(P, O), legal_moves(O, P), weights, inst_sq, inst_len, inst_off)


@njit(cache=True, inline="always")
def _evaluate_patterns(P, O, moves_p, moves_o, weights, inst_sq, inst_len, inst_off) -> int:
    """:func:`evaluate_patterns` given both sides' legal moves (the search's leaves have them already)."""
    n_empty = popcount(~(P | O))
    stage = n_empty // STAGE_WIDTH
    if stage >= weights.shape[0]:
        stage = weights.shape[0] - 1
    w = weights[stage]
    total = 0
    n_inst = inst_sq.shape[0]
    for i in range(n_inst):
        idx = 0
        for k in range(inst_len[i]):
            s = U64(inst_sq[i, k])
            idx = idx * 3 + np.int64((P >> s) & ONE) + 2 * np.int64((O >> s) & ONE)
        total += w[inst_off[i] + idx]
    empty = ~(P | O)
    base = inst_off[n_inst]
    total += w[base + min(popcount(moves_p), 31)]
    total += w[base + 32 + min(popcount(moves_o), 31)]
    total += w[base + 64 + min(popcount(neighbours(O) & empty), 31)]
    total += w[base + 96 + min(popcount(neighbours(P) & empty), 31)]
    total += w[base + 128 + (n_empty & 1)]
    return total


@njit(cache=True)
def evaluate(P, O, ev) -> int:
    """The evaluation chosen by ``ev[0]``, from the side to move, never a sure result."""
    return evaluate_given_moves(P, O, legal_moves(P, O), legal_moves(O, P), ev)


@njit(cache=True)
def evaluate_given_moves(P, O, moves_p, moves_o, ev) -> int:
    """:func:`evaluate` given the legal moves of the side to move (``moves_p``) and of the other (``moves_o``)."""
    kind, weights, inst_sq, inst_len, inst_off = ev
    if kind == EVAL_PAPER_SIMPLIFIED:
        return evaluate_paper_simplified(P, O)
    value = _evaluate_patterns(P, O, moves_p, moves_o, weights, inst_sq, inst_len, inst_off)
    # Keep estimates below the value of a sure win.
    limit = WIN_BONUS - 1
    if value > limit:
        return limit
    if value < -limit:
        return -limit
    return value


tolerate_read_only_cache(globals())
