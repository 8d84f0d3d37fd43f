"""The engine: iterative deepening and the endgame solver under a clock.

The compiled searches (:mod:`.search`) do the work; this module owns their
arrays, deepens iteratively, decides when to switch to the exact solver, and
stops a search in the middle of an iteration when its time is up.  Stopping
works through a flag in the control array that a timer thread sets; the
compiled roots release the GIL (``nogil=True``) so that the timer runs while
they search.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ...protocol import Board, Colour, Move, square_name
from . import evaluation
from . import search as S
from .bitboard import flips, legal_moves
from .patterns import TABLES, load_weights
from .probcut import ENDGAME_THRESHOLDS, PARAM_SIGMA, empty_endgame_table, empty_table, load_endgame_table, load_table

DEFAULT_TT_BITS = 20  # 2**20 entries of 32 bytes, 32 MB

# Multi-prob-cut's threshold (:mod:`.probcut`), in hundredths of the regression's sigma: a node is
# cut when the shallow search predicts the deep one beyond its bound by this many sigmas.
PROBCUT_THRESHOLD = 150

# A move is settled (the deepening stops before its time is up) when the best move has been the
# same for the last SETTLE_ITERATIONS iterations, the last at least SETTLE_MIN_DEPTH deep, and every
# other move is at least SETTLE_MARGIN worse at that depth (search units: centi-discs).
SETTLE_MIN_DEPTH = 10
SETTLE_ITERATIONS = 4
SETTLE_MARGIN = 2 * evaluation.SCALE

# The deepening starts another iteration while at most this fraction of the budget is used: one
# costs about twice or three times the last (with multi-prob-cut), and one cut short by the clock
# still gives the move that beat the last iteration's best, if any did.
NEXT_ITERATION_FRACTION = 0.5

# The exact solver's first guess: the evaluation after a deepening to GUESS_DEPTH plies, at most
# the empties less GUESS_EMPTIES_LEFT (closer to the end the guess is not worth its time).  13: 7
# plies at 20 empties, 10 from 23; with 8 (10 plies from 18 empties) the guess alone took 0.09-0.15 s
# of CPU on won positions of 20 empties that Edax solves in 0.15-0.27 s, where the deeper guess saved
# no test; 10-15 % less CPU at 14-20 empties (random play-outs of bench/endgame_games.obf), about the
# same on that set's 21-24 empties, 11-72 % less on its lines 10, 11 and 17 (issue 38, bench/RESULTS.md).
GUESS_DEPTH = 10
GUESS_EMPTIES_LEFT = 13
# The null-window tests of the exact score start this many discs nearer to zero than the guess:
# a test above the score (the winner cannot reach it: all his moves refuted) costs up to 50 times
# one below it; from a guess beyond the score (+52 for +46, -41 for -34) every test but one was of
# the costly kind.  10 discs: 18 % less CPU in all on FFO #40-#44 and 10 positions of 20-24 empties
# from the demo tournament's games (issue 27, bench/RESULTS.md).  8 discs: 665 M nodes on FFO
# #40-#44 and the games set but its draw, against 775 M at 10 and 681 M at 6 (a test 2 discs under
# the score can cost more than one at it: line 16, +58, 162 M nodes at 56, 57 M at 58).
GUESS_TOWARD_ZERO = 8

# Where the exact solve does not fit in a move's time, the endgame is first solved selectively
# (:data:`.probcut.ENDGAME_THRESHOLDS`, then exactly) when the first level's cautious estimate,
# SELECTIVE_COST times the exact solve's (:func:`solve_seconds`), fits in the budget, and from at
# most SELECTIVE_MAX_EMPTIES empties; each level is begun while at most SELECTIVE_NEXT_FRACTION of
# the budget is used; the deepening before it (the first guess, and the table's moves for the
# solver's ordering) gets SELECTIVE_DEEPENING_SHARE.  Where not even the first level ends, the move
# is the deepening's, a third of the budget deep: the estimate is cautious on purpose.
SELECTIVE_COST = 0.1
SELECTIVE_MAX_EMPTIES = 26
SELECTIVE_NEXT_FRACTION = 0.5
SELECTIVE_DEEPENING_SHARE = 0.3


@dataclass
class SearchResult:
    """What a search found: the move, its value and how far it looked."""

    square: Optional[int]  # None for a pass
    score: float  # discs for the side to move (exact when ``exact``: empty squares to the winner)
    exact: bool  # the score is the exact final disc difference (solved)
    depth: int  # plies of the last finished iteration (empties when solved)
    nodes: int
    seconds: float
    outcome_only: bool = False  # solved for win/draw/loss only: score is its sign
    selectivity: int = 0  # solved selectively at this threshold (hundredths of sigma): score is probable, not proven
    settled: str = ""  # why the search stopped before its time was up ("" if it did not)
    unfinished_move: bool = False  # the move beat the last finished iteration's in the iteration the clock cut short
    iterations: list[tuple[int, float, Optional[int]]] = field(default_factory=list)

    @property
    def move_name(self) -> str:
        return "PASS" if self.square is None else square_name(self.square)

    def move(self, colour: Colour) -> Move:
        return Move(colour, self.square)

    def comments(self) -> list[str]:
        """The ``(C ...)`` texts the agent writes before its move."""
        if self.exact and self.outcome_only:
            word = "win" if self.score > 0 else "loss" if self.score < 0 else "draw"
            head = f"solved {word} with {self.depth} empties"
        elif self.exact:
            head = f"solved exactly {self.score:+.0f} (empties to the winner) with {self.depth} empties"
        elif self.selectivity:
            head = (f"selective {self.selectivity / 100:.1f} sigma {self.score:+.0f} (empties to the winner)"
                    f" with {self.depth} empties")
        else:
            head = f"depth {self.depth} eval {self.score:+.2f}"
            if self.unfinished_move:
                head += " of its best, which the next depth (cut short by the clock) found beaten by"
        nps = self.nodes / self.seconds if self.seconds > 0 else 0.0
        return [f"champion {head} move {self.move_name} nodes {self.nodes} time {self.seconds:.2f}s nps {nps:.0f}"]


class Engine:
    """A search engine with its own transposition table.

    ``eval_kind`` chooses the evaluation (:data:`.evaluation.EVAL_PATTERNS`, the
    learned one, or :data:`.evaluation.EVAL_PAPER_SIMPLIFIED`); ``weights`` overrides the
    shipped weights.  With ``settle`` (the default) a search under a clock
    stops early once its move is settled: a single legal move, or the same
    best move for several iterations with a clear margin over every other.
    ``probcut`` is multi-prob-cut's threshold for :meth:`think`'s deepening
    (hundredths of sigma, 0: exact searches; :meth:`search_depth` is exact
    unless asked); ``probcut_table`` overrides the shipped regression table,
    ``endgame_table`` the endgame's (:func:`.probcut.load_endgame_table`).
    """

    def __init__(
        self,
        tt_bits: int = DEFAULT_TT_BITS,
        eval_kind: int = evaluation.EVAL_PATTERNS,
        weights: Optional[np.ndarray] = None,
        settle: bool = True,
        probcut: int = PROBCUT_THRESHOLD,
        probcut_table: Optional[np.ndarray] = None,
        endgame_table: Optional[np.ndarray] = None,
    ) -> None:
        self.settle = settle
        self.probcut = probcut
        if probcut_table is None:
            # The table is fitted on the learned evaluation's values: another evaluation cuts nothing.
            probcut_table = load_table() if eval_kind == evaluation.EVAL_PATTERNS and weights is None else empty_table()
        self.mpc = np.ascontiguousarray(probcut_table, dtype=np.float64)
        if endgame_table is None:
            endgame_table = (load_endgame_table() if eval_kind == evaluation.EVAL_PATTERNS and weights is None
                             else empty_endgame_table())
        self.ecut = np.ascontiguousarray(endgame_table, dtype=np.float64)
        size = 1 << tt_bits
        # int64 words only: a cached recursive numba function must not cast
        # its return values (numba issue #6061/#6713: segfault on load).
        self.tt = S.new_table(size)
        if weights is None:
            weights = load_weights() if eval_kind == evaluation.EVAL_PATTERNS else np.zeros((1, TABLES.n_features), np.int32)
        self.ev = (eval_kind, np.ascontiguousarray(weights, dtype=np.int32), TABLES.squares, TABLES.lengths, TABLES.offsets)
        self.ctl = np.zeros(S.CTL_SLOTS, dtype=np.int64)
        self.mbuf = np.zeros((S.MAX_PLY, S.MAX_MOVES), dtype=np.int64)
        self.kbuf = np.zeros((S.MAX_PLY, S.MAX_MOVES), dtype=np.int64)
        self.fbuf = np.zeros((S.MAX_PLY, 64), dtype=np.uint64)

    # -- control ---------------------------------------------------------------

    def clear(self) -> None:
        """Forget the transposition table (a new game, or a test that needs a fresh table)."""
        S.clear_table(self.tt)

    def stop(self) -> None:
        """Ask a running search to stop (any thread); it returns within ~1000 nodes."""
        self.ctl[S.STOP] = 1

    def _reset(self, node_limit: int) -> None:
        self.ctl[:] = 0
        self.ctl[S.NODE_LIMIT] = node_limit

    @property
    def aborted(self) -> bool:
        return bool(self.ctl[S.ABORTED])

    # -- one fixed search --------------------------------------------------------

    def _search_root(self, P: np.uint64, O: np.uint64, depth: int, alpha: int, beta: int,
                     selective: bool = False) -> tuple[int, int]:
        self.ctl[S.PROBCUT] = self.probcut if selective else 0
        value = S.negascout(P, O, depth, alpha, beta, 0, self.tt, self.ev, self.ctl, self.mbuf, self.kbuf, self.mpc)
        return int(value), int(self.ctl[S.BEST])

    def _solve_root(self, P: np.uint64, O: np.uint64, alpha: int, beta: int, threshold: int = 0) -> tuple[int, int]:
        # A selective solve's shallow searches are the deepening's (multi-prob-cut on), as its table was fitted.
        self.ctl[S.ENDCUT] = threshold
        self.ctl[S.PROBCUT] = self.probcut if threshold else 0
        value = S.solve(P, O, alpha, beta, 0, self.tt, self.ev, self.ctl, self.mbuf, self.kbuf, self.fbuf,
                        self.mpc, self.ecut)
        return int(value), int(self.ctl[S.BEST])

    def evaluate(self, board: Board) -> float:
        """The static evaluation of ``board``, in discs for the side to move."""
        return evaluation.evaluate(np.uint64(board.own), np.uint64(board.opp), self.ev) / evaluation.SCALE

    def search_depth(self, board: Board, depth: int, node_limit: int = 0, selective: bool = False) -> tuple[int, int]:
        """``(value in search units, square or -1)`` of one NegaScout search (no deepening).

        Exact (minimax's value) unless ``selective``: then with multi-prob-cut, as :meth:`think` searches.
        """
        self._reset(node_limit)
        value, sq = self._search_root(np.uint64(board.own), np.uint64(board.opp), depth, -S.INF, S.INF, selective)
        return int(value), int(sq)

    def solve_window(self, board: Board, alpha: int, beta: int, node_limit: int = 0) -> tuple[int, int]:
        """``(score, square or -1)`` of the exact solver within ``(alpha, beta)``."""
        self._reset(node_limit)
        value, sq = self._solve_root(np.uint64(board.own), np.uint64(board.opp), alpha, beta)
        return int(value), int(sq)

    def solve_selective(self, board: Board, threshold: int, guess: float = 0.0, node_limit: int = 0) -> tuple[int, int]:
        """``(score, square or -1)`` of the solver at one selectivity ``threshold`` (hundredths of
        sigma, :data:`.probcut.ENDGAME_THRESHOLDS`; 0: exact), by null-window tests from ``guess`` (discs).

        The score is probable, not proven (exact with ``threshold`` 0); ``(0, -1)`` if stopped.
        """
        self._reset(node_limit)
        found = self._selective_score(np.uint64(board.own), np.uint64(board.opp), threshold, guess)
        return (0, -1) if found is None else found

    def _selective_score(self, P: np.uint64, O: np.uint64, threshold: int, guess: float) -> Optional[tuple[int, int]]:
        """MTD(f) at one threshold: ``(score, square)``, ``None`` if stopped.

        As :meth:`_exact_from_bound`, with two differences: a selective test's fail-soft value
        may be odd (a cut returns its window's bound), so a test "score >= b" that fails only says
        "at most b - 2" (scores are even); and successive tests need not agree (each cuts on its
        own window), so the bounds only ever narrow, which ends the loop.
        """
        lower, upper = -64, 64
        move = -1
        g = min(max(2 * round(guess / 2), lower), upper)
        while lower < upper:
            b = min(max(g, lower + 2), upper)
            value, sq = self._solve_root(P, O, b - 1, b, threshold)
            if self.ctl[S.ABORTED]:
                return None
            if value >= b:
                lower, move = max(b, value - (value & 1)), sq
                g = lower
            else:
                upper = min(b - 2, value + (value & 1))
                g = upper
        if move < 0:
            _, move = self._solve_root(P, O, lower - 1, lower + 1, threshold)
            if self.ctl[S.ABORTED]:
                return None
        return lower, move

    # -- the full search under a clock --------------------------------------------

    def think(
        self,
        board: Board,
        seconds: Optional[float] = None,
        max_depth: int = 60,
        exact: Optional[bool] = None,
        node_limit: int = 0,
    ) -> SearchResult:
        """The best move of ``board`` within ``seconds`` of wall-clock time.

        Deepens iteratively; near the end of the game (or with ``exact=True``)
        runs the exact solver, first for win/draw/loss and then for the score.
        ``exact=False`` never solves.  Without ``seconds`` the search ends at
        ``max_depth`` (or when solved).  The result is always a legal move of
        the side to move (``square is None`` for a pass).
        """
        started = time.perf_counter()
        P, O = np.uint64(board.own), np.uint64(board.opp)
        n_empty = 64 - bin(board.white | board.black).count("1")
        if legal_moves(P, O) == 0:
            return SearchResult(None, self.evaluate(board), False, 0, 0, time.perf_counter() - started)

        deadline = None if seconds is None else started + seconds
        timer = None
        self._reset(node_limit)
        if seconds is not None:
            timer = threading.Timer(max(0.0, seconds), self.stop)
            timer.daemon = True
            timer.start()
        try:
            return self._think(board, P, O, n_empty, started, deadline, max_depth, exact, node_limit)
        finally:
            if timer is not None:
                timer.cancel()

    def _think(self, board: Board, P: np.uint64, O: np.uint64, n_empty: int, started: float, deadline: Optional[float],
               max_depth: int, exact: Optional[bool], node_limit: Optional[int]) -> SearchResult:
        nodes = 0
        result: Optional[SearchResult] = None
        iterations: list[tuple[int, float, Optional[int]]] = []

        def elapsed() -> float:
            return time.perf_counter() - started

        def time_fraction_left(fraction: float) -> bool:
            # Is at most ``fraction`` of the budget used?
            return deadline is None or elapsed() < fraction * (deadline - started)

        solve_now = exact is True or (exact is None and n_empty <= 14)
        if exact is not None:
            try_solve = exact
        elif deadline is None:
            try_solve = n_empty <= 20
        else:
            try_solve = solve_seconds(n_empty) <= deadline - started
        # Under a clock that the exact solve does not fit in: selective levels first (see SELECTIVE_MAX_EMPTIES).
        try_selective = (exact is None and deadline is not None and not try_solve and n_empty <= SELECTIVE_MAX_EMPTIES
                         and SELECTIVE_COST * solve_seconds(n_empty) <= deadline - started
                         and bool(np.isfinite(self.ecut[n_empty, PARAM_SIGMA])))
        # Iterative deepening (skipped when solving at once); when a solve
        # is planned, it leaves most of the time to the solver.
        depth = 0
        settle = self.settle and deadline is not None and exact is not True
        single_move = int(legal_moves(P, O)) & (int(legal_moves(P, O)) - 1) == 0
        # A single legal move leaves nothing to choose: depth 1 for the comment, then answer.  Where a
        # solve was planned at once anyway (few empties: milliseconds), it still runs, so that the
        # score is the exact one and not a one-ply evaluation of an all but finished game.
        single_move_settles = settle and single_move and not solve_now
        if single_move_settles:
            max_depth = 1
            try_solve = try_selective = False
        settled = "single move" if single_move_settles else ""
        if try_selective:
            # The levels need a guess and the table's moves, not depth: near the end an iteration
            # costs so much more than the last that one begun early in the share ran out the clock
            # (17-18 empties at 0.15 s: depth 15-16, no level begun).
            max_depth = min(max_depth, GUESS_DEPTH)
        if not solve_now:
            budget_share = 0.3 if try_solve else SELECTIVE_DEEPENING_SHARE if try_selective else 1.0
            while depth < min(max_depth, n_empty):
                depth += 1
                value, sq = self._search_root(P, O, depth, -S.INF, S.INF, selective=True)
                nodes = int(self.ctl[S.NODES])
                if self.ctl[S.ABORTED]:
                    depth -= 1
                    # The root records a move only once its search at this depth has ended; searched
                    # after the last iteration's best, another move recorded beat it at this depth.
                    partial = int(self.ctl[S.BEST])
                    if (result is not None and partial >= 0 and partial != result.square
                            and int(self.ctl[S.ROOT_FIRST]) == result.square):
                        result.square = partial
                        result.unfinished_move = True
                    break
                score = _to_discs(int(value))
                sure = abs(int(value)) >= evaluation.WIN_BONUS
                result = SearchResult(None if sq < 0 else int(sq), score, False, depth, nodes, elapsed())
                iterations.append((depth, score, result.square))
                if sure and depth >= n_empty:
                    break
                if settle and not try_solve and not try_selective and not sure and self._settled(P, O, depth, int(value), iterations):
                    settled = f"same move for {SETTLE_ITERATIONS} iterations, the others {SETTLE_MARGIN / evaluation.SCALE:.0f} discs worse"
                    nodes = int(self.ctl[S.NODES])
                    break
                # An iteration costs several times the last one: do not start what cannot end.
                # (It need not end to be of use: the stop keeps a better move found on the way.)
                if not time_fraction_left(NEXT_ITERATION_FRACTION * budget_share):
                    break
        if try_selective and not self.ctl[S.ABORTED]:
            result = self._solve_levels(P, O, n_empty, result, time_fraction_left) or result
            nodes = int(self.ctl[S.NODES])
            if self.ctl[S.ABORTED] or not time_fraction_left(SELECTIVE_NEXT_FRACTION):
                try_solve = False
            else:
                try_solve = True  # every level done with time to spare: the exact solve, from its score
        if try_solve and (solve_now or (not self.ctl[S.ABORTED] and time_fraction_left(0.5))):
            solved = self._solve(P, O, n_empty, None if result is None else result.score)
            nodes = int(self.ctl[S.NODES])  # the solver's nodes on top of the deepening's
            if solved is not None and solved.outcome_only and result is not None and result.selectivity:
                solved = None  # a probable score and its move say more than a proven sign
            if solved is not None:
                solved.nodes = nodes
                solved.seconds = elapsed()
                solved.iterations = iterations
                return solved
        if result is None:
            # Not even depth 1 finished (a tiny budget): the best-ordered move.
            result = SearchResult(_first_ordered(P, O), 0.0, False, 0, nodes, elapsed())
        result.nodes = nodes
        result.seconds = elapsed()
        result.iterations = iterations
        result.settled = settled
        return result

    def _solve_levels(self, P: np.uint64, O: np.uint64, n_empty: int, result: Optional[SearchResult],
                      time_fraction_left: "Callable[[float], bool]") -> Optional[SearchResult]:
        """The selective solver at growing thresholds (:data:`.probcut.ENDGAME_THRESHOLDS`) while time
        allows: the last level that ended, ``None`` if none did.  Each starts from the last one's score."""
        guess = 0.0 if result is None else result.score
        solved: Optional[SearchResult] = None
        for threshold in ENDGAME_THRESHOLDS:
            if solved is not None and not time_fraction_left(SELECTIVE_NEXT_FRACTION):
                break
            found = self._selective_score(P, O, threshold, guess)
            if found is None:
                break
            score, sq = found
            guess = score
            solved = SearchResult(None if sq < 0 else sq, float(score), False, n_empty, int(self.ctl[S.NODES]), 0.0,
                                  selectivity=threshold)
        return solved

    def _settled(self, P: np.uint64, O: np.uint64, depth: int, value: int, iterations: list[tuple[int, float, Optional[int]]]) -> bool:
        """Is the move of the last iteration settled: the same for a while, and clearly the best?

        Each other move is searched ``depth`` deep with a null window just
        under the best value less the margin; one that reaches it, or a
        stop, leaves the move unsettled.
        """
        if depth < SETTLE_MIN_DEPTH or len(iterations) < SETTLE_ITERATIONS:
            return False
        best = iterations[-1][2]
        if best is None or any(square != best for _, _, square in iterations[-SETTLE_ITERATIONS:]):
            return False
        bound = value - SETTLE_MARGIN  # every other move must be worth at most this
        moves = int(legal_moves(P, O))
        while moves:
            sq = (moves & -moves).bit_length() - 1
            moves &= moves - 1
            if sq == best:
                continue
            f = flips(P, O, sq)
            child_p, child_o = O ^ f, P | f | np.uint64(1 << sq)
            self.ctl[S.PROBCUT] = self.probcut  # as the deepening searched them
            v = -S.negascout(child_p, child_o, depth - 1, -bound - 1, -bound, 1, self.tt, self.ev, self.ctl,
                             self.mbuf, self.kbuf, self.mpc)
            if self.ctl[S.ABORTED] or v > bound:
                return False
        return True

    def _solve(self, P: np.uint64, O: np.uint64, n_empty: int, guess: Optional[float] = None) -> Optional[SearchResult]:
        """Win/draw/loss first, then the exact score; ``None`` if stopped before the first.

        The exact score is found by null-window tests (MTD(f)) starting from ``guess``
        (discs; by default a short deepening with the evaluation): a search with a wide
        window cuts far less than tests near the score (FFO #43: 117 M nodes with the
        window (-65, 0), 81 M with the tests, bench/RESULTS.md).
        """
        if guess is None:
            guess = self._guess(P, O, n_empty)
        base_nodes = int(self.ctl[S.NODES])
        self.ctl[S.NODES] = 0
        value, sq = self._solve_root(P, O, -1, 1)
        if self.ctl[S.ABORTED]:
            self.ctl[S.NODES] += base_nodes
            return None
        wld = int(value)
        wld_move = int(sq)
        value, sq = self._exact_from_bound(P, O, wld, wld_move, guess)
        nodes = int(self.ctl[S.NODES]) + base_nodes
        self.ctl[S.NODES] = nodes
        if self.ctl[S.ABORTED]:
            sign = 1.0 if wld > 0 else -1.0 if wld < 0 else 0.0
            return SearchResult(None if wld_move < 0 else wld_move, sign, True, n_empty, nodes, 0.0, outcome_only=True)
        return SearchResult(None if sq < 0 else int(sq), float(value), True, n_empty, nodes, 0.0)

    def _guess(self, P: np.uint64, O: np.uint64, n_empty: int) -> float:
        """The evaluation's idea of the score (discs), from a short deepening.  Its table
        entries stay: their moves order the solver near the root (fewer nodes in all on FFO
        #40-#44 than with the deepening in a table of its own)."""
        value = 0
        for depth in range(1, min(GUESS_DEPTH, n_empty - GUESS_EMPTIES_LEFT) + 1):
            value, _ = self._search_root(P, O, depth, -S.INF, S.INF)
            if self.ctl[S.ABORTED]:
                return 0.0
        return _to_discs(int(value))

    def _exact_from_bound(self, P: np.uint64, O: np.uint64, wld: int, wld_move: int, guess: float) -> tuple[int, int]:
        """``(score, square)`` from the win/draw/loss search's fail-soft result ``wld``: MTD(f).

        Scores are even (empty squares to the winner), so each test "score >= b?" is a null
        window (b - 1, b) at an even b.  A move is taken from a test that failed high (it proves
        its bound); when none did, one last search in a window around the score finds it.
        """
        if wld == 0:
            return 0, wld_move
        lower, upper = (wld, 64) if wld > 0 else (-64, wld)
        move = wld_move if wld > 0 else -1
        # Approach the score from the side of zero: the tests that prove the winner's lower
        # bounds (one good move of his at each of his turns) cost far less than the tests that
        # refute all his moves, of which the last one is needed anyway (see GUESS_TOWARD_ZERO).
        start = guess - GUESS_TOWARD_ZERO if guess > 0 else guess + GUESS_TOWARD_ZERO
        g = min(max(2 * round(start / 2), lower), upper)
        while lower < upper:
            b = g + 2 if g == lower else g
            value, sq = self._solve_root(P, O, b - 1, b)
            if self.ctl[S.ABORTED]:
                return g, move
            if value >= b:
                lower, move = value, sq
            else:
                upper = value
            g = value
        if move < 0:
            value, move = self._solve_root(P, O, lower - 1, lower + 1)
        return lower, move


def solve_seconds(n_empty: int) -> float:
    """A cautious guess of the exact solver's time with ``n_empty`` empties.

    Fitted on bench/endgame.py after issue 16 (self-play positions, loaded
    machine: at most 0.4 s at 18 empties, 1.2 s at 20, 17 s at 22; FFO
    #40-#44 take 1-11 s at 20-23), times 2.6 per extra empty; the engine
    tries to solve only when this fits in its budget.
    """
    return 0.5 * 2.6 ** (n_empty - 18)


def _to_discs(value: int) -> float:
    """A search value in discs (a sure result loses its bonus)."""
    if value >= evaluation.WIN_BONUS:
        value -= evaluation.WIN_BONUS
    elif value <= -evaluation.WIN_BONUS:
        value += evaluation.WIN_BONUS
    return value / evaluation.SCALE


def _first_ordered(P: np.uint64, O: np.uint64) -> int:
    """A move without any search (a corner if there is one): for a budget too small for depth 1."""
    moves = int(legal_moves(P, O))
    squares = [sq for sq in range(64) if moves >> sq & 1]
    corners = [sq for sq in squares if sq in (0, 7, 56, 63)]
    return (corners or squares)[0]
