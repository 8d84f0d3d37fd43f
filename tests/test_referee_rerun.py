"""``othello replay GAME --rerun NAME --at N``: an agent put back at a move of a recorded game.

Real games between real programs in their sandboxes, then the agent run
again on the inputs it had before move N.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import WHITE, GameRecord
from othello_arena.referee import AgentSpec, GameConfig, play_game

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


def play(tmp_path: Path, agent: Path, openings: bool = False) -> tuple[Path, GameRecord]:
    prefix = "openings:" if openings else ""
    white = AgentSpec.parse(f"{prefix}det=python3 {agent} {{name}}", base=tmp_path)
    black = AgentSpec.parse(f"{prefix}other=python3 {agent} {{name}} --first", base=tmp_path)
    game = tmp_path / "game"
    record = play_game(white, black, GameConfig(time_per_move=3, end_grace=0.3), game, seed=1)
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
