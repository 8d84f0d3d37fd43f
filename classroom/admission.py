"""Admission: a submitted version is stored, built in the sandbox, checked in the sandbox, and gets its card.

:func:`submit` records a version (status ``checking``) after the rate
limit and the upload's checks; the :class:`AdmissionWorker` thread takes
the versions waiting, oldest first, one at a time: it copies the files to
``builds/ID/FP`` (the submission itself stays as sent), runs the build line
there (:func:`run_build`, sandboxed, with the class's build timeout), makes
the copy read-only, runs the conformance check (:func:`check_agent`,
sandboxed, the class's time per move) and writes the card into the
database (and ``cards/ID/FP.json``).  Admitted versions play; a rejected one
never does, and the student's previous admitted version plays on; its build
folder is removed (its card and build log are kept), so junk a failed build
left does not fill the disk.  A version still ``checking`` when the server
died is checked again at start.

The instructor may admit, reject or re-check any version by hand, with a
reason (:func:`instructor_verdict`, from the dashboard or ``othello class
admit|reject|recheck``): kept in ``verdicts``, in force at once (the ladder
reads the versions' statuses from the database).  A version rejected by
the check and then admitted by hand is built again first (its build was
removed), its check's card kept.

Each student's files in the class folder (submissions, builds, cards) are
capped (``[admission] max_student_mb``): past it, submissions are refused.

A check that could not tell (the server too busy to time the program: a
move late while it waited for a core, ``othello check``'s UNSURE) is no
verdict: the version stays ``checking``, its card and reason say so ("waiting
to be checked again: the server was too busy to time your agent", with the
figures), and it is checked again :data:`BUSY_RECHECK_SECONDS` later, at most
:data:`BUSY_CHECKS` checks in all.  At the last one, a check that got through
its games (only the timing unsure) admits it, saying its speed was not
checked; one the load stopped leaves it waiting for the instructor (admit or
re-check by hand), which the reason says.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import datetime as dt
import json
import math
import os
import shutil
import threading
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

from .arena import FAIL, HOME_ON_SERVER, AgentSpec, ReportCard, check_agent, run_build
from .cards import for_student, referee_lines_for_student, split_build_log
from .escapes import make_log_visible, visible
from .settings import ClassSettings
from .store import Card, CardItem, ClassStore, GameStatus, NewVersion, Verdict, VerdictAction, Version, VersionStatus
from .uploads import (Limits, UploadRefused, collect, file_list, make_read_only, make_writable, missing_file,
                      not_startable, parse_command, program_fingerprint, remove_tree, store_version)

TAIL_LINES = 40  # lines of a build log or an agent's output on a card
SERVER_FAULT = "the server could not check this version"  # a reason that is ours: the same files may be sent again
MAX_VERDICT_REASON = 500  # characters of the instructor's reason for a verdict by hand
STUDENT_FOLDERS = ("submissions", "builds", "cards")  # what of the class folder is a student's own (the cap)
BUSY_WAIT = "waiting to be checked again: the server was too busy to time your agent"  # a busy check's reason
BUSY_GAVE_UP = "not checked: the server was too busy to time your agent"  # ... after the last try (no more tries)
BUSY_CHECKS = 3  # checks of a version the server may be too busy for, before it stops trying by itself
BUSY_RECHECK_SECONDS = 300  # how long after a busy check the version is checked again (the load may have passed)


class RateLimited(UploadRefused):
    """Too many submissions in the last hour: ``retry_after`` seconds until the next one is taken."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OverQuota(UploadRefused):
    """The student's files in the class folder would pass ``[admission] max_student_mb``."""


class VerdictRefused(ValueError):
    """The instructor's verdict by hand cannot be given (no reason, no such student or version): the message says why."""


