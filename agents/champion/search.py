"""The compiled search: NegaScout with a transposition table, and the exact
endgame solver.

Everything here runs under numba.  The Python side (:mod:`.engine`) owns the
arrays and drives iterative deepening; the functions below take them
explicitly:

``tt``
    the transposition table, an ``int64`` array of rows of :data:`TT_WORDS`
    words indexed by a hash of the position: the position's two bitboards,
    its bounds (``lower`` and ``upper``, 32 bits each) and ``depth`` with
    ``move`` (:func:`tt_meta`).  ``depth`` is the remaining depth of the
    search that stored it, or for an entry of the endgame solver (whose values
    are in discs, not in evaluation units) at least ``EXACT_DEPTH``, by how
    sure it is and its empties (:func:`solved_depth`).  A
    row is 32 bytes and the array starts on a cache line
    (:func:`new_table`), so the solver's pair of rows is one cache line: a
    probe costs one miss, not one per field.
``ev``
    the evaluation: ``(kind, weights, inst_squares, inst_length, inst_offset)``;
    ``kind`` is :data:`.evaluation.EVAL_PATTERNS` (the learned pattern evaluation) or
    :data:`.evaluation.EVAL_PAPER_SIMPLIFIED` (seed 002's six hand-tuned heuristics, simplified:
    :func:`.evaluation.evaluate_paper_simplified`).
``ctl``
    an ``int64`` control array: ``ctl[STOP]`` is set by another thread (the
    time manager) to stop, ``ctl[NODES]`` counts nodes, ``ctl[NODE_LIMIT]``
    stops at a node count when positive, ``ctl[ABORTED]`` says the search
    was cut short and its result must be thrown away.
``mbuf``, ``kbuf``
    per-ply scratch rows for move ordering (no allocation in the search).
``mpc``
    multi-prob-cut's regression table (:mod:`.probcut`), read when
    ``ctl[PROBCUT]`` is positive.
``ecut``
    the endgame's regression table (:func:`.probcut.load_endgame_table`),
    read by the solver when ``ctl[ENDCUT]`` is positive.
``fbuf``
    per-ply rows of 64 ``uint64``: the solver's flips of each move by square,
    computed once a node for its transposition cut-offs, ordering and moves.

Scores are from the side to move.  In the midgame search they are in
centi-discs (:data:`.evaluation.SCALE` per disc); a finished game is worth its disc
difference plus :data:`.evaluation.WIN_BONUS` for the winner, so a sure win outranks any
estimate.  The endgame solver returns the exact final disc difference.  Disc
differences count the empty squares of a finished game for the winner
(:func:`final_score`), as every Othello program and the published test suites
do; the referee's result counts only the discs on the board.  The search
treats a pass as a move that does not use up depth.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .bitboard import ONE, U64, ZERO, first_square, flips, legal_moves, popcount
from .compiled_cache import tolerate_read_only_cache, use_compiled_cache
from .endgame import (QUADRANT_ID, SHALLOW_EMPTIES, STABILITY_THRESHOLD, parity_of, shallow, stable_count,
                      unpack_nodes, unpack_score)
from .evaluation import CORNERS, SCALE, WIN_BONUS, evaluate, evaluate_given_moves, neighbours
from .probcut import ENDGAME_MIN_EMPTIES
from .probcut import MAX_DEPTH as PROBCUT_MAX_DEPTH
from .probcut import MIN_DEPTH as PROBCUT_MIN_DEPTH
from .probcut import N_PHASES as PROBCUT_PHASES
from .probcut import PARAM_A, PARAM_B, PARAM_SHALLOW, PARAM_SIGMA
from .probcut import PHASE_WIDTH as PROBCUT_PHASE_WIDTH

use_compiled_cache()  # before the first @njit (see compiled_cache.py)

INF = 1_000_000
NO_CUT = -INF  # a table probe or cut-off that decides nothing: the position must be searched
EXACT_DEPTH = 64  # TT depth marker of solved entries: at least this (see solved_depth)
EXACT_RANK = 1024  # the rank of an exact solve in a solved entry; a selective one's is its threshold, smaller
MAX_PLY = 128
MAX_MOVES = 40

# ctl slots
STOP = 0
NODES = 1
NODE_LIMIT = 2
ABORTED = 3
BEST = 4  # the root's best square, written by the searches at ply 0
NEXT_CHECK = 5  # node count of the next look at the stop flag
PROBCUT = 6  # multi-prob-cut's threshold in hundredths of sigma (:mod:`.probcut`); 0: none, the search is exact
ROOT_FIRST = 7  # the root's first move searched (the table's move: the last iteration's best)
ENDCUT = 8  # the solver's prob-cut threshold in hundredths of sigma (:mod:`.probcut`'s endgame table); 0: exact
CTL_SLOTS = 9
CHECK_EVERY = 1024  # nodes between two looks at the stop flag

_K1 = U64(0x9E3779B97F4A7C15)
_K2 = U64(0xC2B2AE3D27D4EB4F)
_S29 = U64(29)
_S32 = U64(32)

_X_SQUARES = U64(0x0042000000004200)

# ---------------------------------------------------------------------------
# Values of finished games and at the horizon
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def final_score(P: np.uint64, O: np.uint64) -> int:
    """The final disc difference of a finished game, empty squares to the winner.

    Every Othello program and published test suite (FFO) scores so; the
    referee's result keeps the discs on the board instead (seed 003).
    """
    diff = popcount(P) - popcount(O)
    empties = 64 - popcount(P | O)
    if diff > 0:
        return diff + empties
    if diff < 0:
        return diff - empties
    return 0


@njit(cache=True, inline="always")
def final_value(P: np.uint64, O: np.uint64) -> int:
    """Value of a finished game in the midgame search's units."""
    diff = final_score(P, O)
    if diff > 0:
        return diff * SCALE + WIN_BONUS
    if diff < 0:
        return diff * SCALE - WIN_BONUS
    return 0


