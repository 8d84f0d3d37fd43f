"""A submission's files from hostile input: caps, names normalised, links and devices refused; written in one step.

:func:`collect` turns what was uploaded (files with their names, one zip,
or one pasted file) into ``{relative path: bytes}``, refusing with
:class:`UploadRefused` (and a reason a student understands) anything that
could write outside the submission folder or exhaust the server: ``..``,
absolute paths, links, devices, duplicate names or names that collide once
normalised, too many files, too deep, too big (a zip's entries are read
with the cap, whatever their headers claim).  :func:`store_version` writes
them into a fresh folder inside the class folder and renames it into place
as ``submissions/ID/FINGERPRINT`` (read-only): nothing is ever written
anywhere else, and a half-written version never exists under its name.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable, NamedTuple, Optional

from .arena import fingerprint
from .escapes import UNSHOWABLE
from .settings import ClassSettings

COMMAND_LIMIT = 1000  # characters of a command or build line
OPENINGS_PREFIX = "openings:"  # the program reads openings (PROTOCOL.md section 8)
CLOCK_PREFIX = "clock:"  # the program reads the clock line, its bank (PROTOCOL.md section 10)


class Command(NamedTuple):
    """A version's command and build lines, checked, and what its program declared it reads."""

    command: str
    build: str
    openings: bool
    reads_clock: bool = False


class UploadRefused(ValueError):
    """The upload is refused; the message says why (shown to the student as it is)."""


@dataclass(frozen=True)
class Limits:
    total_bytes: int
    files: int
    file_bytes: int
    depth: int

    @classmethod
    def of(cls, settings: ClassSettings) -> "Limits":
        limits = settings.admission
        return cls(limits.max_upload_bytes, limits.max_files, limits.max_file_bytes, limits.max_depth)


def unreadable_character(text: str) -> Optional[str]:
    """Why ``text`` cannot be shown as it is, or ``None``: a character that is not text or that changes how text shows.

    Refused: what does not encode as UTF-8 (a lone surrogate, ``\\ud800``:
    it cannot be written into a file, a page or the database), control
    characters (C0, DEL, C1: terminal escapes among them) and the bidi
    controls (U+202A-202E, U+2066-2069: they reorder what follows, so
    ``agent\\u202eyp.c`` is shown as ``agentc.py``), as
    :data:`.escapes.UNSHOWABLE` says.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"{text[exc.start]!r} at character {exc.start + 1} is not text (it does not encode as UTF-8)"
    found = UNSHOWABLE.search(text)
    if found is None:
        return None
    char, place = found.group(), found.start() + 1
    if ord(char) > 0x9f:
        return f"{char!r} at character {place} reorders the text around it (a bidi control)"
    return f"{char!r} at character {place} is a control character"


def normalise(name: str, limits: Limits) -> str:
    """A safe relative POSIX path for an uploaded file's name, or :class:`UploadRefused` saying why not."""
    if not name:
        raise UploadRefused("a file with no name")
    problem = unreadable_character(name)
    if problem:
        raise UploadRefused(f"file name {ascii(name)}: {problem}; rename the file")
    if "\\" in name:
        raise UploadRefused(f"file name {name!r}: a backslash (zip it with / between folders)")
    if name.startswith("/"):
        raise UploadRefused(f"file name {name!r}: an absolute path (only paths inside the submission)")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UploadRefused(f"file name {name!r}: '..' would leave the submission folder")
    if not parts:
        raise UploadRefused(f"file name {name!r}: names no file")
    if len(parts) > limits.depth + 1:
        raise UploadRefused(f"file name {name!r}: more than {limits.depth} folders deep")
    if any(len(part.encode()) > 255 for part in parts):
        raise UploadRefused(f"file name {name!r}: a part longer than 255 bytes")
    return str(PurePosixPath(*parts))


def collect(uploads: Iterable[tuple[str, bytes]], limits: Limits) -> dict[str, bytes]:
    """The submission's files from uploaded ``(name, data)`` pairs; one ``.zip`` alone is unpacked."""
    given = list(uploads)
    if not given:
        raise UploadRefused("no files: upload the program's files, one .zip, or paste one file")
    if len(given) == 1 and given[0][0].lower().endswith(".zip"):
        return unzip(given[0][1], limits)
    files: dict[str, bytes] = {}
    for name, data in given:
        _add(files, name, data, limits)
    return files


