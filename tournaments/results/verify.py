"""``othello tournament verify``: every stored game checked against its record and the rules.

For each finished game the check is, in order:

1. the record stored in the database has the SHA-256 stored with it (the
   row was not edited by hand, or by an agent that reached the file);
2. ``game.json`` in the game's directory is, byte for byte, that record
   (read capped and never through a link);
3. the record replays under the rules core (:mod:`othello_arena.protocol`):
   every move legal, the players and seed those of the schedule;
4. the result agrees with the replay and with the row the standings use:
   winner, reason and discs; a ``normal`` end is a finished board won by
   the side with more discs; a game lost on a fault keeps the discs on the
   board when it ended; a ``build`` forfeit has no move.

A hash only proves that the record and the row agree with each other; the
replay is what proves the game: a forged record with a matching hash still
has to be a legal game with the result it claims.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from ...protocol import BLACK, WHITE, GameRecord, IllegalMoveError, ParseError, Result, Termination
from ..schedule.config import Tournament
from .safefiles import GAME_RECORD_LIMIT, read_whole
from .store import GameRow, Store, result_from_row


@dataclass(frozen=True)
class Problem:
    """What is wrong with one stored game."""

    game: str
    white: str
    black: str
    text: str

    def line(self) -> str:
        return f"{self.game} ({self.white} vs {self.black}): {self.text}"


@dataclass
class Verification:
    checked: int
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(tournament: Tournament) -> Verification:
    """Check every finished game of ``tournament``'s database (read only; no lock needed)."""
    problems: list[Problem] = []
    checked = 0
    with Store(tournament.database, create=False) as store:
        for row in store.game_rows():
            if not row.is_finished:
                continue
            checked += 1
            for text in check_game(row):
                problems.append(Problem(row.key, row.white, row.black, text))
    return Verification(checked, problems)


def check_game(row: GameRow) -> list[str]:
    """Every problem found with one finished game's row (empty if it is sound)."""
    found: list[str] = []
    stored = row.record
    digest = row.record_sha256
    if not stored:
        return ["no record is stored with this result"]
    if not digest:
        found.append("no hash is stored with the record (stored before hashes were kept, or removed)")
    elif hashlib.sha256(stored.encode("utf-8")).hexdigest() != digest:
        found.append("the record in the database does not match the hash stored with it (edited in the database)")

    text = stored
    directory = row.game_dir
    if not directory:
        found.append("no game directory is stored for this game")
    else:
        try:
            data = read_whole(Path(directory), "game.json", GAME_RECORD_LIMIT)
        except FileNotFoundError:
            found.append(f"{Path(directory) / 'game.json'} is missing")
        except OSError as exc:
            found.append(f"game.json cannot be checked: {exc}")
        else:
            if digest and hashlib.sha256(data).hexdigest() != digest:
                found.append(f"{Path(directory) / 'game.json'} is not the record stored for this game "
                             "(edited since the game ended)")
                text = data.decode("utf-8", errors="replace")  # check the file's claims too: say what is wrong

    try:
        record = GameRecord.from_json(text)
    except (ParseError, ValueError) as exc:
        return found + [f"the record does not parse: {exc}"]
    found += _check_record(record, row)
    if text != stored:  # the database's own record must also be a sound game
        try:
            found += [f"(database record) {p}" for p in _check_record(GameRecord.from_json(stored), row)]
        except (ParseError, ValueError) as exc:
            found.append(f"the record in the database does not parse: {exc}")
    return found


def _check_record(record: GameRecord, row: GameRow) -> list[str]:
    found: list[str] = []
    if (record.white, record.black) != (row.white, row.black):
        found.append(f"the record has {record.white} (W) vs {record.black} (B), the schedule "
                     f"{row.white} (W) vs {row.black} (B)")
    if record.seed != row.seed:
        found.append(f"the record's seed is {record.seed!r}, the schedule's {row.seed}")
    result = record.result
    if result is None:
        return found + ["the record has no result"]
    try:
        in_row: Optional[Result] = result_from_row(row)
    except (ValueError, TypeError) as exc:  # a column changed by hand to something no game ends with
        in_row = None
        found.append(f"the database's result is not a result: {exc}")
    if in_row is not None and replace(in_row, detail="", move_number=None) != replace(result, detail="", move_number=None):
        found.append(f"the database says {in_row.summary()}, the record says {result.summary()}")

    board, number = record.start, 0
    try:
        for number, (board, _) in enumerate(record.positions()):
            pass
    except (IllegalMoveError, ParseError, ValueError) as exc:
        return found + [f"move {number + 1} ({record.moves[number].move.line()}) does not replay under the rules: {exc}"]
    white, black = board.count(WHITE), board.count(BLACK)
    if (result.white_discs, result.black_discs) != (white, black):
        found.append(f"the record claims {result.white_discs}-{result.black_discs} discs, "
                     f"the replayed board has {white}-{black}")
    if result.termination is Termination.NORMAL:
        end = board.outcome()
        if end is None:
            found.append(f"the record ends as normal after {len(record.moves)} moves, but the game is not over")
        elif result.winner is not end.winner:
            found.append(f"the record says {result.summary()}, the rules say {end.summary()}")
    elif result.termination is Termination.BUILD and record.moves:
        found.append("a build forfeit with moves in its record")
    return found


def report_lines(result: Verification) -> list[str]:
    """What ``verify`` prints."""
    if result.ok:
        return [f"OK: all {result.checked} finished games match their records and the rules."]
    games = sorted({p.game for p in result.problems})
    lines = [f"FAILED: {len(games)} of {result.checked} finished games do not check out:"]
    lines += [f"  {p.line()}" for p in result.problems]
    return lines


def as_json(result: Verification) -> str:
    return json.dumps({"checked": result.checked, "ok": result.ok,
                       "problems": [p.__dict__ for p in result.problems]}, indent=2)
