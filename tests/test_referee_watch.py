"""What wakes the referee (referee/watch.py) and how it writes a NAME.in (referee/seat.py), on real files.

The inotify waker is read by the waiting thread itself (issue 27): these tests
drive it from this thread and from others, with no timing assertion.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from othello_arena.referee.seat import AgentSeat
from othello_arena.referee.spec import AgentSpec
from othello_arena.referee.watch import InotifyWaker, make_waker

HOUR = 3600.0  # a safety interval no test waits for: a wait that returns was woken


def test_a_file_renamed_into_place_wakes_the_waiter_and_is_complete(tmp_path: Path) -> None:
    waker = InotifyWaker([tmp_path], names=["x.out"], safety_interval=HOUR)
    try:
        temp = tmp_path / "x.out.tmp"
        temp.write_text("(W D 3)\n")
        os.rename(temp, tmp_path / "x.out")
        waker.wait(None)  # returns: the rename woke it
        assert waker.is_closed(tmp_path / "x.out", lambda: [])
        assert waker.events >= 1
    finally:
        waker.close()


def test_a_file_written_in_place_is_complete_only_once_closed(tmp_path: Path) -> None:
    waker = InotifyWaker([tmp_path], names=["x.out"], safety_interval=HOUR)
    path = tmp_path / "x.out"
    try:
        with open(path, "w") as handle:
            handle.write("(W D")
            handle.flush()
            waker.wait(None)
            assert not waker.is_closed(path, lambda: [])
            handle.write(" 3)")
        # the close is told without a wait: is_closed reads what the kernel has said so far
        assert waker.is_closed(path, lambda: [])
        os.remove(path)
        waker.forget(path)
        assert not waker.is_closed(path, lambda: [])
    finally:
        waker.close()


def test_only_the_watched_names_count(tmp_path: Path) -> None:
    waker = InotifyWaker([tmp_path], names=["x.out"], safety_interval=HOUR)
    try:
        (tmp_path / "notes.txt").write_text("thinking")
        (tmp_path / "x.out").write_text("(W D 3)\n")
        waker.wait(None)
        assert not waker.is_closed(tmp_path / "notes.txt", lambda: [])
        counted = waker.events
        (tmp_path / "notes.txt").write_text("more")
        assert waker.is_closed(tmp_path / "x.out", lambda: [])  # (reads the events waiting)
        assert waker.events == counted  # the other file's events woke nobody
    finally:
        waker.close()


def test_a_poke_from_another_thread_wakes_the_waiter(tmp_path: Path) -> None:
    waker = InotifyWaker([tmp_path], safety_interval=HOUR)
    waiting = threading.Event()

    def poke_when_waiting() -> None:
        waiting.wait(60)
        waker.poke()

    poker = threading.Thread(target=poke_when_waiting)
    poker.start()
    try:
        waiting.set()
        waker.wait(None)  # returns: poked (a poke before the wait counts as well)
    finally:
        poker.join(60)
        waker.close()
    waker.poke()  # after close: nothing happens (no write into a closed descriptor)


def test_a_poke_before_the_wait_is_not_lost(tmp_path: Path) -> None:
    waker = make_waker([tmp_path])
    try:
        assert waker.mode == "inotify"
        waker.poke()
        waker.wait(HOUR)
    finally:
        waker.close()


def test_the_next_in_file_is_made_ahead_and_used_then(tmp_path: Path) -> None:
    seat = AgentSeat(AgentSpec.program("x", ["true"]), tmp_path / "x", tmp_path / "x.stderr.log")
    temp_dir = tmp_path / ".referee"
    temp_dir.mkdir()
    seat.open()
    seat.temp_fd = os.open(temp_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        seat.prepare_in()
        seat.prepare_in()  # one is enough
        made = os.listdir(temp_dir)
        assert len(made) == 1
        seat.write_in("(B D 3)\n")
        assert os.listdir(temp_dir) == []  # the one made ahead became x.in
        assert (tmp_path / "x" / "x.in").read_text() == "(B D 3)\n"
        seat.write_in("(B C 4)\n")  # none ready: one is made on the spot
        assert (tmp_path / "x" / "x.in").read_text() == "(B C 4)\n"
        seat.prepare_in()
        assert len(os.listdir(temp_dir)) == 1
    finally:
        seat.close()
        os.close(seat.temp_fd)
    assert os.listdir(temp_dir) == []  # closing the seat deletes the one not used


def test_a_closed_wakers_inotify_descriptor_is_released(tmp_path: Path) -> None:
    # The close itself is handed to a thread (it waits for the kernel's grace period): it must still happen.
    import time

    def is_inotify(number: int) -> bool:
        try:
            return os.readlink(f"/proc/self/fd/{number}") == "anon_inode:inotify"
        except OSError:
            return False

    # Each waker's own descriptor, by number: a count of every inotify descriptor of this process would include
    # an earlier test's, whose close may happen (in its thread) at any moment of this one.
    wakers = [InotifyWaker([tmp_path], names=["x.out"], safety_interval=HOUR) for _ in range(5)]
    numbers = [waker._fd for waker in wakers]
    assert all(is_inotify(number) for number in numbers)
    for waker in wakers:
        waker.close()
    deadline = time.monotonic() + 30
    while any(is_inotify(number) for number in numbers) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(is_inotify(number) for number in numbers), "a closed waker's inotify descriptor is still open"
