"""Who the ladder pairs next: the pairing policy as a pure function of a snapshot (no database, no I/O).

:func:`decide` takes a :class:`Snapshot` (the students' current versions
with their ratings and the half-widths of their 95% intervals, every pair
so far with its points and open games, the reference agents weakest first,
the settings, the opening suite, what the hour's game budget still allows)
and gives the next :class:`PairPlan`, or an :class:`Idle` saying why no
pair is to be played now.  :mod:`.ladder` builds the snapshot from the
store and writes the plan; the tests drive this module with plain values.

The policy, in the order it is applied:

- one open pair per version at a time: its next opponent depends on this
  pair's result;
- the first pairs, for the version with the fewest pairs so far (ties: the
  oldest version), so no version waits while others play:

  - a version first climbs the reference agents from the weakest, one pair
    each, until it scores at most ``stop_climb_at`` in a pair against one
    (it lost it badly: the next rung would teach nothing);
  - then it plays the classmate's current version nearest to it in rating
    (ties: the one it has played least, then the oldest), up to
    ``pairs_per_opponent`` pairs against each;

- then the ladder goes on learning (:func:`learning_pair`): the version
  whose rating is least certain (the widest 95% interval among those not
  settled) plays a classmate whose interval overlaps its own, the one it
  has met least: a pair whose order the evidence has not decided, whose
  result can move the standings (close ratings also make a game most
  informative under Elo's model).  ``pairs_per_opponent`` no longer limits it: the k-th
  meeting of two students plays another opening, so even two deterministic
  programs play new games.  These pairs stay within the hour's budget
  (``[ladder] games_per_hour``); the first pairs never wait for it, a new
  version needs them to be ranked at all;
- when every current version is settled (:func:`settled`: its interval
  within ``settle_elo``, or apart from every classmate's) the ladder is
  idle: the standings are settled, until a version arrives;
- a pair is ``games_per_pairing`` games, colours alternating, all from one
  opening when both programs read openings: the k-th pair between two
  players plays the suite's k-th opening of one draw for the whole class, so
  everybody's k-th pair against greedy plays the same opening (fair, and two
  copies of one program play the very same games: see grades.same_moves_as).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Optional, Sequence, Union

from .arena import Move, nth_opening
from .store import PairKind, Side

DEFAULT_RATING = 1500.0  # a version with no rated game yet: the fit's centre
UNRATED = math.inf  # the half-width of a version with no rated game yet: nothing is known


@dataclass(frozen=True)
class Entrant:
    """A student's current version, as the pairing sees it."""

    version: int
    student: str
    fingerprint: str
    openings: bool  # it reads openings
    rating: float = DEFAULT_RATING
    error: float = UNRATED  # the half-width of its rating's 95% interval

    @property
    def low(self) -> float:
        return self.rating - self.error

    @property
    def high(self) -> float:
        return self.rating + self.error

    @property
    def side(self) -> Side:
        return Side(self.student, self.version, self.fingerprint)


@dataclass(frozen=True)
class Rung:
    """A reference agent of the climb (the snapshot lists them weakest first)."""

    name: str
    fingerprint: str

    @property
    def side(self) -> Side:
        return Side(self.name, None, self.fingerprint)


@dataclass(frozen=True)
class PastPair:
    """A pair planned before: its two sides (``a`` the version it was planned for), ``a``'s points, its open games."""

    a: str
    a_version: Optional[int]
    b: str
    b_version: Optional[int]
    points: float = 0.0
    open: int = 0

    def has_version(self, version: int) -> bool:
        return version in (self.a_version, self.b_version)


@dataclass(frozen=True)
class Policy:
    """The ladder's settings (class.toml's [ladder]) and the class's name (the seed of the opening draw)."""

    class_name: str
    stop_climb_at: float = 0.0
    pairs_per_opponent: int = 2
    games_per_pairing: int = 2
    settle_elo: float = 50.0  # a 95% half-width at most this: the standing is settled
    games_per_hour: int = 0  # the budget of games started an hour (0: none), as the idle message says it


@dataclass(frozen=True)
class Snapshot:
    """Everything :func:`decide` looks at."""

    current: tuple[Entrant, ...]
    pairs: tuple[PastPair, ...]
    references: tuple[Rung, ...]
    policy: Policy
    suite: tuple[Sequence[Move], ...] = ()  # the opening suite; () plays every pair from the start
    budget: Optional[int] = None  # games the hour's budget still allows to start (None: no budget)


