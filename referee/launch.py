"""The one place that starts an agent's program: in its directory, sandboxed, with its limits.

The referee's games (:mod:`.game`), ``othello check`` and the tournament's
build commands all start agent code through :func:`start_agent` or
:func:`run_sandboxed`, so a sandbox added here holds for every path that runs
an agent.
"""

from __future__ import annotations

import hashlib
import subprocess
import time
import uuid
from pathlib import Path
from typing import Callable, NamedTuple, Optional, Sequence

from . import memory, sandbox
from .config import GameConfig, compiled_cache_dir
from .disk import DISK_INTERVAL, MAX_WATCHED_ENTRIES, directory_usage
from .process import AgentProcess, StartError
from .spec import BUILTIN, AgentSpec


def isolation_for(config: GameConfig) -> Optional[sandbox.Isolation]:
    """The machine's isolation when ``config`` asks for the sandbox (raises if it cannot run), else ``None``."""
    return sandbox.require() if config.sandbox == "bwrap" else None


def seat_marker(directory: Path) -> str:
    """An environment entry that only the processes of the agent playing in ``directory`` have, ``OTHELLO_SEAT=...``.

    The keeper and the referee find an agent's processes by it (see
    :mod:`.keeper`).  It names neither the game nor the opponent: a digest
    of the folder of the game directories (:func:`games_mark`, so that a
    runner finds the agents a dead runner left under it), then a random part
    that makes it the agent's alone (one agent may play in two games at once).
    """
    return f"OTHELLO_SEAT={games_mark(directory.parent.parent)}.{uuid.uuid4().hex}"


