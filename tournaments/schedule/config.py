"""The tournament file: a TOML file naming the agents, the format and the clock.

Everything a tournament needs is in this one file, so ``run`` and ``resume``
read the same thing, and relative paths are relative to the file itself (the
demo runs from any current directory)::

    [tournament]
    name = "Class of 2026"
    format = "round-robin"       # double-round-robin, gauntlet, swiss
    games_per_pairing = 2        # both colours; must be even unless colours = "random"
    colours = "both"             # or "random": drawn from the seed, as in seed 003
    time_per_move = 2.0          # seconds
    # clock = "300+2"            # a game clock: a bank of 300 s, 2 s more a move (time_per_move then caps a move)
    concurrency = "auto"         # or a number of games at once (each on its own core; auto: cores - 1)
    seed = 1
    results = "results/class"    # directory (relative to this file) for the database and game files
    # database = "class.sqlite"  # default: RESULTS/tournament.sqlite (relative to this file)
    # rounds = 5                 # swiss only
    # gauntlet = ["ref1"]        # gauntlet only: these play everybody else
    # build_timeout = 120        # seconds per agent's build command
    # keep_files_mb = 1          # MB of each agent's own files left in its folder after a game (the largest removed first)
    # openings = "balanced"      # game pairs from an opening suite: "balanced" (shipped) or a file; colours = "both"

    [referee]                    # optional: more fields of the referee's GameConfig
    # illegal = "lose-turn"      # (time_per_move belongs in [tournament], never here)
    # size = 10                  # a bigger board of seed 002 (10, 12, 14): PROTOCOL.md section 9

    [[agents]]
    name = "greedy"              # a built-in agent: no command
    reference = true             # not a student: never ranked among them

    [[agents]]
    name = "alice"
    command = "python3 alice.py --name {name}"
    cwd = "students/alice"       # relative to this file (default: this file's directory)
    build = "make"               # optional, run once in cwd before the first game
    # time_per_move = 10         # optional: its own seconds per move (time odds)
    # id = "s1234"               # optional: the student's id in the roster, the export's first column
    # clock = "600+5"            # optional: its own game clock (clock odds)
    # reads_clock = true         # its program reads the clock line in NAME.in (PROTOCOL.md section 10)

An agent's ``cwd`` is its home: the relative paths of its command
(``alice.py``, ``./bob``) are found there and ``build`` runs there.  The
program itself runs, as every agent does, in its own directory inside the
game directory (PROTOCOL.md section 2).

``agents`` may also be a list of strings in the referee's agent syntax
(``"greedy"``, ``"alice=python3 alice.py"``), a roster file's path
(``agents = "roster.toml"``), or hold ``{ include = "roster.toml" }`` tables
beside other agents.  An agent whose program hard-codes its file names gets
``files = "player"``; ``withdraw = true`` (with ``withdraw_reason``) takes an
agent out of the standings, its games kept.  ``reference = true`` marks an
agent that is not a student (``greedy``, the instructor's own): it plays, and
is listed apart, never ranked among the students (a gauntlet's challengers
are references too); ``id = "s1234"`` is the student's id in the class roster
(the ``id,name`` columns of the class server's roster), which the export
carries as its first column.

With ``openings = "book.txt"`` (relative to the file) every pairing plays
game pairs: its games 1 and 2 play the first opening drawn, with the colours
swapped, games 3 and 4 the second, and so on; the openings are drawn from the
suite by the tournament seed without repeats, the same for every pairing
(PROTOCOL.md section 8).  Every program must then declare that it reads
openings (``openings = true`` in its table); built-in agents do.

With ``size = 10`` (12, 14) under ``[referee]`` every game is played on that
board (PROTOCOL.md section 9).  Every program must then declare that it
plays every size (``sizes = true`` in its table, ``sizes:NAME=COMMAND`` as a
string), and every built-in agent must play it (the champion does not).

The file is strict: every key has a type and a range, and a wrong one is an
error naming the file, the table, the key, the value and what is expected (a
string ``"false"`` is not a boolean).  Each table is declared once, as a
dataclass whose fields are its keys (:func:`key`: the type, the range or
choices, the default and a one-line doc): :class:`TournamentTable`,
:class:`AgentEntry` for an ``[[agents]]`` table and :class:`MatchTable`;
:func:`read_table` reads any of them, so a new key is one line; the class
server's ``class.toml`` declares its tables the same way and is read by the
same reader, and :func:`table_template` writes a commented template of a
declared table (each doc a comment).  What ties
keys together (an odd ``games_per_pairing`` with both colours, ``rounds``
only for swiss) is checked after, in :func:`parse`.  The keys of
``[referee]`` and their types come from the referee's ``GameConfig``
itself, so a field added there is checked here too.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import textwrap
import tomllib
import types as types_module
import typing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

import tomli_w

from ...referee.clock import FILE_SECONDS, TimeRule, parse_clock, time_rule
from ...referee.config import GameConfig
from ...referee.spec import check_file_name, split_name_command

FORMATS = ("round-robin", "double-round-robin", "gauntlet", "swiss")
COLOUR_MODES = ("both", "random")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")

# Includes may nest (a roster including a roster), but not endlessly.
MAX_INCLUDE_DEPTH = 8

# Bounds that keep a typo from running away (``games_per_pairing = 20000000``
# once made ``check`` build a schedule of 6 GB): far above any class's needs.
MAX_GAMES_PER_PAIRING = 20_000  # a match (othello match) is one pairing: its SPRT may need thousands
MAX_ROUNDS = 1000
MAX_GAMES = 100_000  # games in the whole tournament
MAX_CONCURRENCY = 1024
MAX_TIME_PER_MOVE = 3600.0
MAX_BUILD_TIMEOUT = 24 * 3600.0
DEFAULT_BUILD_TIMEOUT = 120.0  # a hanging build costs two minutes, not ten (the builds run at once)
DEFAULT_KEEP_FILES_MB = 1  # of an agent's own files left after a tournament game: enough for a log or a small cache
MAX_KEEP_FILES_MB = 1 << 20
MAX_TOURNAMENT_NAME = 200
MAX_STUDENT_ID = 100
MAX_SEED = 2**63 - 1  # SQLite's INTEGER

# Names an agent may not take: each agent's name becomes a directory beside
# these files in every game directory (and a log in RESULTS/build), so an
# agent named game.json could never play and one named x.stderr.log would
# collide with agent x's log.
RESERVED_NAMES = ("game.json", ".referee", "build")
RESERVED_SUFFIX = ".stderr.log"


class TournamentFileError(ValueError):
    """The tournament file is missing, unreadable or inconsistent; the message says where and why."""


@dataclass(frozen=True)
class Rule:
    """What a key of the file may hold besides its type (the field's annotation): a range or choices, and its doc.

    Every check of a single key comes from here, and so does its error, in
    one form: the file, the table, the key, the value and what is expected.
    """

    doc: str
    low: Optional[float] = None
    high: Optional[float] = None
    positive: bool = False  # more than 0 (a number of seconds)
    unit: str = ""  # "seconds": said in the error
    choices: tuple[str, ...] = ()  # the values a string may take (case, "_" and " " for "-" do not matter)
    aliases: tuple[tuple[str, str], ...] = ()  # other spellings of a choice: ("rr", "round-robin")
    max_length: Optional[int] = None
    auto: bool = False  # the string "auto" stands for None (the field's default)
    expected: str = ""  # what the value is, in words, where the type's own word is too vague
    example: str = ""  # a value as a file writes it, shown (commented out) in a template where the key has no default


def key(doc: str, default: Any = dataclasses.MISSING, **rule: Any) -> Any:
    """A field that is a key of the file: ``name: TYPE = key("one-line doc", default, low=..., high=...)``.

    Without a default the key is required.  See :class:`Rule` for the rest,
    :func:`read_table` for how a table is read from the declaration.
    """
    return field(default=default, metadata={"rule": Rule(doc=doc, **rule)})


_KIND_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}

T = TypeVar("T")
DeclaredKey = tuple[str, type, Rule, bool]  # name, kind (bool, int, float, str, tuple: of strings), rule, required


def read_table(declaration: type[T], table: dict[str, Any], where: str, title: str) -> T:
    """The ``table`` of the file at ``where`` read as ``declaration``, a dataclass whose keys are :func:`key` fields.

    Each key is checked against its field's type and :class:`Rule`; an
    absent key takes the field's default.  ``title`` names the table in the
    errors: ``[tournament]`` (``FILE: [tournament] seed = "x": expected an
    integer``) or ``agent #2 (bob)`` (``FILE: agent #2 (bob): sizes = 1: ...``).
    """
    declared = _declared_keys(typing.cast(type, declaration))
    unknown = sorted(set(table) - {name for name, *_ in declared})
    if unknown:
        listed = ", ".join(sorted(name for name, *_ in declared))
        where_in = f"unknown key(s) in {title}: " if title.startswith("[") else f"{title}: unknown key(s) "
        raise TournamentFileError(f"{where}: {where_in}{', '.join(unknown)}; known keys are {listed}")
    values: dict[str, Any] = {}
    for name, kind, rule, required in declared:
        if name in table:
            label = f"{where}: {title} {name}" if title.startswith("[") else f"{where}: {title}: {name}"
            values[name] = _read_key(table[name], kind, rule, label)
        elif required:
            raise TournamentFileError(f"{where}: {title} has no {name}")
    return declaration(**values)


@functools.cache
def _declared_keys(declaration: type) -> tuple[DeclaredKey, ...]:
    """The :func:`key` fields of ``declaration``: each one's name, kind, rule and whether it is required."""
    hints = typing.get_type_hints(declaration)
    declared: list[DeclaredKey] = []
    for item in dataclasses.fields(declaration):
        if "rule" in item.metadata:
            kind = _kind_of(hints[item.name])
            if kind is object:  # a mistake in the declaration, not in a file: fail at once, loudly
                raise TypeError(f"{declaration.__name__}.{item.name}: a key is a bool, int, float, str or "
                                f"tuple[str, ...] (optional or not), not {hints[item.name]}")
            required = item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
            declared.append((item.name, kind, item.metadata["rule"], required))
    return tuple(declared)


def _kind_of(hint: Any) -> type:
    """What a file gives for a field of type ``hint``: ``Optional[float]`` is a number (TOML has no null)."""
    arguments = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types_module.UnionType) and len(arguments) == 1:
        hint = arguments[0]
    if typing.get_origin(hint) is tuple and typing.get_args(hint) == (str, ...):
        return tuple
    return hint if hint in _KIND_WORDS else object


