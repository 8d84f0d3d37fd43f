"""Playing in a real browser: a person clicks through a whole game against a real agent, passes included.

The person is a ``manual:`` player of the real referee (the server writes
their NAME.out); the opponent is the built-in ``beginner`` (the first legal
square scanning A1, A2, ... H8), which is deterministic, so the game below is
the same every time.  It was found by playing random moves for Black against
``beginner`` and keeping the game where Black had to pass most for the fewest
clicks: Black passes nine times and is wiped out, 36-0.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from othello_arena.protocol import BLACK, WHITE, Board, GameRecord, parse_move
from web_helpers import WAIT_MS, browser, raw_get, serving, token_of  # noqa: F401 - browser is a fixture

pytestmark = pytest.mark.slow

# The whole game, White (beginner) first; Black's moves are the person's clicks ("P": the Pass button).
GAME = ("(W C 4) (B C 5) (W B 6) (B B 5) (W A 6) (B F 3) (W C 6) (B B 4) (W A 3) (B B 7) (W B 8) (B A 4) "
        "(W A 5) (B A 7) (W A 8) (B P) (W B 3) (B A 2) (W A 1) (B P) (W B 2) (B B 1) (W C 1) (B P) (W C 2) "
        "(B P) (W C 3) (B P) (W C 7) (B D 3) (W E 2) (B D 1) (W D 6) (B P) (W E 1) (B P) (W E 3) (B P) "
        "(W E 6) (B P) (W G 2)")
MOVES = [parse_move(line) for line in re.findall(r"\([^)]*\)", GAME)]


def cells_after(moves: list) -> str:
    board = Board()
    for move in moves:
        board = board.play(move)
    return "".join("W" if board.at(sq) is WHITE else "B" if board.at(sq) is BLACK else "." for sq in range(64))


def test_the_game_is_what_the_docstring_says() -> None:
    board = Board()
    for move in MOVES:
        board = board.play(move)
    outcome = board.outcome()
    assert outcome is not None and (outcome.white_discs, outcome.black_discs) == (36, 0)
    assert sum(1 for move in MOVES if move.colour is BLACK and move.is_pass) == 9


def test_a_person_plays_a_whole_game_by_clicking_with_forced_passes(tmp_path: Path, browser) -> None:  # noqa: F811
    with serving(tmp_path, "--games", str(tmp_path / "games")) as (base, lines):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/play?token=" + token_of(lines))
        page.fill("#name", "me")
        page.fill("#opponent", "beginner")
        page.select_option("#colour", "B")
        page.fill("#time_per_move", "30")  # the agent's: a slow move under load must not end the game
        page.click("#start")
        page.wait_for_url("**/games/*")
        status = page.locator("#status")

        # A move the rules refuse is not a lost game for a person: the referee says why and asks again.
        page.wait_for_selector("#status[data-state=your-turn]")
        answer = page.evaluate("""async () => {
            const r = await fetch(location.pathname.replace('/games/', '/api/games/') + '/move', {method: 'POST',
                headers: {'Content-Type': 'application/json'}, body: JSON.stringify({colour: 'B', square: 0})});
            return r.status; }""")
        assert answer == 200  # written: the referee, not the server, judges it
        page.wait_for_selector("#retry:has-text('illegal')")
        assert "A1" in page.inner_text("#retry")

        for number, move in enumerate(MOVES, start=1):
            if move.colour is WHITE:
                continue
            page.wait_for_selector(f"#moves tr[data-ply='{number - 1}']" if number > 1 else "#moves")
            page.wait_for_selector("#status[data-state=your-turn]")
            assert page.locator("#moves tr").count() == number - 1
            # What the board shows is the position the rules give.
            assert page.get_attribute(".board", "data-cells") == cells_after(MOVES[: number - 1])
            if move.is_pass:
                assert page.locator(".sq.legal").count() == 0
                assert page.is_visible("#pass"), f"no Pass button at move {number}"
                assert "must pass" in status.inner_text()
                page.click("#pass")
            else:
                assert not page.is_visible("#pass")
                square = page.locator(f".sq[data-square='{move.line()[3]}{move.line()[5]}']")
                assert "legal" in (square.get_attribute("class") or "")
                square.click()
            page.wait_for_selector(f"#moves tr[data-ply='{number}']")
            # The last move and its flips are marked.
            if not move.is_pass:
                assert page.locator(".sq.last").count() == 1
                assert page.locator(".sq.flip").count() >= 1

        page.wait_for_selector("#status[data-state=over]")
        assert "White wins 36-0" in status.inner_text()
        assert page.inner_text("#player-W .count") == "36" and page.inner_text("#player-B .count") == "0"

        with page.expect_download() as download:
            page.click("#download-json")
        record = GameRecord.from_json(Path(download.value.path()).read_text(encoding="utf-8"))
        assert [entry.move for entry in record.moves] == MOVES
        assert (record.white, record.black) == ("beginner", "me")
        assert record.extra["agents"]["me"]["kind"] == "manual"
        assert record.extra["agents"]["me"]["retries"] == 1
        with page.expect_download() as download:
            page.click("#download-ggf")
        ggf = Path(download.value.path()).read_text(encoding="utf-8")
        assert ggf.startswith("(;GM[Othello]") and "RE[" in ggf

        # The game is kept where the server was told, with the agent's own files.
        directories = list((tmp_path / "games").iterdir())
        assert len(directories) == 1
        assert json.loads((directories[0] / "game.json").read_text())["result"]["reason"] == "normal"
        page.close()


# Each change of the status line, with whether this page's move was still on its way to the server then.
RECORD_STATUS = """() => {
  window.statuses = [];
  window.moveInFlight = false;
  const send = window.fetch;
  window.fetch = async (...args) => {
    const move = String(args[0]).endsWith('/move');
    if (move) window.moveInFlight = true;
    try { return await send(...args); } finally { if (move) window.moveInFlight = false; }
  };
  const status = document.getElementById('status');
  new MutationObserver(() => window.statuses.push([status.dataset.state, window.moveInFlight,
                                                  document.querySelectorAll('#moves tr').length]))
    .observe(status, {attributes: true, childList: true, characterData: true, subtree: true});
}"""


def test_the_board_takes_no_click_while_the_last_move_is_on_its_way(tmp_path: Path, browser) -> None:  # noqa: F811
    # Seen in CI under load: the agent's answer reached the page before the answer to the person's own POST,
    # the board showed the person's turn, and the click made then was dropped (the page was still "busy"):
    # the game waited for ever.  Here the browser holds the POST's answer until the agent has answered.
    with serving(tmp_path, "--games", str(tmp_path / "games")) as (base, lines):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/play?token=" + token_of(lines))
        page.fill("#name", "me")
        page.fill("#opponent", "beginner")
        page.select_option("#colour", "B")
        page.fill("#time_per_move", "30")
        page.click("#start")
        page.wait_for_url("**/games/*")
        api = page.url.removeprefix(base).replace("/games/", "/api/games/")

        def hold_until_the_agent_answered(route) -> None:
            answer = route.fetch()  # the server has the move
            cookie = route.request.headers.get("cookie", "")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # the server has the agent's answer too (ply 3)
                status, body = raw_get(base, api, {"Cookie": cookie})
                if status == 200 and len(json.loads(body)["plies"]) > 3:
                    break
                time.sleep(0.05)
            time.sleep(2)  # for the page to draw it
            route.fulfill(response=answer)

        page.wait_for_selector("#status[data-state=your-turn]")
        page.evaluate(RECORD_STATUS)
        page.route("**/move", hold_until_the_agent_answered)
        page.click(".sq[data-square='C5']")
        page.wait_for_selector("#moves tr[data-ply='3']")
        page.wait_for_function("!window.moveInFlight")
        page.unroute("**/move")
        statuses = page.evaluate("window.statuses")
        if not any(in_flight and rows >= 3 for _, in_flight, rows in statuses):
            pytest.skip("the page drew the agent's answer only after the move's own answer came: "
                        "the machine is too loaded to tell")
        assert not any(state == "your-turn" and in_flight for state, in_flight, _ in statuses), statuses
        # Once the answer is in, the board takes the click (B5, as in the game above).
        page.wait_for_selector("#status[data-state=your-turn]")
        page.click(".sq[data-square='B5']")
        page.wait_for_selector("#moves tr[data-ply='4']")
        page.close()


# -- a 10x10 board (seed 002's sizes) ------------------------------------------------------------

# A whole 10x10 game, White (beginner, scanning A1, A2, ... J10) first; Black's moves are the person's clicks,
# always the last legal square in the board's order (so rows 9 and 10 and columns I and J come up), one pass
# for each side.  Black wins 55-45.
GAME_10 = ("(W D 5) (B D 6) (W C 7) (B C 6) (W B 7) (B B 8) (W A 9) (B B 6) (W A 5) (B C 8) (W D 7) (B E 8) (W B "
           "9) (B C 9) (W B 5) (B A 10) (W B 10) (B C 10) (W D 8) (B A 8) (W D 9) (B E 9) (W D 10) (B E 10) (W F "
           "7) (B F 8) (W F 9) (B F 10) (W P) (B G 9) (W G 10) (B H 10) (W H 9) (B I 9) (W J 9) (B J 8) (W J 7) "
           "(B I 8) (W H 7) (B H 8) (W G 8) (B I 7) (W H 6) (B G 7) (W I 10) (B J 10) (W G 6) (B E 7) (W P) (B A "
           "7) (W A 6) (B J 6) (W I 6) (B J 5) (W I 5) (B H 5) (W G 5) (B C 5) (W C 4) (B E 4) (W D 3) (B G 4) "
           "(W D 4) (B F 4) (W E 3) (B H 4) (W G 3) (B B 4) (W A 4) (B A 3) (W B 3) (B C 3) (W A 2) (B F 3) (W B "
           "2) (B H 3) (W C 2) (B E 2) (W D 2) (B F 2) (W E 1) (B F 1) (W G 1) (B G 2) (W H 1) (B H 2) (W D 1) "
           "(B C 1) (W A 1) (B I 1) (W B 1) (B P) (W I 2) (B I 4) (W I 3) (B J 4) (W J 1) (B J 2) (W J 3)")
MOVES_10 = [parse_move(line, 10) for line in re.findall(r"\([^)]*\)", GAME_10)]


def boards_10() -> list[Board]:
    boards = [Board.start(10)]
    for move in MOVES_10:
        boards.append(boards[-1].play(move))
    return boards


def cells_10(board: Board) -> str:
    return "".join("W" if board.at(sq) is WHITE else "B" if board.at(sq) is BLACK else "." for sq in range(100))


def test_the_10x10_game_is_what_its_comment_says() -> None:
    boards = boards_10()
    outcome = boards[-1].outcome()
    assert outcome is not None and (outcome.white_discs, outcome.black_discs) == (45, 55)
    for board, move in zip(boards, MOVES_10):
        if move.colour is BLACK:
            assert move == board.legal_moves()[-1]
    assert {"(B A 10)", "(B J 10)", "(B P)"} <= {move.line() for move in MOVES_10}


def test_a_person_plays_a_whole_10x10_game_by_clicking(tmp_path: Path, browser) -> None:  # noqa: F811
    boards = boards_10()
    with serving(tmp_path, "--games", str(tmp_path / "games")) as (base, lines):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/play?token=" + token_of(lines))
        # An 8x8-only agent on a bigger board is refused on the form, in one sentence.
        page.fill("#opponent", "champion")
        page.select_option("#size", "10")
        page.click("#start")
        page.wait_for_selector("#error:has-text('champion plays only on 8x8')")
        page.fill("#name", "me")
        page.fill("#opponent", "beginner")
        page.select_option("#colour", "B")
        page.fill("#time_per_move", "30")  # the agent's: a slow move under load must not end the game
        page.click("#start")
        page.wait_for_url("**/games/*")
        status = page.locator("#status")

        page.wait_for_selector("#status[data-state=your-turn]")
        # The board is 10x10: 100 squares, columns A-J, rows 1-10.
        assert page.locator(".board .sq").count() == 100
        assert page.inner_text(".files").split() == list("ABCDEFGHIJ")
        assert page.inner_text(".ranks").split()[0] == "10"
        for number, move in enumerate(MOVES_10, start=1):
            if move.colour is WHITE:
                continue
            if number > 1:
                page.wait_for_selector(f"#moves tr[data-ply='{number - 1}']")
            page.wait_for_selector("#status[data-state=your-turn]")
            assert page.get_attribute(".board", "data-cells") == cells_10(boards[number - 1])
            if move.is_pass:
                assert page.locator(".sq.legal").count() == 0
                page.click("#pass")
            else:
                name = boards[number - 1].square_name(move.square or 0)
                legal = [boards[number - 1].square_name(m.square or 0) for m in boards[number - 1].legal_moves()]
                assert sorted(page.locator(".sq.legal").evaluate_all("n => n.map(s => s.dataset.square)")) == sorted(legal)
                page.click(f".sq[data-square='{name}']")
            page.wait_for_selector(f"#moves tr[data-ply='{number}']")

        page.wait_for_selector("#status[data-state=over]")
        assert "0-1 Black wins 45-55" in status.inner_text()  # White's discs first
        with page.expect_download() as download:
            page.click("#download-json")
        record = GameRecord.from_json(Path(download.value.path()).read_text(encoding="utf-8"))
        assert record.size == 10 and [entry.move for entry in record.moves] == MOVES_10
        with page.expect_download() as download:
            page.click("#download-ggf")
        ggf = Path(download.value.path()).read_text(encoding="utf-8")
        assert "BO[10 " in ggf and "W[j10//" in ggf
        page.close()


# -- a fault shown where it happened (issue 26) --------------------------------------------------------

# A program that plays D4 (occupied from the start) at its first move, with a comment, and says so on stderr.
OCCUPIED = ("import os, sys, time\n"
            "name = sys.argv[1]\n"
            "while not os.path.exists(name + '.in'): time.sleep(0.005)\n"
            "os.remove(name + '.in')\n"
            "print('about to play D4', file=sys.stderr, flush=True)\n"
            "open(name + '.tmp', 'w').write('(C depth 3 picks D4)\\n(W D 4)\\n')\n"
            "os.rename(name + '.tmp', name + '.out')\n"
            "time.sleep(30)\n")


def test_the_game_page_shows_the_faults_detail_move_number_and_output(tmp_path: Path, browser) -> None:  # noqa: F811
    (tmp_path / "occ.py").write_text(OCCUPIED)
    with serving(tmp_path, "--games", str(tmp_path / "games")) as (base, lines):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/play?token=" + token_of(lines))
        page.check("input[value=agents]")
        page.fill("#opponent", f"occ={sys.executable} {tmp_path / 'occ.py'} {{name}}")
        page.fill("#second_opponent", "random")
        page.fill("#time_per_move", "30")  # the agent's: a slow move under load must not end the game
        page.click("#start")
        page.wait_for_url("**/games/*")
        page.wait_for_selector("#status[data-state=over]")
        assert "White loses by an illegal move" in page.inner_text("#status")
        page.wait_for_selector("#fault-detail")
        assert page.inner_text("#fault-detail").startswith("At move 1: occ played (W D 4)")
        assert "occupied" in page.inner_text("#fault-detail")
        assert "occ wrote (W D 4)" in page.inner_text("#fault-line")
        assert "(C depth 3 picks D4)" in page.inner_text("#fault-line")
        href = page.locator("#stderr-links a", has_text="occ.stderr.log").get_attribute("href") or ""
        text = page.evaluate("async (href) => (await fetch(href)).text()", href)
        assert "about to play D4" in text
        page.close()
        # The output is its owner's: without the token the server refuses it.
        status, _ = raw_get(base, href)
        assert status == 403


# -- a game clock (PROTOCOL.md section 10) ------------------------------------------------------------


def seconds_shown(text: str) -> float:
    """A clock as the page writes it, ``29.8 s`` or ``1:05``, in seconds."""
    if text.endswith(" s"):
        return float(text[:-2])
    minutes, seconds = text.split(":")
    return int(minutes) * 60 + int(seconds)


def test_under_a_game_clock_the_bank_of_the_side_to_move_ticks_down(tmp_path: Path, browser) -> None:  # noqa: F811
    """A person against beginner under a 30+1 clock from the play page: while the person thinks, the page counts
    their bank down (two readings a second and a half apart); the waiting side's clock stands still at the bank
    the server computed (its view, from the game's log), and does so again after the person's move."""
    with serving(tmp_path, "--games", str(tmp_path / "games")) as (base, lines):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/play?token=" + token_of(lines))
        page.fill("#name", "me")
        page.fill("#opponent", "beginner")
        page.select_option("#colour", "B")
        page.fill("#clock", "30+1")
        page.click("#start")
        page.wait_for_url("**/games/*")
        mine, theirs = page.locator("#player-B .clock"), page.locator("#player-W .clock")

        def server_bank(colour: str) -> float:
            view = json.loads(page.evaluate(
                "async () => (await fetch(location.pathname.replace('/games/', '/api/games/'))).text()"))
            return float(view["banks"][colour])

        for ply in (1, 3):  # the person's first two turns, after each of beginner's moves
            page.wait_for_selector(f"#moves tr[data-ply='{ply - 1}']" if ply > 1 else "#moves")
            page.wait_for_selector("#status[data-state=your-turn]")
            first, waiting = seconds_shown(mine.inner_text()), theirs.inner_text()
            page.wait_for_timeout(1500)
            second = seconds_shown(mine.inner_text())
            assert second < first, (ply, first, second)  # the person's bank ticks down
            assert theirs.inner_text() == waiting == f"{server_bank('W'):.1f} s"  # beginner's stands still
            assert seconds_shown(waiting) > 30.0  # beginner moved at once: its increments
            page.locator(".sq.legal").first.click()
        page.wait_for_selector("#moves tr[data-ply='4']")
        page.close()
