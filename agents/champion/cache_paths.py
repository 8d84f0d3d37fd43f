"""Where the champion's compiled code is kept, and the digest of the sources it is made from.

A leaf: it imports nothing of the champion, so both :mod:`.compiled_cache`
(numba's side, loaded with the engine) and :mod:`.prepare` (light, loaded by
the registry without numba) take these from here.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from ...referee.config import compiled_cache_dir

PACKAGE_DIR = Path(__file__).resolve().parent
# Sources outside this package's modules that compiled code is made from: numba compiles a global
# array in as a constant, and the evaluation's square weights are seed 002's (players.PAPER_WEIGHTS),
# the stability cut-off's edge table is endgame.EDGE_STABILITY_FILE.
OUTSIDE_SOURCES = (PACKAGE_DIR.parent / "players.py", PACKAGE_DIR / "data" / "edge_stability.npy")


def numba_cache_dir() -> Path:
    """The folder holding numba's index (``.nbi``) and code (``.nbc``) files for the champion."""
    return compiled_cache_dir() / "numba"


def digested_sources() -> list[Path]:
    """The files :func:`sources_digest` hashes: every module of this package, then :data:`OUTSIDE_SOURCES`."""
    return [*sorted(PACKAGE_DIR.glob("*.py")), *OUTSIDE_SOURCES]


@functools.lru_cache(maxsize=None)
def sources_digest() -> str:
    """A short hash of the sources the compiled code is made from (:func:`digested_sources`).

    numba checks a cached function against its own file only, yet a cached
    function carries the code of everything it inlined or called from the
    other files (``search.solve`` holds ``endgame``'s and ``bitboard``'s)
    and the global arrays it read (``evaluation``'s square weights):
    after an edit of one file the others would run stale code.  So the
    compiled code lives in a folder per version of the sources as a whole.
    """
    key = hashlib.sha256()
    for source in digested_sources():
        key.update(source.name.encode())
        key.update(source.read_bytes())
    return key.hexdigest()[:16]