def _read_key(value: Any, kind: type, rule: Rule, label: str) -> Any:
    """``value`` checked against ``kind`` and ``rule`` (``label`` says where it is); a float for a number."""
    if rule.auto and value == "auto":
        return None
    if kind is tuple:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise TournamentFileError(f"{label} = {_toml(value)}: expected {rule.expected or 'a list of strings'}")
        return tuple(items)
    auto = "\"auto\" or " if rule.auto else ""
    if not _is_kind(value, kind):
        expected = rule.expected or (auto + _range_words(kind, rule) if auto else _KIND_WORDS[kind])
        raise TournamentFileError(f"{label} = {_toml(value)}: expected {expected}")
    if (rule.positive and not value > 0) or (rule.low is not None and value < rule.low) \
            or (rule.high is not None and value > rule.high):
        raise TournamentFileError(f"{label} = {_toml(value)}: expected {auto}{_range_words(kind, rule)}")
    if rule.choices:
        spelled = value.strip().lower().replace("_", "-").replace(" ", "-")
        spelled = dict(rule.aliases).get(spelled, spelled)
        if spelled not in rule.choices:
            raise TournamentFileError(f"{label} {value!r} is not one of {', '.join(rule.choices)}")
        return spelled
    if rule.max_length is not None and len(value) > rule.max_length:
        raise TournamentFileError(f"{label} is {len(value)} characters long; expected at most {rule.max_length}")
    return float(value) if kind is float else value


def _is_kind(value: Any, kind: type) -> bool:
    """Whether ``value`` as TOML gave it is of ``kind`` (a boolean is no number, a string "false" no boolean)."""
    if kind is bool:
        return isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _range_words(kind: type, rule: Rule) -> str:
    """What ``rule`` allows, in words: ``an integer from 1 to 1024``, ``a positive number of seconds, at most 3600``."""
    words = "a positive number" if rule.positive else _KIND_WORDS[kind]
    if rule.unit:
        words += f" of {rule.unit}"
    if rule.positive and rule.high is not None:
        return f"{words}, at most {_number(rule.high)}"
    if rule.low is not None and rule.high is not None:
        return f"{words} from {_number(rule.low)} to {_number(rule.high)}"
    if rule.low is not None:
        return f"{words} at least {_number(rule.low)}"
    if rule.high is not None:
        return f"{words} at most {_number(rule.high)}"
    return words


