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

import ctypes
import os
import queue
import select
import struct
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


# inotify(7): the event bits the referee asks for, and the ones the kernel adds on its own.
IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x8, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DONT_FOLLOW, IN_Q_OVERFLOW, IN_IGNORED = 0x100, 0x200, 0x02000000, 0x4000, 0x8000
_EVENT_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then len bytes of name)


class InotifyWaker(_EventDrivenWaker):
    """inotify events read by the waiting thread itself (Linux): one wake-up per event, no thread between.

    The game's thread sleeps in ``poll`` on its own inotify descriptor (and
    on an eventfd that :meth:`poke` writes, from any thread), and reads the
    events itself when it wakes.  A reader thread (watchdog's) would add a
    second wake-up and a hand-over of the GIL to every relay; on a loaded
    machine each is a wait for a CPU, and a thread preempted while it holds
    the GIL holds up the referee too (issue 27: the relay's tail under load).
    Each waker has its own descriptor, so games in threads and a process
    forked after a game need nothing shared.
    """

    mode = "inotify"

    def __init__(
        self, directories: Iterable[Path], names: Optional[Iterable[str]] = None, safety_interval: float = 0.5
    ) -> None:
        super().__init__(safety_interval)
        # Events on other names (an agent's own temporary files) wake nobody.
        self._names = None if names is None else {os.fsencode(name) for name in names}
        self._paths: dict[int, bytes] = {}
        self._lock = threading.Lock()  # poke (any thread) against close
        self._fd = _LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)  # (IN_NONBLOCK, IN_CLOEXEC are these)
        if self._fd < 0:
            raise _errno_error("inotify_init1")
        self._poke_fd = -1
        try:
            self._poke_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
            mask = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DONT_FOLLOW
            for directory in directories:
                wd = _LIBC.inotify_add_watch(self._fd, os.fsencode(directory), mask)
                if wd < 0:
                    raise _errno_error(f"inotify_add_watch {directory}")
                self._paths[wd] = os.fsencode(directory)
        except BaseException:
            self.close()
            raise
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)
        self._poll.register(self._poke_fd, select.POLLIN)

    def poke(self) -> None:
        with self._lock:
            if self._poke_fd >= 0:
                os.eventfd_write(self._poke_fd, 1)

    def wait(self, timeout: Optional[float]) -> None:
        self._take_events()
        if self._generation == self._seen:
            cap = self._cap(timeout)
            self._poll.poll(None if cap is None else cap * 1000)
            self._take_events()
        self._seen = self._generation

    def is_closed(self, path: Path, writers: Callable[[], Iterable[int]]) -> bool:
        self._take_events()  # a close the kernel has told and nobody has read yet
        return super().is_closed(path, writers)

    def _take_events(self) -> None:
        """Read every event waiting (never blocks): note the writers' closes, count the wake-ups."""
        if self._fd < 0:
            return
        try:
            if os.eventfd_read(self._poke_fd):
                self._generation += 1
        except BlockingIOError:
            pass
        while True:
            try:
                buffer = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            offset = 0
            while offset + _EVENT_HEADER.size <= len(buffer):
                wd, mask, _, length = _EVENT_HEADER.unpack_from(buffer, offset)
                name = buffer[offset + _EVENT_HEADER.size : offset + _EVENT_HEADER.size + length].rstrip(b"\0")
                offset += _EVENT_HEADER.size + length
                self._on_event(wd, mask, name)

    def _on_event(self, wd: int, mask: int, name: bytes) -> None:
        if mask & (IN_Q_OVERFLOW | IN_IGNORED):  # events lost, or a directory gone: look at the files
            self._generation += 1
            return
        if self._names is not None and name and name not in self._names:
            return
        directory = self._paths.get(wd)
        if directory is not None and name:
            path = os.fsdecode(os.path.join(directory, name))
            with self._cond:
                if mask & (IN_CLOSE_WRITE | IN_MOVED_TO):
                    self._closed[path] = True  # written and closed, or renamed into place
                elif mask & (IN_CREATE | IN_MODIFY):
                    self._closed[path] = False
                else:  # deleted or moved away
                    self._closed.pop(path, None)
        self.events += 1
        self._generation += 1

    def close(self) -> None:
        with self._lock:
            if self._poke_fd >= 0:
                os.close(self._poke_fd)
            if self._fd >= 0:
                _close_later(self._fd)
            self._fd = self._poke_fd = -1


_LIBC = ctypes.CDLL(None, use_errno=True)

# Closing an inotify descriptor waits for the kernel's grace period (about 15 ms here, issue 27: a
# fifth of a quick game's whole overhead), and nothing waits for that close: a thread of its own does
# it, one per process (started again in a process forked after a game).
_closing: "queue.SimpleQueue[int]" = queue.SimpleQueue()
_closer_pid = 0
_closer_lock = threading.Lock()


def _close_later(fd: int) -> None:
    global _closer_pid
    with _closer_lock:
        if _closer_pid != os.getpid():
            _closer_pid = os.getpid()
            threading.Thread(target=_close_forever, name="inotify-closer", daemon=True).start()
    _closing.put(fd)


def _close_forever() -> None:
    while True:
        fd = _closing.get()
        try:
            os.close(fd)
        except OSError:
            pass


def _errno_error(what: str) -> OSError:
    number = ctypes.get_errno()
    return OSError(number, f"{what}: {os.strerror(number)}")


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
        except (AttributeError, OSError):
            pass  # not Linux (no inotify in libc, no eventfd), or no inotify instance or watch left
        try:
            return EventWaker(directories)
        except OSError:
            pass
    return PollingWaker(interval)