@dataclass(frozen=True)
class PairPlan:
    """The next pair: for whom, against whom, which opening, and its games as (White, Black) in order."""

    a: Side
    b: Side
    kind: PairKind
    opening: tuple[str, ...]
    games: tuple[tuple[Side, Side], ...]


class IdleReason(StrEnum):
    """Why no pair is to be played now."""

    NOBODY = "nobody"  # no admitted version yet
    PLAYING = "playing"  # every version that has a pair to play is playing one: its result comes first
    ALONE = "alone"  # one student's version only: nobody to play once the climb is over
    SETTLED = "settled"  # every standing settled (settled(): its interval narrow, or apart from the others)
    BUDGET = "budget"  # the hour's games are spent


@dataclass(frozen=True)
class Idle:
    """No pair now, and why (the dashboard and the server's log say it in :meth:`text`)."""

    reason: IdleReason
    settle_elo: float = 0.0
    games_per_hour: int = 0

    def text(self) -> str:
        return {
            IdleReason.NOBODY: "idle: no version is admitted yet",
            IdleReason.PLAYING: "playing: waiting for the results of the pairs in play",
            IdleReason.ALONE: "idle: one student's version only, nobody to play after the reference agents",
            IdleReason.SETTLED: f"idle: the standings are settled (every rating's 95% interval within "
                                f"±{self.settle_elo:g} Elo or apart from every other); a new version starts "
                                "the ladder again",
            IdleReason.BUDGET: f"waiting: this hour's budget of {self.games_per_hour} games is spent "
                               "([ladder] games_per_hour)",
        }[self.reason]


def decide(snapshot: Snapshot) -> Union[PairPlan, Idle]:
    """The next pair to play (see the module's docstring), or why there is none now."""
    if not snapshot.current:
        return Idle(IdleReason.NOBODY)
    played = {entrant.version: 0 for entrant in snapshot.current}
    # each version's pairs, in their order: one pass over a week's pairs (10,000 in a class of 300), not one a version
    pairs_of: dict[int, list[PastPair]] = {}
    for pair in snapshot.pairs:
        for version in (pair.a_version, pair.b_version):
            if version in played:
                played[version] += 1
        for version in {pair.a_version, pair.b_version}:
            if version is not None:
                pairs_of.setdefault(version, []).append(pair)
    busy = {entrant.version for entrant in snapshot.current
            if any(pair.open for pair in pairs_of.get(entrant.version, ()))}
    for entrant in sorted(snapshot.current, key=lambda e: (played[e.version], e.version)):
        if entrant.version in busy:
            continue
        mine = pairs_of.get(entrant.version, [])
        opponent = next_rung(entrant, mine, snapshot.references, snapshot.policy)
        if opponent is None:
            opponent = nearest_classmate(entrant, snapshot.current, mine, snapshot.policy)
        if opponent is not None:
            side, reads_openings = opponent
            return plan(entrant, side, reads_openings, snapshot)
    unsettled = [entrant for entrant in snapshot.current
                 if entrant.version not in busy and not settled(entrant, snapshot.current, snapshot.policy.settle_elo)]
    alone = len({entrant.student for entrant in snapshot.current}) < 2
    if alone or not unsettled:
        # a result in play may still give a first pair (the climb goes on) or unsettle a standing
        return Idle(IdleReason.PLAYING if busy else IdleReason.ALONE if alone else IdleReason.SETTLED,
                    settle_elo=snapshot.policy.settle_elo)
    if snapshot.budget is not None and snapshot.budget < snapshot.policy.games_per_pairing:
        return Idle(IdleReason.BUDGET, games_per_hour=snapshot.policy.games_per_hour)
    chosen, rival = learning_pair(unsettled, snapshot.current, snapshot.pairs, played)
    return plan(chosen, rival.side, rival.openings, snapshot)


def next_pair(snapshot: Snapshot) -> Optional[PairPlan]:
    """The next pair to play, or ``None`` when there is none now (:func:`decide` says why)."""
    decided = decide(snapshot)
    return decided if isinstance(decided, PairPlan) else None


def settled(entrant: Entrant, current: Sequence[Entrant], settle_elo: float) -> bool:
    """Whether more games would teach little of ``entrant``'s standing.

    Its 95% interval is within ``settle_elo`` either side, or it overlaps no
    classmate's interval: the evidence has placed it, and a version that
    beats (or loses to) everybody every time would otherwise keep a wide
    interval and play on for ever, learning nothing that moves the ranking.
    """
    if entrant.error <= settle_elo:
        return True
    return not any(other.low <= entrant.high and entrant.low <= other.high
                   for other in current if other.student != entrant.student)


