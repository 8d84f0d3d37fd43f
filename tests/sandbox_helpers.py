"""Cheating agents and the checks every attack must pass (tests/test_sandbox_attacks.py).

``PLAYER`` is a real file-protocol agent (it plays legal moves with the Python
agent runtime) that runs one attack on its first move and then plays on.  The
same script with the attack ``none`` is the victim, which writes down when it
thinks, so a test can prove the attacker's helpers never ran meanwhile.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

UNPRIVILEGED = "othello-test"

PLAYER = r'''
import ctypes, json, os, random, shutil, signal, socket, sys, time
from othello_arena.agents.runtime import run_agent

name, attack = sys.argv[1], sys.argv[2]
bait = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
home = os.getcwd()
found = {}

def note(key, value):
    # Whole or not at all: a forked child that fails half-way notes too, and two writers of one file
    # interleave ('{"orphans": 5}}').
    found[key] = value
    temporary = os.path.join(home, f"found.json.{os.getpid()}")
    with open(temporary, "w") as handle:
        json.dump(found, handle)
    os.replace(temporary, os.path.join(home, "found.json"))

def heartbeat(path, every=0.005):
    # Stamps taken before the write: a frozen process writes an old stamp.
    while True:
        with open(path, "a") as handle:
            handle.write(f"{time.monotonic():.6f}\n")
        time.sleep(every)

def daemon(body):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                body()
            finally:
                os._exit(0)
        os._exit(0)

def try_(key, action):
    try:
        note(key, repr(action()))
    except BaseException as exc:
        note(key, "failed: " + type(exc).__name__)

def attack_once():
    beat = os.path.join(home, "heartbeat")
    if attack == "kill-opponent":
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) not in (os.getpid(), 1):
                try_("kill " + entry, lambda: os.kill(int(entry), signal.SIGKILL))
    elif attack == "stop-referee":
        try_("stop parent", lambda: os.kill(os.getppid(), signal.SIGSTOP))
        try_("kill parent", lambda: os.kill(os.getppid(), signal.SIGKILL))
        try_("stop 1", lambda: os.kill(1, signal.SIGSTOP))
    elif attack == "ptrace":
        libc = ctypes.CDLL(None, use_errno=True)
        note("ptrace parent", libc.ptrace(16, os.getppid(), 0, 0))  # PTRACE_ATTACH
        note("ptrace 1", libc.ptrace(16, 1, 0, 0))
    elif attack == "delete-others":
        for target in ["../" + e for e in os.listdir("..")] + ["../../" + e for e in os.listdir("../..")]:
            if os.path.abspath(target) != home:
                try_("rm " + target, lambda: shutil.rmtree(target) if os.path.isdir(target) else os.remove(target))
        for target in bait.get("paths", []):
            try_("rm " + target, lambda: shutil.rmtree(target) if os.path.isdir(target) else os.remove(target))
    elif attack == "write-others":
        for target in ("../victim/victim.out", "../victim/victim.in", "../game.json", "../victim.stderr.log",
                       "../.referee/x", *bait.get("paths", [])):
            try_("write " + target, lambda: open(target, "w").write("(W A 1)\n(END W 64 0 normal)\n"))
        try_("symlink", lambda: os.symlink("/etc/passwd", "../victim/victim.out"))
        try_("directory", lambda: os.mkdir("../victim/victim.in"))
    elif attack == "escape-write":
        for target in ("../../escape.txt", "/tmp/escape.txt", os.path.expanduser("~/../escape.txt"), "/escape.txt"):
            try_("write " + target, lambda: open(target, "w").write("escaped"))
    elif attack == "snoop":
        for key, path in [("victim source", bait.get("victim_source", "")), ("instructor", bait.get("instructor", "")),
                          ("referee cmdline", "/proc/1/cmdline"), ("parent environ", f"/proc/{os.getppid()}/environ")]:
            try_(key, lambda: open(path, "rb").read().decode("utf-8", "replace"))
        note("environ", dict(os.environ))
        note("processes", sorted(int(e) for e in os.listdir("/proc") if e.isdigit()))
    elif attack == "network":
        try_("connect", lambda: socket.create_connection(("127.0.0.1", bait["port"]), timeout=2).send(b"leak"))
    elif attack == "daemon":
        def body():
            os.environ.clear()
            os.chdir("/")
            heartbeat(beat, 0.02)
        daemon(body)
    elif attack == "fork-hopper":
        def body():
            while True:
                if os.fork():
                    os._exit(0)  # the parent leaves: the pid changes every few milliseconds
                with open(beat, "a") as handle:
                    handle.write(f"{time.monotonic():.6f}\n")
                time.sleep(0.001)
        daemon(body)
    elif attack == "ponder":
        for _ in range(2):
            daemon(lambda: heartbeat(beat))
    elif attack == "orphans":
        made = 0
        for _ in range(300):
            try:
                daemon(lambda: time.sleep(1000))
                made += 1
            except OSError:
                break
        note("orphans", made)
    elif attack == "big-file":
        with open("big", "wb") as handle:
            for _ in range(64):
                handle.write(b"x" * (1 << 20))
    elif attack == "shm-filler":  # 12 files of 250 MB in shared memory (a tmpfs)
        written = 0
        for index in range(12):
            try:
                with open(f"/dev/shm/fill-{index}", "wb") as handle:
                    for _ in range(250):
                        handle.write(b"x" * (1 << 20))
                        written += 1
            except OSError as exc:
                note("shm", f"{written} MB, then {exc.strerror}")
        time.sleep(1000)
    elif attack == "children-700":  # 10 children each holding 700 MB
        for _ in range(10):
            if os.fork() == 0:
                hoard = bytearray(700 << 20)
                for i in range(0, len(hoard), 4096):
                    hoard[i] = 1
                time.sleep(1000)
        time.sleep(1000)
    elif attack == "folder-filler":  # 250 MB files in its own folder until refused
        for index in range(12):
            try:
                with open(f"fill-{index}", "wb") as handle:
                    for _ in range(250):
                        handle.write(b"x" * (1 << 20))
            except OSError as exc:
                note("folder", f"file {index}: {exc.strerror}")
    elif attack == "hidden-memory":  # memory no process maps and no folder shows
        try_("memfd", lambda: os.memfd_create("hoard"))
        libc = ctypes.CDLL(None, use_errno=True)
        note("shmget", [libc.shmget(0, 64 << 20, 0o1600), ctypes.get_errno()])
        try_("files in /tmp", lambda: [open(f"/tmp/{i}", "w").close() for i in range(2000)] and "made")
    elif attack == "slow":  # thinks for ever: the other side waits, frozen
        time.sleep(1000)
    elif attack == "memory":
        for _ in range(6):
            if os.fork() == 0:
                hoard = bytearray(300 << 20)
                for i in range(0, len(hoard), 4096):
                    hoard[i] = 1
                time.sleep(1000)
        time.sleep(2)

first = [True]

def strategy(board, colour, time_left):
    started = time.monotonic()
    if first[0]:
        first[0] = False
        if attack != "none":
            attack_once()
    time.sleep(0.02)  # a little thinking, so the victim's turns have a length
    move = board.legal_moves()[0]
    if attack == "none":
        with open("thinking", "a") as handle:
            handle.write(f"{started:.6f} {time.monotonic():.6f}\n")
    return move

raise SystemExit(run_agent(strategy, name))
'''


@dataclass
class Arena:
    """A folder laid out like an instructor's: two submissions, bait files, and where games go."""

    root: Path
    attacker_source: Path
    victim_source: Path
    instructor: Path  # a file of the instructor's that no agent may read or change
    results: Path  # a tournament's results folder (a database inside)

    @classmethod
    def make(cls, owner: Optional[str] = None) -> "Arena":
        root = Path(tempfile.mkdtemp(prefix="othello-arena-attacks-"))
        for sub in ("attacker", "victim"):
            (root / sub).mkdir()
            (root / sub / "player.py").write_text(PLAYER)
        (root / "results").mkdir()
        (root / "results" / "tournament.sqlite").write_bytes(b"SQLite format 3\0 the standings")
        (root / "secret.txt").write_text("the instructor's token")
        arena = cls(root, root / "attacker" / "player.py", root / "victim" / "player.py",
                    root / "secret.txt", root / "results")
        for path in [root, *root.rglob("*")]:
            # Writable by everyone: only the sandbox stands between an agent and these files.
            os.chmod(path, 0o777 if path.is_dir() else 0o666)
            if owner:
                record = pwd.getpwnam(owner)
                os.chown(path, record.pw_uid, record.pw_gid)
        return arena

    def bait(self, port: int = 0) -> str:
        return json.dumps({
            "paths": [str(self.instructor), str(self.results / "tournament.sqlite"), str(self.victim_source)],
            "victim_source": str(self.victim_source),
            "instructor": str(self.instructor),
            "port": port,
        })

    def fingerprint(self) -> dict[str, str]:
        """Every file outside the games folder, with a hash of its bytes."""
        found = {}
        for path in sorted(self.root.rglob("*")):
            if "games" in path.relative_to(self.root).parts:
                continue
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        return found

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def unprivileged_user() -> Optional[str]:
    """An unprivileged user that can run this Python (made with useradd when root), else None."""
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        return None
    try:
        pwd.getpwnam(UNPRIVILEGED)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", UNPRIVILEGED],
                       capture_output=True)
        try:  # the other test process may have made it in the meantime
            pwd.getpwnam(UNPRIVILEGED)
        except KeyError:
            return None
    probe = subprocess.run(["runuser", "-u", UNPRIVILEGED, "--", sys.executable, "-c", "import othello_arena"],
                           capture_output=True, cwd="/")
    return UNPRIVILEGED if probe.returncode == 0 else None


def heartbeat_after(path: Path, seconds: float = 0.5) -> bool:
    """Whether anything still writes ``path`` ``seconds`` after now (a process that outlived its game)."""
    import time

    before = path.stat().st_size if path.exists() else -1
    time.sleep(seconds)
    after = path.stat().st_size if path.exists() else -1
    return after != before


def stamps(path: Path) -> list[float]:
    if not path.exists():
        return []
    return [float(line) for line in path.read_text().split() if line.strip()]


def intervals(path: Path) -> list[tuple[float, float]]:
    if not path.exists():
        return []
    pairs = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return [(float(a), float(b)) for a, b in pairs]


# The users the sandbox tests run as: root and an unprivileged one (instructors are not root), else oneself.
USERS = ["root", "unprivileged"] if os.geteuid() == 0 else ["self"]


@pytest.fixture(params=USERS)
def user(request: pytest.FixtureRequest) -> Optional[str]:
    """The user to run the referee as (``None``: this process's own); skips where no unprivileged one can run."""
    if request.param == "unprivileged":
        name = unprivileged_user()
        if name is None:
            pytest.skip("no unprivileged user can run this Python here (as root: useradd, and the interpreter readable)")
        return name
    return None
