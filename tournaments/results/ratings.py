"""Ratings: Bradley-Terry by maximum likelihood, on the Elo scale, with 95% intervals.

The model is Bradley-Terry (the logistic model behind Elo): the expected
score of A against B is ``1 / (1 + 10 ** ((R_B - R_A) / 400))``.  Ratings are
fitted to all games at once by Newton's method (unlike incremental Elo, the
order of the games does not matter), a draw counting as half a win.

An agent that won (or lost) every game has no finite maximum-likelihood
rating, so every agent also gets one virtual draw against an average player
(the prior BayesElo uses, in its simplest form).  The intervals are 1.96
standard errors from the curvature of the log-likelihood (the Fisher
information), for each rating relative to the field's average, which is
shown as 1500.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from .store import FinishedGame

ELO_PER_NATURAL = 400.0 / math.log(10.0)
AVERAGE = 1500.0
PRIOR_DRAWS = 1.0
Z95 = 1.959964


@dataclass(frozen=True)
class Rating:
    """An agent's rating and its 95% confidence interval (``low``..``high``)."""

    agent: str
    elo: float
    error: float  # half-width of the 95% interval

    @property
    def low(self) -> float:
        return self.elo - self.error

    @property
    def high(self) -> float:
        return self.elo + self.error


def expected_score(elo_a: float, elo_b: float) -> float:
    """The score A expects against B under the model."""
    return float(1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0)))


def fit(players: Sequence[str], games: Iterable[FinishedGame]) -> dict[str, Rating]:
    """Ratings of ``players`` from ``games`` (Bradley-Terry MLE with a one-draw prior)."""
    import numpy as np  # here: its import is a tenth of a second of every command that only may show ratings

    index = {name: i for i, name in enumerate(players)}
    n = len(players)
    if n == 0:
        return {}
    played = np.zeros((n, n))  # games between i and j
    scored = np.zeros((n, n))  # points i scored against j
    for game in games:
        if game.white not in index or game.black not in index or game.white == game.black:
            continue
        w, b = index[game.white], index[game.black]
        played[w, b] += 1
        played[b, w] += 1
        scored[w, b] += game.points(game.white)
        scored[b, w] += game.points(game.black)

    theta = np.zeros(n)
    hessian = -np.eye(n)
    for _ in range(100):
        diff = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))  # P(i beats j)
        anchor = 1.0 / (1.0 + np.exp(-theta))
        gradient = (scored - played * p).sum(axis=1) + PRIOR_DRAWS * (0.5 - anchor)
        weights = played * p * (1.0 - p)
        hessian = weights - np.diag(weights.sum(axis=1) + PRIOR_DRAWS * anchor * (1.0 - anchor))
        step = np.linalg.solve(hessian, gradient)
        # Damped Newton: a full step can overshoot for lopsided results.
        step = np.clip(step, -2.0, 2.0)
        theta = theta - step
        if np.max(np.abs(step)) < 1e-9:
            break

    covariance = np.linalg.inv(-hessian)
    centred = theta - theta.mean()
    ratings: dict[str, Rating] = {}
    for name, i in index.items():
        contrast = -np.full(n, 1.0 / n)
        contrast[i] += 1.0
        variance = float(contrast @ covariance @ contrast)
        ratings[name] = Rating(
            name,
            AVERAGE + float(centred[i]) * ELO_PER_NATURAL,
            Z95 * math.sqrt(max(variance, 0.0)) * ELO_PER_NATURAL,
        )
    return ratings
