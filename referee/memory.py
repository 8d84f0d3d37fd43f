"""An agent's memory: what its limit is and how it is enforced (the one place of the memory rule).

The limit (``--memory``, ``memory_mb``; 0: none) holds for the whole
sandbox: every process the agent starts, and what it keeps in the file
systems in memory it may write, its ``/tmp`` and ``/dev/shm``
(:data:`TMPFS_MOUNTS`).  Three things enforce it:

- **a cgroup**, where the referee may make one (:mod:`.sandbox`): the kernel
  holds the limit, without swap, for the whole tree and its tmpfs pages
  (:func:`cgroup_limit_files`), and counts the processes it killed for it
  (:func:`oom_kills`);
- else **the referee's watchdog** (:mod:`.process` runs it, every
  :func:`watch_interval` seconds while the agent runs: a stopped agent
  cannot allocate; more often while its memory rises, :func:`next_wait`).
  Its measure (:func:`measure`) is the sum of the
  processes' ``RssAnon + RssShmem + VmSwap`` (``/proc/PID/status``) plus the
  bytes and files of the sandbox's ``/tmp`` and ``/dev/shm``; only when that
  bound is over the limit, the precise figure, ``Pss_Anon + Pss_Shmem +
  SwapPss`` (``/proc/PID/smaps_rollup``: the copy-on-write pages of forked
  children counted once) plus the same tmpfs bytes.  Over the limit, the
  whole sandbox is killed at once, and :func:`note` says why.  A fast burst
  may pass the limit by what it allocates between two looks (a few
  milliseconds once it is seen rising: :func:`next_wait`); a file of
  ``/tmp`` or ``/dev/shm`` that is also mapped counts twice (the safe side);
- **the size of** ``/dev/shm`` (:func:`shm_mb`): shared memory is memory,
  never more than the limit.

The watchdog counts only what is the sandbox's own (issue 35): its
processes, listed by the ``/proc`` of its own PID namespace, and its own
``/tmp`` and ``/dev/shm``.  While ``bwrap`` still sets the sandbox up, the
``/proc``, ``/tmp`` and ``/dev/shm`` seen through its first process's root
are the host's (the whole machine's processes, a disk's ``/tmp``): they are
told apart by their device, which a mount of the sandbox's own never shares
with the referee's mount of the same path (:func:`own_mount`).

Kernel memory an agent could hold out of the watchdog's sight is kept
small (issue 36): a memfd, a detached System V segment and sockets are
refused by the sandbox's seccomp filter, and so are larger socket buffers
and pipes (:func:`.sandbox.seccomp_filter`); a sandboxed agent may have at
most :data:`OPEN_FILES` files open at once (``RLIMIT_NOFILE``, soft and
hard), so the socket pairs and pipes it may fill hold a few dozen MB
(measured: 126 socket pairs 43 MB, 126 pipes 8 MB; the sockets it could
send in flight through a pair, out of its table of files, are counted
against the same limit by the kernel: 258, 22 MB).  ``othello doctor`` says
how the limit holds here (:func:`describe`).
"""

from __future__ import annotations

import os
from typing import Optional

WATCH_INTERVAL = 0.05  # seconds between two measures of an agent's memory by the watchdog (without a cgroup)
WATCH_INTERVAL_VARIABLE = "OTHELLO_MEMORY_WATCH_MS"  # milliseconds instead of WATCH_INTERVAL (tests, operators)
WATCH_INTERVAL_RANGE_MS = (1.0, 1000.0)
FASTEST_WATCH = 0.002  # seconds: the shortest wait between two looks, while the memory rises towards the limit

# The file systems in memory an agent may write, sized by its sandbox plan (.sandbox.SandboxPlan): what the
# watchdog adds to its processes' memory.
TMPFS_MOUNTS = ("/tmp", "/dev/shm")
TMPFS_INODE_BYTES = 1024  # the kernel's memory for one file of a tmpfs (its inode and name), which its size does not count
# Files a sandboxed agent may have open at once (soft and hard limit): each may be a pipe or a socket
# holding kernel memory out of the watchdog's sight.  A JVM, javac, rustc, Go and node need a few dozen.
OPEN_FILES = 256

_STATUS_KEYS = (b"RssAnon:", b"RssShmem:", b"VmSwap:")  # /proc/PID/status: what a process holds, in kB
_ROLLUP_KEYS = (b"Pss_Anon:", b"Pss_Shmem:", b"SwapPss:")  # /proc/PID/smaps_rollup: its fair share, in kB

# cgroup v2 and v1: the file holding the limit, the one holding the limit with swap (so: no swap), and where
# the kernel counts its kills for memory (an ``oom_kill N`` line).
_CGROUP_FILES = {
    2: ("memory.max", "memory.swap.max", "memory.events"),
    1: ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.oom_control"),
}


def limit_bytes(memory_mb: int) -> int:
    """The limit in bytes (0: none)."""
    return memory_mb << 20