def _number(bound: float) -> str:
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


TEMPLATE_COMMENT_COLUMN = 36  # where a key's doc starts, after its value
TEMPLATE_WIDTH = 116  # the longest line of a template, its doc wrapped


def table_template(declaration: type, title: str, values: Optional[dict[str, Any]] = None) -> list[str]:
    """The lines of a commented template of the table ``[title]`` declared by ``declaration`` (the reader's own).

    Each key is written ``name = value`` with its doc as a comment: its
    value in ``values``, else its default; a key without either is written
    commented out with its :attr:`Rule.example` (left out without one).
    :func:`read_table` reads the lines back as the values they show.
    """
    values = values or {}
    lines = [f"[{title}]"]
    for name, _kind, rule, _required in _declared_keys(declaration):
        default = next(item.default for item in dataclasses.fields(declaration) if item.name == name)
        value = values.get(name, default)
        if value is None and rule.auto:
            assignment = f'{name} = "auto"'
        elif value is None or value is dataclasses.MISSING:
            if not rule.example:
                continue
            assignment = f"# {name} = {rule.example}"
        else:
            assignment = f"{name} = {_template_value(value)}"
        lines += _commented(assignment, rule.doc)
    return lines


def _template_value(value: Any) -> str:
    """A value as a template writes it: ``4_000_000`` for a big whole number, else as :func:`_toml` writes it."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10_000:
        return f"{value:_}"
    if isinstance(value, tuple):
        return _toml(list(value))
    return _toml(value)


def _commented(assignment: str, doc: str) -> list[str]:
    """``assignment`` with ``doc`` beside it from :data:`TEMPLATE_COMMENT_COLUMN`, or above it when it is too long."""
    if len(assignment) >= TEMPLATE_COMMENT_COLUMN - 1:
        return [f"# {line}" for line in textwrap.wrap(doc, TEMPLATE_WIDTH - 2)] + [assignment]
    wrapped = textwrap.wrap(doc, TEMPLATE_WIDTH - TEMPLATE_COMMENT_COLUMN - 2) or [""]
    lines = [f"{assignment:<{TEMPLATE_COMMENT_COLUMN - 1}} # {wrapped[0]}"]
    return lines + [f"{'#':<{TEMPLATE_COMMENT_COLUMN - 1}} # {line}" for line in wrapped[1:]]


def _toml(value: Any) -> str:
    """A value as it was written in the file (``"false"`` with its quotes, ``false`` without)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # a TOML writer's quoting: JSON's would escape an emoji as surrogates TOML refuses
        return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return repr(value)


@dataclass(frozen=True)
class AgentEntry:
    """One participant as the tournament file names it: the keys of an ``[[agents]]`` table, declared once.

    ``command is None`` means a built-in agent (``builtin`` names which one,
    by default ``name`` itself).  ``cwd`` is absolute once the file is loaded.
    """

    name: str = key("its name, in the records and the standings: letters, digits and _ . + -")
    command: Optional[str] = key("how its program starts ({name}, {time}, {home}); none: a built-in agent", None)
    cwd: Optional[str] = key("its home, relative to the file: its command's paths and its build start there", None)
    build: Optional[str] = key("a command run once in cwd before its first game", None)
    builtin: Optional[str] = key("the built-in agent it is (default: its name), for a built-in under another name",
                                 None)
    # (the agent keeps its own name everywhere else: records, standings, report)
    files: Optional[str] = key("the NAME of NAME.in / NAME.out when its program hard-codes it", None)
    withdraw: bool = key("out of the standings, its games kept", False)
    withdraw_reason: str = key("why it is withdrawn (with withdraw = true)", "")
    openings: bool = key("its program reads openings (PROTOCOL.md section 8); built-in agents all do", False)
    sizes: bool = key("its program plays every board size (PROTOCOL.md section 9); built-in agents: the registry",
                      False)
    time_per_move: Optional[float] = key("its own seconds per move (time odds); default: the tournament's", None,
                                         positive=True, unit="seconds", high=MAX_TIME_PER_MOVE)
    reference: bool = key("a reference agent, not a student: in the standings apart, never ranked among them",
                          False)
    id: str = key("the student's id in the class roster (its id,name columns): the export's first column", "",
                  max_length=MAX_STUDENT_ID)
    clock: Optional[str] = key("its own game clock \"BASE+INC\" (clock odds); default: the tournament's", None,
                               expected='a string "BASE+INC" in seconds, e.g. "300+2"')
    reads_clock: bool = key("its program reads the clock line of NAME.in (PROTOCOL.md section 10); built-in agents all do",
                            False)

    @property
    def is_builtin(self) -> bool:
        return self.command is None

    @property
    def file_name(self) -> str:
        """The NAME of the agent's ``NAME.in`` / ``NAME.out``."""
        return self.files or self.name

    def describe(self) -> str:
        """How the agent is started, for people: ``built-in greedy`` or the command."""
        if self.is_builtin:
            return f"built-in {self.builtin or self.name}"
        return self.command or ""


