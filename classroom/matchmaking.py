"""Who the ladder pairs next: the pairing policy as a pure function of a snapshot (no database, no I/O).

:func:`next_pair` takes a :class:`Snapshot` (the students' current
versions with their ratings, every pair so far with its points and open
games, the reference agents weakest first, the settings, the opening suite)
and gives the next :class:`PairPlan`, or ``None`` when nobody has a game
to play.  :mod:`.ladder` builds the snapshot from the store and writes the
plan; the tests drive this module with plain values.

The policy, in the order it is applied:

- one open pair per version at a time: its next opponent depends on this
  pair's result;
- the version with the fewest pairs so far goes first (ties: the oldest
  version), so no version waits while others play;
- a version first climbs the reference agents from the weakest, one pair
  each, until it scores at most ``stop_climb_at`` in a pair against one (it
  lost it badly: the next rung would teach nothing);
- then it plays the classmate's current version nearest to it in rating
  (ties: the one it has played least, then the oldest), at most
  ``pairs_per_opponent`` pairs against each;
- a pair is ``games_per_pairing`` games, colours alternating, all from one
  opening when both programs read openings: the k-th pair between two
  players plays the suite's k-th opening of one draw for the whole class, so
  everybody's k-th pair against greedy plays the same opening (fair, and two
  copies of one program play the very same games: see grades.same_moves_as).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional, Sequence

from .arena import Move, nth_opening
from .store import PairKind, Side

DEFAULT_RATING = 1500.0  # a version with no rated game yet: the fit's centre


@dataclass(frozen=True)
class Entrant:
    """A student's current version, as the pairing sees it."""

    version: int
    student: str
    fingerprint: str
    openings: bool  # it reads openings
    rating: float = DEFAULT_RATING

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


@dataclass(frozen=True)
class Snapshot:
    """Everything :func:`next_pair` looks at."""

    current: tuple[Entrant, ...]
    pairs: tuple[PastPair, ...]
    references: tuple[Rung, ...]
    policy: Policy
    suite: tuple[Sequence[Move], ...] = ()  # the opening suite; () plays every pair from the start


@dataclass(frozen=True)
class PairPlan:
    """The next pair: for whom, against whom, which opening, and its games as (White, Black) in order."""

    a: Side
    b: Side
    kind: PairKind
    opening: tuple[str, ...]
    games: tuple[tuple[Side, Side], ...]


def next_pair(snapshot: Snapshot) -> Optional[PairPlan]:
    """The next pair to play (see the module's docstring), or ``None`` when no version has one to play now."""
    played = {entrant.version: 0 for entrant in snapshot.current}
    for pair in snapshot.pairs:
        for version in (pair.a_version, pair.b_version):
            if version in played:
                played[version] += 1
    for entrant in sorted(snapshot.current, key=lambda e: (played[e.version], e.version)):
        mine = [pair for pair in snapshot.pairs if pair.has_version(entrant.version)]
        if any(pair.open for pair in mine):
            continue
        opponent = next_rung(entrant, mine, snapshot.references, snapshot.policy)
        if opponent is None:
            opponent = nearest_classmate(entrant, snapshot.current, mine, snapshot.policy)
        if opponent is not None:
            side, reads_openings = opponent
            return plan(entrant, side, reads_openings, snapshot)
    return None


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
