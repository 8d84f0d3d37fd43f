"""Reading what agents could have touched: capped, and never through a link.

An agent without a sandbox (or a daemon it left behind) can replace the
files the runner reads after a game: make its ``NAME.stderr.log`` a 100 GB
sparse file, a symbolic link to one of the instructor's files, or
``game.json`` a directory or a FIFO.  Every such read therefore goes through
:func:`read_capped`: the last path component is opened with ``O_NOFOLLOW``
(a link is refused, not followed) and ``O_NONBLOCK`` (a FIFO never blocks),
the file must be a regular file, and at most ``limit`` bytes are read with
``pread`` at known offsets, so the size of the file costs nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

GAME_RECORD_LIMIT = 32 << 20  # bytes: a record of 60 moves with long comments is far smaller
STDERR_READ_LIMIT = 60 << 10  # bytes of an agent's stderr.log read after a game (its first and last halves),
# under the 64 Ki characters the store keeps, so the note of what was cut survives


class UnsafeFileError(OSError):
    """A file the runner will not read as it is (a link, a directory, a FIFO, too big); the message says which."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(directory: Path, name: str) -> tuple[int, int]:
    """Open ``directory/name`` for reading without following a link; return ``(fd, size)``.

    ``name`` must be one path component (a record naming ``../../secret`` is
    refused).  Raises :class:`UnsafeFileError` for anything but a regular
    file, and ``FileNotFoundError`` if it is missing.
    """
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise UnsafeFileError(errno.EINVAL, f"{name!r} is not a plain file name in {directory}")
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFileError(errno.ELOOP, f"{directory / name} is a symbolic link (never followed)") from None
            if exc.errno == errno.ENXIO:  # a socket (or a FIFO with no writer on some systems)
                raise UnsafeFileError(errno.ENXIO, f"{directory / name} is not a regular file") from None
            raise
    finally:
        os.close(dir_fd)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafeFileError(errno.EINVAL, f"{directory / name} is {_kind(info.st_mode)}, not a regular file")
    return fd, info.st_size


def read_whole(directory: Path, name: str, limit: int) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes; :class:`UnsafeFileError` if bigger."""
    fd, size = open_regular(directory, name)
    try:
        if size > limit:
            raise UnsafeFileError(errno.EFBIG, f"{directory / name} is {size} bytes, more than the {limit} allowed")
        data = _pread_all(fd, limit + 1, 0)
        if len(data) > limit:  # grew while we read
            raise UnsafeFileError(errno.EFBIG, f"{directory / name} is more than the {limit} bytes allowed")
        return data
    finally:
        os.close(fd)


def read_ends(directory: Path, name: str, limit: int) -> str:
    """The text of a log, its first and last ``limit // 2`` bytes if it is bigger (a note says how much was cut)."""
    fd, size = open_regular(directory, name)
    try:
        if size <= limit:
            return _pread_all(fd, limit, 0).decode("utf-8", errors="replace")
        half = limit // 2
        head = _pread_all(fd, half, 0).decode("utf-8", errors="replace")
        tail = _pread_all(fd, half, size - half).decode("utf-8", errors="replace")
        return f"{head}\n[... {size - 2 * half} bytes cut ...]\n{tail}"
    finally:
        os.close(fd)


def _pread_all(fd: int, count: int, offset: int) -> bytes:
    chunks = []
    while count > 0:
        chunk = os.pread(fd, min(count, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)
