"""The eight starters as submission templates: each one's files, command line and build line.

Read from the starters' tournament file (one table per language: its
command and build line, exactly as an instructor enters them) and the
example folder; a file belongs to a starter when its command or build line
names it.
"""

from __future__ import annotations

import shlex
import tomllib
from typing import Any

from .arena import EXAMPLES, STARTERS_FILE


def starters() -> list[dict[str, Any]]:
    """``[{"language", "command", "build", "files": {name: text}}]``, in the file's order."""
    data = tomllib.loads(STARTERS_FILE.read_text(encoding="utf-8"))
    examples = {entry.name: entry for entry in EXAMPLES.iterdir() if entry.is_file()}
    found = []
    for agent in data.get("agents", []):
        if not isinstance(agent, dict) or "command" not in agent:
            continue  # a built-in agent of that tournament
        command, build = str(agent["command"]), str(agent.get("build", ""))
        words = set(shlex.split(command)) | set(shlex.split(build))
        files = {name: entry.read_text(encoding="utf-8") for name, entry in examples.items()
                 if name in words or any(word.endswith("/" + name) for word in words)}
        if not files:
            continue
        prefix = ("clock:" if agent.get("reads_clock") else "") + ("openings:" if agent.get("openings") else "")
        found.append({"language": agent["name"], "command": prefix + command, "build": build, "files": files})
    return found