class VersionBusy(VerdictRefused):
    """The version is being built and checked: admitted or rejected by hand once its card has come."""


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
    moment = dt.datetime.now(dt.timezone.utc)
    limit = settings.admission.submissions_per_hour
    wait = rate_limit_wait(store.submissions_since(student, _second(moment - RATE_WINDOW)), limit, moment)
    if wait is not None:
        taken = (moment + dt.timedelta(seconds=wait)).strftime("%H:%M:%S UTC")
        raise RateLimited(f"at most {limit} submissions an hour: the next one is taken in {_duration(wait)} "
                          f"(at {taken})", wait)
    files = collect(uploads, Limits.of(settings))
    missing = missing_file(command, build, files) or not_startable(command, build, files)
    if missing is not None:  # refused now rather than built, checked and rejected minutes later
        raise UploadRefused(missing)
    used, cap = student_bytes(settings, student), settings.admission.max_student_mb << 20
    incoming = sum(len(data) for data in files.values())
    if used + incoming > cap:
        raise OverQuota(f"your files on the server (versions, builds, cards) take {_mb(used)} of the {_mb(cap)} "
                        f"each student may use, and this upload ({_mb(incoming)}) would pass it: ask your "
                        "instructor ([admission] max_student_mb in class.toml)")
    fingerprint, folder = store_version(settings.folder, student, files, command, build)
    listing = tuple((path, size) for path, size in file_list(folder))
    new = NewVersion(student, fingerprint, command, build, openings, reads_clock, listing,
                     program_fingerprint(folder, command, build, openings, reads_clock))
    version, is_new = store.add_version(new, check_again=server_fault)
    if version.fingerprint != fingerprint:  # the same program as a version stored: its files are that version's
        remove_tree(folder)
    return version, is_new


RATE_WINDOW = dt.timedelta(hours=1)  # [admission] submissions_per_hour counts the submissions of this window


def _second(moment: dt.datetime) -> str:
    """``moment`` as the store's rows hold times (ISO 8601, UTC, to the second)."""
    return moment.astimezone(dt.timezone.utc).replace(microsecond=0).isoformat()


def rate_limit_wait(recent: Sequence[str], limit: int, moment: dt.datetime) -> int | None:
    """Seconds from ``moment`` until a student whose submissions of the window are ``recent`` may submit again,
    ``None`` when they may now.

    A submission counts while its time is at or after the window's start
    (to the second): one made at T leaves the window when the start passes
    T, a second past T + :data:`RATE_WINDOW`.  Of the ``n`` in the window,
    ``n - limit + 1`` must leave; the last of those to leave is the
    ``(n - limit + 1)``-th oldest.
    """
    if len(recent) < limit:
        return None
    last_to_leave = dt.datetime.fromisoformat(sorted(recent)[len(recent) - limit])
    free_at = last_to_leave + RATE_WINDOW + dt.timedelta(seconds=1)
    return max(1, math.ceil((free_at - moment).total_seconds()))


def _duration(seconds: int) -> str:
    """``seconds`` as a person reads a wait: ``45 s``, ``12 min 5 s``."""
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60} s"


def student_bytes(settings: ClassSettings, student: str) -> int:
    """The bytes of ``student``'s own files in the class folder (submissions, builds, cards), links not followed."""
    total = 0
    for kind in STUDENT_FOLDERS:
        for base, _, names in os.walk(settings.folder / kind / student):
            for name in names:
                try:
                    total += os.lstat(os.path.join(base, name)).st_size
                except OSError:
                    pass  # removed meanwhile
    return total


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"


def space_line(settings: ClassSettings, student: str) -> str:
    """What a student's page says of their space: ``12.3 MB of 500.0 MB used (versions, builds, cards)``."""
    return (f"{_mb(student_bytes(settings, student))} of {_mb(settings.admission.max_student_mb << 20)} used "
            "(your versions, their builds and cards); past it, the server takes no new version")


def server_fault(version: Version) -> bool:
    """Whether ``version`` was rejected for a fault of the server's, not of the program (so it is checked again)."""
    return version.status is VersionStatus.REJECTED and version.reason.startswith(SERVER_FAULT)


def agent_spec(student: str, command: str, openings: bool, home: Path, reads_clock: bool = False) -> AgentSpec:
    """The referee's view of a version: its command, run with ``home`` (its built copy) as ``{home}``."""
    spec = AgentSpec.from_command(student, command, base=home)
    return dataclasses.replace(spec, openings=openings or spec.openings, reads_clock=reads_clock or spec.reads_clock)


@dataclass(frozen=True)
class BadLink:
    """A symbolic link a build left that the referee must not follow: out of the folder, or a loop."""

    shown: str  # ``path -> target`` as the link says
    loops: bool  # it leads back to itself (``ln -s loop loop``): it cannot be followed at all

    @property
    def reason(self) -> str:
        """Why the version is rejected, in a line."""
        if self.loops:
            return f"the build left a link that loops (it leads back to itself, so it cannot be followed): {self.shown}"
        return f"the build left a link out of the submission's folder: {self.shown}"