def games_mark(root: Path) -> str:
    """The first part of :func:`seat_marker` for the agents of every game directory in ``root``."""
    return hashlib.sha256(str(Path(root).absolute()).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _plan(
    isolation: sandbox.Isolation,
    directory: Path,
    argv: Sequence[str],
    cwd: Path,
    path: str,
    readable: Sequence[Optional[Path]],
    hidden: Sequence[Path],
    config: GameConfig,
    cgroup: Optional[sandbox.AgentCgroup],
    seen_as: Optional[Path] = None,
) -> sandbox.SandboxPlan:
    seen = [*sandbox.python_paths(), *sandbox.program_paths(list(argv), cwd, path), *sandbox.existing(readable)]
    return sandbox.SandboxPlan(
        directory=directory,
        seen_as=seen_as,
        readable=seen,
        hidden=[*hidden, *map(Path, config.hidden_paths)],
        tmp_mb=config.disk_mb or 1024,
        shm_mb=memory.shm_mb(config.memory_mb),
        # Without a cgroup, RLIMIT_NPROC inside the sandbox: bwrap's first process counts too.
        max_processes=0 if cgroup is not None or not config.max_processes else config.max_processes + 1,
        disable_userns=isolation.disable_userns,
        bwrap=isolation.bwrap or "bwrap",
    )


def _cgroup(isolation: Optional[sandbox.Isolation], config: GameConfig,
            warn: Callable[[str], None]) -> Optional[sandbox.AgentCgroup]:
    if isolation is None or isolation.cgroup is None:
        return None
    try:  # two more processes than the agent's: bwrap's own, outside and inside the namespace
        return isolation.cgroup.make(config.memory_mb, config.max_processes + 2 if config.max_processes else 0)
    except OSError as exc:
        warn(f"no cgroup could be made ({exc}): rlimits instead")
        return None


def _start(
    argv: list[str],
    cwd: Path,
    directory: Path,
    env: dict[str, str],
    log_path: Path,
    config: GameConfig,
    isolation: Optional[sandbox.Isolation],
    readable: Sequence[Optional[Path]],
    hidden: Sequence[Path],
    marker: str,
    stderr_limit: int,
    on_exit: Optional[Callable[[], None]] = None,
    warn: Callable[[str], None] = lambda text: None,
    seen_as: Optional[Path] = None,
) -> AgentProcess:
    """Start ``argv`` in ``cwd`` with ``directory`` writable (at ``seen_as`` inside), sandboxed when ``isolation`` is given."""
    cgroup = _cgroup(isolation, config, warn)
    plan = None
    if isolation is not None:
        plan = _plan(isolation, directory, argv, cwd, env["PATH"], readable, hidden, config, cgroup, seen_as)
    process = AgentProcess(
        argv=argv,
        cwd=cwd,
        env=env,
        log_path=log_path,
        memory_mb=config.memory_mb,
        max_processes=config.max_processes,
        stderr_limit=stderr_limit,
        on_exit=on_exit,
        marker=marker.encode(),
        file_mb=config.disk_mb,
        sandbox=plan,
        cgroup=cgroup,
        cpus=config.cpus,
    )
    try:
        process.start()
    except StartError:
        if cgroup is not None:
            cgroup.remove()
        raise
    return process


def start_agent(
    spec: AgentSpec,
    directory: Path,
    config: GameConfig,
    log_path: Path,
    isolation: Optional[sandbox.Isolation],
    time_per_move: Optional[float] = None,
    clock: str = "",
    move_cap: Optional[float] = None,
    hidden: Sequence[Path] = (),
    on_exit: Optional[Callable[[], None]] = None,
    warn: Callable[[str], None] = lambda text: None,
) -> AgentProcess:
    """Start ``spec``'s program for a game: in ``directory``, sandboxed when ``isolation`` is given.

    The agent sees its directory read-write (with ``NAME.in`` and
    ``NAME.out``), its submission folder and the files its command names
    read-only, and nothing of ``hidden`` (the game directory's other
    contents, the tournament's results).  Its output goes to ``log_path``
    (outside ``directory``).  Raises :class:`StartError` if it cannot start.
    ``time_per_move`` is told as ``OTHELLO_TIME`` (under a game clock a fair
    share of it), the game ``clock`` (``"300+2"``) as ``OTHELLO_CLOCK``,
    and a cap per move under that clock as ``OTHELLO_MOVE_CAP``.
    """
    limit = time_per_move or config.time_per_move or 0.0
    # Sandboxed, the agent knows its directory as /game/NAME: the real path
    # (results/games/r01-p001-g1_carol_vs_bob/carol) would name its opponent.
    # Unsandboxed it cannot be hidden.
    seen = sandbox.SEEN_ROOT / directory.name if isolation is not None else directory
    variables = {"OTHELLO_NAME": spec.file_name, "OTHELLO_DIR": str(seen), "OTHELLO_TIME": f"{limit:g}"}
    if clock:
        variables["OTHELLO_CLOCK"] = clock
        if move_cap is not None:
            variables["OTHELLO_MOVE_CAP"] = f"{move_cap:g}"
    if spec.kind == BUILTIN:  # our own agents find their compiled code there (read-only)
        variables["OTHELLO_CACHE_DIR"] = str(compiled_cache_dir())
    env = sandbox.minimal_environment(seen, variables, isolation is not None)
    marker = seat_marker(directory)
    key, _, value = marker.partition("=")
    env[key] = value
    # The submission folder when the agent has one (a tournament's cwd) or its
    # command names it ({home}); never a whole folder it did not ask for.
    home = spec.home if spec.cwd is not None or "{home}" in " ".join(spec.command or ()) else None
    readable = [spec.cwd, home, compiled_cache_dir() if spec.kind == BUILTIN else None]
    return _start(spec.argv(seen, limit), spec.cwd or directory, directory, env, log_path, config, isolation,
                  readable, hidden, marker, config.stderr_limit, on_exit, warn, seen_as=seen)


def run_sandboxed(
    command: str,
    folder: Path,
    log_path: Path,
    timeout: float,
    config: GameConfig,
    readable: Sequence[Path] = (),
    hidden: Sequence[Path] = (),
    log_limit: int = 1 << 20,
    tools: bool = False,
) -> "SandboxedRun":
    """Run a shell ``command`` (a build) in ``folder``, sandboxed as an agent is: its :class:`SandboxedRun`.

    ``folder`` is read-write (the build writes its program there), the rest
    as for an agent; the output goes to ``log_path``, capped at ``log_limit``
    bytes; after ``timeout`` seconds, or once the folder holds more than
    ``config.disk_mb``, every process of the build is killed.
    With ``tools``, the command also finds the compilers of the referee's
    ``PATH`` and toolchains (rustup, cargo, Go, a JDK, pyenv), read-only
    (:func:`.sandbox.toolchains`: only those this user can read, and not the
    instructor's own folders), and the log's first lines name the environment
    the build got.
    """
    isolation = isolation_for(config)
    env = sandbox.minimal_environment(folder, {}, isolation is not None)
    seen: list[Optional[Path]] = list(readable)
    argv = ["/bin/sh", "-c", command]
    if tools:
        found = sandbox.toolchains()
        env.update(found.variables)
        seen += found.folders
        caches = [name for name in sandbox.SANDBOX_CACHES if name in env]
        header = [f"[referee: the build's environment: {name}={env[name]}]" for name in sorted(env) if name not in caches]
        if caches:  # one line: they are the same for every build
            header.append("[referee: the build's environment: caches in the sandbox's /tmp, not kept after it: "
                          + " ".join(f"{name}={env[name]}" for name in caches) + "]")
        header += [f"[referee: left out: {what}]" for what in found.skipped]
        # The shell prints the header into the same pipe as the build's output, then becomes the build.
        argv = ["/bin/sh", "-c", 'printf "%s\\n" "$1"; exec /bin/sh -c "$2"', "build", "\n".join(header), command]
    process = _start(argv, folder, folder, env, log_path, config, isolation, seen, hidden,
                     f"OTHELLO_BUILD={folder}", log_limit)
    # The folder is watched as an agent's directory is in a game (config.disk_mb): RLIMIT_FSIZE caps each
    # file only, and a build that wrote 1.5 GB in many files once kept it all.
    disk_bytes = config.disk_mb << 20
    deadline = time.monotonic() + timeout
    over_disk = ""
    while not process.wait_exit(min(DISK_INTERVAL * 4, max(0.0, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            break
        if disk_bytes:
            used, entries = directory_usage(folder, disk_bytes, MAX_WATCHED_ENTRIES)
            if used > disk_bytes or entries > MAX_WATCHED_ENTRIES:
                over_disk = (f"it kept more than {config.disk_mb} MB in its folder (the disk limit)" if used > disk_bytes
                             else f"it kept more than {MAX_WATCHED_ENTRIES} files and folders in its folder")
                break
    finished = process.wait_exit(0)
    code = process.returncode
    process.kill_all(term_grace=0.5)
    return SandboxedRun(code if finished and not over_disk else None, not finished and not over_disk, over_disk)


class SandboxedRun(NamedTuple):
    """How a sandboxed command ended: its exit code (``None`` when it was killed), or why it was killed."""

    code: Optional[int]
    timed_out: bool
    over_disk: str = ""  # why it was killed for the room it took on disk ("" when it was not)


__all__ = ["SandboxedRun", "StartError", "games_mark", "isolation_for", "run_sandboxed", "seat_marker", "start_agent"]
