"""A match's game pairs and what they say: the one value the terminal, ``match.json``, the report and the web show.

``othello match`` plays a tournament of one pairing (:mod:`..match`);
games 2k-1 and 2k are game pair k.  :class:`MatchState` counts the complete
pairs (:mod:`..stats`: pentanomial counts, Elo, SPRT) and says what they
mean: a short progress line for each pair, a verdict in plain words and,
for experts, every figure.  The runner feeds it pair by pair as games end;
:func:`read_match` builds the same value from the database for a reader
(``othello serve DIR/match.toml``, the report), so the page and the
terminal show one set of numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ...protocol import Move
from ...protocol.openings import format_opening
from ..schedule.config import Tournament
from ..schedule.pairing import ScheduledGame, game_opening
from ..stats import SPRT, EloEstimate, Pentanomial
from .paths import game_directory
from .store import Store

# From this many pairs on the verdict says about how many more games the SPRT needs (SPRT.expected_pairs):
# simulated (elo0=0 elo1=10, 40 matches each at 0 to 200 Elo), the median guess at 20 pairs was within a
# factor of 3.2 of the median real wait (3 at 20 and 50 Elo: tests/test_tournament_stats.py; at 10 pairs
# 4), and single matches spread far wider, hence "a rough guess" in the words.
GUESS_FROM_PAIRS = 20


@dataclass
class PairResult:
    """One game pair: its opening, A's points in each game, the two games' folders and move-list keys."""

    number: int
    opening: list[Move]
    points: tuple[float, float]
    games: tuple[str, str]  # the game directories, relative to the match directory
    moves_key: tuple[str, str]  # equal keys: the same two games played again, move for move


@dataclass
class MatchState:
    """Where the match stands: the counts, the complete pairs so far and, at the end, why it stopped."""

    a: str
    b: str
    sprt: Optional[SPRT] = None
    limit: int = 0  # games: the match's length, or the SPRT's cap
    counts: Pentanomial = field(default_factory=Pentanomial)
    distinct: Pentanomial = field(default_factory=Pentanomial)  # the pairs not seen before, move for move
    pairs: list[PairResult] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    decision: Optional[str] = None  # "H0" / "H1" once the SPRT decides (kept: later pairs do not undo it)
    decided_after: int = 0  # the games counted when the SPRT decided (the games then running may add a pair or so)
    stopped: str = ""  # "games", "sprt", "max-games", "not-started", "interrupted"; "" while it goes on

    @property
    def games(self) -> int:
        return 2 * len(self.pairs)

    @property
    def repeats(self) -> int:
        """Pairs that replay an earlier pair move for move."""
        return self.counts.pairs - self.distinct.pairs

    def add(self, pair: PairResult) -> None:
        """Count a complete pair; take the SPRT's decision the first time its LLR crosses a bound."""
        self.pairs.append(pair)
        self.counts.add(*pair.points)
        if pair.moves_key not in self.seen:
            self.seen.add(pair.moves_key)
            self.distinct.add(*pair.points)
        if self.sprt is not None and self.decision is None:
            self.decision = self.sprt.decision(self.counts)
            if self.decision is not None:
                self.decided_after = self.games

    def estimate(self) -> EloEstimate:
        """A's Elo over B: over the distinct pairs (a repeat adds no information and would narrow the interval)."""
        return self.distinct.elo()

    def expected_games(self) -> Optional[int]:
        """About how many more games the SPRT needs to decide, on average.

        ``None`` without an SPRT, once it decided, and before
        :data:`GUESS_FROM_PAIRS` pairs, where the guess says too little to be
        worth a number.
        """
        if self.sprt is None or self.decision is not None or self.counts.pairs < GUESS_FROM_PAIRS:
            return None
        pairs = self.sprt.expected_pairs(self.counts)
        if pairs is None:
            return None
        return _about(2 * math.ceil(pairs))

    def progress_line(self) -> str:
        """The short line after each pair: ``8 games, W-D-L 2-2-4 | Elo -89 [-380, +107] | LLR -1.06 (-2.94, +2.94)``."""
        repeats = f" over {self.distinct.pairs} distinct pair(s)" if self.repeats else ""
        parts = [f"{self.games} games, W-D-L {self.counts.wins}-{self.counts.draws}-{self.counts.losses}",
                 self.estimate().short() + repeats]
        if self.sprt is not None:
            waiting = self._past_bound_early()
            parts.append(f"LLR {_llr_text(self.sprt.llr(self.counts))} ({self.sprt.lower:.2f}, {self.sprt.upper:+.2f})"
                         + (f", past the {waiting}" if waiting else ""))
        return " | ".join(parts)

    def _bound_passed(self) -> str:
        """``"upper"`` or ``"lower"`` when the LLR is at or past that bound; ``""`` between them or without an SPRT."""
        if self.sprt is None:
            return ""
        llr = self.sprt.llr(self.counts)
        return "upper" if llr >= self.sprt.upper else "lower" if llr <= self.sprt.lower else ""

    def _past_bound_early(self) -> str:
        """Words for an LLR past a bound before ``min_pairs`` (the test decides only from then on); ``""`` otherwise."""
        side = self._bound_passed()
        if self.sprt is None or self.decision is not None or self.counts.pairs >= self.sprt.min_pairs or not side:
            return ""
        return (f"{side} bound already; playing on to the minimum of {self.sprt.min_pairs} pairs before deciding "
                f"({self.sprt.min_pairs - self.counts.pairs} more to play)")

    def games_line(self, finished: int, running: int = 0) -> str:
        """How many games were played and why no more will be (or how many more may be): the page's count line.

        ``finished`` and ``running`` are the database's counts (a lone game of
        a pair is played but counts only with its pair).  A match its SPRT
        decided says so: the games left to the cap were never needed.
        """
        now = f", {running} in progress" if running else ""
        if self.sprt is None:
            return f"{finished} of {self.limit} games played{now}"
        if self.decision is not None:
            line = f"decided by the SPRT after {self.decided_after} games"
            extra, counted = finished - self.decided_after, self.games - self.decided_after
            if extra > 0:
                line += f"; {extra} more game(s) already running then finished" + (
                    " and count too" if counted == extra else
                    " but count for nothing: a game counts only with its pair" if counted == 0 else
                    f", {counted} of them in complete pairs, which count")
            if running:
                line += f" ({running} still running)"
            left = self.limit - finished - running
            return line + (f"; the remaining {left} of at most {self.limit} games were not needed" if left > 0 else "")
        if self.stopped == "max-games":
            return f"{finished} of {self.limit} games played, the most --max-games allows: the SPRT did not decide"
        return f"{finished} games played{now}; not decided yet: the SPRT plays on until it decides, at most {self.limit} games"

    def elo_of(self, agent: str) -> EloEstimate:
        """The match's estimate from ``agent``'s side: its Elo over the other (A's estimate, mirrored for B)."""
        return self.estimate() if agent == self.a else self.estimate().mirrored()

    def elo_text(self, agent: str) -> str:
        """``+149 [+53, +274]``, ``at least +140``: :meth:`elo_of` as a standings' column shows it."""
        return " ".join(part for part in self.elo_of(agent).parts() if part)

    def lines(self) -> list[str]:
        """Every figure, for experts (``--verbose``): W-D-L and pentanomial counts, Elo and nElo, the LLR and its bounds."""
        lines = [f"{self.games} games, {self.counts.line()}", self.counts.elo().line()]
        if self.repeats:
            # Deterministic agents replay the same games: a repeat adds no information, and counting it
            # would narrow the interval for nothing.  The honest interval is over the distinct pairs.
            lines.append(f"{self.repeats} of {self.counts.pairs} pairs repeat an earlier pair move for move; "
                         f"over the {self.distinct.pairs} distinct pairs: {self.distinct.elo().line()}")
        if self.sprt is not None:
            lines.append(self.sprt.line(self.counts))
        return lines

    def verdict(self) -> str:
        """What the match says, in words: who is better and by about how much, no difference, or not decided yet.

        With an SPRT its decision rules; a match of fixed length reads the
        95% interval (better when it lies above 0, worse below, otherwise no
        difference found).  Undecided, it says that the test decides, not the
        interval: where its LLR stands between which bounds, that it waits for
        ``min_pairs`` if its LLR is past a bound before them, about how many
        more games it needs from :data:`GUESS_FROM_PAIRS` pairs on
        (:meth:`~..stats.SPRT.expected_pairs`) and, at the end of a match
        stopped undecided, what to do.
        """
        if not self.pairs:
            return "no game pair finished yet"
        if self.repeats:
            return (f"{self._verdict()}; {self.repeats} of {self.counts.pairs} pairs repeat an earlier pair move for "
                    "move and count once in the Elo (deterministic agents: --openings gives each pair its own opening)")
        return self._verdict()

    def _verdict(self) -> str:
        estimate = self.estimate()
        if self.sprt is None:
            if estimate.low > 0 or estimate.high < 0:
                return _better(self.a, self.b, estimate)
            return (f"no difference found in {self.games} games ({estimate.short()}, 95 %): "
                    "play more games to tell them apart")
        if self.decision == "H1":
            if estimate.low <= 0 and not self.repeats:  # (the test's model and the Elo interval may part a little)
                return f"{self.a} is better than {self.b}: the test accepted H1 ({estimate.short()}, 95 %)"
            return _better(self.a, self.b, estimate)
        if self.decision == "H0":
            if estimate.high < 0:
                return _better(self.a, self.b, estimate)
            unit = "nElo" if self.sprt.model == "normalized" else "Elo"
            return (f"no difference found: {self.a} is not better than {self.b} by {self.sprt.elo1:g} {unit} "
                    f"(elo1) or more ({estimate.short()}, 95 %)")
        more = self.expected_games()
        if self.stopped != "max-games":  # going on, or stopped before its end (Ctrl-C, an agent that cannot start)
            left = self.limit - self.games
            cap = (f", more than the {left} left before the cap (--max-games {self.limit})"
                   if more is not None and 0 < left < more else "")
            return (f"not decided yet after {self.games} games ({estimate.short()}, 95 %): "
                    f"{self._undecided(self.sprt, more)}{cap}")
        bigger = max(50.0, 3 * self.sprt.elo1)
        longer = f" (about {self.games + more} games)" if more is not None else ""
        said = (f"no decision after {self.games} games ({estimate.short()}, 95 %): "
                f"{self._undecided(self.sprt, more, ended=True)}. ")
        if self.counts.pairs < self.sprt.min_pairs:
            return said + f"Start a new match with --max-games {2 * self.sprt.min_pairs} or more"
        return (said + f"Start a new match with a larger --max-games{longer}, or ask a coarser question: "
                f"elo1={bigger:g} decides sooner (the games needed grow as 1/(elo1 - elo0) squared)")

    def _undecided(self, sprt: SPRT, more: Optional[int], ended: bool = False) -> str:
        """Why an undecided test has not decided, in words: what decides, where its LLR is, what it may still take.

        The interval above 0 (say +203 [+83, +396]) does not stop the test:
        its LLR does, at Wald's bounds, and a test of a small elo1 gathers
        evidence slowly whatever the gap (its steps are scaled by elo1 - elo0).
        """
        unit = "nElo" if sprt.model == "normalized" else "Elo"
        llr = _llr_text(sprt.llr(self.counts))
        upper = f"{sprt.upper:+.2f} (H1: {self.a} better than {self.b} by elo1={sprt.elo1:g} {unit})"
        lower = f"{sprt.lower:.2f} (H0: better by no more than elo0={sprt.elo0:g} {unit})"
        early = self._past_bound_early()
        if ended:
            if self.counts.pairs < sprt.min_pairs:  # a cap below min_pairs: no test could decide
                side = f", past its {self._bound_passed()} bound" if self._bound_passed() else ""
                return (f"the SPRT decides, not the Elo interval, and it decides only from {sprt.min_pairs} pairs "
                        f"({2 * sprt.min_pairs} games) on: the cap came first (its LLR ended at {llr}{side})")
            words = (f"the SPRT decides, not the Elo interval, and its LLR ended at {llr}, between its bounds "
                     f"{lower} and {upper}")
            return words + (f"; at its drift so far it needs about {more} more games on average "
                            "(a rough guess: one match may need far fewer or far more)" if more is not None else "")
        words = f"the SPRT decides, not the Elo interval: it stops when its LLR (now {llr}) reaches {upper} or {lower}"
        if early:
            return f"{words}; its LLR is past the {early}"
        if more is not None:
            return (f"{words}; at its drift so far that takes about {more} more games on average "
                    "(a rough guess: one match may need far fewer or far more)")
        return (f"{words}; after only {self.counts.pairs} pairs, how many more games it needs cannot be told yet "
                f"(a guess comes from {GUESS_FROM_PAIRS} pairs on)")

    def to_dict(self) -> dict[str, Any]:
        """``match.json``: the figures, the verdict, the SPRT and every pair with its opening and its games' folders."""
        estimate = self.counts.elo()
        data: dict[str, Any] = {
            "a": self.a,
            "b": self.b,
            "games": self.games,
            "wins": self.counts.wins,
            "draws": self.counts.draws,
            "losses": self.counts.losses,
            "pentanomial": self.counts.counts,
            "elo": _finite(estimate.elo),
            "elo_low": _finite(estimate.low),
            "elo_high": _finite(estimate.high),
            "nelo": _finite(estimate.nelo),
            "nelo_error": _finite(estimate.nelo_error),
            "stopped": self.stopped,
            "progress": self.progress_line(),
            "verdict": self.verdict(),
            "expected_games": self.expected_games(),
            "distinct_pairs": self.distinct.pairs,
            "distinct_pentanomial": self.distinct.counts,
            "pairs": [{"pair": p.number, "opening": format_opening(p.opening), "points": list(p.points),
                       "games": list(p.games)} for p in self.pairs],
        }
        if self.sprt is not None:
            data["sprt"] = {
                "elo0": self.sprt.elo0, "elo1": self.sprt.elo1, "alpha": self.sprt.alpha, "beta": self.sprt.beta,
                "model": self.sprt.model, "llr": self.sprt.llr(self.counts),
                "lower": self.sprt.lower, "upper": self.sprt.upper, "decision": self.decision,
            }
        return data


