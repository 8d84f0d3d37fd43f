"""The instructor's hand on a verdict, and builds that leave junk (issues 35 and 36).

Real parts throughout: the store's migration on a real class.sqlite, the
admission worker building in the sandbox, a real `othello class serve` over
HTTP, the real `othello class admit|reject|recheck` beside it, the
dashboard's form in a real browser.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from classroom_helpers import make_class
from test_classroom_pages import add_version, page
from test_classroom_server import call, get_json, run_cli, serving, wait_for
from web_helpers import browser  # noqa: F401 - a fixture

from othello_arena.classroom.admission import AdmissionWorker, OverQuota, submit
from othello_arena.classroom.store import SCHEMA_VERSION, ClassStore, GameStatus, VerdictAction, VersionStatus

WAIT_MS = 120_000


def add_queued_game(folder: Path, white: str, white_version: int, black: str) -> int:
    """A game planned for ``white``'s version against a reference, not started (as the ladder queues one)."""
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        pair = db.execute("INSERT INTO pairs (a, a_version, b, kind, created_at) VALUES (?, ?, ?, 'climb', "
                          "'2026-01-01T00:00:00+00:00')", (white, white_version, black)).lastrowid
        game = db.execute("INSERT INTO games (pair, game_index, white, white_version, white_fp, black, black_fp, seed, "
                          "status, created_at) VALUES (?, 1, ?, ?, 'fp', ?, 'builtin', 1, 'queued', "
                          "'2026-01-01T00:00:00+00:00')", (pair, white, white_version, black)).lastrowid
        db.commit()
        return int(game or 0)
    finally:
        db.close()


def test_a_verdict_by_hand_is_kept_with_its_history_and_stops_the_versions_games(class_store) -> None:
    settings, store = class_store(["alice"], [])
    folder = settings.folder
    version = add_version(folder, "alice", "admitted", {"status": "admitted", "reason": "", "items": []})
    (folder / "builds" / "alice" / "alice-fingerprint").mkdir(parents=True)
    game = add_queued_game(folder, "alice", version, "greedy")
    from othello_arena.classroom.admission import instructor_verdict

    rejected = instructor_verdict(settings, store, "alice", version, VerdictAction.REJECT, "  copied\nfrom bob ", "me")
    assert rejected.text == "rejected by the instructor: copied from bob" and rejected.was is VersionStatus.ADMITTED
    row = store.version(version)
    assert row is not None and row.status is VersionStatus.REJECTED and row.reason == rejected.text
    voided = store.game(game)
    assert voided is not None and voided.status is GameStatus.VOID
    assert voided.void_reason == "alice's version 1 was rejected by the instructor before this game started"
    admitted = instructor_verdict(settings, store, "alice", version, VerdictAction.ADMIT, "bob copied her", "me")
    assert store.current_versions()[0].id == version  # plays again: its build is there
    assert [(v.action, v.reason, v.was) for v in store.verdicts(version)] == [
        (VerdictAction.REJECT, "copied from bob", VersionStatus.ADMITTED),
        (VerdictAction.ADMIT, "bob copied her", VersionStatus.REJECTED)]  # the history kept, never overwritten
    assert admitted.id > rejected.id
    # re-checked while one of its games is in flight (from its build folder, which the check builds anew):
    # the admission worker leaves it until the game is over
    running = add_queued_game(folder, "alice", version, "greedy")
    store.start_game(running)
    instructor_verdict(settings, store, "alice", version, VerdictAction.RECHECK, "the check was fixed", "me")
    worker = AdmissionWorker(settings, store)
    assert store.next_to_check() is not None and worker.next_to_check() is None
    store.void_game(running, "over")
    found = worker.next_to_check()
    assert found is not None and found.id == version
    assert found.card is not None  # the card stays until the new one comes, and the verdict's row keeps it
    kept = store.db.execute("SELECT card FROM verdicts WHERE action = 'recheck'").fetchone()[0]
    assert json.loads(kept)["status"] == "admitted"
    # the database is the migrated one: a new store sees the same history
    again = ClassStore(settings.database)
    try:
        assert [v.action for v in again.verdicts()] == [VerdictAction.REJECT, VerdictAction.ADMIT,
                                                        VerdictAction.RECHECK]
        assert again.schema_version() == SCHEMA_VERSION == 7
    finally:
        again.close()


