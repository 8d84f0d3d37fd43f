"""A version's card as its student reads it (issue 37): the compiler's words first and the referee's lines after,
no path of the server's, an empty section said so, a hint that names the right folder, and an upload whose command
names a file it lacks refused at once.  Real sandboxed builds and checks, through the admission itself."""

from __future__ import annotations

import json
import re

import pytest
from web_helpers import browser  # noqa: F401 - a fixture

from othello_arena.classroom.admission import admit, public_version, record_card, submit
from othello_arena.classroom.cards import hide_paths, split_build_log
from othello_arena.classroom.store import VersionStatus
from othello_arena.classroom.submit import card_lines
from othello_arena.classroom.uploads import UploadRefused
from othello_arena.referee.hints import HOME_HERE, HOME_ON_SERVER, hints

BAD_C = b"int main(void) { return undefined_thing; }\n"
SILENT_QUITTER = b"import sys\nsys.exit(3)\n"  # exits at once without a word: every game fails, stderr empty
SAYS_WHERE = b"import sys\nprint('running from', __file__, file=sys.stderr)\nsys.exit(3)\n"


def test_the_referee_lines_of_a_build_log_come_apart_and_show_no_path_of_the_server() -> None:
    log = ("[referee: the build's environment: HOME=/srv/class/builds/bob/ab12]\n"
           "[referee: the build's environment: PATH=/home/prof/.cargo/bin:/opt/jdk/bin:/usr/bin:/bin]\n"
           "[referee: left out: PATH folder /home/prof/bin (not a folder this user can read)]\n"
           "agent.c:1:25: error: 'x' undeclared\n"
           "[referee: a line the build printed itself stays in its output]\n")
    environment, output = split_build_log(log)
    assert len(environment) == 3 and output.startswith("agent.c:1:25: error:")
    assert output.endswith("stays in its output]")
    shown = [hide_paths(line) for line in environment]
    assert shown[1] == "[referee: the build's environment: PATH=…:…:/usr/bin:/bin]"
    assert not any("/srv" in line or "/home" in line or "/opt" in line for line in shown), shown
    assert split_build_log("") == ((), "") and split_build_log("gcc: ok") == ((), "gcc: ok")


def test_a_failed_build_shows_the_compilers_error_first_and_the_referees_lines_after_without_paths(class_store) -> None:
    settings, store = class_store(["bob"], ["greedy"])
    version, _ = submit(settings, store, "bob", [("agent.c", BAD_C)], "./agent {name}", "gcc -o agent agent.c")
    card = admit(settings, version)
    record_card(settings, store, card)
    assert card.status is VersionStatus.REJECTED and card.number == 1
    assert re.match(r"agent\.c:.*\n.*error: .undefined_thing. undeclared", card.build_log), card.build_log
    assert "[referee:" not in card.build_log
    assert card.build_environment and all(line.startswith("[referee: ") for line in card.build_environment)
    assert "[referee: the build's environment: HOME={home}]" in card.build_environment
    folder, real = str(settings.folder), str(settings.folder.resolve())
    # the whole log stays for the instructor, the referee's lines and the class folder's path in it
    full = (settings.folder / "cards" / "bob" / f"{version.fingerprint}.build.log").read_text()
    assert full.startswith("[referee: the build's environment:") and (real in full or folder in full)
    # what the student reads, on the web (the API's card) and in the terminal: no path of the server's
    stored = store.version(version.id)
    assert stored is not None
    data = public_version(stored)
    text = "\n".join(card_lines(data))
    assert folder not in str(data) and real not in str(data) and "/root" not in text
    lines = card_lines(data)
    error = next(i for i, line in enumerate(lines) if "error:" in line)
    first_referee = next(i for i, line in enumerate(lines) if "[referee:" in line)
    assert lines[0].startswith("version 1 (") and 0 < error < first_referee, text
    assert lines[first_referee - 1] == "the referee's lines: the environment the build ran in"
    assert "\n\n\n" not in text  # no section printed empty


def test_an_empty_stderr_says_nothing_rather_than_six_blank_lines_and_a_stderr_names_home_not_the_server(
        class_store) -> None:
    settings, store = class_store(["alice", "bob"], ["greedy"])
    version, _ = submit(settings, store, "alice", [("agent.py", SILENT_QUITTER)], "python3 agent.py {name}", "")
    card = admit(settings, version)
    assert card.status is VersionStatus.REJECTED and card.check  # the check ran, every game kept
    assert card.stderr == ""  # six games' empty logs are no output
    record_card(settings, store, card)
    stored = store.version(version.id)
    assert stored is not None
    lines = card_lines(public_version(stored))
    assert "your program's stderr in the check: (nothing)" in lines
    assert "\n\n\n" not in "\n".join(lines) and lines[-1] != ""
    # a program that prints its own path: the card says {home}, as its command line calls the folder
    version, _ = submit(settings, store, "bob", [("agent.py", SAYS_WHERE)], "python3 agent.py {name}", "")
    card = admit(settings, version)
    assert "running from {home}/agent.py" in card.stderr, card.stderr
    assert str(settings.folder) not in card.stderr and str(settings.folder.resolve()) not in card.stderr
    assert "\n\n" not in card.stderr  # one game's lines after another's, no blank line between