@njit(cache=True, inline="always")
def leaf_value(P: np.uint64, O: np.uint64, ev) -> int:
    """Value at the search horizon: the result if the game is over, else the evaluation."""
    moves_p = legal_moves(P, O)
    moves_o = legal_moves(O, P)
    if moves_p == ZERO and moves_o == ZERO:
        return final_value(P, O)
    return evaluate_given_moves(P, O, moves_p, moves_o, ev)


# ---------------------------------------------------------------------------
# Transposition table
# ---------------------------------------------------------------------------

TT_WORDS = 4  # a row: key P, key O, bounds, meta
_KEY_P, _KEY_O, _BOUNDS, _META = 0, 1, 2, 3
_LOW32 = 0xFFFFFFFF
EMPTY_META = -256  # depth -1, move -1: a row nothing was stored in


def new_table(entries: int) -> np.ndarray:
    """An empty table of ``entries`` rows (a power of two), its first row on a 64-byte boundary."""
    raw = np.zeros(entries * TT_WORDS + 8, dtype=np.int64)
    skip = (-raw.ctypes.data % 64) // 8
    table = raw[skip:skip + entries * TT_WORDS].reshape(entries, TT_WORDS)
    clear_table(table)
    return table


def clear_table(table: np.ndarray) -> None:
    """Forget every entry (keys that match no position, depth -1)."""
    table[:, _KEY_P] = 0
    table[:, _KEY_O] = 0
    table[:, _META] = EMPTY_META


@njit(cache=True, inline="always")
def tt_meta(depth: int, move: int) -> int:
    """``depth`` and ``move`` (-1..63) in one word."""
    return depth * 256 + move + 1


@njit(cache=True, inline="always")
def tt_depth(tt, i) -> int:
    return tt[i, _META] >> 8


@njit(cache=True, inline="always")
def tt_move(tt, i) -> int:
    return (tt[i, _META] & 255) - 1


@njit(cache=True, inline="always")
def tt_lower(tt, i) -> int:
    return (tt[i, _BOUNDS] << 32) >> 32


@njit(cache=True, inline="always")
def tt_upper(tt, i) -> int:
    return tt[i, _BOUNDS] >> 32


@njit(cache=True, inline="always")
def tt_holds(tt, i, P, O) -> bool:
    """Is row ``i`` the entry of the position ``(P, O)``?"""
    return tt[i, _KEY_P] == np.int64(P) and tt[i, _KEY_O] == np.int64(O)


@njit(cache=True, inline="always")
def tt_index(P: np.uint64, O: np.uint64, mask: int) -> int:
    h = P * _K1 + ((O ^ (O >> _S29)) * _K2)
    h ^= h >> _S32
    return np.int64(h & U64(mask))


@njit(cache=True, inline="always")
def _tt_store(tt, i, P, O, depth, value, alpha, beta, move):
    if value <= alpha:
        lower, upper = -INF, value
    elif value >= beta:
        lower, upper = value, INF
    else:
        lower, upper = value, value
    tt[i, _KEY_P] = np.int64(P)
    tt[i, _KEY_O] = np.int64(O)
    tt[i, _BOUNDS] = (upper << 32) | (lower & _LOW32)
    tt[i, _META] = tt_meta(depth, move)


@njit(cache=True, inline="always")
def solved_rank(ctl) -> int:
    """How sure the solver's results are: :data:`EXACT_RANK` when exact, else its threshold (hundredths of
    sigma), below :data:`EXACT_RANK` however large: a bet is never as sure as a proof."""
    return min(ctl[ENDCUT], EXACT_RANK - 1) if ctl[ENDCUT] > 0 else EXACT_RANK


@njit(cache=True, inline="always")
def solved_floor(rank: int) -> int:
    """The least table depth of a solved entry at least as sure as ``rank``: the solver of that rank may use it."""
    return EXACT_DEPTH + 64 * rank


