"""Training the learned evaluation: self-play, exact endgame labels, ridge regression.

1. **Games.**  Self-play from the start: a few random moves for variety
   (6 to 20 plies), then the engine plays at a shallow fixed depth with a
   little noise (``--noise``: the chance of a random move).
2. **Labels.**  When a game reaches ``solve_empties`` empties, the exact
   solver finds the final disc difference under perfect play and finishes
   the game perfectly.  Every position of the game is labelled with that
   result, seen from its side to move: exact for the positions from there
   on, the outcome of the game before (the usual way pattern evaluations
   are trained, e.g. Logistello).
3. **Fit.**  The features are one-hot pattern configurations
   (:mod:`.patterns`); per stage of the game (empties // 4) a ridge
   regression (conjugate gradients on the normal equations, in numpy) fits
   the weights on the positions of that stage and its two neighbours.
   Weights are saved in centi-discs as int16 in an ``.npz`` file.
4. **Rounds.**  With ``rounds`` > 1, each later round plays its games
   with the weights of the round before (round 1 plays with seed 002's
   heuristics, simplified: ``evaluation.evaluate_paper_simplified``, or
   with given weights: ``--players``), and each fit uses the positions of
   every round so far.
5. **Positions kept.**  The games are kept as positions (both sides' discs
   and the label), not as features: ``--save-positions`` writes them,
   ``--positions`` adds an earlier run's to every fit, so games played once
   fit any set of patterns, and runs on several machines or cores add up.

Everything is seeded: the same seed and sizes give the same weights.  Each
game draws from its own generator (:func:`game_rng`), so ``--jobs``
processes play the same games as one.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
from numba import njit

from ...protocol import BLACK, WHITE, Board, Move
from . import evaluation
from .compiled_cache import tolerate_read_only_cache, use_compiled_cache
from .engine import Engine
from .patterns import N_STAGES, STAGE_WIDTH, TABLES

use_compiled_cache()  # before the first @njit (see compiled_cache.py)


@dataclass
class Positions:
    """Self-play positions and their labels: the discs of the side to move (``own``) and of the other
    side (``opp``), uint64 [n], and the final disc difference for the side to move (``labels``, float64).

    Positions, not features: the same games fit any set of patterns (:func:`features` reads them).
    """

    own: np.ndarray
    opp: np.ndarray
    labels: np.ndarray
    games: int

    @staticmethod
    def join(parts: Sequence["Positions"]) -> "Positions":
        """The positions of ``parts``, in their order."""
        return Positions(
            np.concatenate([p.own for p in parts]).astype(np.uint64),
            np.concatenate([p.opp for p in parts]).astype(np.uint64),
            np.concatenate([p.labels for p in parts]).astype(np.float64),
            sum(p.games for p in parts),
        )


def save_positions(positions: Positions, path: str, **meta: object) -> None:
    """Write the positions (labels as int8 discs: a final disc difference is an integer) with what made them."""
    arrays: dict[str, np.ndarray] = {k: np.array(v) for k, v in meta.items()}
    np.savez_compressed(path, own=positions.own, opp=positions.opp, labels=positions.labels.astype(np.int8),
                        games=np.array(positions.games), **arrays)  # type: ignore[arg-type]


def load_positions(path: str) -> Positions:
    """The positions written by :func:`save_positions`; a clear error for a file of something else."""
    try:
        with np.load(path) as data:
            return Positions(data["own"].astype(np.uint64), data["opp"].astype(np.uint64),
                             data["labels"].astype(np.float64), int(data["games"]))
    except (OSError, ValueError, KeyError) as error:
        raise ValueError(f"positions file {path}: not positions written by save_positions ({error})") from None


def game_rng(seed: int, game: int) -> random.Random:
    """The random draws of game ``game`` of a run seeded ``seed``: a game plays the same in any worker."""
    return random.Random(seed * 1_000_003 + game)


def generate(
    games: int,
    seed: int,
    depth: int = 2,
    noise: float = 0.05,
    solve_empties: int = 14,
    engine: Optional[Engine] = None,
    progress: Optional[Callable[[int], None]] = None,
    first_game: int = 0,
) -> Positions:
    """Play games ``first_game`` .. ``first_game + games - 1`` of the run ``seed`` and label their positions (see the module doc)."""
    engine = engine or Engine(tt_bits=16, eval_kind=evaluation.EVAL_PAPER_SIMPLIFIED)
    own: list[int] = []
    opp: list[int] = []
    labels: list[int] = []
    for game in range(first_game, first_game + games):
        rng = game_rng(seed, game)
        engine.clear()
        board = Board()
        positions: list[tuple[int, int, bool]] = []  # side to move's discs, other side's, white to move
        random_plies = rng.randint(6, 20)
        ply = 0
        final_for_white: Optional[int] = None
        while not board.is_game_over():
            moves = board.legal_moves()
            n_empty = 64 - bin(board.white | board.black).count("1")
            if moves[0].square is not None:
                positions.append((board.own, board.opp, board.to_move is WHITE))
            if n_empty <= solve_empties and final_for_white is None:
                score, _ = engine.solve_window(board, -65, 65)
                final_for_white = score if board.to_move is WHITE else -score
            if len(moves) == 1:
                move = moves[0]
            elif ply < random_plies or (final_for_white is None and rng.random() < noise):
                move = rng.choice(moves)
            elif final_for_white is not None:
                _, sq = engine.solve_window(board, -65, 65)
                move = Move(board.to_move, sq)
            else:
                _, sq = engine.search_depth(board, depth)
                move = Move(board.to_move, sq)
            board = board.play(move)
            ply += 1
        if final_for_white is None:  # ended before reaching the solver
            final_for_white = board.count(WHITE) - board.count(BLACK)
        for p, o, white in positions:
            own.append(p)
            opp.append(o)
            labels.append(final_for_white if white else -final_for_white)
        if progress is not None:
            progress(game + 1 - first_game)
    return Positions(np.array(own, dtype=np.uint64), np.array(opp, dtype=np.uint64),
                     np.array(labels, dtype=np.float64), games)


def _generate_part(games: int, seed: int, depth: int, noise: float, solve_empties: int,
                   weights: Optional[np.ndarray], first_game: int) -> Positions:
    """:func:`generate` in a worker process, with an engine of its own."""
    if weights is None:
        engine = Engine(tt_bits=16, eval_kind=evaluation.EVAL_PAPER_SIMPLIFIED)
    else:
        engine = Engine(tt_bits=16, eval_kind=evaluation.EVAL_PATTERNS, weights=weights)
    return generate(games, seed, depth, noise, solve_empties, engine, first_game=first_game)


def generate_in_parallel(games: int, seed: int, depth: int, noise: float, solve_empties: int,
                         weights: Optional[np.ndarray], jobs: int) -> Positions:
    """:func:`generate` split over ``jobs`` processes; the same positions as one process (each game seeds its own draws)."""
    if jobs <= 1:
        return _generate_part(games, seed, depth, noise, solve_empties, weights, 0)
    bounds = [games * j // jobs for j in range(jobs + 1)]
    # fork: the workers inherit the compiled code; the engine runs no threads here.
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = [pool.submit(_generate_part, bounds[j + 1] - bounds[j], seed, depth, noise, solve_empties, weights,
                               bounds[j]) for j in range(jobs)]
        return Positions.join([future.result() for future in futures])


@njit(cache=True)
def _all_indices(own: np.ndarray, opp: np.ndarray, inst_sq: np.ndarray, inst_len: np.ndarray, inst_off: np.ndarray,
                 n_stages: int, indices: np.ndarray, stages: np.ndarray) -> None:
    """Every position's feature indices (``pattern_indices``) and stage."""
    out = np.empty(indices.shape[1], dtype=np.int64)
    for i in range(own.shape[0]):
        n_empty = evaluation.pattern_indices(own[i], opp[i], inst_sq, inst_len, inst_off, out)
        indices[i, :] = out
        stages[i] = min(n_empty // STAGE_WIDTH, n_stages - 1)


def features(positions: Positions) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, stages)``: each position's feature indices (int32 [n, TABLES.n_indices]) and stage (int64 [n])."""
    n = len(positions.labels)
    indices = np.empty((n, TABLES.n_indices), dtype=np.int32)
    stages = np.empty(n, dtype=np.int64)
    _all_indices(positions.own, positions.opp, TABLES.squares, TABLES.lengths, TABLES.offsets, N_STAGES,
                 indices, stages)
    return indices, stages


