"""The web views of a bigger board: a real 10x10 game's live log and its record give the same n x n view."""

from __future__ import annotations

from pathlib import Path

import pytest

from othello_arena.agents.registry import builtin_agents
from othello_arena.protocol import BLACK, WHITE
from othello_arena.referee import GameConfig, play_game
from othello_arena.tournaments.run.livelog import LiveLogWriter, read_live_log
from othello_arena.web.gameview import cells, entries_from_record, game_view, square_move
from othello_arena.web.games import GameRequest, GameRequestError


def test_a_10x10_game_replays_from_its_live_log_and_from_its_record(tmp_path: Path) -> None:
    builtins = builtin_agents()
    record = play_game(builtins.spec("greedy"), builtins.spec("beginner"), GameConfig(time_per_move=10, size=10),
                       tmp_path, on_event=LiveLogWriter(tmp_path))
    final = record.final_board()
    live = game_view(read_live_log(tmp_path))
    replayed = game_view(entries_from_record(record))
    for view in (live, replayed):
        assert view["problem"] == "" and view["size"] == 10
        assert len(view["plies"]) == len(record.moves) + 1
        assert view["plies"][-1]["cells"] == cells(final) and len(cells(final)) == 100
        assert view["score"] == {"W": final.count(WHITE), "B": final.count(BLACK)}
    assert live["result"] == replayed["result"]


def test_a_click_is_a_square_of_the_game_s_board() -> None:
    assert square_move("B", 99, 10).line() == "(B J 10)"
    assert square_move("W", None, 14).size == 14
    with pytest.raises(ValueError, match=r"no square 100: expected 0-99 \(A1 is 0, J10 is 99\)"):
        square_move("W", 100, 10)
    with pytest.raises(ValueError, match="expected 0-63"):
        square_move("W", 64)


def test_the_play_form_s_size_is_checked_and_refuses_an_agent_that_does_not_play_it(tmp_path: Path) -> None:
    assert GameRequest.from_form({"size": "12"}).size == 12
    with pytest.raises(GameRequestError, match="size: '9' is not one of 8, 10, 12, 14"):
        GameRequest.from_form({"size": "9"})
    request = GameRequest.from_form({"opponent": "champion", "size": "10", "colour": "W"})
    with pytest.raises(GameRequestError, match="size: cannot play on a 10x10 board: champion plays only on 8x8"):
        request.players(tmp_path, builtin_agents())
    people = GameRequest.from_form({"mode": "people", "size": "14"}).players(tmp_path, builtin_agents())
    assert all(14 in spec.sizes for spec in people)
