"""The referee's side of the two files: write ``NAME.in`` atomically, read ``NAME.out`` safely.

Every access goes through a file descriptor of the agent's directory, opened
once at the start of the game (``dir_fd``), so an agent that renames or
replaces its directory cannot send the referee elsewhere.  ``NAME.out`` is
opened with ``O_NOFOLLOW`` and ``O_NONBLOCK``: a symbolic link is never
followed, a FIFO never blocks, and at most ``limit`` bytes are read.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
import threading
from dataclasses import dataclass, field, replace
from typing import Optional, Union

from ..protocol import DEFAULT_SIZE, Comment, Move, ParseError, parse_line


class OutFileError(Exception):
    """``NAME.out`` exists but is not something the referee will read (symlink, too big...)."""


def new_temp(temp_dir_fd: int, name: str) -> tuple[str, int]:
    """A fresh empty temporary file for a later :func:`write_atomically` of ``name``: its name in the directory
    ``temp_dir_fd`` and a descriptor open for writing.  Created with ``O_EXCL | O_NOFOLLOW`` under a fresh name."""
    for attempt in range(100):
        temp = f".{name}.referee-{os.getpid()}-{threading.get_ident()}-{attempt}.tmp"
        try:
            return temp, os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                                 dir_fd=temp_dir_fd)
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, f"no free temporary name for {name}")


def drop_temp(temp_dir_fd: int, temp: tuple[str, int]) -> None:
    """Close and delete a temporary file of :func:`new_temp` that will not be used."""
    os.close(temp[1])
    _unlink(temp_dir_fd, temp[0])


def write_atomically(dir_fd: int, name: str, text: str, temp_dir_fd: Optional[int] = None,
                     temp: Optional[tuple[str, int]] = None) -> None:
    """Write ``name`` in the directory ``dir_fd``: a temporary file, then a rename.

    The temporary file is made in ``temp_dir_fd`` (default: the same
    directory; it must be on the same file system), under a fresh name
    created with ``O_EXCL | O_NOFOLLOW`` (or it is ``temp``, made so by
    :func:`new_temp` in that directory beforehand and not written yet), and
    the rename replaces whatever is at ``name`` (a file or a symlink planted
    there) without following it.  A temporary directory that is not watched
    saves the watcher (and the agent) the events of the writing: only the
    rename is seen.
    """
    data = text.encode("utf-8")
    temp_fd = dir_fd if temp_dir_fd is None else temp_dir_fd
    temp_name, fd = temp if temp is not None else new_temp(temp_fd, name)
    try:
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.rename(temp_name, name, src_dir_fd=temp_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _unlink(temp_fd, temp_name)
        raise


def exists(dir_fd: int, name: str) -> bool:
    """Whether ``name`` exists in the directory (a dangling symlink counts)."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def read_out(dir_fd: int, name: str, limit: int) -> Optional[str]:
    """The text of ``NAME.out``, or ``None`` if there is no such file.

    Raises :class:`OutFileError` for a symlink, a non-regular file or a file
    bigger than ``limit`` bytes; nothing beyond ``limit`` bytes is ever read.
    """
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutFileError(f"{name} is a symbolic link; the referee reads only a regular file") from None
        raise OutFileError(f"cannot open {name}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OutFileError(f"{name} is not a regular file")
        if info.st_size > limit:
            raise OutFileError(f"{name} holds {info.st_size} bytes, more than the {limit} allowed")
        data = os.read(fd, limit + 1)
        if len(data) > limit:  # grew between fstat and read
            raise OutFileError(f"{name} holds more than the {limit} bytes allowed")
    finally:
        os.close(fd)
    return decode(data)


def decode(data: bytes) -> str:
    """The text of a ``NAME.out``: UTF-8, with or without a BOM, or UTF-16 with its BOM.

    Windows Notepad saves with a UTF-8 byte-order mark or ("Unicode") as
    UTF-16; both are text, for people and programs alike.  An odd last byte
    of UTF-16 is half a character still being written: it is left out.
    """
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8):].decode("utf-8", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        even = data[: len(data) - len(data) % 2]
        return even.decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace")


def remove(dir_fd: int, name: str) -> None:
    """Delete ``name`` from the directory if it is there (a symlink itself, never its target)."""
    _unlink(dir_fd, name)


def _unlink(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        pass


# ---------------------------------------------------------------------------
# When is NAME.out complete, and what does it say?
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """A complete ``NAME.out``: the move, the comments, or why it is malformed.

    ``line`` is the answer as written: its lines that are neither blank nor
    comments, joined by newlines (what a faulty move's record keeps).
    """

    move: Optional[Move]
    comments: tuple[str, ...] = ()
    error: str = ""
    line: str = field(default="", compare=False)  # as written: two messages that say the same are equal


def read_message(text: str, closed: bool, person: bool = False, size: int = DEFAULT_SIZE) -> Optional[Message]:
    """The message ``text`` holds if it is complete, else ``None`` (wait for more).

    PROTOCOL.md section 3.5: the message is complete once it holds a line
    that is neither blank nor a comment (normally the move line) ending with
    a newline, or a last line ending with ``)`` once the writer has closed
    the file.  Comment lines alone are not yet a message; blank lines alone
    are one (an empty message) once the writer has closed the file.  A
    ``person``'s file is complete whatever it holds once their editor has
    closed it: ``W D 3`` saved without a newline is a typo to point out,
    not a move to wait for.  Each line is parsed once, here, as a line of
    a ``size`` x ``size`` board.
    """
    lines = text.splitlines(keepends=True)
    if not lines:
        return None
    saved_by_person = person and closed and bool(text.strip())
    if not saved_by_person and not lines[-1].endswith(("\n", "\r")):
        if not (closed and lines[-1].rstrip().endswith(")")):
            lines = lines[:-1]  # still being written
    parsed = [_parse(line.rstrip("\r\n"), size) for line in lines]
    answer = "\n".join(raw.strip() for raw, line in zip(lines, parsed)
                       if line is not None and not isinstance(line, Comment))
    has_answer = any(line is not None and not isinstance(line, Comment) for line in parsed)
    empty_and_closed = closed and bool(lines) and not text.strip()
    if not (saved_by_person or has_answer or empty_and_closed):
        return None
    return replace(_message(parsed), line=answer[:_LINE_KEPT])


_LINE_KEPT = 500  # characters of a faulty answer kept in the record: enough to see it, not a flood

_Line = Union[Move, Comment, ParseError, None]  # a parsed line: None for a blank one


def _parse(line: str, size: int) -> _Line:
    if not line.strip():
        return None
    try:
        return parse_line(line, size)
    except ParseError as exc:
        return exc


def _message(lines: list[_Line]) -> Message:
    """A complete message: comment lines and exactly one move line."""
    comments: list[str] = []
    moves: list[Move] = []
    for line in lines:
        if isinstance(line, ParseError):
            return Message(None, tuple(comments), str(line))
        if isinstance(line, Comment):
            comments.append(line.text)
        elif line is not None:
            moves.append(line)
    if len(moves) > 1:
        lines_text = ", ".join(m.line() for m in moves)
        return Message(None, tuple(comments), f"{len(moves)} move lines in one message ({lines_text}); exactly one is allowed")
    if not moves:
        if not comments:
            return Message(None, (), "an empty message: no move line")
        return Message(None, tuple(comments), "no move line")
    return Message(moves[0], tuple(comments))
