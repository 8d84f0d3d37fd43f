"""The class folder and its settings file, ``class.toml``: read strictly, written once by ``init``.

A class folder holds::

    class.toml          the settings below (the instructor edits it; the server reads it at start)
    tokens.csv          id,name,token: each student's secret (for mail merge); the server keeps only hashes
    instructor.token    the instructor's secret (mode 600)
    class.sqlite        students, versions, cards, games (WAL): everything the class is
    submissions/ID/FP/  each version's files as uploaded, read-only (FP: the version's fingerprint)
    builds/ID/FP/       the copy that was built and plays (read-only once built)
    cards/ID/FP.json    each version's admission card
    games/GAME/         each ladder game's directory as the referee left it
    final/              the final tournament (othello class final)
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TypeVar

from .arena import (FILE_SECONDS, GameConfig, TimeRule, TournamentFileError, builtin_names, check_file_name, key,
                    parse_referee, read_table, table_template, time_rule)

SETTINGS_FILE = "class.toml"
DATABASE_FILE = "class.sqlite"
TOKENS_FILE = "tokens.csv"
INSTRUCTOR_TOKEN_FILE = "instructor.token"

# Weakest first: the ladder's rungs.  ``champion@S`` is the champion given S seconds a move (time odds):
# the rungs between paper-hard and the full champion, so a good student always has a next one.
DEFAULT_REFERENCES = ("random", "greedy", "paper-easy", "paper-normal", "paper-hard",
                      "champion@0.02", "champion@0.1", "champion@0.5", "champion")
FINAL_FORMATS = ("round-robin", "double-round-robin", "swiss")
MAX_REFERENCE_SECONDS = 600.0
CLOCK_FORM = 'a string "BASE+INC" in seconds, e.g. "300+2"'
T = TypeVar("T")


class SettingsError(ValueError):
    """class.toml (or the class folder) is not usable: the message names the file, the key and what was wrong."""


# Each table of class.toml, declared once: the reader (read_table, as for a tournament file) checks every key
# from it, and `othello class init` writes the commented template from it (each doc a comment).

@dataclass(frozen=True)
class ClassTable:
    """``[class]``: the class itself, its time rule and its reference agents."""

    name: Optional[str] = key("the class's name on its pages (default: the folder's name)", None, max_length=200,
                              example='"Othello 2026"')
    time_per_move: Optional[float] = key(
        f"seconds per move, in the checks and every game (default {FILE_SECONDS:g}); under a clock it caps a single "
        "move (delete it for the bank alone)", None, low=0.01, high=600, unit="seconds", example="1")
    clock: Optional[str] = key("a game clock instead (PROTOCOL.md section 10): a bank of 300 s, 2 s more a move.",
                               None, expected=CLOCK_FORM, example='"300+2"')
    deadline: Optional[str] = key("ISO 8601: the final plays each student's last version admitted before it", None,
                                  expected='an ISO 8601 time, e.g. "2026-12-04T18:00:00+01:00"',
                                  example='"2026-12-04T18:00:00+01:00"')
    references: tuple[str, ...] = key(
        "The reference agents, weakest first: the rungs a new version climbs.  A built-in agent by name, or "
        "NAME@SECONDS: that agent with its own seconds per move (the champion at small times).", DEFAULT_REFERENCES,
        expected="a list of built-in agents, NAME or NAME@SECONDS")


@dataclass(frozen=True)
class LadderTable:
    """``[ladder]``: how the ladder pairs the students' versions."""

    games_per_pairing: int = key("the games of a pair (even): one opening, colours alternating", 2, low=2, high=100)
    openings: str = key("the shipped suite of balanced openings, or \"none\" (played by programs that declare "
                        "openings)", "balanced")
    concurrency: Optional[int] = key("games at once: all cores but one; or a number", None, auto=True, low=1,
                                     high=1024)
    pairs_per_opponent: int = key("the first game pairs between two students' current versions, before the ladder "
                                  "plays the pairs whose results teach most", 2, low=1, high=1000)
    stop_climb_at: float = key("a pair scoring at most this against a reference ends the climb", 0.0, low=0, high=100)
    settle_elo: float = key("a standing is settled when its rating's 95% interval is within this many Elo either "
                            "side (or apart from every other): when all are, the ladder idles until a version "
                            "arrives.  50: adjacent students 100 Elo apart (one scores 64% against the other) are "
                            "told apart, about 200 games a version", 50.0, low=1, high=2000)
    games_per_hour: int = key("the ladder's budget: games started in an hour at most, once a version has played "
                              "its first pairs (0: no budget beyond concurrency)", 0, low=0, high=1_000_000)


