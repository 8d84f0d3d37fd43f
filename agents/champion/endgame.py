"""The last empty squares of the exact solver: small, fast, no table and no arrays.

:func:`.search.solve` (the transposition table, move ordering, the stop flag)
hands a position over to :func:`shallow` when at most :data:`SHALLOW_EMPTIES`
squares are left.  From there on speed per node is what counts, so the code
is split by the number of empty squares, as the strong Othello programs do:

- :func:`solve_1` never plays the last move: it counts what it would flip,
  line by line from a table (:func:`last_flip_count`);
- :func:`solve_2` ... :func:`solve_4` take the empty squares as arguments and
  try them in parity order (a square in a region with an odd number of
  empties first), with no move generation at all (a move is legal when it
  flips something);
- :func:`search_5` ... :func:`search_7` walk the empty squares the same way
  and try a stability cut-off first.

Within the odd regions, and then within the even ones, the squares are tried
in a fixed order of square types (:data:`QUARTER_RANK`: corners first,
X-squares and the centre last), carried down as one integer
(:func:`sorted_empties`).

Each function returns ``pack(score, nodes)``: the exact score in the window
(fail-soft) and the nodes it visited, so that nothing here needs the
engine's control array.  They are separate functions rather than one
recursive one: numba cannot cache a recursive function that another
recursive cached function calls (numba issue #6061), and a chain of plain
calls is faster anyway.  A pass is handled in place (the same loop for the
other side), for the same reason.

Scores are final disc differences for the side to move, empty squares to
the winner (see :func:`.search.final_score`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from .bitboard import ONE, RAYS, U64, ZERO, first_square, flips, popcount
from .compiled_cache import tolerate_read_only_cache, use_compiled_cache

use_compiled_cache()  # before the first @njit (see compiled_cache.py)

SHALLOW_EMPTIES = 7  # up to this many empties: this module
NO_MOVE = -1000  # "the side to move had no legal move" inside a function


def _quadrant_ids() -> np.ndarray:
    """``QUADRANT_ID[sq]``: 1, 2, 4 or 8, the 4x4 quarter of the board holding ``sq``."""
    ids = np.zeros(64, dtype=np.int64)
    for sq in range(64):
        ids[sq] = 1 << ((sq % 8) // 4 + 2 * ((sq // 8) // 4))
    return ids


def _quadrant_masks() -> np.ndarray:
    """``QUADRANT_MASK[parity]``: the squares of the quarters whose bit is set in ``parity``."""
    ids = _quadrant_ids()
    masks = np.zeros(16, dtype=np.uint64)
    for parity in range(16):
        for sq in range(64):
            if parity & ids[sq]:
                masks[parity] |= np.uint64(1 << sq)
    return masks


def _neighbours() -> np.ndarray:
    """``NEIGHBOUR[sq]``: the up to 8 squares around ``sq`` (a move there flips one of them)."""
    near = np.zeros(64, dtype=np.uint64)
    for sq in range(64):
        for d in range(8):
            ray = int(RAYS[sq, d])
            if ray:
                # the nearest square of the ray: lowest bit going up, highest going down
                near[sq] |= np.uint64(ray & -ray if d < 4 else 1 << (ray.bit_length() - 1))
    return near


# The order the table-free solvers try squares in, within the odd regions and then within the even
# ones: corners first, X-squares (next to a corner, diagonally) and the centre last; the rank of each
# square of the board's A1 quarter (row by row, A1 B1 C1 D1 / A2 ... / A4 B4 C4 D4), mirrored onto the
# other three.  The same classes in the same order as Edax's static list of empty squares (a fact
# about which squares tend to be good, measured in bench/RESULTS.md: fewer nodes than square order).
QUARTER_RANK = ((0, 7, 3, 4),
                (7, 8, 6, 5),
                (3, 6, 2, 1),
                (4, 5, 1, 9))
SQUARE_RANKS = 10


def _rank_masks() -> np.ndarray:
    """``RANK_MASK[r]``: the squares of rank ``r`` in :data:`QUARTER_RANK`, best first."""
    masks = np.zeros(SQUARE_RANKS, dtype=np.uint64)
    for sq in range(64):
        row, col = sq // 8, sq % 8
        rank = QUARTER_RANK[min(row, 7 - row)][min(col, 7 - col)]
        masks[rank] |= np.uint64(1 << sq)
    return masks


QUADRANT_ID = _quadrant_ids()
QUADRANT_MASK = _quadrant_masks()
NEIGHBOUR = _neighbours()
RANK_MASK = _rank_masks()

# Stability cut-off: tried when alpha is at least this (by empties); below it the
# cut-off almost never happens and costs more than it saves.  Figures as in Edax.
# (Up to 15 empties only until issue 27: a won position of 24 empties, +58, then took the solver
# 80 s where Edax, cutting on stability at every depth, took 12 s.)
STABILITY_THRESHOLD = np.array([99, 99, 99, 99, 6, 8, 10, 12, 14, 16, 20, 22, 24, 26, 28, 30,
                                32, 34, 36, 38, 40, 42, 44, 46, 48, 48, 50, 50, 52, 52, 54, 54,
                                56, 56, 58, 58, 60, 60, 62, 62] + [64] * 8 + [99] * 17, dtype=np.int64)

_NOT_A = U64(0xFEFEFEFEFEFEFEFE)
_NOT_H = U64(0x7F7F7F7F7F7F7F7F)
_EDGE = U64(0xFF818181818181FF)
_COL_A = U64(0x0101010101010101)
_ROW_1 = U64(0x00000000000000FF)


def _short_rays(d: int) -> tuple[int, int, int]:
    """For direction ``d`` (0-7, see :data:`.bitboard.RAYS`): the squares whose ray is shorter
    than 1, 2 and 4 squares, the masks of the doubling in :func:`full_lines`."""
    masks = [0, 0, 0]
    for sq in range(64):
        length = bin(int(RAYS[sq, d])).count("1")
        for k, limit in enumerate((1, 2, 4)):
            if length < limit:
                masks[k] |= 1 << sq
    return masks[0], masks[1], masks[2]


# directions 1/5 are the H1-A8 diagonals (+7/-7), 3/7 the A1-H8 ones (+9/-9)
_U7 = tuple(U64(m) for m in _short_rays(1))
_D7 = tuple(U64(m) for m in _short_rays(5))
_U9 = tuple(U64(m) for m in _short_rays(3))
_D9 = tuple(U64(m) for m in _short_rays(7))


# ---------------------------------------------------------------------------
# The edges' stable discs, from a table (as Edax's edge_stability)
# ---------------------------------------------------------------------------

# ``EDGE_STABLE[p * 256 + o]``: the discs of ``p`` (an 8-square line, bit k = k-th square) that
# no sequence of moves on that line alone can flip, ``o`` being the other side's.  An edge square
# ends every other line through it, so such a disc is stable on the board.  The table is
# :func:`edge_stability_table`'s, kept in ``data/`` (building it takes 0.1 s of Python: too much
# for a process's start-up); tests/test_champion_endgame.py checks the file against it.
EDGE_STABILITY_FILE = Path(__file__).resolve().parent / "data" / "edge_stability.npy"
_GATHER_A = U64(0x0102040810204080)  # (x & column A) * this >> 56: column A as a byte, A1 first


def _line_flips(p: int, o: int, x: int) -> int:
    """The discs of ``o`` that ``p`` flips by playing ``x`` on an 8-square line."""
    flipped = 0
    for step in (1, -1):
        k, run = x + step, 0
        while 0 <= k < 8 and o >> k & 1:
            run |= 1 << k
            k += step
        if run and 0 <= k < 8 and p >> k & 1:
            flipped |= run
    return flipped


def edge_stability_table() -> np.ndarray:
    """:data:`EDGE_STABLE` computed: a disc is stable when no move by either side on any empty
    square of the line (whether or not it flips there: it may flip along another line) ever
    flips it, in any order of moves, until the line is full."""
    memo: dict[tuple[int, int], int] = {}

    def kept(p: int, o: int) -> int:  # the discs of both sides that never change colour
        if (p, o) in memo:
            return memo[p, o]
        same = p | o
        for x in range(8):
            if (p | o) >> x & 1:
                continue
            flipped = _line_flips(p, o, x)  # p plays x
            same &= ~flipped & kept(p | flipped | 1 << x, o & ~flipped)
            flipped = _line_flips(o, p, x)  # o plays x
            same &= ~flipped & kept(p & ~flipped, o | flipped | 1 << x)
        memo[p, o] = same
        return same

    table = np.zeros(65536, dtype=np.uint8)
    for p in range(256):
        for o in range(256):
            if p & o == 0:
                table[p * 256 + o] = kept(p, o) & p
    return table


def _load_edge_stability() -> np.ndarray:
    table: np.ndarray = np.load(EDGE_STABILITY_FILE)
    if table.shape != (65536,) or table.dtype != np.uint8:
        raise ValueError(f"{EDGE_STABILITY_FILE}: not an edge stability table (remake it with edge_stability_table())")
    return table


def _column_spread() -> np.ndarray:
    """``COLUMN_SPREAD[b]``: the byte ``b`` laid on column A (bit k on row k + 1)."""
    spread = np.zeros(256, dtype=np.uint64)
    for b in range(256):
        spread[b] = np.uint64(sum(1 << (8 * k) for k in range(8) if b >> k & 1))
    return spread


EDGE_STABLE = _load_edge_stability()
COLUMN_SPREAD = _column_spread()


# ---------------------------------------------------------------------------
# Stability
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _filled_up(occupied, d, short):
    f = occupied & (short[0] | (occupied >> d))
    f &= short[1] | (f >> (d + d))
    return f & (short[2] | (f >> (U64(4) * d)))


@njit(cache=True, inline="always")
def _filled_down(occupied, d, short):
    f = occupied & (short[0] | (occupied << d))
    f &= short[1] | (f << (d + d))
    return f & (short[2] | (f << (U64(4) * d)))


@njit(cache=True)
def full_lines(occupied: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    """The squares whose row, column, and each diagonal are completely filled."""
    h = occupied & (occupied >> U64(1))
    h &= h >> U64(2)
    h &= h >> U64(4)
    h = (h & _COL_A) * U64(0xFF)
    v = occupied & (occupied >> U64(8))
    v &= v >> U64(16)
    v &= v >> U64(32)
    v = (v & _ROW_1) * _COL_A
    # A square's ray is all filled when its first 1, 2, 4 squares are (or the ray is shorter):
    # three doublings per direction, then both directions of a diagonal.
    d9 = _filled_up(occupied, U64(9), _U9) & _filled_down(occupied, U64(9), _D9)
    d7 = _filled_up(occupied, U64(7), _U7) & _filled_down(occupied, U64(7), _D7)
    return h, v, d9, d7


@njit(cache=True, inline="always")
def _column_byte(x: np.uint64) -> int:
    return np.int64(((x & _COL_A) * _GATHER_A) >> U64(56))


@njit(cache=True, inline="always")
def edge_stable(X: np.uint64, Y: np.uint64) -> np.uint64:
    """The discs of ``X`` on the board's four edges that no move can flip (:data:`EDGE_STABLE`)."""
    row1 = EDGE_STABLE[np.int64(X & _ROW_1) * 256 + np.int64(Y & _ROW_1)]
    row8 = EDGE_STABLE[np.int64(X >> U64(56)) * 256 + np.int64(Y >> U64(56))]
    col_a = EDGE_STABLE[_column_byte(X) * 256 + _column_byte(Y)]
    col_h = EDGE_STABLE[_column_byte(X >> U64(7)) * 256 + _column_byte(Y >> U64(7))]
    return (U64(row1) | (U64(row8) << U64(56)) | COLUMN_SPREAD[col_a] | (COLUMN_SPREAD[col_h] << U64(7)))