@dataclass(frozen=True)
class TournamentTable:
    """The keys of the ``[tournament]`` table, declared once (a new key: one line here, then its use in :func:`parse`)."""

    name: Optional[str] = key("the tournament's name (default: the file's name)", None,
                              max_length=MAX_TOURNAMENT_NAME)
    format: str = key("how the agents are paired", "round-robin", choices=FORMATS,
                      aliases=(("rr", "round-robin"), ("roundrobin", "round-robin")))
    games_per_pairing: int = key("games of each pairing (even when colours = \"both\")", 2,
                                 low=1, high=MAX_GAMES_PER_PAIRING)
    colours: str = key("\"both\": each pairing plays both colours; \"random\": drawn from the seed", "both",
                       choices=COLOUR_MODES)
    time_per_move: Optional[float] = key(f"seconds per move (default {FILE_SECONDS:g}; under a clock: no cap, the bank "
                                         "rules)", None, positive=True, unit="seconds", high=MAX_TIME_PER_MOVE)
    concurrency: Optional[int] = key("games at once, each pinned to its own core(s); \"auto\": the usable cores less one "
                                     "(at least 1), the spare one for the referees", None,
                                     auto=True, low=1, high=MAX_CONCURRENCY)
    seed: int = key("the seed of the schedule, the colours and the games", 0, low=-MAX_SEED, high=MAX_SEED)
    results: Optional[str] = key("directory of the database and the game files (default: results/FILE)", None)
    database: Optional[str] = key("the database (default: RESULTS/tournament.sqlite)", None)
    rounds: Optional[int] = key("swiss only: its rounds (default: enough to separate the field)", None,
                                low=1, high=MAX_ROUNDS)
    gauntlet: Optional[tuple[str, ...]] = key("gauntlet only: the agents that play everybody else", None,
                                              expected="a list of agent names")
    build_timeout: float = key("seconds per agent's build command", DEFAULT_BUILD_TIMEOUT,
                               positive=True, unit="seconds", high=MAX_BUILD_TIMEOUT)
    openings: Optional[str] = key("game pairs from an opening suite: \"balanced\" (shipped) or a file", None)
    keep_files_mb: Optional[int] = key(
        f"MB of each agent's own files left in its folder after each game, the largest removed first "
        f"(default {DEFAULT_KEEP_FILES_MB}; a match of othello match keeps all, within the disk limit)", None,
        low=0, high=MAX_KEEP_FILES_MB, unit="MB")
    clock: Optional[str] = key("a game clock \"BASE+INC\" in seconds for every program, e.g. \"300+2\" "
                               "(PROTOCOL.md section 10); time_per_move, if given, then caps a move", None,
                               expected='a string "BASE+INC" in seconds, e.g. "300+2"')


@dataclass(frozen=True)
class MatchTable:
    """The keys of the ``[match]`` table of a file that ``othello match`` wrote."""

    sprt: str = key("the SPRT the match plays until it decides (games_per_pairing: the cap); \"\": a fixed length",
                    "", expected='a string such as "elo0=0 elo1=10"')


TOURNAMENT_KEYS = frozenset(item.name for item in dataclasses.fields(TournamentTable))
# Keys of the file itself, not of a table: written below a [table] line, TOML puts them in that table.
TOP_KEYS = ("agents",)


@dataclass(frozen=True)
class Tournament:
    """A loaded, validated tournament file."""

    path: Path
    name: str
    format: str
    agents: tuple[AgentEntry, ...]
    games_per_pairing: int = TournamentTable.games_per_pairing
    colours: str = TournamentTable.colours
    time: TimeRule = TimeRule(FILE_SECONDS)  # seconds per move, the game clock, a cap on a move under it
    concurrency: Optional[int] = None  # None: automatic (see runner.default_concurrency)
    seed: int = TournamentTable.seed
    results_dir: Path = Path("results")
    database: Path = Path("results/tournament.sqlite")
    rounds: Optional[int] = None
    gauntlet: tuple[str, ...] = ()
    referee: dict[str, Any] = field(default_factory=dict)
    build_timeout: float = TournamentTable.build_timeout
    openings: Optional[Path] = None  # the opening suite: game pairs from its openings
    openings_sha256: str = ""  # of the suite's text: resume refuses a changed suite
    # A head-to-head written by ``othello match`` ([match] table): its SPRT, if it plays until one decides
    # (then games_per_pairing is the cap).  ``None`` for a tournament; ``""`` for a match of fixed length.
    match_sprt: Optional[str] = None
    keep_files_mb: Optional[int] = DEFAULT_KEEP_FILES_MB  # None: all of them, within the disk limit (a match)

    @property
    def time_per_move(self) -> Optional[float]:
        """Seconds per move; ``None``: no cap, under a clock."""
        return self.time.per_move

    @property
    def clock(self) -> Optional[str]:
        """The game clock, ``"300+2"``; ``None``: time_per_move alone."""
        return self.time.clock_text or None

    @property
    def agent_times(self) -> tuple[tuple[str, float], ...]:
        """Time odds: the agents with their own seconds per move."""
        return tuple((agent.name, agent.time_per_move) for agent in self.agents if agent.time_per_move)

    @property
    def agent_clocks(self) -> tuple[tuple[str, tuple[float, float]], ...]:
        """Clock odds: the agents with their own game clock (checked when loaded)."""
        return tuple((agent.name, parse_clock(agent.clock)) for agent in self.agents if agent.clock)

    @property
    def time_text(self) -> str:
        """``1 s per move``, ``clock 300+2``, ``clock 300+2, 10 s per move at most``, with any agent's own (odds)."""
        return self.time.text_with_odds(self.agent_times, self.agent_clocks)

    @property
    def is_match(self) -> bool:
        """Whether the file is a match of ``othello match`` (run and resumed by that command)."""
        return self.match_sprt is not None

    @property
    def agent_names(self) -> list[str]:
        return [agent.name for agent in self.agents]

    @property
    def references(self) -> tuple[str, ...]:
        """The reference agents, never ranked among the students: ``reference = true``, and a gauntlet's challengers."""
        return tuple(agent.name for agent in self.agents if agent.reference or agent.name in self.gauntlet)

    @property
    def withdrawn(self) -> dict[str, str]:
        """Agents the file withdraws (``withdraw = true``), with the reason it gives."""
        return {agent.name: agent.withdraw_reason or "withdrawn in the tournament file"
                for agent in self.agents if agent.withdraw}

    def agent(self, name: str) -> AgentEntry:
        for agent in self.agents:
            if agent.name == name:
                return agent
        raise KeyError(name)

    def schedule_basis(self) -> str:
        """A fingerprint of the rules of the schedule, the agents apart.

        ``resume`` refuses a file whose format, games per pairing, colours,
        seed, rounds or gauntlet changed since ``run``: that would silently
        mix two different tournaments in one database.  The agents may change
        (a late student joins, one is withdrawn): each game's seed and colours
        come from the names of its two agents (:mod:`.pairing`), so the games
        of everyone else do not move.  The clock and the commands may change
        too (a fixed agent, a longer time).
        """
        return self.legacy_schedule_key(agents=None)

    def legacy_schedule_key(self, agents: Optional[list[str]]) -> str:
        """The fingerprint schema 2 databases kept (it included the ``agents``), or the basis (``agents=None``)."""
        data: dict[str, Any] = {
            "format": self.format,
            "games_per_pairing": self.games_per_pairing,
            "colours": self.colours,
            "seed": self.seed,
            "rounds": self.rounds,
            "gauntlet": list(self.gauntlet),
        }
        if self.openings is not None:  # (absent without: the fingerprints of older files stay the same)
            data["openings"] = self.openings_sha256
        if agents is not None:
            data["agents"] = agents
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The settings as plain data (stored in the database and the report)."""
        return {
            "path": str(self.path),
            "name": self.name,
            "format": self.format,
            "agents": [asdict(agent) for agent in self.agents],
            "games_per_pairing": self.games_per_pairing,
            "colours": self.colours,
            "time_per_move": self.time_per_move,
            "concurrency": self.concurrency,
            "seed": self.seed,
            "rounds": self.rounds,
            "gauntlet": list(self.gauntlet),
            "referee": dict(self.referee),
            "build_timeout": self.build_timeout,
            "keep_files_mb": self.keep_files_mb,
            "openings": str(self.openings) if self.openings is not None else None,
            **({"clock": self.clock} if self.clock is not None else {}),
            **({"match": {"sprt": self.match_sprt}} if self.match_sprt is not None else {}),
        }


def load(path: str | os.PathLike[str], results_base: Optional[Path] = None) -> Tournament:
    """Read and validate a tournament file; raise :class:`TournamentFileError` on any problem.

    ``results_base`` overrides where the results go (the demo shipped in the
    package puts them under the current directory).
    """
    file = Path(path).expanduser().resolve()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TournamentFileError(f"{path}: no such tournament file") from None
    except OSError as exc:
        raise TournamentFileError(f"{path}: cannot read: {exc.strerror}") from None
    return parse(text, file, results_base)


def parse(text: str, path: Path, results_base: Optional[Path] = None) -> Tournament:
    """Validate the TOML ``text`` of the tournament file at ``path``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TournamentFileError(f"{path}: not valid TOML: {exc}") from None
    where = str(path)
    base = path.parent
    table = _tournament_table(data, where)
    homes: dict[str, _Home] = {}
    agents = _parse_agents(data.get("agents"), where, base, homes=homes)
    if data.get("match") is None:  # a match's file says where othello match ran (see check_homes)
        check_homes(agents, homes, where)
    names = [agent.name for agent in agents]
    _check_games_per_pairing(table, where)
    rounds = _rounds(table, names, where)
    gauntlet = _gauntlet(table, names, where)
    total = _count_games(table.format, len(names), len(gauntlet), table.games_per_pairing, rounds)
    if total > MAX_GAMES:
        raise TournamentFileError(
            f"{where}: this file schedules {total} games, more than the {MAX_GAMES} a tournament may have; "
            "lower games_per_pairing or rounds, or split the agents into groups"
        )
    results_dir, database = _results(table, path, results_base)
    try:
        time = time_rule(table.time_per_move, table.clock, FILE_SECONDS)
    except ValueError as exc:
        raise TournamentFileError(f"{where}: [tournament] clock: {exc}") from None
    for agent in agents:
        _parse_clock(agent.clock, f"{where}: agent {agent.name}: clock")
    referee = parse_referee(data.get("referee", {}), where, time)
    _check_program_sizes(agents, referee, where)
    openings, openings_sha256 = _parse_openings(table, where, base, agents)
    match_sprt = _parse_match(data.get("match"), where, agents)
    return Tournament(
        path=path,
        name=table.name if table.name is not None else path.stem,
        format=table.format,
        agents=tuple(agents),
        games_per_pairing=table.games_per_pairing,
        colours=table.colours,
        time=time,
        concurrency=table.concurrency,
        seed=table.seed,
        results_dir=results_dir,
        database=database,
        rounds=rounds,
        gauntlet=gauntlet,
        referee=referee,
        build_timeout=table.build_timeout,
        openings=openings,
        openings_sha256=openings_sha256,
        match_sprt=match_sprt,
        # A tournament keeps little of each game's files (sixty games of scratch files add up); a match of
        # othello match, a student's own look at two programs, keeps them all within the disk limit.
        keep_files_mb=table.keep_files_mb if table.keep_files_mb is not None
        else None if match_sprt is not None else DEFAULT_KEEP_FILES_MB,
    )


