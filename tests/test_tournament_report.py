"""The HTML report, opened from disk in a real headless Chromium: no errors, and a game replays.

The page has a test hook (``index.html#selftest=GAME:STEPS``): it clicks the
game's row and the "next" button STEPS times, then writes what the drawn
board shows into ``<pre id="selftest">``; Chromium's ``--dump-dom`` gives us
the page after its scripts ran.  The drawn board is compared with the rules
core's position after the same moves.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import BLACK, WHITE, GameRecord
from tournament_helpers import agent, agent_with_build, query, write_tournament
from web_helpers import browser  # noqa: F401 - a fixture

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class SelfTest(HTMLParser):
    """Collects the text of ``<pre id="selftest">``."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.inside = tag == "pre" and ("id", "selftest") in attrs

    def handle_endtag(self, tag: str) -> None:
        self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.text += data


def open_in_chromium(page: Path, fragment: str, profile: Path) -> dict:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (Debian packages chromium and chromium-driver)")
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", f"{page.as_uri()}#{fragment}"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    parser = SelfTest()
    parser.feed(done.stdout)
    assert parser.text, f"the page wrote no self-test result:\n{done.stdout[:2000]}"
    return json.loads(parser.text)


def drawn(board) -> str:
    return "".join("W" if board.at(sq) is WHITE else "B" if board.at(sq) is BLACK else "." for sq in range(64))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("report")
    agents = [agent("first", "first"), agent("last", "last"), agent("crasher", "flips", "--crash-at 4")]
    path = write_tournament(root, agents, concurrency=2, seed=5)
    runner = CliRunner()
    assert runner.invoke(cli, ["tournament", "run", str(path), "-q"]).exit_code == 0
    result = runner.invoke(cli, ["tournament", "report", str(path), "-o", str(root / "out")])
    assert result.exit_code == 0, result.output
    return root, root / "out" / "index.html"


def test_report_files_are_self_contained(report: tuple[Path, Path]) -> None:
    root, page = report
    text = page.read_text(encoding="utf-8")
    # Nothing fetched from anywhere: no external script, style, image or font.
    for needle in ("<script src", "<link", "@import", "url(", "https://"):
        assert needle not in text
    assert (page.parent / "games.ggf").read_text().count("(;GM[Othello]") == 6
    assert json.loads((page.parent / "status.json").read_text())["finished"] == 6


@pytest.mark.parametrize("steps", [0, 1, 17, 500])
def test_a_game_replays_in_chromium(report: tuple[Path, Path], tmp_path: Path, steps: int) -> None:
    root, page = report
    row = query(root / "results" / "tournament.sqlite",
                "SELECT key, record FROM games WHERE white = 'first' AND black = 'last'")[0]
    record = GameRecord.from_dict(json.loads(row["record"]))
    positions = [board for board, _ in record.positions()]
    expected_ply = min(steps, len(positions) - 1)

    result = open_in_chromium(page, f"selftest={row['key']}:{steps}", tmp_path / "profile")
    assert result["errors"] == []
    # A finished game opens at its end, its result right above the board; the start button goes back to move 0,
    # from where the hook steps.
    assert result["openedAt"] == result["lastPly"] == len(positions) - 1
    assert result["resultText"] == _result_words(record) and 0 <= result["resultGap"] < 30, result
    assert result["game"] == row["key"] and result["ply"] == expected_ply
    assert result["board"] == drawn(positions[expected_ply])
    assert result["standings"] == 3 and result["crosstable"] == 3 and result["ratingDots"] == 3
    if steps == 500:
        assert "wins" in result["info"] or "Draw" in result["info"]


