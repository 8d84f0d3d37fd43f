"""Standings and the grade sheet: one row per student, reference agents beside them, never ranked among them.

A student is graded on their current version (the last admitted one): its
ladder games, its score (1 a win, 1/2 a draw), its rating with a 95%
interval (Bradley-Terry over every ladder game, each version its own
player: tournaments' rating fit), its rank among the students, its result
against each reference agent, and ``duplicate_of``: the other students who
sent the very same version (the same fingerprint).  ``same_moves_as`` names
those whose version played exactly the same moves in the same games
(the same opponent, colour and opening): a copy with its files renamed.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any, Optional

from .arena import GameRecord
from .ladder import moves_sha256, rating_key, ratings
from .settings import ClassSettings
from .store import ClassStore, Game, Version, VersionStatus

COLUMNS = ["id", "name", "fingerprint", "submitted_at", "status", "games", "score", "rating", "rating_low",
           "rating_high", "rank"]


@dataclass
class StudentLine:
    id: str
    name: str
    fingerprint: str = ""
    submitted_at: str = ""
    status: str = "none"  # admitted, checking, rejected, none (nothing sent)
    version: Optional[int] = None
    games: int = 0
    score: float = 0.0
    rating: Optional[float] = None
    rating_error: Optional[float] = None
    rank: Optional[int] = None
    crashes: int = 0
    timeouts: int = 0
    against: dict[str, str] = field(default_factory=dict)  # reference -> "points/games"
    duplicate_of: list[str] = field(default_factory=list)
    same_moves_as: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "version": self.version, "fingerprint": self.fingerprint,
                "submitted_at": self.submitted_at, "status": self.status, "games": self.games, "score": self.score,
                "rating": _round(self.rating), "rating_error": _round(self.rating_error), "rank": self.rank,
                "crashes": self.crashes, "timeouts": self.timeouts, "against": self.against,
                "duplicate_of": self.duplicate_of, "same_moves_as": self.same_moves_as}


@dataclass(frozen=True)
class ReferenceLine:
    """A reference agent beside the students: its built-in agent, its own time per move, its rating."""

    name: str
    agent: str
    time_per_move: Optional[float]
    rating: Optional[float]
    rating_error: Optional[float]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "agent": self.agent, "time_per_move": self.time_per_move,
                "rating": _round(self.rating), "rating_error": _round(self.rating_error)}


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 1)


def standings(settings: ClassSettings, store: ClassStore) -> tuple[list[StudentLine], list[ReferenceLine]]:
    """The students (ranked first, then the unranked by id) and the reference agents with their ratings."""
    fitted = ratings(store)
    current = {version.student: version for version in store.current_versions()}
    latest: dict[str, Version] = {}
    for version in store.versions():
        latest[version.student] = version
    games = store.finished_games()
    lines = []
    for student in store.students():
        line = StudentLine(student.id, student.name)
        chosen = current.get(student.id) or latest.get(student.id)
        if chosen is not None:
            line.version, line.fingerprint = chosen.id, chosen.fingerprint
            line.submitted_at, line.status = chosen.submitted_at, chosen.status.value
        if student.id in current:
            _score(line, games, settings)
            found = fitted.get(rating_key(student.id, line.version))
            if found is not None and line.games:
                line.rating, line.rating_error = found.elo, found.error
        lines.append(line)
    ranked = sorted((line for line in lines if line.rating is not None), key=lambda l: -(l.rating or 0.0))
    for place, line in enumerate(ranked, start=1):
        line.rank = place
    _duplicates(lines, store)
    _same_moves(lines, games, store)
    references = [ReferenceLine(ref.name, ref.builtin, ref.time_per_move,
                                fitted[ref.name].elo if ref.name in fitted else None,
                                fitted[ref.name].error if ref.name in fitted else None)
                  for ref in settings.references]
    order = ranked + sorted((line for line in lines if line.rank is None), key=lambda l: l.id)
    return order, references


def _score(line: StudentLine, games: list[Game], settings: ClassSettings) -> None:
    against: dict[str, list[float]] = {}
    for game in games:
        if line.version not in (game.white_version, game.black_version):
            continue
        white = game.white_version == line.version
        white_points = game.white_points or 0.0
        points = white_points if white else 1.0 - white_points
        line.games += 1
        line.score += points
        if game.winner == ("B" if white else "W") and game.termination == "crash":
            line.crashes += 1
        if game.winner == ("B" if white else "W") and game.termination == "timeout":
            line.timeouts += 1
        opponent, opponent_version = (game.black, game.black_version) if white else (game.white, game.white_version)
        if opponent_version is None:
            against.setdefault(opponent, []).append(points)
    line.against = {ref.name: f"{_half(sum(against[ref.name]))}/{len(against[ref.name])}"
                    for ref in settings.references if ref.name in against}


def _half(points: float) -> str:
    return f"{points:g}"


def _duplicates(lines: list[StudentLine], store: ClassStore) -> None:
    owners: dict[str, list[str]] = {}
    for version in store.versions():
        owners.setdefault(version.fingerprint, [])
        if version.student not in owners[version.fingerprint]:
            owners[version.fingerprint].append(version.student)
    for line in lines:
        if line.fingerprint:
            line.duplicate_of = [other for other in owners.get(line.fingerprint, []) if other != line.id]


def _same_moves(lines: list[StudentLine], games: list[Game], store: ClassStore) -> None:
    """Versions of two students that played the same opponent, colour and opening move for move, every time."""
    openings = {pair.id: pair.opening for pair in store.pairs()}
    played: dict[int, dict[tuple[str, str, tuple[str, ...]], str]] = {}
    for game in games:
        moves = _moves_alone(game)
        opening = openings.get(game.pair, ())
        for colour, version, opponent in (("W", game.white_version, game.black),
                                          ("B", game.black_version, game.white)):
            if version is not None:
                played.setdefault(version, {})[(opponent, colour, opening)] = moves
    current = {line.version: line for line in lines if line.version is not None and line.status == VersionStatus.ADMITTED}
    for version, line in current.items():
        mine = played.get(version, {})
        for other_version, other in current.items():
            if other.id == line.id:
                continue
            theirs = played.get(other_version, {})
            common = [key for key in mine if key in theirs and key[0] not in (line.id, other.id)]
            if len(common) >= 2 and all(mine[key] == theirs[key] for key in common):
                line.same_moves_as.append(other.id)


def _moves_alone(game: Game) -> str:
    """The game's moves without who played them, hashed as the ladder keeps them (from the record if not kept)."""
    if game.moves_sha256:
        return game.moves_sha256
    return moves_sha256(GameRecord.from_json(game.record)) if game.record else ""


def grade_sheet(settings: ClassSettings, store: ClassStore) -> str:
    """The grade sheet as CSV: :data:`COLUMNS`, one column per reference agent, ``duplicate_of``, ``same_moves_as``."""
    lines, _ = standings(settings, store)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    references = [ref.name for ref in settings.references]
    writer.writerow([*COLUMNS, *references, "duplicate_of", "same_moves_as"])
    for line in sorted(lines, key=lambda l: l.id):
        low = "" if line.rating is None or line.rating_error is None else f"{line.rating - line.rating_error:.0f}"
        high = "" if line.rating is None or line.rating_error is None else f"{line.rating + line.rating_error:.0f}"
        writer.writerow([line.id, line.name, line.fingerprint, line.submitted_at, line.status, line.games,
                         f"{line.score:g}", "" if line.rating is None else f"{line.rating:.0f}", low, high,
                         line.rank or "", *(line.against.get(name, "") for name in references),
                         " ".join(line.duplicate_of), " ".join(line.same_moves_as)])
    return out.getvalue()
