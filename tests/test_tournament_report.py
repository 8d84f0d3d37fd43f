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
from tournament_helpers import agent, query, write_tournament

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
