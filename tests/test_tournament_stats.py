"""Match statistics on game pairs: pentanomial counts, Elo with a pair-aware interval, SPRT."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from othello_arena.tournaments.results.pairs import GUESS_FROM_PAIRS
from othello_arena.tournaments.stats import SPRT, Pentanomial, logistic_elo, logistic_score, pair_index, simulate_sprt


def test_a_pair_is_counted_by_its_score() -> None:
    assert [pair_index(*p) for p in [(0, 0), (0.5, 0), (1, 0), (0.5, 0.5), (1, 0.5), (1, 1)]] == [0, 1, 2, 2, 3, 4]
    counts = Pentanomial.from_pairs([(1, 1), (1, 0), (0.5, 0.5), (0, 0.5)])
    assert counts.counts == [0, 1, 2, 0, 1] and counts.pairs == 4
    assert (counts.wins, counts.draws, counts.losses) == (3, 3, 2)
    assert counts.line() == "W-D-L 3-3-2, pairs [LL LD DD/WL WD WW] 0 1 2 0 1"
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        pair_index(2, 0)


# Counts [LL LD DD WD WW] = [1 1 2 4 2], N = 10, worked by hand:
#   mu  = (0*1 + .25*1 + .5*2 + .75*4 + 1*2) / 10 = 6.25 / 10 = 0.625
#   var = (1*.625^2 + 1*.375^2 + 2*.125^2 + 4*.125^2 + 2*.375^2) / 10
#       = (.390625 + .140625 + .03125 + .0625 + .28125) / 10 = 0.090625
#   Elo = -400 log10(1/.625 - 1) = -400 log10(0.6) = 88.7395
#   95%: mu +- 1.959964 * sqrt(.090625/10) = .625 +- .186583 -> scores .438417 .. .811583
#        -> Elo -400 log10(1.280935) = -43.01 .. -400 log10(0.232161) = +253.69
#   nElo = (.625 - .5) / sqrt(2 * .090625) * 347.4356 = .125 / .425735 * 347.4356 = 102.011
#   logistic SPRT elo0=0 elo1=10: s0 = .5, s1 = 1/(1+10^(-10/400)) = .5143872
#        LLR = .5 * 10 * .0143872 * (1.25 - 1.0143872) / .090625 = .187024
#   normalized SPRT: s1 = .5 + 10 * sqrt(2*.090625) / 347.4356 = .5 + .0122536
#        LLR = .5 * 10 * .0122536 * (1.25 - 1.0122536) / .090625 = .160731
HAND = Pentanomial([1, 1, 2, 4, 2])


def test_figures_of_fixed_counts_match_the_hand_computation() -> None:
    n, mu, var = HAND.moments()
    assert (n, mu) == (10, 0.625) and var == pytest.approx(0.090625)
    estimate = HAND.elo()
    assert estimate.elo == pytest.approx(88.7395, abs=1e-3)
    assert estimate.low == pytest.approx(-43.01, abs=0.01) and estimate.high == pytest.approx(253.69, abs=0.01)
    assert estimate.nelo == pytest.approx(102.011, abs=1e-3)
    assert estimate.nelo_error == pytest.approx(1.959964 * 347.4356 / math.sqrt(20), abs=1e-3)
    assert SPRT(0, 10, model="logistic").llr(HAND) == pytest.approx(0.187024, abs=1e-5)
    assert SPRT(0, 10).llr(HAND) == pytest.approx(0.160731, abs=1e-5)
    sprt = SPRT.parse("elo0=0 elo1=10 alpha=0.05 beta=0.05")
    assert sprt.lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.944439, abs=1e-6)
    assert sprt.upper == pytest.approx(2.944439, abs=1e-6)
    assert sprt.decision(HAND) is None
    assert sprt.line(HAND) == "LLR 0.16 [-2.94, 2.94] (elo0=0 elo1=10 alpha=0.05 beta=0.05, normalized)"


def test_pairing_widens_the_interval_when_the_games_of_a_pair_agree() -> None:
    # The same 10 wins and 10 losses: as 5 WW + 5 LL pairs (each pair's games agree) or as 10 WL pairs.
    together = Pentanomial([5, 0, 0, 0, 5]).elo()
    split = Pentanomial([0, 0, 10, 0, 0]).elo()
    assert together.elo == split.elo == 0
    assert together.high > 150 > split.high > 0  # (ten identical split pairs: the exact bound, not "exactly equal")
    assert "(95%, every pair scored alike so far)" in Pentanomial([0, 0, 10, 0, 0]).elo().line()
    assert "(95%)" in Pentanomial([5, 0, 0, 0, 5]).elo().line()
    assert Pentanomial().elo().low == -math.inf


def test_a_sweep_has_a_lower_bound_not_just_plus_infinity() -> None:
    # Ten WW pairs: a pair unlike them comes with chance q <= 1 - 0.025**(1/10) = 0.3085 (97.5%), and could
    # score 0, so the mean score is at least 0.6915: Elo -400 log10(1/0.6915 - 1) = +140.2.
    sweep = Pentanomial([0, 0, 0, 0, 10]).elo()
    assert sweep.elo == math.inf and sweep.low == pytest.approx(140.2, abs=0.1) and sweep.high == math.inf
    assert sweep.short() == "Elo at least +140"
    assert Pentanomial([10, 0, 0, 0, 0]).elo().short() == "Elo at most -140"
    assert Pentanomial([20, 0, 0, 0, 0]).elo().high < Pentanomial([10, 0, 0, 0, 0]).elo().high  # more pairs, tighter
    assert HAND.elo().short() == "Elo +89 [-43, +254]"


def test_the_expected_wait_follows_the_drift_and_is_longest_between_equals() -> None:
    sprt = SPRT(0, 10)
    assert sprt.expected_pairs(Pentanomial()) is None
    assert sprt.expected_pairs(Pentanomial([0, 0, 0, 0, 3])) == 7  # a sweep: only min_pairs is left
    equal = sprt.expected_pairs(Pentanomial([10, 30, 20, 30, 10]))
    ahead = sprt.expected_pairs(Pentanomial([5, 20, 30, 30, 15]))
    assert equal is not None and ahead is not None and equal > 2 * ahead > 0


@pytest.mark.parametrize("at", [GUESS_FROM_PAIRS, 100])
def test_the_expected_wait_is_within_a_factor_of_three_of_the_real_one(at: int) -> None:
    """After ``at`` simulated pairs, the median estimate against the median of the pairs the test then needed.

    From GUESS_FROM_PAIRS on, a match's verdict gives the estimate (as a rough guess).
    """
    sprt = SPRT(0, 10)
    for elo in (20, 50):
        rng = random.Random(7)
        estimates, waits = [], []
        for _run in range(25):
            win = logistic_score(elo) - 0.025
            counts, estimate = Pentanomial(), None
            while sprt.decision(counts) is None and counts.pairs < 20000:
                counts.add(*(1.0 if r < win else 0.5 if r < win + 0.05 else 0.0 for r in (rng.random(), rng.random())))
                if counts.pairs == at:
                    estimate = sprt.expected_pairs(counts)
            if estimate is not None and counts.pairs > at:
                estimates.append(estimate)
                waits.append(counts.pairs - at)
        ratio = statistics.median(estimates) / statistics.median(waits)
        assert 1 / 3 < ratio < 3, (elo, ratio)


def test_empty_counts_are_regularized_and_early_pairs_decide_nothing() -> None:
    sprt = SPRT(0, 10)
    assert sprt.llr(Pentanomial()) == 0.0
    # One lost pair: counts [1 .001 .001 .001 .001], total 1.004; mu = .0025/1.004 = .00249,
    # var = .0018613; logistic LLR = .5 * 1.004 * .0143872 * (.00498 - 1.0143872) / .0018613 = -3.92
    one_loss = Pentanomial([1, 0, 0, 0, 0])
    assert SPRT(0, 10, model="logistic").llr(one_loss) == pytest.approx(-3.92, abs=0.01)
    assert SPRT(0, 10, model="logistic").decision(one_loss) is None  # fewer than min_pairs=10 pairs
    sweep = Pentanomial([0, 0, 0, 0, 10])
    assert sprt.llr(sweep) > sprt.upper and sprt.decision(sweep) == "H1"  # a sweep ends: the variance is not 0
    assert sprt.decision(Pentanomial([10, 0, 0, 0, 0])) == "H0"
    assert SPRT(0, 10, min_pairs=11).decision(sweep) is None


@pytest.mark.parametrize("text, message", [
    ("elo0=10 elo1=0", "elo1 must be above elo0"),
    ("alpha=1.5", "between 0 and 1"),
    ("elo2=3", "expected elo0="),
    ("elo0=x", "not a number"),
    ("model=bayes", "unknown model"),
])
def test_bad_sprt_parameters_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SPRT.parse(text)


def _simulate(elo: float, sprt: SPRT, rng: random.Random) -> str:
    """A simulated match with 20% draws: its decision."""
    return simulate_sprt(elo, sprt, rng, draw_rate=0.2)[0]


@pytest.mark.parametrize("model", ["normalized", "logistic"])
def test_simulated_matches_of_known_elo_are_decided_right(model: str) -> None:
    sprt = SPRT(0, 10, 0.05, 0.05, model)
    rng = random.Random(7)
    better = [_simulate(30, sprt, rng) for _ in range(30)]
    worse = [_simulate(-10, sprt, rng) for _ in range(30)]
    assert better.count("H1") >= 27, better  # the test's power at +30 is far above 1 - beta
    assert worse.count("H0") >= 27, worse
