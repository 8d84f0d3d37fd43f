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
from .patterns import PATTERNS, STAGE_WIDTH, square_number

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


# -- The pattern instances read fast ---------------------------------------------------------------
#
# Reading the 40 instances square by square (:func:`pattern_indices`, the training's reference)
# was most of the evaluation's cost.  Here each pattern's squares are gathered into one small
# integer with a few shifts (or, for a diagonal, one multiplication that collects one square per
# column in the top byte), and a table turns that integer into the pattern's base-3 index; the
# other three instances are the same code on the board turned a quarter at a time.  GATHERED
# says, for each pattern, which square each bit of the gathered integer holds (checked below
# against patterns.PATTERNS, so the two cannot drift apart).


def _names(text: str) -> list[int]:
    return [square_number(name) for name in text.split()]


GATHERED: dict[str, list[int]] = {
    "edge+2x": _names("A1 B1 C1 D1 E1 F1 G1 H1 B2 G2"),
    "corner3": _names("A1 B1 C1 A2 B2 C2 A3 B3 C3"),
    "row2": _names("A2 B2 C2 D2 E2 F2 G2 H2"),
    "row3": _names("A3 B3 C3 D3 E3 F3 G3 H3"),
    "row4": _names("A4 B4 C4 D4 E4 F4 G4 H4"),
    "diag8": _names("A1 B2 C3 D4 E5 F6 G7 H8"),
    "diag7": _names("A2 B3 C4 D5 E6 F7 G8"),
    "diag6": _names("A3 B4 C5 D6 E7 F8"),
    "diag5": _names("A4 B5 C6 D7 E8"),
    "diag4": _names("A5 B6 C7 D8"),
}


def _digit_table(name: str) -> np.ndarray:
    """``table[v]``: the base-3 index (the side to move's digits, 1s) of pattern ``name`` whose gathered bits are ``v``."""
    pattern, gathered = PATTERNS[name], GATHERED[name]
    if sorted(pattern) != sorted(gathered):
        raise ValueError(f"pattern {name!r}: evaluation.GATHERED reads other squares than patterns.PATTERNS")
    gathered_values = np.arange(1 << len(gathered), dtype=np.int64)
    table = np.zeros(1 << len(gathered), dtype=np.int64)
    for bit, sq in enumerate(gathered):
        table += ((gathered_values >> bit) & 1) * 3 ** (len(pattern) - 1 - pattern.index(sq))
    return table


if list(GATHERED) != list(PATTERNS):
    raise ValueError("evaluation.GATHERED must list the patterns of patterns.PATTERNS, in their order")
_EDGE, _CORNER, _LINE8, _LINE7, _LINE6, _LINE5, _LINE4 = (
    _digit_table(name) for name in ("edge+2x", "corner3", "row2", "diag7", "diag6", "diag5", "diag4"))
if not all(np.array_equal(_digit_table(name), _LINE8) for name in ("row3", "row4", "diag8")):
    raise ValueError("row3, row4 and diag8 share row2's table: evaluation.GATHERED must list each in column order")

_H01 = U64(0x0101010101010101)
_S56 = U64(56)
_DIAG8 = U64(0x8040201008040201)
_DIAG7 = U64(0x4020100804020100)
_DIAG6 = U64(0x2010080402010000)
_DIAG5 = U64(0x1008040201000000)
_DIAG4 = U64(0x0804020100000000)


@njit(cache=True, inline="always")
def _column_bits(x: np.uint64, mask: np.uint64) -> int:
    """The squares of ``mask`` (at most one a column) gathered in the order of their columns."""
    return np.int64(((x & mask) * _H01) >> _S56)


_T1 = U64(0x5500550055005500)
_T2 = U64(0x3333000033330000)
_T4 = U64(0x0F0F0F0F00000000)
_M1 = U64(0x5555555555555555)
_M2 = U64(0x3333333333333333)
_M4 = U64(0x0F0F0F0F0F0F0F0F)


@njit(cache=True, inline="always")
def transpose(x: np.uint64) -> np.uint64:
    """``x`` mirrored in the A1-H8 diagonal: the column and row of every square swapped."""
    t = _T4 & (x ^ (x << U64(28)))
    x ^= t ^ (t >> U64(28))
    t = _T2 & (x ^ (x << U64(14)))
    x ^= t ^ (t >> U64(14))
    t = _T1 & (x ^ (x << U64(7)))
    x ^= t ^ (t >> U64(7))
    return x


@njit(cache=True, inline="always")
def quarter_turn(x: np.uint64) -> np.uint64:
    """``x`` turned so that square ``s`` holds what :func:`.patterns.rotate` of ``s`` held (columns reversed, then transposed)."""
    x = ((x >> U64(1)) & _M1) | ((x & _M1) << U64(1))
    x = ((x >> U64(2)) & _M2) | ((x & _M2) << U64(2))
    x = ((x >> U64(4)) & _M4) | ((x & _M4) << U64(4))
    return transpose(x)


