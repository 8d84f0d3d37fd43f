"""The class's copies (classroom/copies.py): every admitted version against every other student's, once per change.

Real source files in a real class folder and database; the comparison is
:mod:`classroom.similarity`'s (tested there), this is what the class makes of it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from test_classroom_pages import add_version
from test_classroom_similarity import MOBILITY, MOBILITY_RENAMED, PARITY, STARTER

from othello_arena.classroom import copies
from othello_arena.classroom.copies import Copies, boilerplate, copies_now, copies_of, copy_pairs, side_by_side
from othello_arena.classroom.service import class_json, class_view
from othello_arena.classroom.similarity import method_of, pack_hashes
from othello_arena.classroom.store import STARTERS_PRINTS


def send(folder: Path, student: str, files: dict[str, str], status: str = "admitted") -> int:
    """A version of ``student`` with these files as sent (the database row as the admission worker leaves it)."""
    version = add_version(folder, student, status, {"status": status})
    target = folder / "submissions" / student / f"{student}-fingerprint"
    target.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (target / name).write_text(text, encoding="utf-8")
    return version


def test_the_class_copies_name_each_pair_of_students_once_and_are_computed_once_per_change(class_store) -> None:
    settings, store = class_store(["alice", "bob", "carol", "dave", "eve"], [])
    folder = settings.folder
    alice = send(folder, "alice", {"agent.py": STARTER + MOBILITY})
    bob = send(folder, "bob", {"my_player.py": STARTER + MOBILITY_RENAMED})  # renamed, names and comments changed
    send(folder, "carol", {"agent.py": STARTER + PARITY})
    send(folder, "dave", {"starter.py": STARTER})  # the starter as it is: never a copy
    pairs = copy_pairs(settings, store)
    assert [(p.a, p.a_version, p.b, p.b_version) for p in pairs] == [("alice", alice, "bob", bob)]
    assert pairs[0].similarity > 0.8
    # each student's first version: numbered per student (1), whatever the class's ids
    assert pairs[0].words().startswith(f"{pairs[0].a_in_b:.0%} of alice's code (version 1) is in bob's (version 1)")
    assert copies_of(pairs, "bob") == list(pairs) and copies_of(pairs, "carol") == []
    assert copy_pairs(settings, store) is pairs  # nothing changed: the kept answer, no comparison made

    # a version that is not admitted is not compared; once admitted, the class is compared again
    eve = send(folder, "eve", {"agent.py": STARTER + MOBILITY}, status="rejected")
    assert copy_pairs(settings, store) is pairs
    store.db.execute("UPDATE versions SET status = 'admitted' WHERE id = ?", (eve,))
    again = copy_pairs(settings, store)
    assert again is not pairs
    assert {(p.a, p.b) for p in again} == {("alice", "bob"), ("alice", "eve"), ("bob", "eve")}

    # side by side: alice's file beside bob's, the shared code marked, what they wrote escaped
    files = side_by_side(settings, store, alice, bob)
    assert [(f.a_name, f.b_name) for f in files] == [("agent.py", "my_player.py")]
    assert "<mark>" in files[0].a_html and "<mark>" in files[0].b_html


def restart() -> None:
    """What a server's restart forgets of the copies: everything kept in memory (the database stays)."""
    copies._caches.clear()


def comparisons_done() -> None:
    """Wait for the comparisons started in threads of their own (copies_now) to end."""
    for thread in threading.enumerate():
        if thread.name == "copies":
            thread.join()


