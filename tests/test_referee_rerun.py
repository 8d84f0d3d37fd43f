"""``othello replay GAME --rerun NAME --at N``: an agent put back at a move of a recorded game.

Real games between real programs in their sandboxes, then the agent run
again on the inputs it had before move N.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.agents.registry import builtin_agents
from othello_arena.cli import cli
from othello_arena.protocol import WHITE, GameRecord, draw_board, square_name
from othello_arena.referee import AgentSpec, GameConfig, play_game
from othello_arena.referee.clock import TimeControl
from othello_arena.referee.rerun import recorded_bank

TESTS = Path(__file__).resolve().parent

# A deterministic agent: the middle one of its legal moves (the first with --first), a comment with
# the number of choices, and a line on standard error for every move it makes.
DETERMINISTIC = r'''
import os, sys, time
from othello_arena.protocol import Board, Colour, Move, parse_line
name = sys.argv[1]
first = "--first" in sys.argv
board, colour, made = Board(), None, 0
def take():
    while not os.path.exists(name + ".in"):
        time.sleep(0.002)
    time.sleep(0.002)
    with open(name + ".in") as f:
        text = f.read()
    os.remove(name + ".in")
    return text
while True:
    for line in take().splitlines():
        line = line.strip()
        if line in ("W", "B"):
            colour = Colour(line)
        elif line.startswith("(END"):
            sys.exit(0)
        elif line.startswith("(CLOCK"):
            print(f"clock line: {line}", file=sys.stderr, flush=True)
        elif line:
            move = parse_line(line)
            if isinstance(move, Move):
                board = board.play(move)
    if colour is not None and board.to_move is colour and not board.is_game_over():
        legal = board.legal_moves()
        move = legal[0] if first else legal[len(legal) // 2]
        made += 1
        print(f"thinking: my move {made} of {len(legal)} choices is {move.line()}", file=sys.stderr, flush=True)
        with open(name + ".out.tmp", "w") as f:
            f.write(f"(C choices {len(legal)})\n" + move.line() + "\n")
        os.rename(name + ".out.tmp", name + ".out")
        board = board.play(move)
'''


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "det.py"
    path.write_text(DETERMINISTIC)
    return path


def play(tmp_path: Path, agent: Path, openings: bool = False, clock: bool = False) -> tuple[Path, GameRecord]:
    prefix = ("openings:" if openings else "") + ("clock:" if clock else "")
    white = AgentSpec.parse(f"{prefix}det=python3 {agent} {{name}}", base=tmp_path)
    black = AgentSpec.parse(f"{prefix}other=python3 {agent} {{name}} --first", base=tmp_path)
    game = tmp_path / "game"
    config = GameConfig(time_per_move=None, clock=(30.0, 0.5)) if clock else GameConfig(time_per_move=3)
    record = play_game(white, black, replace(config, end_grace=0.3), game, seed=1)
    assert record.result is not None and len(record.moves) > 30
    return game, record


def replay(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["replay", *args])
    return result.exit_code, result.output


def test_a_rerun_at_a_middle_move_reproduces_the_recorded_move_and_shows_stderr(tmp_path: Path, agent: Path) -> None:
    game, record = play(tmp_path, agent)
    number = 21  # White's 11th move: det was given its colour, then Black's moves one file at a time
    assert record.moves[number - 1].move.colour is WHITE
    recorded = record.moves[number - 1]
    code, output = replay(str(game), "--rerun", "det", "--at", str(number))
    assert code == 0, output
    assert f"now:      {recorded.move.line()}" in output
    assert f"recorded: {recorded.move.line()}  (the same)" in output
    assert f"(C {recorded.comments[0]})" in output
    assert f"thinking: my move 11 of" in output  # its standard error, as it ran now
    assert "one det.in at a time" in output

    code, output = replay(str(game / "game.json"), "--rerun", "det", "--at", str(number), "--json")
    answer = json.loads(output)
    assert answer["move"] == answer["recorded"] == recorded.move.line() and answer["same"] is True
    assert answer["comments"] == recorded.comments and answer["diverged"] == [] and answer["problem"] == ""
    assert "thinking: my move 11 of" in answer["stderr"] and "my move 12" not in answer["stderr"]
    assert answer["seconds"] is not None and answer["seconds"] >= 0


def test_a_changed_command_gives_its_own_move_from_the_same_position(tmp_path: Path, agent: Path) -> None:
    game, record = play(tmp_path, agent, openings=True)
    number = 31
    board = list(record.positions())[number - 1][0]  # the position before move 31
    assert board.to_move is WHITE and record.moves[number - 1].move.colour is WHITE
    new_version = f"python3 {agent} {{name}} --first"
    code, output = replay(str(game), "--rerun", "det", "--at", str(number), "--command", new_version, "--json")
    assert code == 0, output
    answer = json.loads(output)
    assert answer["move"] == board.legal_moves()[0].line()  # its own choice in the recorded position
    assert answer["recorded"] == record.moves[number - 1].move.line()
    assert answer["inputs"].startswith("one det.in: its colour and the 30 moves")
    assert "my move 1 of" in answer["stderr"]  # one file, one answer: the new version moved once


def test_a_move_that_is_not_the_agents_is_refused_naming_its_moves(tmp_path: Path, agent: Path) -> None:
    game, _ = play(tmp_path, agent)
    code, output = replay(str(game), "--rerun", "det", "--at", "2")
    assert code == 2 and "move 2 is not one of det's moves" in output and "1, 3, 5" in output
    code, output = replay(str(game), "--rerun", "nobody", "--at", "1")
    assert code == 2 and "no agent 'nobody' in this game" in output
    code, output = replay(str(game), "--rerun", "det")
    assert code == 2 and "needs --at N" in output


def test_replay_at_n_alone_draws_the_board_before_move_n_and_says_whose_turn_it_is(tmp_path: Path, agent: Path) -> None:
    game, record = play(tmp_path, agent)
    board, previous = list(record.positions())[20]  # the position in which move 21 is played
    code, output = replay(str(game), "--at", "21")
    assert code == 0, output
    assert draw_board(board, previous.move if previous else None) in output  # the referee's own drawing
    mover = record.name(board.to_move)
    assert f"The board before move 21 (after move 20, {record.moves[19].move.line()}): {mover} " \
           f"({board.to_move.full_name}) to play move 21" in output
    assert f"move 21: {mover} played {record.moves[20].move.line()}" in output
    assert f"(C {record.moves[20].comments[0]})" in output
    # A number the game does not have is named, with the game's moves; a finished game has no move after its last.
    for bad in ("0", str(len(record.moves) + 1)):
        code, output = replay(str(game), "--at", bad)
        assert code == 2 and f"the game has no move {bad}: it has {len(record.moves)} moves, numbered 1 to " \
                              f"{len(record.moves)}" in output, output
    code, output = replay(str(game), "--at", "3", "--command", "x")
    assert code == 2 and "--command, --time and --json go with --rerun NAME" in output
    code, output = replay(str(game), "--at", "3", "--format", "ggf")
    assert code == 2 and "--step and --format go without it" in output


def test_a_new_version_that_declares_openings_starts_at_move_n_from_the_recorded_position(tmp_path: Path,
                                                                                           agent: Path) -> None:
    game, record = play(tmp_path, agent)  # played without openings: det was given the game's files one by one
    number = 31
    board = list(record.positions())[number - 1][0]
    new_version = f"openings:python3 {agent} {{name}} --first"
    code, output = replay(str(game), "--rerun", "det", "--at", str(number), "--command", new_version, "--json")
    assert code == 0, output
    answer = json.loads(output)
    assert answer["problem"] == "" and answer["diverged"] == [] and answer["diverged_at"] is None
    assert answer["inputs"] == f"one det.in: its colour and the {number - 1} moves before move {number}"
    assert answer["move"] == board.legal_moves()[0].line()  # its own choice in the recorded position
    assert "my move 1 of" in answer["stderr"] and "my move 2 of" not in answer["stderr"]  # it moved once, at N
    code, output = replay(str(game), "--rerun", "det", "--at", str(number), "--command", new_version)
    assert code == 0 and f"det (White) at move {number}, 3 s per move; given one det.in" in output, output
    # A program that is not there is not started: said, with the header whole and exit code 3.
    code, output = replay(str(game), "--rerun", "det", "--at", str(number), "--command", "openings:./nothere {name}")
    assert code == 3 and f"det (White) at move {number}, 3 s per move\n" in output and "cannot start './nothere'" in output


def test_replayed_move_by_move_a_new_version_names_the_move_where_it_left_the_record(tmp_path: Path,
                                                                                   agent: Path) -> None:
    game, record = play(tmp_path, agent)
    positions = list(record.positions())
    # det played the middle of its legal moves; the new version plays the first: where they first differ
    left = next(number for number, entry in enumerate(record.moves, 1)
                if entry.move.colour is WHITE and positions[number - 1][0].legal_moves()[0] != entry.move)
    code, output = replay(str(game), "--rerun", "det", "--at", "41", "--command", f"python3 {agent} {{name}} --first")
    assert code == 0, output
    assert f"it left the recorded game at move {left}: from there on it was given the recorded opponent's moves " \
           "on a board of its own" in output
    assert f"differs from the record at move {left}: {positions[left - 1][0].legal_moves()[0].line()} now" in output


def test_under_a_game_clock_a_version_that_reads_the_clock_gets_its_bank_at_move_n(tmp_path: Path,
                                                                                 agent: Path) -> None:
    game, record = play(tmp_path, agent, clock=True)
    number = 21
    bank = recorded_bank(record, WHITE, number, TimeControl(None, base=30.0, increment=0.5))
    assert bank is not None and 0 < bank < 30.0 + 10 * 0.5
    code, output = replay(str(game), "--rerun", "det", "--at", str(number), "--command",
                          f"clock:openings:python3 {agent} {{name}}")
    assert code == 0, output
    assert f"det (White) at move {number}, clock 30+0.5; given one det.in: its colour and the {number - 1} moves " \
           f"before move {number}, its clock at {bank:.3f} s as the record's times left it" in output
    assert f"clock line: (CLOCK {bank:.3f})" in output  # the one file it was given ends with its bank
    assert f"recorded: {record.moves[number - 1].move.line()}  (the same)" in output


def drift_game(tmp_path: Path, board: str) -> tuple[Path, GameRecord]:
    """A game of the broken agent whose board drifts from its third move (drawing it where ``board`` says)."""
    shows = f" --board {board}" if board else ""
    bad = AgentSpec.parse(f"bad={sys.executable} {TESTS / 'broken_agent.py'} drift {{name}}{shows}")
    fair = AgentSpec.parse(f"fair={sys.executable} {TESTS / 'broken_agent.py'} none {{name}}")
    game = tmp_path / "game"
    return game, play_game(bad, fair, GameConfig(time_per_move=3, end_grace=0.3), game, seed=1)


@pytest.mark.parametrize("board, source, where, reading", [
    ("comments", "comments", "its (C ...) comments", ""),
    ("stderr", "output", "its standard output and error", ""),
    # an array printed in index order, X for White: read so, its drawings agree up to the same move
    ("upside-down", "output", "its standard output and error", "with row 1 at the top and the colours the other way round"),
])
def test_the_rerun_names_the_first_move_where_the_agents_drawn_board_differs(tmp_path: Path, board: str, source: str,
                                                                           where: str, reading: str) -> None:
    game, record = drift_game(tmp_path, board)
    assert record.fault is not None and record.result is not None, record.result
    at = record.result.move_number
    assert at is not None
    positions = [position for position, _ in record.positions()]
    # Its 3rd move is move 5; Black's move 6 it put down without flips: at move 7 its board lacks exactly those.
    assert record.moves[6].move.colour is WHITE
    placed = 1 << record.moves[5].move.square
    flipped = (positions[6].black ^ positions[5].black) & ~placed
    squares = [square_name(sq) for sq in range(64) if flipped >> sq & 1]
    assert squares
    code, output = replay(str(game), "--rerun", "bad", "--at", str(at), "--json")
    assert code == 0, output
    boards = json.loads(output)["boards"]
    assert boards["source"] == source and boards["unlabelled"] is (board == "upside-down")
    assert boards["reading"] == reading
    difference = boards["first_difference"]
    assert difference is not None and difference["move_number"] == 7, boards
    # Compared with the board it was given at move 7 (its squares are the flips it missed), named by Black's move.
    given = f"before move 7, after {record.moves[5].move.line()}"
    assert difference["squares"] == squares and difference["referee_at"] == given
    assert difference["nearer_at"] is None  # one flip missed: the board before Black's move is no nearer
    assert difference["referee_board"] == positions[6].draw()
    assert boards["compared"] == 4  # its moves 1, 3 and 5 the same, then move 7
    code, output = replay(str(game), "--rerun", "bad", "--at", str(at))
    assert code == 0, output
    assert f"its board, drawn in {where}: first differs from the referee's at move 7, the same before (3 drawings); " \
           f"{len(squares)} square{'s differ' if len(squares) > 1 else ' differs'}: {' '.join(squares)}" in output
    side = re.search(r"its board \(drawn during move 7\) +the referee's, " + re.escape(given) + r"\n((?:  .*\n){10})",
                     output)
    assert side is not None, output
    if reading:
        assert f"(its drawings read {reading}: so they agree with the referee's longest" in output
    drawings = side[1].splitlines()
    assert drawings[0].count("A B C D E F G H") == 2  # its board, then the referee's, row by row
    assert drawings[1:9] == [f"  {ours:<35}{theirs}" for ours, theirs in
                             zip(difference["agent_board"].splitlines()[1:9], positions[6].draw().splitlines()[1:9])]


def test_a_board_that_missed_two_flips_is_shown_against_the_board_it_was_given(tmp_path: Path) -> None:
    # Against greedy, Black's move 6 (E3) flips two discs; the drifting agent puts it down without them.  Its board
    # is then one square from the referee's after move 5 (only E3 is new) and two from the board it was given:
    # shown against the one it was given (the two squares it failed to flip), the nearer one named beside it.
    bad = AgentSpec.parse(f"bad={sys.executable} {TESTS / 'broken_agent.py'} drift {{name}} --board comments")
    game = tmp_path / "game"
    record = play_game(bad, AgentSpec.parse("greedy", builtins=builtin_agents()), GameConfig(time_per_move=3, end_grace=0.3), game, seed=4)
    assert record.white == "bad" and record.result is not None and record.result.move_number == 7, record.result
    positions = [position for position, _ in record.positions()]
    placed = 1 << (record.moves[5].move.square or 0)
    flipped = (positions[6].black ^ positions[5].black) & ~placed
    missed = [square_name(sq) for sq in range(64) if flipped >> sq & 1]
    assert len(missed) >= 2
    code, output = replay(str(game), "--rerun", "bad", "--at", "7", "--json")
    assert code == 0, output
    difference = json.loads(output)["boards"]["first_difference"]
    assert difference["squares"] == missed
    assert difference["referee_at"] == f"before move 7, after {record.moves[5].move.line()}"
    assert difference["nearer_at"] == f"after move 5, {record.moves[4].move.line()}"
    assert difference["nearer_squares"] == [square_name((record.moves[5].move.square or 0))]
    code, output = replay(str(game), "--rerun", "bad", "--at", "7")
    assert f"(nearer to the referee's board after move 5, {record.moves[4].move.line()}: 1 square differs: " \
           f"{difference['nearer_squares'][0]})" in output


def test_an_agent_that_draws_no_board_is_said_to_have_nothing_to_compare(tmp_path: Path) -> None:
    game, record = drift_game(tmp_path, "")
    assert record.result is not None and record.result.move_number is not None
    code, output = replay(str(game), "--rerun", "bad", "--at", str(record.result.move_number))
    assert code == 0, output
    assert "its board: none drawn" in output and "so nothing can be compared with the referee's" in output
    assert "differs from the referee's" not in output
