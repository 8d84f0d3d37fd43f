"""What the referee leaves of an agent's folder: trimmed to a size, the largest files first, links never followed."""

from __future__ import annotations

import os
from pathlib import Path

from othello_arena.referee.trim import trim_directory


def write(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(size))


def trim(folder: Path, keep: int, spare: tuple[str, ...] = ()) -> "object":
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return trim_directory(fd, keep, spare)
    finally:
        os.close(fd)


def used(folder: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*"))


def test_the_largest_files_go_first_until_the_folder_fits(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    write(folder / "huge.bin", 3 << 20)
    write(folder / "deep" / "er" / "big.bin", 2 << 20)
    write(folder / "notes.txt", 100 << 10)
    write(folder / "me.in", 4 << 20)  # the referee's file: never removed
    done = trim(folder, 5 << 20, spare=("me.in",))
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == ["me.in", "notes.txt"]
    assert done.files == 2 and done.bytes >= 5 << 20  # type: ignore[attr-defined]
    assert (folder / "deep" / "er").is_dir()  # folders stay
    assert used(folder) <= 5 << 20


def test_a_folder_within_its_size_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    write(folder / "a.bin", 1 << 20)
    done = trim(folder, 2 << 20)
    assert done.files == 0 and (folder / "a.bin").exists()  # type: ignore[attr-defined]


def test_links_are_removed_as_links_and_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "instructor"
    write(outside / "grades.csv", 2 << 20)
    folder = tmp_path / "agent"
    write(folder / "mine.bin", 1 << 20)
    (folder / "to-file").symlink_to(outside / "grades.csv")
    (folder / "to-folder").symlink_to(outside, target_is_directory=True)
    trim(folder, 0)
    assert (outside / "grades.csv").stat().st_size == 2 << 20  # what the links point to is untouched
    assert not (folder / "mine.bin").exists()
