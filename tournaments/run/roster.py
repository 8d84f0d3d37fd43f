"""Checking the whole class before the tournament: ``othello tournament check-agents``.

Every agent of the file is built exactly as the runner builds it (its
``build`` line, sandboxed, in its folder, with the file's time limit: the
builds at once, :meth:`.runner.Runner.build_agents`'s rule) and then put
through the conformance check (:func:`othello_arena.agents.check.check_agent`),
one agent after the other so that no check's clock competes with another.
Each agent gets a card, ``DIR/NAME.txt``, written to be forwarded to its
student as it is: it names that agent and its version only, and holds the
build log when the build failed (the compiler's error), or the check's report.
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..results.store import BuildResult, Store
from ..schedule.config import AgentEntry, Tournament
from .build import run_build
from .jobs import agent_spec, game_config, usable_cores
from .versions import agent_version, folder_of, short

CARD_LOG_LINES = 200  # lines of a failed build's log on the card: its end, where the compiler says what is wrong


@dataclass
class AgentCard:
    """One agent's outcome: its build (``None``: it has none) and check, and the card's text."""

    agent: str
    version: str
    build: Optional[BuildResult] = None
    build_log: str = ""
    checked: bool = False
    passed: bool = False
    unsure: bool = False  # no item failed, but one could not be told: the machine was too busy to time the agent
    lines: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.build is not None and not self.build.ok:
            return f"build {self.build.status}"
        if self.passed and self.unsure:  # (the card says which item, with the figures)
            return "could not tell"
        return "passed" if self.passed else "FAILED" if self.checked else "not checked"

    def text(self, tournament: Tournament) -> str:
        head = [f"Othello Arena: the check of {self.agent} for {tournament.name}",
                f"version {short(self.version)} (a fingerprint of your folder's files, command and build line)"]
        if self.build is None:
            head.append("build: none")
        else:
            head.append(f"build: {self.build.status}" + (f" ({self.build.detail})" if self.build.detail else "")
                        + f" in {self.build.seconds:.1f} s")
        body: list[str] = []
        if self.build is not None and not self.build.ok:
            log = self.build_log.splitlines()
            cut = len(log) - CARD_LOG_LINES
            body += ["", "The build log" + (f" (its last {CARD_LOG_LINES} lines)" if cut > 0 else "") + ":"]
            body += log[max(0, cut):]
            body += ["", "Not checked: the program was not built. Your games would be forfeits (reason: build)."]
        else:
            body += ["", *self.lines]
        return "\n".join(head + body) + "\n"


def check_agents(tournament: Tournament, out_dir: Path, *, attempts: int = 8,
                 log: Callable[[str], None] = lambda line: None) -> list[AgentCard]:
    """Build and check every agent of ``tournament`` (the withdrawn ones apart); write ``out_dir/NAME.txt`` each."""
    from ...agents.check import check_agent
    from ...agents.registry import prepare

    config = game_config(tournament)
    agents = [agent for agent in tournament.agents if agent.name not in tournament.withdrawn]
    cards = {agent.name: AgentCard(agent.name, agent_version(tournament, agent, {})) for agent in agents}
    out_dir.mkdir(parents=True, exist_ok=True)
    logs = Path(tempfile.mkdtemp(prefix="othello-check-agents-"))

    def build(agent: AgentEntry) -> BuildResult:
        log(f"Building {agent.name}: {agent.build}")
        return run_build(agent.name, agent.build or "", agent.cwd, logs / f"{agent.name}.log",
                         tournament.build_timeout, config, hidden=[tournament.results_dir.resolve()])

    def build_folder(group: list[AgentEntry]) -> list[BuildResult]:
        return [build(agent) for agent in group]

    by_folder: dict[Path, list[AgentEntry]] = {}
    for agent in agents:
        if agent.build:
            by_folder.setdefault(folder_of(tournament, agent), []).append(agent)
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(usable_cores(), len(by_folder) or 1))) as pool:
            for outcome in (item for group in pool.map(build_folder, by_folder.values()) for item in group):
                card = cards[outcome.agent]
                card.build = outcome
                card.build_log = (logs / f"{outcome.agent}.log").read_text(encoding="utf-8", errors="replace")
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    prepare([agent.builtin or agent.name for agent in agents if agent.is_builtin], log)
    for agent in agents:
        card = cards[agent.name]
        if card.build is None or card.build.ok:
            log(f"Checking {agent.name}")
            control = config.time_control(agent.name, manual=False)
            seconds = agent.time_per_move or tournament.time_per_move or control.fair_share() or 5.0
            clock = (control.base, control.increment) if control.base is not None else None
            report = check_agent(agent_spec(agent), seconds, attempts, workdir=None, sandbox=config.sandbox,
                                 clock=clock)
            # An item the check could not exercise is no failure (the card says UNTESTED): only a FAIL fails it.
            card.checked, card.passed, card.lines = True, not report.failed, report.lines()
            card.unsure = bool(report.unsure)
            # Kept for `tournament check`'s duration estimate, until the games measure the agent.
            with Store(tournament.database) as store:
                store.record_check(agent.name, card.version, not report.failed, report.moves_timed,
                                   report.mean_move_seconds)
        (out_dir / f"{agent.name}.txt").write_text(card.text(tournament), encoding="utf-8")
    return [cards[agent.name] for agent in agents]
