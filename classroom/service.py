"""What the class server answers, as typed values: the JSON API (:mod:`.app`) and the pages (:mod:`.pages`) both
call these functions, so a page shows what the API gives the same person, built once.

The API turns each value into JSON (:func:`student_json`, :func:`standings_json`,
:func:`class_json`); a page hands it to its template as it is.
"""

from __future__ import annotations

import datetime as dt
import functools
import gc
import json
import threading
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Optional

from .admission import public_version
from .cards import SERVER_FOLDER
from .copies import Copies, copies_now, copy_pairs
from .final import PAUSED, FinalMarker
from .grades import ReferenceLine, StudentLine, kept_standings, standings
from .grades import Standings as Standings  # (named service.Standings by app.py)
from .ladder import Ladder, game_summary
from .settings import ClassSettings
from .store import INSTRUCTOR, ClassStore, Game, GameStatus, Student, Verdict, Version, VersionStatus

MY_GAMES = 500  # the newest games of a student's versions that the student's view lists
CLASS_GAMES = 2000  # the newest games of the class that the instructor's view lists
PRIVATE = ("duplicate_of", "same_moves_as")  # what students never see of each other in the standings
# What a game's record keeps of a side that only the side's owner and the instructor see: how it was started (the
# command line, its file names, where it ran) and what the referee said of it (start errors, warnings).
PRIVATE_AGENT_KEYS = ("command", "home", "directory", "stderr_log", "file_name", "start_error", "warnings")


@dataclass(frozen=True)
class TimeRule:
    """The class's time rule as every page says it: seconds a move, the game clock (``None``: none), the text."""

    time_per_move: float
    clock: Optional[str]
    text: str

    @classmethod
    def of(cls, settings: ClassSettings) -> "TimeRule":
        return cls(settings.check_seconds, settings.time.clock_text or None, settings.time.text)

    def to_dict(self) -> dict[str, Any]:
        return {"time_per_move": self.time_per_move, "clock": self.clock, "time_text": self.text}


@dataclass(frozen=True)
class StudentView:
    """What a student sees of their own: versions (oldest first), their versions' games (newest first), standing."""

    student: Student
    versions: tuple[Version, ...]
    games: tuple[Game, ...]
    standing: Optional[StudentLine]
    time: TimeRule
    verdicts: dict[int, tuple[Verdict, ...]] = field(default_factory=dict)  # the instructor's, by version


@dataclass(frozen=True)
class StandingsView:
    """The standings every student may read: students ranked first, the reference agents beside, games by status."""

    class_name: str
    time: TimeRule
    students: tuple[StudentLine, ...]
    references: tuple[ReferenceLine, ...]
    games: dict[GameStatus, int]
    paused: str = ""  # why the ladder starts no game now (the final runs), "" when it plays


@dataclass(frozen=True)
class ClassStudent:
    """A student as the instructor sees them: the roster's row, the standing, every version (oldest first)."""

    student: Student
    line: StudentLine
    versions: tuple[Version, ...]


@dataclass(frozen=True)
class ClassView:
    """The instructor's view of the class: every student, the references, the newest games, the duplicates."""

    class_name: str
    time: TimeRule
    deadline: Optional[dt.datetime]
    students: tuple[ClassStudent, ...]
    references: tuple[ReferenceLine, ...]
    games: tuple[Game, ...]  # newest first
    duplicates: tuple[StudentLine, ...]  # the students whose current version is another's, or plays as another's
    ladder: str = ""  # what the ladder is doing: playing, or idle and why (Ladder.state)
    verdicts: dict[int, tuple[Verdict, ...]] = field(default_factory=dict)  # the instructor's by hand, by version
    # students whose admitted versions share code (never shown to a student), and whether they are being compared
    copies: Copies = Copies((), pending=False, compared=True)
    roster: Optional["Roster"] = None  # what students and versions were read from (what is made of them is kept there)
    standings_pending: bool = False  # the first standings since the start are being computed: none shown yet




