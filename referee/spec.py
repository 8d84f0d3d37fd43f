"""Who plays: agent specifications as given on the command line, and the colour draw.

An agent is one of three kinds:

- ``random`` -- a built-in agent, by name (run as ``python -m othello_arena agent NAME``);
- ``alice=python3 alice.py --name {name}`` -- any program: ``NAME=COMMAND``, the
  command split like a shell would (``shlex``), with ``{name}``, ``{dir}``,
  ``{time}`` and ``{home}`` replaced when the game starts;
- ``manual:me`` -- a person, who plays by editing ``me.out`` in a text editor.

A program that understands openings (PROTOCOL.md section 8) says so with the
prefix ``openings:``, as in ``openings:alice=python3 alice.py``; built-in
agents all do.  A program that plays on the bigger boards of seed 002 (10x10,
12x12, 14x14: PROTOCOL.md section 9) says so with the prefix ``sizes:``; a
person plays any size, and each built-in agent has its own sizes
(:class:`BuiltinAgents`).
"""

from __future__ import annotations

import random
import re
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from ..protocol import BOARD_SIZES, DEFAULT_SIZE
from .fingerprint import command_version

BUILTIN, PROGRAM, MANUAL = "builtin", "program", "manual"
OPENINGS_PREFIX = "openings:"  # openings:NAME=COMMAND: a program that understands openings
SIZES_PREFIX = "sizes:"  # sizes:NAME=COMMAND: a program that plays on every board size (PROTOCOL.md section 9)
CLOCK_PREFIX = "clock:"  # clock:NAME=COMMAND: a program that reads its bank in NAME.in (PROTOCOL.md section 10)
ONLY_8X8 = (DEFAULT_SIZE,)
# Each prefix, what it declares of the program, and why a built-in agent needs none.
DECLARATIONS: tuple[tuple[str, dict[str, Any], str], ...] = (
    (OPENINGS_PREFIX, {"openings": True}, "built-in agents understand openings already"),
    (SIZES_PREFIX, {"sizes": BOARD_SIZES}, "a built-in agent knows its own board sizes"),
    (CLOCK_PREFIX, {"reads_clock": True}, "built-in agents read the clock line already"),
)

# A file name an agent can use on any system: it becomes NAME.in / NAME.out.
_FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$")


def check_file_name(name: str) -> str:
    """Return ``name`` if it is usable as the NAME of ``NAME.in``, else raise ValueError."""
    if not _FILE_NAME.match(name) or name in (".", ".."):
        raise ValueError(
            f"agent name {name!r} is not usable as a file name: use letters, digits and _ . + - "
            "(at most 64, not starting with . or -)"
        )
    return name


def _nothing_to_prepare(names: Sequence[str], log: Callable[[str], None]) -> object:
    return True


@dataclass(frozen=True)
class BuiltinAgents:
    """The agents a game may name alone (``random``), handed down by the layer that has them.

    The referee starts a built-in agent by its name only (``python -m
    othello_arena agent NAME``).  Which names exist, and how each is made
    ready before any clock runs (the champion compiles its engine), is the
    agents' business: the command line passes
    :func:`othello_arena.agents.registry.builtin_agents` down, and the
    referee never imports the agents.  With none given, no bare name is an
    agent.
    """

    names: tuple[str, ...] = ()
    prepare: Callable[[Sequence[str], Callable[[str], None]], object] = _nothing_to_prepare
    # (name, board sizes) of the agents that play more than 8x8; every other one plays 8x8 only
    sizes: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def sizes_of(self, name: str) -> tuple[int, ...]:
        """The board sizes the built-in agent ``name`` plays (8 alone unless the agents said more)."""
        return dict(self.sizes).get(name, ONLY_8X8)

    def spec(self, name: str, file_name: Optional[str] = None) -> "AgentSpec":
        """The built-in agent ``name`` as a player, with the board sizes it plays; ValueError for an unknown name."""
        return AgentSpec.builtin(self.check(name), file_name, sizes=self.sizes_of(name))

    def check(self, name: str) -> str:
        """Return ``name`` if it is a built-in agent, else raise ValueError saying how to run a program."""
        if name not in self.names:
            raise ValueError(
                f"no built-in agent {name!r} (known: {', '.join(self.names) or 'none'}); "
                f"to run a program write NAME=COMMAND, e.g. {name}=./{name}"
            )
        return name

    def prepare_for(self, specs: Iterable["AgentSpec"], log: Callable[[str], None]) -> None:
        """Make the built-in agents among ``specs`` ready before the clock runs (the champion compiles once).

        ``specs`` come from :meth:`AgentSpec.parse`, where a built-in
        agent's file name is its name.
        """
        names = [spec.file_name for spec in specs if spec.kind == BUILTIN]
        if names:
            self.prepare(names, log)


