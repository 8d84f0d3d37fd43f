"""Pairing formats and the schedule base: every pairing once, both colours, same schedule from the same seed."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path

import pytest

from othello_arena.tournaments.schedule import config, pairing


def tournament(tmp_path: Path, agents: int, extra: str = ""):
    names = ", ".join(f'"a{i}=x"' for i in range(agents))
    return config.parse(f"agents = [{names}]\n[tournament]\n{extra}\n", tmp_path / "t.toml")


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9])
def test_round_robin_meets_everyone_once_and_nobody_twice_a_round(n: int) -> None:
    players = [f"p{i}" for i in range(n)]
    rounds = pairing.round_robin(players)
    met = Counter(frozenset(pair) for pairs in rounds for pair in pairs)
    assert set(met) == {frozenset(p) for p in itertools.combinations(players, 2)}
    assert set(met.values()) == {1}
    for pairs in rounds:
        seen = [p for pair in pairs for p in pair]
        assert len(seen) == len(set(seen))


def test_every_pairing_plays_both_colours(tmp_path: Path) -> None:
    t = tournament(tmp_path, 5, "games_per_pairing = 4")
    games = pairing.fixed_schedule(t)
    assert games is not None and len(games) == 10 * 4
    colours = Counter((g.white, g.black) for g in games)
    for a, b in itertools.combinations(t.agent_names, 2):
        assert colours[(a, b)] == colours[(b, a)] == 2
    assert len({g.key for g in games}) == len(games)


def test_double_round_robin_is_two_cycles(tmp_path: Path) -> None:
    t = tournament(tmp_path, 4, 'format = "double-round-robin"')
    games = pairing.fixed_schedule(t)
    assert games is not None and len(games) == 6 * 2 * 2
    assert pairing.total_rounds(t) == 6


def test_gauntlet_plays_only_against_the_field(tmp_path: Path) -> None:
    t = tournament(tmp_path, 5, 'format = "gauntlet"\ngauntlet = ["a0", "a1"]')
    games = pairing.fixed_schedule(t)
    assert games is not None
    pairs = {frozenset((g.white, g.black)) for g in games}
    assert pairs == {frozenset((c, o)) for c in ("a0", "a1") for o in ("a2", "a3", "a4")}


def test_same_seed_same_schedule_random_colours(tmp_path: Path) -> None:
    one = pairing.fixed_schedule(tournament(tmp_path, 6, 'colours = "random"\ngames_per_pairing = 3\nseed = 5'))
    two = pairing.fixed_schedule(tournament(tmp_path, 6, 'colours = "random"\ngames_per_pairing = 3\nseed = 5'))
    other = pairing.fixed_schedule(tournament(tmp_path, 6, 'colours = "random"\ngames_per_pairing = 3\nseed = 6'))
    assert one == two
    assert one != other
    assert {(g.white, g.black) for g in one} != {(g.white, g.black) for g in other}
    # Drawn colours really vary: not every game gives White to the pairing's first agent.
    assert len({g.white for g in one if g.pairing == 1 and g.round == 1}) >= 1
    whites = Counter(g.white for g in one)
    assert len(whites) == 6


def perfect_matching_exists(players: list[str], met: set[frozenset[str]]) -> bool:
    if not players:
        return True
    top, rest = players[0], players[1:]
    return any(
        perfect_matching_exists(rest[:i] + rest[i + 1:], met)
        for i, other in enumerate(rest)
        if frozenset((top, other)) not in met
    )


@pytest.mark.parametrize("n, rounds, seed", [(6, 5, 1), (8, 7, 2), (7, 7, 3), (10, 6, 4), (5, 6, 5)])
def test_swiss_never_repeats_while_it_can(n: int, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(n)]
    scores = {p: 0.0 for p in players}
    met: set[frozenset[str]] = set()
    byes: list[str] = []
    for _ in range(rounds):
        swiss = pairing.swiss_round(players, scores, met, byes)
        paired = [p for pair in swiss.pairs for p in pair]
        assert sorted(paired + ([swiss.bye] if swiss.bye else [])) == sorted(players)
        if n % 2:
            assert swiss.bye is not None
            if len(byes) < n and swiss.bye in byes:
                # A second bye only to avoid a repeat.
                fresh = [p for p in players if p not in byes]
                assert not any(perfect_matching_exists([p for p in players if p != b], met) for b in fresh)
            byes.append(swiss.bye)
            others = [p for p in players if p != swiss.bye]
        else:
            others = players
        repeats = [pair for pair in swiss.pairs if frozenset(pair) in met]
        assert len(repeats) == swiss.repeats
        if repeats:
            # Only when no repeat-free pairing exists (for any possible bye).
            candidates = [others] if n % 2 == 0 else [[p for p in players if p != b] for b in players]
            assert not any(perfect_matching_exists(c, met) for c in candidates)
        for a, b in swiss.pairs:
            met.add(frozenset((a, b)))
            outcome = rng.choice([1.0, 0.5, 0.0])
            scores[a] += outcome
            scores[b] += 1.0 - outcome
        if swiss.bye:
            scores[swiss.bye] += 1.0


def test_swiss_pairs_leaders_together() -> None:
    players = ["a", "b", "c", "d"]
    swiss = pairing.swiss_round(players, {"a": 0, "b": 2, "c": 0, "d": 2}, set())
    assert {frozenset(p) for p in swiss.pairs} == {frozenset(("b", "d")), frozenset(("a", "c"))}
