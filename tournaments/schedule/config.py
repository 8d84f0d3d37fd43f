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
    concurrency = "auto"         # or a number of games at once
    seed = 1
    results = "results/class"    # directory (relative to this file) for the database and game files
    # database = "class.sqlite"  # default: RESULTS/tournament.sqlite (relative to this file)
    # rounds = 5                 # swiss only
    # gauntlet = ["ref1"]        # gauntlet only: these play everybody else
    # build_timeout = 600        # seconds per agent's build command
    # openings = "balanced"      # game pairs from an opening suite: "balanced" (shipped) or a file; colours = "both"

    [referee]                    # optional: more fields of the referee's GameConfig
    # illegal = "lose-turn"      # (time_per_move belongs in [tournament], never here)
    # size = 10                  # a bigger board of seed 002 (10, 12, 14): PROTOCOL.md section 9

    [[agents]]
    name = "greedy"              # a built-in agent: no command

    [[agents]]
    name = "alice"
    command = "python3 alice.py --name {name}"
    cwd = "students/alice"       # relative to this file (default: this file's directory)
    build = "make"               # optional, run once in cwd before the first game
    # time_per_move = 10         # optional: its own seconds per move (time odds)

An agent's ``cwd`` is its home: the relative paths of its command
(``alice.py``, ``./bob``) are found there and ``build`` runs there.  The
program itself runs, as every agent does, in its own directory inside the
game directory (PROTOCOL.md section 2).

``agents`` may also be a list of strings in the referee's agent syntax
(``"greedy"``, ``"alice=python3 alice.py"``), a roster file's path
(``agents = "roster.toml"``), or hold ``{ include = "roster.toml" }`` tables
beside other agents.  An agent whose program hard-codes its file names gets
``files = "player"``; ``withdraw = true`` (with ``withdraw_reason``) takes an
agent out of the standings, its games kept.

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
error naming the key, the value and what is expected (a string ``"false"``
is not a boolean).  The keys of ``[referee]`` and their types come from the
referee's ``GameConfig`` itself, so a field added there is checked here too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import tomllib
import types as types_module
import typing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ...referee.config import GameConfig
from ...referee.spec import check_file_name, split_name_command

FORMATS = ("round-robin", "double-round-robin", "gauntlet", "swiss")
COLOUR_MODES = ("both", "random")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")