def student_view(settings: ClassSettings, store: ClassStore, person: str,
                 ranked: Optional[Standings] = None) -> StudentView:
    """``person``'s own view (a student id of the class: ``LookupError`` otherwise); ``ranked``: the standings
    already computed (the event streams share one computation), else computed here."""
    student = store.student(person)
    if student is None:
        raise LookupError(f"no student {person!r} in this class")
    lines, _ = ranked or standings(settings, store)
    mine = next((line for line in lines if line.id == person), None)
    games = tuple(listed(game, person, settings.folder) for game in store.games_of_student(person, latest=MY_GAMES,
                                                                                       records=False))
    return StudentView(student, tuple(store.versions(person)), games, mine, TimeRule.of(settings),
                       verdicts_by_version(store, person))


def listed(game: Game, person: str, folder: Path) -> Game:
    """``game`` as a list shows it to ``person``: :func:`game_as_seen` without its record and stderr (a list
    shows neither, and parsing 500 records for each refresh of a page is what a list must not cost)."""
    if game.record is not None or game.white_stderr is not None or game.black_stderr is not None:
        game = replace(game, record=None, white_stderr=None, black_stderr=None)
    return game_as_seen(game, person, folder)


@functools.lru_cache(maxsize=16)
def _roots(folder: Path) -> tuple[str, ...]:
    """The class folder's path as a text may hold it, as given and resolved, the longer first (asked once a
    folder: a student's view lists 500 games, and resolving is a system call per folder of the path)."""
    return tuple(sorted({str(folder), str(folder.resolve())}, key=len, reverse=True))


def game_as_seen(game: Game, person: str, folder: Path) -> Game:
    """``game`` as ``person`` may see it: whole for the instructor; for a student, the record without the other
    side's command line, file names and the referee's words about it, and no text with the server's paths.

    Every route that shows a game to a student (its record, its replay, the
    lists of games) passes it through here first.
    """
    if person == INSTRUCTOR:
        return game
    roots = _roots(folder)

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            for root in roots:
                value = value.replace(root, SERVER_FOLDER)
            return value
        if isinstance(value, list):
            return [scrub(item) for item in value]
        if isinstance(value, dict):
            return {key: scrub(item) for key, item in value.items()}
        return value

    record = game.record
    if record:
        data = json.loads(record)
        agents = data.get("agents", {}) if isinstance(data, dict) else {}  # game.json keeps extra at its top
        for label, entry in agents.items() if isinstance(agents, dict) else ():
            if label != person and isinstance(entry, dict):
                for key in PRIVATE_AGENT_KEYS:
                    entry.pop(key, None)
        record = json.dumps(scrub(data))
    detail, void_reason = scrub(game.detail), scrub(game.void_reason)
    if record is game.record and detail == game.detail and void_reason == game.void_reason:
        return game  # nothing to hide (a list's row without a record, no path in its words): no copy made
    return replace(game, record=record, detail=detail, void_reason=void_reason)


def standings_view(settings: ClassSettings, store: ClassStore, ranked: Optional[Standings] = None,
                   fresh: bool = True) -> StandingsView:
    """``fresh=False``: the standings kept, one computation behind at most (:func:`.grades.standings`)."""
    lines, references = ranked or standings(settings, store, fresh)
    return StandingsView(settings.name, TimeRule.of(settings), tuple(lines), tuple(references), store.game_counts(),
                         PAUSED if FinalMarker(settings.folder).running() else "")


