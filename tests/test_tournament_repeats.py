"""Repeated games: deterministic agents replaying the same game are said, and the rating intervals use the distinct games."""

from __future__ import annotations

import json

from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import Colour, Result, Termination
from othello_arena.tournaments.results import standings
from othello_arena.tournaments.results.store import FinishedGame, moves_key


def game(key: str, white: str, black: str, winner: str, moves: str) -> FinishedGame:
    result = Result(Colour(winner) if winner else None, Termination.NORMAL, 40, 24)
    return FinishedGame(key, 1, white, black, result, 60, None, moves)


def test_repeats_are_counted_and_widen_the_intervals() -> None:
    distinct = [game("g1", "a", "b", "W", "x1"), game("g2", "b", "a", "B", "x2")]
    repeated = distinct + [game(f"g{i}", "a", "b", "W", "x1") for i in range(3, 9)]
    honest = standings.compute(["a", "b"], repeated)
    assert (honest.games, honest.repeats) == (8, 6) and honest.line("a").repeats == 6
    assert "6 of 8 games repeat an earlier game move for move" in standings.format_table(honest)
    assert "the rating intervals use the 2 distinct games" in honest.repeats_note()
    # the same 8 games if all were distinct: the estimate is the same, the interval far narrower
    unique = standings.compute(["a", "b"], [game(f"u{i}", g.white, g.black, g.result.winner.value if g.result.winner else "", f"m{i}")
                                            for i, g in enumerate(repeated)])
    assert unique.repeats == 0 and unique.repeats_note() == "" and "repeat" not in standings.format_table(unique)
    assert honest.line("a").elo == unique.line("a").elo
    assert honest.line("a").elo_error > unique.line("a").elo_error
    two_only = standings.compute(["a", "b"], distinct)
    assert honest.line("a").elo_error == two_only.line("a").elo_error
    assert standings.compute(["a", "b"], [game("k", "a", "b", "W", ""), game("l", "a", "b", "W", "")]).repeats == 0


def test_the_moves_key_ignores_clocks_and_comments_but_not_colours_or_openings() -> None:
    base = {"white": "a", "black": "b", "moves": [{"move": "(W D 3)", "seconds": 0.1, "comments": ["x"]}]}
    slower = {**base, "moves": [{"move": "(W D 3)", "seconds": 0.9, "comments": []}]}
    assert moves_key(json.dumps(base)) == moves_key(json.dumps(slower)) != ""
    assert moves_key(json.dumps({**base, "white": "b", "black": "a"})) != moves_key(json.dumps(base))
    assert moves_key(json.dumps({**base, "opening": ["(W F 5)"]})) != moves_key(json.dumps(base))
    assert moves_key(None) == moves_key("not json") == ""


def test_a_tournament_of_deterministic_agents_says_its_games_repeat(tournament_file) -> None:
    path = tournament_file(games_per_pairing=4)
    run = CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    status = CliRunner().invoke(cli, ["tournament", "status", str(path)], catch_exceptions=False)
    assert "2 of 4 games repeat an earlier game move for move" in status.output, status.output
    data = json.loads(CliRunner().invoke(cli, ["tournament", "status", str(path), "--json"]).output)
    assert data["repeated_games"] == 2 and {line["repeats"] for line in data["standings"]} == {2}
