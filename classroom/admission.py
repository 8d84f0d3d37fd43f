"""Admission: a submitted version is stored, built in the sandbox, checked in the sandbox, and gets its card.

:func:`submit` records a version (status ``checking``) after the rate
limit and the upload's checks; the :class:`AdmissionWorker` thread takes
the versions waiting, oldest first, one at a time: it copies the files to
``builds/ID/FP`` (the submission itself stays as sent), runs the build line
there (:func:`run_build`, sandboxed, with the class's build timeout), makes
the copy read-only, runs the conformance check (:func:`check_agent`,
sandboxed, the class's time per move) and writes the card into the
database (and ``cards/ID/FP.json``).  Admitted versions play; a rejected one
never does, and the student's previous admitted version plays on.  A
version still ``checking`` when the server died is checked again at start.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import shutil
import threading
import traceback
from pathlib import Path
from typing import Any, Callable

from .arena import FAIL, AgentSpec, check_agent, run_build
from .escapes import make_log_visible, visible
from .settings import ClassSettings
from .store import Card, CardItem, ClassStore, NewVersion, Version, VersionStatus
from .uploads import (Limits, UploadRefused, collect, file_list, make_read_only, make_writable, parse_command,
                      program_fingerprint, remove_tree, store_version)

TAIL_LINES = 40  # lines of a build log or an agent's output on a card
SERVER_FAULT = "the server could not check this version"  # a reason that is ours: the same files may be sent again


class RateLimited(UploadRefused):
    """Too many submissions in the last hour."""


def version_folder(settings: ClassSettings, student: str, fingerprint: str, kind: str = "submissions") -> Path:
    return settings.folder / kind / student / fingerprint


def submit(settings: ClassSettings, store: ClassStore, student: str, uploads: list[tuple[str, bytes]],
           command: str, build: str) -> tuple[Version, bool]:
    """Store a version of ``student``; return its row and whether it is new (the same files sent again is not).

    The same files sent again, or the same program (only the command's spacing or quoting changed:
    :func:`program_fingerprint`), are the version already stored, its games and rating going on; after a card
    that was the server's fault they are checked again.  Raises :class:`UploadRefused` (or :class:`RateLimited`) with the reason.
    """
    command, build, openings, reads_clock = parse_command(command, build)
    hour_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).replace(microsecond=0).isoformat()
    if store.submissions_since(student, hour_ago) >= settings.admission.submissions_per_hour:
        raise RateLimited(f"at most {settings.admission.submissions_per_hour} submissions an hour: try again later")
    files = collect(uploads, Limits.of(settings))
    fingerprint, folder = store_version(settings.folder, student, files, command, build)
    listing = tuple((path, size) for path, size in file_list(folder))
    new = NewVersion(student, fingerprint, command, build, openings, reads_clock, listing,
                     program_fingerprint(folder, command, build, openings, reads_clock))
    version, is_new = store.add_version(new, check_again=server_fault)
    if version.fingerprint != fingerprint:  # the same program as a version stored: its files are that version's
        remove_tree(folder)
    return version, is_new


def server_fault(version: Version) -> bool:
    """Whether ``version`` was rejected for a fault of the server's, not of the program (so it is checked again)."""
    return version.status is VersionStatus.REJECTED and version.reason.startswith(SERVER_FAULT)


def agent_spec(student: str, command: str, openings: bool, home: Path, reads_clock: bool = False) -> AgentSpec:
    """The referee's view of a version: its command, run with ``home`` (its built copy) as ``{home}``."""
    spec = AgentSpec.from_command(student, command, base=home)
    return dataclasses.replace(spec, openings=openings or spec.openings, reads_clock=reads_clock or spec.reads_clock)


def links_out_of(root: Path) -> list[str]:
    """The symbolic links under ``root`` whose target lies outside it (``path -> target``)."""
    found = []
    inside = root.resolve()
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            target = path.resolve()
            if target != inside and inside not in target.parents:
                found.append(f"{path.relative_to(root).as_posix()} -> {os.readlink(path)}")
    return found


def tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


