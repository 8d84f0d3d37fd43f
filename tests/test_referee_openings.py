"""Openings (PROTOCOL.md section 8): the notation, the record, the agent spec, and whole games from an opening."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from referee_helpers import left_running

from othello_arena.protocol import BLACK, WHITE, GameRecord, IllegalMoveError, Move, MoveRecord, ParseError, Result
from othello_arena.protocol.openings import (
    format_opening,
    format_openings,
    opening_board,
    parse_opening,
    parse_openings,
)
from othello_arena.referee import AgentSpec, GameConfig, play_game

FAST = GameConfig(time_per_move=3, end_grace=0.3)
D3_C5_F6 = [Move.parse("(W D 3)"), Move.parse("(B C 5)"), Move.parse("(W F 6)")]


# -- the notation ---------------------------------------------------------------


def test_both_opening_forms_read_the_same_moves() -> None:
    assert parse_opening("d3 c5 f6") == D3_C5_F6
    assert parse_opening("D3C5F6") == D3_C5_F6
    assert parse_opening("(W D 3) (B C 5) (w f 6)") == D3_C5_F6
    assert format_opening(D3_C5_F6) == "d3 c5 f6"
    assert parse_opening(format_opening(D3_C5_F6)) == D3_C5_F6
    assert opening_board(D3_C5_F6).to_move is BLACK


@pytest.mark.parametrize("text, error, words", [
    ("d3 d3", IllegalMoveError, "occupied"),
    ("(W D 3) (W C 5)", IllegalMoveError, "move 2"),
    ("(W D 3) c5", ParseError, "'c5' is not a move line"),
    ("d3 z9", ParseError, "bad square"),
])
def test_a_bad_opening_says_what_is_wrong(text: str, error: type, words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        parse_opening(text)
    assert repr(text) in str(caught.value) or text.split()[0] in str(caught.value)


def test_an_opening_file_skips_comments_and_names_the_bad_line() -> None:
    text = "# two openings\n\nd3 c5 f6   # the tiger\n(W D 3) (B C 3)\n"
    openings = parse_openings(text)
    assert openings == [D3_C5_F6, [Move.parse("(W D 3)"), Move.parse("(B C 3)")]]
    assert parse_openings(format_openings(openings)) == openings
    with pytest.raises(IllegalMoveError, match=r"book.txt, line 2: opening 'a1'"):
        parse_openings("d3\na1\n", "book.txt")


# -- the record -------------------------------------------------------------------


def test_the_opening_round_trips_in_the_record_and_starts_the_replay() -> None:
    board = opening_board(D3_C5_F6)
    reply = Move(BLACK, board.legal_squares().bit_length() - 1)
    record = GameRecord("alice", "bob", seed=3, moves=[MoveRecord(reply, 0.5)], opening=list(D3_C5_F6),
                        result=Result(WHITE, "timeout", 3, 4))
    data = record.to_dict()
    assert data["opening"] == ["(W D 3)", "(B C 5)", "(W F 6)"]
    again = GameRecord.from_json(record.to_json())
    assert again.opening == D3_C5_F6 and again.to_dict() == data
    first, _ = next(again.positions())
    assert first == board  # the agents' game starts after the opening
    assert again.transcript().startswith("d3c5f6") and len(again.transcript()) == 8
    assert "B[d3//0.00]W[c5//0.00]B[f6//0.00]" in again.to_ggf()
    assert "opening" not in GameRecord("a", "b").to_dict()  # records without one are unchanged


# -- the agent spec -----------------------------------------------------------------


def test_a_program_declares_openings_with_a_prefix(tmp_path: Path) -> None:
    alice = AgentSpec.parse("openings:alice=python3 alice.py {name}", base=tmp_path)
    assert alice.openings and alice.kind == "program" and alice.label == "alice"
    assert str(alice) == "openings:alice=python3 alice.py '{name}'"
    assert AgentSpec.parse(str(alice), base=tmp_path) == alice
    assert not AgentSpec.parse("bob=./bob", base=tmp_path).openings
    assert AgentSpec.parse("random").openings  # every built-in agent runs on agents.runtime
    with pytest.raises(ValueError, match="built-in agents understand openings already"):
        AgentSpec.parse("openings:random")


def test_an_opening_game_with_an_agent_that_does_not_declare_it_is_refused(tmp_path: Path) -> None:
    plain = AgentSpec.program("bob", [sys.executable, "-c", "pass"])
    with pytest.raises(ValueError, match=r"bob does not declare that it understands openings.*openings:NAME=COMMAND"):
        play_game(AgentSpec.parse("random"), plain, FAST, tmp_path / "g", opening=D3_C5_F6)
    assert not (tmp_path / "g").exists()  # refused before anything started
    with pytest.raises(IllegalMoveError, match="move 2"):
        play_game(AgentSpec.parse("random"), AgentSpec.parse("greedy"), FAST, tmp_path / "g",
                  opening=[Move.parse("(W D 3)"), Move.parse("(W C 5)")])


# -- whole games from an opening, real processes ---------------------------------------

# An agent on the Python runtime that keeps a copy of its first NAME.in (first.txt).
SPY = r'''
import shutil
import sys
from othello_arena.agents.runtime import AgentSession, default_time

class Spy(AgentSession):
    def handle(self, text):
        if self.colour is None:
            open("first.txt", "w").write(text)
        return super().handle(text)

def first_legal(board, colour, time_left):
    return board.legal_moves()[0]

name = sys.argv[1]
raise SystemExit(Spy(first_legal, name, __import__("pathlib").Path("."), default_time(), sys.stderr).run())
'''


@pytest.mark.parametrize("opening, first", [("d3 c5 f6", BLACK), ("d3 c5", WHITE)])
def test_two_runtime_agents_play_on_from_the_opening(tmp_path: Path, opening: str, first) -> None:
    script = tmp_path / "spy.py"
    script.write_text(SPY)
    moves = parse_opening(opening)
    alice = AgentSpec.parse(f"openings:alice={sys.executable} spy.py {{name}}", base=tmp_path)
    record = play_game(alice, AgentSpec.parse("greedy"), FAST, tmp_path / "g", opening=moves)
    assert record.result is not None and record.result.termination == "normal", record.result
    assert record.opening == moves and record.moves[0].move.colour is first
    board = record.final_board()
    assert (record.result.white_discs, record.result.black_discs) == (board.count(WHITE), board.count(BLACK))
    lines = "".join(move.line() + "\n" for move in moves)
    assert (tmp_path / "g" / "alice" / "first.txt").read_text() == "W\n" + lines
    assert GameRecord.load(str(tmp_path / "g" / "game.json")).opening == moves
    assert left_running(tmp_path / "g") == []



RHINO = shutil.which("gtp-rhino") or ("/usr/games/gtp-rhino" if Path("/usr/games/gtp-rhino").exists() else None)


@pytest.mark.skipif(RHINO is None, reason="gtp-rhino not installed (apt-get install grhino)")
def test_the_gtp_bridge_sets_up_the_opening_on_its_engine(tmp_path: Path) -> None:
    rhino = AgentSpec.parse(f"openings:rhino={sys.executable} -m othello_arena bridge gtp --name {{name}} -- {RHINO} -l 1")
    moves = parse_opening("f5 d6 c3 d3 c4")  # 5 plies: Black to move, rhino plays Black
    record = play_game(AgentSpec.parse("greedy"), rhino, GameConfig(time_per_move=5), tmp_path / "g", opening=moves)
    assert record.result is not None and record.result.termination == "normal", record.result
    assert record.moves[0].move.colour is BLACK and record.moves[0].comments[0].startswith("engine move")
    log = (tmp_path / "g" / "rhino.stderr.log").read_text()
    assert "illegal" not in log and "cannot follow" not in log, log


# -- game pairs and othello play --openings ------------------------------------------------


def test_openings_are_drawn_without_repeats_from_the_seed() -> None:
    from othello_arena.referee import draw_openings

    suite = parse_openings("d3\nc4\nf5\ne6\nd3 c3\n")
    drawn = draw_openings(suite, 5, seed=9)
    assert sorted(map(format_opening, drawn)) == sorted(map(format_opening, suite))  # each once
    assert draw_openings(suite, 12, seed=9)[:5] == drawn  # the same seed, the same draw
    assert draw_openings(suite, 5, seed=10) != drawn
    with pytest.raises(ValueError, match="no openings"):
        draw_openings([], 1, seed=1)


def test_the_nth_opening_is_the_nth_of_the_draw_past_the_suites_end() -> None:
    from othello_arena.referee import draw_openings, nth_opening

    suite = parse_openings("d3\nc4\nf5\ne6\nd3 c3\n")
    drawn = draw_openings(suite, 13, seed=4)  # two reshuffles
    assert [nth_opening(suite, number, seed=4) for number in range(13)] == drawn


def test_cli_plays_a_game_pair_from_an_opening_file(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from othello_arena.cli import cli

    book = tmp_path / "book.txt"
    book.write_text("# one opening\nd3 c5 f6\n")
    result = CliRunner().invoke(cli, ["play", "random", "greedy", "--openings", str(book), "--seed", "4",
                                      "--time", "3", "--out", str(tmp_path / "p"), "-q"])
    assert result.exit_code == 0, result.output
    one = GameRecord.load(str(tmp_path / "p" / "1" / "game.json"))
    two = GameRecord.load(str(tmp_path / "p" / "2" / "game.json"))
    assert (one.white, one.black, two.white, two.black) == ("random", "greedy", "greedy", "random")
    assert one.opening == two.opening == D3_C5_F6 and one.seed == two.seed == 4
    assert result.output.splitlines()[-1].startswith("pair: random ")
    refused = CliRunner().invoke(cli, ["play", "random", f"bob={sys.executable} -c pass", "--opening", "d3 c5"])
    assert refused.exit_code == 2 and "bob does not declare" in refused.output
    book.write_text("d3\nd3 d3\n")
    bad = CliRunner().invoke(cli, ["play", "random", "greedy", "--openings", str(book)])
    assert bad.exit_code == 2 and "line 2" in bad.output and "occupied" in bad.output


def test_replay_says_the_opening_and_starts_after_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from othello_arena.cli import cli

    board = opening_board(D3_C5_F6)
    reply = board.legal_moves()[0]
    record = GameRecord("alice", "bob", moves=[MoveRecord(reply, 0.5)], opening=list(D3_C5_F6))
    (tmp_path / "game.json").write_text(record.to_json())
    result = CliRunner().invoke(cli, ["replay", str(tmp_path / "game.json")])
    assert result.exit_code == 0, result.output
    assert "Opening: d3 c5 f6 (3 moves; the board below is after it)" in result.output
    assert f"1. {reply.line()}" in result.output and "B to move" in result.output
    ggf = CliRunner().invoke(cli, ["replay", str(tmp_path / "game.json"), "--format", "transcript"])
    assert ggf.output.strip().startswith("d3c5f6")