@dataclass(frozen=True)
class AdmissionTable:
    """``[admission]``: what a submission may be, and how long its build may take."""

    build_timeout: float = key("seconds for a version's build line", 120.0, low=1, high=3600, unit="seconds")
    submissions_per_hour: int = key("per student", 12, low=1, high=10_000)
    max_upload_bytes: int = key("a whole upload (the request body is refused beyond this)", 4_000_000, low=1,
                                high=1 << 30)
    max_files: int = key("files in a submission", 200, low=1, high=100_000)
    max_file_bytes: int = key("bytes of one file of a submission", 2_000_000, low=1, high=1 << 30)
    max_depth: int = key("folders inside a submission", 8, low=1, high=64)
    max_student_mb: int = key("megabytes a student's files may take in the class folder (versions, builds, cards); "
                              "past it their submissions are refused", 500, low=1, high=1 << 20, unit="MB")


@dataclass(frozen=True)
class FinalTable:
    """``[final]``: the final tournament (othello class final)."""

    format: str = key("how the final pairs: round-robin, double-round-robin or swiss", "round-robin",
                      choices=FINAL_FORMATS)
    games_per_pairing: Optional[int] = key(
        "games of each pairing (even: each opening both ways); default: as many as an evening allows "
        "(classroom/final.py says how)", None, low=2, high=100, example="8")
    references: tuple[str, ...] = key("reference agents that play in the final too (never ranked among students)",
                                      (), expected="a list of names of [class] references")


@dataclass(frozen=True)
class RefereeTable:
    """``[referee]``: the limits of every program in the checks, the ladder and the final (a tournament file's keys)."""

    memory_mb: Optional[int] = key("MB of memory of each program: all its processes and its /tmp and /dev/shm "
                                   "(0: none; othello doctor says how it is enforced here)", None, low=0,
                                   example=str(GameConfig.memory_mb))
    max_processes: Optional[int] = key("processes a program may run at once (0: no limit)", None, low=0,
                                       example=str(GameConfig.max_processes))
    disk_mb: Optional[int] = key("MB a program may keep in its folder and its /tmp; its largest file (0: none)",
                                 None, low=0, example=str(GameConfig.disk_mb))


TABLES: dict[str, type] = {"class": ClassTable, "ladder": LadderTable, "admission": AdmissionTable,
                           "final": FinalTable, "referee": RefereeTable}


@dataclass(frozen=True)
class Reference:
    """A reference agent: a built-in agent, maybe with its own time per move; ``name`` is its label."""

    name: str
    builtin: str
    time_per_move: Optional[float] = None

    @classmethod
    def parse(cls, text: str) -> "Reference":
        builtin, _, seconds = text.partition("@")
        if builtin not in builtin_names():
            raise SettingsError(f"reference {text!r}: no built-in agent {builtin!r} (known: {', '.join(builtin_names())})")
        if not seconds:
            return cls(builtin, builtin)
        try:
            time = float(seconds)
        except ValueError:
            raise SettingsError(f"reference {text!r}: {seconds!r} is not a number of seconds") from None
        if not 0 < time <= MAX_REFERENCE_SECONDS:
            raise SettingsError(f"reference {text!r}: seconds per move must be in (0, {MAX_REFERENCE_SECONDS:g}]")
        return cls(f"{builtin}-{time:g}s", builtin, time)


@dataclass(frozen=True)
class ClassSettings:
    """class.toml, checked: its tables as declared, and what their keys make together.

    ``time`` is the class's time rule (every check and ladder game, and the
    final); ``referee`` the ``[referee]`` keys class.toml gives (the final's
    file repeats them); ``game`` the referee's settings of every class game,
    the time rule and those limits.
    """

    folder: Path
    name: str
    time: TimeRule
    references: tuple[Reference, ...]
    deadline: Optional[dt.datetime] = None
    ladder: LadderTable = LadderTable()
    admission: AdmissionTable = AdmissionTable()
    final: FinalTable = FinalTable()
    referee: dict[str, Any] = field(default_factory=dict)  # GameConfig's fields, as a tournament file's [referee]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def database(self) -> Path:
        return self.folder / DATABASE_FILE

    @property
    def game(self) -> GameConfig:
        """The referee's settings of every class game: the time rule and the ``[referee]`` limits."""
        return GameConfig(time_per_move=self.time.per_move, clock=self.time.clock, **self.referee)

    @property
    def check_seconds(self) -> float:
        """Seconds per move in the admission checks: the cap, or under a clock without one a fair share of the bank."""
        return self.time.move_seconds

    def reference(self, name: str) -> Optional[Reference]:
        return next((ref for ref in self.references if ref.name == name), None)


