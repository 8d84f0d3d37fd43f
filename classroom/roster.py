"""``othello class init``: the roster read and checked, a token for each student, the class folder made.

Re-running init with a longer roster adds the new students and never
changes a token already given (the database keeps only their hashes;
``tokens.csv`` keeps the rows it had and gets the new ones).
"""

from __future__ import annotations

import csv
import io
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .arena import builtin_names
from .settings import (DATABASE_FILE, INSTRUCTOR_TOKEN_FILE, SETTINGS_FILE, TOKENS_FILE, SettingsError, load,
                       write_template)
from .store import INSTRUCTOR, ClassStore

# An id is a folder name, an agent's file name (ID.in / ID.out) and part of URLs: kept plain.
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
ROSTER_LIMIT = 1 << 20  # bytes: a roster is a few kilobytes


class RosterError(ValueError):
    """The roster cannot be used: every problem, each with its line number, in one message."""


@dataclass(frozen=True)
class Student:
    id: str
    name: str
    extra: dict[str, str] = field(default_factory=dict)


def new_token() -> str:
    """A secret: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def read_roster(path: Path, reserved: set[str]) -> list[Student]:
    """The students of ``path`` (CSV with a header holding ``id`` and ``name``); ``reserved``: names ids may not take.

    Raises :class:`RosterError` listing every refused line with its number
    and why (an unsafe id, a reference agent's name, a duplicate).
    """
    data = Path(path).read_bytes()[: ROSTER_LIMIT + 1]
    if len(data) > ROSTER_LIMIT:
        raise RosterError(f"{path}: more than {ROSTER_LIMIT} bytes: not a roster")
    reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig")))
    header = [name.strip().lower() for name in reader.fieldnames or []]
    if "id" not in header or "name" not in header:
        raise RosterError(f"{path}: the first line must be a header with the columns id and name (found: {', '.join(header) or 'nothing'})")
    reader.fieldnames = header
    students: list[Student] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        student_id = (row.get("id") or "").strip()
        name = (row.get("name") or "").strip()
        if not student_id and not name:
            continue
        why = ""
        if not STUDENT_ID.match(student_id):
            why = (f"id {student_id!r} is not a safe name: letters, digits, _ and - (at most 32, "
                   "starting with a letter or digit)")
        elif student_id.lower() in reserved:
            why = f"id {student_id!r} is the name of a reference agent (or reserved): choose another"
        elif student_id.lower() in seen:
            why = f"id {student_id!r} is a duplicate of line {seen[student_id.lower()]}"
        if why:
            problems.append(f"{path}, line {line}: {why}")
            continue
        seen[student_id.lower()] = line
        extra = {key: (value or "").strip() for key, value in row.items() if key not in ("id", "name") and key}
        students.append(Student(student_id, name or student_id, extra))
    if problems:
        raise RosterError("\n".join(problems))
    return students


@dataclass
class InitReport:
    folder: Path
    added: list[str]
    kept: list[str]
    instructor_token: str
    lines: list[str] = field(default_factory=list)


def keep_private(folder: Path) -> bool:
    """Make the class folder the instructor's alone (mode 700); say whether it was open to others.

    It holds every student's code, stderr and build logs (in the database and
    the game folders) and the tokens: on a shared lab machine other users,
    students among them, must not read it.  The sandboxed agents and builds run
    as the instructor's user, so they are not hindered.
    """
    mode = folder.stat().st_mode
    if stat.S_IMODE(mode) & 0o077:
        os.chmod(folder, stat.S_IMODE(mode) & 0o700)
        return True
    return False


def init_class(folder: Path, roster: Path, time_per_move: float | None = None) -> InitReport:
    """Make (or extend) the class folder ``folder`` from ``roster``; see the module's docstring."""
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    if keep_private(folder):
        lines.append(f"{folder} was open to other users of this machine: now the instructor's only (mode 700)")
    if not (folder / SETTINGS_FILE).exists():
        write_template(folder, folder.name, time_per_move or 1.0)
        lines.append(f"wrote {folder / SETTINGS_FILE} (edit it: references, ladder, deadline, final)")
    elif time_per_move is not None:
        lines.append(f"{SETTINGS_FILE} exists: --time ignored (edit class.time_per_move there)")
    settings = load(folder)
    reserved = {name.lower() for name in builtin_names()} | {ref.name.lower() for ref in settings.references}
    reserved |= {INSTRUCTOR, "reference", "references", "admin", "api", "final"}
    students = read_roster(roster, reserved)
    for sub in ("submissions", "builds", "cards", "games"):
        (folder / sub).mkdir(exist_ok=True)
    store = ClassStore(folder / DATABASE_FILE)
    try:
        instructor_token = _instructor_token(folder, store)
        known = {row.id: row for row in store.students()}
        tokens_path = folder / TOKENS_FILE
        rows = _read_tokens(tokens_path)
        added, kept = [], []
        for student in students:
            if student.id in known:
                store.rename_student(student.id, student.name, student.extra)
                kept.append(student.id)
                if student.id in rows:
                    rows[student.id]["name"] = student.name
                continue
            clash = next((k for k in known if k.lower() == student.id.lower()), None)
            if clash is not None:
                raise RosterError(f"{roster}: id {student.id!r} differs only in case from {clash!r}, already in the class")
            token = new_token()
            store.add_student(student.id, student.name, token, student.extra)
            rows[student.id] = {"id": student.id, "name": student.name, "token": token}
            added.append(student.id)
        _write_private(tokens_path, _tokens_csv(rows))
    finally:
        store.close()
    lines.append(f"{len(added)} students added, {len(kept)} already in the class (their tokens unchanged)")
    lines.append(f"tokens for the students: {tokens_path} (id,name,token: mail merge, then keep it private)")
    lines.append(f"the instructor's token: {folder / INSTRUCTOR_TOKEN_FILE}")
    return InitReport(folder, added, kept, instructor_token, lines)


def _instructor_token(folder: Path, store: ClassStore) -> str:
    path = folder / INSTRUCTOR_TOKEN_FILE
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
    else:
        token = new_token()
        _write_private(path, token + "\n")
    store.set_instructor_token(token)
    return token


def read_instructor_token(folder: Path) -> str:
    try:
        return (Path(folder) / INSTRUCTOR_TOKEN_FILE).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise SettingsError(f"{folder}: no {INSTRUCTOR_TOKEN_FILE} (run othello class init)") from None


def _read_tokens(path: Path) -> dict[str, dict[str, str]]:
    if not path.exists():
        return {}
    with open(path, encoding="utf-8", newline="") as handle:
        return {row["id"]: dict(row) for row in csv.DictReader(handle) if row.get("id")}


def _tokens_csv(rows: dict[str, dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["id", "name", "token"], extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows.values():
        writer.writerow(row)
    return out.getvalue()


def _write_private(path: Path, text: str) -> None:
    """Write a secret readable by its owner only (mode 600 from the start, replaced in one step)."""
    temporary = path.with_name(path.name + ".new")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


__all__ = ["RosterError", "SettingsError", "Student", "init_class", "read_roster", "read_instructor_token"]