def test_a_forfeited_game_replays_in_chromium(report: tuple[Path, Path], tmp_path: Path) -> None:
    root, page = report
    row = query(root / "results" / "tournament.sqlite",
                "SELECT key, record FROM games WHERE white = 'crasher' AND reason = 'crash'")[0]
    record = GameRecord.from_dict(json.loads(row["record"]))
    result = open_in_chromium(page, f"selftest={row['key']}:99", tmp_path / "profile")
    assert result["errors"] == []
    assert result["board"] == drawn(record.final_board())
    assert "crash" in result["info"]
    assert result["openedAt"] == result["lastPly"] and "crash" in result["resultText"]


def _result_words(record: GameRecord) -> str:
    """The result as the viewer says it: ``White (first) wins 40-24 (normal)``."""
    result = record.result
    assert result is not None
    end = {WHITE: f"White ({record.white}) wins", BLACK: f"Black ({record.black}) wins"}.get(result.winner, "Draw")
    return (f"{end} {result.white_discs}-{result.black_discs} "
            f"({result.termination.value}{': ' + result.detail if result.detail else ''})")


def test_the_agent_pages_have_the_reports_look(report: tuple[Path, Path], browser) -> None:  # noqa: F811
    """Each agent's page inlines the report's own stylesheet: the same header, fonts and tables, opened from disk."""
    _, index = report
    looks = {}
    for page_path in (index, index.parent / "agents" / "first.html"):
        text = page_path.read_text(encoding="utf-8")
        for needle in ("<script src", "<link", "@import", "url(", "https://"):
            assert needle not in text  # nothing fetched: it opens from disk, anywhere
        page = browser.new_page()
        page.goto(page_path.as_uri())
        looks[page_path.name] = page.evaluate("""() => {
          const style = (selector, property) => getComputedStyle(document.querySelector(selector))[property];
          return {header: style("header", "backgroundColor"), font: style("body", "fontFamily"),
                  background: style("body", "backgroundColor"), h2: style("h2", "borderBottomColor"),
                  th: style("th", "backgroundColor"), headerText: style("header h1", "color")};
        }""")
        page.close()
    assert looks["index.html"] == looks["first.html"], looks
    assert looks["first.html"]["header"] == "rgb(27, 77, 48)" and looks["first.html"]["headerText"] == "rgb(255, 255, 255)"


# ---------------------------------------------------------------------------
# The report an instructor reads after a real class week: a crash, a failed
# build, a cheater withdrawn; written by `run` itself (and refreshed by
# `withdraw`), never by hand.
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def class_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("class")
    broken = agent_with_build(root, "broken", "first", "echo 'error: expected ; before }'; exit 2")
    agents = [agent("first", "first"), agent("last", "last"), agent("crasher", "flips", "--crash-at 4"), broken,
              agent("cheat", "flips")]
    path = write_tournament(root, agents, concurrency=2, seed=5)
    runner = CliRunner()
    result = runner.invoke(cli, ["tournament", "run", str(path), "-q"])
    assert result.exit_code == 0, result.output
    page = root / "results" / "report" / "index.html"
    assert page.is_file()  # written by the run itself
    result = runner.invoke(cli, ["tournament", "withdraw", str(path), "cheat", "--reason", "copied greedy.c"])
    assert result.exit_code == 0, result.output
    return root, page


def test_the_games_filter_sort_and_search_in_chromium(class_report: tuple[Path, Path], tmp_path: Path) -> None:
    root, page = class_report
    database = root / "results" / "tournament.sqlite"
    crashes = sorted(r["key"] for r in query(database, "SELECT key FROM games WHERE reason = 'crash' AND "
                                                       "(white = 'crasher' OR black = 'crasher')"))
    assert crashes
    # All of crasher's crashes: agent and reason filters together.
    result = open_in_chromium(page, "selftest=:0:crasher::crash::", tmp_path / "p1")
    assert result["errors"] == []
    assert sorted(result["visibleGames"]) == crashes
    assert result["gamesCount"] == f"showing {len(crashes)} of 20 games"
    assert result["boardInView"]  # the click brought the board into view
    # A search box over names, reasons and details; several words must all match.
    result = open_in_chromium(page, "selftest=:0::::broken build:", tmp_path / "p2")
    broken = sorted(r["key"] for r in query(database, "SELECT key FROM games WHERE white = 'broken' OR black = 'broken'"))
    assert sorted(result["visibleGames"]) == broken and len(broken) == 8
    # Sorting by the number of moves (column 6), and "agent won" for one agent.
    result = open_in_chromium(page, "selftest=:0:first:win:::6", tmp_path / "p3")
    rows = query(database, "SELECT key, plies, winner, white, black FROM games")
    won = {r["key"]: r["plies"] for r in rows if (r["winner"] == "W" and r["white"] == "first")
           or (r["winner"] == "B" and r["black"] == "first")}
    assert sorted(result["visibleGames"]) == sorted(won)
    assert [won[k] for k in result["visibleGames"]] == sorted(won.values())


