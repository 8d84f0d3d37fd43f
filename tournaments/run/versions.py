"""Which version of each agent plays: its fingerprint, and the rule that a tournament does not mix versions.

A program's version is :func:`~othello_arena.referee.fingerprint.fingerprint`
of its submission folder (its ``cwd``), its command and its build line, taken
before its build runs.  Its build then writes into that folder (a binary, a
``target/``): the paths the build created or changed are kept with the
version in the database and left out of every later fingerprint, so a
``resume`` after a build sees the same version, while a changed source file
is a new one.  (Keeping the sources' digest alone would not do: a student's
new ``Makefile`` could leave an old binary, and the binary is what plays.)
The tournament's own results folder is left out too when it lies inside an
agent's folder.  A built-in agent's version is the digest of its own source
(:func:`~othello_arena.agents.registry.version_of`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ...referee.fingerprint import command_version, files_fingerprint, small_folder_files
from ..results.store import Store
from ..schedule.config import AgentEntry, Tournament

SHORT = 12  # hex digits of a fingerprint shown to people (the record keeps all 64)


def short(version: str) -> str:
    """A fingerprint as people read it: its first :data:`SHORT` hex digits."""
    return version[:SHORT]


def folder_of(tournament: Tournament, entry: AgentEntry) -> Path:
    """The agent's submission folder: its ``cwd`` (by default the tournament file's folder)."""
    return Path(entry.cwd or tournament.path.parent).resolve()


def left_out(tournament: Tournament, entry: AgentEntry, outputs: dict[str, list[str]]) -> list[str]:
    """The relative paths of ``entry``'s folder its fingerprint skips.

    What the builds wrote there (``outputs``: agent -> paths relative to its
    folder; an agent's folder is by default the tournament file's, which
    other agents may share), and what is not its program though it may lie
    in its folder: the tournament file, its results, the other agents' folders.
    """
    folder = folder_of(tournament, entry)
    paths = [tournament.path, tournament.results_dir]
    for agent in tournament.agents:
        paths += [folder_of(tournament, agent) / written for written in outputs.get(agent.name, [])]
        if agent.cwd and agent.name != entry.name:
            paths.append(Path(agent.cwd))
    skipped = []
    for path in paths:
        try:
            # (the last part not followed: a build's output may be a link)
            inside = (path.parent.resolve() / path.name).relative_to(folder).as_posix()
        except ValueError:  # elsewhere
            continue
        if inside != ".":
            skipped.append(inside)
    return skipped


def agent_version(tournament: Tournament, entry: AgentEntry, outputs: dict[str, list[str]]) -> str:
    """The fingerprint of ``entry`` now (its folder less the builds' ``outputs``); ``OSError`` for an unreadable file."""
    if entry.is_builtin:
        from ...agents.registry import version_of

        return version_of(entry.builtin or entry.name)
    folder = folder_of(tournament, entry)
    files = small_folder_files(folder, left_out(tournament, entry, outputs))
    if files is None:
        return _working_folder_version(folder, entry)
    return files_fingerprint(files, entry.command or "", entry.build or "")


def _working_folder_version(folder: Path, entry: AgentEntry) -> str:
    """The version of an agent whose folder is too large to be a submission: its command and the files it names.

    ``othello match "a=./my_agent" ...`` typed in a home folder (or in
    ``/tmp``) makes that folder the agents' ``cwd``; digesting all of it
    took minutes before the first game, with nothing said.  A file the
    command or the build line names (``./my_agent``, ``agent.py``) counts
    by its content, as ``othello play`` versions a command.
    """
    words: list[str] = []
    for line in (entry.command or "", entry.build or ""):
        try:
            split = shlex.split(line)
        except ValueError:
            split = line.split()
        for word in split:
            named = folder / word
            words.append(str(named) if not word.startswith(("-", "/")) and named.is_file() else word)
        words.append("&&")  # the command's words apart from the build's
    return command_version(words, folder)


def folder_state(tournament: Tournament, entry: AgentEntry) -> dict[str, str]:
    """The folder's files (relative path -> digest), to see afterwards what a build wrote (none for a large folder)."""
    return dict(small_folder_files(folder_of(tournament, entry), left_out(tournament, entry, {})) or [])


def build_outputs(before: dict[str, str], after: dict[str, str]) -> set[str]:
    """The paths a build created or changed: in ``after`` and not the same in ``before``."""
    return {path for path, digest in after.items() if before.get(path) != digest}


@dataclass(frozen=True)
class ChangedAgent:
    """An agent whose program is not the one that played its earlier games."""

    name: str
    now: str  # its fingerprint now
    earlier: dict[str, int]  # fingerprint -> finished games it played

    def describe(self) -> str:
        games = sum(self.earlier.values())
        earlier = ", ".join(f"{count} by {short(version)}" for version, count in sorted(self.earlier.items()))
        return f"{self.name} changed since its {games} earlier game(s) ({earlier}); it is now {short(self.now)}"


def changed_agents(store: Store, versions: dict[str, str]) -> list[ChangedAgent]:
    """The agents whose stored finished games were played by another version than ``versions`` names."""
    changed = []
    for name, now in versions.items():
        earlier = store.versions_played(name)
        if any(version != now for version in earlier):
            changed.append(ChangedAgent(name, now, earlier))
    return changed


def refusal(tournament: Tournament, changed: list[ChangedAgent], rerun: Optional[str] = None) -> str:
    """Why the runner will not play on with ``changed`` agents, and the two ways to go on."""
    lines = [f"{tournament.path}: not mixing versions: the submission of {len(changed)} agent(s) changed:"]
    lines += [f"  {agent.describe()}" for agent in changed]
    names = " ".join(agent.name for agent in changed)
    lines.append(f"To replay an agent's games with its new version: othello tournament rerun {tournament.path} NAME "
                 f"(for {names}).")
    lines.append(f"To play on with both versions in the standings: add --accept-changed NAME (or --accept-changed all)"
                 f"{' to the rerun' if rerun else ''}.")
    return "\n".join(lines)
