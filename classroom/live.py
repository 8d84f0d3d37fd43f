"""What each open page shows, as marks: a stream says which parts of its page changed, and each part is drawn
once per change of its mark (:mod:`.pages`), not once per page that asks.

A class of 300 keeps 300 pages open, and every finished game moves every
rating.  When every stream said "something changed" and every page fetched
itself again, each game sent 300 pages to be rebuilt at once (1.8-5 s at p50,
11-13 s at p99 on two cores).  Here a page is cut into parts, each with a
mark that changes only when what the part *shows* changes:

- a student's page: ``standing`` (their line as the page prints it: rank,
  rating and interval rounded to the point as shown, games, points, faults,
  results against each reference), ``versions`` (their versions with cards
  and the instructor's verdicts), ``games`` (their games and where each one
  is), ``class-games`` (the class's latest finished games);
- the standings page: ``standings`` (every line as shown, the references,
  the games by status, whether the final pauses the ladder);
- the dashboard: ``dashboard`` (anything in the class).

A game between two students changes those two students' own parts at once;
the parts that move with everybody's games (``class-games``, ``standings``,
``dashboard``, and a standing whose rank or rounded rating alone moved) are
passed on by a stream no more often than :data:`HELD` says, each stream at
its own moment, all in one message.

A mark is a short hash salted once per server start (a page drawn by an
earlier server never matches); a student's stream carries the marks of
their own parts and of the shared ones, never another student's.  The marks
are computed once per change of the class for everybody (a few queries, no
per-student query): :meth:`LiveMarks.current`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Hashable, Optional, TypeVar

from .final import FinalMarker
from .grades import StudentLine, Standings
from .settings import ClassSettings
from .store import INSTRUCTOR, OPEN_GAMES, ClassStore, GameStatus

STUDENT_PAGE = ("standing", "versions", "games", "class-games")  # a student's page, in the page's order
STANDINGS_PAGE = ("standings",)
DASHBOARD_PAGE = ("dashboard",)
OWN_PARTS = frozenset({"standing", "versions", "games"})  # what only their student sees of them
# Parts that move with everybody's games: a stream passes a move of one on no sooner than this many seconds after
# the last (times 1 to 1.5, drawn per stream, so that 300 pages do not ask in the same second), and with any other
# message it sends (one fetch for all).  A student's standing moves with everybody's games too (their rank, their
# rating rounded), but at once when their own line does (their games, points, faults, version: URGENT).
HELD = {"class-games": 30.0, "standings": 30.0, "standing": 30.0, "dashboard": 15.0}
URGENT = {"standing": "standing-own"}  # a held part -> the mark of what moves it at once
PARTS = {"student": STUDENT_PAGE + STANDINGS_PAGE, INSTRUCTOR: DASHBOARD_PAGE + STANDINGS_PAGE}
_SALT = os.urandom(8)  # one server's marks are never another's
T = TypeVar("T")


def mark_of(value: Any) -> str:
    """A short mark of ``value`` (its ``repr``): equal values, equal marks, within this server's life."""
    return hashlib.blake2b(repr(value).encode("utf-8"), digest_size=8, key=_SALT).hexdigest()


def shown_rating(value: Optional[float]) -> Optional[int]:
    """A rating as the pages print it (``{{ rating | round | int }}``: Jinja rounds as Python's ``round`` does)."""
    return None if value is None else int(round(value, 0))


def own_line(line: StudentLine) -> tuple[Any, ...]:
    """What of a student's line moves with their own games and versions alone (not with everybody's)."""
    return (line.status, line.number, line.fingerprint[:12], line.games, line.score, line.crashes, line.timeouts,
            tuple(line.against.items()))


def shown_line(line: StudentLine) -> tuple[Any, ...]:
    """What the pages print of a student's line (their own standing and their row in the standings)."""
    return (line.id, line.name, line.status, line.number, line.fingerprint[:12], line.rank, shown_rating(line.rating),
            shown_rating(line.rating_error), line.games, line.score, line.crashes, line.timeouts,
            tuple(line.against.items()))


def parts_of(person: str, asked: str) -> tuple[str, ...]:
    """The parts a stream of ``person`` follows: ``asked`` (``?parts=a,b``), or their page's; ``ValueError`` naming
    a part that is not theirs."""
    allowed = PARTS[INSTRUCTOR if person == INSTRUCTOR else "student"]
    if not asked:
        return DASHBOARD_PAGE if person == INSTRUCTOR else STUDENT_PAGE
    names = tuple(dict.fromkeys(name.strip() for name in asked.split(",") if name.strip()))
    wrong = [name for name in names if name not in allowed]
    if wrong or not names:
        raise ValueError(f"parts={asked!r}: {'no part' if not names else 'unknown ' + ', '.join(map(repr, wrong))}; "
                         f"yours are {', '.join(allowed)}")
    return names


