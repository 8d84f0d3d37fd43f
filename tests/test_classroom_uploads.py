"""A submission from hostile input: names normalised, links and devices refused, caps, nothing written outside."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

from othello_arena.classroom.uploads import (Limits, UploadRefused, collect, parse_command, store_version, unzip)
from othello_arena.referee.fingerprint import fingerprint

LIMITS = Limits(total_bytes=10_000, files=5, file_bytes=4_000, depth=3)


def zipped(*entries: tuple[str, bytes], mode: int = 0o100644) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            archive.writestr(info, data)
    return buffer.getvalue()


@pytest.mark.parametrize("name, why", [
    ("../evil.py", "'..'"),
    ("a/../../evil.py", "'..'"),
    ("/etc/passwd", "absolute"),
    ("a\\b.py", "backslash"),
    ("a/b/c/d/e.py", "folders deep"),
    ("bad\x01name", "control"),
    ("agent\x1b]0;pwned\x07.py", "control"),  # a terminal escape: sets the title of the window that shows it
    ("agent\x7f.py", "control"),  # DEL
    ("agent\x9b2J.py", "control"),  # C1: CSI, the one-byte start of a terminal escape
    ("agent\u202eyp.c", "bidi"),  # shown as agentc.py
    ("x\u2066.py", "bidi"),  # an isolate
])
def test_bad_names_are_refused_with_a_reason(name: str, why: str) -> None:
    with pytest.raises(UploadRefused, match=why):
        collect([(name, b"x")], LIMITS)
    with pytest.raises(UploadRefused, match=why):
        unzip(zipped((name, b"x")), LIMITS)


@pytest.mark.parametrize("name", ["agent\ud800.py", "\udcff"])
def test_a_name_that_is_not_text_is_refused(name: str) -> None:
    with pytest.raises(UploadRefused, match="not text") as refused:
        collect([(name, b"x")], LIMITS)
    str(refused.value).encode("utf-8")  # the reason itself can be sent


@pytest.mark.parametrize("command, build, why", [
    ("python3 agent.py \ud800", "", "command .*not text"),
    ("python3 agent.py", "gcc \udc80", "build line .*not text"),
    ("python3 agent.py \x1b[2J", "", "command .*control"),
    ("python3 agent.py\tx", "", "control"),
    ("python3 agent.py \u202e", "", "bidi"),
    ("python3 agent.py", "make \x9b", "build line .*control"),
])
def test_command_and_build_lines_that_are_not_plain_text_are_refused(command: str, build: str, why: str) -> None:
    with pytest.raises(UploadRefused, match=why) as refused:
        parse_command(command, build)
    str(refused.value).encode("utf-8")


def test_names_in_other_scripts_are_text() -> None:
    files = collect([("agent_é.py", b"x"), ("программа/ход.py", b"y"), ("عامل.py", b"z")], LIMITS)
    assert set(files) == {"agent_é.py", "программа/ход.py", "عامل.py"}


def test_links_devices_and_duplicates_in_a_zip_are_refused() -> None:
    with pytest.raises(UploadRefused, match="symbolic link"):
        unzip(zipped(("link", b"/etc/passwd"), mode=0o120777), LIMITS)
    with pytest.raises(UploadRefused, match="device"):
        unzip(zipped(("dev", b""), mode=0o020644), LIMITS)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.py", "1")
        with pytest.warns(UserWarning):
            archive.writestr("a.py", "2")
    with pytest.raises(UploadRefused, match="twice"):
        unzip(buffer.getvalue(), LIMITS)
    with pytest.raises(UploadRefused, match="same name"):
        unzip(zipped(("A.py", b"1"), ("a.py", b"2")), LIMITS)  # the same file on a case-insensitive disk
    with pytest.raises(UploadRefused, match="same name"):
        unzip(zipped(("x//a.py", b"1"), ("x/a.py", b"2")), LIMITS)  # the same once normalised
    with pytest.raises(UploadRefused, match="folder and a file"):
        unzip(zipped(("a", b"1"), ("a/b.py", b"2")), LIMITS)


def test_caps_hold_whatever_a_zip_claims() -> None:
    with pytest.raises(UploadRefused, match="for one file"):
        unzip(zipped(("big.bin", b"\0" * 5_000)), LIMITS)
    with pytest.raises(UploadRefused, match="more than 5 files"):
        collect([(f"f{i}.py", b"x") for i in range(6)], LIMITS)
    with pytest.raises(UploadRefused, match="bytes in all"):
        collect([(f"f{i}.py", b"x" * 3_900) for i in range(3)], LIMITS)
    with pytest.raises(UploadRefused, match="not a readable zip"):
        collect([("agent.zip", b"PK\x03\x04 not really")], LIMITS)


def test_a_zipped_folder_becomes_its_contents() -> None:
    files = collect([("mine.zip", zipped(("agent/agent.py", b"print()"), ("agent/lib/util.py", b"")))], LIMITS)
    assert sorted(files) == ["agent.py", "lib/util.py"]


def test_the_command_names_only_the_submission(tmp_path: Path) -> None:
    assert parse_command("openings:python3 agent.py {name}", "") == ("python3 agent.py {name}", "", True, False)
    assert parse_command("clock:openings:./agent {name}", "") == ("./agent {name}", "", True, True)
    assert parse_command("openings: clock:./agent {name}", "") == ("./agent {name}", "", True, True)
    for bad in ("python3 ../bob/agent.py", "/bin/sh -c x", "python3 ~/x.py", ""):
        with pytest.raises(UploadRefused):
            parse_command(bad, "")


def test_a_version_is_written_in_one_step_read_only_and_content_addressed(tmp_path: Path) -> None:
    files = {"agent.py": b"print(1)\n", "lib/util.py": b"x = 1\n"}
    print_, folder = store_version(tmp_path, "alice", files, "python3 agent.py", "")
    assert folder == tmp_path / "submissions" / "alice" / print_
    assert print_ == fingerprint(folder, "python3 agent.py", "")
    assert (folder / "lib" / "util.py").read_bytes() == b"x = 1\n"
    assert stat.S_IMODE((folder / "agent.py").stat().st_mode) == 0o444
    assert stat.S_IMODE(folder.stat().st_mode) == 0o555
    again, same = store_version(tmp_path, "alice", files, "python3 agent.py", "")
    assert (again, same) == (print_, folder)
    assert not any((tmp_path / "submissions" / ".incoming").iterdir())  # nothing half-written is left
    everything = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert all(path == "submissions" or path.startswith("submissions/") for path in everything)