@njit(cache=True)
def _normal_product(indices: np.ndarray, w: np.ndarray, l2: float, out: np.ndarray) -> None:
    """out = (X^T X + l2 I) w for the one-hot rows X given by ``indices``."""
    out[:] = l2 * w
    n, k = indices.shape
    for i in range(n):
        xw = 0.0
        for j in range(k):
            xw += w[indices[i, j]]
        for j in range(k):
            out[indices[i, j]] += xw


def ridge_fit(indices: np.ndarray, labels: np.ndarray, n_features: int, l2: float, iterations: int = 80,
              start: Optional[np.ndarray] = None) -> np.ndarray:
    """Weights minimising ``|X w - y|^2 + l2 |w|^2`` for one-hot rows ``X`` given by ``indices``.

    Conjugate gradients on the normal equations, from ``start`` (a
    neighbouring stage's weights converge fastest); ``X`` is never built.
    """
    k = indices.shape[1]
    rhs = np.bincount(indices.ravel(), weights=np.repeat(labels, k), minlength=n_features)
    w = np.zeros(n_features) if start is None else start.astype(np.float64).copy()
    ap = np.empty(n_features)
    _normal_product(indices, w, l2, ap)
    r = rhs - ap
    p = r.copy()
    rr = r @ r
    for _ in range(iterations):
        if rr < 1e-9:
            break
        _normal_product(indices, p, l2, ap)
        step = rr / (p @ ap)
        w += step * p
        r -= step * ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return w


