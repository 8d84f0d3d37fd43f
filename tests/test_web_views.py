"""What the pages are given, without a browser: a game's live log read back, bad input named, the command line."""

from __future__ import annotations

import re
import time
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.agents.registry import builtin_agents
from othello_arena.cli import cli
from othello_arena.protocol import BLACK, WHITE, Board
from othello_arena.protocol.notation import format_obf
from othello_arena.referee import AgentSpec, GameConfig, play_game
from othello_arena.tournaments.schedule.config import load
from othello_arena.tournaments.run.livelog import LIVE_LOG, LiveLogWriter, read_live_log
from othello_arena.tournaments.results.lock import RunnerLock, lock_path
from othello_arena.tournaments.schedule.pairing import ScheduledGame
from othello_arena.tournaments.results.store import Store
from othello_arena.web.cli import is_loopback
from othello_arena.web.gameview import cells, entries_from_record, game_view
from othello_arena.web.games import GameRequest, GameRequestError
from othello_arena.web.templating import page_templates
from othello_arena.web.tournament import FRESH_SECONDS, TournamentView
from tournament_helpers import AGENT, agent, write_tournament


def drawn(board) -> str:
    return "".join("W" if board.at(sq) is WHITE else "B" if board.at(sq) is BLACK else "." for sq in range(64))


def test_a_games_live_log_replays_to_the_record(tmp_path: Path) -> None:
    # Real agents in their sandboxes, writing a comment line with each move.
    first = AgentSpec.parse(f"first=python3 {AGENT} --name first --style first")
    flips = AgentSpec.parse(f"flips=python3 {AGENT} --name flips --style flips")
    writer = LiveLogWriter(tmp_path)
    record = play_game(first, flips, GameConfig(time_per_move=5), tmp_path, seed=1, on_event=writer)
    assert record.result is not None and record.result.termination == "normal"
    live = game_view(read_live_log(tmp_path))
    replayed = game_view(entries_from_record(record))
    positions = [drawn(board) for board, _ in record.positions()]
    assert [ply["cells"] for ply in live["plies"]] == positions
    assert [ply["cells"] for ply in replayed["plies"]] == positions
    assert [ply["move"] for ply in live["plies"][1:]] == [entry.move.line() for entry in record.moves]
    assert [ply["comments"] for ply in live["plies"][1:]] == [entry.comments for entry in record.moves]
    assert any(ply["comments"] for ply in live["plies"][1:])  # the agent's (C move N) lines
    assert live["result_text"] == replayed["result_text"] != ""
    assert live["clocks"] == pytest.approx({"W": record.extra["agents"]["first"]["seconds"],
                                            "B": record.extra["agents"]["flips"]["seconds"]}, abs=0.01)
    # Each move's flips are the discs that changed colour, and the last move is marked.
    for before, after in zip(live["plies"], live["plies"][1:]):
        if after["square"] is not None:
            changed = [sq for sq in range(64) if before["cells"][sq] != "." and before["cells"][sq] != after["cells"][sq]]
            assert after["flips"] == changed and changed


def test_under_a_game_clock_the_live_log_and_the_record_give_the_banks(tmp_path: Path) -> None:
    writer = LiveLogWriter(tmp_path)
    config = GameConfig(time_per_move=None, clock=(30, 1))
    record = play_game(AgentSpec.builtin("greedy"), AgentSpec.builtin("random"), config, tmp_path, seed=2,
                       on_event=writer)
    assert record.result is not None and record.result.termination == "normal"
    live, replayed = game_view(read_live_log(tmp_path)), game_view(entries_from_record(record))
    last = {entry.move.colour.value: entry.clock for entry in record.moves}
    assert replayed["banks"] == last  # what the page counts down from
    assert live["banks"] == pytest.approx(last, abs=0.01)
    plain = game_view(entries_from_record(play_game(AgentSpec.builtin("greedy"), AgentSpec.builtin("random"),
                                                    GameConfig(time_per_move=5), tmp_path / "plain", seed=2)))
    assert plain["banks"] == {"W": None, "B": None}  # no clock: the page shows the time used


def test_a_line_being_written_and_a_broken_log_are_data(tmp_path: Path) -> None:
    start = '{"event":"start","at":1,"white":"a","black":"b","board":"' + "-" * 27 + "OX------XO" + "-" * 27 + ' X;"}\n'
    (tmp_path / LIVE_LOG).write_text(start + '{"event":"move","colour":"W","move":"(W D 3)","clo')
    view = game_view(read_live_log(tmp_path))
    assert len(view["plies"]) == 1 and view["legal"] == [19, 26, 37, 44]  # the half line waits for its end
    (tmp_path / LIVE_LOG).write_text(start + '{"event":"move","colour":"W","move":"(W A 1)"}\n')
    view = game_view(read_live_log(tmp_path))
    assert len(view["plies"]) == 1 and "A1" in view["problem"]
    (tmp_path / LIVE_LOG).unlink()
    (tmp_path / LIVE_LOG).symlink_to("/etc/passwd")
    assert read_live_log(tmp_path) == []  # never followed


