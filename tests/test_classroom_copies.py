"""The class's copies (classroom/copies.py): every admitted version against every other student's, once per change.

Real source files in a real class folder and database; the comparison is
:mod:`classroom.similarity`'s (tested there), this is what the class makes of it.
"""

from __future__ import annotations

from pathlib import Path

from test_classroom_pages import add_version
from test_classroom_similarity import MOBILITY, MOBILITY_RENAMED, PARITY, STARTER

from othello_arena.classroom.copies import copies_of, copy_pairs, side_by_side


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
