"""Waking the referee when something happens: file events, or polling.

The referee never trusts an event's content: an event only wakes it, and it
then looks at the files themselves.  So a lost or coalesced event costs at
most a poll interval, never a wrong reading.  Both watchers also tell
whether a file was last *closed* by its writer (needed for a move line
that ends with ``)`` and no newline, PROTOCOL.md section 3.5): the event
watcher from ``IN_CLOSE_WRITE``; the polling watcher by asking the system
whether any process of the agent still holds the file open for writing.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Optional

from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)


class Waker:
    """Something the game loop can sleep on until the files may have changed."""

    mode = "none"

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._generation = 0
        self._seen = 0
        self.events = 0  # file events received (0 when polling)

    def poke(self) -> None:
        """Wake the waiting referee (a file event, a process exit...)."""
        with self._cond:
            self._generation += 1
            self._cond.notify_all()

    def wait(self, timeout: Optional[float]) -> None:
        """Return when poked since the last call, or after ``timeout`` seconds."""
        with self._cond:
            if self._generation == self._seen:
                self._cond.wait(self._cap(timeout))
            self._seen = self._generation

    def _cap(self, timeout: Optional[float]) -> Optional[float]:
        return timeout

    def is_closed(self, path: Path, writers: Callable[[], Iterable[int]]) -> bool:
        """Whether the last writer of ``path`` has closed it."""
        raise NotImplementedError

    def forget(self, path: Path) -> None:
        """The referee removed ``path``: drop what is known about its writer."""

    def close(self) -> None:
        """Stop watching (idempotent)."""


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: "EventWaker") -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.watcher._on_event(event)


class _EventDrivenWaker(Waker):
    """What both file-event wakers share: the writers' closes they saw, and a safety cap."""

    def __init__(self, safety_interval: float) -> None:
        super().__init__()
        self._closed: dict[str, bool] = {}  # path -> closed by its writer since it last changed
        self._safety = safety_interval

    def _cap(self, timeout: Optional[float]) -> Optional[float]:
        # A bounded sleep even with events: protection against a lost event.
        return self._safety if timeout is None else min(timeout, self._safety)

    def is_closed(self, path: Path, writers: Callable[[], Iterable[int]]) -> bool:
        with self._cond:
            return self._closed.get(str(path), False)

    def forget(self, path: Path) -> None:
        with self._cond:
            self._closed.pop(str(path), None)


