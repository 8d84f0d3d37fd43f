"""Where a tournament keeps each game: one rule, read by the runner, the read model and the match's pairs."""

from __future__ import annotations

from pathlib import Path

from ..schedule.config import Tournament


def game_directory(tournament: Tournament, key: str, white: str, black: str) -> Path:
    """Where a game of the tournament is played and kept (its agents' directories, ``game.json``, ``live.jsonl``)."""
    return tournament.results_dir / "games" / f"{key}_{white}_vs_{black}"


__all__ = ["game_directory"]
