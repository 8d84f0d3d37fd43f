"""Copies in the class: which students' admitted versions share most of their code, for the dashboard and the sheet.

One computation, :func:`copy_pairs`, that the dashboard and the grade sheet
both call: every admitted version of every student is compared with every
other student's (:mod:`.similarity`: token fingerprints with winnowing,
the starters of agents/examples taken out as boilerplate), and each pair of
students is named once, by their most similar versions.

It never runs a student's program (the files as sent are read as text) and
never slows a page: the result is kept per class database and computed
again only when the set of admitted versions changed, each version's
fingerprints computed once and kept in the class database
(``copy_prints``), so a restart reads them rather than fingerprinting
every version again (300 took 40-108 s of a loaded core).  The server's
warm thread (:func:`.service.warm`, in the pages' process, whose cache the
pages read) keeps the comparison current; the dashboard never waits for it (:func:`copies_now`: the last comparison, and
whether a newer one is running); the grade sheet does (:func:`copy_pairs`).
A flag asks the instructor to look (the side-by-side page); it decides
nothing, and no student ever sees it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .arena import EXAMPLES
from .settings import ClassSettings
from .similarity import (DEFAULT_THRESHOLD, Comparer, FileOverlap, Program, SourceFile, method_of, pack_hashes,
                         read_sources, unpack_hashes)
from .store import STARTERS_PRINTS, ClassStore, Version


@dataclass(frozen=True)
class CopyPair:
    """Two students whose admitted versions share code: the most similar two versions, each share of the other."""

    a: str
    a_version: int
    b: str
    b_version: int
    a_in_b: float  # the share of a's fingerprints found in b's version
    b_in_a: float
    a_number: int = 0  # a's version as a numbers it (the id above is the key: /copies/A/B)
    b_number: int = 0

    @property
    def similarity(self) -> float:
        """The larger share: a copy with code added is still a copy of the smaller program."""
        return max(self.a_in_b, self.b_in_a)

    def words(self) -> str:
        """The similarity said in words, with the versions: what the dashboard shows."""
        return (f"{self.a_in_b:.0%} of {self.a}'s code (version {self.a_number}) is in {self.b}'s "
                f"(version {self.b_number}), {self.b_in_a:.0%} of {self.b}'s in {self.a}'s")

    def involves(self, student: str) -> bool:
        return student in (self.a, self.b)

    def other(self, student: str) -> str:
        return self.b if student == self.a else self.a

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "a_version": self.a_number, "a_version_id": self.a_version, "b": self.b,
                "b_version": self.b_number, "b_version_id": self.b_version,
                "a_in_b": round(self.a_in_b, 4), "b_in_a": round(self.b_in_a, 4),
                "similarity": round(self.similarity, 4), "words": self.words()}


@dataclass(frozen=True)
class Copies:
    """What the dashboard shows of the copies: the last comparison's pairs, and whether the admitted versions
    changed since (a comparison of them is running: ``pending``; with ``compared`` ``False``, none has ended yet)."""

    pairs: tuple[CopyPair, ...]
    pending: bool
    compared: bool
    error: str = ""  # why the last comparison failed, if it did (the pairs are then those before)


@dataclass
class _Cache:
    comparer: Optional[Comparer] = None  # made at the first comparison (the starters' fingerprints)
    method: str = ""  # what its fingerprints depend on besides the files (similarity.method_of)
    key: Optional[tuple[Any, ...]] = None  # the admitted versions (id, fingerprint) and the threshold compared
    pairs: tuple[CopyPair, ...] = ()
    running: bool = False  # a comparison of this database runs now
    error: str = ""  # why the last comparison in a thread of its own failed ("" when it did not)


_caches: dict[str, _Cache] = {}  # class database -> its comparer (fingerprints by version) and the last pairs
_changed = threading.Condition()  # guards _caches; one comparison of a database at a time, the others wait or go on


def boilerplate() -> tuple[SourceFile, ...]:
    """The starters' source files (agents/examples): code every student may begin from, never counted as copied."""
    return tuple(file for file in read_sources(Path(str(EXAMPLES))) if not file.name.endswith(".md"))


def program_of(settings: ClassSettings, version: Version) -> Program:
    """A version as the comparer takes it: its files as the student sent them (never the build's output)."""
    folder = settings.folder / "submissions" / version.student / version.fingerprint
    return Program(str(version.id), version.student, read_sources(folder))


def _comparer(store: ClassStore) -> tuple[Comparer, str, dict[str, bytes]]:
    """The class's comparer, its method and the fingerprints kept under it (by version fingerprint): the starters'
    fingerprints read from the database when kept there, else computed (and kept by the caller)."""
    starters = boilerplate()
    method = method_of(starters)
    kept = store.copy_prints(method)
    if STARTERS_PRINTS in kept:
        return Comparer(boilerplate_hashes=unpack_hashes(kept[STARTERS_PRINTS])), method, kept
    return Comparer(starters), method, kept


def _key(versions: list[Version], threshold: float) -> tuple[Any, ...]:
    return (tuple((version.id, version.fingerprint) for version in versions), threshold)