def _add(files: dict[str, bytes], name: str, data: bytes, limits: Limits) -> None:
    path = normalise(name, limits)
    if len(data) > limits.file_bytes:
        raise UploadRefused(f"{path}: {len(data)} bytes, more than {limits.file_bytes} for one file")
    folded = path.lower()  # a.c and A.c collide on some systems: refused on all
    for other in files:
        if other.lower() == folded:
            raise UploadRefused(f"{name!r}: the same name as {other!r} (names must differ, also in case)")
        if other.lower().startswith(folded + "/") or folded.startswith(other.lower() + "/"):
            raise UploadRefused(f"{name!r}: {other!r} makes the same name a folder and a file")
    files[path] = data
    if len(files) > limits.files:
        raise UploadRefused(f"more than {limits.files} files")
    if sum(map(len, files.values())) > limits.total_bytes:
        raise UploadRefused(f"more than {limits.total_bytes} bytes in all")


def unzip(data: bytes, limits: Limits) -> dict[str, bytes]:
    """The files of a zip, checked entry by entry (links, devices and '..' refused; sizes capped as read)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise UploadRefused(f"not a readable zip file: {exc}") from None
    if len(entries) > limits.files * 2:
        raise UploadRefused(f"the zip holds {len(entries)} entries, more than {limits.files} files")
    names = [entry.filename for entry in entries]
    if len(set(names)) != len(names):
        duplicate = next(name for name in names if names.count(name) > 1)
        raise UploadRefused(f"the zip holds {duplicate!r} twice")
    files: dict[str, bytes] = {}
    for entry in entries:
        mode = entry.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if kind == stat.S_IFLNK:
            raise UploadRefused(f"{entry.filename!r} is a symbolic link: links are refused (send the file itself)")
        if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise UploadRefused(f"{entry.filename!r} is a device or special file: refused")
        normalise(entry.filename, limits)  # every name is checked, folders too ('../' refused even as a folder)
        if entry.is_dir() or kind == stat.S_IFDIR:
            continue
        if entry.file_size > limits.file_bytes:
            raise UploadRefused(f"{entry.filename}: {entry.file_size} bytes, more than {limits.file_bytes} for one file")
        try:
            with archive.open(entry) as handle:
                content = handle.read(limits.file_bytes + 1)  # never more than the cap, whatever the header said
        except (zipfile.BadZipFile, RuntimeError, OSError, ValueError, EOFError) as exc:
            raise UploadRefused(f"{entry.filename}: cannot be unpacked: {exc}") from None
        if len(content) > limits.file_bytes:
            raise UploadRefused(f"{entry.filename}: more than {limits.file_bytes} bytes for one file")
        _add(files, entry.filename, content, limits)
    if not files:
        raise UploadRefused("the zip holds no file")
    return _without_common_folder(files)


def _without_common_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    """A folder zipped as a whole (``agent/x.py``, ``agent/y.c``) becomes its contents (``x.py``, ``y.c``)."""
    tops = {path.split("/", 1)[0] for path in files}
    if len(tops) == 1 and all("/" in path for path in files):
        return {path.split("/", 1)[1]: data for path, data in files.items()}
    return files


def parse_command(command: str, build: str) -> Command:
    """The command and build lines checked, with the program's declarations.

    ``openings:COMMAND`` declares that the program reads openings,
    ``clock:COMMAND`` that it reads the clock line (in either order, as
    ``othello play`` takes them).  The command may name only the
    submission's own files: no absolute path, no ``..`` (the sandbox shows a
    program only what its command names).
    """
    command, build = command.strip(), build.strip()
    declared = {OPENINGS_PREFIX: False, CLOCK_PREFIX: False}
    while prefix := next((p for p in declared if command.lower().startswith(p)), None):
        declared[prefix] = True
        command = command[len(prefix):].strip()
    if not command:
        raise UploadRefused("no command line: say how to run the program, e.g. python3 agent.py {name}")
    for line, what in ((command, "command"), (build, "build line")):
        if len(line) > COMMAND_LIMIT or "\n" in line or "\x00" in line:
            raise UploadRefused(f"the {what} must be one line of at most {COMMAND_LIMIT} characters")
        problem = unreadable_character(line)
        if problem:
            raise UploadRefused(f"the {what} {ascii(line)}: {problem}")
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UploadRefused(f"the command cannot be split into words: {exc}") from None
    if not argv:
        raise UploadRefused("no command line: say how to run the program, e.g. python3 agent.py {name}")
    for word in argv:
        if word.startswith("/") or ".." in PurePosixPath(word).parts or word.startswith("~"):
            raise UploadRefused(f"the command's {word!r} names something outside the submission: "
                                "name the submission's own files (agent.py, ./agent) or a program such as python3")
    return Command(command, build, declared[OPENINGS_PREFIX], declared[CLOCK_PREFIX])


# Programs whose first word after them, when it is not an option, is the script they run: a file of the submission.
SCRIPT_RUNNERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|ruby|perl|php|bash|sh|dash|lua[0-9.]*|Rscript)$")
FILE_OPTION_RUNNERS = re.compile(r"^[gm]?awk$")  # ... and those that take it after -f
HOME_PREFIX = "{home}/"


PROGRAM_HEADERS = (b"#!", b"\x7fELF")  # what the kernel can start: a script with its interpreter's line, a binary


def started_program(command: str) -> Optional[str]:
    """The file the command starts by its path (``./agent`` or ``{home}/bin/agent`` gives ``agent``, ``bin/agent``),
    relative to the submission; ``None`` for a program of PATH (``python3 agent.py``) or a placeholder's."""
    argv = shlex.split(command)
    program = argv[0] if argv else ""
    program = program[len(HOME_PREFIX):] if program.startswith(HOME_PREFIX) else program
    if "/" not in program or any(char in program for char in "{}*?$"):
        return None
    return "/".join(part for part in program.split("/") if part not in ("", ".")) or None