@dataclass(frozen=True, eq=False)
class Roster:
    """The class's students with their versions (cards included) and the instructor's verdicts, as of one
    :meth:`.ClassStore.roster_mark`: what the dashboard lists of each student apart from the standings.

    Read once per change of the mark (:func:`roster`) rather than at every
    dashboard (1,500 versions' cards parsed: 50 ms a view at 300 students);
    what is made from it (each version as JSON, the versions' HTML) is kept
    with it, so it too is made once per change.  Shared by every caller:
    read it, never change it.
    """

    mark: Any
    students: tuple[Student, ...]
    versions: dict[str, tuple[Version, ...]]  # by student, oldest first
    verdicts: dict[int, tuple[Verdict, ...]]  # the instructor's by hand, by version
    made: dict[str, Any] = field(default_factory=dict)  # what was made from it, by name (ClassPages, version_json)

    def status_of(self, student: str) -> str:
        """The student's status as the standings say it: their last admitted version's, else their last one's."""
        mine = self.versions.get(student, ())
        chosen = next((v for v in reversed(mine) if v.status is VersionStatus.ADMITTED), mine[-1] if mine else None)
        return chosen.status.value if chosen is not None else "none"

    def versions_json(self, student: str) -> list[dict[str, Any]]:
        """``student``'s versions as the API gives them to the instructor (cards and verdicts), made once."""
        made = self.made.setdefault("versions_json", {})
        found = made.get(student)
        if found is None:
            found = made[student] = [public_version(version, verdicts=self.verdicts.get(version.id, ()))
                                     for version in self.versions.get(student, ())]
        return found  # type: ignore[no-any-return]

    def versions_text(self, student: str) -> str:
        """:meth:`versions_json` as JSON text, made once (1.5 MB of cards at 300 students: the class view's most)."""
        made = self.made.setdefault("versions_text", {})
        found = made.get(student)
        if found is None:
            found = made[student] = json.dumps(self.versions_json(student))
        return found  # type: ignore[no-any-return]

    def keep_from(self, older: "Roster") -> None:
        """Take from ``older`` what was made of each student alone (:data:`MADE_PER_STUDENT`) for every student
        whose row, versions and verdicts read the same in both: one student's new version leaves the other 299's
        cards as JSON and as HTML as they were made (1.5 MB and 1 MB at 300 students, made again at every change)."""
        rows = {student.id: student for student in older.students}
        same = {student.id for student in self.students
                if rows.get(student.id) == student
                and older.versions.get(student.id, ()) == self.versions.get(student.id, ())
                and all(older.verdicts.get(version.id, ()) == self.verdicts.get(version.id, ())
                        for version in self.versions.get(student.id, ()))}
        for name in MADE_PER_STUDENT:
            made = older.made.get(name)
            if made:
                self.made[name] = {student: value for student, value in made.items() if student in same}


# What a roster's ``made`` holds by student, each made of that student's rows alone (Roster.keep_from)
MADE_PER_STUDENT = ("versions_json", "versions_text", "versions_html")

_rosters: dict[str, Roster] = {}  # class database -> its roster as last read
_rosters_lock = threading.Lock()


def roster(store: ClassStore) -> Roster:
    """The class's roster (:class:`Roster`), read again only when :meth:`.ClassStore.roster_mark` moved."""
    mark = store.roster_mark()
    with _rosters_lock:
        kept = _rosters.get(str(store.path))
    if kept is not None and kept.mark == mark:
        return kept
    versions: dict[str, list[Version]] = {}
    for version in store.versions():  # one query, not one a student
        versions.setdefault(version.student, []).append(version)
    fresh = Roster(mark, tuple(store.students()), {student: tuple(mine) for student, mine in versions.items()},
                   verdicts_by_version(store))
    if kept is not None:
        fresh.keep_from(kept)
    if store.roster_mark() != mark:  # changed while it was read: given, not kept (the next view reads it again)
        return fresh
    with _rosters_lock:
        _rosters[str(store.path)] = fresh
    return fresh


WARM_SECONDS = 5.0  # how often the warm thread looks whether the admitted versions changed (a query of one table)


def warm(settings: ClassSettings, store: ClassStore, log: Callable[[str], None]) -> None:
    """The pages' thread of work ahead of them, for the server's life: at the start, what the pages read first
    (the standings, the roster: those of 20,000 games take 2-8 s the first time); then the copies comparison kept
    current (:func:`.copies.copy_pairs`, seconds for a class of 300 after a start), so that neither the dashboard
    nor the grade sheet waits for it.  A fault here is no fault of the server's: the page computes it, and the
    dashboard says why the copies could not be compared; the log says it once.  Once all that is read, it is set
    aside from the garbage collector (:func:`set_aside_from_collections`)."""
    try:
        standings(settings, store, fresh=False)  # (those the worker kept: computed here only if none are)
        roster(store)
    except Exception:
        pass
    said = ""
    first = True
    while True:
        try:
            copy_pairs(settings, store)
            said = ""
        except Exception:
            fault = traceback.format_exc()
            if fault != said:
                log("comparing the versions for copies: " + fault)
                said = fault
        if first:
            first = False
            log(f"the start's reads set aside from the garbage collector: {set_aside_from_collections()} objects")
        time.sleep(WARM_SECONDS)


