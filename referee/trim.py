"""What an agent leaves in its folder after a game: at most so many bytes, the largest files removed first.

The referee trims an agent's directory once its processes are gone: to the
disk limit (``--disk``: what an agent wrote beyond it during the game, before
it was killed for it), and in a tournament to a small cap
(``keep_files_mb``), so that sixty games do not keep sixty times a
student's scratch files.  The game's record says what was removed.

The agent wrote this tree and may have planted links in it: every step is
relative to a directory descriptor, no link is followed (``lstat``,
``O_NOFOLLOW``), and a directory that cannot be opened so is left alone.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any, Collection, Iterator

MAX_ENTRIES = 200_000  # the most entries looked at: past it, the rest of the tree is left as it is


@dataclass(frozen=True)
class Trimmed:
    """What :func:`trim_directory` removed (``files`` of ``bytes`` in all) and found (``kept`` bytes left)."""

    files: int
    bytes: int
    kept: int

    def entry(self, why: str) -> dict[str, Any]:
        """The record's ``trimmed`` entry: ``{"files": n, "bytes": b, "why": why}``."""
        return {"files": self.files, "bytes": self.bytes, "why": why}


@dataclass(frozen=True)
class _File:
    folder: tuple[str, ...]  # the names of the folders from the top down to it
    name: str
    used: int  # bytes of disk really used (blocks), as the disk limit counts them


def _open_folder(top_fd: int, folder: tuple[str, ...]) -> int:
    """A descriptor of ``folder`` below ``top_fd``, opened name by name without following links (the caller closes it)."""
    fd = os.dup(top_fd)
    try:
        for name in folder:
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError:
        os.close(fd)
        raise
    return fd


def _walk(top_fd: int, spare: Collection[str]) -> Iterator[tuple[_File, bool]]:
    """Every entry below ``top_fd`` as (its file, whether it may be removed); folders are listed too, never removable."""
    stack: list[tuple[str, ...]] = [()]
    seen = 0
    while stack and seen < MAX_ENTRIES:
        folder = stack.pop()
        try:
            fd = _open_folder(top_fd, folder)
        except OSError:
            continue
        try:
            names = os.listdir(fd)
            for name in names:
                seen += 1
                if seen > MAX_ENTRIES:
                    break
                try:
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                is_folder = stat.S_ISDIR(info.st_mode)
                if is_folder:
                    stack.append((*folder, name))
                removable = not is_folder and not (folder == () and name in spare)
                yield _File(folder, name, info.st_blocks * 512), removable
        except OSError:
            continue
        finally:
            os.close(fd)


def trim_directory(top_fd: int, keep_bytes: int, spare: Collection[str] = ()) -> Trimmed:
    """Remove the largest files below the directory ``top_fd`` until it uses at most ``keep_bytes``.

    ``spare`` names files at its top that stay whatever their size (the
    agent's ``NAME.in`` and ``NAME.out``); folders stay (emptied or not).
    Usage is counted in blocks really used, as the disk limit counts it.
    """
    entries = list(_walk(top_fd, spare))
    used = sum(found.used for found, _ in entries)
    removable = sorted((found for found, ok in entries if ok and found.used), key=lambda f: f.used, reverse=True)
    files = removed = 0
    for found in removable:
        if used <= keep_bytes:
            break
        try:
            fd = _open_folder(top_fd, found.folder)
        except OSError:
            continue
        try:
            os.unlink(found.name, dir_fd=fd)
        except OSError:
            continue
        finally:
            os.close(fd)
        used -= found.used
        removed += found.used
        files += 1
    return Trimmed(files, removed, used)


__all__ = ["MAX_ENTRIES", "Trimmed", "trim_directory"]