class EventWaker(_EventDrivenWaker):
    """File events from a watchdog ``Observer`` (any system watchdog supports)."""

    mode = "events"

    def __init__(self, directories: Iterable[Path], safety_interval: float = 0.5) -> None:
        super().__init__(safety_interval)
        from watchdog.observers import Observer

        self._observer = Observer()
        self._stopped = True
        # Only the events the referee uses: not opens, reads and read-only
        # closes, which every reading of a file (ours, the agents') would send.
        wanted = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileClosedEvent, FileDeletedEvent]
        for directory in directories:
            self._observer.schedule(_Handler(self), str(directory), recursive=False, event_filter=wanted)
        self._observer.daemon = True
        self._observer.start()  # raises OSError if inotify is unavailable (limits, file system)
        self._stopped = False

    def _on_event(self, event: FileSystemEvent) -> None:
        with self._cond:
            src = os.fsdecode(event.src_path)
            if isinstance(event, FileMovedEvent):
                self._closed[src] = False
                self._closed[os.fsdecode(event.dest_path)] = True  # renamed into place: complete
            elif isinstance(event, FileClosedEvent):
                self._closed[src] = True
            elif isinstance(event, (FileCreatedEvent, FileModifiedEvent)):
                # Not on open: the referee's own reading opens the file too.
                self._closed[src] = False
            elif isinstance(event, FileDeletedEvent):
                self._closed.pop(src, None)
            self.events += 1
            self._generation += 1
            self._cond.notify_all()

    def close(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._observer.stop()
        self._observer.join(timeout=5)


class InotifyWaker(_EventDrivenWaker):
    """inotify events through watchdog's shared inotify reader thread (Linux).

    watchdog's ``Observer`` hands each event through two more threads (an
    emitter, then a dispatcher) before a handler sees it; each hand-over is
    a wait for the GIL, which costs the relay a few tenths of a millisecond.
    Here the callback runs in watchdog's one inotify thread, and a whole
    process (a tournament playing many games in threads) shares that thread.
    """

    mode = "inotify"

    def __init__(
        self, directories: Iterable[Path], names: Optional[Iterable[str]] = None, safety_interval: float = 0.5
    ) -> None:
        super().__init__(safety_interval)
        from watchdog.observers.inotify_c import InotifyConstants as K
        from watchdog.observers.inotify_c import InotifyFD

        # Events on other names (an agent's own temporary files) wake nobody.
        self._names = None if names is None else {os.fsencode(name) for name in names}
        shared = InotifyFD.get_instance()
        self._own = not shared.is_alive()
        if self._own:
            # A forked child (a process pool of a tournament) inherits the
            # shared reader without its thread: read with one of our own.
            self._fd = InotifyFD()
            self._fd.start()
        else:
            self._fd = shared
        self._paths: dict[int, str] = {}
        mask = K.IN_CREATE | K.IN_MODIFY | K.IN_CLOSE_WRITE | K.IN_MOVED_TO | K.IN_MOVED_FROM | K.IN_DELETE
        self._registered: list[tuple[int, int]] = []
        try:
            for directory in directories:
                wd = self._fd.add_callback(
                    os.fsencode(directory), mask | K.IN_DONT_FOLLOW, self, id(self)  # type: ignore[arg-type]
                )
                self._paths[wd] = str(directory)
                self._registered.append((wd, id(self)))
        except BaseException:
            self.close()
            raise

    # -- watchdog's WatchCallback protocol (called in its inotify thread) -------

    def on_event(self, event: object) -> None:
        name = getattr(event, "name", b"")
        if self._names is not None and name and name not in self._names:
            return
        with self._cond:
            directory = self._paths.get(getattr(event, "wd", -1))
            if directory is not None and name:
                path = os.path.join(directory, os.fsdecode(name))
                if event.is_close_write or event.is_moved_to:  # type: ignore[attr-defined]
                    self._closed[path] = True  # written and closed, or renamed into place
                elif event.is_create or event.is_modify:  # type: ignore[attr-defined]
                    self._closed[path] = False
                else:  # deleted or moved away
                    self._closed.pop(path, None)
            self.events += 1
            self._generation += 1
            self._cond.notify_all()

    def on_watch_deleted(self, wd: int) -> None:
        self.poke()

    def on_queue_overflow(self) -> None:
        self.poke()

    # -- Waker ---------------------------------------------------------------------

    def close(self) -> None:
        registered, self._registered = self._registered, []
        if registered:
            self._fd.remove_callbacks(registered)  # type: ignore[arg-type]
        if self._own:
            self._own = False
            self._fd.stop()
            self._fd.join(timeout=5)


class PollingWaker(Waker):
    """No file events: look at the files every ``interval`` seconds."""

    mode = "polling"

    def __init__(self, interval: float = 0.005, settle: float = 0.3) -> None:
        super().__init__()
        self.interval = interval
        self.settle = settle
        self._stable: dict[str, tuple[tuple[int, int, int], float]] = {}

    def _cap(self, timeout: Optional[float]) -> Optional[float]:
        return self.interval if timeout is None else min(timeout, self.interval)

    def is_closed(self, path: Path, writers: Callable[[], Iterable[int]]) -> bool:
        pids = list(writers())
        if pids:
            return not _held_open(path, pids)
        # A person's editor is not our child: closed once unchanged for a while.
        try:
            info = os.stat(path, follow_symlinks=False)
        except OSError:
            return False
        key = (info.st_size, info.st_mtime_ns, info.st_ino)
        now = time.monotonic()
        previous = self._stable.get(str(path))
        if previous is None or previous[0] != key:
            self._stable[str(path)] = (key, now)
            return False
        return now - previous[1] >= self.settle

    def forget(self, path: Path) -> None:
        self._stable.pop(str(path), None)


def _held_open(path: Path, pids: Iterable[int]) -> bool:
    """Whether one of ``pids`` holds ``path`` open for writing.

    Compared by device and inode, never by name: a sandboxed agent's open
    files show the path it sees (``/game/NAME/NAME.out``), not the real one.
    """
    try:
        target = os.stat(path)
    except OSError:
        return False
    for pid in pids:
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in descriptors:
            try:
                found = os.stat(f"/proc/{pid}/fd/{fd}")  # follows the link to the open file itself
                if (found.st_dev, found.st_ino) != (target.st_dev, target.st_ino):
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as handle:
                    flags = next((int(line.split()[1], 8) for line in handle if line.startswith("flags:")), 0)
            except (OSError, ValueError, IndexError):
                continue
            if flags & os.O_ACCMODE != os.O_RDONLY:
                return True
    return False


def make_waker(
    directories: Iterable[Path], polling: bool = False, interval: float = 0.005, names: Optional[Iterable[str]] = None
) -> Waker:
    """File events on ``directories`` if possible (and not ``polling``), else polling.

    With ``names``, only events on files of those names wake the referee.

    If the event observer cannot start (no inotify, watch limit reached),
    the referee falls back to polling rather than failing the game.
    """
    directories = list(directories)
    if not polling:
        try:
            return InotifyWaker(directories, names)
        except (ImportError, AttributeError, OSError):
            pass  # not Linux, another watchdog, or no inotify watch left
        try:
            return EventWaker(directories)
        except OSError:
            pass
    return PollingWaker(interval)