@njit(cache=True)
def stable_discs(X: np.uint64, Y: np.uint64) -> np.uint64:
    """The discs of ``X`` that can never be flipped (a subset of them; ``Y`` is the other side).

    The edges' stable discs (exact along the edge, from a table), and the
    discs whose four lines are all full; then grown: a disc is stable when,
    on each of its four lines, the line is full, or it sits on the board's
    edge across that line, or a stable disc of its own colour is next to it
    on that line, until nothing more is added.
    """
    h, v, d9, d7 = full_lines(X | Y)
    edge_h = _COL_A | (_COL_A << U64(7)) | h
    edge_v = _ROW_1 | (_ROW_1 << U64(56)) | v
    edge_d9 = _EDGE | d9
    edge_d7 = _EDGE | d7
    stable = edge_stable(X, Y) | (X & h & v & d9 & d7)
    if stable == ZERO:
        return stable
    while True:
        horiz = ((stable << U64(1)) & _NOT_A) | ((stable >> U64(1)) & _NOT_H) | edge_h
        vert = (stable << U64(8)) | (stable >> U64(8)) | edge_v
        diag9 = ((stable << U64(9)) & _NOT_A) | ((stable >> U64(9)) & _NOT_H) | edge_d9
        diag7 = ((stable << U64(7)) & _NOT_H) | ((stable >> U64(7)) & _NOT_A) | edge_d7
        grown = stable | (X & horiz & vert & diag9 & diag7)
        if grown == stable:
            return stable
        stable = grown


