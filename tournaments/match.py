"""A head-to-head match in game pairs: a fixed number of games, or until an SPRT decides.

Each pair plays one opening twice, A White first then Black
(:func:`~othello_arena.referee.play_pair`), in ``out_dir/pair-0001/1`` and
``.../2``; openings are drawn from the suite by the seed without repeats
(:func:`~othello_arena.referee.draw_openings`).  After each pair the
pentanomial counts, the Elo estimate and the LLR are updated
(:mod:`.stats`) and handed to ``on_pair``, so the command line can print
them live; at the end ``match.json`` keeps every pair and the figures.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from ..protocol import GameRecord, Move
from ..protocol.openings import format_opening
from ..referee import AgentSpec, GameConfig, check_opening, distinct_labels, draw_openings, play_pair
from .stats import SPRT, Pentanomial


@dataclass
class PairResult:
    """One game pair: its opening, A's points in each game, and the two records."""

    number: int
    opening: list[Move]
    points: tuple[float, float]
    records: tuple[GameRecord, GameRecord]

    @property
    def moves_key(self) -> tuple[str, str]:
        """The two games' whole move lists (opening included): equal keys are the same pair played again."""
        return (self.records[0].transcript(), self.records[1].transcript())


@dataclass
class MatchState:
    """Where the match stands: the counts, the pairs so far and, at the end, why it stopped."""

    a: str
    b: str
    counts: Pentanomial = field(default_factory=Pentanomial)
    distinct: Pentanomial = field(default_factory=Pentanomial)  # the pairs not seen before, move for move
    pairs: list[PairResult] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    sprt: Optional[SPRT] = None
    decision: Optional[str] = None  # "H0" / "H1" once the SPRT decides
    stopped: str = ""  # "games", "sprt", "max-games", "not-started"

    @property
    def games(self) -> int:
        return 2 * len(self.pairs)

    def lines(self) -> list[str]:
        """The figures for people: W-D-L and pentanomial counts, Elo, and the LLR with its bounds."""
        lines = [f"{self.games} games, {self.counts.line()}", self.counts.elo().line()]
        repeats = self.counts.pairs - self.distinct.pairs
        if repeats:
            # Deterministic agents replay the same games: a repeat adds no information, and counting it
            # would narrow the interval for nothing.  The honest interval is over the distinct pairs.
            lines.append(f"{repeats} of {self.counts.pairs} pairs repeat an earlier pair move for move; "
                         f"over the {self.distinct.pairs} distinct pairs: {self.distinct.elo().line()}")
        if self.sprt is not None:
            lines.append(self.sprt.line(self.counts))
        return lines

    def to_dict(self) -> dict[str, Any]:
        """``match.json``: the figures, the SPRT and every pair with its opening and its games' folders."""
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
            "distinct_pairs": self.distinct.pairs,
            "distinct_pentanomial": self.distinct.counts,
            "pairs": [
                {"pair": p.number, "opening": format_opening(p.opening), "points": list(p.points),
                 "games": [f"pair-{p.number:04d}/1", f"pair-{p.number:04d}/2"]}
                for p in self.pairs
            ],
        }
        if self.sprt is not None:
            data["sprt"] = {
                "elo0": self.sprt.elo0, "elo1": self.sprt.elo1, "alpha": self.sprt.alpha, "beta": self.sprt.beta,
                "model": self.sprt.model, "llr": self.sprt.llr(self.counts),
                "lower": self.sprt.lower, "upper": self.sprt.upper, "decision": self.decision,
            }
        return data


def _finite(value: float) -> Optional[float]:
    return round(value, 3) if math.isfinite(value) else None  # JSON has no infinity


def points_of(record: GameRecord, label: str) -> float:
    """The points ``label`` scored in ``record``: 1, 0.5 or 0."""
    result = record.result
    if result is None or result.winner is None:
        return 0.5
    return 1.0 if record.name(result.winner) == label else 0.0


def run_match(
    a: AgentSpec,
    b: AgentSpec,
    config: GameConfig,
    out_dir: Path,
    openings: Optional[Sequence[Sequence[Move]]] = None,
    games: Optional[int] = None,
    sprt: Optional[SPRT] = None,
    max_games: int = 1000,
    seed: int = 0,
    on_pair: Optional[Callable[[MatchState, PairResult], None]] = None,
    pair_player: Callable[..., tuple[GameRecord, GameRecord]] = play_pair,
) -> MatchState:
    """Play game pairs of A against B until ``games`` are played, or the SPRT decides, or ``max_games``.

    Without ``openings`` every game starts from the start position.  Raises
    :class:`ValueError` before any game if the arguments do not make a match
    (an odd number of games, neither ``games`` nor ``sprt``, an agent that
    does not understand openings).  An agent that cannot be started stops the
    match (``stopped == "not-started"``).
    """
    if (games is None) == (sprt is None):
        raise ValueError("a match plays a number of games or until an SPRT decides: give one of them")
    limit = games if games is not None else max_games
    if limit < 2 or limit % 2:
        raise ValueError(f"a match plays game pairs: the number of games must be even and at least 2, not {limit}")
    a, b = distinct_labels(a, b)
    if openings is not None:
        if not openings:
            raise ValueError("the opening suite is empty")
        check_opening(a, b, openings[0])
    drawn = draw_openings(openings, limit // 2, seed) if openings else [[] for _ in range(limit // 2)]
    state = MatchState(a.label, b.label, sprt=sprt)
    out_dir = Path(out_dir)
    for number, opening in enumerate(drawn, 1):
        one, two = pair_player(a, b, opening, config, out_dir / f"pair-{number:04d}", seed=seed)
        pair = PairResult(number, opening, (points_of(one, a.label), points_of(two, a.label)), (one, two))
        state.pairs.append(pair)
        state.counts.add(*pair.points)
        if pair.moves_key not in state.seen:
            state.seen.add(pair.moves_key)
            state.distinct.add(*pair.points)
        if sprt is not None:
            state.decision = sprt.decision(state.counts)
        if on_pair is not None:
            on_pair(state, pair)
        if any(info.get("start_error") for record in (one, two) for info in record.extra.get("agents", {}).values()):
            state.stopped = "not-started"
            break
        if state.decision is not None:
            state.stopped = "sprt"
            break
    else:
        state.stopped = "games" if games is not None else "max-games"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "match.json").write_text(json.dumps(state.to_dict(), indent=2) + "\n", encoding="utf-8")
    return state


__all__ = ["MatchState", "PairResult", "points_of", "run_match"]
