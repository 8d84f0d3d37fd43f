"""The selective endgame: its table is fitted right and shipped, a selective solve never passes for an
exact one (in the table or in a comment), and the exact solve stays exact."""

from __future__ import annotations

import random

import numpy as np
import pytest

from champion_helpers import position_with_empties
from othello_arena.agents.champion import probcut as PC
from othello_arena.agents.champion import probcut_training
from othello_arena.agents.champion import search as S
from othello_arena.agents.champion.engine import Engine, SearchResult


def _exact(board) -> int:
    engine = Engine(tt_bits=16)
    score, _ = engine.solve_selective(board, 0)
    return score


def _positions(count: int, empties: int, seed: int) -> list:
    rng = random.Random(seed)
    return [position_with_empties(rng, empties) for _ in range(count)]


def test_the_shipped_file_holds_both_fits():
    endgame = PC.load_endgame_table()
    assert endgame.shape == (PC.ENDGAME_ROWS, PC.N_PARAMS)
    for n in range(PC.ENDGAME_ROWS):
        a, _, sigma, shallow = endgame[n]
        assert shallow == PC.shallow_depth(n)
        if n < PC.ENDGAME_MIN_EMPTIES:
            assert np.isinf(sigma)
        else:  # fitted (or extrapolated): a line near the diagonal, an error of a few discs
            assert 0.5 < a < 1.5
            assert 0 < sigma < 20
    # beyond the labelled empties sigma follows their trend, never below the deepest labelled row
    assert endgame[40, PC.PARAM_SIGMA] >= endgame[30, PC.PARAM_SIGMA]  # beyond the labels: never narrower
    assert np.isfinite(PC.load_table()[3, 10, PC.PARAM_SIGMA])  # the midgame's fit is still there


def test_a_file_without_an_endgame_table_gives_one_that_cuts_nothing(tmp_path):
    path = tmp_path / "midgame_only.npz"
    np.savez(path, table=PC.empty_table())
    assert np.isinf(PC.load_endgame_table(str(path))[:, PC.PARAM_SIGMA]).all()
    np.savez(path, table=PC.empty_table(), endgame=np.zeros((3, 4)))
    with pytest.raises(ValueError, match="'endgame' has shape"):
        PC.load_endgame_table(str(path))


def test_each_fit_keeps_the_other_in_the_file(tmp_path):
    out = str(tmp_path / "probcut.npz")
    midgame = PC.empty_table()
    midgame[2, 5, PC.PARAM_SIGMA] = 123.0
    probcut_training.save_tables(out, table=midgame, positions=10)
    endgame = PC.empty_endgame_table()
    endgame[20, PC.PARAM_SIGMA] = 4.5
    probcut_training.save_tables(out, endgame=endgame, endgame_positions=5)
    assert PC.load_table(out)[2, 5, PC.PARAM_SIGMA] == 123.0
    assert PC.load_endgame_table(out)[20, PC.PARAM_SIGMA] == 4.5
    probcut_training.save_tables(out, table=PC.empty_table(), positions=20)  # a midgame refit
    assert PC.load_endgame_table(out)[20, PC.PARAM_SIGMA] == 4.5


def test_the_endgame_fit_recovers_a_known_line_and_extends_sigmas_trend():
    rng = np.random.default_rng(5)
    empties = np.repeat(np.arange(12, 19), 400)
    truth = rng.normal(0, 15, size=len(empties))
    noise = 0.5 * (empties - 10)  # sigma 1 at 12 empties, 4 at 18
    exact = np.round(truth + rng.normal(0, 1, size=len(empties)) * noise)
    shallow = np.round((truth - 2) / 0.9 * 100)  # exact = 0.9 * shallow + 2, the shallow value in centi-discs
    shallow[:50] = 20_000 + 6400  # sure results are no estimates: left out
    table = probcut_training.fit_endgame_table(empties, shallow.astype(np.int64), exact.astype(np.int64))
    for n in range(12, 19):
        a, b, sigma, _ = table[n]
        assert a == pytest.approx(0.9, abs=0.03)
        assert b == pytest.approx(2, abs=0.5)
        assert sigma == pytest.approx(0.5 * (n - 10), rel=0.15)
    assert table[30, PC.PARAM_SIGMA] == pytest.approx(0.5 * 20, rel=0.15)  # the trend, beyond the labels
    assert table[30, PC.PARAM_A] == table[18, PC.PARAM_A]
    assert np.isinf(table[11, PC.PARAM_SIGMA])


def test_without_a_fit_or_beyond_every_bound_the_selective_solve_is_exact():
    uncut = Engine(tt_bits=16, endgame_table=PC.empty_endgame_table())
    shipped = Engine(tt_bits=16)
    for board in _positions(4, 15, 11):
        exact = _exact(board)
        uncut.clear()
        assert uncut.solve_selective(board, 260)[0] == exact
        shipped.clear()
        assert shipped.solve_selective(board, 1_000_000)[0] == exact  # bounds past any score: no cut tried