@njit(cache=True)
def quarter_turn_py(x: np.uint64) -> np.uint64:
    """:func:`quarter_turn` callable from Python (tests)."""
    return quarter_turn(x)


@njit(cache=True, inline="always")
def _index(table, p: int, o: int) -> int:
    return table[p] + 2 * table[o]


@njit(cache=True, inline="always")
def _patterns_on_a1(P, O, w, inst_off) -> int:
    """The weights of the ten patterns' instances on the A1 corner (the first of each pattern's four)."""
    total = w[inst_off[0] + _index(_EDGE, (P & U64(0xFF)) | ((P >> U64(1)) & U64(0x100)) | ((P >> U64(5)) & U64(0x200)),
                                   (O & U64(0xFF)) | ((O >> U64(1)) & U64(0x100)) | ((O >> U64(5)) & U64(0x200)))]
    total += w[inst_off[4] + _index(_CORNER, (P & U64(7)) | ((P >> U64(5)) & U64(0x38)) | ((P >> U64(10)) & U64(0x1C0)),
                                    (O & U64(7)) | ((O >> U64(5)) & U64(0x38)) | ((O >> U64(10)) & U64(0x1C0)))]
    total += w[inst_off[8] + _index(_LINE8, (P >> U64(8)) & U64(0xFF), (O >> U64(8)) & U64(0xFF))]
    total += w[inst_off[12] + _index(_LINE8, (P >> U64(16)) & U64(0xFF), (O >> U64(16)) & U64(0xFF))]
    total += w[inst_off[16] + _index(_LINE8, (P >> U64(24)) & U64(0xFF), (O >> U64(24)) & U64(0xFF))]
    total += w[inst_off[20] + _index(_LINE8, _column_bits(P, _DIAG8), _column_bits(O, _DIAG8))]
    total += w[inst_off[24] + _index(_LINE7, _column_bits(P, _DIAG7), _column_bits(O, _DIAG7))]
    total += w[inst_off[28] + _index(_LINE6, _column_bits(P, _DIAG6), _column_bits(O, _DIAG6))]
    total += w[inst_off[32] + _index(_LINE5, _column_bits(P, _DIAG5), _column_bits(O, _DIAG5))]
    total += w[inst_off[36] + _index(_LINE4, _column_bits(P, _DIAG4), _column_bits(O, _DIAG4))]
    return total


@njit(cache=True)
def evaluate_patterns(P, O, weights, inst_sq, inst_len, inst_off) -> int:
    """The learned evaluation, in centi-discs for the side to move."""
    return _evaluate_patterns(P, O, legal_moves(P, O), legal_moves(O, P), weights, inst_sq, inst_len, inst_off)


@njit(cache=True, inline="always")
def _evaluate_patterns(P, O, moves_p, moves_o, weights, inst_sq, inst_len, inst_off) -> int:
    """:func:`evaluate_patterns` given both sides' legal moves (the search's leaves have them already).

    The sum of the weights of :func:`pattern_indices`' features (a test checks it on random
    positions and weights), the instances read as GATHERED says rather than square by square:
    each pattern's four instances are its first one on the board turned 0-3 quarters
    (``inst_sq`` and ``inst_len``, the instances' squares, are the training's: read here only
    through GATHERED, which is checked against them).
    """
    n_empty = popcount(~(P | O))
    stage = n_empty // STAGE_WIDTH
    if stage >= weights.shape[0]:
        stage = weights.shape[0] - 1
    w = weights[stage]
    empty = ~(P | O)
    base = inst_off[inst_sq.shape[0]]
    total = w[base + min(popcount(moves_p), 31)]
    total += w[base + 32 + min(popcount(moves_o), 31)]
    total += w[base + 64 + min(popcount(neighbours(O) & empty), 31)]
    total += w[base + 96 + min(popcount(neighbours(P) & empty), 31)]
    total += w[base + 128 + (n_empty & 1)]
    total += _patterns_on_a1(P, O, w, inst_off)
    P, O = quarter_turn(P), quarter_turn(O)
    total += _patterns_on_a1(P, O, w, inst_off)
    P, O = quarter_turn(P), quarter_turn(O)
    total += _patterns_on_a1(P, O, w, inst_off)
    P, O = quarter_turn(P), quarter_turn(O)
    total += _patterns_on_a1(P, O, w, inst_off)
    return total


@njit(cache=True)
def evaluate(P, O, ev) -> int:
    """The evaluation chosen by ``ev[0]``, from the side to move, never a sure result."""
    return evaluate_given_moves(P, O, legal_moves(P, O), legal_moves(O, P), ev)


@njit(cache=True, inline="always")
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