@njit(cache=True, inline="always")
def solved_depth(n_empty: int, rank: int) -> int:
    """The table depth of a solver's entry: above every midgame depth (its values are discs, not
    centi-discs), then by how sure it is (a selective solve's bound is no exact one's), then by empties."""
    return solved_floor(rank) + n_empty


@njit(cache=True, inline="always")
def _tick(ctl) -> bool:
    """Count a node; return True when the search must stop."""
    ctl[NODES] += 1
    if ctl[NODES] >= ctl[NEXT_CHECK]:
        ctl[NEXT_CHECK] = ctl[NODES] + CHECK_EVERY
        if ctl[STOP] != 0 or (ctl[NODE_LIMIT] > 0 and ctl[NODES] >= ctl[NODE_LIMIT]):
            ctl[ABORTED] = 1
    return ctl[ABORTED] != 0


# ---------------------------------------------------------------------------
# Move ordering
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def sort_moves(row: np.ndarray, keys: np.ndarray, n: int) -> None:
    """Insertion sort of the first ``n`` moves of ``row``, best (largest key) first."""
    for i in range(1, n):
        k = keys[i]
        m = row[i]
        j = i - 1
        while j >= 0 and keys[j] < k:
            keys[j + 1] = keys[j]
            row[j + 1] = row[j]
            j -= 1
        keys[j + 1] = k
        row[j + 1] = m


@njit(cache=True)
def _order_moves(P, O, moves, hash_move, depth, ev, row, keys) -> int:
    """Fill ``row`` with the moves best first; return how many.

    The hash move first; then the moves that leave the opponent the fewest
    replies, corners up and X-squares down; deeper in the tree the
    evaluation of the child position counts as well.
    """
    n = 0
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        bit = ONE << U64(sq)
        f = flips(P, O, sq)
        np_ = P | f | bit
        no = O ^ f
        if sq == hash_move:
            key = 1 << 40
        else:
            opp_moves = legal_moves(no, np_)
            key = -popcount(opp_moves) * 200 - popcount(opp_moves & CORNERS) * 400
            if bit & CORNERS:
                key += 300
            elif bit & _X_SQUARES:
                key -= 300
            if depth >= 3:
                key -= evaluate_given_moves(no, np_, opp_moves, legal_moves(np_, no), ev)
        row[n] = sq
        keys[n] = key
        n += 1
    sort_moves(row, keys, n)
    return n


# ---------------------------------------------------------------------------
# Midgame: NegaScout with a transposition table
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _midgame_probe(tt, ti, P, O, depth, alpha, beta):
    """The table's word on a position searched ``depth`` deep: ``(value, hash move)``.

    ``value`` is a stored bound that decides the search in ``(alpha, beta)``
    (from a search at least as deep, never a solved entry: those are in
    discs), else :data:`NO_CUT`; the hash move is -1 when the table has none.
    """
    if not tt_holds(tt, ti, P, O):
        return NO_CUT, -1
    hash_move = tt_move(tt, ti)
    if depth <= tt_depth(tt, ti) < EXACT_DEPTH:
        lower, upper = tt_lower(tt, ti), tt_upper(tt, ti)
        if lower >= beta:
            return lower, hash_move
        if upper <= alpha:
            return upper, hash_move
        if lower == upper:
            return lower, hash_move
    return NO_CUT, hash_move


@njit(cache=True, inline="always")
def _leaf_parent(P, O, moves, beta, ev, ctl) -> int:
    """A position one ply from the leaves: the best child evaluation, no ordering, no table."""
    best = -INF
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        np_ = P | f | (ONE << U64(sq))
        ctl[NODES] += 1
        v = -leaf_value(O ^ f, np_, ev)
        if v > best:
            best = v
            if v >= beta:
                break
    return best