def test_a_link_loop_is_a_rejection_a_rejected_build_is_removed_and_a_student_has_a_cap(class_store) -> None:
    """Issue 36: `ln -s loop loop` made the link check raise (a server-fault card, then 500 pages); a failed
    build's folder stayed (1.5 GB of it); nothing capped a student's share of the class folder."""
    settings, store = class_store(["mallory", "bob"], [], max_student_mb=1)
    folder = settings.folder
    looped, _ = submit(settings, store, "mallory", [("agent.py", b"print()\n")], "python3 agent.py {name}",
                       "ln -s loop loop && head -c 300000 /dev/zero > junk")
    worker = AdmissionWorker(settings, store)
    worker.start()
    try:
        row = wait_for(lambda: store.version(looped.id) if store.version(looped.id).status  # type: ignore[union-attr]
                       is not VersionStatus.CHECKING else None, 120, "mallory's card")
    finally:
        worker.stop()
        worker.join(timeout=60)
    assert row.status is VersionStatus.REJECTED
    assert row.reason == ("the build left a link that loops (it leads back to itself, so it cannot be followed): "
                          "loop -> loop")
    assert row.card is not None and row.card.build_status == "ok" and row.card.error == ""
    # the build folder is gone; the card and the build log stay, and the files as sent
    assert not (folder / "builds" / "mallory" / looped.fingerprint).exists()
    assert (folder / "cards" / "mallory" / f"{looped.fingerprint}.json").exists()
    assert (folder / "cards" / "mallory" / f"{looped.fingerprint}.build.log").exists()
    assert (folder / "submissions" / "mallory" / looped.fingerprint / "agent.py").exists()

    # the cap: 1 MB each; bob's 600 KB pass, 600 KB more would not, and the refusal says so
    submit(settings, store, "bob", [("a.py", b"#" * 600_000)], "python3 a.py {name}", "")
    with pytest.raises(OverQuota) as refused:
        submit(settings, store, "bob", [("b.py", b"#" * 600_000)], "python3 b.py {name}", "")
    assert "take 0.6 MB of the 1.0 MB each student may use" in str(refused.value)
    assert "max_student_mb" in str(refused.value)
    submit(settings, store, "mallory", [("c.py", b"#" * 600_000)], "python3 c.py {name}", "")  # her own share