def write_template(folder: Path, name: str, time_per_move: float) -> Path:
    """Write a fresh class.toml (init, once: an existing one is the instructor's and is kept)."""
    path = folder / SETTINGS_FILE
    given: dict[str, dict[str, Any]] = {"class": {"name": name, "time_per_move": time_per_move}}
    lines = ["# The class's settings (othello class init wrote this; the server reads it when it starts)."]
    for title, declaration in TABLES.items():
        lines += ([""] if len(lines) > 1 else []) + table_template(declaration, title, given.get(title))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def load(folder: Path) -> ClassSettings:
    """Read ``folder/class.toml``; raise :class:`SettingsError` naming the file, the key and what was wrong."""
    folder = Path(folder).resolve()
    path = folder / SETTINGS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"{folder} is not a class folder: no {SETTINGS_FILE} (make one: othello class init)") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    for title, value in data.items():
        if title not in TABLES or not isinstance(value, dict):
            raise SettingsError(f"{path}: unknown table [{title}] (known: {', '.join(f'[{t}]' for t in TABLES)})")
    try:
        return _settings(folder, path, data)
    except TournamentFileError as exc:  # the declared-table reader's: it names the file, the table and the key
        raise SettingsError(str(exc)) from None


def _settings(folder: Path, path: Path, data: dict[str, Any]) -> ClassSettings:
    """The settings of class.toml's ``data``: each table read as declared, then what ties keys together."""
    where = str(path)

    def table(declaration: type[T], title: str) -> T:
        return read_table(declaration, data.get(title, {}), where, f"[{title}]")

    given, ladder, final = table(ClassTable, "class"), table(LadderTable, "ladder"), table(FinalTable, "final")
    try:
        references = tuple(Reference.parse(text) for text in given.references)
        for reference in references:
            check_file_name(reference.name)
    except ValueError as exc:
        raise SettingsError(f"{path}: [class] references: {exc}") from None
    labels = [ref.name for ref in references]
    if len(set(labels)) != len(labels):
        raise SettingsError(f"{path}: [class] references names an agent twice")
    for name in final.references:
        if name not in labels:
            raise SettingsError(f"{path}: [final] references names {name!r}, not one of [class] references "
                                f"({', '.join(labels)})")
    if final.games_per_pairing is not None and final.games_per_pairing % 2:
        raise SettingsError(f"{path}: [final] games_per_pairing = {final.games_per_pairing}: expected an even "
                            "number (each opening played twice, the colours swapped)")
    if ladder.games_per_pairing % 2:
        raise SettingsError(f"{path}: [ladder] games_per_pairing = {ladder.games_per_pairing}: expected an even "
                            "number (game pairs, colours swapped)")
    try:
        # the rule of --clock and of a tournament file: under a clock time_per_move caps a move only where given
        time = time_rule(given.time_per_move, given.clock or None, FILE_SECONDS)
    except ValueError as exc:
        raise SettingsError(f"{path}: [class] clock: {exc}") from None
    table(RefereeTable, "referee")  # the keys a class may set, each checked
    return ClassSettings(
        folder=folder,
        name=given.name if given.name is not None else folder.name,
        time=time,
        references=references,
        deadline=_deadline(given.deadline, path),
        ladder=ladder,
        admission=table(AdmissionTable, "admission"),
        final=final,
        referee=parse_referee(data.get("referee", {}), where, time),  # then GameConfig's own checks, as in a tournament
    )


def _deadline(text: Optional[str], path: Path) -> Optional[dt.datetime]:
    """``[class] deadline`` as a time with its zone (the machine's, said explicitly, where the file gives none)."""
    if not text:
        return None
    try:
        deadline = dt.datetime.fromisoformat(text)
    except ValueError:
        raise SettingsError(f"{path}: [class] deadline = {text!r}: not an ISO 8601 time, e.g. "
                            '"2026-12-04T18:00:00+01:00"') from None
    return deadline if deadline.tzinfo is not None else deadline.astimezone()


SAFE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