def test_a_card_kept_before_reads_as_todays_the_referees_lines_apart_and_no_path_of_the_server(class_store) -> None:
    """A class.sqlite of last week: its cards' build logs start with the referee's lines and name the instructor's
    folders; read now, they show what a card made today shows."""
    import sqlite3

    settings, store = class_store(["bob"], ["greedy"])
    version, _ = submit(settings, store, "bob", [("agent.c", BAD_C)], "./agent {name}", "gcc -o agent agent.c")
    home = f"{settings.folder}/builds/bob/{version.fingerprint}"
    old = {"student": "bob", "version": version.id, "fingerprint": version.fingerprint, "status": "rejected",
           "reason": "the build failed (exit 1)", "build_status": "failed", "check": [], "items": [],
           "build_log": f"[referee: the build's environment: HOME={home}]\n"
                        "[referee: the build's environment: PATH=/home/prof/.cargo/bin:/usr/bin]\n"
                        "agent.c:1:25: error: 'undefined_thing' undeclared",
           "stderr": f"python3: can't open file '{home}/agent.py'"}
    db = sqlite3.connect(settings.database)
    db.execute("UPDATE versions SET status = 'rejected', card = ? WHERE id = ?", (json.dumps(old), version.id))
    db.commit()
    db.close()
    stored = store.version(version.id)
    assert stored is not None and stored.card is not None
    card = stored.card
    assert card.build_log == "agent.c:1:25: error: 'undefined_thing' undeclared"
    assert card.build_environment == ("[referee: the build's environment: HOME=…]",
                                      "[referee: the build's environment: PATH=…:/usr/bin]")
    assert card.stderr == "python3: can't open file '…'" and (card.number, card.version) == (1, version.id)
    assert str(settings.folder) not in json.dumps(public_version(stored))


@pytest.mark.parametrize("files, command, build, named", [
    ([("other.py", b"")], "python3 {home}/agent.py {name}", "", "agent.py"),
    ([("agent.c", BAD_C)], "./a.out {name}", "", "a.out"),
    ([("x.py", b"")], "openings:python3 agent.py {name}", "", "agent.py"),
    ([("x.awk", b"")], "awk -f agent.awk -- {name}", "", "agent.awk"),
    ([("lib/a.py", b"")], "python3 {home}/lib/b.py {name}", "", "lib/b.py"),
    ([("agent.c", BAD_C)], "{home}/agent {name}", "", "agent"),
])
def test_an_upload_whose_command_names_a_file_it_lacks_is_refused_at_once(class_store, files, command, build,
                                                                          named) -> None:
    settings, store = class_store(["alice"], ["greedy"])
    with pytest.raises(UploadRefused) as refused:
        submit(settings, store, "alice", files, command, build)
    assert f" {named}, which is not among the files sent" in str(refused.value)
    assert store.versions("alice") == []  # nothing stored


@pytest.mark.parametrize("files, command, build", [
    ([("agent.py", b"")], "python3 {home}/agent.py {name}", ""),
    ([("agent.py", b"")], "python3 ./agent.py {name}", ""),
    ([("pkg/__main__.py", b"")], "python3 pkg {name}", ""),  # a folder Python runs
    ([("lib/a.py", b"")], "python3 -u {home}/lib/a.py {name}", ""),
    ([("Starter.java", b"")], "java -cp {home} Starter {name}", "javac Starter.java"),  # a class, not a file
    ([("agent.c", BAD_C)], "./agent {name}", "gcc -o agent agent.c"),  # the build may make it: never refused
    ([("agent.py", b"")], "python3 {home}/made_by_build.py {name}", "cp agent.py made_by_build.py"),
    ([("a.py", b"")], "python3 -m a {name}", ""),  # a module: not a file name
    ([("agent.py", b"")], "python3 agent.py {name} --book {home}/book.txt", ""),  # it may look and do without
    ([("Main.java", b"")], "java -cp {home}/classes Main {name}", ""),  # (what the JVM does with it: not ours)
])
def test_an_upload_whose_files_may_be_there_is_never_refused_for_them(class_store, files, command, build) -> None:
    settings, store = class_store(["alice"], ["greedy"])
    version, new = submit(settings, store, "alice", files, command, build)
    assert new and version.status is VersionStatus.CHECKING


def test_the_java_hint_says_what_home_is_where_it_is_read() -> None:
    lost = "Error: Could not find or load main class Starter\nCaused by: java.lang.ClassNotFoundException: Starter\n"
    (here,) = hints(lost, exit_code=1, moves_made=0)
    (there,) = hints(lost, exit_code=1, moves_made=0, home=HOME_ON_SERVER)
    assert f"({{home}} is {HOME_HERE})" in here and "the folder you ran othello in" in here
    assert f"({{home}} is {HOME_ON_SERVER})" in there and "ran othello in" not in there