def copy_pairs(settings: ClassSettings, store: ClassStore, threshold: float = DEFAULT_THRESHOLD) -> tuple[CopyPair, ...]:
    """Every pair of students whose admitted versions share at least ``threshold`` of either's code, most similar first.

    Computed again only when the admitted versions changed (cached per
    class database), waiting for a comparison that runs; each pair of
    students once, by their most similar versions.
    """
    versions = store.admitted_versions(cards=False)  # (their files are read, never their cards)
    key = _key(versions, threshold)
    path = str(store.path)
    with _changed:
        while True:
            cache = _caches.setdefault(path, _Cache())
            if cache.key == key:
                return cache.pairs
            if not cache.running:
                cache.running = True
                break
            _changed.wait()
    return _compare(settings, store, versions, threshold, cache)


def copies_now(settings: ClassSettings, store: ClassStore, threshold: float = DEFAULT_THRESHOLD) -> Copies:
    """The copies as the dashboard shows them, never waiting: the last comparison's pairs, and whether the admitted
    versions changed since; if so, their comparison is started in a thread of its own (unless one runs)."""
    versions = store.admitted_versions(cards=False)
    key = _key(versions, threshold)
    path = str(store.path)
    with _changed:
        cache = _caches.setdefault(path, _Cache())
        if cache.key == key:
            return Copies(cache.pairs, pending=False, compared=True)
        error = cache.error
        if not cache.running:
            cache.running = True
            threading.Thread(target=_compare_quietly, args=(settings, store, versions, threshold, cache),
                             name="copies", daemon=True).start()
        return Copies(cache.pairs, pending=True, compared=cache.key is not None, error=error)


def _compare_quietly(settings: ClassSettings, store: ClassStore, versions: list[Version], threshold: float,
                     cache: _Cache) -> None:
    """:func:`_compare` in a thread of its own: a fault leaves the last pairs and is said on the dashboard (the
    next view tries again; the admission worker's attempt writes the trace in the server's log)."""
    try:
        _compare(settings, store, versions, threshold, cache)
    except Exception as exc:
        with _changed:
            cache.error = f"{type(exc).__name__}: {exc}"


def _compare(settings: ClassSettings, store: ClassStore, versions: list[Version], threshold: float,
             cache: _Cache) -> tuple[CopyPair, ...]:
    """Compare ``versions`` and keep the pairs as the cache's (the caller set ``cache.running``): each version's
    fingerprints from the database when kept there, else computed and kept."""
    try:
        fresh: dict[str, bytes] = {}  # fingerprints computed here, to keep
        kept: dict[str, bytes] = {}
        comparer = cache.comparer
        if comparer is None:
            comparer, cache.method, kept = _comparer(store)
            cache.comparer = comparer
            if STARTERS_PRINTS not in kept:
                fresh[STARTERS_PRINTS] = pack_hashes(comparer.boilerplate_hashes)
        elif any(not comparer.knows(str(version.id)) for version in versions):
            kept = store.copy_prints(cache.method)  # (a version admitted since: kept by an earlier start?)
        programs = []
        for version in versions:
            key = str(version.id)
            if not comparer.knows(key) and version.fingerprint in kept:
                comparer.remember(key, unpack_hashes(kept[version.fingerprint]))
            if comparer.knows(key):
                programs.append(Program(key, version.student, ()))  # its fingerprints known: its files not read
            else:
                program = program_of(settings, version)
                fresh[version.fingerprint] = pack_hashes(comparer.hashes(program))
                programs.append(program)
        if fresh:
            store.keep_copy_prints(cache.method, fresh)
        by_id = {str(version.id): version for version in versions}
        best: dict[tuple[str, str], CopyPair] = {}
        for found in comparer.similar_pairs(programs, threshold):
            first, second = sorted((by_id[found.a], by_id[found.b]), key=lambda version: version.student)
            a_in_b, b_in_a = (found.a_in_b, found.b_in_a) if first is by_id[found.a] else (found.b_in_a, found.a_in_b)
            pair = CopyPair(first.student, first.id, second.student, second.id, a_in_b, b_in_a, first.number,
                            second.number)
            kept_pair = best.get((pair.a, pair.b))
            if kept_pair is None or pair.similarity > kept_pair.similarity:
                best[(pair.a, pair.b)] = pair
        pairs = tuple(sorted(best.values(), key=lambda p: (-p.similarity, p.a, p.b)))
        with _changed:
            cache.key, cache.pairs, cache.error = _key(versions, threshold), pairs, ""
        return pairs
    finally:
        with _changed:
            cache.running = False
            _changed.notify_all()


def copies_of(pairs: tuple[CopyPair, ...], student: str) -> list[CopyPair]:
    """The pairs naming ``student`` (what a grade sheet's row says of them), most similar first."""
    return [pair for pair in pairs if pair.involves(student)]


def side_by_side(settings: ClassSettings, store: ClassStore, a_version: int, b_version: int) -> list[FileOverlap]:
    """Each file of version ``a_version`` beside the file of ``b_version`` sharing most with it, shared code marked.

    ``LookupError`` when either is not a version of the class.  The HTML is
    escaped (student text is hostile) with the shared code in ``<mark>``.
    """
    versions = []
    for wanted in (a_version, b_version):
        found = store.version(wanted)
        if found is None:
            raise LookupError(f"no version {wanted}")
        versions.append(found)
    with _changed:  # the class's comparer, its starters' fingerprints made once
        cache = _caches.get(str(store.path))
        comparer = cache.comparer if cache is not None else None
    if comparer is None:
        comparer = _comparer(store)[0]
    return comparer.side_by_side(program_of(settings, versions[0]), program_of(settings, versions[1]))


__all__ = ["Copies", "CopyPair", "copy_pairs", "copies_now", "copies_of", "side_by_side", "boilerplate"]