def learning_pair(unsettled: Sequence[Entrant], current: Sequence[Entrant], pairs: Sequence[PastPair],
                  played: dict[int, int]) -> tuple[Entrant, Entrant]:
    """After the first pairs: the least certain free version, and a classmate whose order against it is undecided.

    The least certain of ``unsettled`` (the free versions not settled) is
    the one with the widest interval (ties: the fewest pairs, then the
    oldest): as it plays its interval narrows, so the next pair goes to
    another and no version is starved.  Its opponent is a classmate whose
    interval overlaps its own (an unrated one overlaps it whole): the one it
    has met least, so that its games tie it to the whole class rather than
    to one rival (a rating is only as sure as its opponents'), then the one
    overlapping it most, the nearest in rating, the one with the fewest
    pairs, the oldest.  ``current`` holds a version of another student than
    each of ``unsettled`` whose interval overlaps it (else it is settled).
    """
    widest = min(unsettled, key=lambda e: (-e.error, played[e.version], e.version))

    def overlap(other: Entrant) -> float:
        if math.isinf(widest.error) and math.isinf(other.error):
            return math.inf  # two unrated versions: nothing known, the nearest rating decides below
        return min(widest.high, other.high) - max(widest.low, other.low)

    # the pairs of widest's student with each classmate, counted in one pass
    together: dict[str, int] = {}
    for pair in pairs:
        if widest.student in (pair.a, pair.b) and pair.a != pair.b:
            classmate = pair.b if pair.a == widest.student else pair.a
            together[classmate] = together.get(classmate, 0) + 1

    def met(other: Entrant) -> float:
        return together.get(other.student, 0) if overlap(other) > 0 else math.inf

    classmates = [other for other in current if other.student != widest.student]
    opponent = min(classmates, key=lambda o: (met(o), -overlap(o), abs(o.rating - widest.rating), played[o.version],
                                              o.version))
    return widest, opponent


def next_rung(entrant: Entrant, mine: Sequence[PastPair], references: Sequence[Rung],
              policy: Policy) -> Optional[tuple[Side, bool]]:
    """The first reference ``entrant`` has not played, unless it lost the last one it played badly."""
    for rung in references:
        against = [pair for pair in mine if pair.b == rung.name and pair.b_version is None]
        if not against:
            return rung.side, True  # the built-in agents all read openings
        if against[-1].points <= policy.stop_climb_at:
            return None  # lost this rung badly: the climb ends here
    return None


def nearest_classmate(entrant: Entrant, current: Sequence[Entrant], mine: Sequence[PastPair],
                      policy: Policy) -> Optional[tuple[Side, bool]]:
    """The classmate's version nearest ``entrant`` in rating that it has played fewer than ``pairs_per_opponent`` times."""
    candidates = []
    for other in current:
        if other.student == entrant.student:
            continue
        together = sum(1 for pair in mine if pair.has_version(other.version))
        if together >= policy.pairs_per_opponent:
            continue
        candidates.append((abs(other.rating - entrant.rating), together, other.version, other))
    if not candidates:
        return None
    chosen = min(candidates, key=lambda candidate: candidate[:3])[3]
    return chosen.side, chosen.openings


def opening_seed(class_name: str) -> int:
    """The seed of the class's one draw of openings."""
    return int(hashlib.sha256(class_name.encode()).hexdigest()[:12], 16)


def plan(entrant: Entrant, opponent: Side, opponent_reads_openings: bool, snapshot: Snapshot) -> PairPlan:
    """The pair of ``entrant`` against ``opponent``: its opening and its games, colours alternating."""
    me = entrant.side
    labels = {me.label, opponent.label}
    index = sum(1 for pair in snapshot.pairs if {pair.a, pair.b} == labels)  # the k-th pair between these two
    opening: tuple[str, ...] = ()
    if snapshot.suite and entrant.openings and opponent_reads_openings:
        drawn = nth_opening(snapshot.suite, index % len(snapshot.suite), opening_seed(snapshot.policy.class_name))
        opening = tuple(move.line() for move in drawn)
    games = tuple((me, opponent) if number % 2 == 0 else (opponent, me)
                  for number in range(snapshot.policy.games_per_pairing))
    kind = PairKind.CLIMB if opponent.version is None else PairKind.LADDER
    return PairPlan(me, opponent, kind, opening, games)