def test_the_class_report_in_chromium(class_report: tuple[Path, Path], tmp_path: Path) -> None:
    root, page = class_report
    result = open_in_chromium(page, "selftest=:3", tmp_path / "profile")
    assert result["errors"] == []
    # Crosstable cells read "1½ of 2" with wins-draws-losses, never "1/2".
    assert result["crossCells"] and all(" of " in cell and "/" not in cell for cell in result["crossCells"])
    assert len(result["crossCells"]) == 4 * 3  # cheat is withdrawn: out of the crosstable
    assert result["withdrawn"] == ["cheat: copied greedy.c (8 game(s), not counted)"]
    assert "cheat" not in result["students"] and len(result["students"]) == 4
    [build] = result["builds"]
    assert "broken: build failed (exit 2)" in build["text"] and build["log"] is None  # published: no build log
    assert sorted(result["agentLinks"]) == sorted(f"agents/{n}.html" for n in ("first", "last", "crasher", "broken"))
    # Per-agent pages: its games, its build, its forfeits (published: without its stderr).
    crasher = (page.parent / "agents" / "crasher.html").read_text()
    assert "Forfeits (" in crasher and "crashing on purpose" not in crasher and "loses: its program crashed" in crasher
    broken = (page.parent / "agents" / "broken.html").read_text()
    assert "The build failed (exit 2)" in broken and "broken.log\"" not in broken and "Build log" not in broken
    # The instructor's copy: the end of the stderr under each forfeit, the build log linked.
    mine = root / "mine" / "index.html"
    assert CliRunner().invoke(cli, ["tournament", "report", str(root / "t.toml"), "--with-logs",
                                    "-o", str(mine.parent)]).exit_code == 0
    result = open_in_chromium(mine, "selftest=:3", tmp_path / "profile-mine")
    assert result["errors"] == []
    log = (mine.parent / result["builds"][0]["log"]).resolve()
    assert log == (root / "results" / "build" / "broken.log").resolve() and "expected ;" in log.read_text()
    assert "crashing on purpose" in (mine.parent / "agents" / "crasher.html").read_text()
    assert 'href="../../results/build/broken.log"' in (mine.parent / "agents" / "broken.html").read_text()
    assert "Withdrawn: copied greedy.c" in (page.parent / "agents" / "cheat.html").read_text()
    status = json.loads((page.parent / "status.json").read_text())
    assert (status["finished"], status["scheduled"], status["withdrawn_games"]) == (12, 12, 8)


def test_swiss_pairings_and_gauntlet_tables_in_chromium(tmp_path: Path) -> None:
    swiss = tmp_path / "swiss"
    swiss.mkdir()
    agents = [agent("a", "first"), agent("b", "last"), agent("c", "flips"), agent("d", "first")]
    path = write_tournament(swiss, agents, format="swiss", rounds=2, concurrency=2, seed=3)
    assert CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"]).exit_code == 0
    result = open_in_chromium(swiss / "results" / "report" / "index.html", "selftest=:0", tmp_path / "p1")
    assert result["errors"] == [] and result["rounds"] == 2 and result["references"] == []

    gauntlet = tmp_path / "gauntlet"
    gauntlet.mkdir()
    agents = [agent("ref", "flips"), agent("s1", "first"), agent("s2", "last")]
    path = write_tournament(gauntlet, agents, format="gauntlet", gauntlet=["ref"], concurrency=2)
    assert CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"]).exit_code == 0
    result = open_in_chromium(gauntlet / "results" / "report" / "index.html", "selftest=:0", tmp_path / "p2")
    assert result["errors"] == [] and result["rounds"] == 0
    assert sorted(result["students"]) == ["s1", "s2"] and result["references"] == ["ref"]


