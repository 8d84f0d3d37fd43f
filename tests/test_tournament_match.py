"""othello match: game pairs through the real referee, the figures printed live, the SPRT's stop."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import BLACK, WHITE, GameRecord, Result
from othello_arena.protocol.openings import format_opening, parse_openings
from othello_arena.referee import AgentSpec, GameConfig, draw_openings
from othello_arena.tournaments.match import run_match
from othello_arena.tournaments.stats import SPRT

BOOK = "d3 c5 f6\nd3 c3 c4\nf5 f6 e6\n"


def test_a_fixed_match_plays_pairs_through_the_referee_and_prints_the_figures(tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    book.write_text(BOOK)
    out = tmp_path / "m"
    result = CliRunner().invoke(cli, ["match", "random", "greedy", "--games", "4", "--openings", str(book),
                                      "--seed", "3", "--time", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    drawn = [format_opening(o) for o in draw_openings(parse_openings(BOOK), 2, seed=3)]  # drawn by the seed
    assert [line.split(":")[0] for line in lines if line.startswith("pair ")] == [f"pair 1 ({drawn[0]})", f"pair 2 ({drawn[1]})"]
    final = lines[-1]
    assert final.startswith("final: random vs greedy: 4 games, W-D-L ") and "pairs [LL LD DD/WL WD WW] " in final
    assert "Elo " in final and ("(95%)" in final or "(no interval" in final) and "LLR" not in final
    data = json.loads((out / "match.json").read_text())
    assert data["games"] == 4 and sum(data["pentanomial"]) == 2 and data["stopped"] == "games"
    assert data["wins"] + data["draws"] + data["losses"] == 4
    for pair in data["pairs"]:
        one, two = (GameRecord.load(str(out / game / "game.json")) for game in pair["games"])
        assert (one.white, one.black, two.white, two.black) == ("random", "greedy", "greedy", "random")
        assert format_opening(one.opening) == format_opening(two.opening) == pair["opening"]
        points = [1.0 if r.result.winner and r.name(r.result.winner) == "random" else 0.5 if not r.result.winner else 0.0
                  for r in (one, two)]
        assert points == pair["points"]


def test_an_sprt_match_prints_the_llr_and_its_bounds_and_stops_at_the_cap(tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    book.write_text(BOOK)
    result = CliRunner().invoke(cli, ["match", "greedy", "random", "--sprt", "elo0=0", "elo1=10", "alpha=0.05",
                                      "beta=0.05", "--max-games", "4", "--openings", str(book), "--seed", "1",
                                      "--time", "3", "--out", str(tmp_path / "m"), "-q"])
    assert result.exit_code == 0, result.output
    assert "LLR " in result.output and "[-2.94, 2.94] (elo0=0 elo1=10 alpha=0.05 beta=0.05, normalized)" in result.output
    assert result.output.splitlines()[-1] == "no decision after 4 games"  # fewer than 10 pairs: no decision yet
    data = json.loads((tmp_path / "m" / "match.json").read_text())
    assert data["stopped"] == "max-games" and data["sprt"]["decision"] is None


@pytest.mark.parametrize("args, message", [
    (["random", "greedy", "--games", "3"], "must be even"),
    (["random", "greedy"], "give --games N or --sprt"),
    (["random", "greedy", "--games", "4", "--sprt"], "give --games N or --sprt"),
    (["random", "greedy", "--games", "4", "elo1=5"], "need --sprt"),
    (["random", "greedy", "--sprt", "elo0=5", "elo1=0"], "elo1 must be above elo0"),
    (["random"], "expected two agents"),
    (["random", f"bob={sys.executable} -c pass", "--games", "2", "--openings", "BOOK"], "bob does not declare"),
])
def test_a_bad_match_command_line_says_what_is_wrong(tmp_path: Path, args: list[str], message: str) -> None:
    book = tmp_path / "book.txt"
    book.write_text(BOOK)
    args = [str(book) if arg == "BOOK" else arg for arg in args]
    result = CliRunner().invoke(cli, ["match", *args, "--out", str(tmp_path / "m")])
    assert result.exit_code == 2 and message in result.output, result.output


def test_the_sprt_stops_the_match_when_it_decides(tmp_path: Path) -> None:
    # A scripted pair player: A wins every game, so the SPRT accepts H1 at its tenth pair (min_pairs).
    played = []

    def sweep(a, b, opening, config, out_dir, seed=None):
        played.append(out_dir)
        one = GameRecord(a.label, b.label, result=Result(WHITE, "normal", 40, 24))
        two = GameRecord(b.label, a.label, result=Result(BLACK, "normal", 24, 40))
        return one, two

    state = run_match(AgentSpec.builtin("greedy"), AgentSpec.builtin("random"), GameConfig(), tmp_path / "m",
                      sprt=SPRT(0, 10), max_games=100, pair_player=sweep)
    assert (state.decision, state.stopped, len(played)) == ("H1", "sprt", 10)
    assert state.counts.counts == [0, 0, 0, 0, 10] and state.counts.wins == 20
    assert json.loads((tmp_path / "m" / "match.json").read_text())["sprt"]["decision"] == "H1"


def test_repeated_pairs_are_said_and_the_interval_uses_the_distinct_ones(tmp_path: Path) -> None:
    # Deterministic agents from the start position: every pair is the same two games.
    from othello_arena.protocol import Move, MoveRecord

    def same(a, b, opening, config, out_dir, seed=None):
        game = [MoveRecord(Move.parse("(W D 3)")), MoveRecord(Move.parse("(B C 3)"))]
        one = GameRecord(a.label, b.label, moves=list(game), result=Result(WHITE, "normal", 40, 24))
        two = GameRecord(b.label, a.label, moves=list(game), result=Result(None, "normal", 32, 32))
        return one, two

    state = run_match(AgentSpec.builtin("greedy"), AgentSpec.builtin("random"), GameConfig(), tmp_path / "m",
                      games=8, pair_player=same)
    assert (state.counts.pairs, state.distinct.pairs) == (4, 1)
    text = " | ".join(state.lines())
    assert "3 of 4 pairs repeat an earlier pair move for move; over the 1 distinct pairs: Elo" in text
    data = json.loads((tmp_path / "m" / "match.json").read_text())
    assert data["distinct_pairs"] == 1 and data["distinct_pentanomial"] == [0, 0, 0, 1, 0]
