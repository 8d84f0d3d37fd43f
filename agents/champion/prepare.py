"""Compile the champion before a game, outside any clock (issue 11).

numba compiles the engine the first time it runs on a machine: 7 s on an idle
2-core machine, 30 s on a loaded one, longer than a whole game at 1 s a move.
:func:`prepare` does that once, like a build, in a subprocess
(``python -m othello_arena.agents.champion.prepare``) that fills the
compiled-code cache and then leaves a *ready* mark beside it; later calls
see the mark and return at once, without importing numba.

This module stays light (no numba, no numpy): ``othello play random greedy``
imports it through the registry.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Callable

from ...referee.config import CACHE_DIR_VARIABLE, compiled_cache_dir
from .cache_paths import PACKAGE_DIR, numba_cache_dir, sources_digest

PREPARE_MODULE = __name__  # run with ``python -m`` as the subprocess


def ready_mark() -> Path:
    """The file whose presence says the cache holds this install's compiled engine.

    Its name hashes what the compiled code depends on: this install's
    folder and sources, the versions of Python and numba, and the machine
    (numba compiles for the CPU it runs on, and a cache in a shared home
    folder serves several machines).
    """
    key = hashlib.sha256()
    key.update(str(PACKAGE_DIR).encode())
    key.update(sources_digest().encode())
    key.update(sys.version.encode())
    key.update(_version("numba").encode())
    key.update(_version("llvmlite").encode())
    key.update(platform.node().encode())
    key.update(platform.machine().encode())
    return numba_cache_dir() / "ready" / key.hexdigest()[:32]


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "none"


def is_prepared() -> bool:
    """Whether :func:`prepare` has already filled the cache for this install on this machine."""
    return ready_mark().exists()


def prepare(log: Callable[[str], None]) -> bool:
    """Compile (or load) the champion into the compiled-code cache; return whether it is ready.

    Runs in a subprocess of our own code, so the caller (a referee, a
    tournament runner) neither loads numba nor dies with a compiler crash.
    A failure is reported through ``log`` and returns False: the champion
    then compiles in its own process, answering its first moves with its
    fallback player meanwhile.
    """
    if is_prepared():
        return True
    log("Preparing champion (compiling, first time only)...")
    started = time.monotonic()
    env = dict(os.environ)
    env[CACHE_DIR_VARIABLE] = str(compiled_cache_dir())
    done = subprocess.run([sys.executable, "-m", PREPARE_MODULE], env=env, capture_output=True, text=True)
    if done.returncode != 0 or not is_prepared():
        detail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        log(f"Preparing champion failed ({detail}); it will compile during its first game.")
        return False
    log(f"Champion ready ({time.monotonic() - started:.0f} s; cached in {numba_cache_dir()}).")
    return True


def main() -> int:
    """Load the engine (compiling what the cache lacks), then leave the ready mark."""
    from .agent import load_engine

    load_engine()
    mark = ready_mark()
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.write_text(f"prepared {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    except OSError as exc:
        print(f"cannot write {mark}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