def _better(a: str, b: str, estimate: EloEstimate) -> str:
    """``v3 is better than v2 by about 120 Elo (at least 60, 95 %)``, from A's estimate (B's if A is worse)."""
    if estimate.elo < 0:
        a, b = b, a
        estimate = estimate.mirrored()
    if estimate.low <= 0:  # (an SPRT's H1 over pairs that repeat: the distinct ones do not show it)
        return f"{a} scored more than {b} ({estimate.short()}, 95 %), not enough to be sure it is better"
    if math.isinf(estimate.elo):
        return f"{a} is better than {b}: it won every game, at least {estimate.low:+.0f} Elo (95 %)"
    return f"{a} is better than {b} by about {estimate.elo:.0f} Elo (at least {estimate.low:.0f}, 95 %)"


def _llr_text(llr: float) -> str:
    """``1.93``; ``0.00`` rather than ``-0.00``."""
    text = f"{llr:.2f}"
    return "0.00" if text == "-0.00" else text


def _about(games: int) -> int:
    """A count of games rounded as an estimate deserves: two significant figures from 100 on, even."""
    if games < 100:
        return games
    step = int(10 ** (len(str(games)) - 2))
    return round(games / step) * step


def _finite(value: float) -> Optional[float]:
    return round(value, 3) if math.isfinite(value) else None  # JSON has no infinity


