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


def numba_cache_dir() -> Path:
    """The folder holding numba's index (``.nbi``) and code (``.nbc``) files for the champion."""
    return compiled_cache_dir() / "numba"


@functools.lru_cache(maxsize=None)
def sources_digest() -> str:
    """A short hash of this package's sources.

    numba checks a cached function against its own file only, yet a cached
    function carries the code of everything it inlined or called from the
    other files (``search.solve`` holds ``endgame``'s and ``bitboard``'s):
    after an edit of one file the others would run stale code.  So the
    compiled code lives in a folder per version of the sources as a whole.
    """
    key = hashlib.sha256()
    for source in sorted(PACKAGE_DIR.glob("*.py")):
        key.update(source.name.encode())
        key.update(source.read_bytes())
    return key.hexdigest()[:16]
