"""Serving a file from under one root, and nothing else.

The tournament's results hold what agents wrote (their directories), and an
agent may leave a symbolic link there pointing anywhere.  So a path is taken
one component at a time from the root, each opened with ``O_NOFOLLOW``
relative to the one before (no ``..``, no link, no absolute path, ever), and
only a regular file of bounded size is served.

Of the results, only what is made to be published is served to everybody
(:func:`is_public`): the report (which holds no agent's stderr, build log or
source) and each game's record.  The database, the build logs, the agents'
stderr logs and whatever an agent left in its folder need the token.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

SERVE_LIMIT = 32 << 20  # bytes: a game record, a log, the report; never an agent's scratch file of gigabytes


PUBLIC_FOLDER = "report"  # the published report (tournaments.results.report.public_report_dir)
PUBLIC_GAME_FILE = "game.json"  # a game's record: moves, times and comment lines, never stderr


def is_public(relative: str) -> bool:
    """Whether the results' file ``relative`` may be served without the token: the report, or a game's record."""
    parts = relative.split("/")
    if parts[0] == PUBLIC_FOLDER and len(parts) > 1:
        return True
    return len(parts) == 3 and parts[0] == "games" and parts[2] == PUBLIC_GAME_FILE


class NotServed(Exception):
    """The path is not served; ``status`` is the HTTP status (404 or 413), ``reason`` says why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def read_under(root: Path, relative: str, limit: int = SERVE_LIMIT) -> bytes:
    """The bytes of the regular file ``root/relative``, reached without ``..`` or a link; else :class:`NotServed`."""
    if "\0" in relative or "\\" in relative or relative.startswith("/"):
        raise NotServed(404, f"{relative!r} is not a path under the results")
    parts = relative.split("/")
    if not parts or any(part in ("", ".", "..") for part in parts):
        raise NotServed(404, f"{relative!r} is not a path under the results (no '..', '.' or empty parts)")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        raise NotServed(404, "the results directory does not exist yet") from None
    try:
        for part in parts[:-1]:
            next_fd = _open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, fd, relative)
            os.close(fd)
            fd = next_fd
        file_fd = _open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, fd, relative)
    finally:
        os.close(fd)
    try:
        info = os.fstat(file_fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotServed(404, f"{relative!r} is not a regular file")
        if info.st_size > limit:
            raise NotServed(413, f"{relative!r} is {info.st_size} bytes, more than the {limit} served")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(file_fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise NotServed(413, f"{relative!r} is more than the {limit} bytes served")
        return data
    finally:
        os.close(file_fd)


def _open(name: str, flags: int, dir_fd: int, relative: str) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotServed(404, f"{relative!r} goes through a symbolic link or a file (never followed)") from None
        if exc.errno == errno.ENXIO:
            raise NotServed(404, f"{relative!r} is not a regular file") from None
        raise NotServed(404, f"{relative!r} was not found") from None
