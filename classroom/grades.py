"""Standings and the grade sheet: one row per student, reference agents beside them, never ranked among them.

A student is graded on their current version (the last admitted one): its
ladder games, its score (1 a win, 1/2 a draw), its rating with a 95%
interval (Bradley-Terry over every ladder game, each version its own
player: tournaments' rating fit), its rank among the students, its result
against each reference agent, and ``duplicate_of``: the other students who
sent the very same version (the same fingerprint).  ``same_moves_as`` names
those whose version played the same moves in the games the two share (the
same opponent's version, colour and opening): a copy with its files renamed.

The grade sheet (:func:`grade_sheet`) adds the final's rank, the ranks the
evidence allows (``final_rank_best``..``final_rank_worst``), points and
games (empty before the final), every column of the roster, and the
students whose code is similar (:mod:`.copies`, the dashboard's own list).  It is for a
spreadsheet: numbers are numbers, one a cell (points and games apart, never
``1/2``, which a spreadsheet turns into a date), and the file is UTF-8 with
a byte-order mark, the one sign by which Excel reads a CSV as UTF-8 rather
than the machine's code page (``Zoë Ångström`` intact); LibreOffice, Google
Sheets and ``csv`` with ``encoding="utf-8-sig"`` read it as well, so one
file serves all, where an ``--excel`` switch would leave the default wrong
for the most common spreadsheet.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from .arena import GameRecord, TournamentFileError, TournamentStoreError, load_tournament, tournament_tables
from .copies import copies_of, copy_pairs
from .ladder import moves_sha256, rating_key, ratings
from .settings import ClassSettings
from .store import ClassStore, GameResult, Version, VersionStatus

BOM = "\ufeff"  # first in the file: a spreadsheet reads the rest as UTF-8
SAME_MOVES_AT_LEAST = 2  # shared games played move for move alike before two versions are named

# version: the graded version's number among the student's (1, 2, 3...), as their page and cards say
COLUMNS = ["version", "fingerprint", "submitted_at", "status", "games", "score", "rating", "rating_low", "rating_high", "rank"]
FINAL_COLUMNS = ["final_rank", "final_rank_best", "final_rank_worst", "final_points", "final_games"]


@dataclass
class StudentLine:
    id: str
    name: str
    fingerprint: str = ""
    submitted_at: str = ""
    status: str = "none"  # admitted, checking, rejected, none (nothing sent)
    version: Optional[int] = None  # the version's id (the key of its games and rating)
    number: Optional[int] = None  # ... and its number among the student's versions: what a person reads
    games: int = 0
    score: float = 0.0
    rating: Optional[float] = None
    rating_error: Optional[float] = None
    rank: Optional[int] = None
    crashes: int = 0
    timeouts: int = 0
    tallies: dict[str, tuple[float, int]] = field(default_factory=dict)  # reference -> (points, games) against it
    duplicate_of: list[str] = field(default_factory=list)
    same_moves_as: list[str] = field(default_factory=list)

    @property
    def against(self) -> dict[str, str]:
        """The result against each reference as pages show it: ``points/games`` (never a spreadsheet's cell)."""
        return {name: f"{points:g}/{games}" for name, (points, games) in self.tallies.items()}

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "version": self.number, "fingerprint": self.fingerprint,
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


Standings = tuple[list[StudentLine], list[ReferenceLine]]

STANDINGS = "standings"  # their name among what the server's worker works out (store.WORKED_OUT_TABLE)
STANDINGS_FORMAT = 1  # their JSON's form: a row kept by a version of othello that wrote another is worked out again
STANDINGS_SHARE = 4.0  # the worker works them out again no sooner than this many times their last cost after it

_read: dict[str, tuple[str, Standings]] = {}  # class database -> (the mark of the row read, the standings in it)
_read_lock = threading.Lock()
_computing = threading.Lock()  # one computation of the standings at a time in a process


def standings(settings: ClassSettings, store: ClassStore, fresh: bool = True) -> Standings:
    """The students (ranked first, then the unranked by id) and the reference agents with their ratings.

    A class of 300's standings read a week of games (0.7 s of interpreter
    after each game at 20,000 games), and every page of the class shows
    them.  So the server's worker process works them out as the class
    changes (:func:`keep_standings`) and keeps them in the database, and the
    pages read them there (``fresh=False``): the pages' process never
    computes them beside its answers, and its pages lag the ladder by one
    computation.  Only when none are kept (a class never served since) are
    they computed here, once.

    ``fresh=True`` (the grade sheet at the command line, the tests): the
    standings of the class as it is now: those kept when they are of the
    class as it is, else computed here and kept.
    """
    if not fresh:
        kept = kept_standings_marked(store)
        if kept is not None:
            return kept[1]
    with _computing:
        key = standings_key(settings, store)
        kept = kept_standings_marked(store)
        if kept is not None and kept[0] == key:
            return kept[1]
        return _keep(settings, store, key)


def kept_standings(settings: ClassSettings, store: ClassStore) -> Optional[Standings]:
    """The standings kept in the database, however old; ``None`` when none are (the dashboard says they are being
    worked out: the first after a class's first start, 2-8 s at 20,000 games).  Never computes."""
    kept = kept_standings_marked(store)
    return kept[1] if kept is not None else None


def kept_standings_marked(store: ClassStore) -> Optional[tuple[str, Standings]]:
    """(what they were worked out from, the standings kept), ``None`` when none are or the row cannot be read (kept by
    another version of othello): one query of the row's mark while it stays the same, its JSON read once."""
    mark = store.worked_out_mark(STANDINGS)
    if mark is None:
        return None
    path = str(store.path)
    with _read_lock:
        cached = _read.get(path)
    if cached is not None and cached[0] == mark:
        return cached
    found = store.worked_out(STANDINGS)
    if found is None:
        return None
    try:
        read = found[0], standings_from_json(found[1])
    except (ValueError, TypeError, KeyError):
        return None
    with _read_lock:
        _read[path] = read
    return read


def standings_key(settings: ClassSettings, store: ClassStore) -> str:
    """What the standings are worked out from, in a line: the class's games, versions and students
    (:meth:`.ClassStore.standings_mark`), the reference agents, and the form they are kept in."""
    what = repr((STANDINGS_FORMAT, store.standings_mark(), settings.references))
    return hashlib.sha256(what.encode()).hexdigest()


def keep_standings(settings: ClassSettings, store: ClassStore) -> bool:
    """Work the standings out and keep them in the database, unless those kept are of the class as it is now;
    ``True`` when they were worked out (the server's worker calls it as the class changes).

    The key is read before the rows: the standings kept are at least as new
    as their key says, and a change meanwhile is worked out next time.
    """
    with _computing:
        key = standings_key(settings, store)
        if store.worked_out_mark(STANDINGS) == key:
            return False
        _keep(settings, store, key)
        return True


def _keep(settings: ClassSettings, store: ClassStore, key: str) -> Standings:
    """Compute the standings and keep them as those of ``key``, in the database and as read here (the caller holds
    :data:`_computing`)."""
    computed = compute_standings(settings, store)
    store.keep_worked_out(STANDINGS, key, standings_to_json(computed))
    with _read_lock:
        _read[str(store.path)] = key, computed
    return computed


def standings_to_json(ranked: Standings) -> str:
    lines, references = ranked
    return json.dumps({"lines": [asdict(line) for line in lines], "references": [asdict(ref) for ref in references]})


def standings_from_json(text: str) -> Standings:
    data = json.loads(text)
    lines = [StudentLine(**{**line, "tallies": {name: (float(points), int(games))
                                                for name, (points, games) in line["tallies"].items()}})
             for line in data["lines"]]
    return lines, [ReferenceLine(**ref) for ref in data["references"]]


def compute_standings(settings: ClassSettings, store: ClassStore) -> Standings:
    """The standings computed from the database now (:func:`standings` keeps the last ones)."""
    fitted = ratings(store)
    versions = store.versions(cards=False)
    current: dict[str, Version] = {}  # each student's last admitted version (store.current_versions)
    latest: dict[str, Version] = {}
    for version in versions:
        latest[version.student] = version
        if version.status is VersionStatus.ADMITTED:
            current[version.student] = version
    games = store.finished_results()
    by_version: dict[int, list[GameResult]] = {}
    for game in games:
        for version_id in {game.white_version, game.black_version}:
            if version_id is not None:
                by_version.setdefault(version_id, []).append(game)
    lines = []
    for student in store.students():
        line = StudentLine(student.id, student.name)
        chosen = current.get(student.id) or latest.get(student.id)
        if chosen is not None:
            line.version, line.number, line.fingerprint = chosen.id, chosen.number, chosen.fingerprint
            line.submitted_at, line.status = chosen.submitted_at, chosen.status.value
        if student.id in current:
            _score(line, by_version.get(line.version or 0, []), settings)
            found = fitted.get(rating_key(student.id, line.version))
            if found is not None and line.games:
                line.rating, line.rating_error = found.elo, found.error
        lines.append(line)
    ranked = sorted((line for line in lines if line.rating is not None), key=lambda l: -(l.rating or 0.0))
    for place, line in enumerate(ranked, start=1):
        line.rank = place
    _duplicates(lines, versions)
    _same_moves(lines, games, store)
    references = [ReferenceLine(ref.name, ref.builtin, ref.time_per_move,
                                fitted[ref.name].elo if ref.name in fitted else None,
                                fitted[ref.name].error if ref.name in fitted else None)
                  for ref in settings.references]
    order = ranked + sorted((line for line in lines if line.rank is None), key=lambda l: l.id)
    return order, references


def _score(line: StudentLine, games: list[GameResult], settings: ClassSettings) -> None:
    """``line``'s games, score, faults and result against each reference, from the games its version played."""
    against: dict[str, list[float]] = {}
    for game in games:
        white = game.white_version == line.version
        points = game.white_points if white else 1.0 - game.white_points
        line.games += 1
        line.score += points
        if game.winner == ("B" if white else "W") and game.termination == "crash":
            line.crashes += 1
        if game.winner == ("B" if white else "W") and game.termination == "timeout":
            line.timeouts += 1
        opponent, opponent_version = (game.black, game.black_version) if white else (game.white, game.white_version)
        if opponent_version is None:
            against.setdefault(opponent, []).append(points)
    line.tallies = {ref.name: (sum(against[ref.name]), len(against[ref.name]))
                    for ref in settings.references if ref.name in against}


def _duplicates(lines: list[StudentLine], versions: list[Version]) -> None:
    owners: dict[str, list[str]] = {}
    for version in versions:
        owners.setdefault(version.fingerprint, [])
        if version.student not in owners[version.fingerprint]:
            owners[version.fingerprint].append(version.student)
    for line in lines:
        if line.fingerprint:
            line.duplicate_of = [other for other in owners.get(line.fingerprint, []) if other != line.id]


Situation = tuple[str, str, tuple[str, ...]]  # a game as a side saw it: (the opponent's version, its colour, the opening)


@dataclass
class _Situations:
    """What every version played in each situation, read from the finished games once each (they never change)."""

    seen: set[int] = field(default_factory=set)  # the games read
    played: dict[int, dict[Situation, set[str]]] = field(default_factory=dict)  # version -> situation -> moves
    alike_in: dict[tuple[Situation, str], list[int]] = field(default_factory=dict)  # (situation, moves) -> versions


_situations: dict[str, _Situations] = {}  # class database -> what its versions played


def _situations_of(store: ClassStore, games: Sequence[GameResult]) -> _Situations:
    """The situations of ``games`` (every finished game), the ones not read before added (the standings are
    computed one at a time: :func:`standings`)."""
    known = _situations.get(str(store.path))
    if known is None or len(known.seen) > len(games):  # (the games of another database at that path: read anew)
        known = _situations[str(store.path)] = _Situations()
    if len(known.seen) == len(games):
        return known
    openings = {pair.id: pair.opening for pair in store.pairs()}
    for game in games:
        if game.id in known.seen:
            continue
        known.seen.add(game.id)
        moves = _moves_alone(game, store)
        if not moves:
            continue
        opening = openings.get(game.pair, ())
        for colour, version, opponent in (("W", game.white_version, game.black_fp),
                                          ("B", game.black_version, game.white_fp)):
            if version is None:
                continue
            played = known.played.setdefault(version, {}).setdefault((opponent, colour, opening), set())
            if moves not in played:
                played.add(moves)
                known.alike_in.setdefault(((opponent, colour, opening), moves), []).append(version)
    return known


def _same_moves(lines: list[StudentLine], games: Sequence[GameResult], store: ClassStore) -> None:
    """Name the students whose current versions played the same moves in the games they share.

    Two versions share a game when each played the same opponent's version
    with the same colour from the same opening (the opening's moves, however
    the ladder numbered it).  A copy plays every deterministic opponent move
    for move alike; a non-deterministic one (a random classmate, the
    ``random`` reference) plays each copy differently.  So the versions are
    named when at least :data:`SAME_MOVES_AT_LEAST` shared games are alike
    and they are at least half of the shared ones: one random classmate
    cannot hide a copy, and two different programs never agree on whole games.

    Only the versions that played alike at least that often are compared
    (those that played the same moves in a situation: each such situation
    gives its versions' pairs), and each game is read once
    (:func:`_situations_of`), so a class of 300 costs what its new games
    add, not every pair of versions over every situation of each.
    """
    current = {line.version: line for line in lines if line.version is not None and line.status == VersionStatus.ADMITTED}
    situations = _situations_of(store, games)
    played, prints = situations.played, {version: line.fingerprint for version, line in current.items()}
    alike: dict[tuple[int, int], set[Situation]] = {}
    for (situation, _), versions in situations.alike_in.items():
        if len(versions) < 2:
            continue
        for version in versions:
            for other in versions:
                # their games against each other are not shared games: each played the other
                if other != version and version in current and other in current and \
                        situation[0] not in (prints[version], prints[other]):
                    alike.setdefault((version, other), set()).add(situation)
    order = {version: place for place, version in enumerate(current)}
    named: dict[int, list[int]] = {}
    for (version, other), played_alike in alike.items():
        if len(played_alike) < SAME_MOVES_AT_LEAST or current[other].id == current[version].id:
            continue
        mine, theirs = played[version], played[other]
        shared = sum(1 for key in mine if key in theirs and key[0] not in (prints[version], prints[other]))
        if 2 * len(played_alike) >= shared:
            named.setdefault(version, []).append(other)
    for version, others in named.items():
        current[version].same_moves_as.extend(current[other].id for other in sorted(others, key=order.__getitem__))


def _moves_alone(game: GameResult, store: ClassStore) -> str:
    """The game's moves without who played them, hashed as the ladder keeps them (from the record if not kept)."""
    if game.moves_sha256:
        return game.moves_sha256
    row = store.game(game.id)
    return moves_sha256(GameRecord.from_json(row.record)) if row is not None and row.record else ""


# -- the grade sheet ----------------------------------------------------------------------


@dataclass(frozen=True)
class FinalLine:
    """A student's result in the final: the rank, the ranks the evidence allows, points and games."""

    rank: Optional[int]
    rank_best: Optional[int]
    rank_worst: Optional[int]
    points: float
    games: int

    def cells(self) -> list[Any]:
        return [_cell(self.rank), _cell(self.rank_best), _cell(self.rank_worst), _number(self.points), self.games]


def final_results(settings: ClassSettings) -> dict[str, FinalLine]:
    """Each student's line of the final's standings, by student id; empty before the final has results."""
    path = settings.folder / "final.toml"
    if not path.is_file():
        return {}
    try:
        tournament = load_tournament(path)
        if not Path(tournament.database).is_file():
            return {}
        standings_rows = tournament_tables(tournament)["standings"]
    except (TournamentFileError, TournamentStoreError, OSError):
        return {}
    found = {}
    for row in standings_rows:
        if row["reference"] or not row["id"]:
            continue
        found[str(row["id"])] = FinalLine(_int(row["rank"]), _int(row["rank_best"]), _int(row["rank_worst"]),
                                          float(row["points"]), int(row["games"]))
    return found


def _int(value: Any) -> Optional[int]:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _cell(value: Optional[float]) -> Any:
    return "" if value is None else value


def _number(value: float) -> Any:
    """A number as a spreadsheet reads it: ``2`` for a whole one, ``1.5`` otherwise."""
    return int(value) if float(value).is_integer() else value


def roster_columns(store: ClassStore, taken: set[str]) -> list[tuple[str, str]]:
    """The roster's other columns (e-mail, group...) in their order: (key in ``extra``, the sheet's header).

    A roster column named like one of the sheet's own is headed ``roster_NAME``.
    """
    keys: list[str] = []
    for student in store.students():
        keys += [key for key in student.extra if key not in keys]
    return [(key, f"roster_{key}" if key in taken else key) for key in keys]


def grade_sheet(settings: ClassSettings, store: ClassStore, fresh: bool = True) -> str:
    """The grade sheet as CSV text, a byte-order mark first: one row per student, numbers in cells of their own.

    ``fresh=False`` (the server's download): the standings kept, one
    computation behind the ladder at most, as the dashboard shows them,
    rather than waiting for a computation after each game (0.7-1.5 s).

    The columns: ``id``, ``name``, the roster's own columns, the current
    version and its ladder results (:data:`COLUMNS`), the final
    (:data:`FINAL_COLUMNS`), ``vs_REF_points``/``vs_REF_games`` for each
    reference, ``duplicate_of``, ``same_moves_as`` and ``similar_to``.
    """
    lines, _ = standings(settings, store, fresh)
    final = final_results(settings)
    copies = copy_pairs(settings, store)  # the dashboard's own list (computed again only for a new version)
    references = [ref.name for ref in settings.references]
    reference_columns = [f"vs_{name}_{what}" for name in references for what in ("points", "games")]
    own = ["id", "name", *COLUMNS, *FINAL_COLUMNS, *reference_columns, "duplicate_of", "same_moves_as", "similar_to"]
    roster = roster_columns(store, set(own))
    extras = {student.id: student.extra for student in store.students()}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["id", "name", *(header for _, header in roster), *own[2:]])
    for line in sorted(lines, key=lambda l: l.id):
        rated = line.rating is not None and line.rating_error is not None
        low = round((line.rating or 0.0) - (line.rating_error or 0.0)) if rated else ""
        high = round((line.rating or 0.0) + (line.rating_error or 0.0)) if rated else ""
        results = final.get(line.id)
        tallies = [cell for name in references for cell in
                   ((_number(line.tallies[name][0]), line.tallies[name][1]) if name in line.tallies else ("", ""))]
        writer.writerow([line.id, line.name, *(extras.get(line.id, {}).get(key, "") for key, _ in roster),
                         "" if line.number is None else line.number, line.fingerprint, line.submitted_at, line.status, line.games, _number(line.score),
                         "" if line.rating is None else round(line.rating), low, high, _cell(line.rank),
                         *(results.cells() if results else [""] * len(FINAL_COLUMNS)), *tallies,
                         " ".join(line.duplicate_of), " ".join(line.same_moves_as),
                         "; ".join(f"{pair.other(line.id)} ({pair.similarity:.0%})"
                                   for pair in copies_of(copies, line.id))])
    return BOM + out.getvalue()