def links_out_of(root: Path) -> list[BadLink]:
    """The symbolic links under ``root`` that lead outside it, or loop.

    A link that loops (``ln -s loop loop``) cannot be resolved: Path.resolve()
    raised for it and the version got a server-fault card; it is the build's
    doing, so it is refused like a link out, with its own reason.
    """
    found = []
    inside = Path(os.path.realpath(root))
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            shown = f"{path.relative_to(root).as_posix()} -> {os.readlink(path)}"
            try:
                target = Path(os.path.realpath(path, strict=True))
            except FileNotFoundError:
                target = Path(os.path.realpath(path))  # a dangling link: where it would lead
            except OSError:  # ELOOP: the link leads back to itself
                found.append(BadLink(shown, loops=True))
                continue
            if target != inside and inside not in target.parents:
                found.append(BadLink(shown, loops=False))
    return found


def tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


def admit(settings: ClassSettings, version: Version, log: Callable[[str], None] = lambda line: None,
          by_hand: Verdict | None = None, cpus: tuple[int, ...] = ()) -> Card:
    """Build and check one version; return its card (``status``: admitted or rejected, ``reason``, the evidence).

    ``by_hand``: the instructor admitted it and only its build was missing:
    built again (and its links checked), then admitted for the instructor's
    reason, its earlier card's check kept, without checking it again.
    ``cpus``: the cores its build and check games run on (the ones the
    ladder's games leave free; ``()``: any).
    """
    limits = dataclasses.replace(settings.game, cpus=cpus)  # the class's [referee] limits, as in its games
    student, fingerprint = version.student, version.fingerprint
    source = version_folder(settings, student, fingerprint)
    built = version_folder(settings, student, fingerprint, "builds")
    card = Card(student, version.id, fingerprint, VersionStatus.CHECKING, "", command=version.command,
                build=version.build, time_per_move=settings.check_seconds, clock=settings.time.clock_text or None,
                number=version.number)
    remove_tree(built)  # a check interrupted by a restart starts again from the files as sent
    built.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, built, symlinks=True)
    make_writable(built)  # the copied files are read-only like the submission's: the build writes beside them
    if version.build:
        log_path = settings.folder / "cards" / student / f"{fingerprint}.build.log"
        result = run_build(student, version.build, str(built), log_path, settings.admission.build_timeout, limits)
        make_log_visible(log_path)  # the instructor is told to cat it: no terminal escape of the build's acts
        # the compiler's words first (the end of the build's own output), the referee's lines apart: the whole
        # log stays in cards/ for the instructor, the card shows the student no path of the server's
        environment, output = split_build_log(_read_text(log_path))
        card = dataclasses.replace(card, build_log=for_student(tail(output), built, settings.folder),
                                   build_environment=referee_lines_for_student(environment, built, settings.folder),
                                   build_status=result.status)
        if not result.ok:
            make_read_only(built)
            return _decided(card, VersionStatus.REJECTED, ("the instructor admitted it, but " if by_hand else "")
                            + f"the build failed ({result.detail or result.status})")
    make_read_only(built)
    escaping = links_out_of(built)
    if escaping:
        # The referee shows a program every file its command names, following links: a link out of the
        # folder would show it someone else's files.
        return _decided(card, VersionStatus.REJECTED, ("the instructor admitted it, but " if by_hand else "")
                        + escaping[0].reason)
    if by_hand is not None:
        earlier = version.card
        if earlier is not None:  # the check's evidence as it was: the instructor's verdict rests on it
            card = dataclasses.replace(card, check=earlier.check, items=earlier.items, stderr=earlier.stderr)
        return _decided(card, VersionStatus.ADMITTED, by_hand.text)
    spec = agent_spec(student, version.command, version.openings, built, version.reads_clock)
    workdir = settings.folder / "checks"
    workdir.mkdir(exist_ok=True)
    # under a clock the checker's games have it too; time_per_move is then its cap, or a fair share of the bank
    report = check_agent(spec, time_per_move=settings.check_seconds, workdir=workdir, log=log, clock=settings.time.clock,
                         limits=limits, home=HOME_ON_SERVER, busy_advice="")  # (what follows: the card's reason)

    def shown(text: str) -> str:
        """The card names the folder as the student knows it ({home}), and no other path of the class folder."""
        return for_student(text, built, settings.folder)

    check = tuple(shown(line) for line in report.lines()
                  if not line.startswith("the games' files are kept in"))  # (deleted below: said in stderr)
    items = tuple(CardItem(item.key, item.title, item.status, shown(item.detail),
                           tuple(shown(line) for line in item.evidence))
                  for item in report.items.values())
    stderr = ""
    if report.kept is not None:
        # each game's stderr that holds anything, one after the other: six empty logs are no output at all
        logs = (_read_text(path).strip("\n") for path in sorted(report.kept.glob("*.stderr.log")))
        stderr = visible(shown(tail("\n".join(log for log in logs if log.strip()))))
        shutil.rmtree(report.kept, ignore_errors=True)
    card = dataclasses.replace(card, check=check, items=items, stderr=stderr)
    failed = [item for item in report.items.values() if item.status == FAIL]
    if failed:
        first = failed[0]
        return _decided(card, VersionStatus.REJECTED,
                        f"the check failed: {first.title}" + (f": {first.detail}" if first.detail else ""))
    if report.unsure:
        return _busy(card, report, busy_checks(version) + 1)
    if report.untested:
        # What the check could not exercise is no evidence against the program (a strong program may never be
        # steered into a forced pass): admitted, and the card says which item went untested.  Rejecting here
        # once turned a correct agent away twice, and sending it again could not help: the check is deterministic.
        titles = ", ".join(item.title for item in report.untested)
        return _decided(card, VersionStatus.ADMITTED,
                        f"admitted; not tested, and not counted against it: {titles} (see the card)")
    return _decided(card, VersionStatus.ADMITTED, "")