def shm_mb(memory_mb: int) -> int:
    """The size of the sandbox's ``/dev/shm`` in MB: the memory limit (0: the kernel's default, half the RAM)."""
    return memory_mb


def note(memory_mb: int) -> str:
    """What the result of an agent killed for memory adds to its crash: the limit, and that it was for all its processes."""
    return f": out of memory (the limit is {memory_mb} MB for all its processes)"


# ---------------------------------------------------------------------------
# With a cgroup: the kernel
# ---------------------------------------------------------------------------


def cgroup_limit_files(version: int, memory_mb: int) -> list[tuple[str, str, bool]]:
    """What to write in an agent's memory cgroup folder: ``(file, value, required)`` (none without a limit).

    Swap is part of the limit: ``memory.swap.max`` 0 under v2, ``memsw`` (memory and swap) at the limit
    under v1.  Those two are not required: a kernel without swap accounting has no such file.
    """
    if not memory_mb:
        return []
    limit, with_swap, _ = _CGROUP_FILES[version]
    swap_value = "0" if version == 2 else str(limit_bytes(memory_mb))
    return [(limit, str(limit_bytes(memory_mb)), True), (with_swap, swap_value, False)]


def oom_kills(folder: str, version: int) -> int:
    """How many of the processes in the memory cgroup ``folder`` the kernel killed for memory (0 if unreadable)."""
    try:
        with open(os.path.join(folder, _CGROUP_FILES[version][2]), encoding="ascii") as handle:
            text = handle.read()
    except OSError:
        return 0
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return 0


# ---------------------------------------------------------------------------
# Without a cgroup: the watchdog's measure
# ---------------------------------------------------------------------------


def watch_interval() -> tuple[float, str]:
    """The watchdog's interval in seconds, and why :data:`WATCH_INTERVAL_VARIABLE` was not taken (or ``""``).

    The variable (milliseconds) lets a test look at an agent's start every few milliseconds; a value that
    is not a number in :data:`WATCH_INTERVAL_RANGE_MS` leaves the default, and ``othello doctor`` says so.
    """
    text = os.environ.get(WATCH_INTERVAL_VARIABLE, "").strip()
    if not text:
        return WATCH_INTERVAL, ""
    low, high = WATCH_INTERVAL_RANGE_MS
    try:
        milliseconds = float(text)
    except ValueError:
        milliseconds = float("nan")
    if not low <= milliseconds <= high:  # (a NaN is in no range)
        return WATCH_INTERVAL, f"{WATCH_INTERVAL_VARIABLE}={text!r} ignored: not a number of milliseconds from {low:g} to {high:g}"
    return milliseconds / 1000, ""


def _kilobytes(path: str, keys: tuple[bytes, ...]) -> int:
    """The sum of the ``keys`` lines (``Name:  123 kB``) of a /proc file, in bytes (0 for a process gone)."""
    try:
        with open(path, "rb", buffering=0) as handle:  # unbuffered: one read of a small file, many times a second
            text = handle.read()
    except OSError:
        return 0
    total = 0
    for line in text.splitlines():
        if line.startswith(keys):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                total += int(parts[1])
    return total << 10


def resident_bytes(process: str) -> int:
    """A fast upper bound of the memory a process holds (its ``/proc`` folder): ``RssAnon + RssShmem + VmSwap``."""
    return _kilobytes(f"{process}/status", _STATUS_KEYS)


def proportional_bytes(process: str) -> int:
    """The memory a process holds (its ``/proc`` folder), pages shared with others divided among them
    (``Pss_Anon + Pss_Shmem + SwapPss``)."""
    return _kilobytes(f"{process}/smaps_rollup", _ROLLUP_KEYS)


