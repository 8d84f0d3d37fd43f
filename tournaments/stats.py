"""Statistics of a head-to-head match in game pairs: pentanomial counts, Elo, SPRT.

A *game pair* is one opening played twice with the colours swapped.  The
two games of a pair are not independent (the opening favours one side, and
deterministic agents repeat themselves), so the unit of the statistics is
the pair, not the game: its score for agent A is 0, 0.5, 1, 1.5 or 2 points,
and the five counts of these are the *pentanomial* counts (cutechess-cli,
fastchess and fishtest all do this).  Counting games as if independent
(the trinomial W-D-L) would make intervals too narrow when the two games of
a pair are correlated; the pair's variance counts that correlation in.

Notation below: N pairs, p_i the fraction of pairs with pair score i/4 per
game (i = 0..4: LL, LD, DD or WL, WD, WW), the mean score per game
mu = sum p_i * i/4, and the variance of the per-game pair score
var = sum p_i * (i/4 - mu)**2.  The standard error of mu is sqrt(var / N).

Elo is the logistic Elo of mu, ``-400 log10(1/mu - 1)``; its 95% interval
maps mu +- 1.96 * sqrt(var/N) through the same function (as fastchess
reports it).  Normalized Elo (fishtest's nElo) is
``(mu - 0.5) / (sqrt(2) * sqrt(var)) * 800 / ln 10``: the sqrt(2) turns the
deviation of a pair's per-game score into that of one game, so a pair of
independent games gives the same nElo as two games counted alone.

The SPRT (sequential probability ratio test) decides between H0: Elo =
elo0 and H1: Elo = elo1.  Its log-likelihood ratio uses the generalized
SPRT approximation of Michel Van den Bergh (used by fishtest,
``server/fishtest/stats/LLRcalc.py``, and fastchess, ``SPRT::getLLR`` in
``app/src/matchmaking/sprt/sprt.cpp``):

    LLR = 0.5 * N * (s1 - s0) * (2*mu - s0 - s1) / var

where s0 and s1 are the expected per-game scores under H0 and H1: in the
logistic model ``1 / (1 + 10**(-elo/400))``; in the normalized model
``0.5 + nelo * sqrt(2) * sqrt(var) / (800 / ln 10)`` (fastchess's
``neloToScorePenta``).  The test stops for H1 when LLR >= log((1-beta)/alpha)
and for H0 when LLR <= log(beta/(1-alpha)) (Wald's bounds).

Two guards for the small numbers of pairs a student's match has:

- As fishtest's ``results_to_pdf`` does, an empty pentanomial count is taken
  as 1e-3 in the LLR.  Without it (fastchess returns 0 when the variance is
  0) a match where A wins every pair has no variance and never ends.
- The approximation treats mu as normally distributed, which holds for many
  pairs; over the first few, regularized counts make the variance tiny and
  the LLR swing far (with the logistic model, one lost pair alone gives
  about -3.9: H0 at once).  So :class:`SPRT` decides only from ``min_pairs``
  pairs on (default 10), a guard of ours.  Measured with
  ``tests/test_tournament_stats.py``'s simulation (elo0=0 elo1=10, 60 runs
  each, seed 7): with the guard, +30 Elo accepts H1 60/60 and -10 accepts H0
  60/60 in both models; without it, the logistic model accepts H1 for +30
  only 45/60.  A sweep (every pair WW) is decided after 10 pairs.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

Z95 = 1.959964
NELO_PER_NT = 800.0 / math.log(10.0)  # 347.4355...: fishtest's nelo_divided_by_nt
REGULARIZE = 1e-3  # fishtest's epsilon for an empty pentanomial count (in the LLR only)
PAIR_NAMES = ("LL", "LD", "DD/WL", "WD", "WW")  # pair score 0, 0.5, 1, 1.5, 2 points


def pair_index(first: float, second: float) -> int:
    """Index 0..4 of a pair from A's points in its two games (each 0, 0.5 or 1): twice the pair score."""
    for points in (first, second):
        if points not in (0, 0.5, 1):
            raise ValueError(f"a game scores 0, 0.5 or 1 point, not {points!r}")
    return round(2 * (first + second))