def _busy(card: Card, report: ReportCard, tries: int) -> Card:
    """The check could not tell (the server too busy to time the program): no verdict, unless it was the last try.

    Never rejected on it (a correct program is turned away by a busy
    server otherwise: a class of 300 at its peak had all ten uploads of the
    starter rejected so).  The card's reason says what happens next.
    """
    card = dataclasses.replace(card, busy_checks=tries)
    figures = report.unsure[0].detail
    if tries < BUSY_CHECKS:
        return _decided(card, VersionStatus.CHECKING, f"{BUSY_WAIT} (check {tries} of at most {BUSY_CHECKS}, the next "
                        f"in {BUSY_RECHECK_SECONDS // 60} min): {figures}")
    if not report.stopped_busy:  # every other item was judged: its speed alone is unknown
        return _decided(card, VersionStatus.ADMITTED, f"admitted; the server was too busy to time it in {tries} checks: "
                        f"its speed was not checked, and is not counted against it ({figures})")
    return _decided(card, VersionStatus.CHECKING, f"{BUSY_GAVE_UP} in {tries} checks, which stopped before the end: "
                    f"your instructor can admit it or have it checked again ({figures})")


def busy_checks(version: Version) -> int:
    """How many checks in a row the server was too busy to time ``version`` (0 after any other verdict)."""
    card = version.card
    busy = version.status is VersionStatus.CHECKING and version.reason.startswith(BUSY_WAIT)
    return card.busy_checks if busy and card is not None else 0


def due_for_check(version: Version, moment: dt.datetime) -> bool:
    """Whether a ``checking`` version may be checked at ``moment``: not while it waits out a busy check's pause,
    and never again by itself once the server gave up on timing it (the instructor re-checks it by hand)."""
    if version.reason.startswith(BUSY_GAVE_UP):
        return False
    if not version.reason.startswith(BUSY_WAIT) or not version.decided_at:
        return True
    pause = dt.timedelta(seconds=BUSY_RECHECK_SECONDS)
    return dt.datetime.fromisoformat(version.decided_at) + pause <= moment


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


def decided_line(card: Card) -> str:
    """The server's log line for a card: whose version, the verdict and why, in our words alone.

    A failed check item's detail may quote what the program wrote: the log
    names the item (the card, for its owner, has the rest).
    """
    failed = next((item for item in card.items if item.status == FAIL), None)
    why = f"the check failed: {failed.title}" if card.status is VersionStatus.REJECTED and failed else card.reason
    return f"card: {card.student}'s version {card.number} {card.status.value.upper()}" + (f": {why}" if why else "")


