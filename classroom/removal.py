"""``othello class delete DIR``: a class folder removed whole, though its versions and builds are read-only.

A stored version and its build are made read-only (a version is
immutable: :func:`.uploads.make_read_only`), so ``rm -rf DIR`` fails for
every user but root ("Permission denied" on each of their files);
``chmod -R u+w DIR`` first would do.  Deleting is refused for a folder
that is not a class's, while a server runs on it (its lock is held during
the deletion, so none starts meanwhile), and while a final runs on it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from .admission import STUDENT_FOLDERS
from .final import FinalMarker
from .server import LOCK_FILE, ServerError, lock
from .settings import DATABASE_FILE, SETTINGS_FILE


class NotDeletable(ValueError):
    """The folder is not deleted: the message says why."""


@dataclass(frozen=True)
class Contents:
    """What a class folder holds: its files and their bytes."""

    files: int
    size: int

    def text(self) -> str:
        return f"{self.files} file{'s' * (self.files != 1)}, {self.size / (1 << 20):.1f} MB"


def contents(folder: Path) -> Contents:
    """The files under ``folder`` (links not followed) and their bytes."""
    files = size = 0
    for base, _, names in os.walk(folder):
        for name in names:
            try:
                size += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                continue
            files += 1
    return Contents(files, size)


def require_class_folder(folder: Path) -> None:
    """:class:`NotDeletable` unless ``folder`` is a class folder (``othello class init`` made it), itself, not a link."""
    if folder.is_symlink():
        raise NotDeletable(f"{folder} is a link: give the class folder itself ({os.path.realpath(folder)})")
    if not folder.is_dir():
        raise NotDeletable(f"{folder} is not a folder")
    missing = [name for name in (SETTINGS_FILE, DATABASE_FILE) if not (folder / name).is_file()]
    if missing:
        leftover = ""
        if any((folder / kind).is_dir() for kind in STUDENT_FOLDERS):  # what rm -rf leaves of a class
            leftover = (f"; if it is what rm -rf left of one (its read-only versions), remove it with "
                        f"chmod -R u+w {shlex.quote(str(folder))} && rm -rf {shlex.quote(str(folder))}")
        raise NotDeletable(f"{folder} is not a class folder: it holds no {' and no '.join(missing)} "
                           f"(othello class init makes them): nothing deleted{leftover}")


def hold_for_deletion(folder: Path) -> int:
    """The class folder's server lock, held by this process (the descriptor), so that no server starts meanwhile.

    :class:`NotDeletable` while a server or a final runs on ``folder``.
    """
    require_class_folder(folder)
    try:
        held = lock(folder)
    except ServerError:
        raise NotDeletable(f"othello class serve runs on {folder}: stop it first (Ctrl-C in its terminal); "
                           "nothing deleted") from None
    except OSError as exc:  # the folder itself read-only, or another user's
        raise NotDeletable(f"cannot take {folder / LOCK_FILE} to be sure no server starts meanwhile: "
                           f"{exc.strerror or exc}; nothing deleted") from None
    marker = FinalMarker(folder)
    if marker.running():
        os.close(held)
        raise NotDeletable(f"a final runs on {folder} (its process is named in {marker.path}): let it end, or stop "
                           "it; nothing deleted")
    return held


def owner_writable(folder: Path, problems: list[str]) -> None:
    """Give the owner write permission on ``folder`` and every folder and file under it, nothing more.

    Only the owner's bits: the class folder is the instructor's alone (mode
    700), and must not be opened to anyone while it is deleted.  What cannot
    be changed (another user's file) is said in ``problems``.
    """
    for base, directories, names in os.walk(folder):
        for name in [".", *directories, *names] if base == str(folder) else [*directories, *names]:
            path = os.path.normpath(os.path.join(base, name))
            try:
                mode = os.lstat(path).st_mode
                if not stat.S_ISLNK(mode):
                    wanted = stat.S_IRWXU if stat.S_ISDIR(mode) else stat.S_IWUSR
                    if stat.S_IMODE(mode) & wanted != wanted:
                        os.chmod(path, stat.S_IMODE(mode) | wanted)
            except OSError as exc:
                problems.append(f"{path}: {exc.strerror or exc}")


def delete_class(folder: Path, held: int) -> list[str]:
    """Remove ``folder`` and everything in it (the read-only made writable first), then release ``held``.

    Returns what could not be removed, one line each (empty: all of it).
    """
    problems: list[str] = []

    def failed(function: object, path: str, error: tuple[type[BaseException], BaseException, object]) -> None:
        problems.append(f"{path}: {error[1].strerror if isinstance(error[1], OSError) else error[1]}")

    try:
        owner_writable(folder, problems)
        shutil.rmtree(folder, onerror=failed)  # (onexc from Python 3.12 on)
    finally:
        os.close(held)
    return problems