@pytest.mark.parametrize("form, field", [
    ({"mode": "chess"}, "mode"),
    ({"colour": "red"}, "colour"),
    ({"time_per_move": "fast"}, "time_per_move"),
    ({"time_per_move": "-1"}, "time_per_move"),
    ({"person_time": "0"}, "person_time"),
    ({"opponent": 7}, "opponent"),
    ({"clock": "5"}, "clock"),
    ({"clock": "+1"}, "clock"),
    ({"mode": "agents", "move_pause": "slow"}, "move_pause"),
    ({"mode": "agents", "move_pause": "61"}, "move_pause"),
    ({"mode": "agents", "move_pause": "nan"}, "move_pause"),
])
def test_a_bad_form_names_its_field(form: dict, field: str) -> None:
    with pytest.raises(GameRequestError, match=f"^{field}:"):
        GameRequest.from_form(form)


def test_the_pause_between_moves_is_the_agents_modes_only() -> None:
    # The form sends every field, the hidden ones too: a person's game is paused by the person.
    assert GameRequest.from_form({"mode": "agents", "move_pause": "0.5"}).move_pause == 0.5
    assert GameRequest.from_form({"mode": "person", "move_pause": "0.5"}).move_pause == 0.0
    assert GameRequest.from_form({"mode": "agents"}).move_pause == 0.0


@pytest.mark.parametrize("form, field", [
    ({"opponent": "nosuchagent"}, "opponent"),
    ({"opponent": "manual:bob"}, "opponent"),
    ({"name": "../me"}, "name"),
    ({"mode": "agents", "second_opponent": "x="}, "second_opponent"),
])
def test_a_player_that_cannot_play_is_named(tmp_path: Path, form: dict, field: str) -> None:
    with pytest.raises(GameRequestError, match=f"^{field}:"):
        GameRequest.from_form(form).players(tmp_path, builtin_agents())


def test_serve_names_a_tournament_file_it_cannot_read(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["serve", str(tmp_path / "missing.toml")])
    assert result.exit_code == 2
    assert "missing.toml" in result.output


def test_only_loopback_counts_as_this_machine() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "192.168.1.5", "::", "example.org"))


def test_a_game_left_running_by_a_stopped_runner_is_not_shown_as_played(tmp_path: Path) -> None:
    tournament = load(write_tournament(tmp_path, [agent("first"), agent("last")], games_per_pairing=1,
                                       colours="random"))
    with Store(tournament.database) as store:
        store.add_round(1, [ScheduledGame("r01-p001-g1", 1, 1, 1, "first", "last", 5)])
        store.mark_running("r01-p001-g1")
    view = TournamentView(tournament)
    overview = view.overview()
    assert [game["status"] for game in overview["games"]] == ["interrupted"] and overview["live"] == []
    with RunnerLock(lock_path(tournament.database)):
        time.sleep(FRESH_SECONDS)
        overview = view.overview()
        assert [game["status"] for game in overview["games"]] == ["running"]
        assert [game["key"] for game in overview["live"]] == ["r01-p001-g1"]


def test_a_browser_game_under_a_clock_gives_every_side_the_bank(tmp_path: Path) -> None:
    from othello_arena.web.games import GameHall

    request = GameRequest.from_form({"mode": "agents", "opponent": "greedy", "second_opponent": "random",
                                     "clock": "30+1"})
    assert request.clock == (30.0, 1.0)
    game = GameHall(tmp_path, sandbox="none").start(request)
    game.thread.join(120)
    view = game.view()
    assert view["finished"] and view["result"]["reason"] == "normal"
    assert view["banks"]["W"] is not None and view["banks"]["B"] is not None  # the page counts these down


def test_one_game_view_is_drawn_by_one_template_for_both_servers() -> None:
    """The board, moves, replay controls and result are web's _game_view.html, which the class's game page
    includes: drawn here first at the game's last move (no JavaScript needed), empty for the script to fill."""
    package = Path(str(resources.files("othello_arena")))
    templates = [path for layer in ("web", "classroom") for path in sorted((package / layer).rglob("*.html"))]
    drawing = [str(path.relative_to(package)) for path in templates if 'id="moves"' in path.read_text(encoding="utf-8")]
    assert drawing == ["web/templates/_game_view.html"]  # no copy of the view in the class's templates
    class_templates = page_templates(resources.files("othello_arena.classroom").joinpath("templates"))
    assert Path(class_templates.get_template("base.html").filename or "").parent.parent.name == "classroom"
    assert Path(page_templates().get_template("base.html").filename or "").parent.parent.name == "web"

    board, entries = Board(), [{"event": "start", "board": format_obf(Board()), "white": "ann", "black": "bob"}]
    for _ in range(4):
        move = board.legal_moves()[0]
        board = board.play(move)
        entries.append({"event": "move", "move": move.line(), "seconds": 0.25, "clocks": {"W": 0.5, "B": 0.5}})
    view = game_view(entries)
    html = class_templates.get_template("_game_view.html").render(view=view, source="/games/1/view")
    first_paint = re.search(r'class="board" data-cells="([WB.]{64})"', html)
    assert first_paint is not None and first_paint.group(1) == cells(board)
    assert html.count('<div class="disc ') == 8 and html.count("<tr data-ply=") == 4
    assert '<span id="ply">4 / 4</span>' in html and '<span class="name">ann</span>' in html
    assert 'id="downloads" hidden' in html  # a class game has no download links
    html = page_templates().get_template("_game_view.html").render(view=None, web_game=True, source="/api/games/1")
    assert '<div id="board"></div>' in html and "<tr" not in html  # the script draws a live game
    assert 'href="/api/games/1/game.json"' in html
