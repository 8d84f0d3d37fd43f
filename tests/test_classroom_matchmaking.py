"""Who the ladder pairs next, as a pure function: plain snapshots in, the next pair out (no database, no files
beyond the shipped opening suite).  Each table row is a situation a student of a bot ladder would complain about."""

from __future__ import annotations

from collections import Counter
from typing import Optional

import pytest

from othello_arena.classroom.arena import read_openings, suite_path
from othello_arena.classroom.matchmaking import (Entrant, PairPlan, PastPair, Policy, Rung, Snapshot, next_pair,
                                                 opening_seed)
from othello_arena.classroom.store import PairKind, Side
from othello_arena.referee.game_pair import nth_opening

REFERENCES = (Rung("random", "builtin:random"), Rung("greedy", "builtin:greedy"), Rung("champion", "builtin:champion"))
ALICE = Entrant(1, "alice", "fpa", True, 1500.0)
SUITE = tuple(read_openings(suite_path("balanced")))


def snapshot(current: tuple[Entrant, ...] = (ALICE,), pairs: tuple[PastPair, ...] = (),
             references: tuple[Rung, ...] = REFERENCES, suite: tuple = (), **policy: object) -> Snapshot:
    return Snapshot(current, pairs, references, Policy("Class of 2026", **policy), suite)  # type: ignore[arg-type]


def climbed(version: int, student: str, *points: float, open_last: int = 0) -> tuple[PastPair, ...]:
    """Pairs of ``student``'s version against the references in order, with these points (the last maybe open)."""
    pairs = [PastPair(student, version, rung.name, None, score) for rung, score in zip(REFERENCES, points)]
    if open_last:
        last = pairs[-1]
        pairs[-1] = PastPair(last.a, last.a_version, last.b, last.b_version, last.points, open_last)
    return tuple(pairs)


def against(plan: Optional[PairPlan]) -> Optional[str]:
    return None if plan is None else plan.b.label


@pytest.mark.parametrize("pairs, stop_at, expected", [
    ((), 0.0, "random"),  # a new version starts at the weakest rung
    (climbed(1, "alice", 2.0), 0.0, "greedy"),  # won it: the next rung
    (climbed(1, "alice", 1.0), 0.0, "greedy"),  # a draw is more than nothing
    (climbed(1, "alice", 0.0), 0.0, None),  # lost both games: the climb ends, and no classmate yet
    (climbed(1, "alice", 2.0, 0.5), 0.5, None),  # at most stop_climb_at: ends there
    (climbed(1, "alice", 2.0, 1.0), 0.5, "champion"),
    (climbed(1, "alice", 2.0, 2.0, 2.0), 0.0, None),  # every rung climbed, nobody else in the class
    (climbed(1, "alice", 2.0, open_last=1), 0.0, None),  # one open pair at a time: the next depends on it
], ids=["start", "won", "drew", "lost", "at-stop", "above-stop", "top", "open"])
def test_the_climb_from_the_weakest_reference_until_a_pair_is_lost_badly(pairs: tuple[PastPair, ...], stop_at: float,
                                                                         expected: Optional[str]) -> None:
    plan = next_pair(snapshot(pairs=pairs, stop_climb_at=stop_at))
    assert against(plan) == expected
    if plan is not None:
        assert plan.kind is PairKind.CLIMB and plan.a == ALICE.side and plan.b.version is None


BOB, CAROL, DAVE = Entrant(2, "bob", "fpb", True, 1400.0), Entrant(3, "carol", "fpc", True, 1700.0), \
    Entrant(4, "dave", "fpd", False, 1600.0)


@pytest.mark.parametrize("current, pairs, per_opponent, expected", [
    ((ALICE, BOB, CAROL), (), 2, "bob"),  # 100 from alice against carol's 200
    ((ALICE, CAROL, DAVE), (), 2, "dave"),
    ((ALICE, BOB, CAROL), (PastPair("alice", 1, "bob", 2),), 1, "carol"),  # played bob as often as allowed
    ((ALICE, BOB, CAROL), (PastPair("alice", 1, "bob", 2), PastPair("alice", 1, "carol", 3)), 1, None),
    ((ALICE, Entrant(5, "alice", "fpa2", True, 1500.0)), (), 2, None),  # never against herself
    ((ALICE, Entrant(6, "erin", "fpe", True, 1600.0), Entrant(7, "finn", "fpf", True, 1400.0)), (), 2, "erin"),
    ((ALICE, Entrant(6, "erin", "fpe", True, 1600.0), Entrant(7, "finn", "fpf", True, 1400.0)),
     (PastPair("alice", 1, "erin", 6),), 2, "finn"),  # equally near: the one played less
], ids=["nearer-below", "nearer-above", "repeat-limit", "everyone-played", "own-older-version", "tie-oldest",
        "tie-played-less"])
