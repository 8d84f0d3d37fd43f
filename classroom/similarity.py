"""Copies found: how much of one student's source appears in another's, whatever was renamed or re-commented.

The method is MOSS's and Dolos's, through the ``copydetect`` library: each
source file is tokenised by its language (pygments), names become one
letter, strings another, comments and white space vanish; the k-grams of
what is left are hashed and winnowed into fingerprints.  Two programs share
the fingerprints of the code they share, so renaming a file, a variable or
every comment changes nothing.

What the starters (agents/examples/, the files every student may begin
from) contain is boilerplate: its fingerprints are taken out first, or
every pair of students who kept the starter's board code would be flagged.

A pair is flagged when at least ``threshold`` of either program's
fingerprints appear in the other ("68 % of bob's code is in alice's"): a
flag asks a person to look (the side-by-side view), it decides nothing.
Nothing here runs a student's program: files are read as text, capped,
never through a link.
"""

from __future__ import annotations

import array
import hashlib
import io
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

# copydetect's defaults: a shared run shorter than NOISE tokens is ignored, one of GUARANTEE or more is always seen.
NOISE = 25
GUARANTEE = 30
WINDOW = GUARANTEE - NOISE + 1
DEFAULT_THRESHOLD = 0.6  # of either program's fingerprints found in the other
MAX_FILE_BYTES = 512 * 1024  # larger files are not source a student wrote by hand
MAX_FILES = 200


@dataclass(frozen=True)
class SourceFile:
    """One text file of a program: its path inside the submission and its text."""

    name: str
    text: str


@dataclass(frozen=True)
class Program:
    """A version to compare: ``key`` names it (a version id as text), ``owner`` the student it belongs to."""

    key: str
    owner: str
    files: tuple[SourceFile, ...]


@dataclass(frozen=True)
class SimilarPair:
    """Two programs of different students: the share of each one's fingerprints found in the other."""

    a: str
    b: str
    a_in_b: float
    b_in_a: float

    @property
    def similarity(self) -> float:
        """The larger share: a copy with code added is still a copy of the smaller program."""
        return max(self.a_in_b, self.b_in_a)

    def words(self) -> str:
        return f"{self.a_in_b:.0%} of {self.a}'s code is in {self.b}'s, {self.b_in_a:.0%} of {self.b}'s in {self.a}'s"


@dataclass(frozen=True)
class FileOverlap:
    """One file of each program with the code they share marked (HTML, escaped: student text is hostile)."""

    a_name: str
    b_name: str
    a_html: str
    b_html: str
    a_share: float
    b_share: float


def read_sources(folder: Path) -> tuple[SourceFile, ...]:
    """The text files under ``folder`` (a submission as uploaded), sorted: links, binaries and huge files left out."""
    found: list[SourceFile] = []
    root = Path(folder)
    for directory, folders, files in os.walk(root, followlinks=False):
        folders.sort()
        for name in sorted(files):
            if len(found) >= MAX_FILES:
                return tuple(found)
            path = Path(directory) / name
            text = _read_text(path)
            if text is not None:
                found.append(SourceFile(path.relative_to(root).as_posix(), text))
    return tuple(found)


def _read_text(path: Path) -> str | None:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None  # a link, or gone
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        data = file.read(MAX_FILE_BYTES + 1)
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _fingerprint(file: SourceFile, boilerplate: Any = None) -> Any:
    """copydetect's fingerprint of one file (its lexer guessed from the file name), boilerplate taken out."""
    import numpy as np
    from copydetect import CodeFingerprint

    # copydetect logs a warning for every file without a lexer (a README, a Makefile): they are compared as plain text.
    logging.getLogger().disabled, before = True, logging.getLogger().disabled
    try:
        return CodeFingerprint(file.name, NOISE, WINDOW, boilerplate=np.array([], dtype=np.int64) if boilerplate is None
                               else boilerplate, fp=io.StringIO(file.text))
    finally:
        logging.getLogger().disabled = before


