"""The training keeps its games as positions: split over processes or saved and read back, the same positions."""

from __future__ import annotations

import numpy as np
import pytest

from othello_arena.agents.champion import evaluation, training
from othello_arena.agents.champion.engine import Engine


@pytest.fixture(scope="module")
def engine():
    return Engine(tt_bits=14, eval_kind=evaluation.EVAL_PAPER_SIMPLIFIED)


def _same(a: training.Positions, b: training.Positions) -> bool:
    return (a.games == b.games and np.array_equal(a.own, b.own) and np.array_equal(a.opp, b.opp)
            and np.array_equal(a.labels, b.labels))


def test_games_split_in_parts_are_the_games_played_at_once(engine):
    whole = training.generate(4, 9, solve_empties=8, engine=engine)
    parts = [training.generate(1, 9, solve_empties=8, engine=engine, first_game=0),
             training.generate(3, 9, solve_empties=8, engine=engine, first_game=1)]
    assert _same(whole, training.Positions.join(parts))
    assert len(whole.labels) > 4 * 40  # every position of a game, not one a game
    other = training.generate(4, 10, solve_empties=8, engine=engine)
    assert not np.array_equal(whole.own[:100], other.own[:100])


def test_positions_saved_are_the_positions_read(engine, tmp_path):
    played = training.generate(2, 3, solve_empties=8, engine=engine)
    path = str(tmp_path / "positions.npz")
    training.save_positions(played, path, seed=3)
    assert _same(training.load_positions(path), played)


def test_a_file_of_something_else_is_refused_by_name(tmp_path):
    path = tmp_path / "weights.npz"
    np.savez(path, weights=np.zeros(3))
    with pytest.raises(ValueError, match="weights.npz"):
        training.load_positions(str(path))
