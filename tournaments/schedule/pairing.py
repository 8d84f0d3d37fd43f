"""Who plays whom: the pairing formats, and the base that turns pairings into games.

As in cutechess, a format only says how to pair: it yields the pairings of a
round (two agent names each).  The base (:func:`expand`) does the rest for
every format alike: how many games a pairing plays, the colours (both colours
for each pairing, or drawn at random from the seed), each game's key and seed.
The same tournament file therefore always gives the same schedule, and a Swiss
round depends only on the results of the rounds before it.

A game's seed and colours come from the tournament seed and the *names* of its
two agents (with the leg of a double round robin, the game's index in the
pairing, and a Swiss round's number), never from its place in a list.  So when
the class changes (a late student is added, a cheater withdrawn) the games of
everyone else keep their seeds and colours: :func:`additions` schedules only
the new pairings, after the rounds already stored.  (Databases made before
this rule keep the seeds they stored; only new games use it.)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import random
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from ...protocol import Move
from ...protocol.openings import read_openings
from ...referee.game_pair import nth_opening
from .config import Tournament


@dataclass(frozen=True)
class Pairing:
    """Two agents meeting in a round; ``first`` takes White in the pairing's first game."""

    round: int
    number: int
    first: str
    second: str


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule.  ``key`` is stable: ``r02-p03-g1``."""

    key: str
    round: int
    pairing: int
    index: int
    white: str
    black: str
    seed: int


# ---------------------------------------------------------------------------
# Fixed formats: every round known in advance
# ---------------------------------------------------------------------------


def round_robin(players: Sequence[str]) -> list[list[tuple[str, str]]]:
    """Rounds of a single round robin by the circle method.

    Each player meets every other exactly once, and within a round nobody
    plays twice (with an odd number of players, one sits out each round), so
    the games of a round can run side by side.
    """
    field: list[Optional[str]] = list(players)
    if len(field) % 2:
        field.append(None)
    n = len(field)
    rounds: list[list[tuple[str, str]]] = []
    for r in range(n - 1):
        pairs: list[tuple[str, str]] = []
        for i in range(n // 2):
            a, b = field[i], field[n - 1 - i]
            if a is None or b is None:
                continue
            # Alternate who is listed first so nobody always starts as White.
            pairs.append((a, b) if (r + i) % 2 == 0 else (b, a))
        rounds.append(pairs)
        field = [field[0], field[-1], *field[1:-1]]
    return rounds


def gauntlet(players: Sequence[str], challengers: Sequence[str]) -> list[list[tuple[str, str]]]:
    """One round in which every challenger meets every player not a challenger."""
    field = [p for p in players if p not in challengers]
    pairs: list[tuple[str, str]] = []
    # Interleave by opponent so the challengers' games are spread over the run.
    for opponent in field:
        for challenger in challengers:
            pairs.append((challenger, opponent))
    return [pairs]


def active_names(tournament: Tournament, withdrawn: Iterable[str] = ()) -> list[str]:
    """The agents still in the tournament: the file's order, less those withdrawn (in the file or by command)."""
    out = set(withdrawn) | set(tournament.withdrawn)
    return [name for name in tournament.agent_names if name not in out]


def fixed_rounds(tournament: Tournament, withdrawn: Iterable[str] = ()) -> Optional[list[list[tuple[str, str]]]]:
    """All rounds of a fixed format, or ``None`` for Swiss (paired round by round).

    A double round robin's second half is its second leg (see :func:`expand`).
    """
    names = active_names(tournament, withdrawn)
    if tournament.format == "round-robin":
        return round_robin(names)
    if tournament.format == "double-round-robin":
        first = round_robin(names)
        return first + [[(b, a) for a, b in pairs] for pairs in first]
    if tournament.format == "gauntlet":
        return gauntlet(names, [name for name in tournament.gauntlet if name in names])
    return None


def total_rounds(tournament: Tournament) -> int:
    rounds = fixed_rounds(tournament)
    return len(rounds) if rounds is not None else int(tournament.rounds or 0)


