"""Who the ladder pairs next, as a pure function: plain snapshots in, the next pair out (no database, no files
beyond the shipped opening suite).  Each table row is a situation a student of a bot ladder would complain about."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Optional, Union

import pytest

from othello_arena.classroom.arena import FinishedGame, Result, fit, read_openings, suite_path
from othello_arena.classroom.matchmaking import (Entrant, Idle, IdleReason, PairPlan, PastPair, Policy, Rung, Snapshot,
                                                 decide, next_pair, opening_seed)
from othello_arena.protocol import BLACK, WHITE, Termination
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
    # settle_elo infinite: every standing settled, the first pairs alone (the learning pairs are tested below)
    policy = Policy("c", pairs_per_opponent=per_opponent, settle_elo=math.inf)
    plan = next_pair(Snapshot(current, (*pairs, *others_busy), (), policy))
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


def test_the_first_pairs_respect_the_repeat_limit_then_the_learning_pairs_go_on() -> None:
    settled = Policy("c", pairs_per_opponent=3, settle_elo=math.inf)
    plans = play(Snapshot((ALICE, BOB), (), (), settled), 10)
    assert len(plans) == 3 and all({p.a.label, p.b.label} == {"alice", "bob"} for p in plans)
    # nothing known of their ratings (no interval yet): the ladder goes on past the repeat limit
    plans = play(Snapshot((ALICE, BOB), (), (), Policy("c", pairs_per_opponent=3)), 10)
    assert len(plans) == 10 and all({p.a.label, p.b.label} == {"alice", "bob"} for p in plans)


def rated(entrant: Entrant, rating: float, error: float) -> Entrant:
    return Entrant(entrant.version, entrant.student, entrant.fingerprint, entrant.openings, rating, error)


FIRST_DONE = (*climbed(1, "alice", 0.0), *climbed(2, "bob", 0.0), *climbed(3, "carol", 0.0),  # the climbs ended
              PastPair("alice", 1, "bob", 2, 1.0), PastPair("alice", 1, "carol", 3, 1.0),
              PastPair("bob", 2, "carol", 3, 1.0))  # and each two classmates met once: the first pairs are played
WIDE = (rated(ALICE, 1500, 120), rated(BOB, 1450, 80), rated(CAROL, 1550, 40))  # alice's overlaps bob's most
NARROW = (rated(ALICE, 1500, 40), rated(BOB, 1450, 30), rated(CAROL, 1550, 45))
APART = (rated(ALICE, 1500, 90), rated(BOB, 1200, 90), rated(CAROL, 1800, 90))  # wide, but no interval overlaps


@pytest.mark.parametrize("current, pairs, budget, expected", [
    ((), (), None, IdleReason.NOBODY),
    ((ALICE,), climbed(1, "alice", 2.0, 2.0, 2.0), None, IdleReason.ALONE),  # the climb is over, no classmate
    ((ALICE,), climbed(1, "alice", 2.0, 2.0, open_last=2), None, IdleReason.PLAYING),  # its climb may go on
    (WIDE, FIRST_DONE, None, ("alice", "bob")),  # the widest interval, with the one overlapping it most
    (NARROW, FIRST_DONE, None, IdleReason.SETTLED),  # every interval within settle_elo (50)
    (APART, FIRST_DONE, None, IdleReason.SETTLED),  # wide, but the evidence has placed everyone: nothing to learn
    (WIDE, FIRST_DONE, 1, IdleReason.BUDGET),  # a pair is two games: one left this hour is not enough
    (WIDE, FIRST_DONE, 2, ("alice", "bob")),
    (WIDE, FIRST_DONE[:3], 0, ("alice", "bob")),  # the first pairs never wait for the budget (here: meeting bob)
    (WIDE, (*FIRST_DONE, PastPair("alice", 1, "x", None, open=1)), None, ("bob", "alice")),  # alice busy: bob next,
    # and alice, busy or not, is still the classmate it overlaps most
    ((rated(ALICE, 1500, 40), rated(BOB, 1450, 80), rated(CAROL, 1550, 30)), (*FIRST_DONE,
      PastPair("bob", 2, "x", None, open=1)), None, IdleReason.PLAYING),  # the others settled, bob's result awaited
], ids=["nobody", "alone", "climbing", "widest-first", "narrow", "apart", "budget-spent", "budget-enough",
        "first-pairs-ignore-budget", "busy-skipped", "waiting"])
def test_after_the_first_pairs_the_least_certain_version_plays_or_the_ladder_says_why_not(
        current: tuple[Entrant, ...], pairs: tuple[PastPair, ...], budget: Optional[int],
        expected: Union[IdleReason, tuple[str, str]]) -> None:
    policy = Policy("c", pairs_per_opponent=1, games_per_hour=10)
    decided = decide(Snapshot(current, pairs, REFERENCES, policy, (), budget))
    if isinstance(expected, IdleReason):
        assert isinstance(decided, Idle) and decided.reason is expected
    else:
        assert isinstance(decided, PairPlan) and (decided.a.label, decided.b.label) == expected
        assert decided.kind is PairKind.LADDER


@pytest.mark.parametrize("reason, words", [
    (IdleReason.SETTLED, "idle: the standings are settled (every rating's 95% interval within ±50 Elo"),
    (IdleReason.BUDGET, "waiting: this hour's budget of 10 games is spent"),
    (IdleReason.ALONE, "idle: one student's version only"),
    (IdleReason.PLAYING, "playing: waiting for the results"),
])
def test_each_idle_says_why_in_words(reason: IdleReason, words: str) -> None:
    assert Idle(reason, settle_elo=50, games_per_hour=10).text().startswith(words)


@pytest.mark.parametrize("others, expected", [
    ((rated(BOB, 1450, 80), rated(CAROL, 1650, 80)), "bob"),  # overlaps alice's 1400-1600 on 130 Elo, carol's on 30
    ((rated(BOB, 1450, 50), rated(CAROL, 1550, 50)), "bob"),  # equal overlaps: the one with fewer pairs (bob: none)
    ((rated(BOB, 1450, 50), rated(CAROL, 1530, 50)), "carol"),  # equal overlaps: the nearer in rating first
    ((rated(BOB, 1450, 40), Entrant(3, "carol", "fpc", True, 1520.0)), "carol"),  # unrated: overlaps all of alice's
    ((rated(BOB, 1450, 80), rated(CAROL, 1650, 80), rated(Entrant(4, "dave", "fpd", True), 1300, 50)), "carol"),
    # ... but first the one met least: alice met bob twice (`again` below), carol once; dave is apart
], ids=["most-overlap", "tie-fewer-pairs", "tie-nearer", "unrated", "met-least"])
def test_the_learning_opponent_is_the_classmate_whose_interval_overlaps_most(others: tuple[Entrant, ...],
                                                                             expected: str) -> None:
    alice = rated(ALICE, 1500, 100)
    again = (PastPair("bob", 2, "alice", 1, 1.0), PastPair("alice", 1, "dave", 4, 2.0)) if len(others) == 3 else ()
    pairs = (*FIRST_DONE, *again, PastPair("carol", 3, "x", None, 1.0), *(PastPair(o.student, o.version, "x", None, open=1)
                                                                   for o in others))  # only alice is free
    decided = decide(Snapshot((alice, *others), pairs, (), Policy("c", pairs_per_opponent=1)))
    assert isinstance(decided, PairPlan) and decided.a.label == "alice" and decided.b.label == expected


def test_a_class_learns_until_its_standings_are_settled_fairly_with_new_openings() -> None:
    """Five versions of known strengths, results drawn by Elo's model, ratings fitted after each pair, as the ladder does."""
    strength = {"alice": 1700.0, "bob": 1600.0, "carol": 1550.0, "dave": 1500.0, "erin": 1300.0}
    entrants = [Entrant(number, name, f"fp{name}", True) for number, name in enumerate(strength, start=1)]
    chance = random.Random(35)
    pairs: list[PastPair] = []
    games: list[FinishedGame] = []
    openings: dict[frozenset[str], list[tuple[str, ...]]] = {}
    policy = Policy("Class of 2026", pairs_per_opponent=1, settle_elo=100)
    decided: Union[PairPlan, Idle] = Idle(IdleReason.NOBODY)
    for _ in range(2000):
        fitted = fit([e.student for e in entrants], games)
        current = tuple(rated(e, fitted[e.student].elo, fitted[e.student].error) if games else e for e in entrants)
        decided = decide(Snapshot(current, tuple(pairs), (), policy, SUITE))
        if isinstance(decided, Idle):
            break
        points = 0.0
        for white, black in decided.games:
            won = chance.random() < 1.0 / (1.0 + 10.0 ** ((strength[black.label] - strength[white.label]) / 400.0))
            games.append(FinishedGame(str(len(games)), 0, white.label, black.label,
                                      Result(WHITE if won else BLACK, Termination.NORMAL, 40, 24) if won else
                                      Result(BLACK, Termination.NORMAL, 24, 40), 60))
            points += (1.0 if won else 0.0) if white == decided.a else (0.0 if won else 1.0)
        pairs.append(PastPair(decided.a.label, decided.a.version, decided.b.label, decided.b.version, points))
        openings.setdefault(frozenset((decided.a.label, decided.b.label)), []).append(decided.opening)
    assert isinstance(decided, Idle) and decided.reason is IdleReason.SETTLED, len(pairs)
    first = len(entrants) * (len(entrants) - 1) // 2
    assert len(pairs) > 2 * first  # it went on well past the first pairs
    assert len({frozenset((pair.a, pair.b)) for pair in pairs[:first]}) == first  # each two once, before any repeat
    played = Counter(name for pair in pairs for name in (pair.a, pair.b))
    assert min(played.values()) >= 0.5 * 2 * len(pairs) / len(entrants)  # no version starved: half a fair share at least
    # the k-th meeting of two students plays the draw's k-th opening: never the same one twice
    assert all(len(set(found)) == len(found) for found in openings.values()), openings
    # and the strongest came out on top, the weakest at the bottom
    fitted = fit(list(strength), games)
    assert sorted(strength, key=lambda name: -fitted[name].elo)[:1] == ["alice"]
    assert sorted(strength, key=lambda name: -fitted[name].elo)[-1:] == ["erin"]