def admit(settings: ClassSettings, version: Version, log: Callable[[str], None] = lambda line: None) -> Card:
    """Build and check one version; return its card (``status``: admitted or rejected, ``reason``, the evidence)."""
    student, fingerprint = version.student, version.fingerprint
    source = version_folder(settings, student, fingerprint)
    built = version_folder(settings, student, fingerprint, "builds")
    card = Card(student, version.id, fingerprint, VersionStatus.CHECKING, "", command=version.command,
                build=version.build, time_per_move=settings.check_seconds, clock=settings.time.clock_text or None)
    remove_tree(built)  # a check interrupted by a restart starts again from the files as sent
    built.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, built, symlinks=True)
    make_writable(built)  # the copied files are read-only like the submission's: the build writes beside them
    if version.build:
        log_path = settings.folder / "cards" / student / f"{fingerprint}.build.log"
        result = run_build(student, version.build, str(built), log_path, settings.admission.build_timeout, settings.game)  # the class's [referee] limits, as its games
        make_log_visible(log_path)  # the instructor is told to cat it: no terminal escape of the build's acts
        card = dataclasses.replace(card, build_log=tail(_read_text(log_path)), build_status=result.status)
        if not result.ok:
            make_read_only(built)
            return _decided(card, VersionStatus.REJECTED, f"the build failed ({result.detail or result.status})")
    make_read_only(built)
    escaping = links_out_of(built)
    if escaping:
        # The referee shows a program every file its command names, following links: a link out of the
        # folder would show it someone else's files.
        return _decided(card, VersionStatus.REJECTED,
                        f"the build left a link out of the submission's folder: {escaping[0]}")
    spec = agent_spec(student, version.command, version.openings, built, version.reads_clock)
    workdir = settings.folder / "checks"
    workdir.mkdir(exist_ok=True)
    # under a clock the checker's games have it too; time_per_move is then its cap, or a fair share of the bank
    report = check_agent(spec, time_per_move=settings.check_seconds, workdir=workdir, log=log, clock=settings.time.clock,
                         limits=settings.game)  # the class's [referee] limits, as in its games
    # the card names the folder as the student knows it: {home}, not the server's path
    shown = str(built)
    check = tuple(line.replace(shown, "{home}") for line in report.lines()
                  if not line.startswith("the games' files are kept in"))  # (deleted below: said in stderr)
    items = tuple(CardItem(item.key, item.title, item.status, item.detail.replace(shown, "{home}"),
                           tuple(line.replace(shown, "{home}") for line in item.evidence))
                  for item in report.items.values())
    stderr = ""
    if report.kept is not None:
        stderr = visible(tail("\n".join(_read_text(path) for path in sorted(report.kept.glob("*.stderr.log")))))
        shutil.rmtree(report.kept, ignore_errors=True)
    card = dataclasses.replace(card, check=check, items=items, stderr=stderr)
    failed = [item for item in report.items.values() if item.status == FAIL]
    if failed:
        first = failed[0]
        return _decided(card, VersionStatus.REJECTED,
                        f"the check failed: {first.title}" + (f": {first.detail}" if first.detail else ""))
    if report.untested:
        # What the check could not exercise is no evidence against the program (a strong program may never be
        # steered into a forced pass): admitted, and the card says which item went untested.  Rejecting here
        # once turned a correct agent away twice, and sending it again could not help: the check is deterministic.
        titles = ", ".join(item.title for item in report.untested)
        return _decided(card, VersionStatus.ADMITTED,
                        f"admitted; not tested, and not counted against it: {titles} (see the card)")
    return _decided(card, VersionStatus.ADMITTED, "")


def _decided(card: Card, status: VersionStatus, reason: str) -> Card:
    return dataclasses.replace(card, status=status, reason=reason)


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes()[-(256 << 10):].decode("utf-8", "replace")
    except OSError:
        return ""


def record_card(settings: ClassSettings, store: ClassStore, card: Card) -> None:
    """Keep the card: in the database (what is served) and as ``cards/ID/FP.json`` (for the instructor's eyes)."""
    path = settings.folder / "cards" / card.student / f"{card.fingerprint}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(card.to_dict(), indent=1), encoding="utf-8")
    store.decide(card)


class AdmissionWorker(threading.Thread):
    """Checks the waiting versions one at a time, oldest first, until stopped."""

    def __init__(self, settings: ClassSettings, store: ClassStore, on_decided: Callable[[], None] = lambda: None,
                 log: Callable[[str], None] = lambda line: None) -> None:
        super().__init__(name="admission", daemon=True)
        self.settings, self.store, self.on_decided, self.log = settings, store, on_decided, log
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.busy = threading.Event()  # set while a version is checked: the ladder starts no game meanwhile

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()

    def run(self) -> None:
        while not self.stopping.is_set():
            waiting = self.store.next_to_check()
            if waiting is None:
                self.busy.clear()
                self.wake.wait(5.0)
                self.wake.clear()
                continue
            self.busy.set()
            try:
                card = admit(self.settings, waiting)
            except Exception as exc:  # our fault, not the student's: said on the card, the server goes on
                self.log(f"admission of version {waiting.id}: " + traceback.format_exc())
                card = Card(waiting.student, waiting.id, waiting.fingerprint, VersionStatus.REJECTED,
                            f"{SERVER_FAULT} ({type(exc).__name__}): send it again, or tell your instructor",
                            command=waiting.command, build=waiting.build)
            if self.stopping.is_set():
                return  # stopped mid-check: it stays 'checking' and is checked again at the next start
            record_card(self.settings, self.store, card)
            self.on_decided()


def public_version(version: Version, with_card: bool = True) -> dict[str, Any]:
    """A version as the API shows it to its owner and the instructor."""
    data: dict[str, Any] = {"version": version.id, "fingerprint": version.fingerprint, "status": version.status.value,
                            "reason": version.reason, "command": version.command, "build": version.build,
                            "openings": version.openings, "reads_clock": version.reads_clock,
                            "submitted_at": version.submitted_at, "decided_at": version.decided_at,
                            "files": [list(item) for item in version.files], "bytes": version.bytes}
    if with_card:
        data["card"] = version.card.to_dict() if version.card is not None else None
    return data


__all__ = ["RateLimited", "UploadRefused", "submit", "admit", "AdmissionWorker", "public_version"]