@njit(cache=True)
def stable_count(X: np.uint64, Y: np.uint64) -> int:
    """How many discs of ``X`` can never be flipped (a lower bound; ``Y`` is the other side)."""
    return popcount(stable_discs(X, Y))


# ---------------------------------------------------------------------------
# Packed results
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def pack(score: int, nodes: int) -> int:
    """A score in -64..64 and a node count in one integer."""
    return nodes * 256 + score + 128


@njit(cache=True, inline="always")
def unpack_score(r: int) -> int:
    return (r & 255) - 128


@njit(cache=True, inline="always")
def unpack_nodes(r: int) -> int:
    return r >> 8


@njit(cache=True, inline="always")
def game_over_score(P: np.uint64, O: np.uint64) -> int:
    """Disc difference of a finished game, empties to the winner."""
    p = popcount(P)
    o = popcount(O)
    diff = p - o
    if diff > 0:
        return 64 - o - o
    if diff < 0:
        return p + p - 64
    return 0


# ---------------------------------------------------------------------------
# The last move's flips, counted by lines (as Edax's count_last_flip)
# ---------------------------------------------------------------------------

# With one empty square left every other square holds a disc, so along each line through it what a
# move there flips depends only on which squares of the line are the mover's: a table by the line's
# 8 bits and the square's place on it, four lookups instead of the eight rays of ``flips``.


