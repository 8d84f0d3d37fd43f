"""Time use per agent, read from game records: after othello play (real games) and from hand-made records."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import BLACK, WHITE, GameRecord, Result, Termination, parse_move
from othello_arena.protocol.record import FaultyMove, MoveRecord
from othello_arena.referee.time_use import time_use

STARTER = Path(__file__).resolve().parent.parent / "agents" / "examples" / "starter.py"


def test_othello_play_ends_with_each_agents_time_use_and_the_depth_it_wrote(tmp_path: Path) -> None:
    # starter.py writes "(C depth N score S)" above each move; greedy writes no comment.
    out = tmp_path / "g"
    result = CliRunner().invoke(cli, ["play", f"starter={sys.executable} {STARTER} {{name}}", "greedy",
                                      "--time", "1", "--seed", "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    record = GameRecord.load(str(out / "game.json"))
    lines = {line.split(":")[1].strip(): line for line in result.output.splitlines() if line.startswith("time: ")}
    assert set(lines) == {"starter", "greedy"}, result.output
    for label, line in lines.items():
        colour = WHITE if record.white == label else BLACK
        seconds = [entry.seconds for entry in record.moves if entry.move.colour is colour]
        first_is_longest = max(seconds) > 0.8 and seconds.index(max(seconds)) == 0  # the start-up's allowance
        assert line.startswith(f"time: {label}: {len(seconds)} moves, {sum(seconds) / len(seconds):.2f} s a move on "
                               f"average, {max(seconds):.2f} s at most"
                               + (" (a first move, which has 5 s more to start up)" if first_is_longest else "") + "; ")
        assert re.search(r"; \d+ over 80 % of the limit \(1 s\)", line), line
    depths = [int(re.match(r"depth (\d+)", comment).group(1))  # type: ignore[union-attr]
              for entry in record.moves for comment in entry.comments if comment.startswith("depth ")]
    assert depths and lines["starter"].endswith(f"; depth {min(depths)} to {max(depths)} "
                                                f"({sum(depths) / len(depths):.1f} on average)")
    assert "depth" not in lines["greedy"]


def test_under_a_game_clock_it_says_what_was_left_of_the_bank(tmp_path: Path) -> None:
    out = tmp_path / "g"
    result = CliRunner().invoke(cli, ["play", "greedy", "random", "--clock", "3+0.1", "--seed", "3",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    for label in ("greedy", "random"):
        line = next(line for line in result.output.splitlines() if line.startswith(f"time: {label}: "))
        assert "over 80 % of the limit (the bank left)" in line
        assert re.search(r"; clock 3\+0\.1: \d+\.\d\d s left at the least", line), line


def _record(moves: list[MoveRecord], *, time_per_move: float | None = 1.0, clock: str | None = None,
            fault: FaultyMove | None = None, result: Result | None = None) -> GameRecord:
    agents = {"alice": {"colour": "W"}, "bob": {"colour": "B"}}
    if clock:
        for info in agents.values():
            info["clock"] = clock
    return GameRecord("alice", "bob", moves=moves, time_per_move=time_per_move, clock=clock, fault=fault,
                      result=result, extra={"agents": agents})


def test_moves_near_their_limit_are_counted_with_the_start_up_and_the_fault() -> None:
    w, b = (lambda square: parse_move(f"(W {square})")), (lambda square: parse_move(f"(B {square})"))
    moves = [MoveRecord(w("D 3"), 3.0, ["depth 4 score 2"]),   # first move: 3 s of 1 + 5 s start-up: not near
             MoveRecord(b("C 3"), 0.9),                          # bob's first: 0.9 s of 6 s, not near
             MoveRecord(w("C 4"), 0.85, ["Depth: 6"]),           # near
             MoveRecord(b("E 3"), 0.1)]
    fault = FaultyMove(BLACK, None, 1.25, ["thinking, depth 9"])  # a timeout: its wait counts
    alice, bob = time_use([_record(moves, fault=fault, result=Result(WHITE, Termination.TIMEOUT, 4, 3))])
    assert (alice.moves, alice.longest, alice.near_limit, alice.depths, alice.timeouts) == (2, 3.0, 1, [4, 6], 0)
    # her longest move is over the cap but was her first, with the start-up allowance: the line says so
    assert alice.line().startswith("alice: 2 moves, 1.93 s a move on average, 3.00 s at most (a first move, "
                                   "which has 5 s more to start up); 1 over 80 % of the limit (1 s)")
    assert (bob.moves, bob.longest, bob.near_limit, bob.depths, bob.timeouts) == (3, 1.25, 1, [9], 1)
    assert bob.line() == ("bob: 3 moves, 0.75 s a move on average, 1.25 s at most; 1 over 80 % of the limit (1 s); "
                          "1 game lost on time; depth 9 (9.0 on average)")


def test_under_a_clock_the_limit_is_the_bank_left_before_the_move() -> None:
    w = lambda square: parse_move(f"(W {square})")  # noqa: E731
    moves = [MoveRecord(w("D 3"), 1.0, clock=2.1), MoveRecord(parse_move("(B C 3)"), 0.1, clock=3.0),
             MoveRecord(w("C 4"), 1.8, clock=0.4)]  # 1.8 s of the 2.1 s left: near
    alice, bob = time_use([_record(moves, time_per_move=None, clock="3+0.1")])
    assert (alice.near_limit, alice.least_left, bob.near_limit) == (1, 0.4, 0)
    assert alice.line().endswith("; 1 over 80 % of the limit (the bank left); clock 3+0.1: 0.40 s left at the least")
    # Two games add up.
    both = time_use([_record(moves, time_per_move=None, clock="3+0.1")] * 2)[0]
    assert (both.games, both.moves, both.near_limit) == (2, 4, 2) and " in 2 games," in both.line()


def test_a_time_reads_the_same_from_the_game_in_memory_and_from_its_game_json(tmp_path: Path) -> None:
    # 0.80496 s printed "0.80" after `othello play` (the record in memory) and "0.81" in the report of
    # its game.json (kept to four places: 0.805): a record keeps its times rounded from the start.
    record = _record([MoveRecord(parse_move("(W D 3)"), 0.80496, clock=1.23456)],
                     fault=FaultyMove(BLACK, None, 1.00004), result=Result(WHITE, Termination.TIMEOUT, 4, 1))
    stored = GameRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert [use.line() for use in time_use([record])] == [use.line() for use in time_use([stored])]
    assert (record.moves[0].seconds, record.moves[0].clock, record.fault.seconds) == (0.805, 1.2346, 1.0)
