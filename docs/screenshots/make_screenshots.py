"""Take the screenshots of ``othello serve`` in docs/INSTRUCTORS.md: every page, in Debian's chromium.

    python docs/screenshots/make_screenshots.py          # writes docs/screenshots/*.png

It plays a small tournament of the test agents (slowed down, so games are
caught in progress) in a temporary directory, serves it, and photographs
the pages while the tournament runs and after; then it plays a few moves
against ``greedy`` as a person would, and a few on a 10x10 board.  Needs bubblewrap, chromium and the
``test`` extra (Playwright).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from playwright.sync_api import sync_playwright  # noqa: E402

from tournament_helpers import agent, write_tournament  # noqa: E402
from web_helpers import CHROMIUM, serving, token_of  # noqa: E402

SIZE = {"width": 1400, "height": 860}


def shoot(page, name: str, full_page: bool = False) -> None:
    page.wait_for_timeout(400)  # let the last event be drawn
    page.screenshot(path=str(HERE / f"{name}.png"), full_page=full_page)
    print(f"wrote {HERE / name}.png")


def play_10x10(page, base: str) -> None:
    """A few moves as Black against seed 002's normal player on a 10x10 board (PROTOCOL.md section 9)."""
    page.goto(base + "/play")
    page.fill("#name", "me")
    page.fill("#opponent", "paper-normal")
    page.select_option("#colour", "B")
    page.select_option("#size", "10")
    page.click("#start")
    page.wait_for_url("**/games/*")
    for _ in range(6):
        page.wait_for_selector("#status[data-state=your-turn]")
        page.locator(".sq.legal").last.click()
        page.wait_for_timeout(300)
    page.wait_for_selector("#status[data-state=your-turn]")
    shoot(page, "game-10x10")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="othello-screens-") as temp:
        root = Path(temp)
        agents = [agent("alice", "flips", "--delay 0.25"), agent("bob", "first", "--delay 0.2"),
                  agent("carol", "last", "--delay 0.2"), agent("dave", "flips", "--crash-at 5"),
                  "[[agents]]\nname = \"greedy\"\n"]
        path = write_tournament(root, agents, concurrency=2, seed=7, games_per_pairing=2, name="Class of 2026")
        with serving(root, str(path), "--games", str(root / "web-games")) as (base, lines), \
                sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport=SIZE)
            page.set_default_timeout(120_000)
            runner = subprocess.Popen([sys.executable, "-m", "othello_arena", "tournament", "run", str(path), "-q"],
                                      cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True)
            try:
                page.goto(base + "/tournament")
                page.wait_for_function("() => document.querySelectorAll('#games tr[data-status=finished]').length >= 7"
                                       " && document.querySelectorAll('.live-game').length >= 2"
                                       " && [...document.querySelectorAll('.live-game')].every(g => g.dataset.plies > 12)")
                shoot(page, "tournament-live")
                page.click("#projector")  # large print for the back of the room
                shoot(page, "tournament-projector", full_page=True)
                page.click("#projector")
                page.evaluate("localStorage.setItem('othello-theme', 'dark')")
                page.click(".live-game")
                page.wait_for_selector("#moves tr")
                page.wait_for_function("() => document.querySelectorAll('#moves tr').length > 24")
                shoot(page, "tournament-game-dark")
                page.evaluate("localStorage.setItem('othello-theme', 'light')")
                runner.wait(timeout=600)
            finally:
                if runner.poll() is None:
                    os.killpg(runner.pid, signal.SIGINT)
                    runner.wait()
            page.goto(base + "/tournament")
            page.wait_for_selector("#live-none:visible")
            shoot(page, "tournament-final")
            page.goto(base + "/tournament/agents/dave")
            page.wait_for_selector(".forfeit")
            shoot(page, "agent")

            page.goto(base + "/play?token=" + token_of(lines))  # remembered by a cookie from here on
            page.fill("#name", "me")
            page.fill("#opponent", "greedy")
            page.select_option("#colour", "W")
            shoot(page, "play")
            page.click("#start")
            page.wait_for_url("**/games/*")
            for square in ("D3", "F5", "E6"):
                page.wait_for_selector("#status[data-state=your-turn]")
                legal = page.locator(".sq.legal")
                target = page.locator(f".sq.legal[data-square={square}]")
                (target if target.count() else legal.first).click()
                page.wait_for_timeout(300)
            page.wait_for_selector("#status[data-state=your-turn]")
            shoot(page, "game")
            play_10x10(page, base)
            page.goto(base + "/")
            shoot(page, "home")
            browser.close()
        time.sleep(0.5)


if __name__ == "__main__":
    main()