def last_flip_counts() -> np.ndarray:
    """``LAST_FLIP_COUNT[pos * 256 + line]``: the discs flipped on a full 8-square line by a move on
    its square ``pos``, ``line`` being the mover's discs (bit k: the k-th square), the rest the other side's.

    The diagonals are read into the same 8 bits by column, their missing squares off the
    mover's (as the other side's): a run into them never ends at a disc of the mover, as off the board.
    """
    counts = np.zeros(8 * 256, dtype=np.int64)
    for pos in range(8):
        for line in range(256):
            if line >> pos & 1:
                continue
            for step in (1, -1):
                k, run = pos + step, 0
                while 0 <= k < 8 and not line >> k & 1:
                    run, k = run + 1, k + step
                if 0 <= k < 8:
                    counts[pos * 256 + line] += run
    return counts


def _diagonal_masks(step: int) -> np.ndarray:
    """``mask[sq]``: the squares of the diagonal through ``sq`` (``step`` 9: A1-H8's way, 7: H1-A8's)."""
    masks = np.zeros(64, dtype=np.uint64)
    for sq in range(64):
        for other in range(64):
            dr, dc = other // 8 - sq // 8, other % 8 - sq % 8
            if (dr == dc if step == 9 else dr == -dc):
                masks[sq] |= np.uint64(1 << other)
    return masks


LAST_FLIP_COUNT = last_flip_counts()
DIAGONAL_9 = _diagonal_masks(9)
DIAGONAL_7 = _diagonal_masks(7)


@njit(cache=True, inline="always")
def last_flip_count(P: np.uint64, sq: int) -> int:
    """How many discs a move of ``P`` on ``sq`` flips when ``sq`` is the board's only empty square."""
    row = sq >> 3
    col = sq & 7
    n = LAST_FLIP_COUNT[col * 256 + np.int64((P >> U64(8 * row)) & _ROW_1)]
    n += LAST_FLIP_COUNT[row * 256 + _column_byte(P >> U64(col))]
    # a diagonal's squares are in distinct columns: times column A, each lands on its column's bit of the top byte
    n += LAST_FLIP_COUNT[col * 256 + np.int64(((P & DIAGONAL_9[sq]) * _COL_A) >> U64(56))]
    n += LAST_FLIP_COUNT[col * 256 + np.int64(((P & DIAGONAL_7[sq]) * _COL_A) >> U64(56))]
    return n