@pytest.mark.slow
def test_the_instructors_hand_over_http_from_the_command_line_and_in_the_browser(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob"], [])
    alice = add_version(folder, "alice", "admitted", {"status": "admitted", "reason": ""})
    (folder / "builds" / "alice" / "alice-fingerprint").mkdir(parents=True)
    # bob's cards: one from an older server with no items (a server fault), and one that cannot be read at all
    bob = add_version(folder, "bob", "rejected", {"student": "bob", "status": "rejected",
                                                  "reason": "the server could not check this version (RuntimeError)"})
    db = sqlite3.connect(folder / "class.sqlite")
    db.execute("UPDATE versions SET card = ? WHERE id = ?", (json.dumps({"status": "lost", "items": 3}), bob))
    db.commit()
    db.close()
    (folder / "builds" / "bob" / "bob-fingerprint" / "junk").mkdir(parents=True)  # left by a server before the fix
    with serving(folder, "-j", "1") as server:
        base = server.base
        wait_for(lambda: not (folder / "builds" / "bob").exists() or not any((folder / "builds" / "bob").iterdir()),
                 60, "the rejected version's build removed at start")
        assert (folder / "builds" / "alice" / "alice-fingerprint").is_dir()  # an admitted version's is kept
        # a bad card is an error line: every page answers
        for who in ("instructor", "bob"):
            status, text = page(base, "/", tokens[who])
            assert status == 200 and "this version&#39;s card could not be read" in text, who
        assert get_json(base, "/api/class", tokens["instructor"])["students"][1]["versions"][0]["card"]["error"]

        # the command line beside the running server: refusals name what was wrong (exit 2)
        # VERSION is the student's own number of it: alice's first is 1; bob's first (the class's id 2) is not hers
        assert (alice, bob) == (1, 2)
        for args, said in (((str(folder), "zed", "1", "--reason", "x"), "no student 'zed'"),
                           ((str(folder), "alice", "2", "--reason", "x"),
                            "alice has no such version (their versions: 1)"),
                           ((str(folder), "alice", "1", "--reason", "   "), "give a reason")):
            done = run_cli("admit", *args)
            assert done.returncode == 2 and said in done.stderr, (args, done.stderr)
        assert run_cli("admit", str(folder), "alice", "1").returncode == 2  # --reason is required
        done = run_cli("reject", str(folder), "alice", "1", "--reason", "the same moves as bob's")
        assert done.returncode == 0 and "alice's version 1 is rejected and no longer plays" in done.stdout, \
            done.stderr
        mine = get_json(base, f"/api/versions/{alice}", tokens["alice"])
        assert mine["status"] == "rejected"
        assert mine["reason"] == "rejected by the instructor: the same moves as bob's"
        assert [v["action"] for v in mine["verdicts"]] == ["reject"] and "(command line)" in mine["verdicts"][0]["by"]
        assert (folder / "builds" / "alice" / "alice-fingerprint").is_dir()  # kept: admitted again, it plays at once

        # the API: the instructor's alone, a reason needed, the version named
        def verdict(version: int, token: str, body: dict[str, str]) -> tuple[int, Any]:
            status, data, _ = call(base, f"/api/versions/{version}/verdict", token, json.dumps(body).encode(),
                                   "application/json")
            return status, json.loads(data)

        assert verdict(alice, tokens["alice"], {"action": "admit", "reason": "me"})[0] == 403
        status, data = verdict(alice, tokens["instructor"], {"action": "reject", "reason": ""})
        assert status == 400 and "give a reason" in data["error"]
        status, data = verdict(987654, tokens["instructor"], {"action": "reject", "reason": "x"})
        assert status == 404 and "no version '987654'" in data["error"]
        status, data = verdict(alice, tokens["instructor"], {"action": "expel", "reason": "x"})
        assert status == 400 and "one of admit, reject, recheck" in data["error"]
        status, data = verdict(alice, tokens["instructor"], {"action": "admit", "reason": "passes when it must"})
        assert status == 200 and data["status"] == "admitted" and "is admitted and plays" in data["outcome"]
        assert get_json(base, "/api/me", tokens["alice"])["versions"][0]["status"] == "admitted"
        status, data = verdict(alice, tokens["instructor"], {"action": "reject", "reason": "the same moves after all"})
        assert status == 200 and data["status"] == "rejected" and "no longer plays" in data["outcome"]

        # the dashboard's form, in a browser: admitted again, with the reason on alice's card
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(WAIT_MS)
        teacher = context.new_page()
        teacher.goto(f"{base}/?token={tokens['instructor']}")
        teacher.click("#student-alice > summary")
        teacher.click(f"#student-alice #version-{alice} > summary")
        form = teacher.locator(f"#verdict-{alice}")
        form.locator("select[name=action]").select_option("admit")
        form.locator("input[name=reason]").fill("on appeal: <b>bob</b> copied her")
        form.locator("button[type=submit]").click()
        teacher.wait_for_url(f"{base}/#version-{alice}")
        row = teacher.locator(f"#student-alice tr[data-version='{alice}']")
        assert row.locator(".badge").inner_text() == "admitted"
        assert "admitted by the instructor: on appeal: <b>bob</b> copied her" in row.inner_text()
        history = teacher.locator(f"#student-alice #version-{alice} ul.verdicts li")
        assert [history.nth(i).get_attribute("data-action") for i in range(history.count())] == \
            ["reject", "admit", "reject", "admit"]
        # without a reason the browser will not send the form; sent anyway, the server refuses it on the page
        status, text = page(base, "/", tokens["instructor"])
        status, answer, _ = call(base, f"/versions/{alice}/verdict", tokens["instructor"], b"action=reject&reason=+",
                                 "application/x-www-form-urlencoded", {"Origin": base})
        assert status == 400 and 'id="verdict-error"' in answer.decode() and "give a reason" in answer.decode()
        # a form from another site, riding the cookie: refused
        status, _, _ = call(base, f"/versions/{alice}/verdict", None, b"action=reject&reason=x",
                            "application/x-www-form-urlencoded",
                            {"Origin": "http://evil.example", "Cookie": f"othello_class_token={tokens['instructor']}"})
        assert status == 403
        context.close()
        student = browser.new_context().new_page()
        student.goto(f"{base}/?token={tokens['alice']}")
        card = student.locator(f"#version-{alice}")
        assert card.get_attribute("data-status") == "admitted"
        assert "admitted by the instructor: on appeal: <b>bob</b> copied her" in card.inner_text()
        assert student.locator(".verdict-form").count() == 0  # the form is the instructor's
        assert "Your space on the server: 0.0 MB of 500.0 MB used" in student.inner_text("#space")
        student.context.close()
        assert get_json(base, f"/api/versions/{alice}", tokens["alice"])["status"] == "admitted"


# -- the whole story: real submissions, the ladder, the admission worker, copies ---------------------------

WRAPPER = '''
{comment}
import os
import runpy
import sys

sys.argv = ["starter.py", *sys.argv[1:], "--depth", "2"]
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "starter.py"), run_name="__main__")
'''


def games_of(base: str, token: str) -> list[dict[str, Any]]:
    return list(get_json(base, "/api/class", token)["games"])


@pytest.mark.slow
def test_the_ladder_follows_the_instructors_hand_and_a_renamed_copy_is_named(tmp_path: Path) -> None:
    from test_classroom_server import send_files
    from test_classroom_similarity import MOBILITY, MOBILITY_RENAMED

    examples = Path(__file__).resolve().parent.parent / "agents" / "examples"
    starter = (examples / "starter.py").read_bytes()
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "carol", "dave"], ["random"], time=0.25, pairs_per_opponent=50)
    alice_code = MOBILITY + WRAPPER.format(comment="# alice: the starter at depth 2, my evaluation beside it")
    # carol sends alice's program: the file renamed, every name and comment changed
    carol_code = MOBILITY_RENAMED + WRAPPER.format(comment="# carol's own player (depth two)")
    with serving(folder, "-j", "1") as server:
        base = server.base
        sent = {}
        for who, files, command in (
                ("alice", [("agent.py", alice_code.encode()), ("starter.py", starter)], "openings:python3 agent.py {name}"),
                ("carol", [("player.py", carol_code.encode()), ("starter.py", starter)], "openings:python3 player.py {name}"),
                ("dave", [("starter.py", starter)], "openings:python3 starter.py {name} --depth 1")):
            status, version = send_files(base, tokens[who], files, command)
            assert status == 201, version
            assert version["version"] == 1  # each student's first, whatever the class's ids
            sent[who] = version["id"]  # (the API's URLs take the id)
        for who, version in sent.items():
            card = wait_for(lambda: (lambda v: v if v["status"] != "checking" else None)(
                get_json(base, f"/api/versions/{version}", tokens[who])), 600, f"{who}'s card")
            assert card["status"] == "admitted", card

        # the copy: named on the dashboard with the similarity in words, side by side for the instructor alone.
        # The dashboard never waits for the versions' comparison (it says they are being compared): it shows the
        # pair once the comparison it started is done, with no other change of the class needed.
        status, text = page(base, "/", tokens["instructor"])
        assert status == 200
        if 'data-pair="alice carol"' not in text:
            assert "being compared" in text, text
            text = wait_for(lambda: (lambda t: t if 'data-pair="alice carol"' in t else None)(
                page(base, "/", tokens["instructor"])[1]), 300, "the copies on the dashboard")
        pairs = get_json(base, "/api/class", tokens["instructor"])["copies"]
        assert [(p["a"], p["b"]) for p in pairs] == [("alice", "carol")] and pairs[0]["similarity"] > 0.6
        assert "of alice&#39;s code (version 1) is in carol&#39;s (version 1)" in text
        side = f"/copies/{sent['alice']}/{sent['carol']}"
        assert f'href="{side}"' in text
        status, text = page(base, side, tokens["instructor"])
        assert status == 200 and "<mark>" in text and "player.py" in text and "agent.py" in text
        for who in ("alice", "carol"):
            assert page(base, side, tokens[who])[0] == 403
            assert "data-pair" not in page(base, "/", tokens[who])[1]
            assert "copies" not in get_json(base, "/api/standings", tokens[who])

        # alice plays; rejected by hand from the command line, her version stops at once
        wait_for(lambda: [g for g in games_of(base, tokens["instructor"]) if "alice" in
                          (g["white"], g["black"]) and g["status"] == "finished"], 600, "alice's games")
        done = run_cli("reject", str(folder), "alice", "1", "--reason", "a copy of carol's")
        assert done.returncode == 0 and "no longer plays" in done.stdout, done.stderr
        mark = max(g["id"] for g in games_of(base, tokens["instructor"]))
        # the class plays on (carol and dave), never alice's rejected version
        wait_for(lambda: [g for g in games_of(base, tokens["instructor"]) if g["id"] > mark and g["status"] == "finished"],
                 600, "a game after the rejection")
        later = [g for g in games_of(base, tokens["instructor"]) if g["id"] > mark]
        assert later and not [g for g in later if "alice" in (g["white"], g["black"])]
        assert not [g for g in games_of(base, tokens["instructor"]) if g["status"] == "queued"
                    and "alice" in (g["white"], g["black"])]

        # admitted again over the API: she plays again
        status, answer, _ = call(base, f"/api/versions/{sent['alice']}/verdict", tokens["instructor"],
                                 json.dumps({"action": "admit", "reason": "carol copied her"}).encode(),
                                 "application/json")
        assert status == 200 and "is admitted and plays" in json.loads(answer)["outcome"]
        mark = max(g["id"] for g in games_of(base, tokens["instructor"]))
        wait_for(lambda: [g for g in games_of(base, tokens["instructor"]) if g["id"] > mark and g["status"] == "finished"
                          and "alice" in (g["white"], g["black"])], 600, "alice playing again")

        # re-checked from the command line: the admission worker takes it and a new card comes
        done = run_cli("recheck", str(folder), "alice", "1", "--reason", "the check was updated")
        assert done.returncode == 0 and "waits for the admission worker" in done.stdout, done.stderr
        card = wait_for(lambda: (lambda v: v if v["status"] != "checking" else None)(
            get_json(base, f"/api/versions/{sent['alice']}", tokens["alice"])), 600, "alice's new card")
        assert card["status"] == "admitted" and card["card"]["items"], card
        assert [v["action"] for v in card["verdicts"]] == ["reject", "admit", "recheck"]
        status, text = page(base, "/", tokens["alice"])
        assert "rejected by the instructor: a copy of carol&#39;s" in text and "admitted by the instructor: carol copied her" in text