def fit(positions: Positions, l2: float = 3.0) -> np.ndarray:
    """Weights per stage (int32 [N_STAGES, n_features], centi-discs)."""
    indices, stages = features(positions)
    weights = np.zeros((N_STAGES, TABLES.n_features), dtype=np.int32)
    previous: Optional[np.ndarray] = None
    for stage in range(N_STAGES):
        chosen = np.abs(stages - stage) <= 1
        if not chosen.any():
            continue
        w = ridge_fit(indices[chosen], positions.labels[chosen], TABLES.n_features, l2, start=previous)
        previous = w
        weights[stage] = np.clip(np.round(w * evaluation.SCALE), -32000, 32000).astype(np.int32)
    return weights


def save_weights(weights: np.ndarray, path: str, **meta: object) -> None:
    """Write the weights (int16) with what made them.

    Not compressed: every start of the engine reads them, and inflating the 16 x 108,346 took
    22-33 ms where reading the plain file takes about 2 ms (3.5 MB on disk instead of 1.5 MB).
    """
    arrays: dict[str, np.ndarray] = {k: np.array(v) for k, v in meta.items()}
    np.savez(path, weights=weights.astype(np.int16), **arrays)  # type: ignore[arg-type]


def holdout_error(weights: np.ndarray, positions: Positions) -> float:
    """Mean absolute error in discs of the evaluation on ``positions``."""
    if len(positions.labels) == 0:
        return 0.0
    indices, stages = features(positions)
    values = weights[stages[:, None], indices].sum(axis=1) / evaluation.SCALE
    return float(np.mean(np.abs(values - positions.labels)))


def train(
    games: int,
    seed: int,
    out: Optional[str],
    depth: int = 2,
    noise: float = 0.05,
    solve_empties: int = 14,
    l2: float = 3.0,
    rounds: int = 1,
    players: Optional[np.ndarray] = None,
    earlier: Sequence[Positions] = (),
    save_to: Optional[str] = None,
    jobs: int = 1,
    log: Callable[[str], None] = print,
) -> Optional[np.ndarray]:
    """The whole training: generate, fit, save; ``rounds`` > 1 replays with the new weights.

    Round 1 plays with ``players`` (weights of the pattern evaluation), else with seed 002's
    heuristics simplified.  Every fit uses the ``earlier`` positions (files of an earlier run) and
    every round's games so far; ``save_to`` keeps the games played, for later fits.  Without ``out``
    the games are only played (and saved): no fit.
    """
    weights = players
    played: list[Positions] = []
    for round_ in range(rounds):
        started = time.perf_counter()
        fresh = generate_in_parallel(games, seed + round_, depth, noise, solve_empties, weights, jobs)
        played.append(fresh)
        log(f"round {round_ + 1}: {fresh.games} games, {len(fresh.labels)} positions in {time.perf_counter() - started:.1f}s")
        if save_to is not None:
            save_positions(Positions.join(played), save_to, seed=seed, depth=depth, noise=noise,
                           solve_empties=solve_empties, rounds=round_ + 1)
            log(f"wrote {save_to}")
        if out is None:
            continue
        started = time.perf_counter()
        data = Positions.join([*earlier, *played])
        weights = fit(data, l2)
        log(f"round {round_ + 1}: fitted {N_STAGES} stages x {TABLES.n_features} weights on {len(data.labels)} positions "
            f"in {time.perf_counter() - started:.1f}s")
    if out is None:
        return None
    if rounds == 0:
        data = Positions.join(earlier)
        started = time.perf_counter()
        weights = fit(data, l2)
        log(f"fitted {N_STAGES} stages x {TABLES.n_features} weights on {len(data.labels)} positions "
            f"in {time.perf_counter() - started:.1f}s")
    assert weights is not None
    held_games = min(1000, max(20, games // 20))
    held = generate_in_parallel(held_games, seed + 1000, depth, noise, solve_empties, weights, jobs)
    log(f"held-out error: {holdout_error(weights, held):.2f} discs on {len(held.labels)} positions of {held.games} new games")
    save_weights(weights, out, seed=seed, games=games if rounds else 0, depth=depth, noise=noise, solve_empties=solve_empties, l2=l2,
                 rounds=rounds, earlier_positions=sum(len(p.labels) for p in earlier),
                 earlier_games=sum(p.games for p in earlier), started_from_weights=players is not None)
    log(f"wrote {out}")
    return weights


tolerate_read_only_cache(globals())