TOURNAMENT_KEYS = {
    "name", "format", "games_per_pairing", "colours", "time_per_move", "concurrency", "seed",
    "results", "database", "rounds", "gauntlet", "build_timeout", "openings",
}
AGENT_KEYS = {"name", "command", "cwd", "build", "builtin", "files", "withdraw", "withdraw_reason", "include",
              "openings", "sizes", "time_per_move"}
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
DEFAULT_BUILD_TIMEOUT = 600.0
MAX_TOURNAMENT_NAME = 200
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
class AgentEntry:
    """One participant as the tournament file names it.

    ``command is None`` means a built-in agent (``builtin`` names which one,
    by default ``name`` itself).  ``cwd`` is absolute once the file is loaded.
    """

    name: str
    command: Optional[str] = None
    cwd: Optional[str] = None
    build: Optional[str] = None
    builtin: Optional[str] = None
    # The NAME of NAME.in / NAME.out when the program hard-codes it (``player``):
    # the agent keeps its own name everywhere else (records, standings, report).
    files: Optional[str] = None
    withdraw: bool = False
    withdraw_reason: str = ""
    openings: bool = False  # its program reads openings (PROTOCOL.md section 8); built-in agents all do
    sizes: bool = False  # its program plays every board size (PROTOCOL.md section 9); built-in agents: the registry
    time_per_move: Optional[float] = None  # its own seconds per move (time odds); None: the tournament's

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
class Tournament:
    """A loaded, validated tournament file."""

    path: Path
    name: str
    format: str
    agents: tuple[AgentEntry, ...]
    games_per_pairing: int = 2
    colours: str = "both"
    time_per_move: float = 1.0
    concurrency: Optional[int] = None  # None: automatic (see runner.default_concurrency)
    seed: int = 0
    results_dir: Path = Path("results")
    database: Path = Path("results/tournament.sqlite")
    rounds: Optional[int] = None
    gauntlet: tuple[str, ...] = ()
    referee: dict[str, Any] = field(default_factory=dict)
    build_timeout: float = DEFAULT_BUILD_TIMEOUT
    openings: Optional[Path] = None  # the opening suite: game pairs from its openings
    openings_sha256: str = ""  # of the suite's text: resume refuses a changed suite
    # A head-to-head written by ``othello match`` ([match] table): its SPRT, if it plays until one decides
    # (then games_per_pairing is the cap).  ``None`` for a tournament; ``""`` for a match of fixed length.
    match_sprt: Optional[str] = None

    @property
    def is_match(self) -> bool:
        """Whether the file is a match of ``othello match`` (run and resumed by that command)."""
        return self.match_sprt is not None

    @property
    def agent_names(self) -> list[str]:
        return [agent.name for agent in self.agents]

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
            "openings": str(self.openings) if self.openings is not None else None,
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
    section = _tournament_section(data, where)
    agents = _parse_agents(data.get("agents"), where, base)
    names = [agent.name for agent in agents]
    fmt = _format(section, where)
    colours, games = _colours_and_games(section, where)
    time_per_move = _seconds(section, "time_per_move", 1.0, MAX_TIME_PER_MOVE, where)
    build_timeout = _seconds(section, "build_timeout", DEFAULT_BUILD_TIMEOUT, MAX_BUILD_TIMEOUT, where)
    rounds = _rounds(section, fmt, names, where)
    gauntlet = _gauntlet(section, fmt, names, where)
    total = _count_games(fmt, len(names), len(gauntlet), games, rounds)
    if total > MAX_GAMES:
        raise TournamentFileError(
            f"{where}: this file schedules {total} games, more than the {MAX_GAMES} a tournament may have; "
            "lower games_per_pairing or rounds, or split the agents into groups"
        )
    results_dir, database = _results(section, path, results_base, where)
    referee = parse_referee(data.get("referee", {}), where, time_per_move)
    _check_program_sizes(agents, referee, where)
    openings, openings_sha256 = _parse_openings(section, where, base, colours, agents)
    return Tournament(
        path=path,
        name=_name(section, path, where),
        format=fmt,
        agents=tuple(agents),
        games_per_pairing=games,
        colours=colours,
        time_per_move=time_per_move,
        concurrency=_concurrency(section, where),
        seed=_get(section, "seed", int, 0, where, low=-MAX_SEED, high=MAX_SEED),
        results_dir=results_dir,
        database=database,
        rounds=rounds,
        gauntlet=gauntlet,
        referee=referee,
        build_timeout=build_timeout,
        openings=openings,
        openings_sha256=openings_sha256,
        match_sprt=_parse_match(data.get("match"), where, agents),
    )