def not_startable(command: str, build: str, files: dict[str, bytes]) -> Optional[str]:
    """Why the command's program, sent as it is (no build line), could not be started, or ``None``.

    An upload keeps no file modes (a browser sends none): the program the command starts by its path is made
    executable when it is one (:data:`PROGRAM_HEADERS`, :func:`store_version`); any other file would fail
    with "exec format error" at its first move, so it is refused now, saying what to do.
    """
    program = started_program(command)
    if build.strip() or program is None or program not in files or files[program].startswith(PROGRAM_HEADERS):
        return None
    return (f"the command starts {program} itself, which is neither a script with a '#!' first line (#!/bin/sh, "
            f"#!/usr/bin/env python3) nor a compiled program: add that line, or start it with its interpreter "
            f"(e.g. sh {program} {{name}})")


def missing_file(command: str, build: str, files: Iterable[str]) -> Optional[str]:
    """Why the upload cannot run as its command says, or ``None``: the command runs a file the upload lacks.

    Only what is known for sure before anything runs: with a build line,
    nothing (it may make any file); without one, the program a command
    starts by its path (``./agent``, ``{home}/agent``) and the script of a
    known interpreter (``python3 agent.py``, ``python3 {home}/agent.py``,
    ``awk -f agent.awk``) must each be a file (or a folder) among those
    sent.  Any other word may be a class, a module, or a file the program
    looks for and does without (``java -cp {home} Main``, ``--book
    {home}/book.txt``): never refused.
    """
    if build.strip():
        return None
    present = set(files)
    folders = {str(parent) for name in present for parent in PurePosixPath(name).parents}
    argv = shlex.split(command)
    program = argv[0]
    runs = [(program, True)] if "/" in program else []  # (a bare name is a program of PATH); True: the program
    runner = PurePosixPath(program).name
    if SCRIPT_RUNNERS.match(runner) and len(argv) > 1 and not argv[1].startswith("-"):
        runs.append((argv[1], False))
    if FILE_OPTION_RUNNERS.match(runner) and "-f" in argv[1:-1]:
        runs.append((argv[argv.index("-f", 1) + 1], False))
    for word, is_program in runs:
        word = word[len(HOME_PREFIX):] if word.startswith(HOME_PREFIX) else word
        if any(char in word for char in "{}*?$"):  # another placeholder, a pattern: not one known path
            continue
        path = "/".join(part for part in word.split("/") if part not in ("", "."))
        if not path or path in present or path in folders:
            continue
        listing = ", ".join(sorted(present)[:12]) + (", ..." if len(present) > 12 else "")
        if is_program:
            return (f"the command runs {path}, which is not among the files sent ({listing}): a program made "
                    f"from the sources needs a build line that makes it (e.g. gcc -O2 -o {path} agent.c)")
        return (f"the command names {path}, which is not among the files sent ({listing}): "
                "send it too, or correct the command")
    return None


