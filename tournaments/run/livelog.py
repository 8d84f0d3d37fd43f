"""A game's live log: the referee's events as JSON lines, so another process can follow the game.

``game.json`` is written once, when the game ends.  While a game is played,
whoever runs it (the tournament runner, the web app) appends one line per
referee event to ``live.jsonl`` in the game directory: the start position,
whose turn it is and since when, each move with its time, its comment lines
and both clocks, a person's refused move, the result.  A reader in another
process (``othello serve`` watching a tournament) follows the game from it
without ever writing anything.  The directory is the game directory, which no
agent can see (PROTOCOL.md section 2).

Each line is one JSON object with ``event`` and ``at`` (wall-clock seconds,
``time.time()``, comparable across processes):

- ``{"event": "start", "white": NAME, "black": NAME, "board": OBF}``;
- ``{"event": "waiting", "colour": "W", "time_limit": 5.0, "manual": false}``;
- ``{"event": "move", "colour": "W", "move": "(W D 3)", "seconds": 0.8, "comments": [...],
  "clocks": {"W": 0.8, "B": 0.0}, "forfeit": false}``;
- under a game clock, ``waiting`` and ``move`` also have ``"banks": {"W": 12.3, "B": 9.8}``, what is
  left of each side's bank (``null`` for a side without one);
- ``{"event": "retry", "colour": "B", "message": "..."}`` (a person asked again);
- ``{"event": "end", "result": {...}}`` (as in ``game.json``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from ...protocol import format_obf
from ...protocol.record import result_to_dict
from ..results.safefiles import read_whole

LIVE_LOG = "live.jsonl"
LIVE_LOG_LIMIT = 4 << 20  # bytes read at most: a 60-move game with long comments is far smaller
COMMENTS_KEPT = 5  # comment lines of each move kept in the log (the record keeps them all)
COMMENT_LENGTH = 300  # characters of each


_LOGGED = frozenset({"start", "waiting", "move", "lost-turn", "retry", "end"})


def event_entry(event: Any) -> dict[str, Any] | None:
    """The log line for a referee :class:`~othello_arena.referee.GameEvent`, or ``None`` for an event not logged."""
    if event.kind not in _LOGGED:  # (a relay's own event, a warning: one a move, so said at once)
        return None
    entry: dict[str, Any] = {"event": event.kind, "at": round(time.time(), 3)}
    colour = event.colour.value if event.colour is not None else None
    if event.kind == "start":
        names = {c.value: name for c, name in event.names.items()}
        entry.update(white=names.get("W", ""), black=names.get("B", ""), board=format_obf(event.board))
        if event.board.size != 8:  # a bigger board (PROTOCOL.md section 9): its n*n cells need the size to be read
            entry.update(size=event.board.size)
    elif event.kind == "waiting":
        entry.update(colour=colour, time_limit=event.time_limit, manual=event.manual)
    elif event.kind in ("move", "lost-turn"):
        entry.update(
            event="move", colour=colour, move=event.move.line(), seconds=round(event.seconds, 3),
            comments=[str(c)[:COMMENT_LENGTH] for c in event.comments[:COMMENTS_KEPT]],
            clocks={c.value: round(s, 3) for c, s in event.clocks.items()}, forfeit=event.kind == "lost-turn",
        )
    elif event.kind == "retry":
        entry.update(colour=colour, message=event.message)
    elif event.kind == "end" and event.record is not None and event.record.result is not None:
        entry.update(result=result_to_dict(event.record.result))
        if event.record.fault is not None:  # the faulty answer as written (the page shows it under the result)
            entry.update(fault=event.record.fault.to_dict())
    else:
        return None
    banks = getattr(event, "banks", {})
    if entry["event"] in ("waiting", "move") and any(bank is not None for bank in banks.values()):
        entry["banks"] = {c.value: None if b is None else round(b, 3) for c, b in banks.items()}
    return entry


class LiveLogWriter:
    """A referee event callback that appends each event to ``directory/live.jsonl``.

    The file is opened at the first event and closed after the ``end``
    event (or when the writer is dropped): two events a move, each an open
    and a close of its own, were a tenth of the referee's time a move
    (issue 38).  Each line is still one ``write`` in append mode, so a
    reader sees whole lines and a line being written, never a torn one in
    the middle.  A failure to write is swallowed (the referee would only
    note it as a warning): a live view is a convenience, never a reason to
    lose a game.
    """

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / LIVE_LOG
        self._lock = threading.Lock()
        self._fd = -1

    def __call__(self, event: Any) -> None:
        entry = event_entry(event)
        if entry is None:
            return
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        with self._lock:
            if self._fd < 0:
                try:
                    self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                                       0o644)
                except OSError:
                    return
            try:
                os.write(self._fd, line.encode("utf-8"))
            except OSError:
                pass
            if entry["event"] == "end":
                self._close()

    def close(self) -> None:
        """Close the file (the next event opens it again)."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self, _close: Any = os.close) -> None:  # a game that ended without its end event (the referee failed)
        if self._fd >= 0:
            try:
                _close(self._fd)
            except OSError:
                pass
            self._fd = -1


def read_live_log(directory: Path) -> list[dict[str, Any]]:
    """The events of ``directory/live.jsonl`` so far (``[]`` if there is none); a line being written is left out."""
    try:
        data = read_whole(Path(directory), LIVE_LOG, LIVE_LOG_LIMIT)
    except OSError:
        return []
    entries = []
    for line in data.decode("utf-8", errors="replace").split("\n")[:-1]:  # the last piece is unfinished or empty
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("event"), str):
            entries.append(entry)
    return entries