def _tournament_section(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The ``[tournament]`` table, once the file's sections and the table's keys are known ones."""
    unknown_top = set(data) - {"tournament", "agents", "referee", "match"}
    if unknown_top:
        raise TournamentFileError(
            f"{where}: unknown section(s) {', '.join(sorted(unknown_top))}; expected [tournament], [[agents]], "
            "[referee] (and [match] in a file written by othello match)"
        )
    section = data.get("tournament", {})
    if not isinstance(section, dict):
        raise TournamentFileError(f"{where}: 'tournament' must be a table ([tournament])")
    unknown = set(section) - TOURNAMENT_KEYS
    if unknown:
        raise TournamentFileError(
            f"{where}: unknown key(s) in [tournament]: {', '.join(sorted(unknown))}; "
            f"known keys are {', '.join(sorted(TOURNAMENT_KEYS))}"
        )
    return section


def _format(section: dict[str, Any], where: str) -> str:
    """``format``: one of :data:`FORMATS` (``rr`` and ``roundrobin`` read as round-robin)."""
    fmt: str = _get(section, "format", str, "round-robin", where)
    fmt = fmt.strip().lower().replace("_", "-").replace(" ", "-")
    if fmt in ("rr", "roundrobin"):
        fmt = "round-robin"
    if fmt not in FORMATS:
        raise TournamentFileError(f"{where}: [tournament] format {fmt!r} is not one of {', '.join(FORMATS)}")
    return fmt


def _colours_and_games(section: dict[str, Any], where: str) -> tuple[str, int]:
    """``colours`` and ``games_per_pairing`` (an even number when every pairing plays both colours)."""
    colours = _get(section, "colours", str, "both", where).strip().lower()
    if colours not in COLOUR_MODES:
        raise TournamentFileError(f"{where}: [tournament] colours {colours!r} must be \"both\" or \"random\"")

    games = _get(section, "games_per_pairing", int, 2, where, low=1, high=MAX_GAMES_PER_PAIRING)
    if colours == "both" and games % 2:
        raise TournamentFileError(
            f"{where}: [tournament] games_per_pairing = {games} is odd, but every pairing plays both colours; "
            "use an even number, or colours = \"random\" to draw the colours as in seed 003"
        )
    return colours, games


def _seconds(section: dict[str, Any], key: str, default: float, high: float, where: str) -> float:
    """A positive number of seconds, at most ``high``."""
    seconds = float(_get(section, key, float, default, where, high=high))
    if not seconds > 0:
        raise TournamentFileError(f"{where}: [tournament] {key} must be a positive number of seconds, not {seconds!r}")
    return seconds


def _concurrency(section: dict[str, Any], where: str) -> Optional[int]:
    """``concurrency``: ``None`` for "auto" (see :func:`.pools.default_concurrency`), else the games at once."""
    concurrency_value = section.get("concurrency", "auto")
    concurrency: Optional[int]
    if concurrency_value == "auto":
        concurrency = None
    elif (isinstance(concurrency_value, int) and not isinstance(concurrency_value, bool)
          and 1 <= concurrency_value <= MAX_CONCURRENCY):
        concurrency = concurrency_value
    else:
        raise TournamentFileError(
            f"{where}: [tournament] concurrency must be \"auto\" or an integer from 1 to {MAX_CONCURRENCY}, "
            f"not {concurrency_value!r}"
        )
    return concurrency


def _rounds(section: dict[str, Any], fmt: str, names: list[str], where: str) -> Optional[int]:
    """Swiss rounds: as given, else enough to separate the field; ``None`` for the other formats."""
    rounds: Optional[int] = None
    if "rounds" in section:
        if fmt != "swiss":
            raise TournamentFileError(f"{where}: [tournament] rounds only applies to format = \"swiss\"")
        rounds = _get(section, "rounds", int, 0, where, low=1, high=MAX_ROUNDS)
    elif fmt == "swiss":
        # Enough rounds to separate the field (log2 of the players), at least 3.
        rounds = max(3, math.ceil(math.log2(max(2, len(names)))))
    return rounds


def _gauntlet(section: dict[str, Any], fmt: str, names: list[str], where: str) -> tuple[str, ...]:
    """The agents that play everybody else (format gauntlet); ``()`` for the other formats."""
    gauntlet: tuple[str, ...] = ()
    if "gauntlet" in section:
        if fmt != "gauntlet":
            raise TournamentFileError(f"{where}: [tournament] gauntlet only applies to format = \"gauntlet\"")
        value = section["gauntlet"]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TournamentFileError(f"{where}: [tournament] gauntlet must be a list of agent names, not {value!r}")
        missing = [v for v in value if v not in names]
        if missing:
            raise TournamentFileError(
                f"{where}: [tournament] gauntlet names {', '.join(missing)}, not among the agents ({', '.join(names)})"
            )
        gauntlet = tuple(dict.fromkeys(value))
        if len(gauntlet) == len(names):
            raise TournamentFileError(f"{where}: [tournament] gauntlet lists every agent; nobody is left to play them")
    elif fmt == "gauntlet":
        raise TournamentFileError(
            f"{where}: format = \"gauntlet\" needs gauntlet = [\"NAME\", ...]: the agents that play everybody else"
        )
    return gauntlet


def _results(section: dict[str, Any], path: Path, results_base: Optional[Path], where: str) -> tuple[Path, Path]:
    """The results directory and the database (``results_base`` overrides both: ``othello match --out``)."""
    base = path.parent
    results = _get(section, "results", str, f"results/{path.stem}", where)
    results_dir = (base / results).resolve() if results_base is None else results_base.resolve()
    database_value = _get(section, "database", str, "", where)
    if not database_value or results_base is not None:
        database = results_dir / "tournament.sqlite"
    else:
        database = (base / database_value).resolve()
    return results_dir, database


def _name(section: dict[str, Any], path: Path, where: str) -> str:
    """The tournament's name (default: the file's stem)."""
    name: str = _get(section, "name", str, path.stem, where)
    if len(name) > MAX_TOURNAMENT_NAME:
        raise TournamentFileError(
            f"{where}: [tournament] name is {len(name)} characters long; expected at most {MAX_TOURNAMENT_NAME}"
        )
    return name


def _parse_match(table: Any, where: str, agents: list[AgentEntry]) -> Optional[str]:
    """The ``[match]`` table of a file ``othello match`` wrote: ``sprt = "elo0=0 elo1=10 ..."`` or nothing."""
    from ..stats import SPRT

    if table is None:
        return None
    if not isinstance(table, dict):
        raise TournamentFileError(f"{where}: 'match' must be a table ([match])")
    unknown = set(table) - {"sprt"}
    if unknown:
        raise TournamentFileError(f"{where}: unknown key(s) in [match]: {', '.join(sorted(unknown))}; "
                                  "the known key is sprt")
    if len(agents) != 2:
        raise TournamentFileError(f"{where}: a match ([match]) is between two agents, not {len(agents)}")
    sprt = table.get("sprt", "")
    if not isinstance(sprt, str):
        raise TournamentFileError(f"{where}: [match] sprt must be a string such as \"elo0=0 elo1=10\", not {sprt!r}")
    if sprt:
        try:
            SPRT.parse(sprt)
        except ValueError as exc:
            raise TournamentFileError(f"{where}: [match] sprt: {exc}") from None
    return sprt


def _parse_openings(section: dict[str, Any], where: str, base: Path, colours: str,
                    agents: list[AgentEntry]) -> tuple[Optional[Path], str]:
    """The opening suite of ``openings = "FILE"``, checked, with the hash of its text; ``(None, "")`` without."""
    if "openings" not in section:
        return None, ""
    value = _get(section, "openings", str, "", where)
    if not value.strip():
        raise TournamentFileError(f"{where}: [tournament] openings must name an opening file, e.g. \"book.txt\"")
    from ...protocol.openings import suite_path

    path = suite_path(value, base).resolve()
    if not path.is_file():
        raise TournamentFileError(f"{where}: [tournament] openings {value!r}: no such file (looked for {path})")
    if colours != "both":
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


_KIND_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _get(section: dict[str, Any], key: str, kind: type, default: Any, where: str, *,
         table: str = "tournament", low: Optional[float] = None, high: Optional[float] = None) -> Any:
    """``section[key]`` checked against ``kind`` (and ``low``/``high``), or ``default`` if absent."""
    if key not in section:
        return default
    value = section[key]
    return _check_value(value, kind, f"{where}: [{table}] {key}", low, high)


def _check_value(value: Any, kind: type, label: str, low: Optional[float] = None, high: Optional[float] = None) -> Any:
    """``value`` if it is of ``kind`` and within ``low``..``high``; else an error naming ``label`` and the value."""
    if kind is bool:
        good = isinstance(value, bool)
    elif kind is float:
        good = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    else:
        good = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not good:
        raise TournamentFileError(f"{label} = {_toml(value)}: expected {_KIND_WORDS.get(kind, kind.__name__)}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = (f"from {low:g} to {high:g}" if low is not None and high is not None
                  else f"at least {low:g}" if low is not None else f"at most {high:g}")
        raise TournamentFileError(f"{label} = {_toml(value)}: expected {_KIND_WORDS[kind]} {bounds}")
    return value


def _toml(value: Any) -> str:
    """A value as it was written in the file (``"false"`` with its quotes, ``false`` without)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def referee_types() -> dict[str, type]:
    """Each field of the referee's ``GameConfig`` and the type a file must give it.

    Derived from the dataclass itself (``Optional[float]`` is a number: TOML
    has no null), so a field the referee adds is validated here at once.
    """
    hints = typing.get_type_hints(GameConfig)
    types: dict[str, type] = {}
    for item in dataclasses.fields(GameConfig):
        hint = hints[item.name]
        arguments = [a for a in typing.get_args(hint) if a is not type(None)]
        if typing.get_origin(hint) in (typing.Union, types_module.UnionType) and len(arguments) == 1:
            hint = arguments[0]
        types[item.name] = hint if hint in _KIND_WORDS else object
    return types