Lane = tuple[int, ...]  # the cores one check runs on (``()``: any)


@dataclass(frozen=True)
class CheckPlan:
    """Which waiting versions start their check now, each on a lane of its own (:func:`plan_checks`)."""

    starts: tuple[tuple[Version, Lane], ...]
    backlog: bool  # versions still wait with no lane free: the ladder's cores are wanted (it starts no game)


def plan_checks(waiting: Sequence[Version], own_free: Sequence[Lane], ladder_free: Sequence[Lane]) -> CheckPlan:
    """The checks to start now: the versions waiting (in turn order, :meth:`AdmissionWorker.next_to_check`) on the
    admission's own free lanes first, then on the ladder's idle ones; ``backlog`` when some still wait.

    One check a lane: a check times the program's moves, and two programs
    thinking on one core would each be measured at half its speed.
    """
    lanes = [*own_free, *ladder_free]
    starts = tuple(zip(waiting, lanes))
    return CheckPlan(starts, backlog=len(waiting) > len(starts))


class AdmissionWorker(threading.Thread):
    """Checks the waiting versions, oldest turn first, one a lane at once, until stopped.

    Its own lanes are the cores the ladder's games leave free, one check a
    core (``cpus``; none given: one lane on any core).  Admission comes
    before the ladder: while versions wait with no lane free, the ladder
    starts no game (:meth:`wants_ladder_cores`), and once its games in
    flight have ended (``ladder_idle``) its cores (``ladder_lanes``) check
    versions too, until none waits.  A check took about 15 s of a core for
    the starter at 0.1 s a move (185 moves in 8 games) and a minute on a
    loaded one: one at a time, a class sending a version every 5 s waited
    minutes for its cards.
    """

    def __init__(self, settings: ClassSettings, store: ClassStore, on_decided: Callable[[], None] = lambda: None,
                 log: Callable[[str], None] = lambda line: None, cpus: tuple[int, ...] = (),
                 ladder_lanes: Sequence[Lane] = (), ladder_idle: Callable[[], bool] = lambda: False) -> None:
        super().__init__(name="admission", daemon=True)
        self.settings, self.store, self.on_decided, self.log = settings, store, on_decided, log
        self.cpus = cpus  # the cores the ladder's games leave free: checks run there, beside the ladder
        self.own_lanes: tuple[Lane, ...] = tuple((core,) for core in cpus) or ((),)
        self.ladder_lanes = tuple(ladder_lanes)
        self.ladder_idle = ladder_idle
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.busy = threading.Event()  # set while a version is checked
        self.lock = threading.Lock()
        self.in_flight: dict[int, Lane] = {}  # version id -> the lane its check runs on
        self.backlog = False  # versions wait with no lane free (the ladder's cores are wanted)

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()

    def wants_ladder_cores(self) -> bool:
        """Whether the ladder should start no game: versions wait for a lane, or a check runs on the ladder's cores."""
        with self.lock:
            return self.backlog or any(lane in self.ladder_lanes for lane in self.in_flight.values())

    def run(self) -> None:
        self.discard_rejected_builds()
        while not self.stopping.is_set():
            plan = self.plan()
            for version, lane in plan.starts:
                threading.Thread(target=self.check, args=(version, lane), name=f"check-{version.id}",
                                 daemon=True).start()
            with self.lock:
                idle = not self.in_flight
            if idle and not plan.backlog:
                self.busy.clear()
                self.wake.wait(1.0 if self.store.next_to_check() else 5.0)
            else:
                self.wake.wait(1.0)  # a lane freed, or the ladder's games ended: looked at again
            self.wake.clear()

    def plan(self) -> CheckPlan:
        """The checks to start now (:func:`plan_checks`), their lanes taken; :attr:`backlog` updated."""
        with self.lock:
            taken = set(self.in_flight.values())
            own = [lane for lane in self.own_lanes if lane not in taken]
            # the ladder's cores once it starts no game and its games in flight have ended
            ladder = [lane for lane in self.ladder_lanes if lane not in taken] \
                if (self.backlog or taken & set(self.ladder_lanes)) and self.ladder_idle() else []
        waiting = self.waiting()
        plan = plan_checks(waiting, own, ladder)
        with self.lock:
            for version, lane in plan.starts:
                self.in_flight[version.id] = lane
            self.backlog = plan.backlog
        if plan.starts:
            self.busy.set()
        return plan

    def check(self, waiting: Version, lane: Lane) -> None:
        """Build and check one version on ``lane`` and keep its card (a thread of its own)."""
        try:
            try:
                card = admit(self.settings, waiting, by_hand=pending_admission(self.store, waiting), cpus=lane)
            except Exception as exc:  # our fault, not the student's: said on the card, the server goes on
                self.log(f"admission of {waiting.student}'s version {waiting.number}: " + traceback.format_exc())
                card = Card(waiting.student, waiting.id, waiting.fingerprint, VersionStatus.REJECTED,
                            f"{SERVER_FAULT} ({type(exc).__name__}): send it again, or tell your instructor",
                            command=waiting.command, build=waiting.build, number=waiting.number)
            if self.stopping.is_set():
                return  # stopped mid-check: it stays 'checking' and is checked again at the next start
            record_card(self.settings, self.store, card)
            self.log(decided_line(card))
            if card.status is VersionStatus.REJECTED:
                discard_build(self.settings, waiting)
            self.on_decided()
        finally:
            with self.lock:
                del self.in_flight[waiting.id]
            self.wake.set()

    def waiting(self) -> list[Version]:
        """The versions whose check may start now, in turn order (:meth:`next_to_check`): a student's oldest alone
        (their next waits for its card), none of a student whose check runs, none a game is playing."""
        with self.lock:
            started = set(self.in_flight)
        playing: set[int] = set()
        for game in self.store.games(GameStatus.RUNNING):
            playing.update(v for v in (game.white_version, game.black_version) if v is not None)
        checking = self.store.checking_versions()  # oldest first
        being_checked = {version.student for version in checking if version.id in started}
        last_card = self.store.last_decided_by_student()
        found: list[Version] = []
        seen: set[str] = set()
        moment = dt.datetime.now(dt.timezone.utc)
        for version in checking:
            if not due_for_check(version, moment):  # waiting out a busy check's pause, or left to the instructor
                continue
            if version.student not in seen and version.student not in being_checked and version.id not in playing:
                seen.add(version.student)
                found.append(version)
        return sorted(found, key=lambda version: (last_card.get(version.student, ""), version.id))

    def next_to_check(self) -> Version | None:
        """The next version to check: each student in turn, then the oldest; never one a game is playing.

        Turns keep one student's burst of versions from holding everybody
        else's cards: the student whose last card is the oldest (or who has
        none) goes first, so a class's students share the admission time.

        A version re-checked by hand may have games in flight, from its
        build folder, which the check builds anew: it waits for them to end
        (no new one starts: it is not admitted meanwhile), or they would
        crash and be counted against it.
        """
        waiting = self.waiting()
        return waiting[0] if waiting else None

    def discard_rejected_builds(self) -> None:
        """The build folders of versions the check rejected (a class folder from before they were removed).

        A version the instructor rejected by hand keeps its build: admitted
        again, it plays at once.
        """
        by_hand = {verdict.version: verdict.action for verdict in self.store.verdicts()}
        for version in self.store.versions():
            if version.status is VersionStatus.REJECTED and by_hand.get(version.id) is not VerdictAction.REJECT:
                discard_build(self.settings, version)


