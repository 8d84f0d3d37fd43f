"""A match its SPRT decided, as a person reads it: the live lines, status, the web page and the report.

One real ``othello match`` (greedy against a program that crashes at its
first move, each pair from its own opening, two games at once): its LLR is
past the upper bound from the fourth pair, the test decides at the tenth
(its ``min_pairs``) and the runner starts no new game of the 200 allowed.
Then a real ``othello serve`` in Debian's Chromium (with and without
JavaScript) and the report written by ``othello tournament report``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from tournament_helpers import AGENT, query
from web_helpers import WAIT_MS, browser, serving  # noqa: F401 - browser is a fixture

pytestmark = pytest.mark.slow

DECIDED = re.compile(r"decided by the SPRT after 20 games(; \d more game\(s\) already running then finished[^;]*)?; "
                     r"the remaining (\d+) of at most 200 games were not needed")


@pytest.fixture(scope="module")
def match(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp("match") / "m"
    loser = f"openings:loser={sys.executable} {AGENT} --name {{name}} --crash-at 1"
    played = CliRunner().invoke(cli, ["match", "greedy", loser, "--sprt", "--max-games", "200", "--openings",
                                      "balanced", "--seed", "2", "--time", "30", "-j", "2", "--out", str(out)])
    assert played.exit_code == 0, played.output
    return out, played.output.splitlines()


def _bound(out: Path) -> int:
    """The sweep's exact 95% lower bound in Elo: 10 won pairs +140, 11 (a pair in flight at the decision) +160."""
    pairs = len(json.loads((out / "match.json").read_text())["pairs"])
    return {10: 140, 11: 160}[pairs]  # (-400 log10(1/m - 1), m = 0.025**(1/N): test_tournament_stats.py)


def _counted(out: Path) -> tuple[int, int]:
    """Games finished in the database, and games in complete pairs (match.json)."""
    finished = query(out / "tournament.sqlite", "SELECT COUNT(*) AS n FROM games WHERE status = 'finished'")[0]["n"]
    return finished, json.loads((out / "match.json").read_text())["games"]


def test_the_live_lines_say_why_the_test_plays_on_past_its_bound(match: tuple[Path, list[str]]) -> None:
    out, lines = match
    pairs = [line for line in lines if line.startswith("pair ")]
    early = [line for line in pairs if "past the upper bound" in line]
    # Pairs 4 to 9 (LLR 3.76 ... 12.69, all past +2.94): each says the test waits for its tenth pair.
    assert len(early) == 6, pairs
    for left, line in zip(range(6, 0, -1), early):
        assert line.endswith(
            f", past the upper bound already; playing on to the minimum of 10 pairs before deciding ({left} more to play)")
    assert not any("past the" in line for line in pairs[len(early) + 3:])  # from the tenth pair on it decided
    assert lines[-1] == f"greedy is better than loser: it won every game, at least +{_bound(out)} Elo (95 %)"
    data = json.loads((out / "match.json").read_text())
    assert data["stopped"] == "sprt" and data["sprt"]["decision"] == "H1"


def test_status_says_the_match_was_decided_and_the_rest_not_needed(match: tuple[Path, list[str]]) -> None:
    out, _ = match
    status = CliRunner().invoke(cli, ["tournament", "status", str(out / "match.toml")])
    assert status.exit_code == 0, status.output
    first = status.output.splitlines()[0]
    found = DECIDED.search(first)
    finished, _ = _counted(out)
    assert first.startswith("match greedy vs loser: ") and found and int(found.group(2)) == 200 - finished, first
    assert "rounds" not in first and "of 200 games finished" not in first
    # The table's Elo is the match's own over pairs, each side's over the other: no pool rating (1500 +- ...).
    rows = {line.split()[1]: line for line in status.output.splitlines() if line[:3].strip() in ("1", "2")}
    finished, _ = _counted(out)
    assert rows["greedy"].rstrip().endswith(f"at least +{_bound(out)} -")
    assert rows["loser"].rstrip().endswith(f"at most -{_bound(out)} C{finished}")  # (every game a crash of loser's)
    assert "±" not in status.output


def test_the_web_page_of_a_decided_match(match: tuple[Path, list[str]], tmp_path: Path, browser) -> None:  # noqa: F811
    out, lines = match
    finished, _ = _counted(out)
    progress = [line for line in lines if line.startswith("pair ")][-1].split(" | ", 1)[1]
    with serving(tmp_path, str(out / "match.toml"), "--games", str(tmp_path / "web-games")) as (base, _):
        for scripts in (False, True):
            context = browser.new_context(java_script_enabled=scripts, viewport={"width": 1366, "height": 768})
            page = context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(base + "/tournament")
            if scripts:
                page.wait_for_function("() => document.querySelectorAll('#games tr[data-key]').length > 0"
                                       " && document.querySelectorAll('#standings tr[data-agent]').length === 2")
            counts = page.inner_text("#counts")
            found = DECIDED.fullmatch(counts)
            assert found and int(found.group(2)) == 200 - finished, counts
            # Only the games played: none of the 180-odd the test never needed is listed as "scheduled".
            statuses = page.locator("#games tr[data-key]").evaluate_all("(rows) => rows.map((r) => r.dataset.status)")
            assert statuses == ["finished"] * finished, statuses
            assert page.inner_text("#match-verdict") == lines[-1]
            assert page.inner_text("#match-progress") == progress
            # The Elo column shows the match's own estimate, each side's over the other.
            elo = {row.split("\t")[1].strip(): row.split("\t")[6].strip()
                   for row in page.locator("#standings tr[data-agent]").all_inner_texts()}
            assert elo == {"greedy": f"at least +{_bound(out)}", "loser": f"at most -{_bound(out)}"}, elo
            assert f"Elo at least +{_bound(out)}" in progress
            # The agent's page lists its games played only, and says its Elo.
            page.goto(base + "/tournament/agents/loser")
            if scripts:
                page.wait_for_function("() => document.querySelectorAll('#games tr').length > 1")
                assert f"Elo at most -{_bound(out)}" in page.inner_text("#summary")
                assert page.locator("#games tr").count() == 1 + finished
            context.close()


def test_the_report_of_a_decided_match(match: tuple[Path, list[str]], tmp_path: Path, browser) -> None:  # noqa: F811
    out, lines = match
    finished, _ = _counted(out)
    report = CliRunner().invoke(cli, ["tournament", "report", str(out / "match.toml"), "-o", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(WAIT_MS)
    page.goto((tmp_path / "r" / "index.html").as_uri() + "#selftest=:0")
    page.wait_for_function("() => document.getElementById('selftest').textContent !== ''")
    shown = json.loads(page.locator("#selftest").text_content() or "{}")
    assert shown["errors"] == []
    found = DECIDED.search(shown["subtitle"])
    assert found and int(found.group(2)) == 200 - finished, shown["subtitle"]
    assert "games per pairing" not in shown["subtitle"] and "rounds" not in shown["subtitle"]
    assert "SPRT elo0=0 elo1=10 alpha=0.05 beta=0.05, normalized, at most 200 games" in shown["subtitle"]
    assert shown["matchVerdict"] == lines[-1] and not shown["ratingsShown"]
    assert sorted(shown["eloCells"]) == [["greedy", f"at least +{_bound(out)}", ""], ["loser", f"at most -{_bound(out)}", ""]]
    assert shown["gamesCount"] == f"showing {finished} of {finished} games"
    page.close()
