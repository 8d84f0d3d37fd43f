"""Where numba keeps the champion's compiled code: under :func:`compiled_cache_dir`, never in the package.

numba's ``cache=True`` writes next to the sources (``__pycache__``) whenever
that folder is writable.  For an installed package that is
``site-packages/othello_arena/agents/champion/__pycache__``: a reinstall
leaves it behind, and a folder left there shadows a later editable install as
a namespace package (issue 11).  So every compiled function of this package
is cached under ``compiled_cache_dir() / "numba"`` instead
(``$OTHELLO_CACHE_DIR``, else the user's cache directory, see
:func:`~othello_arena.referee.config.compiled_cache_dir`).

The cache may be read-only: the referee binds it so into an agent's sandbox
after :func:`~othello_arena.agents.registry.prepare` has filled it.  Code
found there is loaded; code that is missing (a cache prepared by another
numba) is compiled in memory and not saved.

:func:`use_compiled_cache` must run before the first ``@njit(cache=True)``
of a module: numba picks a function's cache folder when it is decorated.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

from numba.core import caching
from numba.core.dispatcher import Dispatcher
from numba.core.runtime.nrt import rtsys

from .cache_paths import PACKAGE_DIR, numba_cache_dir, sources_digest

# numba 0.68 made the class public; older versions call it _CacheImpl.
_CACHE_IMPL: Any = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")


class _ChampionCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba's cache locator for this package's sources: :func:`numba_cache_dir`, writable or not."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        # The subfolder names the source folder by a hash of its path, so two
        # installs (a wheel and a checkout) never load each other's code.
        # The sources' digest in the path: code compiled from other versions of any of the
        # package's files is never loaded (see cache_paths.sources_digest).
        subpath = self.get_suitable_cache_subpath(py_file)  # type: ignore[no-untyped-call]  # numba's, untyped
        self._cache_path = str(numba_cache_dir() / sources_digest() / subpath)

    def get_cache_path(self) -> str:
        return self._cache_path

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Optional["_ChampionCacheLocator"]:
        # Claimed whether or not the folder is writable (numba's own locators
        # then fall back to the package folder, which is what must not happen).
        if Path(py_file).resolve().parent != PACKAGE_DIR:
            return None
        return cls(py_func, py_file)


def use_compiled_cache() -> None:
    """Cache this package's compiled functions under :func:`numba_cache_dir` (idempotent)."""
    locators = _CACHE_IMPL._locator_classes
    if _ChampionCacheLocator not in locators:
        locators.insert(0, _ChampionCacheLocator)


def tolerate_read_only_cache(namespace: dict[str, Any]) -> None:
    """Let the compiled functions of a module run when the cache cannot be written, and load them light.

    Called at the end of each compiled module with its ``globals()``.  numba
    raises when it cannot save freshly compiled code (outside Windows); the
    code is compiled by then, so a failed save only costs the next start its
    compile time, said once on stderr.  Loading skips numba's refresh of its
    compiler's registries (:func:`_light_load`).
    """
    for value in list(namespace.values()):
        cache = getattr(value, "_cache", None) if isinstance(value, Dispatcher) else None
        if cache is None or not isinstance(getattr(cache, "_impl", None), _CACHE_IMPL):
            continue
        if not isinstance(cache._impl.locator, _ChampionCacheLocator):
            continue
        cache.save_overload = _tolerant(cache.save_overload)
        # numba's private parts the light load needs (0.68 has them); in a numba without them, its own load.
        if hasattr(cache, "_load_overload") and hasattr(cache, "_guard_against_spurious_io_errors"):
            cache.load_overload = _light_load(cache)


def _light_load(cache: Any) -> Any:
    """numba's ``Cache.load_overload`` without its refresh of the target context.

    The refresh imports and installs the typing and lowering registries of all
    of numba (about 0.13 s of CPU, the largest part of loading the engine in
    ``othello analyze``: bench/RESULTS.md, issue 27), which only a compilation
    needs, and a compilation refreshes them itself.  Code loaded from the cache
    needs numba's runtime (NRT) only, its symbols for the linker: initialised
    here.  When the cache has no code for the signature the dispatcher compiles
    as usual.
    """
    def load_overload(sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)
        with cache._guard_against_spurious_io_errors():
            return cache._load_overload(sig, target_context)

    return load_overload


_warned: list[bool] = []


def _tolerant(save: Any) -> Any:
    def save_overload(sig: Any, data: Any) -> None:
        try:
            save(sig, data)
        except OSError as exc:
            if not _warned:
                _warned.append(True)
                print(f"champion: cannot write the compiled-code cache {numba_cache_dir()} ({exc.strerror}); "
                      "compiled code is kept in memory only", file=sys.stderr)

    return save_overload


def cache_files(root: Path) -> list[Path]:
    """numba's cache files (``.nbi`` index and ``.nbc`` code) anywhere under ``root``."""
    return sorted(p for p in root.rglob("*") if p.suffix in (".nbi", ".nbc")) if root.is_dir() else []
