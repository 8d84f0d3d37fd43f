"""The results database: schedule stored once, each game finished once, a foreign schedule refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from othello_arena.protocol import BLACK, WHITE, Result, Termination
from othello_arena.tournaments.schedule.pairing import ScheduledGame
from othello_arena.tournaments.results.store import GameOutcome, Store, StoreError

GAMES = [ScheduledGame("r01-p001-g1", 1, 1, 1, "a", "b", 7), ScheduledGame("r01-p001-g2", 1, 1, 2, "b", "a", 8)]


def test_a_game_is_counted_once(tmp_path: Path) -> None:
    with Store(tmp_path / "t.sqlite") as store:
        store.bind("key", {})
        store.add_round(1, GAMES)
        store.add_round(1, GAMES)  # a resumed run stores nothing twice
        assert [g.key for g in store.scheduled_games()] == [g.key for g in GAMES]
        store.mark_running("r01-p001-g1")
        assert store.counts() == {"scheduled": 2, "finished": 0, "running": 1, "excluded": 0}
        assert store.counts(exclude=["a"]) == {"scheduled": 0, "finished": 0, "running": 0, "excluded": 2}
        first = GameOutcome(Result(WHITE, Termination.TIMEOUT, 40, 24, "b did not move"), white_stderr="x" * 200_000)
        assert store.finish("r01-p001-g1", first)
        assert not store.finish("r01-p001-g1", GameOutcome(Result(BLACK, Termination.NORMAL, 10, 54)))
        [game] = store.finished_games()
        assert game.result == first.result  # the one Result, stored and read back whole
        row = next(store.game_rows())
        assert row.white_stderr and len(row.white_stderr) < 70_000 and "characters cut" in row.white_stderr
        store.mark_running("r01-p001-g2")
    # A runner that died left a game running: it goes back to the queue, its attempt kept as voided.
    with Store(tmp_path / "t.sqlite") as store:
        assert store.void_running("runner died") == ["r01-p001-g2"]
        assert [g.key for g in store.unfinished_games()] == ["r01-p001-g2"]
        assert store.mark_running("r01-p001-g2") == 2
        attempts = [(r.key, r.attempt, r.outcome.value, r.why) for r in store.attempt_rows()]
        assert attempts == [("r01-p001-g1", 1, "finished", None), ("r01-p001-g2", 1, "voided", "runner died"),
                            ("r01-p001-g2", 2, "running", None)]
        assert list(store.voided()) == ["r01-p001-g2"]


def test_a_result_and_the_next_start_share_a_transaction_and_the_start_can_be_taken_back(tmp_path: Path) -> None:
    """finish_then_start stores the result and begins the next attempt at once; unmark leaves the row as it was."""
    three = [*GAMES, ScheduledGame("r01-p001-g3", 1, 1, 3, "a", "b", 9)]
    with Store(tmp_path / "t.sqlite") as store:
        store.bind("key", {})
        store.add_round(1, three)
        store.mark_running("r01-p001-g2", worker="w1")
        store.void_running("runner died")  # g2: scheduled again, one voided attempt, its start and worker kept
        before = store.game_row("r01-p001-g2")
        store.mark_running("r01-p001-g1")
        outcome = GameOutcome(Result(WHITE, Termination.NORMAL, 40, 24))
        finished, mark = store.finish_then_start("r01-p001-g1", outcome, "r01-p001-g2", runner="me")
        assert finished and mark is not None and mark.attempt == 2
        assert store.counts() == {"scheduled": 3, "finished": 1, "running": 1, "excluded": 0}
        assert [(r.key, r.attempt, r.outcome.value) for r in store.attempt_rows()] == [
            ("r01-p001-g1", 1, "finished"), ("r01-p001-g2", 1, "voided"), ("r01-p001-g2", 2, "running")]
        store.unmark(mark)  # the runner heard the result and started nothing more
        assert store.game_row("r01-p001-g2") == before
        assert [(r.key, r.attempt, r.outcome.value) for r in store.attempt_rows()] == [
            ("r01-p001-g1", 1, "finished"), ("r01-p001-g2", 1, "voided")]
        # A result stored twice is refused, and a finished game is never marked: nothing to take back.
        assert store.finish_then_start("r01-p001-g1", outcome, "r01-p001-g1") == (False, None)
        assert store.counts()["running"] == 0
        assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL for every commit that counts


def test_set_up_commits_are_written_unsynced_and_the_setting_comes_back(tmp_path: Path) -> None:
    """deferred_sync: NORMAL inside (WAL: the next synced commit syncs them), FULL again after, even on an error."""
    with Store(tmp_path / "t.sqlite") as store:
        with store.deferred_sync():
            assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 1
            store.bind("key", {})
        assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 2
        with pytest.raises(StoreError), store.deferred_sync():
            store.bind("another key", {})
        assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 2
    with Store(tmp_path / "t.sqlite") as store:  # what was written is there
        store.bind("key", {})


def test_a_schema_1_database_is_migrated_and_nothing_is_lost(tmp_path: Path) -> None:
    """A database written before attempts and hashes existed keeps its games and gains the new columns."""
    import sqlite3

    from othello_arena.tournaments.results import store as store_module

    old_schema = store_module.SCHEMA.split("CREATE TABLE IF NOT EXISTS attempts")[0].replace(",\n    record_sha256 TEXT", "")
    db = sqlite3.connect(str(tmp_path / "t.sqlite"))
    db.executescript(old_schema)
    db.execute("INSERT INTO games (key, round, pairing, game_index, white, black, seed, status, winner, reason, "
               "white_discs, black_discs) VALUES ('r01-p001-g1', 1, 1, 1, 'a', 'b', 7, 'finished', 'W', 'normal', 40, 24)")
    db.commit()
    db.close()
    with Store(tmp_path / "t.sqlite", create=False) as reader:  # a reader of an old file does not fail
        assert reader.attempt_rows() == [] and reader.builds() == {}
    with Store(tmp_path / "t.sqlite") as store:
        [game] = store.finished_games()
        assert (game.key, game.result) == ("r01-p001-g1", Result(WHITE, Termination.NORMAL, 40, 24))
        assert next(store.game_rows()).record_sha256 is None
        assert store.get_meta("schema") == "3"
        assert store.withdrawals() == {} and store.replaced_rows() == []


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


def test_a_schema_2_database_is_upgraded_when_only_its_agents_changed(tmp_path: Path) -> None:
    """Schema 2 kept a key with the agents in it: checked with the agents it started with, then upgraded."""
    with Store(tmp_path / "t.sqlite") as store:
        store.set_meta("schedule_key", "old-key-of-a-b")
        store.set_meta("settings", '{"agents": [{"name": "a"}, {"name": "b"}]}')
        keys = {("a", "b"): "old-key-of-a-b"}
        with pytest.raises(StoreError, match="different schedule"):  # the rules changed, not only the agents
            store.bind("basis", {}, legacy_key=lambda names: "another key")
        store.bind("basis", {"agents": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
                   legacy_key=lambda names: keys[tuple(names)])
        assert store.get_meta("schedule_basis") == "basis"
        store.bind("basis", {})  # from now on the basis alone decides
        with pytest.raises(StoreError, match="different schedule"):
            store.bind("other", {})


def test_a_new_results_folder_is_the_instructors_alone(tmp_path: Path) -> None:
    # Every student's games, stderr and build logs end up in it: other users of a lab server must not read it.
    import stat

    from othello_arena.tournaments.results.store import Store

    store = Store(tmp_path / "class" / "results" / "tournament.sqlite")
    store.close()
    assert stat.S_IMODE((tmp_path / "class" / "results").stat().st_mode) == 0o700
