"""Game pairs: one opening played twice, the colours swapped.

Deterministic agents that always start from the start position play the same
game again and again; an opening gives each game pair its own position, and
playing it with both colours cancels the opening's own bias (one side may
stand better after it).  This is what cutechess-cli and fastchess call a
game pair.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Optional, Sequence

from ..protocol import GameRecord, Move
from .config import GameConfig
from .game import EventCallback, check_opening, play_game
from .spec import AgentSpec, distinct_labels


def draw_openings(openings: Sequence[Sequence[Move]], count: int, seed: int) -> list[list[Move]]:
    """``count`` openings drawn from ``openings`` by ``seed``, with no repeat until all were drawn.

    The suite is shuffled by ``seed`` and read in order; past its end it is
    shuffled again (the next shuffle of the same generator), so the draw is
    the same for the same seed and a suite of N openings gives N distinct
    ones before any comes back.
    """
    return [list(openings[i]) for i in _drawn_indices(len(openings), count, seed)]


def nth_opening(openings: Sequence[Sequence[Move]], number: int, seed: int) -> list[Move]:
    """The opening :func:`draw_openings` gives at position ``number`` (0-based), without drawing the ones before.

    Only indices are drawn, and only up to ``number``: a match of thousands
    of pairs asks for each pair's opening in turn.
    """
    return list(openings[_drawn_indices(len(openings), number + 1, seed)[number]])


def _drawn_indices(size: int, count: int, seed: int) -> list[int]:
    if not size:
        raise ValueError("no openings to draw from")
    generator = random.Random(seed)
    drawn: list[int] = []
    while len(drawn) < count:
        order = list(range(size))
        generator.shuffle(order)
        drawn += order[: count - len(drawn)]
    return drawn


def play_pair(
    first: AgentSpec,
    second: AgentSpec,
    opening: Sequence[Move],
    config: Optional[GameConfig] = None,
    out_dir: Path | str = "pair",
    seed: Optional[int] = None,
    on_event: Optional[EventCallback] = None,
) -> tuple[GameRecord, GameRecord]:
    """Play ``opening`` twice: ``first`` as White in ``out_dir/1``, then as Black in ``out_dir/2``.

    Raises :class:`ValueError` before anything starts if an agent does not
    understand openings or the opening is illegal (an empty opening is the
    start position, which every agent understands).  ``seed`` is recorded
    in both games.
    """
    first, second = distinct_labels(first, second)
    check_opening(first, second, opening, (config or GameConfig()).size)
    out = Path(out_dir)
    one = play_game(first, second, config, out / "1", seed=seed, on_event=on_event, opening=opening)
    two = play_game(second, first, config, out / "2", seed=seed, on_event=on_event, opening=opening)
    return one, two


__all__ = ["draw_openings", "nth_opening", "play_pair"]
