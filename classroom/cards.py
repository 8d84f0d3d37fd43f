"""What a version's card says to its student: the build's own words first, the referee's lines apart, and never a
path of the server's (where the class folder is, the instructor's toolchains).

The build log the referee writes starts with its own lines (``[referee: the
build's environment: PATH=...]``, 4 to 10 of them) and then holds the
build's output; a card keeps the two apart (:func:`split_build_log`), so the
compiler's ``error:`` line comes first and the referee's lines fold away.
The whole log stays in ``cards/ID/FP.build.log`` for the instructor.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .arena import is_system_path

REFEREE_LINE = "[referee: "  # how the referee's own lines in a build log start
SERVER_FOLDER = "…"  # what a student sees in place of a path of the server's
HOME = "{home}"  # what a student sees in place of their version's build folder: the name its command line gives it
_ABSOLUTE = re.compile(r"(?<![\w.{}~-])/[^\s:;,'\"\]()]*")  # a path from the root, up to a separator of a list


def split_build_log(text: str) -> tuple[tuple[str, ...], str]:
    """``(the referee's lines, the build's own output)`` of a build log: the referee's lines are those it starts with."""
    lines = text.splitlines()
    head = 0
    while head < len(lines) and lines[head].startswith(REFEREE_LINE):
        head += 1
    return tuple(lines[:head]), "\n".join(lines[head:])


def hide_paths(text: str) -> str:
    """``text`` with each absolute path outside the system's folders (``/usr``, ``/bin``, ``/etc``...) as ``…``.

    For what the referee says of the server (its ``PATH``, its toolchains'
    homes): the student learns that a toolchain is there, not where the
    instructor keeps it.

    >>> hide_paths("[referee: the build's environment: PATH=/home/prof/.cargo/bin:/usr/bin:/bin]")
    "[referee: the build's environment: PATH=…:/usr/bin:/bin]"
    """
    return _ABSOLUTE.sub(lambda found: found.group() if _shown(found.group()) else SERVER_FOLDER, text)


def _shown(path: str) -> bool:
    return path in ("/", "/tmp") or is_system_path(Path(path))  # (a class folder may be under /tmp: not shown)


def for_student(text: str, home: Path, folder: Path) -> str:
    """``text`` (a build's output, the check's lines, the program's stderr) with the build folder ``home`` as
    ``{home}`` and anything else in the class ``folder`` as ``…``: the student's own paths, none of the server's."""
    for path, shown in ((home, HOME), (folder, SERVER_FOLDER)):
        for form in sorted({str(path), os.path.realpath(path)}, key=len, reverse=True):
            text = text.replace(form, shown)
    return text


def referee_lines_for_student(lines: tuple[str, ...], home: Path, folder: Path) -> tuple[str, ...]:
    """The referee's lines of a build log as the card shows them: the build folder as ``{home}``, other paths hidden."""
    return tuple(hide_paths(for_student(line, home, folder)) for line in lines)


__all__ = ["REFEREE_LINE", "SERVER_FOLDER", "HOME", "split_build_log", "hide_paths", "for_student",
           "referee_lines_for_student"]
