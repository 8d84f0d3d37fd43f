"""The clock of one side (referee/clock.py): the one rule the referee's games and the checker time moves by."""

import doctest

import pytest

from othello_arena.referee import GameConfig, clock
from othello_arena.referee.clock import GRACE_SECONDS, STARTUP_SECONDS, Clock, TimeControl


def test_docstring_examples() -> None:
    result = doctest.testmod(clock, raise_on_error=False, verbose=False)
    assert result.attempted > 0 and result.failed == 0


def test_the_first_move_gets_the_startup_allowance_and_every_move_the_grace() -> None:
    side = Clock(TimeControl(2.0, grace=0.25, startup=5.0))
    side.start(100.0)
    assert side.deadline() == 107.25 and side.explain() == "2 + 0.25 s + 5 s to start up"
    assert not side.expired(107.25) and side.expired(107.3)
    assert side.stop(103.5) == 3.5  # slow, but within the start-up allowance
    side.start(200.0)
    assert side.deadline() == 202.25 and side.explain() == "2 + 0.25 s"
    assert side.expired(202.3)
    assert side.stop(201.0) == 1.0
    assert side.used == 4.5 and side.moves == 2


def test_a_deadline_from_another_start_counts_the_same_allowance() -> None:
    # the second side's colour file: deleted within the time of its first move
    side = Clock(TimeControl(1.0))
    assert side.deadline(since=10.0) == 10.0 + 1.0 + GRACE_SECONDS + STARTUP_SECONDS


def test_no_limit_never_expires() -> None:
    person = Clock(TimeControl(None))
    person.start(0.0)
    assert person.deadline() is None and not person.expired(1e9) and person.allowance() is None
    assert person.limit_text() == "no limit"
    assert person.stop(42.0) == 42.0 and person.used == 42.0


def test_the_game_config_gives_each_side_its_setting() -> None:
    config = GameConfig(time_per_move=3, manual_time=30, grace=0.5, startup_time=2, agent_times=(("fast", 1),))
    assert config.time_control("bob", manual=False) == TimeControl(3, 0.5, 2)
    assert config.time_control("alice", manual=True) == TimeControl(30, 0.5, 2)
    assert config.time_control("fast", manual=False).per_move == 1.0  # time odds
    assert GameConfig().time_control("alice", manual=True).per_move is None  # a person: no limit by default
    assert GameConfig(time_per_move=1.5).time_control("bob", manual=False).limit_text() == "1.5 s"


@pytest.mark.parametrize("fields, message", [
    ({"per_move": 0}, "time per move must be positive or None"),
    ({"per_move": 1, "grace": -1}, "grace must not be negative"),
    ({"per_move": 1, "startup": -0.5}, "startup must not be negative"),
])
def test_a_bad_setting_is_refused_by_name(fields: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TimeControl(**fields)