def test_a_name_holding_a_placeholder_stays_a_name() -> None:
    from othello_arena.tournaments.results.report import render

    name = "Class __REPORT_DATA__ of __TITLE__ <b>2026</b>"
    page = render({"name": name, "games": [{"key": "r01-p001-g1"}]})
    title = page.split("<title>", 1)[1].split("</title>", 1)[0]
    assert title == "Class __REPORT_DATA__ of __TITLE__ &lt;b&gt;2026&lt;/b&gt;: Othello Arena tournament"
    assert page.count("r01-p001-g1") == 1  # the data once, in its block
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert data["name"] == name


def test_a_game_under_a_clock_shows_the_bank_in_chromium(tmp_path: Path, tournament_file) -> None:
    """A tournament under clock = "30+1": the report says so, and each move of a replayed game its bank."""
    path = tournament_file(seed=5, clock="30+1", games_per_pairing=2)
    runner = CliRunner()
    assert runner.invoke(cli, ["tournament", "run", str(path), "-q"]).exit_code == 0
    result = runner.invoke(cli, ["tournament", "report", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    row = query(tmp_path / "results" / "tournament.sqlite",
                "SELECT key, record FROM games WHERE white = 'first' AND black = 'last'")[0]
    record = GameRecord.from_dict(json.loads(row["record"]))
    assert record.clock == "30+1" and record.time_per_move == 3.0  # the helper's time_per_move: a cap per move
    shown = open_in_chromium(tmp_path / "out" / "index.html", f"selftest={row['key']}:1", tmp_path / "profile")
    assert shown["errors"] == []
    assert f"{round(record.moves[0].clock or 0, 2):g} s left" in shown["info"]
    # The time use of each agent over its games (the same function as othello play's): a row each, with its clock.
    records = [GameRecord.from_dict(json.loads(r["record"]))
               for r in query(tmp_path / "results" / "tournament.sqlite", "SELECT record FROM games")]
    from othello_arena.referee.time_use import time_use

    expected = {use.agent: use for use in time_use(records)}
    assert sorted(cells[0] for cells in shown["timeUse"]) == ["first", "last"]
    for cells in shown["timeUse"]:
        use = expected[cells[0]]
        assert cells[1:6] == [str(use.games), str(use.moves), f"{use.mean:.2f}", f"{use.longest:.2f}", str(use.near_limit)]
        assert cells[6] == f"{use.least_left:.2f} s (30+1)"
    assert shown["matchVerdict"] is None and shown["ratingsShown"]


def test_a_match_report_shows_the_verdict_of_othello_match_not_pool_ratings(tmp_path: Path) -> None:
    out = tmp_path / "m"
    played = CliRunner().invoke(cli, ["match", "greedy", "random", "--games", "2", "--seed", "4", "--time", "3",
                                      "--out", str(out)])
    assert played.exit_code == 0, played.output
    report = CliRunner().invoke(cli, ["tournament", "report", str(out / "match.toml"), "-o", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    shown = open_in_chromium(tmp_path / "r" / "index.html", "selftest=:0", tmp_path / "profile")
    assert shown["errors"] == []
    assert shown["matchVerdict"] == played.output.splitlines()[-1] and not shown["ratingsShown"]
    assert sorted(cells[0] for cells in shown["timeUse"]) == ["greedy", "random"]