# ---------------------------------------------------------------------------
# 1 to 4 empties
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _play(P: np.uint64, O: np.uint64, sq: int) -> np.uint64:
    """The discs a move on ``sq`` flips, 0 when it is not legal (skipping hopeless squares)."""
    if NEIGHBOUR[sq] & O:
        return flips(P, O, sq)
    return ZERO


@njit(cache=True)
def solve_1(P: np.uint64, sq: int) -> int:
    """Score for the side owning ``P`` with one empty square ``sq`` left (all others are filled)."""
    p = popcount(P)
    k = last_flip_count(P, sq)
    if k:
        return 2 * (p + k + 1) - 64
    k = last_flip_count(~(P | (ONE << U64(sq))), sq)
    if k:
        return 2 * (p - k) - 64
    # nobody can play there: it goes to the winner (63 discs, never a draw)
    return 2 * p - 62 if 2 * p > 63 else 2 * p - 64


@njit(cache=True)
def solve_2(P, O, alpha, beta, x1, x2) -> int:
    """Packed result with the two empty squares ``x1`` and ``x2`` left."""
    nodes = 1
    for side in range(2):
        best = NO_MOVE
        f = _play(P, O, x1)
        if f:
            nodes += 1
            best = -solve_1(O ^ f, x2)
            if best >= beta:
                break
        f = _play(P, O, x2)
        if f:
            nodes += 1
            v = -solve_1(O ^ f, x1)
            if v > best:
                best = v
        if best != NO_MOVE:
            break
        P, O = O, P
        alpha, beta = -beta, -alpha
    if best == NO_MOVE:
        return pack(game_over_score(P, O), nodes)  # swapped twice: back as given
    if side == 1:
        best = -best
    return pack(best, nodes)


@njit(cache=True)
def solve_3(P, O, alpha, beta, x1, x2, x3) -> int:
    """Packed result with three empty squares left (given in the order to try them)."""
    nodes = 1
    for side in range(2):
        best = NO_MOVE
        f = _play(P, O, x1)
        if f:
            r = solve_2(O ^ f, P | f | (ONE << U64(x1)), -beta, -alpha, x2, x3)
            nodes += unpack_nodes(r)
            best = -unpack_score(r)
        if best < beta:
            f = _play(P, O, x2)
            if f:
                r = solve_2(O ^ f, P | f | (ONE << U64(x2)), -beta, -max(alpha, best), x1, x3)
                nodes += unpack_nodes(r)
                v = -unpack_score(r)
                if v > best:
                    best = v
            if best < beta:
                f = _play(P, O, x3)
                if f:
                    r = solve_2(O ^ f, P | f | (ONE << U64(x3)), -beta, -max(alpha, best), x1, x2)
                    nodes += unpack_nodes(r)
                    v = -unpack_score(r)
                    if v > best:
                        best = v
        if best != NO_MOVE:
            break
        P, O = O, P
        alpha, beta = -beta, -alpha
    if best == NO_MOVE:
        return pack(game_over_score(P, O), nodes)
    if side == 1:
        best = -best
    return pack(best, nodes)


@njit(cache=True, inline="always")
def parity_of(empty: np.uint64) -> int:
    """One bit per quarter of the board holding an odd number of the ``empty`` squares."""
    return ((popcount(empty & QUADRANT_MASK[1]) & 1) | ((popcount(empty & QUADRANT_MASK[2]) & 1) << 1)
            | ((popcount(empty & QUADRANT_MASK[4]) & 1) << 2) | ((popcount(empty & QUADRANT_MASK[8]) & 1) << 3))


# The table-free solvers carry their empty squares as one integer, a list of squares 6 bits each
# (lowest first) in the order of :data:`QUARTER_RANK`: made once where the search comes in
# (:func:`shallow`), each move's child gets the list without that square, so the order is never
# sorted again and no array is allocated.  ``parity`` (:func:`parity_of`) is carried along too.