def logistic_elo(score: float) -> float:
    """The Elo difference of a per-game score (0 < score < 1; +-inf at the ends)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def logistic_score(elo: float) -> float:
    """The per-game score expected at an Elo difference."""
    return 1.0 / (1.0 + float(10.0 ** (-elo / 400.0)))


@dataclass
class Pentanomial:
    """Counts of game pairs by A's pair score: ``counts[i]`` pairs scored i/2 points (LL, LD, DD/WL, WD, WW)."""

    counts: list[int] = field(default_factory=lambda: [0] * 5)
    wins: int = 0  # games, from A's side
    draws: int = 0
    losses: int = 0

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[float, float]]) -> "Pentanomial":
        """Counts from A's points in each pair's two games."""
        result = cls()
        for first, second in pairs:
            result.add(first, second)
        return result

    def add(self, first: float, second: float) -> None:
        """Count one pair: A's points in its two games."""
        self.counts[pair_index(first, second)] += 1
        for points in (first, second):
            if points == 1:
                self.wins += 1
            elif points == 0:
                self.losses += 1
            else:
                self.draws += 1

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def moments(self, regularize: bool = False) -> tuple[float, float, float]:
        """``(N, mu, var)``: pairs, mean score per game and variance of the per-game pair score.

        With ``regularize`` an empty count is taken as 1e-3 (fishtest), so
        ``var`` is positive once any pair is in.
        """
        if self.pairs == 0:
            return 0, 0.5, 0.0
        counts = [max(c, REGULARIZE) if regularize else float(c) for c in self.counts]
        total = sum(counts)
        probabilities = [c / total for c in counts]
        mu = sum(p * i / 4 for i, p in enumerate(probabilities))
        var = sum(p * (i / 4 - mu) ** 2 for i, p in enumerate(probabilities))
        return total, mu, var

    def elo(self) -> "EloEstimate":
        """Logistic Elo of A over B with the pair-aware 95% interval, and normalized Elo."""
        n, mu, var = self.moments()
        if n == 0:
            return EloEstimate(0.0, -math.inf, math.inf, 0.0, math.inf, 0.5, 0.0)
        error = math.sqrt(var / n)
        low, high = mu - Z95 * error, mu + Z95 * error
        if error == 0:
            low, high = alike_bounds(mu, int(n))
        nelo = (mu - 0.5) / math.sqrt(2 * var) * NELO_PER_NT if var > 0 else (0.0 if mu == 0.5 else math.copysign(math.inf, mu - 0.5))
        nelo_error = Z95 * NELO_PER_NT / math.sqrt(2 * n)
        return EloEstimate(logistic_elo(mu), logistic_elo(low), logistic_elo(high), nelo, nelo_error, mu, error)

    def line(self) -> str:
        """``W-D-L 12-5-9, pairs [LL LD DD/WL WD WW] 1 3 4 3 2``."""
        return (f"W-D-L {self.wins}-{self.draws}-{self.losses}, "
                f"pairs [{' '.join(PAIR_NAMES)}] {' '.join(str(c) for c in self.counts)}")


def alike_bounds(score: float, pairs: int) -> tuple[float, float]:
    """The 95% bounds of the per-game score when all ``pairs`` scored ``score`` alike (a sweep: ``score`` 1).

    The normal interval has no width then ("+inf [+inf, +inf]" for a sweep),
    which claims too much after ten pairs.  Exact instead: if a pair unlike
    the others came with chance q, seeing none in N pairs has chance
    (1 - q)**N, at least 2.5% while q <= 1 - 0.025**(1/N); such a pair
    scores anything from 0 to 1, so the mean is within ``score`` - q*score
    and ``score`` + q*(1 - score) (each end one-sided 97.5%, as the normal
    interval's ends are).
    """
    q = 1.0 - 0.025 ** (1.0 / pairs)
    return score - q * score, score + q * (1.0 - score)