def _tournament_table(data: dict[str, Any], where: str) -> TournamentTable:
    """The ``[tournament]`` table, once the file's sections are known ones and no key of the file sits in a table."""
    unknown_top = set(data) - {"tournament", "agents", "referee", "match"}
    if unknown_top:
        raise TournamentFileError(
            f"{where}: unknown section(s) {', '.join(sorted(unknown_top))}; expected [tournament], [[agents]], "
            "[referee] (and [match] in a file written by othello match)"
        )
    for name in ("tournament", "referee", "match"):
        table = data.get(name)
        misplaced = [top for top in TOP_KEYS if isinstance(table, dict) and top in table]
        if misplaced:
            # TOML reads every key below a [table] line as that table's: the commonest slip in a hand-written file.
            raise TournamentFileError(
                f"{where}: unknown key(s) in [{name}]: {', '.join(misplaced)}; {misplaced[0]} = ... is written below "
                f"the [{name}] line, so TOML reads it as a key of [{name}]: move it above [{name}] (to the top of "
                "the file), or write the agents as [[agents]] tables"
            )
    section = data.get("tournament", {})
    if not isinstance(section, dict):
        raise TournamentFileError(f"{where}: 'tournament' must be a table ([tournament])")
    return read_table(TournamentTable, section, where, "[tournament]")


def _check_games_per_pairing(table: TournamentTable, where: str) -> None:
    """Refuse an odd ``games_per_pairing`` when every pairing plays both colours."""
    if table.colours == "both" and table.games_per_pairing % 2:
        raise TournamentFileError(
            f"{where}: [tournament] games_per_pairing = {table.games_per_pairing} is odd, but every pairing plays "
            "both colours; use an even number, or colours = \"random\" to draw the colours as in seed 003"
        )


def _rounds(table: TournamentTable, names: list[str], where: str) -> Optional[int]:
    """Swiss rounds: as given, else enough to separate the field; ``None`` for the other formats."""
    if table.rounds is not None and table.format != "swiss":
        raise TournamentFileError(f"{where}: [tournament] rounds only applies to format = \"swiss\"")
    if table.format == "swiss" and table.rounds is None:
        # Enough rounds to separate the field (log2 of the players), at least 3.
        return max(3, math.ceil(math.log2(max(2, len(names)))))
    return table.rounds


