"""A program's version: one hex digest of its submission folder's files and the lines that build and run it.

``fingerprint(folder, command, build)`` is SHA-256 over the sorted list of
(relative path, SHA-256 of the file) pairs plus the command and build lines,
written as canonical JSON.  Two folders with the same files (wherever they
lie, whatever their times and modes) and the same lines have the same
fingerprint; any changed byte, renamed file or changed line gives another.
A symbolic link counts as its target's text (it is never followed); other
special files are left out, and so are the paths in ``leave_out`` (what a
build wrote there, a results folder inside it).  The class server names
each version by it, and every game record can name the versions that played.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

if TYPE_CHECKING:
    import hashlib

CHUNK = 1 << 20


def sha256(data: bytes = b"") -> "hashlib._Hash":
    """A SHA-256 of ``data`` to go on with.

    ``hashlib`` is imported here, when a digest is made: it loads OpenSSL,
    which every ``othello`` command (through the agents' registry) and every
    built-in agent's start would pay for otherwise (issue 27).
    """
    import hashlib

    return hashlib.sha256(data)


def text_digest(text: str) -> str:
    """SHA-256 (hex) of ``text`` in UTF-8."""
    return sha256(text.encode("utf-8")).hexdigest()


def file_digest(path: Path) -> str:
    """SHA-256 of one regular file, read in chunks (never through a link: the caller checked)."""
    digest = sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _entries(folder: Path, skipped: set[str]) -> Iterator[tuple[str, Path, os.stat_result]]:
    """Each (relative POSIX path, path, ``lstat``) of the folder, links never followed, ``skipped`` paths left out."""
    for root, directories, names in os.walk(folder, followlinks=False):
        here = Path(root)
        directories[:] = [name for name in directories
                          if (here / name).relative_to(folder).as_posix() not in skipped]
        # os.walk lists a link to a folder as a folder: count it as a link
        for name in [*names, *(name for name in directories if (here / name).is_symlink())]:
            path = here / name
            relative = path.relative_to(folder).as_posix()
            if relative not in skipped:
                yield relative, path, os.lstat(path)


def _digests(entries: Iterable[tuple[str, Path, os.stat_result]]) -> list[tuple[str, str]]:
    """Sorted (relative path, digest) of ``entries``: a link's target text, a regular file's bytes; nothing else."""
    found: list[tuple[str, str]] = []
    for relative, path, status in entries:
        if stat.S_ISLNK(status.st_mode):
            found.append((relative, "link:" + text_digest(os.readlink(path))))
        elif stat.S_ISREG(status.st_mode):
            found.append((relative, file_digest(path)))
    return sorted(found)


def folder_files(folder: Path, leave_out: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The folder's files as sorted (relative POSIX path, SHA-256) pairs; a link as ``link:`` + its target's digest.

    A relative path in ``leave_out`` (a file, or a folder with all it holds) is not listed.
    """
    return _digests(_entries(Path(folder), set(leave_out)))


def fingerprint(folder: Path, command: str, build: str = "", leave_out: Iterable[str] = ()) -> str:
    """The version's fingerprint: SHA-256 (hex) of the folder's files (less ``leave_out``) and the command and build lines."""
    return files_fingerprint(folder_files(folder, leave_out), command, build)


def files_fingerprint(files: list[tuple[str, str]], command: str, build: str = "") -> str:
    """:func:`fingerprint` of a folder whose :func:`folder_files` are ``files``."""
    text = json.dumps({"files": files, "command": command.strip(), "build": build.strip()},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text_digest(text)


FOLDER_FILES_CAP = 1000  # a folder a command names is digested whole only up to this many files...
FOLDER_BYTES_CAP = 50 << 20  # ...and bytes (a class path may be a whole home folder)


def small_folder_files(folder: Path, leave_out: Iterable[str] = ()) -> list[tuple[str, str]] | None:
    """:func:`folder_files` of a folder within the caps (less ``leave_out``), or ``None`` for a larger one.

    A larger folder is never walked to its end: a home folder or ``/tmp``
    would take minutes to digest, and is no program's submission anyway.
    The folder is listed once, and digested only when it is within the caps.
    """
    listed = []
    size = 0
    for entry in _entries(Path(folder), set(leave_out)):
        listed.append(entry)
        size += entry[2].st_size
        if len(listed) > FOLDER_FILES_CAP or size > FOLDER_BYTES_CAP:
            return None
    return _digests(listed)


def command_version(command: Iterable[str], home: Path | None) -> str:
    """The version of a program given by its command line alone (``othello play``, ``match``): no submission folder.

    SHA-256 over the command and the files it names (a binary, a script, a
    jar: by name and content, wherever they lie); a folder it names (``-cp
    {home}``) is digested whole when small, else stands for its name only.
    The system's own programs (``python3``, ``java``) are not part of it.
    """
    from .sandbox import is_system_path  # the sandbox's rule for the system's folders (loaded when a version is made)

    command = list(command)
    named: list[tuple[str, object]] = []
    for token in command:
        value = token.replace("{home}", str(home)) if home is not None else token
        for piece in value.split("=", 1)[-1:] if value.startswith("-") else [value]:
            path = Path(piece)
            if "{" in piece or not path.is_absolute() or is_system_path(path):
                continue
            try:
                if path.is_file():
                    named.append((path.name, file_digest(path)))
                elif path.is_dir():
                    named.append((path.name + "/", small_folder_files(path) or "a large folder"))
            except OSError:
                continue
    # Named files count by name and content: the same program elsewhere is the same version.
    words = [Path(word).name if word.startswith("/") else word for word in command]
    text = json.dumps({"command": words, "named": named}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return text_digest(text)