@dataclass(frozen=True)
class EloEstimate:
    """Elo of A over B: ``elo`` in ``low..high`` (95%); ``nelo`` +- ``nelo_error``; the score and its standard error."""

    elo: float
    low: float
    high: float
    nelo: float
    nelo_error: float
    score: float
    score_error: float

    def line(self) -> str:
        """``Elo +35.2 [+10.1, +61.0] (95%), nElo +48.3 +- 30.9, score 55.0%``.

        When every pair so far scored alike (no spread) the interval says
        nothing, and the line says so instead of showing a zero width.
        """
        alike = "" if self.score_error > 0 else ", every pair scored alike so far"
        return (f"Elo {_signed(self.elo)} [{_signed(self.low)}, {_signed(self.high)}] (95%{alike}), "
                f"nElo {_signed(self.nelo)} +- {self.nelo_error:.1f}, score {100 * self.score:.1f}%")

    def short(self) -> str:
        """``Elo +89 [-43, +254]``; ``Elo at least +115`` when every game so far was won (no finite estimate)."""
        return "Elo " + " ".join(part for part in self.parts() if part)

    def parts(self) -> tuple[str, str]:
        """The estimate and its interval in whole Elo, ``("+89", "[-43, +254]")``; ``("at least +115", "")`` for a sweep."""
        if self.elo == math.inf:
            return f"at least {_whole(self.low)}", ""
        if self.elo == -math.inf:
            return f"at most {_whole(self.high)}", ""
        return _whole(self.elo), f"[{_whole(self.low)}, {_whole(self.high)}]"

    def mirrored(self) -> "EloEstimate":
        """The same estimate seen from B's side: B's Elo over A."""
        return EloEstimate(-self.elo, -self.high, -self.low, -self.nelo, self.nelo_error, 1 - self.score,
                           self.score_error)


def _whole(value: float) -> str:
    if not math.isfinite(value):
        return "+inf" if value > 0 else "-inf"
    return f"{round(value) + 0:+d}"


def _signed(value: float) -> str:
    if not math.isfinite(value):
        return "+inf" if value > 0 else "-inf"
    return f"{round(value, 1) + 0.0:+.1f}"  # + 0.0: no "-0.0"


MODELS = ("normalized", "logistic")


