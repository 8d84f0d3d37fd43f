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
from typing import Any, Optional

from .arena import TimeControl, builtin_names, check_file_name, format_clock, parse_clock

SETTINGS_FILE = "class.toml"
DATABASE_FILE = "class.sqlite"
TOKENS_FILE = "tokens.csv"
INSTRUCTOR_TOKEN_FILE = "instructor.token"

# Weakest first: the ladder's rungs.  ``champion@S`` is the champion given S seconds a move (time odds):
# the rungs between paper-hard and the full champion, so a good student always has a next one.
DEFAULT_REFERENCES = ("random", "greedy", "paper-easy", "paper-normal", "paper-hard",
                      "champion@0.02", "champion@0.1", "champion@0.5", "champion")
FINAL_FORMATS = ("round-robin", "double-round-robin", "swiss")

TEMPLATE = """\
# The class's settings (othello class init wrote this; the server reads it when it starts).
[class]
name = {name}
time_per_move = {time}              # seconds per move, in the checks and every game
# clock = "300+2"                   # a game clock instead (PROTOCOL.md section 10): a bank of 300 s, 2 s more a
#                                   # move; time_per_move then caps a single move (delete it for the bank alone)
# deadline = "2026-12-04T18:00:00+01:00"   # ISO 8601: the final plays each student's last version admitted before it
# The reference agents, weakest first: the rungs a new version climbs.  A built-in agent by name, or
# NAME@SECONDS: that agent with its own seconds per move (the champion at small times).
references = [{references}]

[ladder]
games_per_pairing = 2               # a game pair: the same opening, colours swapped
openings = "balanced"               # the shipped suite of balanced openings, or "none" (programs that declare openings)
concurrency = "auto"                # games at once: all cores but one; or a number
pairs_per_opponent = 2              # game pairs between two students' current versions, then the ladder moves on
stop_climb_at = 0.0                 # a pair scoring at most this against a reference ends the climb

[admission]
build_timeout = 120                 # seconds for a version's build line
submissions_per_hour = 12           # per student
max_upload_bytes = 4_000_000        # a whole upload (the request body is refused beyond this)
max_files = 200
max_file_bytes = 2_000_000
max_depth = 8                       # folders inside a submission

[final]
format = "round-robin"              # or "double-round-robin", "swiss"
games_per_pairing = 2
references = []                     # reference agents that play in the final too (never ranked among students)
"""


class SettingsError(ValueError):
    """class.toml (or the class folder) is not usable: the message names the file, the key and what was wrong."""


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
        if not 0 < time <= 600:
            raise SettingsError(f"reference {text!r}: seconds per move must be in (0, 600]")
        return cls(f"{builtin}-{time:g}s", builtin, time)


@dataclass(frozen=True)
class ClassSettings:
    """class.toml, checked."""

    folder: Path
    name: str
    time_per_move: float  # under a clock: the cap on one move, else (no cap) what the checks give a move: a fair share
    references: tuple[Reference, ...]
    clock: Optional[tuple[float, float]] = None  # the game clock (base, increment) of every check and ladder game
    capped: bool = True  # under a clock: whether time_per_move caps a single move (class.toml gives it)
    deadline: Optional[dt.datetime] = None
    games_per_pairing: int = 2
    openings: str = "balanced"
    concurrency: Optional[int] = None  # None: all cores but one
    pairs_per_opponent: int = 2
    stop_climb_at: float = 0.0
    build_timeout: float = 120.0
    submissions_per_hour: int = 12
    max_upload_bytes: int = 4_000_000
    max_files: int = 200
    max_file_bytes: int = 2_000_000
    max_depth: int = 8
    final_format: str = "round-robin"
    final_games_per_pairing: int = 2
    final_references: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def database(self) -> Path:
        return self.folder / DATABASE_FILE

    def reference(self, name: str) -> Optional[Reference]:
        return next((ref for ref in self.references if ref.name == name), None)

    def game_time(self) -> dict[str, Any]:
        """The referee's time settings of every check and ladder game (GameConfig's ``time_per_move`` and ``clock``)."""
        if self.clock is None:
            return {"time_per_move": self.time_per_move}
        return {"time_per_move": self.time_per_move if self.capped else None, "clock": self.clock}

    @property
    def clock_text(self) -> Optional[str]:
        """The game clock as class.toml writes it, ``"300+2"``; ``None`` without one."""
        return None if self.clock is None else format_clock(*self.clock)

    @property
    def time_text(self) -> str:
        """The time rule as the pages say it: ``0.3 s a move``, ``clock 300+2``, ``clock 300+2, 10 s a move at most``."""
        if self.clock is None:
            return f"{self.time_per_move:g} s a move"
        return f"clock {self.clock_text}" + (f", {self.time_per_move:g} s a move at most" if self.capped else "")


def write_template(folder: Path, name: str, time_per_move: float) -> Path:
    """Write a fresh class.toml (init, once: an existing one is the instructor's and is kept)."""
    path = folder / SETTINGS_FILE
    references = ", ".join(f'"{ref}"' for ref in DEFAULT_REFERENCES)
    path.write_text(TEMPLATE.format(name=_toml_string(name), time=f"{time_per_move:g}", references=references),
                    encoding="utf-8")
    return path


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_KNOWN = {
    "class": {"name", "time_per_move", "clock", "deadline", "references"},
    "ladder": {"games_per_pairing", "openings", "concurrency", "pairs_per_opponent", "stop_climb_at"},
    "admission": {"build_timeout", "submissions_per_hour", "max_upload_bytes", "max_files", "max_file_bytes",
                  "max_depth"},
    "final": {"format", "games_per_pairing", "references"},
}


