"""The results database: schedule stored once, each game finished once, a foreign schedule refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from othello_arena.tournaments.pairing import ScheduledGame
from othello_arena.tournaments.store import GameOutcome, Store, StoreError

GAMES = [ScheduledGame("r01-p001-g1", 1, 1, 1, "a", "b", 7), ScheduledGame("r01-p001-g2", 1, 1, 2, "b", "a", 8)]


def test_a_game_is_counted_once(tmp_path: Path) -> None:
    with Store(tmp_path / "t.sqlite") as store:
        store.bind("key", {})
        store.add_round(1, GAMES)
        store.add_round(1, GAMES)  # a resumed run stores nothing twice
        assert [g.key for g in store.scheduled_games()] == [g.key for g in GAMES]
        store.mark_running("r01-p001-g1")
        assert store.counts() == {"scheduled": 2, "finished": 0, "running": 1}
        first = GameOutcome("W", "normal", 40, 24, white_stderr="x" * 200_000)
        assert store.finish("r01-p001-g1", first)
        assert not store.finish("r01-p001-g1", GameOutcome("B", "normal", 10, 54))
        [game] = store.finished_games()
        assert (game.winner, game.white_discs) == ("W", 40)
        row = next(store.game_rows())
        assert len(row["white_stderr"]) < 70_000 and "characters cut" in row["white_stderr"]
        store.mark_running("r01-p001-g2")
    # A runner that died left a game running: it goes back to the queue.
    with Store(tmp_path / "t.sqlite") as store:
        assert store.reset_running() == 1
        assert [g.key for g in store.unfinished_games()] == ["r01-p001-g2"]


def test_a_different_schedule_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "t.sqlite") as store:
        store.bind("one", {})
        store.bind("one", {"time": 2})
        with pytest.raises(StoreError, match="different schedule"):
            store.bind("two", {})


def test_reading_needs_an_existing_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results yet"):
        Store(tmp_path / "none.sqlite", create=False)
    assert not (tmp_path / "none.sqlite").exists()