@njit(cache=True, inline="always")
def sorted_empties(empty: np.uint64) -> int:
    """The squares of ``empty`` as a list (6 bits a square, first lowest), best rank first."""
    q = 0
    shift = 0
    for r in range(SQUARE_RANKS):
        m = empty & RANK_MASK[r]
        while m:
            q |= first_square(m) << shift
            shift += 6
            m &= m - ONE
    return q


@njit(cache=True, inline="always")
def _square_at(q: int, i: int) -> int:
    return (q >> (6 * i)) & 63


@njit(cache=True, inline="always")
def _without(q: int, i: int) -> int:
    """The list ``q`` without its ``i``-th square."""
    low = q & ((1 << (6 * i)) - 1)
    return low | ((q >> (6 * i + 6)) << (6 * i))


@njit(cache=True, inline="always")
def _parity_first(q: int, n: int, parity: int) -> int:
    """The list ``q`` of ``n`` squares, those in odd regions first, each group in its order."""
    odd = 0
    n_odd = 0
    even = 0
    n_even = 0
    for i in range(n):
        sq = _square_at(q, i)
        if parity & QUADRANT_ID[sq]:
            odd |= sq << (6 * n_odd)
            n_odd += 1
        else:
            even |= sq << (6 * n_even)
            n_even += 1
    return odd | (even << (6 * n_odd))


@njit(cache=True)
def solve_4(P, O, alpha, beta, q, parity) -> int:
    """Packed result with four empty squares left (the list ``q``), tried in parity order."""
    nodes = 1
    if alpha >= STABILITY_THRESHOLD[4]:
        bound = 64 - 2 * stable_count(O, P)
        if bound <= alpha:
            return pack(bound, nodes)
    o = _parity_first(q, 4, parity)
    x1 = _square_at(o, 0)
    x2 = _square_at(o, 1)
    x3 = _square_at(o, 2)
    x4 = _square_at(o, 3)
    for side in range(2):
        best = NO_MOVE
        f = _play(P, O, x1)
        if f:
            r = solve_3(O ^ f, P | f | (ONE << U64(x1)), -beta, -alpha, x2, x3, x4)
            nodes += unpack_nodes(r)
            best = -unpack_score(r)
        if best < beta:
            f = _play(P, O, x2)
            if f:
                r = solve_3(O ^ f, P | f | (ONE << U64(x2)), -beta, -max(alpha, best), x1, x3, x4)
                nodes += unpack_nodes(r)
                v = -unpack_score(r)
                if v > best:
                    best = v
            if best < beta:
                f = _play(P, O, x3)
                if f:
                    r = solve_3(O ^ f, P | f | (ONE << U64(x3)), -beta, -max(alpha, best), x1, x2, x4)
                    nodes += unpack_nodes(r)
                    v = -unpack_score(r)
                    if v > best:
                        best = v
                if best < beta:
                    f = _play(P, O, x4)
                    if f:
                        r = solve_3(O ^ f, P | f | (ONE << U64(x4)), -beta, -max(alpha, best), x1, x2, x3)
                        nodes += unpack_nodes(r)
                        v = -unpack_score(r)
                        if v > best:
                            best = v
        if best != NO_MOVE:
            break
        P, O = O, P
        alpha, beta = -beta, -alpha
    if best == NO_MOVE:
        return pack(game_over_score(P, O), nodes)
    if side == 1:
        best = -best
    return pack(best, nodes)


@njit(cache=True)
def search_5(P, O, alpha, beta, q, parity) -> int:
    """Packed result with 5 empty squares left (the list ``q``): stability cut-off, then parity order."""
    nodes = 1
    if alpha >= STABILITY_THRESHOLD[5]:
        bound = 64 - 2 * stable_count(O, P)
        if bound <= alpha:
            return pack(bound, nodes)
    for side in range(2):
        best = NO_MOVE
        for odd_pass in range(2):
            want = 0 if odd_pass else 1
            for i in range(5):
                sq = _square_at(q, i)
                if (1 if parity & QUADRANT_ID[sq] else 0) != want:
                    continue
                f = _play(P, O, sq)
                if f:
                    r = solve_4(O ^ f, P | f | (ONE << U64(sq)), -beta, -max(alpha, best), _without(q, i),
                                parity ^ QUADRANT_ID[sq])
                    nodes += unpack_nodes(r)
                    v = -unpack_score(r)
                    if v > best:
                        best = v
                        if v >= beta:
                            break
            if best >= beta:
                break
        if best != NO_MOVE:
            break
        P, O = O, P
        alpha, beta = -beta, -alpha
    if best == NO_MOVE:
        return pack(game_over_score(P, O), nodes)
    if side == 1:
        best = -best
    return pack(best, nodes)