@dataclass(frozen=True)
class Marks:
    """Every part's mark at one state of the class, and the standings they were computed with."""

    key: Any  # (the store's change mark, the standings' mark) they are of
    ranked: Standings
    shared: dict[str, str]
    own: dict[str, dict[str, str]] = field(default_factory=dict)  # student -> their own parts' marks

    def of(self, person: str, parts: tuple[str, ...]) -> dict[str, str]:
        """The marks of ``parts`` for ``person`` (their own parts and the shared ones: nobody else's)."""
        own = self.own.get(person, {})
        return {part: own.get(part, _NONE) if part in OWN_PARTS else self.shared[part] for part in parts}

    def urgent(self, person: str, parts: tuple[str, ...]) -> dict[str, str]:
        """For each of ``parts`` held back but passed on at once when something of ``person``'s own moved: its mark."""
        own = self.own.get(person, {})
        return {part: own.get(URGENT[part], _NONE) for part in parts if part in URGENT}


_NONE = mark_of(None)


@dataclass
class _GameMarks:
    """Each student's games as their list shows them, kept up to date from the rows that may have changed.

    A game below the lowest id still queued or running never changes again
    (:meth:`.ClassStore.game_states`): those are counted once; the rows from
    that id on are read at each change (the games in flight and the new ones).
    """

    floor: int = 0
    settled: dict[str, tuple[int, int]] = field(default_factory=dict)  # student -> (games ended below floor, last id)

    def update(self, store: ClassStore) -> dict[str, str]:
        low, rows = store.game_states(self.floor)
        recent: dict[str, list[tuple[int, str]]] = {}
        for game_id, white, black, white_student, black_student, status in rows:
            players = {player for player, student in ((white, white_student), (black, black_student)) if student}
            for player in players:
                if game_id < low and status not in OPEN_GAMES:
                    count, _ = self.settled.get(player, (0, 0))
                    self.settled[player] = (count + 1, game_id)
                else:
                    recent.setdefault(player, []).append((game_id, status.value))
        self.floor = max(self.floor, low)
        return {player: mark_of((self.settled.get(player), tuple(recent.get(player, ()))))
                for player in set(self.settled) | set(recent)}


class LiveMarks:
    """The marks of every part, computed again when the class changed (one computation at a time; while it runs the
    others take the last marks at once)."""

    def __init__(self, settings: ClassSettings, store: ClassStore,
                 standings: Callable[[], tuple[Any, Standings]]) -> None:
        self.settings, self.store, self.standings = settings, store, standings
        self.lock = threading.Lock()
        self.marks: Optional[Marks] = None
        self.games = _GameMarks()

    def current(self) -> Marks:
        """The marks of the class as it is (call it from a worker thread: it may query the database)."""
        standings_mark, ranked = self.standings()
        key = (self.store.change_mark(), standings_mark)  # read before the rows: the marks are at least that new
        last = self.marks
        if last is not None and last.key == key:
            return last
        if not self.lock.acquire(blocking=last is None):
            assert last is not None
            return last
        try:
            if self.marks is not None and self.marks.key == key:
                return self.marks
            self.marks = self.compute(key, ranked)
            return self.marks
        finally:
            self.lock.release()

    def compute(self, key: Any, ranked: Standings) -> Marks:
        lines, references = ranked
        own: dict[str, dict[str, str]] = {}
        for line in lines:
            marks = own.setdefault(line.id, {})
            marks["standing"], marks[URGENT["standing"]] = mark_of(shown_line(line)), mark_of(own_line(line))
        versions: dict[str, list[Any]] = {}
        by_version: dict[int, str] = {}
        for version in self.store.versions(cards=False):
            by_version[version.id] = version.student
            versions.setdefault(version.student, []).append(
                (version.id, version.number, version.status.value, version.reason, version.decided_at))
        for verdict in self.store.verdicts():
            student = by_version.get(verdict.version)
            if student is not None:
                versions[student].append(("verdict", verdict.id))
        for student, seen in versions.items():
            own.setdefault(student, {})["versions"] = mark_of(tuple(seen))
        for student, games in self.games.update(self.store).items():
            own.setdefault(student, {})["games"] = games
        counts = self.store.game_counts()
        table = (tuple(shown_line(line) for line in lines),
                 tuple((ref.name, shown_rating(ref.rating), shown_rating(ref.rating_error)) for ref in references),
                 tuple(sorted((status.value, count) for status, count in counts.items())),
                 FinalMarker(self.settings.folder).running())
        finished = counts.get(GameStatus.FINISHED, 0), self.store.finished_mark()[1]
        shared = {"standings": mark_of(table), "class-games": mark_of(finished), "dashboard": mark_of(key)}
        return Marks(key, ranked, shared, own)


class Kept(Generic[T]):
    """Things made once per mark (a part of a page drawn, an answer's JSON), by key, each with the mark it was made
    at: made again only when the mark moved; the least recently used dropped past ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.kept: OrderedDict[Hashable, tuple[Any, T]] = OrderedDict()

    def get(self, key: Hashable, mark: Any, make: Callable[[], T]) -> T:
        with self.lock:
            found = self.kept.get(key)
            if found is not None and found[0] == mark:
                self.kept.move_to_end(key)
                return found[1]
        made = make()  # (two pages asking at once may both make it: the same thing, kept once)
        with self.lock:
            self.kept[key] = (mark, made)
            self.kept.move_to_end(key)
            while len(self.kept) > self.size:
                self.kept.popitem(last=False)
        return made