def pending_admission(store: ClassStore, version: Version) -> Verdict | None:
    """The instructor's admission waiting for ``version``'s build (it is ``checking`` because its build was removed)."""
    verdicts = store.verdicts(version.id)
    last = verdicts[-1] if verdicts else None
    return last if last is not None and last.action is VerdictAction.ADMIT else None


def discard_build(settings: ClassSettings, version: Version) -> None:
    """Remove a rejected version's build folder (what a failed build left may be large); its card and log stay."""
    remove_tree(version_folder(settings, version.student, version.fingerprint, "builds"))


def instructor_verdict(settings: ClassSettings, store: ClassStore, student: str, version_id: int,
                       action: VerdictAction, reason: str, by: str) -> Verdict:
    """The instructor admits, rejects or re-checks ``student``'s version by hand, for ``reason``; in force at once.

    Admitted, it plays (if it is the student's newest admitted version);
    rejected, it stops (its games not started are voided); re-checked, it
    waits for the admission worker like a new version.  Raises
    :class:`VerdictRefused` without a reason, for a student or version that
    does not exist, and to admit or reject a version whose check is running.
    """
    reason = " ".join(reason.split())  # one line: it is shown on the card
    if not reason:
        raise VerdictRefused(f"to {action.value} a version give a reason (--reason TEXT): it is kept and shown "
                             "on the student's card")
    if len(reason) > MAX_VERDICT_REASON:
        raise VerdictRefused(f"the reason has {len(reason)} characters: at most {MAX_VERDICT_REASON}")
    if store.student(student) is None:
        raise VerdictRefused(f"no student {student!r} in the class {settings.name}")
    version = store.version(version_id)
    if version is None or version.student != student:
        theirs = ", ".join(str(mine.number) for mine in store.versions(student)) or "none"
        raise VerdictRefused(f"{student} has no such version (their versions: {theirs})")
    text = f"{action.done} by the instructor: {reason}"
    if action is VerdictAction.RECHECK:
        return store.give_verdict(version.id, action, reason, by, VersionStatus.CHECKING,
                                  text + "; being built and checked again")
    if version.status is VersionStatus.CHECKING and due_for_check(version, dt.datetime.now(dt.timezone.utc)):
        # (one waiting after a check the server was too busy for is not being checked: it may be decided by hand)
        raise VersionBusy(f"{student}'s version {version.number} is being built and checked: {action.value} it once "
                             "its card has come")
    if action is VerdictAction.REJECT:
        return store.give_verdict(version.id, action, reason, by, VersionStatus.REJECTED, text)
    if version_folder(settings, student, version.fingerprint, "builds").is_dir():
        return store.give_verdict(version.id, action, reason, by, VersionStatus.ADMITTED, text)
    # its build was removed when the check rejected it: built again by the admission worker, then admitted
    return store.give_verdict(version.id, action, reason, by, VersionStatus.CHECKING,
                              text + "; being built again first")