def _gauntlet(table: TournamentTable, names: list[str], where: str) -> tuple[str, ...]:
    """The agents that play everybody else (format gauntlet); ``()`` for the other formats."""
    if table.format != "gauntlet":
        if table.gauntlet is not None:
            raise TournamentFileError(f"{where}: [tournament] gauntlet only applies to format = \"gauntlet\"")
        return ()
    if not table.gauntlet:
        raise TournamentFileError(
            f"{where}: format = \"gauntlet\" needs gauntlet = [\"NAME\", ...]: the agents that play everybody else"
        )
    missing = [name for name in table.gauntlet if name not in names]
    if missing:
        raise TournamentFileError(
            f"{where}: [tournament] gauntlet names {', '.join(missing)}, not among the agents ({', '.join(names)})"
        )
    gauntlet = tuple(dict.fromkeys(table.gauntlet))
    if len(gauntlet) == len(names):
        raise TournamentFileError(f"{where}: [tournament] gauntlet lists every agent; nobody is left to play them")
    return gauntlet


def _results(table: TournamentTable, path: Path, results_base: Optional[Path]) -> tuple[Path, Path]:
    """The results directory and the database (``results_base`` overrides both: ``othello match --out``)."""
    base = path.parent
    results = table.results if table.results is not None else f"results/{path.stem}"
    results_dir = (base / results).resolve() if results_base is None else results_base.resolve()
    if not table.database or results_base is not None:
        database = results_dir / "tournament.sqlite"
    else:
        database = (base / table.database).resolve()
    return results_dir, database


def _parse_match(table: Any, where: str, agents: list[AgentEntry]) -> Optional[str]:
    """The ``[match]`` table of a file ``othello match`` wrote: ``sprt = "elo0=0 elo1=10 ..."`` or nothing."""
    from ..stats import SPRT

    if table is None:
        return None
    if not isinstance(table, dict):
        raise TournamentFileError(f"{where}: 'match' must be a table ([match])")
    sprt = read_table(MatchTable, table, where, "[match]").sprt
    if len(agents) != 2:
        raise TournamentFileError(f"{where}: a match ([match]) is between two agents, not {len(agents)}")
    if sprt:
        try:
            SPRT.parse(sprt)
        except ValueError as exc:
            raise TournamentFileError(f"{where}: [match] sprt: {exc}") from None
    return sprt


def _parse_openings(table: TournamentTable, where: str, base: Path,
                    agents: list[AgentEntry]) -> tuple[Optional[Path], str]:
    """The opening suite of ``openings = "FILE"``, checked, with the hash of its text; ``(None, "")`` without."""
    if table.openings is None:
        return None, ""
    value = table.openings
    if not value.strip():
        raise TournamentFileError(f"{where}: [tournament] openings must name an opening file, e.g. \"book.txt\"")
    from ...protocol.openings import suite_path

    path = suite_path(value, base).resolve()
    if not path.is_file():
        raise TournamentFileError(f"{where}: [tournament] openings {value!r}: no such file (looked for {path})")
    if table.colours != "both":
        raise TournamentFileError(
            f"{where}: [tournament] openings play each opening twice with the colours swapped: "
            "they need colours = \"both\""
        )
    from ...protocol import IllegalMoveError, ParseError
    from ...protocol.openings import parse_openings

    text = path.read_text(encoding="utf-8-sig")
    try:
        suite = parse_openings(text, str(path))
    except (ParseError, IllegalMoveError) as exc:
        raise TournamentFileError(f"{where}: [tournament] openings: {exc}") from None
    if not suite:
        raise TournamentFileError(f"{where}: [tournament] openings: {path} holds no opening")
    unaware = [agent.name for agent in agents if not agent.is_builtin and not agent.openings]
    if unaware:
        raise TournamentFileError(
            f"{where}: [tournament] openings: {', '.join(unaware)} "
            f"{'does' if len(unaware) == 1 else 'do'} not declare that {'it reads' if len(unaware) == 1 else 'they read'} "
            "openings, so they cannot play from one (give openings = true in the agent's table once its program "
            "reads the moves after its colour, PROTOCOL.md section 8; or remove openings)"
        )
    return path, hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _count_games(fmt: str, players: int, challengers: int, per_pairing: int, rounds: Optional[int]) -> int:
    """How many games the schedule will have, by arithmetic (never by building it)."""
    if fmt == "round-robin":
        pairings = players * (players - 1) // 2
    elif fmt == "double-round-robin":
        pairings = players * (players - 1)
    elif fmt == "gauntlet":
        pairings = challengers * (players - challengers)
    else:
        pairings = players // 2 * int(rounds or 0)
    return pairings * per_pairing


def referee_types() -> dict[str, type]:
    """Each field of the referee's ``GameConfig`` and the type a file must give it.

    Derived from the dataclass itself (``Optional[float]`` is a number: TOML
    has no null), so a field the referee adds is validated here at once.
    """
    hints = typing.get_type_hints(GameConfig)
    types: dict[str, type] = {}
    for item in dataclasses.fields(GameConfig):
        kind = _kind_of(hints[item.name])
        types[item.name] = kind if kind in _KIND_WORDS else object
    return types


_ANY_VALUE = Rule(doc="")  # [referee]: the ranges are GameConfig's own checks


def _parse_clock(text: Optional[str], label: str) -> Optional[tuple[float, float]]:
    """A ``clock = "BASE+INC"`` key as ``(base, increment)``; a bad one is named with the form expected."""
    if text is None:
        return None
    try:
        return parse_clock(text)
    except ValueError as exc:
        raise TournamentFileError(f"{label}: {exc}") from None


def parse_referee(table: Any, where: str, time: TimeRule) -> dict[str, Any]:
    """Check the ``[referee]`` table key by key against ``GameConfig``; return it as plain data."""
    if not isinstance(table, dict):
        raise TournamentFileError(f"{where}: 'referee' must be a table ([referee])")
    types = referee_types()
    for key in table:
        if key in TOURNAMENT_KEYS:
            # Two places for one setting: one would silently win over the other.
            raise TournamentFileError(
                f"{where}: [referee] {key} = {_toml(table[key])}: {key} is a [tournament] key; "
                f"set it in [tournament] only"
            )
    unknown = set(table) - set(types)
    if unknown:
        raise TournamentFileError(
            f"{where}: unknown key(s) in [referee]: {', '.join(sorted(unknown))}; "
            f"known keys are {', '.join(sorted(set(types) - TOURNAMENT_KEYS))}"
        )
    for key, value in table.items():
        kind = types[key]
        if kind is object:
            raise TournamentFileError(f"{where}: [referee] {key} cannot be set from a tournament file")
    fields = {key: _read_key(value, types[key], _ANY_VALUE, f"{where}: [referee] {key}") for key, value in table.items()}
    try:
        GameConfig(time_per_move=time.per_move, clock=time.clock, **fields)
    except (TypeError, ValueError) as exc:
        raise TournamentFileError(f"{where}: [referee]: {exc}") from None
    return fields