# ---------------------------------------------------------------------------
# Swiss
# ---------------------------------------------------------------------------

SEARCH_BUDGET = 200_000


@dataclass(frozen=True)
class SwissRound:
    """A Swiss round: the pairs, the player with a bye (if odd), and how many pairs are repeats."""

    pairs: list[tuple[str, str]]
    bye: Optional[str]
    repeats: int


def swiss_round(
    players: Sequence[str],
    scores: Mapping[str, float],
    met: Iterable[frozenset[str]],
    had_bye: Iterable[str] = (),
) -> SwissRound:
    """Pair one Swiss round: players with equal or close scores, never twice while it can.

    Players are ranked by score, then by their order in the file (the
    seeding).  A depth-first search pairs the best-ranked unpaired player with
    the closest-ranked opponent not met yet and backtracks when the rest
    cannot be paired; so if any pairing without a repeat exists, it is found.
    Only when none exists are repeats allowed.  With an odd number of players
    the lowest-ranked player who has had no bye yet sits out (a bye scores 1),
    unless only a second bye avoids a repeat.
    """
    met_pairs = set(met)
    byes = set(had_bye)
    seeding = {name: i for i, name in enumerate(players)}
    ranked = sorted(players, key=lambda p: (-scores.get(p, 0.0), seeding[p]))

    bye_candidates: list[Optional[str]] = [None]
    if len(ranked) % 2:
        # Lowest-ranked first, those without a bye before those with one:
        # a second bye is better than a repeated pairing.
        fresh = [p for p in reversed(ranked) if p not in byes]
        bye_candidates = [*fresh, *(p for p in reversed(ranked) if p in byes)]

    for bye in bye_candidates:
        field = [p for p in ranked if p != bye]
        pairs = _match(field, met_pairs)
        if pairs is not None:
            return SwissRound(pairs, bye, 0)
    # No pairing without repeats: pair by rank, allowing them.
    bye = bye_candidates[0]
    field = [p for p in ranked if p != bye]
    pairs = _match(field, set()) or []
    repeats = sum(1 for a, b in pairs if frozenset((a, b)) in met_pairs)
    return SwissRound(pairs, bye, repeats)


def _match(field: list[str], met: set[frozenset[str]]) -> Optional[list[tuple[str, str]]]:
    budget = [SEARCH_BUDGET]

    def search(unpaired: list[str]) -> Optional[list[tuple[str, str]]]:
        if not unpaired:
            return []
        budget[0] -= 1
        if budget[0] < 0:
            return None
        top, rest = unpaired[0], unpaired[1:]
        for i, opponent in enumerate(rest):
            if frozenset((top, opponent)) in met:
                continue
            tail = search(rest[:i] + rest[i + 1:])
            if tail is not None:
                return [(top, opponent), *tail]
        return None

    return search(field)


# ---------------------------------------------------------------------------
# The base: pairings -> games
# ---------------------------------------------------------------------------


def derive_seed(seed: int, key: str) -> int:
    """A game's own seed, from the tournament seed and a text naming the game (stable across runs and machines)."""
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def pair_name(a: str, b: str) -> str:
    """The two agents of a pairing, in an order that does not depend on who is listed first."""
    return "|".join(sorted((a, b)))


def expand(tournament: Tournament, round_number: int, pairs: Sequence[tuple[str, str]], *,
           leg: int = 1, first_number: int = 1) -> list[ScheduledGame]:
    """The games of one round: ``games_per_pairing`` per pair, colours balanced or drawn.

    Who takes White first, each game's seed and a drawn colour all come from
    the tournament seed and the pair's names (plus the Swiss round, the leg
    and the game's index), so they do not move when other agents come or go.
    Only the key (``r02-p03-g1``: where the game sits in the schedule) comes
    from the position.
    """
    games: list[ScheduledGame] = []
    swiss = tournament.format == "swiss"
    for number, (a, b) in enumerate(pairs, first_number):
        pair = pair_name(a, b)
        identity = f"swiss:r{round_number}:{pair}" if swiss else f"{pair}:leg{leg}"
        low, high = sorted((a, b))
        first, second = (low, high) if derive_seed(tournament.seed, "first:" + identity) % 2 == 0 else (high, low)
        if leg == 2:
            first, second = second, first  # the return leg: the other colours
        for index in range(1, tournament.games_per_pairing + 1):
            key = f"r{round_number:02d}-p{number:03d}-g{index}"
            name = f"{identity}:g{index}"
            if tournament.colours == "random":
                draw = random.Random(derive_seed(tournament.seed, "colours:" + name))
                white, black = (first, second) if draw.random() < 0.5 else (second, first)
            else:
                white, black = (first, second) if index % 2 else (second, first)
            games.append(ScheduledGame(key, round_number, number, index, white, black,
                                       derive_seed(tournament.seed, name)))
    return games


