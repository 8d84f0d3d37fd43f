"""The class server's two processes: the pages in the server's, the checks and the ladder in a worker it starts
(classroom/worker.py), started again when it dies, ended with the server; real processes, a real check."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Optional

import psutil
import pytest

from classroom_helpers import make_class
from test_classroom_operation import FAST, LoggedServer, said
from test_classroom_server import EXAMPLES, get_json, send_files, version_status, wait_for

WORKER = "othello_arena.classroom.worker"


def worker_of(server_pid: int) -> Optional[int]:
    """The pid of the server's worker process, ``None`` while it has none."""
    try:
        children = psutil.Process(server_pid).children()
    except psutil.NoSuchProcess:
        return None
    for child in children:
        try:
            if WORKER in child.cmdline() and child.status() != psutil.STATUS_ZOMBIE:
                return int(child.pid)
        except psutil.NoSuchProcess:
            continue
    return None


@pytest.mark.slow
def test_the_worker_dies_it_is_started_again_and_checks_go_on_the_server_dies_it_dies_too(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice"], ["random"], time=0.5)
    starter = (EXAMPLES / "starter.py").read_bytes()
    server = LoggedServer(folder, tmp_path / "serve.log", "-j", "1")
    try:
        assert "Ctrl-C stops it." in server.start[-1] and any(line.startswith("Games at once: 1") for line in server.start)
        # the pages answer once the worker is ready (the address was printed before: a request waits till then)
        assert get_json(server.base, "/api/me", tokens["alice"])["versions"] == []
        # what the pages' process read at its start is kept out of the collector's full passes (they held everything)
        assert wait_for(lambda: said(server, r"the start's reads set aside from the garbage collector: [1-9][0-9]* "
                                             r"objects"), 120, "the pages' process setting its start's reads aside")
        first = worker_of(server.process.pid)
        assert first is not None, "the server started no worker"
        os.kill(first, signal.SIGKILL)
        assert wait_for(lambda: said(server, r"the admission checks and the ladder ended unexpectedly \(status -9\): "
                                             r"started again"), 60, "the server saying its worker died")
        second = wait_for(lambda: (pid := worker_of(server.process.pid)) not in (None, first) and pid, 60,
                          "a second worker")
        # an upload sent now is checked by the worker started again
        status, alice = send_files(server.base, tokens["alice"], [("agent.py", starter)], FAST)
        assert status == 201, alice
        card = wait_for(lambda: version_status(server.base, tokens["alice"], alice["id"]), 600, "alice's card")
        assert card["status"] == "admitted", card
        assert worker_of(server.process.pid) == second

        # the server killed outright: its worker ends with it (and with it the lock, so a new server may start)
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()
        assert wait_for(lambda: not psutil.pid_exists(second) or psutil.Process(second).status() == psutil.STATUS_ZOMBIE,
                        30, "the worker ending with the server")
    finally:
        server.stop()
    again = LoggedServer(folder, tmp_path / "serve-again.log", "-j", "1")
    try:
        assert get_json(again.base, "/api/me", tokens["alice"])["versions"][0]["status"] == "admitted"  # (ready)
        assert worker_of(again.process.pid) is not None
    finally:
        again.stop()
    assert said(again, r"the admission checks and the ladder stopped"), again.events()


def test_a_worker_that_cannot_start_stops_the_server_with_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random"])
    # nothing listens on port 9 of this machine: the worker cannot reach the Dask scheduler
    result = subprocess.run([sys.executable, "-m", "othello_arena", "class", "serve", str(folder), "--port", "0",
                             "--dask", "tcp://127.0.0.1:9"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the admission checks and the ladder cannot start: cannot reach the Dask scheduler at tcp://127.0.0.1:9" \
        in result.stderr, result.stderr


@pytest.mark.slow
def test_the_worker_keeps_the_standings_current_and_the_pages_read_them(tmp_path: Path) -> None:
    """The standings are worked out in the worker as games finish (classroom/grades.py: keep_standings): the row in
    the database follows the class with no page asked, and /api/standings gives what it holds."""
    from othello_arena.classroom.grades import compute_standings, kept_standings, standings, standings_key
    from othello_arena.classroom.settings import load
    from othello_arena.classroom.store import ClassStore
    from test_classroom_final import admitted
    from test_classroom_server import games_by_status, serving

    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice"], ["greedy"], time=0.25)
    admitted(folder, "alice", "2026-05-30T10:00:00+00:00", "v1")
    settings = load(folder)
    store = ClassStore(settings.database)
    try:
        before = standings(settings, store)  # kept now: the pages' process has a row and never computes one
        assert before[0][0].games == 0
        with serving(folder, "-j", "1") as server:
            wait_for(lambda: len(games_by_status(folder).get("finished", [])) >= 2, 600, "two games against greedy")
            assert wait_for(lambda: store.worked_out_mark("standings") == standings_key(settings, store), 60,
                            "the worker keeping the standings of the games finished")
            kept = kept_standings(settings, store)
            assert kept is not None and kept[0][0].games >= 2
            assert kept == compute_standings(settings, store) or \
                store.worked_out_mark("standings") != standings_key(settings, store)  # (or a game finished since)
            shown = wait_for(lambda: [line for line in get_json(server.base, "/api/standings", tokens["alice"])
                                      ["students"] if line["id"] == "alice" and line["games"] >= 2], 30,
                             "alice's games in /api/standings")
            assert shown[0]["rating"] is not None
    finally:
        store.close()