@dataclass(frozen=True)
class _Home:
    """Where an agent was named: its table's label, its ``cwd`` as written (``None``: none), its roster's folder."""

    label: str
    written: Optional[str]
    roster: Path


def _parse_agents(value: Any, where: str, base: Path, depth: int = 0,
                  homes: Optional[dict[str, _Home]] = None) -> list[AgentEntry]:
    """The ``agents`` of a file: ``[[agents]]`` tables, strings, ``{include = "roster.toml"}``, or a roster's path.

    A roster written once serves every tournament of a class (round robin,
    Swiss, gauntlet): ``agents = "roster.toml"`` takes all of that file's
    agents, and a table ``{ include = "roster.toml" }`` in the list takes them
    in its place (beside reference agents of this file).  Paths in the roster
    are relative to the roster.
    """
    if value is None:
        raise TournamentFileError(f"{where}: no agents; add [[agents]] tables (name, command, cwd, build) "
                                  "or agents = \"roster.toml\"")
    if isinstance(value, str):
        value = [{"include": value}]
    if not isinstance(value, list):
        raise TournamentFileError(f"{where}: agents must be a list ([[agents]] tables or strings) or a roster file's path")
    agents: list[AgentEntry] = []
    for index, item in enumerate(value, 1):
        label = f"{where}: agent #{index}"
        if isinstance(item, str):
            agents.append(_agent_from_string(item, label, base))
        elif isinstance(item, dict) and "include" in item:
            agents.extend(_include(item, label, base, depth, homes))
            continue
        elif isinstance(item, dict):
            agents.append(_agent_from_table(item, where, index, base))
        else:
            raise TournamentFileError(f"{label} must be a table or a string, not {item!r}")
        if homes is not None:
            written = item.get("cwd") if isinstance(item, dict) else None
            homes.setdefault(agents[-1].name, _Home(f"{label} ({agents[-1].name})",
                                                    written if isinstance(written, str) else None, base))
    if depth:
        return agents
    seen: set[str] = set()
    for agent in agents:
        if agent.name in seen:
            raise TournamentFileError(f"{where}: two agents are named {agent.name!r}; names must be unique")
        seen.add(agent.name)
    ids: dict[str, str] = {}
    for agent in agents:
        if agent.id and agent.id in ids:
            raise TournamentFileError(f"{where}: agents {ids[agent.id]!r} and {agent.name!r} have the same id "
                                      f"{agent.id!r}; a student's id is theirs alone")
        ids.setdefault(agent.id, agent.name)
    if len(agents) < 2:
        raise TournamentFileError(f"{where}: a tournament needs at least two agents, found {len(agents)}")
    return agents


