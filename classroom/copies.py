"""Copies in the class: which students' admitted versions share most of their code, for the dashboard and the sheet.

One computation, :func:`copy_pairs`, that the dashboard and the grade sheet
both call: every admitted version of every student is compared with every
other student's (:mod:`.similarity`: token fingerprints with winnowing,
the starters of agents/examples taken out as boilerplate), and each pair of
students is named once, by their most similar versions.

It never runs a student's program (the files as sent are read as text) and
never slows a page: the result is kept per class database and computed
again only when the set of admitted versions changed, each version's
fingerprints computed once (the admission worker refreshes it in its own
thread after each card; a page finding it stale computes it, once, under a
lock).  A flag asks the instructor to look (the side-by-side page); it
decides nothing, and no student ever sees it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .arena import EXAMPLES
from .settings import ClassSettings
from .similarity import DEFAULT_THRESHOLD, Comparer, FileOverlap, Program, SourceFile, read_sources
from .store import ClassStore, Version


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


@dataclass
class _Cache:
    comparer: Comparer
    key: Optional[tuple[tuple[int, str], ...]] = None
    pairs: tuple[CopyPair, ...] = ()


_caches: dict[str, _Cache] = {}  # class database -> its comparer (fingerprints by version) and the last pairs
_lock = threading.Lock()  # one computation at a time: a second caller waits for the first's result


def boilerplate() -> tuple[SourceFile, ...]:
    """The starters' source files (agents/examples): code every student may begin from, never counted as copied."""
    return tuple(file for file in read_sources(Path(str(EXAMPLES))) if not file.name.endswith(".md"))


def program_of(settings: ClassSettings, version: Version) -> Program:
    """A version as the comparer takes it: its files as the student sent them (never the build's output)."""
    folder = settings.folder / "submissions" / version.student / version.fingerprint
    return Program(str(version.id), version.student, read_sources(folder))


def copy_pairs(settings: ClassSettings, store: ClassStore, threshold: float = DEFAULT_THRESHOLD) -> tuple[CopyPair, ...]:
    """Every pair of students whose admitted versions share at least ``threshold`` of either's code, most similar first.

    Computed again only when the admitted versions changed (cached per
    class database); each pair of students once, by their most similar versions.
    """
    versions = store.admitted_versions()
    key = tuple((version.id, version.fingerprint) for version in versions)
    with _lock:
        cache = _caches.get(str(store.path))
        if cache is None:
            cache = _caches[str(store.path)] = _Cache(Comparer(boilerplate()))
        if cache.key == key:
            return cache.pairs
        by_id = {str(version.id): version for version in versions}
        best: dict[tuple[str, str], CopyPair] = {}
        for found in cache.comparer.similar_pairs([program_of(settings, v) for v in versions], threshold):
            first, second = sorted((by_id[found.a], by_id[found.b]), key=lambda version: version.student)
            a_in_b, b_in_a = (found.a_in_b, found.b_in_a) if first is by_id[found.a] else (found.b_in_a, found.a_in_b)
            pair = CopyPair(first.student, first.id, second.student, second.id, a_in_b, b_in_a, first.number,
                            second.number)
            kept = best.get((pair.a, pair.b))
            if kept is None or pair.similarity > kept.similarity:
                best[(pair.a, pair.b)] = pair
        cache.key, cache.pairs = key, tuple(sorted(best.values(), key=lambda p: (-p.similarity, p.a, p.b)))
        return cache.pairs


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
    with _lock:  # the class's comparer, its starters' fingerprints made once
        cache = _caches.get(str(store.path))
        comparer = cache.comparer if cache is not None else Comparer(boilerplate())
    return comparer.side_by_side(program_of(settings, versions[0]), program_of(settings, versions[1]))


__all__ = ["CopyPair", "copy_pairs", "copies_of", "side_by_side", "boilerplate"]