# ---------------------------------------------------------------------------
# From the database
# ---------------------------------------------------------------------------


def complete_pair(tournament: Tournament, store: Store, schedule: dict[int, ScheduledGame],
                  index: int) -> Optional[PairResult]:
    """The pair game ``index`` belongs to, if both its games are stored."""
    first_index = index - 1 if index % 2 == 0 else index
    games = (schedule.get(first_index), schedule.get(first_index + 1))
    if games[0] is None or games[1] is None:
        return None
    one, two = (store.finished_game(game.key) for game in games if game is not None)
    if one is None or two is None:
        return None
    a = tournament.agent_names[0]
    return PairResult(
        number=(first_index + 1) // 2,
        opening=game_opening(tournament, first_index),
        points=(one.points(a), two.points(a)),
        games=(_relative(tournament, games[0]), _relative(tournament, games[1])),
        moves_key=(one.moves_key, two.moves_key),
    )


def _relative(tournament: Tournament, game: ScheduledGame) -> str:
    path = game_directory(tournament, game.key, game.white, game.black)
    return str(path.relative_to(tournament.results_dir))


def new_state(match: Tournament) -> MatchState:
    """The empty state of the match ``match`` (a tournament file with a ``[match]`` table)."""
    a, b = match.agent_names
    return MatchState(a, b, sprt=SPRT.parse(match.match_sprt) if match.match_sprt else None,
                      limit=match.games_per_pairing)


def read_match(match: Tournament, store: Store) -> MatchState:
    """The match as its database has it: every complete pair in the order of the schedule.

    ``stopped`` says "sprt" once the test decided and "games" / "max-games"
    when every game is played; "" while games are left (being played, or
    waiting for ``othello match --resume``).
    """
    state = new_state(match)
    schedule = {game.index: game for game in store.scheduled_games()}
    for index in sorted(schedule):
        if index % 2 == 0:
            pair = complete_pair(match, store, schedule, index)
            if pair is not None:
                state.add(pair)
    if state.decision is not None:
        state.stopped = "sprt"
    elif schedule and not store.unfinished_games():
        state.stopped = "games" if state.sprt is None else "max-games"
    return state


__all__ = ["MatchState", "PairResult", "complete_pair", "new_state", "read_match"]
