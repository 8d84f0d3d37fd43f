"""Board sizes in the referee (PROTOCOL.md section 9): real games on 10x10 and 12x12 boards, real processes and files.

A program that declares ``sizes:`` gets the size line after its colour and
plays with two-digit rows; a person gets it too; an agent that does not play
the size is refused before anything starts, with one sentence naming it;
the 8x8 protocol is untouched (no size line, no ``size`` in game.json).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from referee_helpers import left_running

from othello_arena.agents.registry import builtin_agents, sizes_of
from othello_arena.cli import cli
from othello_arena.protocol import WHITE, Board, GameRecord, Move, parse_line
from othello_arena.referee import AgentSpec, GameConfig, play_game

BUILTINS = builtin_agents()

# A program on the Python runtime that plays the last legal move and says in a comment on which board it plays.
SIZED_PROGRAM = r'''
import sys
from othello_arena.agents.runtime import run_agent

def last_move(board, colour, time_left):
    return board.legal_moves()[-1], [f"my board is {board.size}x{board.size}"]

sys.exit(run_agent(last_move, sys.argv[1]))
'''


def sized_program(tmp_path: Path, declared: bool = True) -> AgentSpec:
    script = tmp_path / "sized.py"
    script.write_text(SIZED_PROGRAM)
    prefix = "sizes:" if declared else ""
    return AgentSpec.parse(f"{prefix}bob=python3 {script} {{name}}", base=tmp_path, builtins=BUILTINS)


def test_a_whole_10x10_game_between_a_sized_program_and_seed_002s_player(tmp_path: Path) -> None:
    config = GameConfig(time_per_move=10, end_grace=0.3, size=10)
    record = play_game(BUILTINS.spec("paper-easy"), sized_program(tmp_path), config, tmp_path / "g")
    assert record.result is not None and record.result.termination.value == "normal", record.result
    data = json.loads((tmp_path / "g" / "game.json").read_text())
    assert data["size"] == 10
    back = GameRecord.from_json((tmp_path / "g" / "game.json").read_text())
    final = back.final_board()
    assert final.size == 10 and final.is_game_over()
    assert (final.count(WHITE), final.count(WHITE.opponent)) == (record.result.white_discs, record.result.black_discs)
    # the program knew its board from the size line, and the game reached columns I-J or rows 9-10
    comments = {c for entry in record.moves if entry.move.colour is not WHITE for c in entry.comments}
    assert comments == {"my board is 10x10"}
    lines = [entry.move.line() for entry in record.moves]
    assert any(" I " in line or " J " in line or line.endswith((" 9)", " 10)")) for line in lines), lines
    assert not left_running(tmp_path / "g")


def test_a_person_gets_the_size_line_and_is_told_the_board_s_range(tmp_path: Path) -> None:
    """manual:me plays White on 12x12: its first me.in is exact, a move off the 8x8 board is fine, K13 is not."""
    config = GameConfig(time_per_move=10, end_grace=0.3, manual_time=30, size=12)
    seen: list[str] = []

    def person() -> None:
        inbox, outbox = tmp_path / "g" / "me" / "me.in", tmp_path / "g" / "me" / "me.out"
        board = Board.start(12)
        written_bad = False
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not inbox.exists():
                time.sleep(0.005)
                continue
            text = inbox.read_text()
            inbox.unlink()
            seen.append(text)
            for line in text.splitlines():
                if line.startswith("(END"):
                    return
                if line in ("W", "(SIZE 12)") or line.startswith("(C"):
                    continue
                board = board.play(parse_line(line, 12))  # type: ignore[arg-type]
            if not written_bad:
                outbox.write_text("(W K 13)\n")  # off a 12x12 board: told, and asked again
                written_bad = True
                continue
            moves = board.legal_moves()
            if not moves or board.to_move is not WHITE:
                continue
            move = moves[-1]
            outbox.write_text(move.line() + "\n")
            board = board.play(move)

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    record = play_game(AgentSpec.parse("manual:me"), BUILTINS.spec("greedy"), config, tmp_path / "g")
    thread.join(5)
    assert seen[0] == "W\n(SIZE 12)\n"
    # K is a column of a 12x12 board: the row is what is wrong, and the legal moves are named as on that board
    assert seen[1].startswith("(C your me.out was malformed: could not parse move line '(W K 13)': row '13' is not 1-12")
    legal = " ".join(Board.start(12).square_name(m.square or 0) for m in Board.start(12).legal_moves())
    assert f"legal: {legal}" in seen[1] and seen[1].endswith("W\n(SIZE 12)\n")
    assert record.result is not None and record.result.termination.value == "normal"
    assert record.size == 12 and record.final_board().is_game_over()


def test_an_8x8_game_has_no_size_line_and_no_size_in_its_record(tmp_path: Path) -> None:
    config = GameConfig(time_per_move=10, end_grace=0.3)
    record = play_game(BUILTINS.spec("greedy"), sized_program(tmp_path), config, tmp_path / "g")
    assert "size" not in json.loads((tmp_path / "g" / "game.json").read_text())
    comments = {c for entry in record.moves for c in entry.comments}
    assert comments == {"my board is 8x8"}


def test_agents_that_do_not_play_the_size_are_refused_before_anything_starts(tmp_path: Path) -> None:
    config = GameConfig(time_per_move=5, size=10)
    with pytest.raises(ValueError, match=r"cannot play on a 10x10 board: champion plays only on 8x8"):
        play_game(BUILTINS.spec("champion"), BUILTINS.spec("random"), config, tmp_path / "g")
    with pytest.raises(ValueError, match=r"bob plays only on 8x8 \(a program that plays every size .* sizes:NAME=COMMAND"):
        play_game(BUILTINS.spec("random"), sized_program(tmp_path, declared=False), config, tmp_path / "g")
    with pytest.raises(ValueError, match="openings are for 8x8 games only"):
        play_game(BUILTINS.spec("random"), BUILTINS.spec("greedy"), config, tmp_path / "g",
                  opening=[Move.parse("(W E 5)", 10)])
    assert not (tmp_path / "g").exists()  # nothing started
    with pytest.raises(ValueError, match="board size 9 is not one of 8, 10, 12, 14"):
        GameConfig(size=9)


def test_the_registry_knows_who_plays_which_size() -> None:
    assert sizes_of("champion") == (8,) and sizes_of("weighted") == (8,)
    for name in ("random", "beginner", "greedy", "paper-easy", "paper-normal", "paper-hard"):
        assert sizes_of(name) == (8, 10, 12, 14)
    assert AgentSpec.parse("manual:me").sizes == (8, 10, 12, 14)


def test_the_sizes_prefix_round_trips_with_openings() -> None:
    spec = AgentSpec.parse("openings:sizes:bob=./bob {name}")
    assert spec.openings and spec.sizes == (8, 10, 12, 14)
    assert str(spec).startswith("openings:sizes:bob=")
    assert AgentSpec.parse(str(spec)) == spec
    with pytest.raises(ValueError, match="the sizes: prefix is for a program"):
        AgentSpec.parse("sizes:greedy")


def test_othello_play_size_refuses_the_champion_in_one_sentence(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["play", "champion", "random", "--size", "10", "--out", str(tmp_path / "g")])
    assert result.exit_code == 2
    assert "cannot play on a 10x10 board: champion plays only on 8x8" in result.output
    assert not (tmp_path / "g").exists()
    result = CliRunner().invoke(cli, ["play", "random", "greedy", "--size", "9"])
    assert result.exit_code == 2 and "'9' is not one of '8', '10', '12', '14'" in result.output


def test_othello_play_size_12_plays_and_replays(tmp_path: Path) -> None:
    out = tmp_path / "g"
    result = CliRunner().invoke(cli, ["play", "random", "beginner", "--size", "12", "--time", "10", "--seed", "3",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "   A B C D E F G H I J K L" in result.output  # the referee draws the 12x12 board
    ggf = CliRunner().invoke(cli, ["replay", str(out / "game.json"), "--format", "ggf"])
    assert ggf.exit_code == 0, ggf.output
    assert "TY[12]" in ggf.output and "BO[12 " in ggf.output
    record = GameRecord.from_ggf(ggf.output.strip())
    assert record.final_board() == GameRecord.load(str(out / "game.json")).final_board()


@pytest.mark.parametrize("name", ["champion", "weighted"])
def test_an_8x8_only_agent_given_a_size_line_says_so_and_exits(tmp_path: Path, name: str) -> None:
    """The agent side of the refusal: a built-in 8x8 agent run by hand on a 14x14 game's first file."""
    (tmp_path / "w.in").write_text("W\n(SIZE 14)\n")
    done = subprocess.run([sys.executable, "-m", "othello_arena", "agent", name, "--name", "w",
                           "--dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "w: this game is on a 14x14 board, and this agent plays only on 8x8" in done.stderr
    assert not (tmp_path / "w.out").exists()


# -- tournaments: [referee] size ------------------------------------------------------


def _tournament(tmp_path: Path, agents: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(agents + '\n[tournament]\ntime_per_move = 10.0\nresults = "results"\nseed = 2\n\n[referee]\nsize = 10\n',
                    encoding="utf-8")
    return path


def test_a_tournament_on_10x10_boards_plays_every_game_on_them(tmp_path: Path) -> None:
    (tmp_path / "bob").mkdir()
    script = tmp_path / "bob" / "sized.py"  # in a folder of its own: never beside the tournament file
    script.write_text(SIZED_PROGRAM)
    path = _tournament(tmp_path, f'agents = ["greedy", "sizes:bob=python3 {script} {{name}}"]\n')
    result = CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    games = sorted((tmp_path / "results" / "games").glob("*/game.json"))
    assert len(games) == 2
    for game in games:
        record = GameRecord.load(str(game))
        assert record.size == 10 and record.result is not None and not record.result.termination.is_forfeit


@pytest.mark.parametrize("agents, words", [
    ('agents = ["champion", "greedy"]', "the built-in agent 'champion' plays only on 8x8"),
    ('agents = ["greedy", "bob=./bob/bob"]', "size = 10: bob does not declare that it plays bigger boards"),
])
def test_a_tournament_refuses_an_agent_that_does_not_play_its_size(tmp_path: Path, agents: str, words: str) -> None:
    path = _tournament(tmp_path, agents + "\n")
    for command in ("check", "run"):
        result = CliRunner().invoke(cli, ["tournament", command, str(path), "-q"] if command == "run"
                                    else ["tournament", command, str(path)])
        assert result.exit_code != 0 and words in result.output, result.output
    assert not (tmp_path / "results" / "games").exists()


def test_othello_match_size_10_plays_its_games_on_10x10(tmp_path: Path) -> None:
    out = tmp_path / "m"
    result = CliRunner().invoke(cli, ["match", "random", "paper-easy", "--games", "2", "--size", "10", "--time", "10",
                                      "--seed", "1", "--out", str(out), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "size = 10" in (out / "match.toml").read_text()
    games = sorted(out.glob("games/*/game.json"))
    assert len(games) == 2 and all(GameRecord.load(str(game)).size == 10 for game in games)
    refused = CliRunner().invoke(cli, ["match", "champion", "random", "--games", "2", "--size", "12",
                                       "--out", str(tmp_path / "n")])
    assert refused.exit_code == 2 and "champion plays only on 8x8" in refused.output
