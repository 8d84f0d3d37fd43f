"""The class server's pages, as its people see them: a real `othello class serve`, real HTTP, a real browser.

The fast test reads the pages over HTTP on a class whose versions and games
are written into its database (who sees what, the forms without
JavaScript); the slow one is the week in a browser: real submissions (a
good Python agent, a C file that does not compile, the same files sent by
a second student from the page's upload form), the cards, the ladder's
games, their replay, and nobody's stderr or code on another student's page.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from test_classroom_server import add_finished_game, call, make_class, send_files, serving, version_status, wait_for
from web_helpers import browser  # noqa: F401 - a fixture

EXAMPLES = Path(__file__).resolve().parent.parent / "agents" / "examples"
WAIT_MS = 600_000  # a page's condition may wait for a check and the ladder on a shared machine

# What must never reach another student's page: words in alice's stderr and in her code.
ALICE_STDERR = "alice-private-stderr"
ALICE_CODE = "alice-private-code"
ALICE_AGENT = f'''"""{ALICE_CODE}: the starter at a fixed depth, saying so on stderr."""
import os
import runpy
import sys

sys.stderr.write("{ALICE_STDERR}: thinking at depth 2\\n")
sys.stderr.flush()
sys.argv = ["starter.py", *sys.argv[1:], "--depth", "2"]
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "starter.py"), run_name="__main__")
'''
ALICE_COMMAND = "openings:python3 agent.py {name}"
BOB_C = "int main(void) { return missing_function(; }\n"  # the compiler says: expected expression
BOB_BUILD = "gcc -O2 -o agent agent.c"


def alice_files(folder: Path) -> list[Path]:
    """alice's program as files on disk (carol uploads the very same ones from the page)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.py").write_text(ALICE_AGENT, encoding="utf-8")
    (folder / "starter.py").write_bytes((EXAMPLES / "starter.py").read_bytes())
    return [folder / "agent.py", folder / "starter.py"]


def add_version(folder: Path, student: str, status: str, card: dict[str, Any], game: int = 0) -> int:
    """A version already decided, as the admission worker would have kept it; ``game``: one it played."""
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        version = db.execute(
            "INSERT INTO versions (student, fingerprint, command, build, files, bytes, submitted_at, status, reason, "
            "card, decided_at) VALUES (?, ?, './agent {name}', ?, '[[\"agent.c\", 40]]', 40, "
            "'2026-01-01T00:00:00+00:00', ?, ?, ?, '2026-01-01T00:00:10+00:00')",
            (student, f"{student}-fingerprint", BOB_BUILD, status, card.get("reason", ""), json.dumps(card))).lastrowid
        for colour in ("white", "black"):
            db.execute(f"UPDATE games SET {colour}_version = ? WHERE id = ? AND {colour} = ?", (version, game, student))
        db.commit()
        return int(version or 0)
    finally:
        db.close()


def page(base: str, path: str, token: str | None = None) -> tuple[int, str]:
    status, body, _ = call(base, path, token)
    return status, body.decode("utf-8")