def load(folder: Path) -> ClassSettings:
    """Read ``folder/class.toml``; raise :class:`SettingsError` naming the key and what was wrong."""
    folder = Path(folder).resolve()
    path = folder / SETTINGS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"{folder} is not a class folder: no {SETTINGS_FILE} (make one: othello class init)") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    for table, value in data.items():
        if table not in _KNOWN or not isinstance(value, dict):
            raise SettingsError(f"{path}: unknown table [{table}] (known: {', '.join(f'[{t}]' for t in _KNOWN)})")
        unknown = set(value) - _KNOWN[table]
        if unknown:
            raise SettingsError(f"{path}: unknown key {table}.{sorted(unknown)[0]} (known: {', '.join(sorted(_KNOWN[table]))})")
    get = _Getter(path, data)
    references = tuple(Reference.parse(text) for text in get.strings("class", "references", list(DEFAULT_REFERENCES)))
    labels = [ref.name for ref in references]
    if len(set(labels)) != len(labels):
        raise SettingsError(f"{path}: class.references names an agent twice")
    for label in labels:
        check_file_name(label)
    deadline_text = get.text("class", "deadline", "")
    deadline = None
    if deadline_text:
        try:
            deadline = dt.datetime.fromisoformat(deadline_text)
        except ValueError:
            raise SettingsError(f"{path}: class.deadline {deadline_text!r} is not an ISO 8601 time") from None
        if deadline.tzinfo is None:
            deadline = deadline.astimezone()  # the machine's time zone, said explicitly from here on
    concurrency = data.get("ladder", {}).get("concurrency", "auto")
    if concurrency != "auto" and not (isinstance(concurrency, int) and concurrency >= 1):
        raise SettingsError(f"{path}: ladder.concurrency must be \"auto\" or a number of games >= 1")
    final_format = get.text("final", "format", "round-robin")
    if final_format not in FINAL_FORMATS:
        raise SettingsError(f"{path}: final.format {final_format!r}: one of {', '.join(FINAL_FORMATS)}")
    final_references = tuple(get.strings("final", "references", []))
    for name in final_references:
        if name not in labels:
            raise SettingsError(f"{path}: final.references names {name!r}, not one of class.references ({', '.join(labels)})")
    games = get.number("ladder", "games_per_pairing", 2, 2, 100, whole=True)
    if games % 2:
        raise SettingsError(f"{path}: ladder.games_per_pairing must be even (game pairs, colours swapped)")
    clock_text = get.text("class", "clock", "")
    try:
        clock = parse_clock(clock_text) if clock_text else None  # the rule of --clock and the tournament key
    except ValueError as exc:
        raise SettingsError(f"{path}: class.clock: {exc}") from None
    # Under a clock the bank rules: time_per_move caps a move only if class.toml gives it (as a tournament file).
    capped = clock is None or "time_per_move" in data.get("class", {})
    time_per_move = get.number("class", "time_per_move", 1.0, 0.01, 600)
    if not capped:
        assert clock is not None
        time_per_move = TimeControl(None, base=clock[0], increment=clock[1]).fair_share() or time_per_move
    return ClassSettings(
        folder=folder,
        name=get.text("class", "name", folder.name),
        time_per_move=time_per_move,
        references=references,
        clock=clock,
        capped=capped,
        deadline=deadline,
        games_per_pairing=int(games),
        openings=get.text("ladder", "openings", "balanced"),
        concurrency=None if concurrency == "auto" else int(concurrency),
        pairs_per_opponent=int(get.number("ladder", "pairs_per_opponent", 2, 1, 1000, whole=True)),
        stop_climb_at=get.number("ladder", "stop_climb_at", 0.0, 0, 100),
        build_timeout=get.number("admission", "build_timeout", 120, 1, 3600),
        submissions_per_hour=int(get.number("admission", "submissions_per_hour", 12, 1, 10_000, whole=True)),
        max_upload_bytes=int(get.number("admission", "max_upload_bytes", 4_000_000, 1, 1 << 30, whole=True)),
        max_files=int(get.number("admission", "max_files", 200, 1, 100_000, whole=True)),
        max_file_bytes=int(get.number("admission", "max_file_bytes", 2_000_000, 1, 1 << 30, whole=True)),
        max_depth=int(get.number("admission", "max_depth", 8, 1, 64, whole=True)),
        final_format=final_format,
        final_games_per_pairing=int(get.number("final", "games_per_pairing", 2, 1, 100, whole=True)),
        final_references=final_references,
    )


class _Getter:
    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path, self.data = path, data

    def _value(self, table: str, key: str, default: Any) -> Any:
        return self.data.get(table, {}).get(key, default)

    def text(self, table: str, key: str, default: str) -> str:
        value = self._value(table, key, default)
        if not isinstance(value, str):
            raise SettingsError(f"{self.path}: {table}.{key} must be a string, not {value!r}")
        return value

    def strings(self, table: str, key: str, default: list[str]) -> list[str]:
        value = self._value(table, key, default)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise SettingsError(f"{self.path}: {table}.{key} must be a list of strings")
        return value

    def number(self, table: str, key: str, default: float, low: float, high: float, whole: bool = False) -> float:
        value = self._value(table, key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not isinstance(value, int)):
            raise SettingsError(f"{self.path}: {table}.{key} must be {'a whole number' if whole else 'a number'}, not {value!r}")
        if not low <= value <= high:
            raise SettingsError(f"{self.path}: {table}.{key} = {value} is out of range [{low:g}, {high:g}]")
        return float(value)


SAFE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