@dataclass(frozen=True)
class SPRT:
    """A sequential test of H0: Elo = ``elo0`` against H1: Elo = ``elo1`` on game pairs.

    ``model`` says what the Elo bounds mean: ``normalized`` (fishtest's and
    fastchess's default) or ``logistic``.  No decision is taken before
    ``min_pairs`` pairs (see the module's notes).
    """

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"
    min_pairs: int = 10

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError(f"alpha and beta must be between 0 and 1 (got {self.alpha}, {self.beta})")
        if self.elo1 <= self.elo0:
            raise ValueError(f"elo1 must be above elo0 (got elo0={self.elo0:g}, elo1={self.elo1:g})")
        if self.model not in MODELS:
            raise ValueError(f"unknown model {self.model!r}; expected one of {', '.join(MODELS)}")

    @classmethod
    def parse(cls, words: Sequence[str] | str) -> "SPRT":
        """From ``elo0=0 elo1=10 alpha=0.05 beta=0.05 [model=logistic]`` (any order, any subset)."""
        if isinstance(words, str):
            words = words.replace(",", " ").split()
        values: dict[str, object] = {}
        for word in words:
            key, sep, value = word.partition("=")
            key = key.strip().lower()
            if not sep or key not in ("elo0", "elo1", "alpha", "beta", "model"):
                raise ValueError(f"SPRT parameter {word!r}: expected elo0=, elo1=, alpha=, beta= or model=")
            if key == "model":
                values[key] = value.strip().lower()
                continue
            try:
                values[key] = float(value)
            except ValueError:
                raise ValueError(f"SPRT parameter {word!r}: {value!r} is not a number") from None
        return cls(**values)  # type: ignore[arg-type]

    @property
    def lower(self) -> float:
        """LLR at or below which H0 is accepted: log(beta / (1 - alpha))."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """LLR at or above which H1 is accepted: log((1 - beta) / alpha)."""
        return math.log((1 - self.beta) / self.alpha)

    def scores(self, var: float) -> tuple[float, float]:
        """Expected per-game scores ``(s0, s1)`` under H0 and H1 (the normalized model needs the variance)."""
        if self.model == "logistic":
            return logistic_score(self.elo0), logistic_score(self.elo1)
        sigma = math.sqrt(2 * var)  # the per-game deviation from the pair's (fastchess neloToScorePenta)
        return 0.5 + self.elo0 * sigma / NELO_PER_NT, 0.5 + self.elo1 * sigma / NELO_PER_NT

    def llr(self, counts: Pentanomial) -> float:
        """The log-likelihood ratio of H1 over H0 (GSPRT approximation; 0 before any pair)."""
        n, mu, var = counts.moments(regularize=True)
        if n == 0 or var <= 0:
            return 0.0
        s0, s1 = self.scores(var)
        return 0.5 * n * (s1 - s0) * (2 * mu - s0 - s1) / var

    def decision(self, counts: Pentanomial) -> Optional[str]:
        """``"H1"`` (elo1 accepted: A is better), ``"H0"`` (elo0 accepted), or ``None``: play on (always before ``min_pairs``)."""
        if counts.pairs < self.min_pairs:
            return None
        value = self.llr(counts)
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return None

    def expected_pairs(self, counts: Pentanomial) -> Optional[float]:
        """About how many more pairs until the test decides, from the LLR's drift so far.

        The LLR is a sum of one step per pair, ``(s1 - s0) * (x - (s0 + s1) / 2) / var``
        for a pair of per-game score x: steps of mean d (the drift, set by the
        mean score) and variance ``(s1 - s0)**2 / var``.  As a random walk with
        that drift between the two bounds (Wald's approximation, a Brownian
        motion) it needs ``(P * B - (1 - P) * A) / d`` more steps, A and B its
        distances to the lower and upper bound, P its chance of reaching the
        upper one first; ``A * B / variance`` without drift (equal agents: the
        longest wait).  The mean score so far is uncertain, and the wait is
        longest near no drift, so the wait is averaged over the mean's normal
        uncertainty (41 points over +-4 standard errors) rather than taken at
        the estimate, which promised a third of the real wait.  Measured with
        :func:`simulate_sprt`'s model (tests/test_tournament_stats.py): after
        100 pairs the median estimate is within a factor of 3 of the median
        wait.  At least the pairs left before ``min_pairs``; ``None`` before
        any pair.
        """
        n, mu, var = counts.moments(regularize=True)
        if n == 0 or var <= 0:
            return None
        s0, s1 = self.scores(var)
        variance = (s1 - s0) ** 2 / var
        llr = self.llr(counts)
        below, above = max(0.0, llr - self.lower), max(0.0, self.upper - llr)
        error = math.sqrt(var / n)
        total = weights = 0.0
        for step in range(41):
            z = -4.0 + step / 5.0
            weight = math.exp(-z * z / 2)
            drift = (s1 - s0) * (mu + z * error - (s0 + s1) / 2) / var
            total += weight * _walk_steps(drift, variance, below, above)
            weights += weight
        return max(total / weights, float(self.min_pairs - counts.pairs))

    def line(self, counts: Pentanomial) -> str:
        """``LLR 1.23 [-2.94, 2.94] (elo0=0 elo1=10 alpha=0.05 beta=0.05, normalized)``."""
        return f"LLR {self.llr(counts):.2f} [{self.lower:.2f}, {self.upper:.2f}] ({self.parameters()})"

    def parameters(self) -> str:
        """``elo0=0 elo1=10 alpha=0.05 beta=0.05, normalized``."""
        return f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g}, {self.model}"


def _walk_steps(drift: float, variance: float, below: float, above: float) -> float:
    """Expected steps of a Brownian motion (``drift``, ``variance`` per step) from 0 to -below or +above."""
    theta = 2 * drift / variance
    if abs(theta) * (below + above) < 1e-9:
        return below * above / variance
    exponent = -theta * (below + above)
    if exponent > 700:  # a strong drift down: the upper bound is out of reach
        upper_first = math.exp(theta * above)
    else:
        upper_first = math.expm1(-theta * below) / math.expm1(exponent)
    return (upper_first * above - (1 - upper_first) * below) / drift


def simulate_sprt(elo: float, sprt: SPRT, rng: random.Random, draw_rate: float = 0.05,
                  most_pairs: int = 20000) -> tuple[str, int]:
    """One simulated match: pairs of independent games of A at a true logistic ``elo`` over B until ``sprt`` decides.

    Returns the decision (``"H0"``, ``"H1"`` or ``"none"`` after ``most_pairs``) and the games played: how
    often the test decides right, and at what cost (``bench/sprt_simulation.py``, the tests).
    """
    win = logistic_score(elo) - draw_rate / 2  # so that win + draw/2 is the expected score
    counts = Pentanomial()
    for _ in range(most_pairs):
        points = []
        for _game in range(2):
            roll = rng.random()
            points.append(1.0 if roll < win else 0.5 if roll < win + draw_rate else 0.0)
        counts.add(*points)
        decision = sprt.decision(counts)
        if decision:
            return decision, 2 * counts.pairs
    return "none", 2 * counts.pairs


__all__ = ["MODELS", "PAIR_NAMES", "SPRT", "EloEstimate", "Pentanomial", "logistic_elo", "logistic_score", "pair_index", "simulate_sprt"]
