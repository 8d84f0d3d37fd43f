"""Tournaments with an opening suite: game pairs from drawn openings, through the real referee."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import GameRecord
from othello_arena.protocol.openings import format_opening, parse_openings
from othello_arena.referee import draw_openings
from othello_arena.tournaments.schedule import config
from othello_arena.tournaments.schedule.pairing import derive_seed, game_opening
from othello_arena.tournaments.results.report import report_data
from tournament_helpers import agent, query, write_tournament

BOOK = "d3 c5 f6\nd3 c3 c4\nf5 f6 e6\nc4 e3 f6\n"
GREEDY, RANDOM = '[[agents]]\nname = "greedy"\n', '[[agents]]\nname = "random"\n'


def test_every_pairing_plays_game_pairs_from_the_same_drawn_openings(tmp_path: Path) -> None:
    (tmp_path / "book.txt").write_text(BOOK)
    path = write_tournament(tmp_path, [GREEDY, RANDOM],
                            games_per_pairing=4, seed=5, openings="book.txt")
    result = CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = query(tmp_path / "results" / "tournament.sqlite", "SELECT * FROM games ORDER BY key")
    records = [GameRecord.from_dict(json.loads(row["record"])) for row in rows]
    drawn = draw_openings(parse_openings(BOOK), 2, derive_seed(5, "openings"))
    assert [format_opening(r.opening) for r in records] == [format_opening(o) for o in (drawn[0], drawn[0], drawn[1], drawn[1])]
    assert drawn[0] != drawn[1]  # no repeat
    assert (records[0].white, records[0].black) == (records[1].black, records[1].white)  # a pair: colours swapped
    for row, record in zip(rows, records):
        assert record.result is not None and record.result.termination == "normal", record.result
        on_disk = GameRecord.load(str(Path(row["game_dir"]) / "game.json"))
        assert on_disk.opening == record.opening
    verify = CliRunner().invoke(cli, ["tournament", "verify", str(path)], catch_exceptions=False)
    assert verify.exit_code == 0, verify.output
    page = report_data(config.load(path), tmp_path / "report")
    assert page["settings"]["openings"] == "book.txt (game pairs, drawn by the seed)"
    assert sorted(game["opening"] for game in page["games"]) == sorted(format_opening(r.opening) for r in records)


def test_the_suite_is_part_of_the_schedule(tmp_path: Path) -> None:
    (tmp_path / "book.txt").write_text(BOOK)
    path = write_tournament(tmp_path, [GREEDY, RANDOM], openings="book.txt")
    loaded = config.load(path)
    assert loaded.openings == (tmp_path / "book.txt").resolve()
    assert game_opening(loaded, 1) == game_opening(loaded, 2) != game_opening(loaded, 3)
    plain = config.load(write_tournament(tmp_path, [GREEDY, RANDOM]))
    assert game_opening(plain, 1) == [] and "openings" not in json.dumps(plain.legacy_schedule_key(None))
    (tmp_path / "book.txt").write_text(BOOK + "e6 f4\n")
    assert config.load(path).schedule_basis() != loaded.schedule_basis()  # resume refuses a changed suite


@pytest.mark.parametrize("settings, agents, message", [
    ({"openings": "nosuch.txt"}, [GREEDY, RANDOM], "no such file"),
    ({"openings": "book.txt", "colours": "random"}, [GREEDY, RANDOM], 'need colours = "both"'),
    ({"openings": "bad.txt"}, [GREEDY, RANDOM], "line 2"),
    ({"openings": "book.txt"}, [GREEDY, agent("first", "first")], "first does not declare that it reads openings"),
])
def test_a_bad_openings_setting_says_what_is_wrong(tmp_path: Path, settings: dict, agents: list, message: str) -> None:
    (tmp_path / "book.txt").write_text(BOOK)
    (tmp_path / "bad.txt").write_text("d3\nd3 d3\n")
    with pytest.raises(config.TournamentFileError, match=message):
        config.load(write_tournament(tmp_path, agents, **settings))


def test_a_program_declares_openings_in_its_table(tmp_path: Path) -> None:
    (tmp_path / "book.txt").write_text(BOOK)
    table = agent("first", "first") + "openings = true\n"
    loaded = config.load(write_tournament(tmp_path, [GREEDY, table], openings="book.txt"))
    assert loaded.agent("first").openings
    with pytest.raises(config.TournamentFileError, match="openings"):
        config.load(write_tournament(tmp_path, [GREEDY, agent("first", "first") + 'openings = "yes"\n']))


def test_balanced_names_the_shipped_suite(tmp_path: Path) -> None:
    from othello_arena.protocol.openings import suite_path

    loaded = config.load(write_tournament(tmp_path, [GREEDY, RANDOM], openings="balanced"))
    assert loaded.openings == suite_path("balanced").resolve()
    assert len(game_opening(loaded, 1)) == 8


def test_the_report_replays_a_game_from_its_opening_in_chromium(tmp_path: Path) -> None:
    from test_tournament_report import drawn, open_in_chromium

    (tmp_path / "book.txt").write_text(BOOK)
    path = write_tournament(tmp_path, [GREEDY, RANDOM], games_per_pairing=2, seed=5, openings="book.txt")
    runner = CliRunner()
    assert runner.invoke(cli, ["tournament", "run", str(path), "-q"]).exit_code == 0
    assert runner.invoke(cli, ["tournament", "report", str(path), "-o", str(tmp_path / "out")]).exit_code == 0
    row = query(tmp_path / "results" / "tournament.sqlite", "SELECT key, record FROM games ORDER BY key")[0]
    record = GameRecord.from_dict(json.loads(row["record"]))
    result = open_in_chromium(tmp_path / "out" / "index.html", f"selftest={row['key']}:0", tmp_path / "profile")
    assert result["errors"] == []
    assert result["board"] == drawn(record.opening_board())  # the board starts after the opening
    assert result["info"].startswith(f"After the opening {format_opening(record.opening)}")