NO_BUILTINS = BuiltinAgents()


@dataclass(frozen=True)
class AgentSpec:
    """One player of a game.

    ``label`` is the name in the game record (``foo-2`` for a second copy of
    ``foo``); ``file_name`` is the NAME of its ``NAME.in`` / ``NAME.out``;
    ``command`` is the argument vector before placeholder substitution
    (``None`` for a person); ``cwd`` overrides the working directory (by
    default the agent's own directory inside the game directory); ``home``
    is the agent's submission folder, the value of ``{home}`` (where the
    command was given: the current directory of ``othello play``, a
    tournament agent's ``cwd``).  ``openings`` says whether it understands
    openings: a first ``NAME.in`` with the moves already played after the
    colour (PROTOCOL.md section 8); ``reads_clock`` whether it reads the
    clock line, its remaining bank under a game clock, as the last line of
    each ``NAME.in`` that asks for a move (section 10).  ``version`` is the
    program's fingerprint (:mod:`.fingerprint`) when its caller took one (a
    tournament does, before the build): the record names it.
    """

    label: str
    file_name: str
    kind: str
    command: Optional[tuple[str, ...]] = None
    cwd: Optional[Path] = None
    home: Optional[Path] = None
    openings: bool = False
    sizes: tuple[int, ...] = ONLY_8X8
    version: str = ""
    reads_clock: bool = False

    def __post_init__(self) -> None:
        if self.kind not in (BUILTIN, PROGRAM, MANUAL):
            raise ValueError(f"unknown agent kind {self.kind!r}")
        check_file_name(self.file_name)
        if not self.label or "/" in self.label or self.label in (".", ".."):
            raise ValueError(f"agent label {self.label!r} cannot name a directory")
        if self.command is not None and not isinstance(self.command, tuple):
            object.__setattr__(self, "command", tuple(self.command))
        if self.kind == MANUAL and self.command is not None:
            raise ValueError("a manual player has no command")
        if self.kind != MANUAL and not self.command:
            raise ValueError(f"agent {self.label!r} has an empty command")

    # -- constructors ---------------------------------------------------------

    @classmethod
    def parse(cls, text: str, base: Optional[Path] = None, builtins: BuiltinAgents = NO_BUILTINS) -> "AgentSpec":
        """Parse ``random``, ``NAME=COMMAND``, ``openings:NAME=COMMAND``, ``sizes:NAME=COMMAND``, ``clock:NAME=COMMAND`` or ``manual:NAME``.

        A bare name must be one of ``builtins`` (passed in by the command
        line: the referee does not know the agents).

        An agent runs in its own directory, so in ``NAME=COMMAND`` every
        argument that names an existing file or directory relative to
        ``base`` (default: the current directory), such as ``./bob`` or
        ``alice.py``, is made absolute, and ``base`` is the agent's
        ``{home}`` (a JVM's class path, a data file).  Raises
        :class:`ValueError` with a message quoting ``text``.
        """
        text = text.strip()
        if not text:
            raise ValueError("empty agent: expected a built-in name, NAME=COMMAND or manual:NAME")
        # A program declares a protocol extension with a prefix (PROTOCOL.md sections 8, 9 and 10).
        for prefix, declared, why in DECLARATIONS:
            if text.lower().startswith(prefix):
                rest = text[len(prefix):].strip()
                if "=" not in rest:
                    raise ValueError(f"{text!r}: the {prefix} prefix is for a program, {prefix}NAME=COMMAND ({why})")
                return replace(cls.parse(rest, base, builtins), **declared)
        if text.lower().startswith("manual:"):
            name = text.split(":", 1)[1].strip()
            if not name:
                raise ValueError(f"{text!r}: manual:NAME needs a name, e.g. manual:me")
            return cls.manual(_checked(text, name))
        name, command = split_name_command(text)
        if command is not None:
            if not name:
                raise ValueError(f"{text!r}: NAME=COMMAND needs a name before '='")
            return cls.from_command(name, command, base, quoted=text)
        if " " in text or "/" in text:
            raise ValueError(
                f"{text!r} is neither a built-in agent nor NAME=COMMAND: "
                f"to run a program write e.g. myagent={shlex.quote(text)}"
            )
        return builtins.spec(_checked(text, text))

    @classmethod
    def from_command(cls, name: str, command: str, base: Optional[Path] = None, quoted: str = "") -> "AgentSpec":
        """A program named ``name`` run by ``command``, a shell-like command line (the ``COMMAND`` of ``NAME=COMMAND``).

        Every argument that names an existing file or directory relative to
        ``base`` (default: the current directory) is made absolute, and
        ``base`` is its ``{home}``.  Raises :class:`ValueError` quoting
        ``quoted`` (default: ``NAME=COMMAND``).
        """
        quoted = quoted or f"{name}={command}"
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"{quoted!r}: cannot split the command: {exc}") from None
        if not argv:
            raise ValueError(f"{quoted!r}: NAME=COMMAND needs a command after '=', e.g. {name}=./{name}")
        home = (base or Path.cwd()).resolve()
        return cls.program(_checked(quoted, name), _absolute_paths(argv, home), home=home)

    @classmethod
    def from_declared_command(cls, name: str, command: str, base: Optional[Path] = None) -> "AgentSpec":
        """A program named ``name`` run by ``command``, which may begin with the prefixes of ``NAME=COMMAND``.

        ``openings:./v2 {name}`` is the program ``./v2 {name}`` that declares
        openings, as ``openings:v2=./v2 {name}`` would be (``sizes:`` and
        ``clock:`` likewise, in any order): the form of a command given
        alone, as ``othello replay --command`` takes it.  Raises
        :class:`ValueError` quoting ``command``.
        """
        declared: dict[str, Any] = {}
        rest = command.strip()
        while True:
            prefix = next((entry for entry in DECLARATIONS if rest.lower().startswith(entry[0])), None)
            if prefix is None:
                break
            declared.update(prefix[1])
            rest = rest[len(prefix[0]):].strip()
        spec = cls.from_command(name, rest, base, quoted=command)
        return replace(spec, **declared)

    @classmethod
    def builtin(cls, name: str, file_name: Optional[str] = None, sizes: tuple[int, ...] = ONLY_8X8) -> "AgentSpec":
        """A built-in agent by name (the caller knows it is one, and its board sizes: see :class:`BuiltinAgents`)."""
        file_name = file_name or name
        command = (sys.executable, "-m", "othello_arena", "agent", name, "--name", file_name)
        # Every built-in agent runs on agents.runtime, which reads openings and the clock line.
        return cls(label=file_name, file_name=file_name, kind=BUILTIN, command=command, openings=True,
                   sizes=tuple(sizes), reads_clock=True)

    @classmethod
    def program(cls, name: str, argv: list[str] | tuple[str, ...], cwd: Optional[Path] = None,
                home: Optional[Path] = None) -> "AgentSpec":
        """Any program; ``argv`` may hold ``{name}``, ``{dir}``, ``{time}`` and ``{home}``."""
        return cls(label=name, file_name=name, kind=PROGRAM, command=tuple(argv), cwd=cwd, home=home)

    @classmethod
    def manual(cls, name: str) -> "AgentSpec":
        """A person editing the files by hand (who can read an opening's moves too, and play any board size)."""
        return cls(label=name, file_name=name, kind=MANUAL, openings=True, sizes=BOARD_SIZES)

    def versioned(self) -> "AgentSpec":
        """This spec with its ``version`` set from its command line and the files it names (a program given on the
        command line: ``othello play``, ``match``); one that has a version (a tournament's folder) is kept as it is."""
        if self.kind != PROGRAM or self.version:
            return self
        return replace(self, version=command_version(self.command or (), self.home))

    def relabelled(self, label: str) -> "AgentSpec":
        """The same agent under another label in the record (its files keep their name)."""
        return replace(self, label=label)

    # -- use --------------------------------------------------------------------

    @property
    def is_manual(self) -> bool:
        return self.kind == MANUAL

    def argv(self, directory: Path, time_per_move: float) -> list[str]:
        """The command with ``{name}``, ``{dir}``, ``{time}`` and ``{home}`` replaced.

        ``{home}`` without a known home is the current directory, where a
        command given without one was typed.
        """
        if self.command is None:
            raise ValueError(f"{self.label} is a manual player and has no command")
        home = self.home if self.home is not None else Path.cwd()
        values = {"name": self.file_name, "dir": str(directory), "time": f"{time_per_move:g}", "home": str(home)}
        return [_substitute(part, values) for part in self.command]

    def start_entry(self) -> dict[str, object]:
        """How to start the agent again, as its entry in ``game.json`` keeps it (read back by ``othello replay --rerun``).

        ``kind`` and ``command`` always; ``file_name``, ``home``,
        ``openings`` and ``reads_clock`` (a program's) when they say more
        than the default.
        """
        entry: dict[str, object] = {"kind": self.kind}
        if self.command is not None:
            entry["command"] = list(self.command)
        if self.file_name != self.label:
            entry["file_name"] = self.file_name
        if self.home is not None:
            entry["home"] = str(self.home)
        if self.openings and not self.is_manual:
            entry["openings"] = True
        if self.reads_clock and self.kind == PROGRAM:
            entry["reads_clock"] = True
        return entry

    def __str__(self) -> str:
        if self.kind == MANUAL:
            return f"manual:{self.file_name}"
        if self.kind == BUILTIN:
            return self.label
        prefix = ((OPENINGS_PREFIX if self.openings else "") + (SIZES_PREFIX if len(self.sizes) > 1 else "")
                  + (CLOCK_PREFIX if self.reads_clock else ""))
        return f"{prefix}{self.label}={shlex.join(self.command or ())}"


