"""Take the screenshots of ``othello class serve`` in docs/INSTRUCTORS.md: a student's page, a rejected card, the dashboard.

    python docs/screenshots/make_class_screenshots.py    # writes docs/screenshots/class-*.png

It makes a class of four in a temporary folder (``othello class init``),
serves it, sends four versions as the tests do (alice: the Python starter;
bob: C that does not compile; carol: alice's files; dave: ``greedy.c`` with
its build line), waits for the cards and a few ladder games, and
photographs the pages in Debian's chromium.  Needs bubblewrap, gcc,
chromium and the ``test`` extra (Playwright).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from playwright.sync_api import sync_playwright  # noqa: E402

from test_classroom_pages import ALICE_COMMAND, BOB_BUILD, BOB_C, EXAMPLES, alice_files  # noqa: E402
from test_classroom_server import get_json, make_class, send_files, serving, version_status, wait_for  # noqa: E402
from web_helpers import CHROMIUM  # noqa: E402

SIZE = {"width": 1400, "height": 1000}
GAMES = 12  # finished ladder games before the photographs


def shoot(page, name: str, full_page: bool = False) -> None:
    page.wait_for_timeout(400)
    page.screenshot(path=str(HERE / f"{name}.png"), full_page=full_page)
    print(f"wrote {HERE / name}.png")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="othello-class-screens-") as temp:
        root = Path(temp)
        folder = root / "cs101"
        tokens = make_class(folder, ["alice", "bob", "carol", "dave"], ["random", "greedy", "paper-easy"], time=0.25,
                            pairs_per_opponent=1)
        files = [(path.name, path.read_bytes()) for path in alice_files(root / "alice")]
        with serving(folder, "-j", "1") as server:
            base = server.base
            sent = {
                "alice": send_files(base, tokens["alice"], files, ALICE_COMMAND)[1],
                "bob": send_files(base, tokens["bob"], [("agent.c", BOB_C.encode())], "./agent {name}", BOB_BUILD)[1],
                "carol": send_files(base, tokens["carol"], files, ALICE_COMMAND)[1],
                "dave": send_files(base, tokens["dave"], [("greedy.c", (EXAMPLES / "greedy.c").read_bytes())],
                                   "openings:./greedy {name}", "gcc -O2 -o greedy greedy.c")[1],
            }
            for who, version in sent.items():
                wait_for(lambda: version_status(base, tokens[who], version["version"]), 600, f"{who}'s card")
            wait_for(lambda: len(finished_games(base, tokens["instructor"])) >= GAMES, 900, "ladder games")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                for who, name in (("alice", "class-student"), ("bob", "class-rejected"), ("instructor", "class-instructor")):
                    context = browser.new_context(viewport=SIZE)
                    page = context.new_page()
                    page.goto(f"{base}/?token={tokens[who]}")
                    if who == "bob":
                        page.locator("#versions").scroll_into_view_if_needed()
                    if who == "instructor":
                        page.click("#student-bob > summary")
                        page.click(f"#version-{sent['bob']['version']} > summary")
                        shoot(page, name, full_page=True)
                    else:
                        shoot(page, name)
                    context.close()
                context = browser.new_context(viewport=SIZE)
                page = context.new_page()
                page.goto(f"{base}/?token={tokens['bob']}")
                page.goto(base + "/standings")
                shoot(page, "class-standings")
                browser.close()
        time.sleep(0.5)


def finished_games(base: str, token: str) -> list[object]:
    """The finished ladder games (the instructor's class view)."""
    return [g for g in get_json(base, "/api/class", token)["games"] if g["status"] == "finished"]


if __name__ == "__main__":
    main()
