"""The clock of one side (referee/clock.py): the one rule the referee's games and the checker time moves by."""

import doctest
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import BLACK, WHITE, GameRecord, Termination
from othello_arena.referee import AgentSpec, GameConfig, clock, play_game
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


# -- the game clock (issue 25): a bank with an increment ----------------------------


@pytest.mark.parametrize("text, message", [
    ("5", "clock '5': expected BASE\\+INC in seconds"),
    ("+1", "clock '\\+1': the base \\(before '\\+'\\) is missing"),
    ("5+", "the increment \\(after '\\+'\\) is missing"),
    ("-3+1", "the base \\(before '\\+'\\) must be a number of seconds, 0 or more"),
    ("3+-1", "the increment \\(after '\\+'\\) must be a number of seconds, 0 or more"),
    ("0+1", "the base must be more than 0 seconds"),
    ("1e9+0", "more than the 86400 s allowed"),
    ("3+5000", "more than the 3600 s allowed"),
    ("nan+1", "must be a number of seconds"),
    ("five+1", "'five' is not a number of seconds"),
    ("1+2+3", "expected BASE\\+INC"),
])
def test_a_bad_clock_is_named_with_the_form_expected(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        clock.parse_clock(text)
    assert "e.g. 300+2" in str(caught.value)


def test_the_bank_pays_for_each_move_and_earns_the_increment() -> None:
    side = Clock(TimeControl(None, grace=0.25, startup=5.0, base=10.0, increment=1.0))
    side.start(0.0)
    assert side.allowance() == 10.0 + 0.25 + 5.0  # the whole bank, the grace, the start-up
    side.stop(6.0)  # 1 s of thinking after the start-up allowance, which the bank does not pay
    assert side.bank == 10.0
    side.start(100.0)
    assert side.deadline() == 110.25 and side.remaining(104.0) == 6.0
    side.stop(104.0)
    assert side.bank == 7.0 and side.used == 10.0
    side.start(200.0)
    assert side.expired(207.3) and not side.expired(207.2)  # the bank and the grace, no more
    side.stop(207.2)  # in the grace: on time, and the bank is empty, not negative
    assert side.bank == 1.0  # the increment alone


def test_a_cap_per_move_combines_with_the_bank() -> None:
    capped = Clock(TimeControl(2.0, grace=0.25, startup=0.0, base=60.0, increment=0.0))
    capped.start(0.0)
    assert capped.allowance() == 2.25  # the cap is the smaller
    capped.stop(1.0)
    assert capped.bank == 59.0
    low = Clock(TimeControl(2.0, grace=0.25, startup=0.0, base=1.0, increment=0.0))
    assert low.allowance() == 1.25  # the bank is the smaller
    assert TimeControl(2.0, base=300.0, increment=2.0).fair_share() == 2.0  # OTHELLO_TIME within the cap
    assert TimeControl(None, base=300.0, increment=2.0).fair_share() == 12.0


def test_the_timeout_detail_names_the_clock_and_the_bank_before_the_move() -> None:
    side = Clock(TimeControl(None, grace=0.25, startup=0.0, base=3.0, increment=0.1))
    side.start(0.0)
    side.stop(2.5)
    side.start(10.0)
    assert side.limit_text() == "0.6 s (clock 3+0.1: 0.600 s left before the move)"


def test_the_game_config_gives_each_side_its_clock() -> None:
    config = GameConfig(time_per_move=None, clock=(3, 0.1), agent_clocks=(("slow", (10, 1)),))
    assert config.time_control("bob", manual=False) == TimeControl(None, base=3.0, increment=0.1)
    assert config.time_control("slow", manual=False).clock_text == "10+1"  # clock odds
    assert config.time_control("me", manual=True).base is None  # a person: no clock unless given one
    with pytest.raises(ValueError, match="only under a game clock"):
        GameConfig(time_per_move=None)
    with pytest.raises(ValueError, match="clock of slow: clock '10\\+-1'"):
        GameConfig(agent_clocks=(("slow", (10, -1)),))


# -- real games under a clock ---------------------------------------------------------

SLOW_AGENT = """
import sys, time
from othello_arena.agents.runtime import run_agent

def slow(board, colour, time_left):
    time.sleep(0.6)  # whatever the clock says
    return board.legal_moves()[0]

raise SystemExit(run_agent(slow, sys.argv[1]))
"""


def test_an_agent_spending_more_than_its_bank_loses_on_time_naming_the_clock(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(SLOW_AGENT)
    slow = AgentSpec.parse(f"slow={sys.executable} slow.py {{name}}", base=tmp_path)
    config = GameConfig(time_per_move=None, clock=(3, 0.1), end_grace=0.3)
    record = play_game(slow, AgentSpec.builtin("random"), config, tmp_path / "game", seed=1)
    assert record.result is not None and record.result.termination is Termination.TIMEOUT
    assert record.result.winner is BLACK
    assert "clock 3+0.1" in record.result.detail and "left before the move" in record.result.detail
    assert record.clock == "3+0.1"
    # 0.6 s a move against 3 s and 0.1 s a move: out of time after about six moves, well before move 30
    slow_moves = [entry for entry in record.moves if entry.move.colour is WHITE]
    assert 3 <= len(slow_moves) < 15
    assert all(entry.clock is not None for entry in record.moves)  # every move carries the mover's clock
    banks = [entry.clock for entry in slow_moves]
    assert banks == sorted(banks, reverse=True)  # the slow side's bank only shrinks
    again = GameRecord.from_json((tmp_path / "game" / "game.json").read_text())
    assert again.clock == "3+0.1" and [e.clock for e in again.moves] == [round(e.clock or 0, 4) for e in record.moves]


def test_two_quick_agents_finish_under_the_same_clock(tmp_path: Path) -> None:
    config = GameConfig(time_per_move=None, clock=(3, 0.1), end_grace=0.3)
    record = play_game(AgentSpec.builtin("greedy"), AgentSpec.builtin("random"), config, tmp_path / "game", seed=2)
    assert record.result is not None and record.result.termination is Termination.NORMAL
    assert all(entry.clock is not None and entry.clock > 0 for entry in record.moves)
    agents = record.extra["agents"]
    assert agents["greedy"]["clock"] == "3+0.1" and 0 < agents["greedy"]["bank"]


def test_the_command_line_refuses_a_bad_clock_by_name(tmp_path: Path) -> None:
    for bad in ("5", "+1", "-1+1", "99999999+0"):
        result = CliRunner().invoke(cli, ["play", "random", "random", "--clock", bad, "--out", str(tmp_path / "g")])
        assert result.exit_code == 2 and f"clock '{bad}'" in result.output and "BASE+INC" in result.output


@pytest.mark.slow
def test_othello_play_shows_time_use_against_the_bank(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["play", "greedy", "random", "--clock", "3+0.1", "--seed", "3",
                                      "--out", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert "time: greedy: " in result.output and "clock 3+0.1: " in result.output and "s left at the least" in result.output


BANK_READER = """
import os, sys
from othello_arena.agents.runtime import run_agent

class Reader:
    def clock(self, bank):  # the runtime's hook: the bank of the clock line, before each move
        with open("banks.txt", "a") as f:
            f.write(f"{bank}\\n")

    def __call__(self, board, colour, time_left):
        return board.legal_moves()[0]

with open("env.txt", "w") as f:
    f.write(f"{os.environ.get('OTHELLO_CLOCK')} {os.environ.get('OTHELLO_TIME')} {os.environ.get('OTHELLO_MOVE_CAP')}")
raise SystemExit(run_agent(Reader(), sys.argv[1]))
"""


@pytest.mark.parametrize("declared", [True, False])
def test_the_clock_line_goes_only_to_an_agent_that_declares_it(tmp_path: Path, declared: bool) -> None:
    (tmp_path / "reader.py").write_text(BANK_READER)
    prefix = "clock:" if declared else ""
    reader = AgentSpec.parse(f"{prefix}reader={sys.executable} reader.py {{name}}", base=tmp_path)
    assert reader.reads_clock is declared and str(reader).startswith(prefix + "reader=")
    config = GameConfig(time_per_move=20, clock=(30, 1), end_grace=0.3)
    record = play_game(reader, AgentSpec.builtin("greedy"), config, tmp_path / "game", seed=1)
    assert record.result is not None and record.result.termination is Termination.NORMAL
    # told at start: the clock, a fair share of it (30/30 + 1 = 2 s, within the cap of 20), the cap
    assert (tmp_path / "game" / "reader" / "env.txt").read_text() == "30+1 2 20"
    banks = (tmp_path / "game" / "reader" / "banks.txt").read_text().split()
    mine = [entry for entry in record.moves if entry.move.colour is WHITE]
    if declared:  # before each move, the bank after the last (30 s, then the record's own figures, rounded)
        assert float(banks[0]) == 30.0 and len(banks) == len(mine)
        assert [float(bank) for bank in banks[1:]] == pytest.approx([entry.clock for entry in mine[:-1]], abs=0.001)
    else:
        assert set(banks) == {"None"}


def test_the_terminal_shows_each_bank_beside_the_time_used() -> None:
    from othello_arena.protocol import Board
    from othello_arena.referee.display import Display
    from othello_arena.referee.game import GameEvent

    event = GameEvent("move", Board(), clocks={WHITE: 1.5, BLACK: 0.5}, banks={WHITE: 2.25, BLACK: None},
                      names={WHITE: "alice", BLACK: "bob"})
    status = Display(quiet=True).status(event)
    assert "alice: 2 discs, 1.50 s (2.25 s left)" in status and "bob: 2 discs, 0.50 s" in status
    assert "bob: 2 discs, 0.50 s (" not in status  # bob has no clock


# -- a pause between moves, for people watching two programs ------------------------------------------


def near_the_end(empties: int) -> list:
    """The first moves of a game (each the first legal move) until ``empties`` squares are left, the game on."""
    from othello_arena.protocol import Board

    board, moves = Board(), []
    while sum(1 for sq in range(64) if board.at(sq) is None) > empties:
        move = board.legal_moves()[0]
        moves.append(move)
        board = board.play(move)
    assert board.outcome() is None
    return moves


@pytest.mark.slow
def test_a_pause_between_moves_is_nobodys_time(tmp_path: Path) -> None:
    # Each pause (3.5 s) is longer than a move may take (3 s + the grace: room for a loaded machine's wake-ups):
    # were it on a clock, the side given the move after it would lose on time from its second move on.
    events: list = []
    config = GameConfig(time_per_move=3, move_pause=3.5)
    seen = lambda event: events.append((time.monotonic(), event))  # noqa: E731
    record = play_game(AgentSpec.builtin("greedy"), AgentSpec.builtin("beginner"), config, tmp_path / "g",
                       seed=1, opening=near_the_end(6), on_event=seen)
    assert record.result is not None and record.result.termination is Termination.NORMAL, record.result
    assert len(record.moves) >= 4  # two moves a side at least, past each side's start-up allowance
    assert all(entry.seconds < 3.5 for entry in record.moves)
    # Each move is shown (so logged, and on the watchers' pages) before its pause: its relay comes the pause later.
    moves = [when for when, event in events if event.kind == "move"]
    relays = [when for when, event in events if event.kind == "relayed"]
    assert len(relays) == len(record.moves) - 1  # (the last move ends the game: no relay, no pause)
    assert all(relayed - shown >= 3.5 for shown, relayed in zip(moves, relays))

@pytest.mark.parametrize("pause", [-0.1, 61.0, float("nan")])
def test_a_pause_out_of_range_is_refused_by_name(pause: float) -> None:
    with pytest.raises(ValueError, match="move_pause must be from 0 to 60 seconds"):
        GameConfig(move_pause=pause)