def parse_referee(table: Any, where: str, time_per_move: float) -> dict[str, Any]:
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
        _check_value(value, kind, f"{where}: [referee] {key}")
    fields: dict[str, Any] = {key: (float(value) if types[key] is float else value) for key, value in table.items()}
    try:
        GameConfig(time_per_move=time_per_move, **fields)
    except (TypeError, ValueError) as exc:
        raise TournamentFileError(f"{where}: [referee]: {exc}") from None
    return fields


def _parse_agents(value: Any, where: str, base: Path, depth: int = 0) -> list[AgentEntry]:
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
            agents.extend(_include(item, label, base, depth))
        elif isinstance(item, dict):
            agents.append(_agent_from_table(item, label, base))
        else:
            raise TournamentFileError(f"{label} must be a table or a string, not {item!r}")
    if depth:
        return agents
    seen: set[str] = set()
    for agent in agents:
        if agent.name in seen:
            raise TournamentFileError(f"{where}: two agents are named {agent.name!r}; names must be unique")
        seen.add(agent.name)
    if len(agents) < 2:
        raise TournamentFileError(f"{where}: a tournament needs at least two agents, found {len(agents)}")
    return agents


def _include(item: dict[str, Any], label: str, base: Path, depth: int) -> list[AgentEntry]:
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
    return _parse_agents(data["agents"], str(path), path.parent, depth + 1)


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