def game_opening(tournament: Tournament, index: int) -> list[Move]:
    """The opening of a pairing's game ``index`` (1-based), or ``[]`` without an opening suite.

    Games 2k-1 and 2k of every pairing make game pair k (colours swapped by
    :func:`expand`) and play the k-th opening drawn from the suite by the
    tournament seed, without repeats until the suite is used up.  The draw
    depends on the seed and the suite alone, so every pairing plays the same
    openings, and adding or withdrawing an agent changes nobody's.
    """
    if tournament.openings is None:
        return []
    suite = _suite(str(tournament.openings), tournament.openings_sha256)
    return nth_opening(suite, (index - 1) // 2, derive_seed(tournament.seed, "openings"))


@functools.lru_cache(maxsize=8)
def _suite(path: str, sha256: str) -> list[list[Move]]:
    # (the hash is part of the key: a file changed since it was read is read again)
    return read_openings(path)


def fixed_schedule(tournament: Tournament, withdrawn: Iterable[str] = ()) -> Optional[list[ScheduledGame]]:
    """Every game of a fixed-format tournament in playing order, or ``None`` for Swiss."""
    rounds = fixed_rounds(tournament, withdrawn)
    if rounds is None:
        return None
    half = len(rounds) // 2
    games: list[ScheduledGame] = []
    for number, pairs in enumerate(rounds, 1):
        leg = 2 if tournament.format == "double-round-robin" and number > half else 1
        games.extend(expand(tournament, number, pairs, leg=leg))
    return games


def _by_pair(games: Iterable[ScheduledGame]) -> dict[frozenset[str], list[ScheduledGame]]:
    """The games of each pair of agents, in playing order (the n-th game of a pair is the same game in any schedule)."""
    found: dict[frozenset[str], list[ScheduledGame]] = {}
    for game in sorted(games, key=lambda g: (g.round, g.pairing, g.index)):
        found.setdefault(frozenset((game.white, game.black)), []).append(game)
    return found


def additions(tournament: Tournament, stored: Sequence[ScheduledGame],
              withdrawn: Iterable[str] = ()) -> list[ScheduledGame]:
    """The games the file's schedule has that the database lacks: the pairings of agents added since.

    A stored game is matched to the file's schedule by its pair of agents and
    its place among that pair's games, never by key, so adding an agent moves
    nobody else's games.  The new games go into one new round after the last
    stored one, keyed from there; their seeds and colours come from the names
    (:func:`expand`).  Empty for Swiss: a Swiss pairs each round from the
    agents of the moment.
    """
    wanted = fixed_schedule(tournament, withdrawn)
    if wanted is None:
        return []
    have = _by_pair(stored)
    missing: list[ScheduledGame] = []
    for pair, games in _by_pair(wanted).items():
        missing.extend(games[len(have.get(pair, [])):])
    if not missing:
        return []
    round_number = max((g.round for g in stored), default=0) + 1
    # Renumber into the new round: pairings in the file's order, games as before.
    numbers: dict[tuple[int, int], int] = {}
    out: list[ScheduledGame] = []
    for game in missing:
        number = numbers.setdefault((game.round, game.pairing), len(numbers) + 1)
        out.append(dataclasses.replace(game, key=f"r{round_number:02d}-p{number:03d}-g{game.index}",
                                       round=round_number, pairing=number))
    return out