def test_the_highest_level_finds_the_exact_score_where_its_bet_is_safe():
    engine = Engine(tt_bits=18)
    # below the first cutting depth every level is the exact solve
    for board in _positions(4, PC.ENDGAME_MIN_EMPTIES - 1, 12):
        engine.clear()
        assert engine.solve_selective(board, PC.ENDGAME_THRESHOLDS[-1])[0] == _exact(board)
    # above it, 2.6 sigma is a bet lost about once in 200 cuts: these positions' scores are all exact
    gaps = []
    for board in _positions(6, 16, 13):
        engine.clear()
        score, square = engine.solve_selective(board, PC.ENDGAME_THRESHOLDS[-1])
        assert any(move.square == square for move in board.legal_moves())
        gaps.append(abs(score - _exact(board)))
    assert max(gaps) == 0, gaps


def test_a_selective_bound_in_the_table_is_never_taken_for_a_proof():
    # A table whose bets are wrong: it predicts every exact score 20 discs above the shallow search's
    # view, within a hundredth of a disc, so the selective solves are far off...
    wrong = PC.empty_endgame_table()
    wrong[PC.ENDGAME_MIN_EMPTIES:, PC.PARAM_B] = 20.0
    wrong[PC.ENDGAME_MIN_EMPTIES:, PC.PARAM_SIGMA] = 0.01
    engine = Engine(tt_bits=18, endgame_table=wrong)
    off = 0
    for board in _positions(4, 16, 14):
        exact = _exact(board)
        engine.clear()
        off += engine.solve_selective(board, 110)[0] != exact
        # ...yet the exact solve in the same table, full of their bounds, is exact
        assert engine.solve_selective(board, 0)[0] == exact
        assert engine.solve_window(board, -64, 64)[0] == exact
    assert off >= 3  # the wrong table did cut: the test would see a bound taken for a proof


def test_a_selective_result_says_so_in_its_comment():
    selective = SearchResult(19, 6.0, False, 24, 1000, 0.1, selectivity=200)
    assert "champion selective 2.0 sigma +6 (empties to the winner) with 24 empties move D3" in selective.comments()[0]
    exact = SearchResult(19, 6.0, True, 20, 1000, 0.1)
    assert "champion solved exactly +6 (empties to the winner) with 20 empties" in exact.comments()[0]
    assert "selective" not in exact.comments()[0]
    deepening = SearchResult(19, 1.5, False, 12, 1000, 0.1)
    assert deepening.comments()[0].startswith("champion depth 12 eval +1.50 move D3")


@pytest.mark.slow
def test_under_a_clock_too_short_for_the_exact_solve_the_move_comes_from_a_level_and_says_which():
    # 20 empties: the exact solve is not tried under 3 s (its cautious estimate is 3.4 s), the selective
    # levels are.  Which level ends depends on the machine; what the comment says must be what was done.
    engine = Engine(tt_bits=20)
    for board in _positions(3, 20, 15):
        engine.clear()
        result = engine.think(board, seconds=2.5)
        comment = result.comments()[0]
        assert any(move.square == result.square for move in board.legal_moves())
        if result.selectivity:
            assert result.selectivity in PC.ENDGAME_THRESHOLDS and not result.exact
            assert f"selective {result.selectivity / 100:.1f} sigma {result.score:+.0f}" in comment
        elif result.exact:
            assert comment.startswith(f"champion solved exactly {result.score:+.0f}")
            assert result.score == _exact(board)
        else:  # not even the first level ended: the deepening's move, said as such
            assert comment.startswith(f"champion depth {result.depth} eval")
        assert ("selective" in comment) == bool(result.selectivity)


def test_the_solver_marks_its_entries_by_how_sure_they_are():
    ctl = np.zeros(S.CTL_SLOTS, dtype=np.int64)
    assert S.solved_rank(ctl) == S.EXACT_RANK
    ranks = []
    for threshold in (*PC.ENDGAME_THRESHOLDS, 1_000_000):
        ctl[S.ENDCUT] = threshold
        ranks.append(S.solved_rank(ctl))
    assert ranks == sorted(ranks) and ranks[-1] < S.EXACT_RANK  # surer with the threshold, never a proof
    assert S.solved_floor(S.EXACT_RANK) > S.solved_depth(60, ranks[-1])
    assert S.solved_floor(ranks[0]) > S.EXACT_DEPTH + 60  # above every midgame depth


def test_the_endgame_labels_are_exact_scores_and_shallow_searches_of_self_play_positions():
    logged: list[str] = []
    empties, shallow, exact = probcut_training.label_endgame_positions(2, PC.ENDGAME_MIN_EMPTIES + 1, seed=3,
                                                                       log=logged.append)
    assert sorted(empties.tolist()) == [12, 12, 13, 13]
    assert all(abs(score) <= 64 and score % 2 == 0 for score in exact.tolist())
    assert (np.abs(shallow) < 1_000_000).all()
    # the midgame labels come from the same games' generator
    midgame_empties, values = probcut_training.label_positions(3, 3, seed=3, log=logged.append)
    assert values.shape == (3, 4) and ((14 <= midgame_empties) & (midgame_empties <= 54)).all()


def test_analyze_says_a_selective_score_is_one():
    from othello_arena.agents.champion.cli import EMPTIES_TO_WINNER, summary

    line = summary({"best_move": "E8", "score": 4, "exact": False, "depth": 19, "nodes": 10, "seconds": 0.1,
                    "score_convention": EMPTIES_TO_WINNER, "selectivity_sigma": 2.6})
    assert line.startswith("best move E8  score +4 (selective 2.6 sigma, empties to the winner)")
