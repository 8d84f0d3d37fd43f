"""Standings, crosstable, tiebreaks and Bradley-Terry ratings from finished games."""

from __future__ import annotations

import pytest

from othello_arena.protocol import Colour, Result, Termination
from othello_arena.tournaments.results import ratings, standings
from othello_arena.tournaments.results.store import FinishedGame


def game(white: str, black: str, winner: str | None, reason: str = "normal", discs: tuple[int, int] = (40, 24)) -> FinishedGame:
    return FinishedGame("k", 1, white, black, Result(Colour(winner) if winner else None, Termination(reason), *discs))


def test_points_colours_discs_and_forfeits() -> None:
    games = [
        game("a", "b", "W", discs=(40, 24)),
        game("b", "a", "W", "timeout", discs=(30, 20)),  # a times out as Black
        game("a", "c", None, discs=(32, 32)),
        game("c", "a", "B", "crash", discs=(10, 12)),  # c crashes as White
    ]
    table = standings.compute(["a", "b", "c"], games)
    a = table.line("a")
    assert (a.games, a.points, a.wins, a.draws, a.losses) == (4, 2.5, 2, 1, 1)
    assert (a.white_wins, a.white_draws, a.white_losses) == (1, 1, 0)
    assert (a.black_wins, a.black_draws, a.black_losses) == (1, 0, 1)
    assert a.disc_difference == 16 - 10 + 0 + 2
    assert a.forfeits == {"timeout": 1, "illegal": 0, "malformed": 0, "crash": 0, "build": 0}
    assert table.line("c").forfeits["crash"] == 1
    assert table.line("b").forfeits["timeout"] == 0
    assert table.crosstable["a"]["b"] == (1.0, 2) and table.crosstable["b"]["a"] == (1.0, 2)
    assert table.crosstable["a"]["c"] == (1.5, 2)
    assert [line.agent for line in table.lines][0] == "a"
    assert sum(line.points for line in table.lines) == len(games)


def test_sonneborn_berger_breaks_a_tie() -> None:
    # x and y both score 1; x beat the strong s, y beat the weak w.
    games = [game("s", "w", "W"), game("s", "w", "W"), game("x", "s", "W"), game("y", "w", "W"),
             game("s", "y", "W"), game("w", "x", "W")]
    table = standings.compute(["w", "y", "x", "s"], games)
    assert table.line("x").points == table.line("y").points == 1.0
    assert table.line("x").rank < table.line("y").rank


def test_equal_agents_share_a_rank() -> None:
    table = standings.compute(["a", "b"], [game("a", "b", "W", discs=(33, 31)), game("b", "a", "W", discs=(33, 31))])
    assert [line.rank for line in table.lines] == [1, 1]


def test_byes_score_a_point() -> None:
    table = standings.compute(["a", "b", "c"], [game("a", "b", "W")], byes={"c": 1})
    assert table.line("c").points == 1.0 and table.line("c").byes == 1 and table.line("c").games == 0


def test_ratings_order_spread_and_intervals() -> None:
    games = []
    for _ in range(10):
        games += [game("strong", "mid", "W"), game("mid", "strong", "B"), game("mid", "weak", "W"),
                  game("weak", "mid", "B"), game("strong", "weak", "W"), game("weak", "strong", None)]
    fitted = ratings.fit(["weak", "mid", "strong"], games)
    assert fitted["strong"].elo > fitted["mid"].elo > fitted["weak"].elo
    assert sum(r.elo for r in fitted.values()) / 3 == pytest.approx(1500.0)
    for r in fitted.values():
        assert 0 < r.error < 400
    # Four times the games: intervals about half as wide.
    more = ratings.fit(["weak", "mid", "strong"], games * 4)
    assert more["mid"].error == pytest.approx(fitted["mid"].error / 2, rel=0.25)


def test_ratings_finite_for_a_perfect_score() -> None:
    fitted = ratings.fit(["a", "b"], [game("a", "b", "W"), game("b", "a", "B")])
    assert fitted["a"].elo > 1500 > fitted["b"].elo
    assert fitted["a"].error > 0 and fitted["a"].elo < 3000


def test_ratings_match_expected_score() -> None:
    # 75% against one opponent over many games: the gap is the Elo gap of a 75% score.
    games = [game("a", "b", "W")] * 300 + [game("a", "b", "B")] * 100
    fitted = ratings.fit(["a", "b"], games)
    assert ratings.expected_score(fitted["a"].elo, fitted["b"].elo) == pytest.approx(0.75, abs=0.01)


def test_text_tables() -> None:
    table = standings.compute(["a", "b"], [game("a", "b", "W"), game("b", "a", None, discs=(32, 32))])
    text = standings.format_table(table)
    assert "a" in text and "1.5" in text
    cross = standings.format_crosstable(table)
    assert "1½/2" in cross and "½/2" in cross


def test_timeouts_under_load_are_flagged() -> None:
    from othello_arena.protocol import GameRecord
    from othello_arena.tournaments.run.jobs import PlayedGame, outcome_from

    def result(cpu: float, load: float) -> dict:
        record = GameRecord("a", "b", time_per_move=1.0)
        data = record.to_dict()
        data["result"] = {"winner": "W", "reason": "timeout", "discs": {"W": 2, "B": 2}}
        data["agents"] = {"a": {"colour": "W", "seconds": 0.0, "cpu_seconds": 0.0},
                          "b": {"colour": "B", "seconds": 1.25, "cpu_seconds": cpu}}
        return PlayedGame(record=data, record_json="", record_sha256="", load=load, cores=2)

    thinking = outcome_from(result(cpu=1.2, load=0.5))
    assert thinking.result.termination is Termination.TIMEOUT and thinking.black_cpu == 1.2 and thinking.load_flag is None
    starved = outcome_from(result(cpu=0.1, load=0.5))
    assert starved.load_flag is not None and "CPU 0.10 s over 1.25 s" in starved.load_flag
    loaded = outcome_from(result(cpu=1.2, load=6.0))
    assert loaded.load_flag is not None and "load average 6.0 on 2 cores" in loaded.load_flag
    table = standings.compute(["a", "b"], [FinishedGame("k", 1, "a", "b", Result(Colour.WHITE, Termination.TIMEOUT, 2, 2), 0, starved.load_flag)])
    assert table.line("b").forfeits["timeout"] == 1 and table.line("b").load_flagged == 1
