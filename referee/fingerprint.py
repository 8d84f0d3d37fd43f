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

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Iterable

CHUNK = 1 << 20


def file_digest(path: Path) -> str:
    """SHA-256 of one regular file, read in chunks (never through a link: the caller checked)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def folder_files(folder: Path, leave_out: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The folder's files as sorted (relative POSIX path, SHA-256) pairs; a link as ``link:`` + its target's digest.

    A relative path in ``leave_out`` (a file, or a folder with all it holds) is not listed.
    """
    folder = Path(folder)
    skipped = set(leave_out)
    found: list[tuple[str, str]] = []
    for root, directories, names in os.walk(folder, followlinks=False):
        here = Path(root)
        directories[:] = [name for name in directories
                          if (here / name).relative_to(folder).as_posix() not in skipped]
        for name in directories:
            if (here / name).is_symlink():  # os.walk lists a link to a folder as a folder: count it as a link
                names.append(name)
        for name in names:
            path = here / name
            relative = path.relative_to(folder).as_posix()
            if relative in skipped:
                continue
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                found.append((relative, "link:" + hashlib.sha256(os.readlink(path).encode()).hexdigest()))
            elif stat.S_ISREG(mode):
                found.append((relative, file_digest(path)))
    return sorted(found)


def fingerprint(folder: Path, command: str, build: str = "", leave_out: Iterable[str] = ()) -> str:
    """The version's fingerprint: SHA-256 (hex) of the folder's files (less ``leave_out``) and the command and build lines."""
    text = json.dumps({"files": folder_files(folder, leave_out), "command": command.strip(), "build": build.strip()},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