def method_of(boilerplate: Iterable[SourceFile]) -> str:
    """What a program's fingerprints depend on besides its files, as a short digest: the starters' text, the
    k-gram and window sizes, copydetect's version.  Fingerprints kept under one method are valid for it alone."""
    import copydetect

    digest = hashlib.sha256(f"noise {NOISE} window {WINDOW} copydetect {copydetect.__version__}\n".encode())
    for file in boilerplate:
        digest.update(f"{len(file.name)} {file.name} {len(file.text)}\n".encode("utf-8", "surrogatepass"))
        digest.update(file.text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def pack_hashes(hashes: Iterable[int]) -> bytes:
    """Fingerprints as bytes to keep (64-bit integers, sorted); :func:`unpack_hashes` reads them back."""
    return array.array("q", sorted(hashes)).tobytes()


def unpack_hashes(data: bytes) -> frozenset[int]:
    values = array.array("q")
    values.frombytes(data)
    return frozenset(values)


class Comparer:
    """Fingerprints each program once (boilerplate removed), then compares every pair of different owners.

    ``boilerplate_hashes``: the starters' fingerprints as kept from an earlier
    comparer (:attr:`boilerplate_hashes`), in place of ``boilerplate``'s files
    (fingerprinting the starters took 5 s on a loaded core).
    """

    def __init__(self, boilerplate: Iterable[SourceFile] = (),
                 boilerplate_hashes: Optional[Iterable[int]] = None) -> None:
        import numpy as np

        hashes: set[int] = set()
        if boilerplate_hashes is not None:
            hashes = set(boilerplate_hashes)
        else:
            for file in boilerplate:
                hashes |= {int(value) for value in _fingerprint(file).hashes}
        self.boilerplate_hashes = frozenset(hashes)
        self._boilerplate = np.array(sorted(hashes), dtype=np.int64)
        self._hashes: dict[str, frozenset[int]] = {}

    def knows(self, key: str) -> bool:
        """Whether the program named ``key`` has its fingerprints here already (computed or remembered)."""
        return key in self._hashes

    def remember(self, key: str, hashes: frozenset[int]) -> None:
        """The fingerprints of the program named ``key``, computed earlier by a comparer of the same method."""
        self._hashes[key] = hashes

    def hashes(self, program: Program) -> frozenset[int]:
        """The program's fingerprints: every file's, the starters' taken out."""
        found = self._hashes.get(program.key)
        if found is None:
            merged: set[int] = set()
            for file in program.files:
                merged |= {int(value) for value in _fingerprint(file, self._boilerplate).hashes}
            found = self._hashes[program.key] = frozenset(merged)
        return found

    def similar_pairs(self, programs: Sequence[Program], threshold: float = DEFAULT_THRESHOLD) -> list[SimilarPair]:
        """Every pair of programs of different owners sharing at least ``threshold`` of either's fingerprints, most similar first.

        An inverted index (fingerprint -> programs) means only programs that
        share something are compared: a class of 300 is not 45,000 comparisons.
        """
        holders: dict[int, list[int]] = {}
        for index, program in enumerate(programs):
            for value in self.hashes(program):
                holders.setdefault(value, []).append(index)
        shared: dict[tuple[int, int], int] = {}
        for indices in holders.values():
            if len(indices) > 50:
                continue  # a fingerprint half the class shares is an idiom, not a copy
            for i, first in enumerate(indices):
                for second in indices[i + 1:]:
                    if programs[first].owner != programs[second].owner:
                        shared[(first, second)] = shared.get((first, second), 0) + 1
        pairs = []
        for (first, second), common in shared.items():
            a, b = programs[first], programs[second]
            a_in_b, b_in_a = common / len(self.hashes(a)), common / len(self.hashes(b))
            if max(a_in_b, b_in_a) >= threshold:
                pairs.append(SimilarPair(a.key, b.key, a_in_b, b_in_a))
        return sorted(pairs, key=lambda pair: (-pair.similarity, pair.a, pair.b))

    def side_by_side(self, a: Program, b: Program) -> list[FileOverlap]:
        """For each file of ``a``, the file of ``b`` sharing the most with it, the shared code marked on both sides."""
        from copydetect import compare_files
        from copydetect.utils import highlight_overlap

        views = []
        for a_file in a.files:
            best: tuple[int, Any] | None = None
            a_print = _fingerprint(a_file, self._boilerplate)
            for b_file in b.files:
                b_print = _fingerprint(b_file, self._boilerplate)
                overlap, shares, slices = compare_files(a_print, b_print)
                if overlap and (best is None or overlap > best[0]):
                    best = (int(overlap), (b_file, shares, slices))
            if best is None:
                continue
            b_file, shares, slices = best[1]
            # highlight_overlap escapes the text it is given and wraps the shared slices in the markers.
            a_html, _ = highlight_overlap(a_file.text, slices[0], "<mark>", "</mark>", escape_html=True)
            b_html, _ = highlight_overlap(b_file.text, slices[1], "<mark>", "</mark>", escape_html=True)
            views.append(FileOverlap(a_file.name, b_file.name, a_html, b_html, float(shares[0]), float(shares[1])))
        return views