def own_mount(root: str, mount: str) -> Optional[int]:
    """An open descriptor of ``mount`` as the sandbox whose root is ``root`` sees it, if it is the sandbox's own.

    ``None`` while it is the referee's (the host's) mount of the same path, i.e. on the same device: so it
    is before ``bwrap`` has moved into the sandbox's root, which it does once every mount of it is made.
    A sandbox's own ``/proc``, ``/tmp`` and ``/dev/shm`` are new file systems, never on a device of the
    host's.  Opened once and looked at through the descriptor, so the check and the measure are of the same
    mount.  The caller closes it.
    """
    try:
        fd = os.open(root + mount, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None  # not there yet (bwrap's own root while it sets up has no /tmp), or gone
    try:
        host: Optional[int] = os.stat(mount).st_dev
    except OSError:
        host = None  # the host has none (a container without /dev/shm): what is there is the sandbox's
    try:
        if os.fstat(fd).st_dev != host:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def sandbox_processes(root: str) -> list[str]:
    """The ``/proc`` folders of every process of the sandbox whose root is ``root`` (``/proc/PID/root``).

    Listed by the sandbox's own ``/proc`` (its PID namespace's: one listing, where walking the tree reads
    a file per thread); none while that is not mounted yet.  Once it is, it stays: ``bwrap`` moves into
    the sandbox's root once, and never back, so the paths returned are the sandbox's.
    """
    fd = own_mount(root, "/proc")
    if fd is None:
        return []
    try:
        names = os.listdir(fd)
    except OSError:
        return []
    finally:
        os.close(fd)
    return [f"{root}/proc/{name}" for name in names if name.isdigit()]


def tmpfs_bytes(root: str) -> int:
    """Memory used by the sandbox's own :data:`TMPFS_MOUNTS` (``root``: its ``/proc/PID/root``): their blocks,
    and :data:`TMPFS_INODE_BYTES` a file (a million empty files cost a GB, and no size limit counts them)."""
    total = 0
    for mount in TMPFS_MOUNTS:
        fd = own_mount(root, mount)
        if fd is None:
            continue
        try:
            info = os.fstatvfs(fd)
        except OSError:
            continue
        finally:
            os.close(fd)
        total += (info.f_blocks - info.f_bfree) * info.f_frsize + (info.f_files - info.f_ffree) * TMPFS_INODE_BYTES
    return total


def next_wait(bound: int, rise: int, seconds: float, memory_mb: int, interval: float) -> float:
    """Seconds until the watchdog's next look, after one that found ``bound`` bytes, ``rise`` more than the
    look ``seconds`` before.

    ``interval`` while the memory does not rise; while it does, half the time it would take at that pace to
    reach the limit, never less than :data:`FASTEST_WATCH`: a burst is looked at every few milliseconds on
    its way up, so it passes the limit by what it allocates in that time, the look's and the kill's (issue
    36: 8 processes at once went 170 MB past a 512 MB limit at a fixed 50 ms; measured on 2 busy cores, a
    median of 25 MB past at this pace against 66 MB at the fixed one, at most 84-118 MB against 153, the
    rest being the time a busy machine takes to run the watchdog).  A burst that reaches the limit within
    one ``interval`` of rest passes it by more.
    """
    fastest = min(FASTEST_WATCH, interval)
    if rise <= 0 or seconds <= 0:
        return interval
    to_limit = (limit_bytes(memory_mb) - bound) * seconds / rise
    return max(fastest, min(interval, to_limit / 2))


def measure(processes: list[str], root: str, memory_mb: int) -> tuple[int, bool]:
    """The watchdog's look at an agent: ``(its fast bound in bytes, whether it is over the limit)``.

    ``processes``: the ``/proc`` folders of its processes; ``root``: its sandbox's root in ``/proc``
    (``""`` unsandboxed: no tmpfs of its own).  Over the limit means the precise figure (PSS) is over,
    looked at only when the fast bound (RSS) is.
    """
    limit = limit_bytes(memory_mb)
    stored = tmpfs_bytes(root) if root else 0
    bound = stored + sum(resident_bytes(process) for process in processes)
    if bound <= limit:
        return bound, False
    return bound, stored + sum(proportional_bytes(process) for process in processes) > limit


# ---------------------------------------------------------------------------
# What othello doctor says
# ---------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:g} ms"


def describe(memory_mb: int, kernel: Optional[str], sandboxed: bool) -> tuple[str, bool]:
    """How the limit holds here, and whether wholly: ``kernel`` names the cgroup (``"cgroup v2"``), ``None``
    without one; ``sandboxed`` false for ``--sandbox none``.  (The doctor's memory line, :mod:`.limits`.)"""
    if not memory_mb:
        return "NOT enforced: no limit set (--memory 0, memory_mb = 0): give one in MB", False
    limit = f"{memory_mb} MB"
    if kernel is not None:
        return (f"{limit} for the whole sandbox (all its processes and its /tmp and /dev/shm), by the kernel ({kernel})",
                True)
    interval, problem = watch_interval()
    watchdog = f"by the referee's watchdog every {_ms(interval)}{f' ({problem})' if problem else ''}: "
    burst = "; a fast burst may pass the limit by a little before the kill (it is looked at more often while it rises)"
    if not sandboxed:
        return (f"only in part: {limit} {watchdog}the PSS of the processes it knows of the agent (agents run as "
                "yourself (--sandbox none): a process that leaves its session and clears its environment escapes it, "
                f"and files it writes in /tmp or /dev/shm are not counted){burst}", False)
    return (f"{limit} {watchdog}all its processes' PSS plus its /tmp and /dev/shm{burst}; no sockets but pairs, at most "
            f"{OPEN_FILES} open files: its pipes and socket pairs hold a few dozen MB out of its sight "
            "(no cgroup here: othello doctor says why and how to have one)", True)


def describe_shm(memory_mb: int) -> str:
    """The size of ``/dev/shm`` as the doctor says it."""
    return f"{shm_mb(memory_mb)} MB" if memory_mb else "half the RAM (no memory limit)"
