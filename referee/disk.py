"""The disk rule: how much an agent (or a build) keeps in its folder, and how often the referee looks.

A game's agent and a build are watched alike (:mod:`.player` during a game,
:func:`.launch.run_sandboxed` during a build): RLIMIT_FSIZE caps one file,
this caps the folder, links never followed.
"""

from __future__ import annotations

import os
from pathlib import Path

from .memory import WATCH_INTERVAL

DISK_INTERVAL = WATCH_INTERVAL  # seconds between two looks at each agent's directory (as at its memory)
MAX_WATCHED_ENTRIES = 10_000  # files and folders in an agent's directory: more is over the limit (a walk costs)


def directory_usage(directory: Path, limit: int, max_entries: int) -> tuple[int, int]:
    """Bytes the agent keeps in its directory (blocks really used), counted up to just past ``limit``, and the
    entries seen, counted up to just past ``max_entries`` (walking more would be the referee's cost).

    Links are not followed.
    """
    used, entries, stack = 0, 0, [str(directory)]
    while stack and used <= limit:
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    entries += 1
                    if entries > max_entries:
                        return used, entries
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    used += info.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return used, entries