@pytest.mark.slow
def test_a_java_version_without_its_class_path_gets_the_servers_hint(class_store) -> None:
    """Built on the server and run without ``-cp {home}``: the JVM looks in the game folder; the card's hint names
    the submission's folder, not 'the folder you ran othello in' (the student ran nothing on the server)."""
    source = ("public class Starter { public static void main(String[] args) { } }\n").encode()
    settings, store = class_store(["alice"], ["greedy"])
    version, _ = submit(settings, store, "alice", [("Starter.java", source)], "java Starter {name}",
                        "javac Starter.java")
    card = admit(settings, version)
    text = "\n".join(card.check)
    assert card.status is VersionStatus.REJECTED and "Could not find or load main class" in text, text
    assert f"use `java -cp {{home}} CLASS` ({{home}} is {HOME_ON_SERVER})" in text
    assert HOME_HERE not in text


FAILING_BUILD = "echo 'agent.c:1:25: error: undefined_thing undeclared' >&2; exit 1"  # quick, as a compiler says it


@pytest.mark.slow
def test_numbers_per_student_over_http_in_the_pages_and_on_the_command_line(tmp_path) -> None:
    """A real class: versions sent in turns are each student's 1, 2 in the API's answers, the pages and the command
    line; the card's compiler error comes before the referee's lines, folded, with no path of the server's."""
    import subprocess
    import sys

    from test_classroom_server import call, make_class, send_files, serving, version_status, wait_for

    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob"], [])  # no reference: the ladder plans nothing
    with serving(folder, "-j", "1") as server:
        base = server.base
        sent = []
        for who in ("alice", "bob"):
            status, version = send_files(base, tokens[who], [("agent.c", BAD_C + f"// {who}\n".encode())],
                                         "./agent {name}", FAILING_BUILD)
            assert status == 201, version
            sent.append((who, version["version"], version["id"]))
        assert sent == [("alice", 1, 1), ("bob", 1, 2)]
        # alice's second from the command line: "version 2" (the class's third), its card as a terminal shows it
        cli = subprocess.run([sys.executable, "-m", "othello_arena", "class", "submit", base, "--token", tokens["alice"],
                              "--command", "./agent {name}", "--build", "gcc -o agent agent.c", "--wait",
                              "--timeout", "240", str(_write(tmp_path / "alice2" / "agent.c", BAD_C))],
                             capture_output=True, text=True, timeout=280)
        out = cli.stdout
        assert cli.returncode == 1 and "  version 2  checking" in out and "\nversion 2 (" in out, out + cli.stderr
        assert out.index("error: ") < out.index("[referee: the build's environment"), out
        assert str(folder) not in out and str(folder.resolve()) not in out
        refused = send_files(base, tokens["alice"], [("other.py", b"")], "python3 {home}/agent.py {name}")
        assert refused[0] == 400 and "agent.py, which is not among the files sent" in refused[1]["error"]
        wait_for(lambda: version_status(base, tokens["alice"], 1), 240, "alice's first card")
        me = json.loads(call(base, "/api/me", tokens["alice"])[1])
        assert [(v["version"], v["id"], v["status"]) for v in me["versions"]] == [(1, 1, "rejected"), (2, 3, "rejected")]
        status, body, _ = call(base, "/", tokens["alice"])
        text = body.decode()
        assert status == 200 and "<b>version 2</b>" in text and "<b>version 1</b>" in text and "version 3" not in text
        assert str(folder) not in text and str(folder.resolve()) not in text
        card = text[text.index('id="version-3"'):text.index('id="version-1"')]  # her second, the class's third
        assert card.index("error: ") < card.index('<details class="build-environment">') < card.index("[referee: ")


@pytest.mark.slow
def test_the_upload_form_says_when_its_version_is_rejected(tmp_path, browser) -> None:  # noqa: F811
    """Sent from the page and rejected by its build: the form said "is being built and checked" for ever; now it
    says the version was rejected and why, and the card is there, the compiler's words first."""
    from test_classroom_server import make_class, serving

    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice"], [])
    with serving(folder, "-j", "1") as server:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(240_000)
        tab = context.new_page()
        tab.goto(f"{server.base}/?token={tokens['alice']}")
        tab.fill("#paste_name", "agent.c")
        tab.fill("#paste", BAD_C.decode())
        tab.fill("#command", "./agent {name}")
        tab.fill("#build", FAILING_BUILD)
        tab.click("#send-button")
        tab.wait_for_selector("#send-result[data-status=rejected]", state="attached")  # (first checking; emptied)
        said = tab.locator("#send-error").inner_text()
        assert said.startswith("Version 1 was rejected: the build failed"), said
        assert "being built and checked" not in tab.locator("#send").inner_text()
        shown = tab.locator("#versions details.version").first
        assert shown.get_attribute("data-status") == "rejected" and shown.evaluate("d => d.open")
        assert shown.locator("pre.build-log").inner_text().startswith("agent.c:1:25: error:")
        assert not shown.locator("details.build-environment").evaluate("d => d.open")  # folded
        # sent again: the same program, already rejected; the form says so rather than "being built"
        tab.click("#send-button")
        tab.wait_for_selector("#send-result:has-text('it was rejected, as its card says')")
        context.close()


def _write(path, data: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
