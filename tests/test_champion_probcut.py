"""Multi-prob-cut: its regression is fitted right, it cuts only where asked, and exact searches stay exact."""

from __future__ import annotations

import random

import numpy as np
import pytest

from champion_helpers import random_position
from othello_arena.agents.champion import evaluation
from othello_arena.agents.champion import probcut as PC
from othello_arena.agents.champion import probcut_training
from othello_arena.agents.champion import search as S
from othello_arena.agents.champion.engine import Engine


def test_the_shallow_search_is_shallower_and_ends_on_the_same_side():
    for depth in range(PC.MIN_DEPTH, PC.MAX_DEPTH + 1):
        shallow = PC.shallow_depth(depth)
        assert 1 <= shallow < depth
        assert (depth - shallow) % 2 == 0


def test_the_fit_recovers_a_known_line_per_phase_and_fills_the_rest():
    rng = np.random.default_rng(3)
    n, deepest = 4000, 6
    empties = rng.integers(20, 40, size=n)  # phases 2 and 3 only
    values = np.zeros((n, deepest + 1), dtype=np.int64)
    base = rng.normal(0, 800, size=n)
    for depth in range(deepest + 1):
        values[:, depth] = np.round(base + 10 * depth + rng.normal(0, 60, size=n))
    table = probcut_training.fit_table(empties, values, evaluation.WIN_BONUS)
    for phase in (2, 3):
        for depth in range(PC.MIN_DEPTH, deepest + 1):
            shallow = PC.shallow_depth(depth)
            a, b, sigma = table[phase, depth, :PC.PARAM_SHALLOW]
            assert a == pytest.approx(1.0, abs=0.02)
            assert b == pytest.approx(10 * (depth - shallow), abs=8)
            assert sigma == pytest.approx(60 * np.sqrt(2), rel=0.1)  # the noise of both searches
            assert table[phase, depth, PC.PARAM_SHALLOW] == shallow
    # phases without data borrow the nearest fitted one; depths beyond the labels the deepest
    assert np.array_equal(table[0, 5], table[2, 5])
    assert np.array_equal(table[5, 5], table[3, 5])
    assert np.array_equal(table[3, 12, :PC.PARAM_SHALLOW], table[3, deepest, :PC.PARAM_SHALLOW])
    # below the first cutting depth nothing is fitted: never a cut
    assert np.isinf(table[3, PC.MIN_DEPTH - 1, PC.PARAM_SIGMA])


def test_sure_results_are_left_out_of_the_fit():
    empties = np.full(200, 30)
    values = np.tile(np.arange(8, dtype=np.int64) * 10, (200, 1)) + np.arange(200)[:, None]
    values[:100, 5] = evaluation.WIN_BONUS + 500  # won games would drag the line
    table = probcut_training.fit_table(empties, values, evaluation.WIN_BONUS)
    assert table[3, 5, PC.PARAM_A] == pytest.approx(1.0)
    assert table[3, 5, PC.PARAM_SIGMA] == pytest.approx(0.0, abs=1e-6)


def test_the_shipped_table_is_fitted_for_the_midgame():
    table = PC.load_table()
    assert table.shape == (PC.N_PHASES, PC.MAX_DEPTH + 1, PC.N_PARAMS)
    for phase in range(2, 6):  # 20-59 empties
        for depth in range(PC.MIN_DEPTH, PC.MAX_DEPTH + 1):
            a, _, sigma, shallow = table[phase, depth]
            assert 0.5 < a < 1.5
            assert 0 < sigma < 30 * evaluation.SCALE
            assert shallow == PC.shallow_depth(depth)


def _positions(count: int, seed: int) -> list:
    rng = random.Random(seed)
    return [random_position(rng, rng.randint(10, 36)) for _ in range(count)]


def test_an_exact_search_ignores_the_table_and_a_table_that_cuts_nothing_changes_nothing():
    exact = Engine(tt_bits=16, probcut=0)
    no_cuts = Engine(tt_bits=16, probcut_table=PC.empty_table())
    for board in _positions(6, 5):
        for depth in (3, 5, 6):
            exact.clear()
            no_cuts.clear()
            reference = exact.search_depth(board, depth, selective=True)
            assert no_cuts.search_depth(board, depth, selective=True) == reference
            no_cuts.clear()
            assert no_cuts.search_depth(board, depth) == reference  # search_depth is exact unless asked


def test_a_threshold_beyond_every_bound_cuts_nothing():
    exact = Engine(tt_bits=16, probcut=0)
    wide = Engine(tt_bits=16, probcut=1_000_000)  # bounds past a sure win: no shallow search is even tried
    for board in _positions(4, 6):
        exact.clear()
        wide.clear()
        assert wide.search_depth(board, 6, selective=True) == exact.search_depth(board, 6)


def test_the_selective_search_visits_fewer_nodes_and_stays_near_the_exact_value():
    engine = Engine(tt_bits=18)
    exact_nodes = selective_nodes = 0
    gaps = []
    for board in _positions(8, 7):
        engine.clear()
        exact, _ = engine.search_depth(board, 8)
        exact_nodes += int(engine.ctl[S.NODES])
        engine.clear()
        selective, square = engine.search_depth(board, 8, selective=True)
        selective_nodes += int(engine.ctl[S.NODES])
        assert any(move.square == square for move in board.legal_moves())
        gaps.append(abs(selective - exact))
    assert selective_nodes < 0.8 * exact_nodes
    # a cut is a bet of 1.5 sigma: most values stay close (median within 3 discs)
    assert np.median(gaps) <= 3 * evaluation.SCALE
