"""The sandbox's private /etc: the same entries as the system's, made in memory, and no copy of a killed referee kept."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

from othello_arena.referee import sandbox


def listing(root: str, names: list[str]) -> set[tuple[str, int, str]]:
    """(path below root, mode, link target) of every entry under the given names of ``root``."""
    found = set()
    for name in names:
        for top in glob.glob(os.path.join(root, name)):
            for folder, dirs, files in os.walk(top):
                for entry in [folder, *(os.path.join(folder, f) for f in [*dirs, *files])]:
                    info = os.lstat(entry)
                    target = os.readlink(entry) if os.path.islink(entry) else ""
                    found.add((os.path.relpath(entry, root), info.st_mode, target))
    return found


def test_the_copy_holds_the_same_entries_links_and_modes() -> None:
    copy = sandbox._curated_etc.__wrapped__()  # a fresh one (removed at exit, like the cached one)
    assert copy is not None
    if os.access("/dev/shm", os.W_OK | os.X_OK):
        assert copy.startswith("/dev/shm/")  # in memory: ~700 links made in microseconds, not on the disk
    names = sorted({os.path.relpath(p, "/etc") for pattern in sandbox.ETC_ENTRIES for p in glob.glob(f"/etc/{pattern}")})
    assert names and listing(copy, names) == listing("/etc", names)
    assert os.stat(copy).st_mode & 0o777 == 0o755


def test_a_killed_referees_copy_is_removed_by_the_next_and_a_live_ones_kept(tmp_path: Path) -> None:
    code = ("from othello_arena.referee import sandbox; print(sandbox._curated_etc(), flush=True); "
            "import time; time.sleep(60)")
    referee = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert referee.stdout is not None
    theirs = Path(referee.stdout.readline().strip())
    try:
        ours = sandbox._curated_etc.__wrapped__()
        assert ours is not None and theirs.is_dir()  # alive: kept
    finally:
        referee.kill()  # no clean-up at its exit
        referee.wait()
        referee.stdout.close()
    assert theirs.is_dir()
    again = sandbox._curated_etc.__wrapped__()
    assert not theirs.exists() and Path(ours).is_dir() and again is not None and Path(again).is_dir()
