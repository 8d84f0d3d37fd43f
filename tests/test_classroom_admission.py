"""Admission without the server: a real sandboxed build, and what a hostile or broken build gets on its card."""

from __future__ import annotations

from othello_arena.classroom.admission import admit, submit
from othello_arena.classroom.store import VersionStatus


def test_a_build_that_links_out_of_its_folder_is_rejected_and_a_failed_build_shows_the_compiler(class_store) -> None:
    settings, store = class_store(["mallory", "bob"], ["greedy"])
    folder = settings.folder
    # mallory's build plants a link to bob's submissions, which the referee would show her program
    version, _ = submit(settings, store, "mallory", [("agent.py", b"print()\n")], "python3 peek/agent.py",
                        f"ln -s {folder / 'submissions' / 'bob'} peek")
    card = admit(settings, version)
    assert card.status is VersionStatus.REJECTED and "a link out of the submission's folder: peek ->" in card.reason
    assert card.check == ()  # never run
    version, _ = submit(settings, store, "bob", [("agent.c", b"int main(void) { return nope; }\n")],
                        "./agent {name}", "gcc -o agent agent.c")
    card = admit(settings, version)
    assert card.status is VersionStatus.REJECTED and card.reason.startswith("the build failed")
    assert "nope" in card.build_log and "error" in card.build_log and card.build_status == "failed"
    assert (folder / "submissions" / "bob" / version.fingerprint / "agent.c").exists()
    assert not (folder / "submissions" / "bob" / version.fingerprint / "agent").exists()  # built elsewhere
