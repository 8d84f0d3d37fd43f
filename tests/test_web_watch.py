"""Watching in a real browser: two agents' game move by move to its end, and two people on one board."""

from __future__ import annotations

from pathlib import Path

import pytest

from othello_arena.protocol import BLACK, WHITE, GameRecord
from web_helpers import WAIT_MS, browser, serving, token_of  # noqa: F401 - browser is a fixture

pytestmark = pytest.mark.slow

# Every position the board shows is recorded, in order, as the page draws it.
RECORD_BOARDS = """() => {
  window.shownBoards = [];
  new MutationObserver(() => {
    const board = document.querySelector('#board .board');
    if (board && window.shownBoards[window.shownBoards.length - 1] !== board.dataset.cells)
      window.shownBoards.push(board.dataset.cells);
  }).observe(document.getElementById('board'), {childList: true, subtree: true});
}"""


def drawn(board) -> str:
    return "".join("W" if board.at(sq) is WHITE else "B" if board.at(sq) is BLACK else "." for sq in range(64))


def test_a_game_between_two_agents_is_watched_to_its_end(tmp_path: Path, browser) -> None:  # noqa: F811
    with serving(tmp_path, "--games", str(tmp_path / "games")) as (base, lines):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/play?token=" + token_of(lines))
        page.check("input[name=mode][value=agents]")
        assert not page.is_visible("#colour")  # no colour to choose when no person plays
        page.fill("#opponent", "greedy")
        page.fill("#second_opponent", "beginner")
        page.fill("#time_per_move", "5")
        # Two instant agents play a game in a second or two: with the pause it can be followed, even on a
        # machine so loaded that the page comes up well into the game (seen: first drawn at move 30).
        page.fill("#move_pause", "0.25")
        page.click("#start")
        page.wait_for_url("**/games/*")
        page.evaluate(RECORD_BOARDS)
        page.wait_for_selector("#status[data-state=over]")
        assert page.locator("#pass").is_hidden()
        assert page.locator(".sq.clickable").count() == 0  # nobody may click for an agent

        with page.expect_download() as download:
            page.click("#download-json")
        record = GameRecord.from_json(Path(download.value.path()).read_text(encoding="utf-8"))
        assert (record.white, record.black) == ("greedy", "beginner")
        assert record.result is not None and record.result.termination == "normal"
        positions = [drawn(board) for board, _ in record.positions()]
        # The page shows the end position, every move in its list, and the result.
        assert page.get_attribute(".board", "data-cells") == positions[-1]
        assert page.locator("#moves tr").count() == len(record.moves)
        assert f"{record.result.white_discs}-{record.result.black_discs}" in page.inner_text("#status")
        # Move by move: it drew positions of the game before the last, in the order played.
        shown = page.evaluate("window.shownBoards")
        indices = [positions.index(cells) for cells in shown]
        assert indices == sorted(indices), "the page went back in the game while following it"
        assert len([i for i in indices if i < len(positions) - 1]) >= 2, f"only saw positions {indices}"

        # Every finished game replays: back to the start, then one move forward.
        page.click("#first")
        assert page.get_attribute(".board", "data-cells") == positions[0]
        page.click("#next")
        assert page.get_attribute(".board", "data-cells") == positions[1]
        page.close()


def test_two_people_share_one_board(tmp_path: Path, browser) -> None:  # noqa: F811
    with serving(tmp_path, "--games", str(tmp_path / "games")) as (base, lines):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/play?token=" + token_of(lines))
        page.check("input[name=mode][value=people]")
        page.fill("#name", "ann")
        page.fill("#second_name", "bob")
        page.click("#start")
        page.wait_for_url("**/games/*")
        # White (ann) then Black (bob), each by clicking on the same page.
        for number, square in enumerate(("D3", "C5", "F6"), start=1):
            page.wait_for_selector("#status[data-state=your-turn]")
            page.click(f".sq[data-square={square}]")
            page.wait_for_selector(f"#moves tr[data-ply='{number}']")
        assert page.inner_text("#player-W .name") == "ann" and page.inner_text("#player-B .name") == "bob"
        assert [page.inner_text(f"#moves tr[data-ply='{n}'] td:nth-child(2)") for n in (1, 2, 3)] == \
            ["(W D 3)", "(B C 5)", "(W F 6)"]
        page.close()