def _agent_from_table(table: dict[str, Any], label: str, base: Path) -> AgentEntry:
    unknown = set(table) - AGENT_KEYS
    if unknown:
        raise TournamentFileError(
            f"{label}: unknown key(s) {', '.join(sorted(unknown))}; known keys are {', '.join(sorted(AGENT_KEYS))}"
        )
    for key in table:
        if key in ("withdraw", "openings", "sizes"):
            _check_value(table[key], bool, f"{label}: {key}")
        elif key == "time_per_move":
            continue  # a number, checked below
        elif not isinstance(table[key], str):
            raise TournamentFileError(f"{label}: {key} must be a string, not {table[key]!r}")
    name = table.get("name")
    if not name:
        raise TournamentFileError(f"{label} has no name")
    label = f"{label} ({name})"
    check_agent_name(name, label)
    command = table.get("command") or None
    builtin = table.get("builtin") or None
    if command and builtin:
        raise TournamentFileError(f"{label}: give a command or a builtin, not both")
    cwd = table.get("cwd")
    cwd_path: Optional[str] = None
    if cwd is not None:
        resolved = (base / cwd).resolve()
        if not resolved.is_dir():
            raise TournamentFileError(f"{label}: cwd {cwd!r} is not a directory (looked for {resolved})")
        cwd_path = str(resolved)
    elif command:
        cwd_path = str(base)
    build = table.get("build") or None
    if build and not command:
        raise TournamentFileError(f"{label}: build is only for agents with a command")
    files = table.get("files") or None
    if files is not None:
        try:
            check_file_name(files)
        except ValueError as exc:
            raise TournamentFileError(f"{label}: files {files!r}: {exc}") from None
    withdraw = bool(table.get("withdraw", False))
    reason = table.get("withdraw_reason", "")
    if reason and not withdraw:
        raise TournamentFileError(f"{label}: withdraw_reason is given but not withdraw = true")
    own_time: Optional[float] = None
    if "time_per_move" in table:  # time odds: its own seconds per move
        own_time = float(_check_value(table["time_per_move"], float, f"{label}: time_per_move", high=MAX_TIME_PER_MOVE))
        if not own_time > 0:
            raise TournamentFileError(f"{label}: time_per_move = {own_time:g}: expected a positive number of seconds")
    return AgentEntry(name=name, command=command, cwd=cwd_path, build=build, builtin=builtin, files=files,
                      withdraw=withdraw, withdraw_reason=reason, openings=bool(table.get("openings", False)),
                      sizes=bool(table.get("sizes", False)), time_per_move=own_time)


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