def test_each_page_shows_a_person_what_the_api_lets_them_read(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob"], [])  # no reference agent: the ladder plans nothing here
    game = add_finished_game(folder, "alice", "bob", f"{ALICE_STDERR} in game", "bob-private-stderr in game")
    add_version(folder, "alice", "admitted", {"status": "admitted", "reason": "", "check": [], "items": [],
                                              "stderr": ""}, game)
    add_version(folder, "bob", "rejected", {"status": "rejected", "reason": "the build failed (exit 1)",
                                            "build_log": "agent.c:1: error: bob-private-build-log", "check": [],
                                            "items": [], "stderr": ""}, game)
    with serving(folder, "-j", "1") as server:
        base = server.base
        # without a token: how to sign in, and nothing of the class
        for path in ("/", "/standings", f"/games/{game}"):
            status, text = page(base, path)
            assert status == 401 and "?token=" in text and "alice" not in text and "bob" not in text, path
        assert page(base, f"/final/results/report/index.html")[0] == 401
        status, text = page(base, "/?token=not-a-token")
        assert status == 401 and 'id="signin-error"' in text and "not one of this class" in text

        # alice: her page names her stderr in the game, never bob's; bob's card is not hers
        status, text = page(base, "/", tokens["alice"])
        assert status == 200 and "Send a version" in text
        assert f"/api/games/{game}/log/alice" in text and f"/api/games/{game}/log/bob" not in text
        assert "bob-private" not in text and ALICE_STDERR not in text  # her stderr is a link, not on the page
        # her game as she played it: White, against bob, won (bob crashed); her version admitted
        assert re.search(rf'data-game="{game}" data-status="finished">\s*<td><a href="/games/{game}">{game}</a></td>'
                         r'<td>bob</td>\s*<td>White <span class="muted">v\d+</span></td>\s*'
                         r'<td class="outcome won">won \(1-0\)</td>', text), text
        assert 'data-status="admitted"' in text and 'id="rank"' in text
        # bob: his card with the compiler's words; nothing of alice's
        status, text = page(base, "/", tokens["bob"])
        assert status == 200 and "bob-private-build-log" in text and "the build failed (exit 1)" in text
        assert 'data-card="rejected"' in text and 'class="badge rejected"' in text
        assert re.search(r'<td class="outcome lost">lost \(1-0\)</td>', text)
        assert "alice-private" not in text and f"/log/alice" not in text
        # the game: its replay for everybody; the stderr links only to whom they belong
        status, text = page(base, f"/games/{game}", tokens["bob"])
        assert status == 200 and f"/api/games/{game}/log/bob" in text and f"/api/games/{game}/log/alice" not in text
        assert "alice-private" not in text and "bob-private" not in text
        status, view, _ = call(base, f"/games/{game}/view", tokens["bob"])
        assert status == 200 and "private" not in view.decode() and json.loads(view)["result"]["reason"] == "crash"
        status, text = page(base, f"/games/{game}", tokens["instructor"])
        assert f"/log/alice" in text and f"/log/bob" in text
        assert page(base, "/games/999999", tokens["alice"])[0] == 404
        # the instructor: the dashboard, every card and every log; the grade sheet and the final linked
        status, text = page(base, "/", tokens["instructor"])
        assert status == 200 and "bob-private-build-log" in text and 'href="/api/export.csv"' in text
        assert f"/api/games/{game}/log/alice" in text and f"/api/games/{game}/log/bob" in text
        assert 'action="/final"' in text
        assert re.search(r'<p id="ladder-state" data-refresh>The ladder: <b>(playing|idle|waiting): [^<]+</b></p>', text)
        assert '<tr data-student="alice" data-status="admitted">' in text and 'class="badge rejected"' in text
        assert re.search(rf'<tr data-version="\d+"><td><a href="#version-\d+">\d+</a></td>', text)
        # the standings: for anybody signed in, no duplicates named, nobody's output
        for who in ("alice", "bob", "instructor"):
            status, text = page(base, "/standings", tokens[who])
            assert status == 200 and "private" not in text and "standings-table" in text
        # the final's files: the instructor's alone
        assert page(base, "/final/results/report/index.html", tokens["alice"])[0] == 403
        assert page(base, "/final/results/report/index.html", tokens["instructor"])[0] == 404  # no final yet

        # the upload form without JavaScript: refused with the reason on the page, or sent and shown
        from othello_arena.classroom.submit import multipart

        origin = {"Origin": base}
        body, kind = multipart({"command": "python3 agent.py {name}", "paste_name": "../agent.py",
                                "paste": "print('hello')\n"}, [])
        status, answer, _ = call(base, "/submit", tokens["alice"], body, kind, origin)
        assert status == 400 and "would leave the submission folder" in answer.decode() and "Send a version" in answer.decode()
        body, kind = multipart({"command": "python3 agent.py {name}", "paste_name": "agent.py",
                                "paste": "print('hello')\n"}, [])
        status, _, headers = call(base, "/submit", tokens["alice"], body, kind, origin)
        assert status == 303 and re.fullmatch(r"/#version-\d+", headers["location"])
        version = int(headers["location"].rsplit("-", 1)[1])
        status, text = page(base, "/", tokens["alice"])
        assert f'id="version-{version}"' in text and f"/api/versions/{version}/files/agent.py" in text
        assert f'id="version-{version}"' not in page(base, "/", tokens["bob"])[1]
        # a form posted to the class from another site: refused (the cookie alone is not enough)
        status, _, _ = call(base, "/submit", headers={"Origin": "http://evil.example", "Cookie": f"othello_class_token={tokens['bob']}",
                                                       "Content-Type": kind}, body=body)
        assert status == 403


@pytest.mark.slow
def test_a_week_in_the_browser(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob", "carol"], ["random"], time=0.25, pairs_per_opponent=1)
    files = alice_files(tmp_path / "alice")
    with serving(folder, "-j", "1") as server:
        base = server.base
        status, alice = send_files(base, tokens["alice"], [(p.name, p.read_bytes()) for p in files], ALICE_COMMAND)
        assert status == 201, alice
        status, bob = send_files(base, tokens["bob"], [("agent.c", BOB_C.encode())], "./agent {name}", BOB_BUILD)
        assert status == 201, bob

        def signed_in(who: str) -> Any:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.set_default_timeout(WAIT_MS)
            tab = context.new_page()
            tab.goto(f"{base}/?token={tokens[who]}")  # the link sets the cookie and leaves the address bar
            assert tab.url == base + "/"
            return tab

        # carol, in her browser: a starter fills the form; then she uploads alice's files as her own
        carol = signed_in("carol")
        carol.select_option("#starter", label="python")
        carol.wait_for_function("() => document.querySelector('#paste').value.includes('def negamax')")
        assert "starter.py" in carol.input_value("#command") and carol.input_value("#paste_name") == "starter.py"
        carol.fill("#paste", "")
        carol.fill("#paste_name", "")
        carol.set_input_files("#files", [str(path) for path in files])
        carol.fill("#command", ALICE_COMMAND)
        carol.fill("#build", "")
        carol.click("#send-button")
        carol.wait_for_selector("#send-result:has-text('is being built and checked')")
        carol.wait_for_selector("#versions details[data-status=admitted] .card[data-card=admitted]")  # refreshed by itself
        assert carol.locator("#versions details[data-version]").count() == 1

        # bob: the rejected card with the compiler's error
        bob_tab = signed_in("bob")
        wait_for(lambda: version_status(base, tokens["bob"], bob["id"]), 300, "bob's card")
        bob_tab.reload()
        card = bob_tab.locator(f"#version-{bob['id']}")
        assert card.get_attribute("data-status") == "rejected"
        assert "the build failed" in card.inner_text()
        build_log = card.locator("pre.build-log").inner_text()
        assert "missing_function" in build_log and "error" in build_log

        # alice: the admitted card, then her games, their replay and her own stderr
        alice_tab = signed_in("alice")
        alice_tab.wait_for_selector(f"#version-{alice['id']}[data-status=admitted] .card[data-card=admitted]")
        row = alice_tab.wait_for_selector("#my-games tr[data-status=finished]")
        game = int(row.get_attribute("data-game") or 0)
        log = alice_tab.context.request.get(f"{base}/api/games/{game}/log/alice")
        assert log.status == 200 and ALICE_STDERR in log.text()
        alice_tab.click(f"#my-games tr[data-game='{game}'] a[href='/games/{game}']")
        alice_tab.wait_for_selector(f"a.log[href='/api/games/{game}/log/alice']")
        moves = alice_tab.locator("#moves tr").count()
        assert moves > 20 and alice_tab.locator("#ply").inner_text() == f"{moves} / {moves}"
        at_end = alice_tab.locator(".board .disc").count()
        alice_tab.click("#first")  # the replay at the start (the opening's position: the ladder plays openings)
        # (the first paint is the server's, at the end: the page's script takes over when the record arrives)
        alice_tab.wait_for_function(f"() => document.querySelector('#ply').textContent === '0 / {moves}'")
        assert 4 <= alice_tab.locator(".board .disc").count() < at_end

        # bob sees alice's games and their replay, never her stderr or her code
        bob_tab.goto(base + "/")
        bob_tab.wait_for_selector(f"#class-games tr[data-game='{game}']")
        for path in ("/", f"/games/{game}", "/standings"):
            bob_tab.goto(base + path)
            html = bob_tab.content()
            raw = bob_tab.context.request.get(base + path).text()
            for text in (html, raw):
                assert ALICE_STDERR not in text and ALICE_CODE not in text, path
        assert bob_tab.locator("a.log").count() == 0  # the game page links no stderr of alice's for bob
        assert bob_tab.context.request.get(f"{base}/api/games/{game}/log/alice").status == 403
        assert bob_tab.context.request.get(f"{base}/api/versions/{alice['id']}/files/agent.py").status == 404  # as for no version at all
        bob_tab.goto(base + "/standings")
        assert bob_tab.locator("#standings-table tr[data-student=alice] td").first.inner_text().strip() in ("1", "2")

        # the instructor: every student, the rejected version and why, the duplicate named, every log
        teacher = signed_in("instructor")
        teacher.wait_for_selector("#duplicates li[data-student=carol] .dup:has-text('alice')")
        for student, status in (("alice", "admitted"), ("bob", "rejected"), ("carol", "admitted")):
            assert teacher.locator(f"#students-table tr[data-student={student}]").get_attribute("data-status") == status
        teacher.click("#student-bob > summary")
        teacher.click(f"#version-{bob['id']} > summary")
        assert "missing_function" in teacher.locator(f"#student-bob #version-{bob['id']}").inner_text()
        assert teacher.locator(f"#all-games a[href='/api/games/{game}/log/alice']").count() == 1
        assert ALICE_STDERR in teacher.context.request.get(f"{base}/api/games/{game}/log/alice").text()
        sheet = teacher.context.request.get(base + teacher.get_attribute("#grade-sheet", "href"))
        assert sheet.status == 200 and sheet.body().startswith("\ufeffid,name,version,fingerprint".encode("utf-8"))  # a BOM: spreadsheets read UTF-8

        # the final from its button: alice's and carol's versions in the tournament runner, its report for her alone
        teacher.click("#final-button")
        teacher.wait_for_selector("#final-exit")
        assert "exit status 0" in teacher.inner_text("#final-exit")
        report = teacher.get_attribute("#final-report", "href")
        answer = teacher.context.request.get(base + report)
        assert answer.status == 200 and "alice" in answer.text() and "carol" in answer.text()
        assert alice_tab.context.request.get(base + report).status == 403
