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
   heuristics, simplified: ``evaluation.evaluate_paper_simplified``), and each fit uses the positions of every round so far.

Everything is seeded: the same seed and sizes give the same weights.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from numba import njit

from ...protocol import BLACK, WHITE, Board, Move
from . import evaluation
from .compiled_cache import tolerate_read_only_cache, use_compiled_cache
from .engine import Engine
from .patterns import N_STAGES, STAGE_WIDTH, TABLES

use_compiled_cache()  # before the first @njit (see compiled_cache.py)


@dataclass
class TrainingData:
    """Feature indices (int32 [n, TABLES.n_indices]), stages and labels (discs)."""

    indices: np.ndarray
    stages: np.ndarray
    labels: np.ndarray
    games: int


def _features(P: np.uint64, O: np.uint64, out: np.ndarray) -> int:
    n_empty = evaluation.pattern_indices(P, O, TABLES.squares, TABLES.lengths, TABLES.offsets, out)
    return min(n_empty // STAGE_WIDTH, N_STAGES - 1)


def generate(
    games: int,
    seed: int,
    depth: int = 2,
    noise: float = 0.05,
    solve_empties: int = 14,
    engine: Optional[Engine] = None,
    progress: Optional[Callable[[int], None]] = None,
) -> TrainingData:
    """Play ``games`` self-play games and label their positions (see the module doc)."""
    rng = random.Random(seed)
    engine = engine or Engine(tt_bits=16, eval_kind=evaluation.EVAL_PAPER_SIMPLIFIED)
    rows: list[np.ndarray] = []
    stages: list[int] = []
    labels: list[float] = []
    for game in range(games):
        engine.clear()
        board = Board()
        positions: list[tuple[np.ndarray, int, bool]] = []  # features, stage, white to move
        random_plies = rng.randint(6, 20)
        ply = 0
        final_for_white: Optional[int] = None
        while not board.is_game_over():
            moves = board.legal_moves()
            P, O = np.uint64(board.own), np.uint64(board.opp)
            n_empty = 64 - bin(board.white | board.black).count("1")
            if moves[0].square is not None:
                out = np.empty(TABLES.n_indices, dtype=np.int64)
                stage = _features(P, O, out)
                positions.append((out, stage, board.to_move is WHITE))
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
        for out, stage, white in positions:
            rows.append(out)
            stages.append(stage)
            labels.append(float(final_for_white if white else -final_for_white))
        if progress is not None:
            progress(game + 1)
    return TrainingData(
        indices=np.array(rows, dtype=np.int64),
        stages=np.array(stages, dtype=np.int64),
        labels=np.array(labels, dtype=np.float64),
        games=games,
    )


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


def fit(data: TrainingData, l2: float = 3.0) -> np.ndarray:
    """Weights per stage (int32 [N_STAGES, n_features], centi-discs)."""
    weights = np.zeros((N_STAGES, TABLES.n_features), dtype=np.int32)
    previous: Optional[np.ndarray] = None
    for stage in range(N_STAGES):
        chosen = np.abs(data.stages - stage) <= 1
        if not chosen.any():
            continue
        w = ridge_fit(data.indices[chosen], data.labels[chosen], TABLES.n_features, l2, start=previous)
        previous = w
        weights[stage] = np.clip(np.round(w * evaluation.SCALE), -32000, 32000).astype(np.int32)
    return weights


def save_weights(weights: np.ndarray, path: str, **meta: object) -> None:
    """Write the weights (int16, compressed) with what made them."""
    arrays: dict[str, np.ndarray] = {k: np.array(v) for k, v in meta.items()}
    np.savez_compressed(path, weights=weights.astype(np.int16), **arrays)  # type: ignore[arg-type]


def holdout_error(weights: np.ndarray, data: TrainingData) -> float:
    """Mean absolute error in discs of the evaluation on ``data``."""
    errors = []
    for row, stage, label in zip(data.indices, data.stages, data.labels):
        errors.append(abs(weights[stage][row].sum() / evaluation.SCALE - label))
    return float(np.mean(errors)) if errors else 0.0


def train(
    games: int,
    seed: int,
    out: str,
    depth: int = 2,
    noise: float = 0.05,
    solve_empties: int = 14,
    l2: float = 3.0,
    rounds: int = 1,
    log: Callable[[str], None] = print,
) -> np.ndarray:
    """The whole training: generate, fit, save; ``rounds`` > 1 replays with the new weights."""
    weights: Optional[np.ndarray] = None
    data: Optional[TrainingData] = None  # every round's positions: later fits use them all
    for round_ in range(rounds):
        started = time.perf_counter()
        if weights is None:
            engine = Engine(tt_bits=16, eval_kind=evaluation.EVAL_PAPER_SIMPLIFIED)
        else:
            engine = Engine(tt_bits=16, eval_kind=evaluation.EVAL_PATTERNS, weights=weights)
        fresh = generate(games, seed + round_, depth, noise, solve_empties, engine)
        log(f"round {round_ + 1}: {fresh.games} games, {len(fresh.labels)} positions in {time.perf_counter() - started:.1f}s")
        data = fresh if data is None else TrainingData(
            np.concatenate([data.indices, fresh.indices]),
            np.concatenate([data.stages, fresh.stages]),
            np.concatenate([data.labels, fresh.labels]),
            data.games + fresh.games,
        )
        started = time.perf_counter()
        weights = fit(data, l2)
        log(f"round {round_ + 1}: fitted {N_STAGES} stages x {TABLES.n_features} weights on {len(data.labels)} positions "
            f"in {time.perf_counter() - started:.1f}s")
    assert weights is not None
    held = generate(max(20, games // 20), seed + 1000, depth, noise, solve_empties, Engine(tt_bits=16, eval_kind=evaluation.EVAL_PATTERNS, weights=weights))
    log(f"held-out error: {holdout_error(weights, held):.2f} discs on {len(held.labels)} positions of {held.games} new games")
    save_weights(weights, out, seed=seed, games=games, depth=depth, noise=noise, solve_empties=solve_empties, l2=l2, rounds=rounds)
    log(f"wrote {out}")
    return weights


tolerate_read_only_cache(globals())
