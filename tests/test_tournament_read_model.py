"""One tournament, four readers, the same numbers: all read the one read model (tournaments/results/state.py).

A small real tournament (built-in agents in their sandboxes, a real SQLite database) is read by
``othello tournament status --json``, the report's data, the CSV export and the web app's JSON API
(``othello serve`` in its own process); each must give every agent the same games, points, wins,
draws and losses, and the crosstable the same cells.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.tournaments.results.report import report_data
from othello_arena.tournaments.results.state import read_state
from othello_arena.tournaments.schedule import config
from tournament_helpers import agent, write_tournament
from web_helpers import raw_get, serving

pytestmark = pytest.mark.slow

AGENTS = ['[[agents]]\nname = "random"\n', '[[agents]]\nname = "greedy"\n',
          '[[agents]]\nname = "lucky"\nbuiltin = "random"\n', agent("crasher", "flips", "--crash-at 3")]
Numbers = dict[str, tuple[int, float, int, int, int]]  # agent -> games, points, wins, draws, losses


def numbers_of(lines: list[dict]) -> Numbers:
    return {line["agent"]: (int(line["games"]), float(line["points"]), int(line["wins"]), int(line["draws"]),
                            int(line["losses"])) for line in lines}


def test_status_report_export_and_web_give_the_same_numbers(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, AGENTS, seed=7, games_per_pairing=2, concurrency=2)
    invoke = CliRunner().invoke
    assert invoke(cli, ["tournament", "run", str(path), "-q"], catch_exceptions=False).exit_code == 0

    status = json.loads(invoke(cli, ["tournament", "status", str(path), "--json"], catch_exceptions=False).output)
    tournament = config.load(path)
    report = report_data(tournament, tmp_path / "report")
    export = invoke(cli, ["tournament", "export", str(path), "-o", str(tmp_path / "csv")], catch_exceptions=False)
    assert export.exit_code == 0, export.output
    with open(tmp_path / "csv" / "standings.csv", encoding="utf-8", newline="") as handle:
        exported = list(csv.DictReader(handle))
    with open(tmp_path / "csv" / "crosstable.csv", encoding="utf-8", newline="") as handle:
        exported_cross = list(csv.DictReader(handle))
    with serving(tmp_path, str(path)) as (base, _):
        code, body = raw_get(base, "/api/tournament")
        assert code == 200, body[:300]
        web = json.loads(body)

    # The tournament was played: 12 games, wins and losses (the crasher forfeits), every agent in the table.
    state = read_state(tournament)
    expected = numbers_of([line.to_dict() for line in state.standings.lines])
    assert set(expected) == {"random", "greedy", "lucky", "crasher"}
    assert sum(games for games, *_ in expected.values()) == 2 * 12 == 2 * state.progress.finished
    assert expected["crasher"][4] > 0 and sum(wins for *_, wins, _d, _l in expected.values()) > 0

    # The same numbers from the four readers.
    assert numbers_of(status["standings"]) == expected
    assert numbers_of(report["standings"]) == expected
    assert numbers_of(exported) == expected
    assert numbers_of(web["standings"]) == expected
    assert [line["agent"] for line in exported] == [line["agent"] for line in status["standings"]] \
        == [line["agent"] for line in report["standings"]] == [line["agent"] for line in web["standings"]]
    assert status["finished"] == report["finished"] == web["counts"]["finished"] == 12
    assert status["scheduled"] == report["scheduled"] == web["counts"]["scheduled"] == 12

    # The crosstable: the same points and games, and the same wins, draws and losses per pair.
    for agent_name, row in status["crosstable"].items():
        for opponent, cell in row.items():
            assert report["crosstable"][agent_name][opponent] == cell == web["crosstable"][agent_name][opponent]
    cells = {(item["agent"], item["opponent"]): item for item in exported_cross}
    assert len(cells) == 4 * 3
    for (agent_name, opponent), item in cells.items():
        cell = state.crosstable[agent_name][opponent]
        assert (float(item["points"]), int(item["games"])) == (cell.points, cell.games) \
            == (status["crosstable"][agent_name][opponent]["points"], status["crosstable"][agent_name][opponent]["games"])
        assert [int(item["wins"]), int(item["draws"]), int(item["losses"])] == report["wdl"][agent_name][opponent] \
            == [cell.wins, cell.draws, cell.losses]