def test_a_version_the_check_rejected_is_built_again_when_the_instructor_admits_it(class_store) -> None:
    """Its build folder was removed with the rejection: admitted by hand, the worker builds it again before it plays."""
    from othello_arena.classroom.admission import instructor_verdict

    settings, store = class_store(["alice"], [])
    folder = settings.folder
    version, _ = submit(settings, store, "alice", [("agent.py", b"import sys\nsys.exit(3)\n")],
                        "python3 built.py {name}", "cp agent.py built.py")
    built = folder / "builds" / "alice" / version.fingerprint

    def decided() -> Any:
        row = store.version(version.id)
        return row if row is not None and row.status is not VersionStatus.CHECKING else None

    worker = AdmissionWorker(settings, store)
    worker.start()
    try:
        rejected = wait_for(decided, 300, "the check's card")
        assert rejected.status is VersionStatus.REJECTED and rejected.reason.startswith("the check failed")
        assert not built.exists()
        verdict = instructor_verdict(settings, store, "alice", version.id, VerdictAction.ADMIT, "I read it", "me")
        row = store.version(version.id)
        assert row is not None and row.status is VersionStatus.CHECKING and row.reason.endswith("being built again first")
        assert store.current_versions() == []  # it plays only once built
        worker.wake.set()
        admitted = wait_for(decided, 300, "the build made again")
    finally:
        worker.stop()
        worker.join(timeout=60)
    assert admitted.status is VersionStatus.ADMITTED and admitted.reason == verdict.text
    assert (built / "built.py").exists() and store.current_versions()[0].id == version.id
    # the card keeps the check's evidence the instructor overruled, and the new build's log
    assert admitted.card is not None and admitted.card.check == rejected.card.check and admitted.card.build_status == "ok"