@njit(cache=True, inline="always")
def _probcut_params(P, O, depth, ctl, mpc):
    """``(shallow depth, a, b, margin)`` of multi-prob-cut at this node; shallow depth 0: no cut tried.

    ``deep ~ a * shallow + b`` within ``margin`` (the threshold times sigma) (:mod:`.probcut`).
    """
    if ctl[PROBCUT] <= 0 or depth < PROBCUT_MIN_DEPTH:
        return 0, 1.0, 0.0, 0.0
    phase = min(popcount(~(P | O)) // PROBCUT_PHASE_WIDTH, PROBCUT_PHASES - 1)
    row = min(depth, PROBCUT_MAX_DEPTH)
    a = mpc[phase, row, PARAM_A]
    sigma = mpc[phase, row, PARAM_SIGMA]
    if a < 0.25 or not sigma < 1e9:  # no usable fit: never cut
        return 0, 1.0, 0.0, 0.0
    return np.int64(mpc[phase, row, PARAM_SHALLOW]), a, mpc[phase, row, PARAM_B], ctl[PROBCUT] * sigma / 100.0


@njit(cache=True, nogil=True)
def negascout(P, O, depth, alpha, beta, ply, tt, ev, ctl, mbuf, kbuf, mpc) -> int:
    """The value of the position ``depth`` plies deep (fail-soft NegaScout).

    Called from Python with ``ply=0`` (the root), it also leaves the best
    square in ``ctl[BEST]`` (-1 for a pass).  The caller checks
    ``ctl[ABORTED]``: an aborted search's answer is void.

    With ``ctl[PROBCUT]`` positive, a null-window node below the root first
    asks a shallow search whether the deep one would almost surely fail high
    or low (multi-prob-cut, :mod:`.probcut`), and if so returns the bound at
    once: faster, no longer exact.  With ``ctl[PROBCUT]`` zero the value is
    minimax's.

    (The root is not a separate compiled function on purpose: a cached
    function that calls a cached *recursive* one crashes when loaded from
    numba's cache, numba issue #6061.  The helpers it calls recurse not.)
    """
    if ply == 0:
        ctl[BEST] = -1
    if _tick(ctl):
        return 0
    if depth <= 0:
        return leaf_value(P, O, ev)
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return final_value(P, O)
        return -negascout(O, P, depth, -beta, -alpha, ply + 1, tt, ev, ctl, mbuf, kbuf, mpc)

    ti = tt_index(P, O, tt.shape[0] - 1)
    cut, hash_move = _midgame_probe(tt, ti, P, O, depth, alpha, beta)
    if ply > 0:
        if cut != NO_CUT:
            return cut
        if depth == 1:
            return _leaf_parent(P, O, moves, beta, ev, ctl)
        if beta == alpha + 1 and -WIN_BONUS < alpha and beta < WIN_BONUS:
            shallow, a, b, margin = _probcut_params(P, O, depth, ctl, mpc)
            if shallow > 0:
                # The shallow searches run at this ply: this node's scratch rows are not filled yet.
                bound = np.int64(np.ceil((beta + margin - b) / a))
                if bound < WIN_BONUS:
                    v = negascout(P, O, shallow, bound - 1, bound, ply, tt, ev, ctl, mbuf, kbuf, mpc)
                    if ctl[ABORTED]:
                        return 0
                    if v >= bound:
                        return beta
                bound = np.int64(np.floor((alpha - margin - b) / a))
                if bound > -WIN_BONUS:
                    v = negascout(P, O, shallow, bound, bound + 1, ply, tt, ev, ctl, mbuf, kbuf, mpc)
                    if ctl[ABORTED]:
                        return 0
                    if v <= bound:
                        return alpha
                hash_move = tt_move(tt, ti) if tt_holds(tt, ti, P, O) else hash_move

    row = mbuf[ply]
    n = _order_moves(P, O, moves, hash_move, depth if ply > 0 else max(depth, 3), ev, row, kbuf[ply])
    best = -INF
    best_move = row[0]
    if ply == 0:
        ctl[ROOT_FIRST] = row[0]
    a = alpha
    for i in range(n):
        sq = row[i]
        f = flips(P, O, sq)
        np_ = P | f | (ONE << U64(sq))
        no = O ^ f
        if i == 0:
            v = -negascout(no, np_, depth - 1, -beta, -a, ply + 1, tt, ev, ctl, mbuf, kbuf, mpc)
        else:
            v = -negascout(no, np_, depth - 1, -a - 1, -a, ply + 1, tt, ev, ctl, mbuf, kbuf, mpc)
            if a < v < beta:
                v = -negascout(no, np_, depth - 1, -beta, -v, ply + 1, tt, ev, ctl, mbuf, kbuf, mpc)
        if ctl[ABORTED]:
            return 0
        if v > best:
            best = v
            best_move = sq
            if ply == 0:
                ctl[BEST] = sq
            if v > a:
                a = v
                if a >= beta:
                    break
    if tt_depth(tt, ti) <= depth or not tt_holds(tt, ti, P, O):
        _tt_store(tt, ti, P, O, depth, best, alpha, beta, best_move)
    return best


# ---------------------------------------------------------------------------
# Reference searches for the tests: plain minimax and plain alpha-beta
# ---------------------------------------------------------------------------


@njit(cache=True)
def minimax(P, O, depth, ev) -> int:
    """Plain negamax, no pruning: the reference the fast searches must equal."""
    if depth <= 0:
        return leaf_value(P, O, ev)
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return final_value(P, O)
        return -minimax(O, P, depth, ev)
    best = -INF
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        v = -minimax(O ^ f, P | f | (ONE << U64(sq)), depth - 1, ev)
        if v > best:
            best = v
    return best


@njit(cache=True)
def alphabeta(P, O, depth, alpha, beta, ev) -> int:
    """Plain fail-hard alpha-beta in board order (a second reference)."""
    if depth <= 0:
        return leaf_value(P, O, ev)
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return final_value(P, O)
        return -alphabeta(O, P, depth, -beta, -alpha, ev)
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        v = -alphabeta(O ^ f, P | f | (ONE << U64(sq)), depth - 1, -beta, -alpha, ev)
        if v >= beta:
            return beta
        if v > alpha:
            alpha = v
    return alpha


@njit(cache=True)
def brute_force_score(P, O) -> int:
    """Exact final disc difference (empties to the winner) by searching every line (tests only)."""
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return final_score(P, O)
        return -brute_force_score(O, P)
    best = -65
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        v = -brute_force_score(O ^ f, P | f | (ONE << U64(sq)))
        if v > best:
            best = v
    return best


# ---------------------------------------------------------------------------
# Endgame: the exact solver
# ---------------------------------------------------------------------------

# Move ordering of the solver (the weights of Edax's fast ordering): fewest replies for the
# opponent (corners count double) first, then own discs made safe in the corners, then fewest
# squares next to own discs for the opponent, then odd regions, then the square's type.
W_MOBILITY = 1 << 15
W_CORNER_STABILITY = 1 << 11
W_POTENTIAL_MOBILITY = 1 << 5
W_PARITY = 1 << 3
ETC_MIN_EMPTIES = 10  # from this many empties on, the children's table entries are looked at first (a cut-off for free)
SORT_ALPHA_DELTA = 8  # discs below alpha where the ordering's look stops refining a move's value
EVAL_ORDER_EMPTIES = 18  # from this many empties on, the evaluation orders too: 0-3 moves ahead, one more every 3 empties (from 15 on: more nodes and time, bench/RESULTS.md)
# The evaluation (its shallow searches and the midgame table's moves) orders the solver's moves only
# where the window is nearer zero than this many discs.  Far from zero (the tests of a large win) the
# side that must hold a bound needs the move whose proof is cheapest, which is fastest first; the
# evaluation's best move was dearer: line 9 of bench/endgame_games.obf (+58), its refutation of +60
# 20.0 M nodes with the evaluation, 6.4 M without (issue 38, bench/RESULTS.md).
EVAL_ORDER_MAX_ALPHA = 30
# From this many empties on, a node whose side to move must reach a low bound (alpha at most minus the
# stability threshold) looks first for a move after which its own stable discs already reach it
# (Edax's enhanced stability cut-off): the loser's nodes in the tests of a large win.
ESC_MIN_EMPTIES = 8
SQUARE_VALUE = np.array([
    18, 4, 16, 12, 12, 16, 4, 18,
    4, 2, 6, 8, 8, 6, 2, 4,
    16, 6, 14, 10, 10, 14, 6, 16,
    12, 8, 10, 0, 0, 10, 8, 12,
    12, 8, 10, 0, 0, 10, 8, 12,
    16, 6, 14, 10, 10, 14, 6, 16,
    4, 2, 6, 8, 8, 6, 2, 4,
    18, 4, 16, 12, 12, 16, 4, 18,
], dtype=np.int64)


@njit(cache=True, inline="always")
def _corner_weighted(x: np.uint64) -> int:
    return popcount(x) + popcount(x & CORNERS)


@njit(cache=True, inline="always")
def corner_stability(P: np.uint64) -> int:
    """Discs of ``P`` in a corner or next to an own corner on the edge (surely stable)."""
    near = (((P & U64(0x0100000000000001)) << U64(1)) | ((P & U64(0x8000000000000080)) >> U64(1))
            | ((P & U64(0x0000000000000081)) << U64(8)) | ((P & U64(0x8100000000000000)) >> U64(8)) | CORNERS)
    return popcount(near & P)


@njit(cache=True, inline="always")
def _solver_key(P, O, sq, f, parity) -> int:
    """How promising the move ``sq`` (flipping ``f``) looks for the solver: larger first."""
    mine = P | f | (ONE << U64(sq))
    theirs = O ^ f
    if theirs == ZERO:
        return 1 << 30  # a wipe-out
    empty = ~(mine | theirs)
    key = (36 - _corner_weighted(legal_moves(theirs, mine))) * W_MOBILITY
    key += corner_stability(mine) * W_CORNER_STABILITY
    key += (36 - _corner_weighted(neighbours(mine) & empty)) * W_POTENTIAL_MOBILITY
    if parity & QUADRANT_ID[sq]:
        key += W_PARITY
    return key + SQUARE_VALUE[sq]


@njit(cache=True)
def _eval_1(P, O, alpha, beta, ev) -> int:
    """The evaluation one move ahead, alpha-beta (for move ordering; a pass looks one more move ahead)."""
    moves = legal_moves(P, O)
    if moves == ZERO:
        return -evaluate(O, P, ev)
    best = -INF
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        v = -evaluate(O ^ f, P | f | (ONE << U64(sq)), ev)
        if v > best:
            best = v
            if v >= beta:
                break
    return best


@njit(cache=True)
def _eval_2(P, O, alpha, beta, ev) -> int:
    """The evaluation two moves ahead, alpha-beta (for move ordering)."""
    moves = legal_moves(P, O)
    if moves == ZERO:
        return -_eval_1(O, P, -beta, -alpha, ev)
    best = -INF
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        v = -_eval_1(O ^ f, P | f | (ONE << U64(sq)), -beta, -max(alpha, best), ev)
        if v > best:
            best = v
            if v >= beta:
                break
    return best


@njit(cache=True)
def _eval_3(P, O, alpha, beta, ev) -> int:
    """The evaluation three moves ahead, alpha-beta (for move ordering)."""
    moves = legal_moves(P, O)
    if moves == ZERO:
        return -_eval_2(O, P, -beta, -alpha, ev)
    best = -INF
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        v = -_eval_2(O ^ f, P | f | (ONE << U64(sq)), -beta, -max(alpha, best), ev)
        if v > best:
            best = v
            if v >= beta:
                break
    return best


@njit(cache=True, inline="always")
def _order_value(P, O, depth, beta, ev) -> int:
    """A shallow look for the solver's move ordering, fail-soft below ``beta``: plain,
    non-recursive (numba issue #6061: a cached recursive function must not call another
    cached recursive one)."""
    if depth <= 0:
        return evaluate(P, O, ev)
    if depth == 1:
        return _eval_1(P, O, -INF, beta, ev)
    if depth == 2:
        return _eval_2(P, O, -INF, beta, ev)
    return _eval_3(P, O, -INF, beta, ev)


@njit(cache=True, inline="always")
def _solver_probe(tt, i, P, O) -> int:
    """The slot of the two at ``i`` (even) holding ``(P, O)``, or -1."""
    if tt_holds(tt, i, P, O):
        return i
    if tt_holds(tt, i + 1, P, O):
        return i + 1
    return -1


@njit(cache=True, inline="always")
def _solver_store(tt, i, found, P, O, depth, value, alpha, beta, move):
    """Store a solved bound in the pair of slots at ``i``: the first keeps the deeper entries.

    The position's own slot is rewritten if it has one; else the new entry goes
    first when it is at least as deep as the first slot's (which moves to the
    second), and second otherwise: deep results, the costly ones, survive.
    """
    if found >= 0:
        _tt_store(tt, found, P, O, depth, value, alpha, beta, move)
        return
    if depth >= tt_depth(tt, i):
        for w in range(TT_WORDS):
            tt[i + 1, w] = tt[i, w]
        _tt_store(tt, i, P, O, depth, value, alpha, beta, move)
    else:
        _tt_store(tt, i + 1, P, O, depth, value, alpha, beta, move)


@njit(cache=True, inline="always")
def _fill_flips(P, O, moves, frow) -> None:
    """``frow[sq]``: the discs each move flips."""
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        frow[sq] = flips(P, O, sq)


@njit(cache=True)
def _etc_cutoff(tt, P, O, moves, beta, frow, floor) -> int:
    """Enhanced transposition cut-off: a child whose stored solved bound (at least as sure as the
    table depth ``floor`` says) already lifts this position to ``beta`` or more cuts it without a
    search; its bound (at least ``beta``) or -65."""
    mask = tt.shape[0] - 1
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = frow[sq]
        child_p = O ^ f
        child_o = P | f | (ONE << U64(sq))
        ci = tt_index(child_p, child_o, mask) & ~1
        found = _solver_probe(tt, ci, child_p, child_o)
        if found >= 0 and tt_depth(tt, found) >= floor and -tt_upper(tt, found) >= beta:
            return -tt_upper(tt, found)
    return -65


@njit(cache=True)
def _esc_cutoff(P, O, moves, beta, frow) -> int:
    """Enhanced stability cut-off: a move after which the side to move's stable discs alone
    guarantee ``beta`` or more cuts the position; that guarantee (at least ``beta``) or -65."""
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        f = frow[sq]
        bound = 2 * stable_count(P | f | (ONE << U64(sq)), O ^ f) - 64
        if bound >= beta:
            return bound
    return -65


@njit(cache=True, inline="always")
def _solver_cutoffs(tt, ti, P, O, moves, n_empty, alpha, beta, frow, floor):
    """The cut-offs that spare a solved position its search, cheapest first: ``(value, slot, alpha, beta)``.

    The stability cut-off (the opponent's stable discs cap the score), before
    the table is even read; the table's solved bounds at least as sure as
    ``floor`` (:func:`solved_floor`; they also narrow the window); the enhanced stability cut-off (a move after which the side to
    move's own stable discs reach ``beta``) from :data:`ESC_MIN_EMPTIES`
    empties where alpha is low; then enhanced transposition cut-offs from
    :data:`ETC_MIN_EMPTIES` empties.  ``value`` is :data:`NO_CUT` when the position must be searched
    in ``(alpha, beta)``; ``slot`` is the position's slot in the table's pair
    at ``ti`` (-1: none; not looked up when the stability cut).  Past the
    table, ``frow`` gets the flips of every move (:func:`_fill_flips`).
    """
    if alpha >= STABILITY_THRESHOLD[n_empty]:
        bound = 64 - 2 * stable_count(O, P)
        if bound <= alpha:
            return bound, -1, alpha, beta
    found = _solver_probe(tt, ti, P, O)
    if found >= 0 and tt_depth(tt, found) >= floor:
        lower, upper = tt_lower(tt, found), tt_upper(tt, found)
        if lower >= beta:
            return lower, found, alpha, beta
        if upper <= alpha:
            return upper, found, alpha, beta
        if lower == upper:
            return lower, found, alpha, beta
        alpha = max(alpha, lower)
        beta = min(beta, upper)
    _fill_flips(P, O, moves, frow)
    if n_empty >= ESC_MIN_EMPTIES and alpha <= -STABILITY_THRESHOLD[n_empty]:
        cut = _esc_cutoff(P, O, moves, beta, frow)
        if cut >= beta:
            return cut, found, alpha, beta
    if n_empty >= ETC_MIN_EMPTIES:
        cut = _etc_cutoff(tt, P, O, moves, beta, frow, floor)
        if cut >= beta:
            return cut, found, alpha, beta
    return NO_CUT, found, alpha, beta


@njit(cache=True, inline="always")
def _solver_order(P, O, moves, hash_move, n_empty, alpha, ev, row, keys, frow) -> int:
    """The solver's move ordering into ``row``: the table's move, then fastest first; returns how many.

    Fastest first: fewest replies for the opponent (corners counted double),
    then parity and stability (:func:`_solver_key`); from
    :data:`EVAL_ORDER_EMPTIES` empties on, and where alpha is within
    :data:`EVAL_ORDER_MAX_ALPHA` of zero, a shallow evaluation weighs in too,
    half a disc of it as much as one reply less.
    """
    parity = parity_of(~(P | O))
    sort_depth = -1
    if n_empty >= EVAL_ORDER_EMPTIES and abs(alpha) < EVAL_ORDER_MAX_ALPHA:
        sort_depth = min((n_empty - EVAL_ORDER_EMPTIES) // 3, 3)
    # The reply's look stops as soon as it shows the move far below alpha (Edax's sort_alpha):
    # where every move fails low there is nothing to rank finely (no measurable change alone).
    sort_beta = (SORT_ALPHA_DELTA - alpha) * SCALE
    n = 0
    while moves:
        sq = first_square(moves)
        moves &= moves - ONE
        if sq == hash_move:
            key = 1 << 40
        else:
            f = frow[sq]
            key = _solver_key(P, O, sq, f, parity)
            if sort_depth >= 0:
                mine = P | f | (ONE << U64(sq))
                v = _order_value(O ^ f, mine, sort_depth, sort_beta, ev)
                key -= (v // SCALE) * (W_MOBILITY // 2)
        row[n] = sq
        keys[n] = key
        n += 1
    sort_moves(row, keys, n)
    return n


@njit(cache=True, inline="always")
def _endgame_probcut(P, O, n_empty, alpha, beta, ply, tt, ev, ctl, mbuf, kbuf, mpc, ecut) -> int:
    """The selective solver's prob-cut at a null-window node: ``beta`` or ``alpha`` when a shallow
    search predicts the exact score beyond the window by ``ctl[ENDCUT]`` sigmas, else :data:`NO_CUT`.

    ``exact ~ a * shallow + b`` (discs) within ``margin`` (:mod:`.probcut`'s endgame table); the
    shallow search is the midgame's (centi-discs, its own multi-prob-cut as ``ctl[PROBCUT]`` says,
    as the table was fitted).  It runs at this ply: the node's scratch rows are not filled yet.
    """
    a = ecut[n_empty, PARAM_A]
    sigma = ecut[n_empty, PARAM_SIGMA]
    if a < 0.25 or not sigma < 1e9:  # no usable fit: never cut
        return NO_CUT
    b = ecut[n_empty, PARAM_B]
    shallow = np.int64(ecut[n_empty, PARAM_SHALLOW])
    margin = ctl[ENDCUT] * sigma / 100.0
    bound = np.int64(np.ceil((beta + margin - b) / a * SCALE))
    if bound < WIN_BONUS:
        v = negascout(P, O, shallow, bound - 1, bound, ply, tt, ev, ctl, mbuf, kbuf, mpc)
        if ctl[ABORTED]:
            return 0
        if v >= bound:
            return beta
    bound = np.int64(np.floor((alpha - margin - b) / a * SCALE))
    if bound > -WIN_BONUS:
        v = negascout(P, O, shallow, bound, bound + 1, ply, tt, ev, ctl, mbuf, kbuf, mpc)
        if ctl[ABORTED]:
            return 0
        if v <= bound:
            return alpha
    return NO_CUT


@njit(cache=True, nogil=True)
def solve(P, O, alpha, beta, ply, tt, ev, ctl, mbuf, kbuf, fbuf, mpc, ecut) -> int:
    """Exact final disc difference for the side to move, fail-soft in (alpha, beta).

    A score <= alpha only says "at most", one >= beta "at least".  Called
    from Python with ``ply=0``, it also leaves the best square in
    ``ctl[BEST]`` (-1 for a pass); the caller checks ``ctl[ABORTED]``.

    With ``ctl[ENDCUT]`` positive the solve is selective: a null-window node
    of :data:`.probcut.ENDGAME_MIN_EMPTIES` empties or more is cut where a
    shallow search predicts the score beyond the window by that many
    hundredths of sigma (:func:`_endgame_probcut`); its table entries are
    marked with that rank (:func:`solved_depth`), so that no search surer
    than it takes them for proofs.  With ``ctl[ENDCUT]`` zero it is exact.

    By number of empties, as Edax's ``endgame.c``: with
    :data:`.endgame.SHALLOW_EMPTIES` or fewer the position goes to
    :mod:`.endgame`'s table-free solvers; above, this function is a
    principal variation search with a transposition table (pairs of slots
    keeping the deep entries), the cut-offs of :func:`_solver_cutoffs` and
    the ordering of :func:`_solver_order`.  (The recursion stays in this one
    function: numba issue #6061, see :func:`negascout`.)
    """
    if ply == 0:
        ctl[BEST] = -1
    if _tick(ctl):
        return 0
    n_empty = popcount(~(P | O))
    if ply > 0 and n_empty <= SHALLOW_EMPTIES:
        r = shallow(P, O, alpha, beta, n_empty)
        ctl[NODES] += unpack_nodes(r) - 1
        return unpack_score(r)
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return final_score(P, O)
        return -solve(O, P, -beta, -alpha, ply + 1, tt, ev, ctl, mbuf, kbuf, fbuf, mpc, ecut)

    ti = tt_index(P, O, tt.shape[0] - 1) & ~1
    frow = fbuf[ply]
    rank = solved_rank(ctl)
    if ply > 0:
        cut, found, alpha, beta = _solver_cutoffs(tt, ti, P, O, moves, n_empty, alpha, beta, frow, solved_floor(rank))
        if cut != NO_CUT:
            return cut
        if rank != EXACT_RANK and beta == alpha + 1 and n_empty >= ENDGAME_MIN_EMPTIES:
            cut = _endgame_probcut(P, O, n_empty, alpha, beta, ply, tt, ev, ctl, mbuf, kbuf, mpc, ecut)
            if ctl[ABORTED]:
                return 0
            if cut != NO_CUT:
                return cut
            found = _solver_probe(tt, ti, P, O)  # the shallow searches may have moved the table's rows
    else:
        found = _solver_probe(tt, ti, P, O)
        _fill_flips(P, O, moves, frow)
    hash_move = tt_move(tt, found) if found >= 0 else -1
    if found >= 0 and tt_depth(tt, found) < EXACT_DEPTH and abs(alpha) >= EVAL_ORDER_MAX_ALPHA:
        hash_move = -1  # the midgame search's move: the evaluation's choice (see EVAL_ORDER_MAX_ALPHA)
    alpha0 = alpha  # the window narrowed by the table is the one the result is stored for

    row = mbuf[ply]
    n = _solver_order(P, O, moves, hash_move, n_empty, alpha, ev, row, kbuf[ply], frow)
    best = -65
    best_move = row[0]
    a = alpha
    child_shallow = n_empty - 1 <= SHALLOW_EMPTIES
    for i in range(n):
        sq = row[i]
        f = frow[sq]
        np_ = P | f | (ONE << U64(sq))
        no = O ^ f
        if child_shallow:
            # no table below: a full window costs about what a null window does
            r = shallow(no, np_, -beta, -a, n_empty - 1)
            ctl[NODES] += unpack_nodes(r)
            v = -unpack_score(r)
        elif i == 0:
            v = -solve(no, np_, -beta, -a, ply + 1, tt, ev, ctl, mbuf, kbuf, fbuf, mpc, ecut)
        else:
            v = -solve(no, np_, -a - 1, -a, ply + 1, tt, ev, ctl, mbuf, kbuf, fbuf, mpc, ecut)
            if a < v < beta:
                v = -solve(no, np_, -beta, -v, ply + 1, tt, ev, ctl, mbuf, kbuf, fbuf, mpc, ecut)
        if ctl[ABORTED]:
            return 0
        if v > best:
            best = v
            best_move = sq
            if ply == 0:
                ctl[BEST] = sq
            if v > a:
                a = v
                if a >= beta:
                    break
    if best <= alpha0:
        # Every move failed low: the "best" is only the largest bound, no move to try first next
        # time (as Edax keeps its table's moves); the position's earlier move, if any, stays.
        best_move = tt_move(tt, found) if found >= 0 else -1
    _solver_store(tt, ti, found, P, O, solved_depth(n_empty, rank), best, alpha0, beta, best_move)
    return best


tolerate_read_only_cache(globals())
