"""The memory rule (referee/memory.py): what the watchdog counts is the sandbox's own, never the host's.

Without a cgroup (a user who may make none: the README's newcomer, a lab
machine), the referee's watchdog measures an agent's memory.  While bwrap
still sets the sandbox up, the ``/proc``, ``/tmp`` and ``/dev/shm`` seen
through its first process are the host's: counted, they killed correct agents
at their start as "out of memory" (issue 35: with the watch at 2 ms, 13 of 20
games of random against random).  These tests run the referee as an
unprivileged user with the watch every 2 ms.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Optional

import pytest
from sandbox_helpers import unprivileged_user

from othello_arena.referee import memory, sandbox

needs_sandbox = pytest.mark.skipif(not sandbox.probe().works, reason=f"no sandbox here: {sandbox.probe().problem}")

FAST_WATCH = {memory.WATCH_INTERVAL_VARIABLE: "2"}  # milliseconds: the watchdog looks at every step of a start

# Plays GAMES games of random against random in one referee (as the user running it) and prints each result.
MANY_GAMES = r'''
import sys
from pathlib import Path
from othello_arena.referee.config import GameConfig
from othello_arena.referee.game import play_game
from othello_arena.referee.spec import AgentSpec

folder, games = Path(sys.argv[1]), int(sys.argv[2])
for index in range(games):
    record = play_game(AgentSpec.builtin("random"), AgentSpec.builtin("random"), GameConfig(time_per_move=5),
                       folder / f"g{index}", seed=index)
    print(record.result.termination, record.result.detail or "", flush=True)
'''

# Touches 2 GB on its first move (a bytearray's pages are the kernel's zero page until written).
HOG = r'''
import sys
from othello_arena.agents.runtime import run_agent

def strategy(board, colour, time_left):
    hoard = bytearray(2 << 30)
    for index in range(0, len(hoard), 4096):
        hoard[index] = 1
    return board.legal_moves()[0]

raise SystemExit(run_agent(strategy, sys.argv[1]))
'''


# Eight processes at once each touch 128 MB, writing down how far they got (the measure of the overshoot).
BURST = r'''
import mmap, os, sys, time
from othello_arena.agents.runtime import run_agent

def touch(index):
    hoard = mmap.mmap(-1, 128 << 20)  # untouched pages cost nothing: each is counted once written
    with open(f"progress-{index}", "w") as progress:
        for start in range(0, len(hoard), 1 << 20):
            for offset in range(start, start + (1 << 20), 4096):
                hoard[offset] = 1
            progress.seek(0)
            progress.write(f"{start + (1 << 20):12d}")
            progress.flush()
    time.sleep(1000)

def strategy(board, colour, time_left):
    with open("/proc/self/smaps_rollup") as rollup:
        kilobytes = sum(int(line.split()[1]) for line in rollup if line.startswith(("Pss_Anon:", "Pss_Shmem:")))
    with open("baseline", "w") as handle:
        handle.write(str(kilobytes << 10))
    for index in range(8):
        if os.fork() == 0:
            touch(index)
    time.sleep(10)
    return board.legal_moves()[0]

raise SystemExit(run_agent(strategy, sys.argv[1]))
'''

# Runs KERNEL_MEMORY in a sandbox as an agent is (limits, seccomp), at --memory 256, and prints what it got.
SANDBOXED = r'''
import sys
from pathlib import Path
from othello_arena.referee.config import GameConfig
from othello_arena.referee.launch import run_sandboxed

folder = Path(sys.argv[1])
code, timed_out, _ = run_sandboxed(f"{sys.executable} kernel.py", folder, folder / "log.txt", 60, GameConfig(memory_mb=256))
print(code, timed_out)
'''

# Kernel memory an agent could hold without it being counted as its memory (issue 36): sockets, pipes.
KERNEL_MEMORY = r'''
import ctypes, fcntl, json, os, resource, socket

libc = ctypes.CDLL(None, use_errno=True)
found = {"open files": list(resource.getrlimit(resource.RLIMIT_NOFILE))}
for name, make in [("socket", socket.socket), ("unix socket", lambda: socket.socket(socket.AF_UNIX))]:
    try:
        make()
        found[name] = "made"
    except OSError as exc:
        found[name] = exc.errno
for name, number, arguments in [("x32 getpid", 0x40000000 | 39, ()), ("io_uring_setup", 425, (8, 0))]:
    found[name] = [libc.syscall(number, *arguments), ctypes.get_errno()]

def fill(make, grow, send):
    """Make and fill as many as the limit of open files allows: (how many, the error then, bytes held)."""
    made, held, grown = [], 0, []
    try:
        while True:
            ends = make()
            made.append(ends)
            os.set_blocking(ends[1].fileno() if hasattr(ends[1], "fileno") else ends[1], False)
            try:
                grow(ends[1])
                grown.append("yes")
            except OSError as exc:
                grown.append(exc.errno)
            try:
                while True:
                    held += send(ends[1], b"x" * 4096)
            except BlockingIOError:
                pass
    except OSError as exc:
        return [len(made), exc.errno, held, sorted(set(grown))]

found["socket pairs"] = fill(socket.socketpair, lambda end: end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30),
                             lambda end, data: end.send(data))
found["pipes"] = fill(os.pipe, lambda end: fcntl.fcntl(end, 1031, 1 << 20), os.write)  # F_SETPIPE_SZ
print(json.dumps(found))
'''


@pytest.fixture
def watchdog_user() -> Optional[str]:
    """The user whose games the watchdog holds (no cgroup): an unprivileged one as root, else oneself."""
    if os.geteuid() == 0:
        name = unprivileged_user()
        if name is None:
            pytest.skip("no unprivileged user can run this Python here (as root: useradd, and the interpreter readable)")
        return name
    if sandbox.probe().cgroup is not None:
        pytest.skip("this user has a cgroup: the kernel holds the memory limit, not the watchdog")
    return None


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder the unprivileged user may write (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="othello-arena-memory-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run_as(user: Optional[str], argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    if user is not None:
        argv = ["runuser", "-u", user, "--", *argv]
    return subprocess.run(argv, cwd=cwd, env=dict(os.environ, **FAST_WATCH), capture_output=True, text=True,
                          timeout=900)


# ---------------------------------------------------------------------------
# What is measured
# ---------------------------------------------------------------------------


def test_the_hosts_own_tmp_dev_shm_and_processes_are_never_counted() -> None:
    # /proc/self/root is the host's root, as /proc/SANDBOX/root is before bwrap moves into the sandbox's.
    with tempfile.NamedTemporaryFile(dir="/tmp") as stored:
        stored.write(b"x" * (1 << 20))
        stored.flush()
        host = os.statvfs("/tmp")
        assert (host.f_blocks - host.f_bfree) + (host.f_files - host.f_ffree) > 0  # something to count
        assert memory.tmpfs_bytes("/proc/self/root") == 0
    assert memory.sandbox_processes("/proc/self/root") == []
    assert memory.measure(memory.sandbox_processes("/proc/self/root"), "/proc/self/root", 1) == (0, False)


@needs_sandbox
def test_a_sandboxs_own_tmp_dev_shm_and_processes_are_counted(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    plan = sandbox.SandboxPlan(directory=agent, tmp_mb=64, shm_mb=64, bwrap=sandbox.probe().bwrap or "bwrap")
    script = "head -c 16M /dev/zero > /tmp/a; head -c 32M /dev/zero > /dev/shm/b; echo ready; exec sleep 60"
    process = subprocess.Popen(plan.command(["/bin/sh", "-c", script], agent), stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        inner = int((Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split() or ["0"])[0])
        root = f"/proc/{inner}/root"
        stored = memory.tmpfs_bytes(root)
        assert 48 << 20 <= stored < (48 << 20) + (1 << 20), stored
        processes = memory.sandbox_processes(root)
        # The sandbox's PID namespace: bwrap's first process and the shell (or the sleep), by their pids in there.
        assert 1 <= len(processes) <= 3 and all(int(path.rsplit("/", 1)[1]) < 10 for path in processes), processes
        bound, over = memory.measure(processes, root, 40)
        assert bound >= 48 << 20 and over  # 48 MB in its tmpfs: over a 40 MB limit
        assert not memory.measure(processes, root, 64)[1]
    finally:
        process.kill()
        process.communicate()


def test_the_watch_interval_is_the_variables_or_the_default_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memory.WATCH_INTERVAL_VARIABLE, raising=False)
    assert memory.watch_interval() == (memory.WATCH_INTERVAL, "")
    monkeypatch.setenv(memory.WATCH_INTERVAL_VARIABLE, "2")
    assert memory.watch_interval() == (0.002, "")
    for bad in ("0", "abc", "nan", "5000"):
        monkeypatch.setenv(memory.WATCH_INTERVAL_VARIABLE, bad)
        interval, problem = memory.watch_interval()
        assert interval == memory.WATCH_INTERVAL and f"OTHELLO_MEMORY_WATCH_MS='{bad}' ignored" in problem
        how, _ = memory.describe(512, None, sandboxed=True)
        assert "every 50 ms" in how and problem in how  # othello doctor says it was not taken


def test_the_watchdog_looks_sooner_while_the_memory_rises_towards_the_limit() -> None:
    mb = 1 << 20
    # (bound, rise since the last look, seconds since it, limit in MB) -> the wait before the next look
    cases = [
        ((100 * mb, 0, 0.05, 512), 0.05),  # at rest: the interval
        ((100 * mb, -10 * mb, 0.05, 512), 0.05),  # falling
        ((100 * mb, 1 * mb, 0.05, 512), 0.05),  # slowly: the limit is seconds away
        ((300 * mb, 100 * mb, 0.05, 512), 0.05),  # 2 GB/s, 212 MB away: half of 106 ms, no more than the interval
        ((400 * mb, 100 * mb, 0.05, 512), 0.028),  # 112 MB away: half of 56 ms
        ((500 * mb, 100 * mb, 0.05, 512), 0.003),  # 12 MB away: half of 6 ms
        ((506 * mb, 100 * mb, 0.05, 512), memory.FASTEST_WATCH),  # 6 MB away: no less than the fastest
        ((600 * mb, 100 * mb, 0.05, 512), memory.FASTEST_WATCH),  # past the limit by RSS (not by PSS): still rising
    ]
    for (bound, rise, seconds, limit_mb), expected in cases:
        wait = memory.next_wait(bound, rise, seconds, limit_mb, memory.WATCH_INTERVAL)
        assert wait == pytest.approx(expected), (bound >> 20, rise >> 20, wait)
    assert memory.next_wait(500 * mb, 100 * mb, 0.05, 512, 0.001) == 0.001  # never slower than a shorter interval


def test_the_cgroup_files_hold_the_limit_without_swap() -> None:
    assert memory.cgroup_limit_files(2, 512) == [("memory.max", str(512 << 20), True), ("memory.swap.max", "0", False)]
    assert memory.cgroup_limit_files(1, 512) == [("memory.limit_in_bytes", str(512 << 20), True),
                                                 ("memory.memsw.limit_in_bytes", str(512 << 20), False)]
    assert memory.cgroup_limit_files(2, 0) == []
    assert memory.shm_mb(512) == 512  # shared memory is memory: never more than the limit


# ---------------------------------------------------------------------------
# Games as a user without a cgroup
# ---------------------------------------------------------------------------


@needs_sandbox
@pytest.mark.slow
def test_no_correct_agent_is_killed_for_memory_at_its_start(watchdog_user: Optional[str], shared_folder: Path) -> None:
    # 40 games (80 starts) with the watch every 2 ms: before the fix about two games in three ended at move 1
    # as "out of memory (the limit is 4096 MB ...)", the host's /tmp and processes counted as the agent's.
    script = shared_folder / "many.py"
    script.write_text(MANY_GAMES)
    done = run_as(watchdog_user, [sys.executable, str(script), str(shared_folder / "games"), "40"], shared_folder)
    assert done.returncode == 0, done.stderr
    results = done.stdout.splitlines()
    assert len(results) == 40 and all(line.startswith("normal") for line in results), results


@needs_sandbox
@pytest.mark.slow
def test_an_agent_that_touches_2_gb_at_512_mb_is_killed_and_told_why(watchdog_user: Optional[str],
                                                                      shared_folder: Path) -> None:
    (shared_folder / "hog.py").write_text(HOG)
    argv = [sys.executable, "-m", "othello_arena", "play", f"hog={sys.executable} {shared_folder / 'hog.py'} hog",
            "random", "--memory", "512", "--time", "10", "--seed", "1", "--out", str(shared_folder / "game"),
            "--json", "--quiet"]
    done = run_as(watchdog_user, argv, shared_folder)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    hog = "W" if record["white"] == "hog" else "B"
    assert record["result"]["reason"] == "crash" and record["result"]["winner"] != hog, record["result"]
    assert record["result"]["detail"].startswith("hog exited"), record["result"]
    assert record["result"]["detail"].endswith(memory.note(512)), record["result"]
    peak = record["agents"]["hog"]["peak_memory_mb"]
    assert 512 < peak < 2048, peak  # killed on the way up, by the watchdog's measure


@needs_sandbox
def test_an_agent_may_hold_little_kernel_memory_out_of_the_watchdogs_sight(watchdog_user: Optional[str],
                                                                          shared_folder: Path) -> None:
    # Without a cgroup, socket buffers were memory the watchdog cannot see (1.5 GB at --memory 256); pipes too.
    if sandbox.seccomp_filter() is None:
        pytest.skip("no seccomp filter here (not x86-64)")
    (shared_folder / "kernel.py").write_text(KERNEL_MEMORY)
    (shared_folder / "sandboxed.py").write_text(SANDBOXED)
    done = run_as(watchdog_user, [sys.executable, str(shared_folder / "sandboxed.py"), str(shared_folder)],
                  shared_folder)
    assert done.stdout.split() == ["0", "False"], done.stdout + done.stderr
    log = (shared_folder / "log.txt").read_text()
    found = json.loads(log.strip().splitlines()[-1])
    eperm, emfile = 1, 24
    assert found["open files"] == [memory.OPEN_FILES, memory.OPEN_FILES], found
    assert found["socket"] == found["unix socket"] == eperm, found
    assert found["x32 getpid"] == [-1, eperm] and found["io_uring_setup"] == [-1, eperm], found
    # Socket pairs (a JVM needs one) and pipes until the limit of open files, each filled: their buffers may not
    # grow, so what they hold stays small (1.5 GB at --memory 256 before; 6.8 GB with 1024 files and buffers grown).
    for kind in ("socket pairs", "pipes"):
        made, error, held, grown = found[kind]
        assert error == emfile and made <= memory.OPEN_FILES // 2 and grown == [eperm], found
        assert held < 64 << 20, found



@needs_sandbox
@pytest.mark.slow
def test_a_burst_of_eight_processes_is_killed_for_memory_it_really_held(watchdog_user: Optional[str],
                                                                       shared_folder: Path) -> None:
    # 8 processes allocating at once (issue 36) are killed for memory, told why, and only once they really
    # held the limit: the verdict is true.  By how much a burst passes the limit is how soon the watchdog runs
    # after the memory rises, a timing, so it is measured by bench/memory_burst.py, not asserted here (CI's
    # machine once let it pass by 276 MB where this one never passed 118); the watchdog's quicker pace while
    # the memory rises is asserted above, without a clock
    # (test_the_watchdog_looks_sooner_while_the_memory_rises_towards_the_limit).
    (shared_folder / "burst.py").write_text(BURST)
    argv = [sys.executable, "-m", "othello_arena", "play", f"burst={sys.executable} {shared_folder / 'burst.py'} burst",
            "random", "--memory", "512", "--time", "20", "--seed", "1", "--out", str(shared_folder / "game"),
            "--json", "--quiet"]
    done = subprocess.run(["runuser", "-u", watchdog_user, "--", *argv] if watchdog_user else argv, cwd=shared_folder,
                          capture_output=True, text=True, timeout=300)  # (the default watch interval)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["result"]["detail"].endswith(memory.note(512)), record["result"]
    agent = shared_folder / "game" / "burst"
    touched = sum(int(path.read_text()) for path in agent.glob("progress-*"))
    # Each process writes its progress after each MB it touched: at the kill it held at most 1 MB more, and the
    # pages of the agent's Python copied on write after the fork (0.9 MB a child, measured).
    held_at_most = int((agent / "baseline").read_text()) + touched + 8 * (3 << 20)
    assert held_at_most > 512 << 20, (held_at_most >> 20, touched >> 20)
