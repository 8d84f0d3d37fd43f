"""The known mistakes of agents, recognised from what they left: the one place of the hints.

``othello check`` (:mod:`othello_arena.agents.check`), ``othello play`` and
``othello match`` show the same advice under a crashed or faulty agent: a
hint is a sentence saying what most likely went wrong and how to fix it,
drawn from the agent's standard output and error (its ``NAME.stderr.log``),
its exit code and how many moves it had made.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Optional

TAIL_LINES = 12  # the last lines of an agent's output shown under its fault
# What ``{home}`` is where the hint is read: on this machine (othello play, match, check), or on a class server
# (the submission's own folder there, its built copy), so that a hint never points a student at the wrong folder.
HOME_HERE = "the folder you ran othello in"
HOME_ON_SERVER = "your submission's folder on the server (its files and what its build line made)"

# A move line as an agent would write it, printed on standard output instead of into NAME.out.
_PRINTED_MOVE = re.compile(r"^\s*(\(\s*[WBwb]\s+(?:[A-Na-n]\s*\d{1,2}|[Pp])\s*\))\s*$")


ORIENTATION = ("its first move as White was illegal and it refused White's first move as Black: is its board "
               "upside down or turned? Rows count from the bottom (row 1 is the bottom row, A1 the bottom left); "
               "White starts on D5 and E4, Black on D4 and E5, and White moves first (PROTOCOL.md section 1)")


def printed_move(output: str, sent: Iterable[str] = ()) -> Optional[str]:
    """The first move line in an agent's standard output and error, such as ``(W D 3)``, that it did not also
    write into its ``NAME.out`` (``sent``: the move lines the referee read from it); ``None`` if none.

    The two streams come in one log, so a move printed there may be an echo
    (many students print each move on stderr as they write it): only a move
    the referee never got says that it went to standard output instead.

    >>> printed_move("thinking...\\n(W D 3)\\n")
    '(W D 3)'
    >>> printed_move("(W D 3)\\n(W C 4)\\n", sent=["(W D 3)", "(w c 4)"]) is None
    True
    """
    received = {_plain(line) for line in sent}
    for line in output.splitlines():
        match = _PRINTED_MOVE.match(line)
        if match and _plain(match.group(1)) not in received:
            return match.group(1)
    return None


def _plain(line: str) -> str:
    """A move line compared whatever its case and spacing: ``( w d  3 )`` is ``(W D 3)``."""
    return " ".join(line.upper().replace("(", " ( ").replace(")", " ) ").split())


def hints(output: str, exit_code: Optional[int] = None, moves_made: Optional[int] = None,
          out_name: str = "NAME.out", sent: Iterable[str] = (), home: str = HOME_HERE) -> list[str]:
    """What the agent's ``output``, its ``exit_code`` and ``moves_made`` point to, one sentence each.

    ``exit_code`` is ``None`` while it runs (or unknown), ``moves_made`` the
    moves the referee had read from it (``None``: unknown); ``out_name`` is
    its ``NAME.out``; ``sent`` the move lines the referee read from it
    (a printed move among them is an echo, not a mistake: :func:`printed_move`);
    ``home`` what ``{home}`` is where the hint is read (:data:`HOME_HERE`, :data:`HOME_ON_SERVER`).

    >>> hints("", exit_code=0, moves_made=0)[0][:46]
    'it exited (code 0) before its first move: in t'
    """
    found: list[str] = []
    move = printed_move(output, sent)
    if move is not None:
        found.append(f"your program printed {move} on standard output: write it to {out_name} "
                     "(a new file, then rename it to that name; PROTOCOL.md section 3)")
    if "Could not find or load main class" in output:
        found.append("the JVM looked for the class in the game folder, where the agent runs: "
                     f"use `java -cp {{home}} CLASS` ({{home}} is {home})")
    if exit_code == 0 and moves_made == 0 and move is None:
        found.append("it exited (code 0) before its first move: in the sandbox an agent runs in its own PID "
                     "namespace under process 1, so `getppid() == 1` holds from the start; to notice that the "
                     "referee is gone, remember getppid() when you start and compare with it, or simply stop "
                     "at the end line (PROTOCOL.md section 3)")
    return found


def output_tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    """The last ``lines`` lines of an agent's output file (none if it is missing or empty)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return text.rstrip("\n").splitlines()[-lines:]


__all__ = ["HOME_HERE", "HOME_ON_SERVER", "ORIENTATION", "TAIL_LINES", "hints", "output_tail", "printed_move"]
