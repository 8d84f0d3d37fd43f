"""Text from students' programs made safe to show in a terminal: control characters and bidi controls made visible.

A build's output and an agent's stderr are the student's bytes; an
instructor reads them with ``cat``, ``less -R`` or ``othello class submit
--wait``, in a terminal that obeys escapes: ``ESC ]`` can set the window's
title or write to the clipboard, ``ESC [2J`` clears the screen, a carriage
return overwrites the line before it, U+202E reverses what follows.  So
every log file the server keeps, and every line of its own log that quotes
such text, has those characters written as their escapes (``\\x1b``,
``\\r``, ``\\u202e``): nothing is lost, nothing acts.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import sys
import tempfile
import threading
from pathlib import Path
from typing import Optional

CONTROLS = "\x00-\x1f\x7f-\x9f"  # C0, DEL and C1: Unicode's control characters (category Cc)
BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"  # embeddings, overrides, isolates: they reorder the text after them
# What a name or a command line may not hold: it would act, or show as something else, wherever it is shown.
UNSHOWABLE = re.compile(f"[{CONTROLS}{BIDI_CONTROLS}]")
# What a log may not hold as it is: the same, but newline and tab (a log is lines, and tabs are harmless).
_UNSAFE_IN_LOG = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def visible(text: str) -> str:
    """``text`` with every unsafe character written as its escape (``\\r\\n`` line ends become ``\\n``)."""
    return _UNSAFE_IN_LOG.sub(_escape, text.replace("\r\n", "\n"))


def event_line(text: str) -> str:
    """A line of the server's log: the local time with its offset (``2026-11-28T14:03:07+01:00``), then ``text``.

    ``text`` is made visible (:func:`visible`): a line may quote a name or a
    reason that a student's upload chose.
    """
    return f"{dt.datetime.now().astimezone().isoformat(timespec='seconds')} {visible(text)}"


_log_lock = threading.Lock()


def log_event(text: str) -> None:
    """Write :func:`event_line` of ``text`` to standard error (the server's log) in one piece.

    ``print`` writes the line and its end apart: two threads logging at once
    (the event loop, the copies' thread, the worker's) left a line glued to
    another and an empty one after (seen in the test of the log's form).
    """
    line = event_line(text) + "\n"
    with _log_lock:
        sys.stderr.write(line)
        sys.stderr.flush()


def make_log_visible(path: Path) -> None:
    """Rewrite the log file ``path`` with :func:`visible` (in one step: a reader sees the old or the new, whole).

    A missing file is no fault (a build that wrote nothing); bytes that are
    not UTF-8 are kept as ``\\xNN`` escapes too.
    """
    try:
        text = path.read_bytes().decode("utf-8", "backslashreplace")
    except OSError:
        return
    safe = visible(text)
    if safe == text:
        return
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(safe)
        os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def make_logs_visible(folder: Path) -> None:
    """:func:`make_log_visible` for every ``*.log`` file under ``folder`` (a game's folder: its stderr logs)."""
    for path in sorted(folder.rglob("*.log")) if folder.is_dir() else ():
        if path.is_file() and not path.is_symlink():
            make_log_visible(path)


class VisibleFormatter(logging.Formatter):
    """A log formatter that writes what ``inner`` writes, made :func:`visible`: a log line that quotes a student's
    text (an exception's message, a traceback) acts on no terminal either."""

    def __init__(self, inner: Optional[logging.Formatter]) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return visible(self.inner.format(record))


def make_loggers_visible(*names: str) -> None:
    """Every handler of the loggers ``names`` writes through a :class:`VisibleFormatter` (once)."""
    for name in names:
        for handler in logging.getLogger(name).handlers:
            if not isinstance(handler.formatter, VisibleFormatter):
                handler.setFormatter(VisibleFormatter(handler.formatter))