def store_version(folder: Path, student: str, files: dict[str, bytes], command: str, build: str) -> tuple[str, Path]:
    """Write ``files`` as ``folder/submissions/STUDENT/FP`` (read-only); return ``(FP, path)``.

    The files go into a fresh folder inside the class folder first, which is
    renamed into place whole; the same version sent again is the same folder.
    """
    incoming = folder / "submissions" / ".incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{student}-", dir=incoming))
    program = started_program(command)
    try:
        for name, data in files.items():
            path = staging.joinpath(*name.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            # O_EXCL and O_NOFOLLOW: the staging folder is ours and fresh; nothing may be there already
            # The program the command starts by its path runs as it is: executable, as its author's copy was
            # (an upload keeps no modes); what is not a program stays a plain file.
            mode = 0o755 if name == program and data.startswith(PROGRAM_HEADERS) else 0o644
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
        print_ = fingerprint(staging, command, build)
        target = folder / "submissions" / student / print_
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(staging)
        else:
            # Its own folder stays writable until it is in place: renaming a folder rewrites its ".." entry,
            # which the kernel refuses in a read-only folder to anyone but root (an instructor is not root).
            make_read_only(staging, keep_root=True)
            try:
                os.rename(staging, target)
            except OSError:
                if not target.is_dir():
                    raise
                remove_tree(staging)  # the same version, sent twice at once: the first one is it
            else:
                os.chmod(target, 0o555)
        return print_, target
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def program_fingerprint(folder: Path, command: str, build: str, openings: bool, reads_clock: bool) -> str:
    """The program a version runs, as one digest: its files, its build line, its command's words, its declarations.

    Two versions with the same program start the very same process: the
    command is run as the words ``shlex`` splits it into, never through a
    shell, so a command only spaced or quoted otherwise (``python3  'a.py'``
    and ``python3 a.py``) is the same program.  Any other change may change
    what runs (``./a.py`` and ``a.py`` differ in ``argv[0]``; an argument
    sets a depth), and the build line is run by a shell, where quoting
    changes what it does: those are another program.  The declarations
    change what the referee sends it (openings, the clock line).
    """
    declared = (OPENINGS_PREFIX if openings else "") + (CLOCK_PREFIX if reads_clock else "")
    return fingerprint(folder, "program:" + declared + shlex.join(shlex.split(command)), build)


def make_read_only(root: Path, keep_root: bool = False) -> None:
    """No write permission left under ``root`` (a version is immutable); a built program stays executable.

    ``keep_root``: ``root`` itself stays writable (it is still to be renamed into place).
    """
    for base, directories, names in os.walk(root):
        for name in [*names, *directories]:
            path = Path(base) / name
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):
                os.chmod(path, stat.S_IMODE(mode) & ~0o222)
    if not keep_root:
        os.chmod(root, 0o555)


def make_writable(root: Path) -> None:
    """Undo :func:`make_read_only` (to delete a folder of ours)."""
    os.chmod(root, 0o755)
    for base, directories, names in os.walk(root):
        for name in directories:
            os.chmod(Path(base) / name, 0o755)
        for name in names:
            path = Path(base) / name
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):
                os.chmod(path, stat.S_IMODE(mode) | 0o200)


def remove_tree(root: Path) -> None:
    if root.exists():
        make_writable(root)
        shutil.rmtree(root, ignore_errors=True)


def file_list(root: Path) -> list[tuple[str, int]]:
    """``[(relative path, bytes)]`` of a stored version (for the database and the instructor's view)."""
    found = []
    for base, _, names in os.walk(root):
        for name in names:
            path = Path(base) / name
            found.append((path.relative_to(root).as_posix(), path.lstat().st_size))
    return sorted(found)


def read_file(root: Path, relative: str) -> Optional[bytes]:
    """One file of a stored version, or ``None`` (never through a link, never outside ``root``)."""
    parts = relative.split("/")
    if not relative or any(part in ("", ".", "..") for part in parts):
        return None
    path = root.joinpath(*parts)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read(8 << 20)