def test_then_the_nearest_classmate_within_the_repeat_limit(current: tuple[Entrant, ...], pairs: tuple[PastPair, ...],
                                                             per_opponent: int, expected: Optional[str]) -> None:
    # no references (the climb is over); the others each in an open pair of their own, so that the plan is
    # alice's (they stay her possible opponents: only the version planned for must be free)
    others_busy = tuple(PastPair(e.student, e.version, "x", None, 0.0, open=1) for e in current if e.student != "alice")
    plan = next_pair(Snapshot(current, (*pairs, *others_busy), (), Policy("c", pairs_per_opponent=per_opponent)))
    assert against(plan) == expected
    if plan is not None:
        assert plan.kind is PairKind.LADDER and plan.b.version is not None


def play(snap: Snapshot, steps: int) -> list[PairPlan]:
    """Plan ``steps`` pairs in turn, each played at once (a draw) before the next is asked for."""
    plans = []
    pairs = list(snap.pairs)
    for _ in range(steps):
        plan = next_pair(Snapshot(snap.current, tuple(pairs), snap.references, snap.policy, snap.suite))
        if plan is None:
            break
        plans.append(plan)
        pairs.append(PastPair(plan.a.label, plan.a.version, plan.b.label, plan.b.version, 1.0))
    return plans


def test_no_version_waits_while_others_play() -> None:
    # five versions, one far from the others in rating: each has its turn, the fewest pairs so far first
    current = (ALICE, BOB, CAROL, Entrant(4, "dave", "fpd", True, 2400.0), Entrant(5, "erin", "fpe", True, 1450.0))
    plans = play(Snapshot(current, (), (), Policy("c", pairs_per_opponent=100)), 40)
    assert len(plans) == 40
    played: Counter[str] = Counter({e.student: 0 for e in current})
    for plan in plans:
        # the pair is always planned for a version with the fewest pairs so far: the popular middle of the
        # ratings is chosen as an opponent more often, but nobody waits for them
        assert played[plan.a.label] == min(played.values()), (plan, played)
        played.update((plan.a.label, plan.b.label))
    assert min(played.values()) >= len(plans) // len(current)  # each round of five pairs lifts the least played
    # a version with an open pair is passed over, the others go on
    busy = (PastPair("alice", 1, "bob", 2, open=2),)
    plan = next_pair(Snapshot(current, busy, (), Policy("c")))
    assert plan is not None and plan.a.label not in ("alice", "bob")


def test_the_repeat_limit_ends_the_ladder_between_two_versions() -> None:
    plans = play(Snapshot((ALICE, BOB), (), (), Policy("c", pairs_per_opponent=3)), 10)
    assert len(plans) == 3 and all({p.a.label, p.b.label} == {"alice", "bob"} for p in plans)


def test_the_kth_pair_plays_the_kth_opening_of_one_draw_for_the_class() -> None:
    first = next_pair(snapshot(suite=SUITE))
    assert first is not None
    expected = tuple(move.line() for move in nth_opening(SUITE, 0, opening_seed("Class of 2026")))
    assert first.opening == expected and expected
    # bob's first pair against random: the same opening as alice's (fair; two copies play the same games)
    bob = next_pair(snapshot(current=(BOB,), suite=SUITE))
    assert bob is not None and bob.b.label == "random" and bob.opening == first.opening
    # the second pair between alice and bob plays the draw's second opening
    second = next_pair(Snapshot((ALICE, BOB), (PastPair("alice", 1, "bob", 2),), (), Policy("Class of 2026"), SUITE))
    assert second is not None
    assert second.opening == tuple(m.line() for m in nth_opening(SUITE, 1, opening_seed("Class of 2026")))
    assert second.opening != first.opening
    # another class draws another order; a program that reads no openings plays from the start
    other = next_pair(Snapshot((ALICE,), (), REFERENCES, Policy("Another class"), SUITE))
    assert other is not None and other.opening != first.opening
    assert next_pair(Snapshot((ALICE, DAVE), climbed(1, "alice", 0.0), REFERENCES, Policy("c"), SUITE)).opening == ()
    assert next_pair(snapshot()).opening == ()  # no suite (openings = "none")


@pytest.mark.parametrize("games", [2, 4, 6])
def test_a_pair_is_games_per_pairing_games_colours_alternating(games: int) -> None:
    plan = next_pair(snapshot(games_per_pairing=games))
    assert plan is not None and len(plan.games) == games
    me, them = ALICE.side, Side("random", None, "builtin:random")
    assert plan.games == ((me, them), (them, me)) * (games // 2)
