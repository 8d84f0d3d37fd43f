"""Shared helpers of the tournament tests: tournament files of tiny deterministic agents."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any, Optional

import psutil

AGENT = Path(__file__).resolve().parent / "tournament_agent.py"


def agent(name: str, style: str = "first", *extra: str) -> str:
    """An ``[[agents]]`` table running the tiny agent in ``style`` (``first``, ``last``, ``flips``)."""
    command = f"{sys.executable} {AGENT} --name {{name}} --style {style} {' '.join(extra)}".strip()
    return f"[[agents]]\nname = {json.dumps(name)}\ncommand = {json.dumps(command)}\n"


def agent_with_build(directory: Path, name: str, style: str, build: str, *extra: str) -> str:
    """:func:`agent` with a ``build`` line, run in its own folder ``directory/NAME`` (made here), its ``cwd``.

    A build runs in the agent's submission folder, read-write: a tournament
    file refuses a build without a ``cwd`` (the whole class's folder).
    """
    (directory / name).mkdir(parents=True, exist_ok=True)
    extra_keys = f"cwd = {json.dumps(name)}\nbuild = {json.dumps(build)}\n"
    return agent(name, style, *extra).replace("[[agents]]\n", "[[agents]]\n" + extra_keys, 1)


def write_tournament(directory: Path, agents: list[str], referee: Optional[dict[str, Any]] = None,
                     **settings: Any) -> Path:
    """Write ``directory/t.toml`` with ``agents`` (tables from :func:`agent`, or strings), settings and ``[referee]``."""
    lines = ["[tournament]"]
    settings.setdefault("time_per_move", 3.0)
    settings.setdefault("results", "results")
    for key, value in settings.items():
        lines.append(f"{key} = {json.dumps(value)}")
    if referee:
        lines.append("\n[referee]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in referee.items()]
    path = directory / "t.toml"
    path.write_text("\n".join(lines) + "\n\n" + "\n".join(agents), encoding="utf-8")
    return path


def build_output(log: Path) -> str:
    """What a build itself printed: its log less the referee's first lines (the environment it got)."""
    return "".join(line for line in log.read_text().splitlines(keepends=True) if not line.startswith("[referee: "))


def query(database: Path, sql: str, *args: Any) -> list[sqlite3.Row]:
    """Read the results database as a separate connection (as another process would)."""
    db = sqlite3.connect(str(database))
    db.row_factory = sqlite3.Row
    try:
        return list(db.execute(sql, args))
    finally:
        db.close()


def _seats_under(root: Path) -> tuple[bytes, ...]:
    """The seat markers' first parts of the agents of every game folder under ``root`` (``*/games``)."""
    from othello_arena.referee.launch import games_mark

    return tuple(f"OTHELLO_SEAT={games_mark(folder.resolve())}.".encode() for folder in root.rglob("games")
                 if folder.is_dir())


def _is_agent_under(process: psutil.Process, root: Path, seats: tuple[bytes, ...]) -> bool:
    """Whether ``process`` works under ``root`` or is a sandboxed agent of a game there (it sees /game/NAME)."""
    cwd = process.info.get("cwd")
    if cwd and Path(cwd).is_relative_to(root):
        return True
    try:
        with open(f"/proc/{process.pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return False
    return any(seat in environ for seat in seats)


def agents_gone_under(root: Path, timeout: float = 10.0) -> list[str]:
    """Wait until no process works under ``root`` (agents die with their referee); return any left."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        left = []
        seats = _seats_under(root)
        for process in psutil.process_iter(["cwd", "status"]):
            try:
                if _is_agent_under(process, root, seats) and process.info.get("status") != psutil.STATUS_ZOMBIE:
                    left.append(f"{process.pid} {' '.join(process.cmdline())[:80]}")
            except (psutil.Error, ValueError):
                continue
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def kill_agents_under(root: Path) -> int:
    """Kill leftover agent processes whose working directory is under ``root``; return how many."""
    killed = 0
    seats = _seats_under(root)
    for process in psutil.process_iter(["cwd"]):
        try:
            if process.pid != os.getpid() and _is_agent_under(process, root, seats):
                process.kill()
                killed += 1
        except (psutil.Error, ValueError):
            continue
    return killed