def verdict_outcome(store: ClassStore, verdict: Verdict) -> str:
    """What the verdict did, in a line for the instructor (whether the version plays now, and if not why)."""
    version = store.version(verdict.version)
    assert version is not None
    if version.status is VersionStatus.CHECKING:
        return f"{version.student}'s version {version.number} waits for the admission worker: {version.reason}"
    if version.status is VersionStatus.REJECTED:
        playing = next((v for v in store.current_versions() if v.student == version.student), None)
        return (f"{version.student}'s version {version.number} is rejected and no longer plays; "
                + (f"their version {playing.number} plays" if playing else "they have no admitted version left"))
    playing = next((v for v in store.current_versions() if v.student == version.student), None)
    if playing is not None and playing.id != version.id:
        return (f"{version.student}'s version {version.number} is admitted; their newer version {playing.number} "
                "plays (a student's newest admitted version plays)")
    return f"{version.student}'s version {version.number} is admitted and plays"


def public_version(version: Version, with_card: bool = True, verdicts: Sequence[Verdict] = ()) -> dict[str, Any]:
    """A version as the API shows it to its owner and the instructor (with the instructor's verdicts by hand).

    ``version`` is its number among its student's versions (what a person
    reads); ``id`` is the class's key, the one the API's URLs take
    (``/api/versions/ID``).
    """
    data: dict[str, Any] = {"version": version.number, "id": version.id, "fingerprint": version.fingerprint,
                            "status": version.status.value,
                            "reason": version.reason, "command": version.command, "build": version.build,
                            "openings": version.openings, "reads_clock": version.reads_clock,
                            "submitted_at": version.submitted_at, "decided_at": version.decided_at,
                            "files": [list(item) for item in version.files], "bytes": version.bytes}
    if with_card:
        data["card"] = version.card.to_dict() if version.card is not None else None
    data["verdicts"] = [{**verdict.to_dict(), "version": version.number} for verdict in verdicts]
    return data


__all__ = ["RateLimited", "OverQuota", "UploadRefused", "VerdictRefused", "VersionBusy", "submit", "admit", "AdmissionWorker",
           "CheckPlan", "plan_checks",
           "public_version", "instructor_verdict", "verdict_outcome", "space_line", "student_bytes"]