def set_aside_from_collections() -> int:
    """Move every object alive now out of the garbage collector's sight for good (``gc.freeze``); return how many.

    Called once, when the start's reads are done: the class's results, roster and copies' prints (some 240,000
    objects for 300 students and 20,000 games) live as long as the server, and each full collection walked them
    all, 80-240 ms with every answer and event stream of the class held (the slowest 1 % of the answers at the
    peak came in a few distinct seconds).  Collected first, so that no garbage is set aside with them; what is
    made later is collected as usual.
    """
    gc.collect()
    before = gc.get_freeze_count()
    gc.freeze()
    return gc.get_freeze_count() - before


_ladder_states: dict[str, tuple[Any, str]] = {}  # class database -> (its change mark and a time slot, the idle state)
_ladder_reading: set[str] = set()  # the class databases whose idle state a thread is working out now
_ladder_lock = threading.Lock()
LADDER_STATE_SECONDS = 10.0  # an idle ladder's state is asked again at least this often (its hourly budget frees)
LADDER_STATE_READ = "idle: why is being worked out (the ratings and the pairs are read after a start)"


def ladder_state(settings: ClassSettings, store: ClassStore) -> str:
    """:meth:`.Ladder.state`, never waited for: playing, from the games' counts; idle, the reason as last worked out
    (a whole plan, seconds after a start: the ratings of 20,000 games), worked out again in a thread of its own
    when a row changed or :data:`LADDER_STATE_SECONDS` passed."""
    ladder = Ladder(settings, store)
    playing = ladder.playing()
    if playing is not None:
        return playing
    path = str(store.path)
    key = (store.change_mark(), int(time.monotonic() // LADDER_STATE_SECONDS))
    with _ladder_lock:
        kept = _ladder_states.get(path)
        if kept is not None and kept[0] == key:
            return kept[1]
        if path not in _ladder_reading:
            _ladder_reading.add(path)
            threading.Thread(target=_read_idle_state, args=(ladder, path, key), name="ladder-state",
                             daemon=True).start()
        return kept[1] if kept is not None else LADDER_STATE_READ


def _read_idle_state(ladder: Ladder, path: str, key: Any) -> None:
    try:
        state = ladder.idle_state()
        with _ladder_lock:
            _ladder_states[path] = (key, state)
    except Exception:  # (the store closed meanwhile, a server stopping): nothing kept, the next view asks again
        pass
    finally:
        with _ladder_lock:
            _ladder_reading.discard(path)


def class_view(settings: ClassSettings, store: ClassStore, latest_games: int = CLASS_GAMES,
               ranked: Optional[Standings] = None, fresh: bool = True) -> ClassView:
    """``fresh=False``: nothing waited for: the standings kept, one computation behind at most (none while the
    first are computed: :func:`.grades.kept_standings`), the copies of the last comparison
    (:func:`.copies.copies_now`: a newer one runs meanwhile)."""
    kept = ranked or (standings(settings, store) if fresh else kept_standings(settings, store))
    lines, references = kept if kept is not None else ([], [])
    by_id = {line.id: line for line in lines}
    people = roster(store)
    # (a student added since the standings kept were computed: a line of their own until the next ones)
    students = tuple(ClassStudent(student, by_id.get(student.id) or StudentLine(student.id, student.name,
                                                                               status=people.status_of(student.id)),
                                  people.versions.get(student.id, ()))
                     for student in people.students)
    duplicates = tuple(line for line in lines if line.duplicate_of or line.same_moves_as)
    return ClassView(settings.name, TimeRule.of(settings), settings.deadline, students, tuple(references),
                     tuple(store.latest_games(latest_games)), duplicates,
                     Ladder(settings, store).state() if fresh else ladder_state(settings, store),
                     people.verdicts,
                     Copies(copy_pairs(settings, store), pending=False, compared=True) if fresh
                     else copies_now(settings, store), people, standings_pending=kept is None)


def verdicts_by_version(store: ClassStore, student: Optional[str] = None) -> dict[int, tuple[Verdict, ...]]:
    """The instructor's verdicts by hand (on ``student``'s versions), oldest first, by version id."""
    mine = None if student is None else {version.id for version in store.versions(student, cards=False)}
    found: dict[int, list[Verdict]] = {}
    for verdict in store.verdicts():
        if mine is None or verdict.version in mine:
            found.setdefault(verdict.version, []).append(verdict)
    return {version: tuple(verdicts) for version, verdicts in found.items()}


# -- as JSON (the API's answers) ------------------------------------------------------


def student_json(view: StudentView) -> dict[str, Any]:
    return {"id": view.student.id, "name": view.student.name, "instructor": False,
            "versions": [public_version(version, verdicts=view.verdicts.get(version.id, ())) for version in view.versions],
            "games": [game_summary(game) for game in view.games],
            "standing": view.standing.to_dict() if view.standing else None, **view.time.to_dict()}


def standings_json(view: StandingsView) -> dict[str, Any]:
    public = []
    for line in view.students:  # what every student may see of everybody: no code, no logs, no duplicates named
        data = line.to_dict()
        for private in PRIVATE:
            data.pop(private)
        public.append(data)
    return {"class": view.class_name, **view.time.to_dict(), "students": public,
            "references": [reference.to_dict() for reference in view.references],
            "games": {status.value: count for status, count in view.games.items()}, "paused": view.paused}


def class_json(view: ClassView) -> dict[str, Any]:
    def versions_json(entry: ClassStudent) -> list[dict[str, Any]]:
        if view.roster is not None:  # made once per change of the roster
            return view.roster.versions_json(entry.student.id)
        return [public_version(version, verdicts=view.verdicts.get(version.id, ())) for version in entry.versions]

    return {"class": view.class_name, **_class_rest(view),
            "students": [{**entry.line.to_dict(), "extra": entry.student.extra, "versions": versions_json(entry)}
                         for entry in view.students]}


def class_text(view: ClassView) -> str:
    """:func:`class_json` as JSON text (what ``/api/class`` sends), each student's versions put in as the text kept
    with the roster (:meth:`Roster.versions_text`) rather than encoded again at every view."""
    if view.roster is None:
        return json.dumps(class_json(view))
    people = view.roster
    students = ", ".join(json.dumps({**entry.line.to_dict(), "extra": entry.student.extra})[:-1]
                         + ', "versions": ' + people.versions_text(entry.student.id) + "}" for entry in view.students)
    return '{"class": ' + json.dumps(view.class_name) + ', "students": [' + students + "], " + \
        json.dumps(_class_rest(view))[1:]


def _class_rest(view: ClassView) -> dict[str, Any]:
    """The class view as JSON but its name and students: the time rule, the references, the games, the copies."""
    return {**view.time.to_dict(), "deadline": view.deadline.isoformat() if view.deadline else None,
            "references": [reference.to_dict() for reference in view.references],
            "games": [game_summary(game) for game in view.games],
            "duplicates": [{"id": line.id, "duplicate_of": line.duplicate_of, "same_moves_as": line.same_moves_as}
                           for line in view.duplicates],
            "ladder": view.ladder, "copies": [pair.to_dict() for pair in view.copies.pairs],
            # the admitted versions changed since those pairs: compared now (compared false: never yet, since the start)
            "copies_pending": view.copies.pending, "copies_compared": view.copies.compared,
            "copies_error": view.copies.error,
            "standings_pending": view.standings_pending}  # the first standings since the start: none yet