def _include(item: dict[str, Any], label: str, base: Path, depth: int,
             homes: Optional[dict[str, _Home]] = None) -> list[AgentEntry]:
    """The agents of the roster file ``item["include"]`` (its ``[[agents]]``; anything else in it is ignored)."""
    if set(item) != {"include"}:
        raise TournamentFileError(
            f"{label}: an include takes no other key (found {', '.join(sorted(set(item) - {'include'}))}); "
            "set those in the roster file"
        )
    target = item["include"]
    if not isinstance(target, str) or not target:
        raise TournamentFileError(f"{label}: include must be the path of a roster file, not {target!r}")
    if depth >= MAX_INCLUDE_DEPTH:
        raise TournamentFileError(f"{label}: include {target!r}: rosters include each other more than "
                                  f"{MAX_INCLUDE_DEPTH} deep (a loop?)")
    path = (base / target).resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TournamentFileError(f"{label}: include {target!r}: no such roster file (looked for {path})") from None
    except OSError as exc:
        raise TournamentFileError(f"{label}: include {target!r}: cannot read {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TournamentFileError(f"{path}: not valid TOML: {exc}") from None
    if "agents" not in data:
        raise TournamentFileError(f"{path} (included by {label}): no agents; a roster holds [[agents]] tables")
    return _parse_agents(data["agents"], str(path), path.parent, depth + 1, homes)


def check_agent_name(name: str, label: str) -> None:
    """Refuse a name no agent may take (the one check of ``check``, ``run`` and ``resume``)."""
    if not NAME_PATTERN.match(name):
        raise TournamentFileError(
            f"{label}: name {name!r} must start with a letter or digit and use only letters, digits and _ . + -"
        )
    try:
        check_file_name(name)  # the referee's own limit (its length), so `check` refuses what `run` would
    except ValueError as exc:
        raise TournamentFileError(f"{label}: {exc}") from None
    if name.lower() in RESERVED_NAMES or name.lower().endswith(RESERVED_SUFFIX):
        raise TournamentFileError(
            f"{label}: name {name!r} is reserved (the runner's files are named {', '.join(RESERVED_NAMES)} "
            f"and NAME{RESERVED_SUFFIX}); choose another name"
        )


def _check_program_sizes(agents: list[AgentEntry], referee: dict[str, Any], where: str) -> None:
    """Refuse a board size of ``[referee]`` that a program does not declare (built-in agents: :func:`check_builtins`)."""
    size = referee.get("size", 8)
    unaware = [agent.name for agent in agents if size != 8 and not agent.is_builtin and not agent.sizes]
    if unaware:
        raise TournamentFileError(
            f"{where}: [referee] size = {size}: {', '.join(unaware)} "
            f"{'does' if len(unaware) == 1 else 'do'} not declare that {'it plays' if len(unaware) == 1 else 'they play'} "
            "bigger boards (give sizes = true in the agent's table once its program reads the size line of its "
            "first NAME.in, PROTOCOL.md section 9; or remove size)"
        )


def _agent_from_string(text: str, label: str, base: Path) -> AgentEntry:
    sizes = text.lower().startswith("sizes:")
    if sizes:
        text = text[len("sizes:"):]
    name, command = split_name_command(text)
    check_agent_name(name, label)
    if command == "":
        raise TournamentFileError(f"{label}: {text!r} has an empty command after '='")
    if sizes and not command:
        raise TournamentFileError(f"{label}: the sizes: prefix is for a program, sizes:NAME=COMMAND")
    return AgentEntry(name=name, command=command, cwd=str(base) if command else None, sizes=sizes)


def _agent_from_table(table: dict[str, Any], where: str, index: int, base: Path) -> AgentEntry:
    """The agent of an ``[[agents]]`` table: its keys read as :class:`AgentEntry` declares them, then checked together."""
    name = table.get("name")
    title = f"agent #{index} ({name})" if isinstance(name, str) and name else f"agent #{index}"
    label = f"{where}: {title}"
    read = read_table(AgentEntry, table, where, title)
    if not read.name:
        raise TournamentFileError(f"{label} has no name")
    check_agent_name(read.name, label)
    command = read.command or None
    builtin = read.builtin or None
    if command and builtin:
        raise TournamentFileError(f"{label}: give a command or a builtin, not both")
    cwd_path: Optional[str] = None
    if read.cwd is not None:
        resolved = (base / read.cwd).resolve()
        if not resolved.is_dir():
            raise TournamentFileError(f"{label}: cwd {read.cwd!r} is not a directory (looked for {resolved})")
        cwd_path = str(resolved)
    elif command:
        cwd_path = str(base)
    build = read.build or None
    if build and not command:
        raise TournamentFileError(f"{label}: build is only for agents with a command")
    files = read.files or None
    if files is not None:
        try:
            check_file_name(files)
        except ValueError as exc:
            raise TournamentFileError(f"{label}: files {files!r}: {exc}") from None
    if read.withdraw_reason and not read.withdraw:
        raise TournamentFileError(f"{label}: withdraw_reason is given but not withdraw = true")
    return dataclasses.replace(read, command=command, builtin=builtin, cwd=cwd_path, build=build, files=files)


def check_homes(agents: list[AgentEntry], homes: dict[str, _Home], where: str) -> None:
    """Refuse a program that would see more than its own submission folder (the rule of ``check``, ``run``, ``resume``).

    A program's submission folder is its ``cwd``, a folder inside its
    roster's folder (the tournament file's, or the included roster's), links
    followed: never that folder itself, which holds the file, the
    instructor's notes beside it, every other agent's folder and other
    tournaments' results, and never outside it (``../bob``, an absolute
    path elsewhere, a link out).  Without ``cwd`` a program has no folder:
    its command may not use ``{home}`` and it has no build (both would be
    that whole folder, the build's writable).  No command may name a file
    that would bring the roster's folder into sight (``../notes.txt``).
    Two agents' folders are the same (versions of one program, the
    starters sharing their examples folder) or apart: one inside the other
    would let that agent read the other's files.
    """
    from ...referee.sandbox import program_paths
    from ...referee.spec import AgentSpec

    own: dict[str, Path] = {}  # agent -> its submission folder, for those with a cwd
    for agent in agents:
        home = homes.get(agent.name)
        if agent.command is None or home is None:
            continue
        roster, label = home.roster.resolve(), home.label
        fix = f"give it a folder of its own inside {roster} holding its files, e.g. cwd = {json.dumps(agent.name)}"
        if home.written is None:
            if "{home}" in agent.command:
                raise TournamentFileError(
                    f"{label}: its command uses {{home}} without a cwd, so {{home}} would be {roster}, the folder of "
                    f"this file, which holds every other agent's folder and any notes and results beside it: {fix}")
            if agent.build:
                raise TournamentFileError(
                    f"{label}: its build runs in its submission folder, read-write, and without a cwd that would be "
                    f"{roster}, the folder of this file and of every other agent: {fix}")
            folder = roster
        else:
            folder = Path(agent.cwd or roster).resolve()
            if folder == roster:
                raise TournamentFileError(
                    f"{label}: cwd {home.written!r} is the folder of this file ({roster}), which holds every other "
                    f"agent's folder and any notes and results beside it: {fix}")
            if roster not in folder.parents:
                raise TournamentFileError(
                    f"{label}: cwd {home.written!r} leads to {folder}, outside {roster} (the folder of this file; "
                    f"links and .. are followed): an agent's cwd is its own submission folder inside it, "
                    f"e.g. cwd = {json.dumps(agent.name)}")
            own[agent.name] = folder
        spec = AgentSpec.from_command(agent.name, agent.command, base=folder)
        argv = spec.argv(Path("/"), 1.0)
        for seen in program_paths(argv, folder, os.environ.get("PATH", "/usr/bin:/bin")):
            if seen == roster or seen in roster.parents:
                raise TournamentFileError(
                    f"{label}: its command {agent.command!r} names a file of {seen}, which it would then see whole, "
                    f"the folder of this file and of every other agent among it: {fix}, and name the files inside it")
    for name, folder in own.items():
        for other, outer in own.items():
            if outer in folder.parents:
                raise TournamentFileError(
                    f"{where}: agent {name!r}'s cwd {folder} lies inside agent {other!r}'s cwd {outer}: {other} "
                    f"would read {name}'s files; give each agent a folder of its own, side by side (two agents may "
                    "share one folder: versions of one program)")


def check_builtins(tournament: Tournament, known: list[str],
                   sizes_of: Optional[Callable[[str], tuple[int, ...]]] = None) -> None:
    """Raise if a built-in agent of ``tournament`` is not one of ``known``, or (``sizes_of``) does not play its board size."""
    size = tournament.referee.get("size", 8)
    for agent in tournament.agents:
        if agent.is_builtin:
            wanted = agent.builtin or agent.name
            if wanted not in known:
                raise TournamentFileError(
                    f"{tournament.path}: agent {agent.name!r} has no command and {wanted!r} is not a built-in agent; "
                    f"built-in agents are {', '.join(known)} (or give command = \"...\")"
                )
            if sizes_of is not None and size not in sizes_of(wanted):
                plays = ", ".join(f"{n}x{n}" for n in sizes_of(wanted))
                raise TournamentFileError(
                    f"{tournament.path}: [referee] size = {size}: the built-in agent {wanted!r} plays only on {plays}; "
                    "remove it or the size"
                )
