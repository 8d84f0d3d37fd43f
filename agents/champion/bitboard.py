"""Compiled bitboard primitives: move generation, flips, perft.

The same rules as :mod:`othello_arena.protocol.rules` (one implementation of
the rules for people to read), written again here for speed only: every
function is compiled by numba over ``np.uint64`` bitboards, and the tests
check them against the rules core square for square.

Conventions: ``P`` is the bitboard of the side to move ("player"), ``O`` of
the other side; squares as in the rules core (A1 = 0 ... H8 = 63).

numba pitfall worth knowing: mixing ``int64`` and ``uint64`` in one
expression yields ``float64``, so every constant and shift amount below is an
``np.uint64``.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from .compiled_cache import tolerate_read_only_cache, use_compiled_cache

# Before the first @njit: numba picks a function's cache folder when it is decorated.
use_compiled_cache()

U64 = np.uint64
ZERO = U64(0)
ONE = U64(1)
ALL = U64(0xFFFFFFFFFFFFFFFF)
NOT_A = U64(0xFEFEFEFEFEFEFEFE)  # every square but column A
NOT_H = U64(0x7F7F7F7F7F7F7F7F)  # every square but column H
INNER_COLUMNS = U64(0x7E7E7E7E7E7E7E7E)  # columns B-G
S1 = U64(1)
S7 = U64(7)
S8 = U64(8)
S9 = U64(9)

_M1 = U64(0x5555555555555555)
_M2 = U64(0x3333333333333333)
_M4 = U64(0x0F0F0F0F0F0F0F0F)
_H01 = U64(0x0101010101010101)
_S56 = U64(56)


@njit(cache=True, inline="always")
def popcount(x: np.uint64) -> int:
    """Number of set bits (SWAR; LLVM turns it into one POPCNT)."""
    x = x - ((x >> S1) & _M1)
    x = (x & _M2) + ((x >> U64(2)) & _M2)
    x = (x + (x >> U64(4))) & _M4
    return np.int64((x * _H01) >> _S56)


@njit(cache=True, inline="always")
def first_square(x: np.uint64) -> int:
    """Index of the lowest set bit of a non-empty bitboard."""
    return np.int64(trailing_zeros(x))


@njit(cache=True, inline="always")
def _fill_left(P: np.uint64, mask: np.uint64, d: np.uint64) -> np.uint64:
    # Runs of mask squares that start next to P, going towards H8, then one more step.
    # Doubling: after the third line runs of up to 4 squares are found, after the fourth up to 6.
    t = mask & (P << d)
    t |= mask & (t << d)
    pairs = mask & (mask << d)
    d2 = d + d
    t |= pairs & (t << d2)
    t |= pairs & (t << d2)
    return t << d


@njit(cache=True, inline="always")
def _fill_right(P: np.uint64, mask: np.uint64, d: np.uint64) -> np.uint64:
    t = mask & (P >> d)
    t |= mask & (t >> d)
    pairs = mask & (mask >> d)
    d2 = d + d
    t |= pairs & (t >> d2)
    t |= pairs & (t >> d2)
    return t >> d


@njit(cache=True)
def legal_moves(P: np.uint64, O: np.uint64) -> np.uint64:
    """Bitboard of the squares where the side owning ``P`` can play."""
    empty = ~(P | O)
    inner = O & INNER_COLUMNS
    moves = _fill_left(P, inner, S1) | _fill_right(P, inner, S1)
    moves |= _fill_left(P, O, S8) | _fill_right(P, O, S8)
    moves |= _fill_left(P, inner, S7) | _fill_right(P, inner, S7)
    moves |= _fill_left(P, inner, S9) | _fill_right(P, inner, S9)
    return moves & empty


def _rays() -> np.ndarray:
    """``RAYS[sq, d]``: the squares from ``sq`` (excluded) to the board's edge in direction ``d``.

    Directions 0-3 go towards higher squares (east, north-west, north, north-east in index
    terms: +1, +7, +8, +9), 4-7 towards lower ones (-1, -7, -8, -9).
    """
    steps = ((1, 0), (-1, 1), (0, 1), (1, 1), (-1, 0), (1, -1), (0, -1), (-1, -1))
    rays = np.zeros((64, 8), dtype=np.uint64)
    for sq in range(64):
        for d, (dc, dr) in enumerate(steps):
            c, r = sq % 8 + dc, sq // 8 + dr
            while 0 <= c < 8 and 0 <= r < 8:
                rays[sq, d] |= np.uint64(1 << (r * 8 + c))
                c, r = c + dc, r + dr
    return rays


RAYS = _rays()
_TOP = U64(0x8000000000000000)


# Both directions without a branch: whether a run of the opponent's discs ends at one of the
# player's is a coin toss the processor cannot predict.  The downward rays had two branches each:
# without them, 12-18 % less CPU on lines 8, 9 and 10 of bench/endgame_games.obf, the same nodes.


@njit(cache=True, inline="always")
def _flips_up(P: np.uint64, O: np.uint64, ray: np.uint64) -> np.uint64:
    # The nearest square of the ray that is not the opponent's is its lowest bit; when it is the
    # player's (the outflank), the squares below it on the ray flip.
    blockers = ray & ~O
    outflank = blockers & (ZERO - blockers) & P
    return (outflank - U64(outflank != ZERO)) & ray


@njit(cache=True, inline="always")
def _flips_down(P: np.uint64, O: np.uint64, ray: np.uint64) -> np.uint64:
    # Going down the nearest blocker is the highest bit.  A1's bit is added so that the count of
    # leading zeros is never 64 (a shift by 64 is undefined); where it is no real blocker it is
    # either off the ray or the opponent's, and ``& P & ray`` drops it.
    blockers = (ray & ~O) | ONE
    outflank = (_TOP >> U64(leading_zeros(blockers))) & P & ray
    return ((ZERO - outflank) << ONE) & ray


# Inlined where it is called: the endgame solver spends about 29 % of its samples here (perf, lines 9
# and 10 of bench/endgame_games.obf), a few ns a call; inlined, 2-5 % less CPU on six positions.
@njit(cache=True, inline="always")
def flips(P: np.uint64, O: np.uint64, sq: int) -> np.uint64:
    """Bitboard of the discs of ``O`` that a disc of ``P`` on ``sq`` flips."""
    f = _flips_up(P, O, RAYS[sq, 0])
    f |= _flips_up(P, O, RAYS[sq, 1])
    f |= _flips_up(P, O, RAYS[sq, 2])
    f |= _flips_up(P, O, RAYS[sq, 3])
    f |= _flips_down(P, O, RAYS[sq, 4])
    f |= _flips_down(P, O, RAYS[sq, 5])
    f |= _flips_down(P, O, RAYS[sq, 6])
    f |= _flips_down(P, O, RAYS[sq, 7])
    return f


@njit(cache=True)
def perft(P: np.uint64, O: np.uint64, depth: int) -> int:
    """Leaves ``depth`` plies deep; a pass is a move and a finished game a leaf.

    The same convention as :func:`othello_arena.protocol.rules.perft`.
    """
    if depth == 0:
        return 1
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return 1
        if depth == 1:
            return 1
        return perft(O, P, depth - 1)
    if depth == 1:
        return popcount(moves)
    total = 0
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        total += perft(O ^ f, P | f | (ONE << U64(sq)), depth - 1)
    return total


def board_bits(board) -> tuple[np.uint64, np.uint64]:
    """``(P, O)`` of a :class:`~othello_arena.protocol.Board`: side to move first."""
    return np.uint64(board.own), np.uint64(board.opp)


@njit(cache=True)
def popcount_py(x: np.uint64) -> int:
    """:func:`popcount` callable from Python (tests)."""
    return popcount(x)


@njit(cache=True)
def first_square_py(x: np.uint64) -> int:
    """:func:`first_square` callable from Python (tests)."""
    return first_square(x)


tolerate_read_only_cache(globals())
