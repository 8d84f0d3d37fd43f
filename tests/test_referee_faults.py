"""The referee against agents that misbehave: real processes, real files.

Every game must end with the right winner and reason, leave a complete
``game.json``, and leave no process running.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest
from referee_helpers import command, left_running, recorded_pids, write_agent

from othello_arena.protocol import BLACK, WHITE, Colour, GameRecord
from othello_arena.referee import AgentSpec, GameConfig, play_game

FAST = GameConfig(time_per_move=3, end_grace=0.3)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    return write_agent(tmp_path)


def run(
    tmp_path: Path,
    script: Path,
    white_fault: str = "none",
    at: int = 0,
    black_fault: str = "none",
    black_at: int = 0,
    config: GameConfig = FAST,
    **extra: str,
) -> GameRecord:
    """Play alice (White) against bob (Black); check what every game must leave."""
    game_dir = tmp_path / "game"
    white = AgentSpec.program("alice", command(script, white_fault, at, **extra))
    black = AgentSpec.program("bob", command(script, black_fault, black_at))
    record = play_game(white, black, config, game_dir, seed=7)
    assert record.result is not None
    saved = GameRecord.load(str(game_dir / "game.json"))
    assert saved.result == record.result
    assert [m.move for m in saved.moves] == [m.move for m in record.moves]
    saved.final_board()  # every recorded move replays
    assert left_running(game_dir) == []
    return record


def check(record: GameRecord, winner: Optional[Colour], reason: str) -> None:
    assert record.result is not None
    assert (record.result.winner, record.result.termination) == (winner, reason), record.result


def check_normal_end(record: GameRecord) -> None:
    """The game was played to its end: the result is the one the rules give the replayed final board."""
    end = record.final_board().outcome()
    assert end is not None, "the game is not over"
    assert record.result == end, (record.result, end)


@pytest.mark.parametrize(
    ("fault", "at", "reason"),
    [
        ("crash-start", 0, "crash"),
        ("crash", 2, "crash"),
        ("garbage", 1, "malformed"),
        ("empty", 1, "malformed"),
        ("two", 1, "malformed"),
        ("wrong-colour", 1, "illegal"),
        ("occupied", 1, "illegal"),
        ("illegal-square", 0, "illegal"),
        ("huge", 1, "malformed"),
        ("fifo", 1, "malformed"),
    ],
)
def test_a_fault_loses_the_game(tmp_path: Path, script: Path, fault: str, at: int, reason: str) -> None:
    record = run(tmp_path, script, fault, at)
    check(record, BLACK, reason)
    assert record.result is not None and record.result.move_number == len(record.moves) + 1
    assert record.fault is not None and record.fault.colour is WHITE
    assert len([m for m in record.moves if m.move.colour is WHITE]) == at


def test_the_faulty_move_is_kept_with_its_comment_and_number(tmp_path: Path, script: Path) -> None:
    # White's 3rd move is the game's 5th: an occupied square, with the agent's own comment above it.
    record = run(tmp_path, script, "occupied-comment", 2)
    check(record, BLACK, "illegal")
    assert record.result is not None and record.result.move_number == 5 == len(record.moves) + 1
    saved = GameRecord.load(str(tmp_path / "game" / "game.json"))
    assert saved.fault is not None and saved.fault.colour is WHITE
    assert saved.fault.line == "(W D 4)"
    assert saved.fault.comments == ["depth 3 picks D4"]
    assert saved.fault.seconds is not None and saved.fault.seconds >= 0
    assert saved.result is not None and saved.result.move_number == 5


def test_a_pass_while_a_move_exists_is_illegal(tmp_path: Path, script: Path) -> None:
    record = run(tmp_path, script, "bad-pass", 1)
    check(record, BLACK, "illegal")
    assert "a pass is legal only" in record.result.detail  # type: ignore[union-attr]


def test_an_agent_that_never_answers_loses_on_time(tmp_path: Path, script: Path) -> None:
    record = run(tmp_path, script, "silent", 1, config=GameConfig(time_per_move=1, end_grace=0.3))
    check(record, BLACK, "timeout")
    assert record.result is not None and record.result.move_number == 3
    assert "did not move within 1 s (1.25 s with grace); waited 1." in record.result.detail
    assert record.fault is not None and record.fault.line is None and (record.fault.seconds or 0) > 1.25
    assert "load_suspect" in record.extra


def test_an_answer_just_after_the_deadline_loses_on_time(tmp_path: Path, script: Path) -> None:
    # The agent answers 0.8 s after its 1 s (0.55 s after the grace margin).
    record = run(tmp_path, script, "late", 1, config=GameConfig(time_per_move=1, end_grace=0.3))
    check(record, BLACK, "timeout")


def test_the_first_move_has_a_start_up_allowance(tmp_path: Path, script: Path) -> None:
    # 1.8 s for the first move: within 1 s + 5 s of start-up, over 1 s + grace without it.
    allowed = run(tmp_path / "a", script, "late", 0, config=GameConfig(time_per_move=1, end_grace=0.3))
    assert allowed.moves[0].move.colour is WHITE and allowed.moves[0].seconds > 1.25
    # (the test agent then never moves again: its second move times out, with no allowance)
    check(allowed, BLACK, "timeout")
    assert len(allowed.moves) == 2
    strict = run(tmp_path / "b", script, "late", 0, config=GameConfig(time_per_move=1, startup_time=0, end_grace=0.3))
    check(strict, BLACK, "timeout")
    assert strict.moves == []


def test_time_odds_give_each_agent_its_own_clock(tmp_path: Path, script: Path) -> None:
    # alice has 2.5 s a move, bob the game's 1 s.  The "late" agent answers 0.8 s after the time it is told
    # (OTHELLO_TIME): alice is told her own, and is judged by it; bob keeps the game's.
    config = GameConfig(time_per_move=1, agent_times=(("alice", 2.5),), end_grace=0.3)
    alice_late = run(tmp_path / "a", script, "late", 1, config=config)
    check(alice_late, BLACK, "timeout")
    assert "over 2.5 s" in alice_late.result.detail or "within 2.5 s" in alice_late.result.detail  # type: ignore[union-attr]
    assert alice_late.extra["referee"]["agent_times"] == {"alice": 2.5}
    bob_late = run(tmp_path / "b", script, black_fault="late", black_at=1, config=config)
    check(bob_late, WHITE, "timeout")
    assert "over 1 s" in bob_late.result.detail or "within 1 s" in bob_late.result.detail  # type: ignore[union-attr]
    assert len([m for m in bob_late.moves if m.move.colour is WHITE]) == 2  # alice moved in time meanwhile


def test_black_crashing_mid_game_loses(tmp_path: Path, script: Path) -> None:
    record = run(tmp_path, script, black_fault="crash", black_at=3)
    check(record, WHITE, "crash")
    assert record.extra["agents"]["bob"]["exit_code"] == 1


def test_a_move_written_before_the_turn_is_malformed(tmp_path: Path, script: Path) -> None:
    record = run(tmp_path, script, black_fault="premature")
    check(record, WHITE, "malformed")
    assert "not its turn" in record.result.detail  # type: ignore[union-attr]


@pytest.mark.parametrize("fault", ["pieces", "pieces-reopen", "vim", "nano"])
def test_slow_and_editor_style_writes_are_read_whole(tmp_path: Path, script: Path, fault: str) -> None:
    record = run(tmp_path, script, fault, 1)
    check_normal_end(record)
    assert len(record.moves) >= 58
    if fault == "pieces":
        assert record.moves[2].comments == ["slow writer"]
        assert record.moves[2].seconds > 1.0


def test_a_symlinked_out_file_is_never_followed(tmp_path: Path, script: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("(W D 3)\nsecret\n")
    record = run(tmp_path, script, "symlink", 0, target=str(outside))
    check(record, BLACK, "malformed")
    assert "symbolic link" in record.result.detail  # type: ignore[union-attr]
    assert outside.read_text() == "(W D 3)\nsecret\n"


@pytest.mark.parametrize("fault", ["fork", "fork-setsid", "daemon"])
def test_children_left_behind_are_killed(tmp_path: Path, script: Path, fault: str) -> None:
    record = run(tmp_path, script, fault, 1)
    check_normal_end(record)
    assert len(recorded_pids(tmp_path / "game")) == 3  # both agents and the child, all gone


def test_an_agent_that_ignores_the_end_and_sigterm_is_killed(tmp_path: Path, script: Path) -> None:
    record = run(tmp_path, script, "ignore-term", black_fault="linger")
    assert record.result is not None and record.result.termination == "normal"


def test_too_many_processes_is_a_crash(tmp_path: Path, script: Path) -> None:
    config = GameConfig(time_per_move=5, end_grace=0.3, max_processes=4)
    record = run(tmp_path, script, "many-processes", 1, config=config)
    check(record, BLACK, "crash")
    # Counted by the referee (rlimits) or refused by the kernel (a cgroup): the detail says so.
    assert "processes" in record.result.detail  # type: ignore[union-attr]


def test_tampering_with_the_other_agent_loses_when_it_is_suspended_unsandboxed(tmp_path: Path, script: Path) -> None:
    # Sandboxed, the other's files are out of sight (tests/test_sandbox_attacks.py);
    # without the sandbox, suspension still catches a tamperer.
    config = GameConfig(time_per_move=3, end_grace=0.3, suspend_waiting=True, sandbox="none")
    record = run(tmp_path, script, "tamper", 1, config=config)
    check(record, BLACK, "illegal")
    assert "bob" in record.result.detail  # type: ignore[union-attr]


def test_tampering_with_the_referee_files_changes_nothing(tmp_path: Path, script: Path) -> None:
    record = run(tmp_path, script, "tamper-referee", 1)
    check_normal_end(record)
    assert len(record.moves) >= 58


def test_lose_turn_rule_ignores_an_illegal_move(tmp_path: Path, script: Path) -> None:
    config = GameConfig(time_per_move=3, end_grace=0.3, illegal="lose-turn")
    record = run(tmp_path, script, "lose-turn", 0, config=config)
    assert record.result is not None and record.result.termination == "normal"
    first = record.moves[0]
    assert first.forfeit and first.move.is_pass and "A1" in first.comments[-1]
    assert record.moves[1].move.colour is BLACK
    assert record.extra["agents"]["alice"]["lost_turns"] == 1


def test_an_agent_that_cannot_start_loses_by_crash(tmp_path: Path) -> None:
    white = AgentSpec.program("ghost", ["/nonexistent/ghost"])
    black = AgentSpec.program("bob", command(write_agent(tmp_path)))
    record = play_game(white, black, FAST, tmp_path / "game")
    check(record, BLACK, "crash")
    assert "no such program" in record.extra["agents"]["ghost"]["start_error"]
    assert left_running(tmp_path / "game") == []


def test_black_that_never_deletes_its_colour_file_loses_on_time(tmp_path: Path, script: Path) -> None:
    record = run(tmp_path, script, black_fault="keep-colour", config=GameConfig(time_per_move=1, end_grace=0.3))
    check(record, WHITE, "timeout")
    assert "bob.in" in record.result.detail  # type: ignore[union-attr]


def test_output_is_kept_but_capped(tmp_path: Path, script: Path) -> None:
    config = GameConfig(time_per_move=3, end_grace=0.3, stderr_limit=10_000)
    record = run(tmp_path, script, "noisy", 1, config=config)
    assert record.result is not None and record.result.termination == "normal"
    log = (tmp_path / "game" / "alice.stderr.log").read_text()
    # The first and the last half of the cap are kept: where a program starts, and where it failed.
    assert log.startswith("x" * 5_000) and "2990015 more bytes of output dropped" in log
    assert log.endswith("the last words\n") and len(log) < 10_100


def test_the_memory_limit_applies_to_the_agent(tmp_path: Path, script: Path) -> None:
    config = GameConfig(time_per_move=3, end_grace=0.3, memory_mb=512)
    record = run(tmp_path, script, "memory-hog", 1, config=config)
    check(record, BLACK, "crash")
    # Per process (rlimits): Python's MemoryError; for the whole agent (a cgroup): killed, and said why.
    log = (tmp_path / "game" / "alice.stderr.log").read_text()
    assert "MemoryError" in log or "out of memory" in record.result.detail  # type: ignore[union-attr]