@njit(cache=True)
def search_6(P, O, alpha, beta, q, parity) -> int:
    """Packed result with 6 empty squares left (the list ``q``): stability cut-off, then parity order."""
    nodes = 1
    if alpha >= STABILITY_THRESHOLD[6]:
        bound = 64 - 2 * stable_count(O, P)
        if bound <= alpha:
            return pack(bound, nodes)
    for side in range(2):
        best = NO_MOVE
        for odd_pass in range(2):
            want = 0 if odd_pass else 1
            for i in range(6):
                sq = _square_at(q, i)
                if (1 if parity & QUADRANT_ID[sq] else 0) != want:
                    continue
                f = _play(P, O, sq)
                if f:
                    r = search_5(O ^ f, P | f | (ONE << U64(sq)), -beta, -max(alpha, best), _without(q, i),
                                parity ^ QUADRANT_ID[sq])
                    nodes += unpack_nodes(r)
                    v = -unpack_score(r)
                    if v > best:
                        best = v
                        if v >= beta:
                            break
            if best >= beta:
                break
        if best != NO_MOVE:
            break
        P, O = O, P
        alpha, beta = -beta, -alpha
    if best == NO_MOVE:
        return pack(game_over_score(P, O), nodes)
    if side == 1:
        best = -best
    return pack(best, nodes)


@njit(cache=True)
def search_7(P, O, alpha, beta, q, parity) -> int:
    """Packed result with 7 empty squares left (the list ``q``): stability cut-off, then parity order."""
    nodes = 1
    if alpha >= STABILITY_THRESHOLD[7]:
        bound = 64 - 2 * stable_count(O, P)
        if bound <= alpha:
            return pack(bound, nodes)
    for side in range(2):
        best = NO_MOVE
        for odd_pass in range(2):
            want = 0 if odd_pass else 1
            for i in range(7):
                sq = _square_at(q, i)
                if (1 if parity & QUADRANT_ID[sq] else 0) != want:
                    continue
                f = _play(P, O, sq)
                if f:
                    r = search_6(O ^ f, P | f | (ONE << U64(sq)), -beta, -max(alpha, best), _without(q, i),
                                parity ^ QUADRANT_ID[sq])
                    nodes += unpack_nodes(r)
                    v = -unpack_score(r)
                    if v > best:
                        best = v
                        if v >= beta:
                            break
            if best >= beta:
                break
        if best != NO_MOVE:
            break
        P, O = O, P
        alpha, beta = -beta, -alpha
    if best == NO_MOVE:
        return pack(game_over_score(P, O), nodes)
    if side == 1:
        best = -best
    return pack(best, nodes)


@njit(cache=True)
def shallow(P, O, alpha, beta, n_empty) -> int:
    """Packed result of a position with ``n_empty`` <= :data:`SHALLOW_EMPTIES` empty squares."""
    empty = ~(P | O)
    q = sorted_empties(empty)
    parity = parity_of(empty)
    if n_empty == 7:
        return search_7(P, O, alpha, beta, q, parity)
    if n_empty == 6:
        return search_6(P, O, alpha, beta, q, parity)
    if n_empty == 5:
        return search_5(P, O, alpha, beta, q, parity)
    if n_empty == 4:
        return solve_4(P, O, alpha, beta, q, parity)
    if n_empty == 3:
        o = _parity_first(q, 3, parity)
        return solve_3(P, O, alpha, beta, _square_at(o, 0), _square_at(o, 1), _square_at(o, 2))
    if n_empty == 2:
        return solve_2(P, O, alpha, beta, _square_at(q, 0), _square_at(q, 1))
    if n_empty == 1:
        return pack(solve_1(P, first_square(empty)), 1)
    return pack(game_over_score(P, O), 1)


tolerate_read_only_cache(globals())