def test_the_fingerprints_are_kept_in_the_class_database_and_read_after_a_restart(class_store) -> None:
    """Issue 38: each version's fingerprints lived in memory only, so every start fingerprinted every admitted
    version again (300: 40-108 s before the first dashboard); now they are kept by version fingerprint."""
    settings, store = class_store(["alice", "bob", "carol"], [])
    folder = settings.folder
    send(folder, "alice", {"agent.py": STARTER + MOBILITY})
    send(folder, "bob", {"my_player.py": STARTER + MOBILITY_RENAMED})
    send(folder, "carol", {"agent.py": STARTER + PARITY})
    restart()
    computed = copy_pairs(settings, store)
    assert [(p.a, p.b) for p in computed] == [("alice", "bob")]
    method = method_of(boilerplate())
    kept = store.copy_prints(method)
    assert set(kept) == {"alice-fingerprint", "bob-fingerprint", "carol-fingerprint", STARTERS_PRINTS}

    # after a restart the kept fingerprints are read, not computed again: the same pairs...
    restart()
    again = copy_pairs(settings, store)
    assert again == computed and again is not computed
    # ...and what is read is the database's: carol's kept fingerprints made alice's, the comparison says so
    store.keep_copy_prints(method, {"carol-fingerprint": kept["alice-fingerprint"]})
    restart()
    assert {(p.a, p.b) for p in copy_pairs(settings, store)} == {("alice", "bob"), ("alice", "carol"), ("bob", "carol")}

    # fingerprints are kept for one method at a time (the starters or the tool changed: the others are forgotten)
    store.keep_copy_prints("another method", {"alice-fingerprint": pack_hashes({1, 2, 3})})
    assert store.copy_prints(method) == {} and set(store.copy_prints("another method")) == {"alice-fingerprint"}
    restart()
    assert copy_pairs(settings, store) == computed  # computed again from the files, and kept again
    assert store.copy_prints("another method") == {} and store.copy_prints(method) == kept


def test_the_dashboard_never_waits_for_the_comparison_and_says_it_runs(class_store) -> None:
    """The dashboard's view of the copies (copies_now) answers at once: the last pairs, and whether the admitted
    versions are being compared; once compared it gives what the waiting read (copy_pairs) gives."""
    settings, store = class_store(["alice", "bob", "carol"], [])
    folder = settings.folder
    send(folder, "alice", {"agent.py": STARTER + MOBILITY})
    send(folder, "bob", {"my_player.py": STARTER + MOBILITY_RENAMED})
    restart()
    first = copies_now(settings, store)
    assert first == Copies((), pending=True, compared=False)  # nothing compared yet since the start: said so
    comparisons_done()
    done = copies_now(settings, store)
    assert not done.pending and done.compared and done.pairs == copy_pairs(settings, store)
    assert [(p.a, p.b) for p in done.pairs] == [("alice", "bob")]

    # a version admitted since: the pairs before, said to be of the versions before, until compared again
    send(folder, "carol", {"agent.py": STARTER + MOBILITY})
    stale = copies_now(settings, store)
    assert stale.pending and stale.compared and stale.pairs == done.pairs
    comparisons_done()
    fresh = copies_now(settings, store)
    assert not fresh.pending and fresh.pairs == copy_pairs(settings, store)
    assert {(p.a, p.b) for p in fresh.pairs} == {("alice", "bob"), ("alice", "carol"), ("bob", "carol")}
    view = class_json(class_view(settings, store, fresh=False))  # the dashboard's: the same pairs, none pending
    assert view["copies_pending"] is False and [(p["a"], p["b"]) for p in view["copies"]] == [
        (p.a, p.b) for p in fresh.pairs]


def test_the_dashboard_says_the_versions_are_being_compared_then_shows_the_pairs(class_store) -> None:
    from othello_arena.classroom.app import ClassApi
    from othello_arena.classroom.pages import ClassPages

    settings, store = class_store(["alice", "bob"], [])
    send(settings.folder, "alice", {"agent.py": STARTER + MOBILITY})
    send(settings.folder, "bob", {"my_player.py": STARTER + MOBILITY_RENAMED})
    pages = ClassPages(ClassApi(settings, store, lambda: None))

    def dashboard() -> str:
        data = class_view(settings, store, fresh=False)
        return pages.templates.env.get_template("dashboard.html").render(
            class_name="class", person="instructor", instructor=True, data=data, final=pages.api.final.state(),
            verdict_error="", copy_threshold=0.6, versions_html=pages.versions_html(data))

    restart()
    first = dashboard()  # the comparison starts now, in a thread of its own: the page does not wait for it
    assert "being compared (since the server started)" in first and "/copies/" not in first
    assert "of either's code beyond" not in first  # (it cannot say none share code before it has compared)
    comparisons_done()
    done = dashboard()
    assert "being compared" not in done and "/copies/" in done and "alice</b> and <b>bob" in done
