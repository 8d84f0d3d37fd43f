"""The live tournament page: its first paint comes from the server, and a class of 30 fits at 1366 px.

Real ``othello serve`` processes and Debian's Chromium through Playwright:
with JavaScript disabled the standings, the crosstable and the games are in
the page as the server sent it; at 1366x768 the crosstable of a class of 30
has every column's header and scrolls sideways inside its full-width panel
(or fits), and the page itself never does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from tournament_helpers import agent, write_tournament
from web_helpers import WAIT_MS, browser, serving  # noqa: F401 - browser is a fixture

pytestmark = pytest.mark.slow

# What the page shows of its crosstable: its headers, whether it fits or scrolls, and the last column scrolled to.
CROSSTABLE_GEOMETRY = """() => {
  const panel = document.querySelector(".crosstable-panel"), table = document.getElementById("crosstable");
  const fits = table.getBoundingClientRect().right <= panel.getBoundingClientRect().right + 0.5;
  const scrollable = ["auto", "scroll"].includes(getComputedStyle(panel).overflowX) && panel.scrollWidth > panel.clientWidth;
  panel.scrollLeft = panel.scrollWidth;
  const last = [...table.querySelectorAll("th.col")].pop().getBoundingClientRect();
  return {fits, scrollable, panelWidth: panel.getBoundingClientRect().width,
          lastInView: last.left >= 0 && last.right <= window.innerWidth,
          pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth};
}"""


def test_the_first_paint_needs_no_javascript(tmp_path: Path, browser) -> None:  # noqa: F811
    agents = [agent("first", "first"), agent("last", "last"), agent("flips", "flips")]
    path = write_tournament(tmp_path, agents, concurrency=2, seed=2)
    assert CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"]).exit_code == 0
    with serving(tmp_path, str(path), "--games", str(tmp_path / "web-games")) as (base, _):
        context = browser.new_context(java_script_enabled=False, viewport={"width": 1366, "height": 768})
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/tournament")
        assert page.locator("#standings tr[data-agent]").count() == 3
        assert sum(float(text) for text in page.locator("#standings .points").all_inner_texts()) == 6.0
        assert page.locator("#crosstable th.col").all_inner_texts() == ["1", "2", "3"]
        cells = [text for text in page.locator("#crosstable td").all_inner_texts() if text != "—"]
        assert len(cells) == 6 and all(cell.endswith("/2") for cell in cells)
        assert page.locator("#games tr[data-status=finished]").count() == 6
        assert page.inner_text("#counts") == "6 of 6 games played, 0 in progress"
        context.close()
        # With JavaScript the same tables, kept up to date by the server's events.
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/tournament")
        page.wait_for_function("() => document.querySelectorAll('#crosstable th.col').length === 3")
        assert sum(float(text) for text in page.locator("#standings .points").all_inner_texts()) == 6.0
        page.close()


def test_a_class_of_30_fits_its_crosstable_at_1366_pixels(tmp_path: Path, browser) -> None:  # noqa: F811
    names = [f"student{number:02}" for number in range(1, 30)]
    agents = ['[[agents]]\nname = "greedy"\nreference = true\n'] + \
        [f'[[agents]]\nname = "{name}"\nbuiltin = "random"\n' for name in names]
    path = write_tournament(tmp_path, agents, games_per_pairing=2)
    with serving(tmp_path, str(path), "--games", str(tmp_path / "web-games")) as (base, _):
        for scripts in (False, True):
            context = browser.new_context(java_script_enabled=scripts, viewport={"width": 1366, "height": 768})
            page = context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(base + "/tournament")
            if scripts:
                page.wait_for_function("() => document.querySelectorAll('#crosstable th.col').length === 30")
            headers = page.locator("#crosstable th.col")
            assert headers.count() == 30
            assert sorted(headers.evaluate_all("(cells) => cells.map((c) => c.title)")) == sorted(["greedy", *names])
            geometry = page.evaluate(CROSSTABLE_GEOMETRY)
            assert geometry["fits"] or geometry["scrollable"], geometry
            assert geometry["lastInView"], geometry  # the 30th column, scrolled to, is on the screen
            assert geometry["pageWidth"] <= geometry["viewport"], geometry  # the page itself does not scroll sideways
            assert geometry["panelWidth"] > 1200, geometry  # the crosstable has the page's full width
            context.close()


def test_a_match_page_shows_the_match_figures_the_terminal_printed(tmp_path: Path, browser) -> None:  # noqa: F811
    """othello serve DIR/match.toml: the verdict and the short line of othello match, not the pool ratings."""
    book = tmp_path / "book.txt"
    book.write_text("d3 c5 f6\nd3 c3 c4\nf5 f6 e6\n")
    out = tmp_path / "m"
    played = CliRunner().invoke(cli, ["match", "greedy", "random", "--sprt", "elo1=50", "--max-games", "4",
                                      "--openings", str(book), "--seed", "4", "--time", "3", "--out", str(out)])
    assert played.exit_code == 0, played.output
    lines = played.output.splitlines()
    verdict = lines[-1]
    progress = lines[[n for n, line in enumerate(lines) if line.startswith("pair ")][-1]].split(" | ", 1)[1]
    assert verdict.startswith("no decision after 4 games (Elo ")
    with serving(tmp_path, str(out / "match.toml"), "--games", str(tmp_path / "web-games")) as (base, _):
        for scripts in (False, True):
            context = browser.new_context(java_script_enabled=scripts, viewport={"width": 1366, "height": 768})
            page = context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(base + "/tournament")
            if scripts:
                page.wait_for_function("() => document.querySelectorAll('#standings tr[data-agent]').length === 2")
            assert page.inner_text("#match-verdict") == verdict
            assert page.inner_text("#match-progress") == progress
            assert "LLR" in page.locator("#match-figures").text_content()
            # Not the pool rating (1500 +- ...), a second Elo of the same fact: the match's own, each side's over
            # the other, as the terminal's line has it for greedy (A).
            elo = {cells.split("\t")[1].strip(): cells.split("\t")[6].strip()
                   for cells in page.locator("#standings tr[data-agent]").all_inner_texts()}
            assert f"| Elo {elo['greedy']} |" in f"| {progress}", (elo, progress)
            assert "1500" not in elo["random"] and "±" not in elo["random"]
            assert page.inner_text("#counts") == "4 of 4 games played, the most --max-games allows: the SPRT did not decide"
            context.close()