def split_name_command(text: str) -> tuple[str, Optional[str]]:
    """``NAME=COMMAND`` split at its first ``=``, both stripped; the command is ``None`` without an ``=``.

    The one reading of that form, for the command line and for tournament files.
    """
    name, sep, command = text.partition("=")
    return name.strip(), command.strip() if sep else None


def _checked(text: str, name: str) -> str:
    try:
        return check_file_name(name)
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc}") from None


def _absolute_paths(argv: list[str], base: Path) -> list[str]:
    # A path is written with a slash (./bob, bin/carol) or is a file with an
    # extension (alice.py, carol.jar); a bare word (a program in PATH, a
    # name after --name) is left alone.
    result = []
    for part in argv:
        candidate = base / Path(part).expanduser()
        plain = bool(part) and not part.startswith("-") and "{" not in part and not Path(part).is_absolute()
        if plain and (("/" in part and candidate.exists()) or ("." in Path(part).name and candidate.is_file())):
            part = str(candidate.resolve())
        result.append(part)
    return result


_PLACEHOLDER = re.compile(r"\{(name|dir|time|home)\}")


def _substitute(part: str, values: dict[str, str]) -> str:
    # Only our four placeholders: braces elsewhere (awk, shell) stay as they are.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], part)


def distinct_labels(first: AgentSpec, second: AgentSpec) -> tuple[AgentSpec, AgentSpec]:
    """Give a second copy of the same agent the label ``foo-2`` (a name a tournament file accepts too)."""
    if first.label == second.label:
        return first, second.relabelled(f"{second.label}-2")
    return first, second


def draw_colours(
    first: AgentSpec, second: AgentSpec, seed: Optional[int] = None
) -> tuple[AgentSpec, AgentSpec, int]:
    """Draw the colours at random: ``(white, black, seed)``.

    With ``seed=None`` a seed is drawn and returned, so the game record can
    keep it and the draw can be repeated.
    """
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    first, second = distinct_labels(first, second)
    if random.Random(seed).random() < 0.5:
        return first, second, seed
    return second, first, seed
