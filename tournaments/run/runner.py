"""Running a tournament: the schedule, the games in parallel, every result stored at once.

The runner is the only writer of the database.  Games run in a pool
(:mod:`.pools`: threads on this machine, or a Dask cluster with
``scheduler``); each game is a call of :func:`.jobs.play_job`, which takes
a :class:`~.jobs.GameJob` and returns a :class:`~.jobs.PlayedGame`, plain
data both, so it runs the same on a worker of another machine.  When a game
comes back the runner stores it in one transaction, with the SHA-256 of the
exact ``game.json`` the referee wrote.  One runner at a time holds the tournament (:mod:`..results.lock`).  If the
runner stops, the games in flight are voided: ``resume`` replays them from
the same seed and colours, keeps each voided attempt in the database (and its
files under ``games/voided/``), and ends any agent the dead runner left.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Optional

from ...protocol import BLACK, WHITE, GameRecord, Result, Termination
from ..results import lock as locking
from ..results.standings import Standings
from ..results.paths import game_directory
from ..results.state import Progress, progress, standings_of, withdrawn_agents
from ..results.store import BuildResult, GameOutcome, GameRow, StartMark, Store
from ..schedule import pairing
from ..schedule.config import AgentEntry, Tournament, TournamentFileError, check_builtins
from ..schedule.pairing import ScheduledGame, game_opening
from .jobs import GameFileError, GameJob, PlayedGame, agent_spec, game_config, outcome_from, usable_cores
from .livelog import LiveLogWriter
from .pools import DaskPool, LocalPool, Pool, cpu_line, default_concurrency, kill_orphans
from .versions import (ChangedAgent, agent_version, build_outputs, changed_agents, folder_of, folder_state,
                       refusal)

# ---------------------------------------------------------------------------
# The runner
# ---------------------------------------------------------------------------


def _move_aside(directory: Path, folder: Path, name: str) -> Path:
    """Move ``directory`` into ``folder`` as ``name`` (``name-2``, ``-3``... if taken): kept, never overwritten."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    suffix = 1
    while target.exists() or target.is_symlink():
        suffix += 1
        target = folder / f"{name}-{suffix}"
    os.rename(directory, target)
    return target


class ScheduleEventKind(str, Enum):
    """What happened to a game of the schedule."""

    STARTED = "started"
    FINISHED = "finished"
    FAILED = "failed"  # not the agents' fault: a lost worker; replayed on resume


@dataclass
class ScheduleEvent:
    """What the display hears from the runner: a game of the schedule started, finished or failed.

    One game's own moves are the referee's :class:`~othello_arena.referee.GameEvent`.
    """

    kind: ScheduleEventKind
    game: ScheduledGame
    number: int  # 1-based position in the schedule
    outcome: Optional[GameOutcome] = None
    error: str = ""


class Runner:
    """Plays the unfinished games of a tournament and stores each result as it comes.

    Creating a runner takes the tournament's lock (:class:`~.lock.LockHeldError`
    if another runner has it); :meth:`close` gives it back.  ``fresh`` deletes
    earlier results first, under the lock.
    """

    def __init__(
        self,
        tournament: Tournament,
        *,
        concurrency: Optional[int] = None,
        scheduler: Optional[str] = None,
        scheduler_timeout: float = 20.0,
        on_event: Optional[Callable[[ScheduleEvent, "Runner"], None]] = None,
        max_games: Optional[int] = None,
        build: bool = True,
        fresh: bool = False,
        only: Optional[str] = None,
    ) -> None:
        self.tournament = tournament
        self.concurrency = concurrency or tournament.concurrency
        self.scheduler = scheduler
        self.scheduler_timeout = scheduler_timeout
        self.on_event = on_event
        self.max_games = max_games
        self.build = build
        self.only = only  # play only this agent's games (rerun --only); None: every unfinished game
        self.rebuild: tuple[str, ...] = ()  # agents built again although built before (a rerun's)
        self.lock = locking.RunnerLock(locking.lock_path(tournament.database))
        self.lock.acquire()
        try:
            if fresh:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{tournament.database}{suffix}").unlink(missing_ok=True)
                shutil.rmtree(tournament.results_dir / "games", ignore_errors=True)
            self.store = Store(tournament.database)
        except BaseException:
            self.lock.release()
            raise
        self.identity = f"pid {os.getpid()} on {socket.gethostname()}"
        self.config = game_config(tournament)  # the referee's settings of every game
        self.numbers: dict[str, int] = {}
        self.stop_requested = threading.Event()
        self.failed: list[tuple[str, str]] = []
        self.orphans_killed = 0
        self.voided_at_start: list[str] = []
        self.added: list[ScheduledGame] = []  # games of agents added to the file since the last run
        # The games being played now, for the live display: who plays whom, the move, the clocks.
        self.in_progress: dict[str, dict[str, Any]] = {}
        self.withdrawn: dict[str, str] = {}
        self.versions: dict[str, str] = {}  # agent -> the fingerprint of the program that plays now

    # -- setup ------------------------------------------------------------------

    def prepare(self) -> None:
        """Check the file against the built-in agents, bind the database, clean up after a dead runner, store rounds."""
        from ...agents import registry

        check_builtins(self.tournament, registry.names(), registry.sizes_of)
        if self.config.sandbox == "bwrap":
            from ...referee.sandbox import SandboxUnavailable, require

            try:  # stop before the first game, not with every game a forfeit
                require()
            except SandboxUnavailable as exc:
                raise TournamentFileError(f"{self.tournament.path}: {exc}") from None
        for agent in self.tournament.agents:
            try:
                agent_spec(agent)
            except ValueError as exc:
                raise TournamentFileError(f"{self.tournament.path}: agent {agent.name!r}: {exc}") from None
        # Set-up that the next start writes again if a power cut takes it: synced by the first game's start.
        with self.store.deferred_sync():
            self.store.bind(self.tournament.schedule_basis(), self.tournament.to_dict(),
                            legacy_key=self.tournament.legacy_schedule_key)
            self._check_no_agent_removed()
            self.withdrawn = withdrawn_agents(self.tournament, self.store)
            # We hold the lock, so nothing running under the games directory is a
            # live game: it is what a killed runner left.
            self.orphans_killed = kill_orphans(self.tournament.results_dir / "games")
            self.voided_at_start = self.store.void_running(
                "in flight when its runner stopped (killed, crashed or interrupted); replayed with the same seed and colours"
            )
            stored = self.store.scheduled_games()
            if self.tournament.format == "swiss":
                self._pair_next_swiss_round()
            elif not stored:
                schedule = pairing.fixed_schedule(self.tournament, self.withdrawn) or []
                for number in sorted({game.round for game in schedule}):
                    self.store.add_round(number, [game for game in schedule if game.round == number])
            else:
                # Agents added to the file since: only their pairings, in a new round; nobody else's games move.
                self.added = pairing.additions(self.tournament, stored, self.withdrawn)
                if self.added:
                    self.store.add_round(self.added[0].round, self.added)
        self._renumber()
        self._take_versions()

    def _take_versions(self) -> None:
        """Each playing agent's fingerprint now, before any build (its earlier build's outputs left out)."""
        outputs = {name: written for name, (_, written) in self.store.agent_versions().items()}
        for agent in self.tournament.agents:
            if agent.name in self.withdrawn:
                continue
            try:
                self.versions[agent.name] = agent_version(self.tournament, agent, outputs)
            except OSError as exc:
                raise TournamentFileError(f"{self.tournament.path}: agent {agent.name!r}: cannot read its folder "
                                          f"{agent.cwd} to take its version: {exc}") from None

    def check_versions(self, accept: tuple[str, ...] = ()) -> list[ChangedAgent]:
        """Refuse to mix versions: raise if an agent changed since its stored games, unless ``accept`` names it.

        ``accept`` holds agent names or ``all``; returns the changed agents
        accepted.  Once passed, the versions are recorded (a changed agent is
        rebuilt before its next game).
        """
        unknown = sorted(set(accept) - set(self.tournament.agent_names) - {"all"})
        if unknown:
            raise TournamentFileError(f"--accept-changed {unknown[0]}: no such agent "
                                      f"(agents: {', '.join(self.tournament.agent_names)}, or all)")
        changed = changed_agents(self.store, self.versions)
        refused = [agent for agent in changed if agent.name not in accept and "all" not in accept]
        if refused:
            raise TournamentFileError(refusal(self.tournament, refused))
        return changed

    def prepare_builtins(self, log: Callable[[str], None]) -> bool:
        """Make the built-in agents ready before any game, like a build (the champion compiles once)."""
        from ...agents import registry

        return registry.prepare([agent.builtin or agent.name for agent in self.tournament.agents if agent.is_builtin], log)

    def _check_no_agent_removed(self) -> None:
        """Refuse a file that dropped an agent with stored games: withdraw it instead, so nothing is lost silently."""
        names = set(self.tournament.agent_names)
        gone = sorted({name for game in self.store.scheduled_games() for name in (game.white, game.black)} - names)
        if gone:
            raise TournamentFileError(
                f"{self.tournament.path}: agent(s) {', '.join(gone)} have games in {self.tournament.database} but "
                "are no longer in the file; put them back with withdraw = true (their games then leave the "
                "standings, and stay in the database), or start a new results directory"
            )

    def withdraw(self, agent: str, reason: str) -> None:
        """Withdraw ``agent``: its games leave the standings and its unplayed games are never played."""
        if agent not in self.tournament.agent_names:
            raise TournamentFileError(f"{self.tournament.path}: no agent named {agent!r} "
                                      f"(agents: {', '.join(self.tournament.agent_names)})")
        self.store.withdraw(agent, reason)
        self.withdrawn = withdrawn_agents(self.tournament, self.store)

    def rerun(self, agent: Optional[str], why: str, flagged: bool = False) -> list[str]:
        """Queue every finished game of ``agent`` again (after a resubmission); return their keys.

        Each result is copied into the ``replaced`` table and its files moved
        to ``games/replaced/`` before the game goes back in the queue, with
        its seed and colours: the history keeps it, the standings do not.
        With ``flagged``, only the games whose timeout was flagged as caused
        by load (``agent`` ``None``: everyone's).
        """
        if agent is None and flagged:
            return self._replace(self.store.replace_results(None, why, exclude=self.withdrawn, flagged=True))
        if agent not in self.tournament.agent_names:
            raise TournamentFileError(f"{self.tournament.path}: no agent named {agent!r} "
                                      f"(agents: {', '.join(self.tournament.agent_names)})")
        if agent in self.withdrawn:
            raise TournamentFileError(f"{self.tournament.path}: {agent} is withdrawn ({self.withdrawn[agent]}); "
                                      "a withdrawn agent's games are not played")
        return self._replace(self.store.replace_results(agent, why, exclude=self.withdrawn, flagged=flagged))

    def _replace(self, rows: list[GameRow]) -> list[str]:
        """Move the files of results just replaced to ``games/replaced/``; return their keys."""
        target = self.tournament.results_dir / "games" / "replaced"
        for row in rows:
            directory = Path(row.game_dir or "")
            if row.game_dir and (directory.exists() or directory.is_symlink()):
                kept = _move_aside(directory, target, f"{directory.name}.attempt{row.attempts}")
                self.store.set_replaced_files(row.key, row.attempts, str(kept))
        return [row.key for row in rows]

    def build_agents(self, log: Callable[[str], None], only_missing: bool = False,
                     also: tuple[str, ...] = ()) -> dict[str, BuildResult]:
        """Run each agent's build command once, in its directory, with the file's time limit; return the failures.

        The builds run at once, as many as there are cores (those of agents
        sharing a folder one after the other), all before the first game.

        The outcome of every build is stored, so a resumed run keeps the
        forfeits of an agent that did not build; ``only_missing`` (resume)
        builds only agents with no stored outcome (the runner died while building),
        those named in ``also`` (a rerun rebuilds its agent) and those whose
        version changed since their build; withdrawn agents are never built.
        What a build writes into its folder is recorded with the agent's
        version, and left out of its fingerprint from then on (:mod:`.versions`).
        """
        from concurrent.futures import ThreadPoolExecutor

        from .build import run_build

        stored = self.store.builds()
        versions = self.store.agent_versions()
        to_build: dict[Path, list[AgentEntry]] = {}  # by folder: two builds in one folder run one after the other
        for agent in self.tournament.agents:
            if agent.name in self.withdrawn:
                continue
            version, outputs = versions.get(agent.name, ("", []))
            if not agent.build:
                self.store.set_agent_version(agent.name, self.versions.get(agent.name, ""), outputs)
            elif not (only_missing and agent.name in stored and agent.name not in also
                      and version == self.versions.get(agent.name)):
                to_build.setdefault(folder_of(self.tournament, agent), []).append(agent)

        def build(agent: AgentEntry) -> tuple[BuildResult, set[str]]:
            """One build, in its sandbox, and the paths it wrote into its folder."""
            before = folder_state(self.tournament, agent)
            outcome = run_build(agent.name, agent.build or "", agent.cwd, logs / f"{agent.name}.log",
                                self.tournament.build_timeout, self.config,
                                hidden=[self.tournament.results_dir.resolve()])
            try:
                return outcome, build_outputs(before, folder_state(self.tournament, agent))
            except OSError:  # it left a file we cannot read: its fingerprint will say so, naming it
                return outcome, set()

        def build_folder(agents: list[AgentEntry]) -> list[tuple[BuildResult, set[str]]]:
            return [build(agent) for agent in agents]

        failures: dict[str, BuildResult] = {}
        logs = self.tournament.results_dir / "build"
        for agents in to_build.values():
            for agent in agents:
                log(f"Building {agent.name}: {agent.build}")
        # Every build before the first game, as many at once as there are cores: one that hangs
        # holds nobody else, and is killed after build_timeout.
        with ThreadPoolExecutor(max_workers=max(1, min(usable_cores(), len(to_build) or 1))) as pool:
            done = list(pool.map(build_folder, to_build.values()))
        for outcome, written in (item for group in done for item in group):
            outputs = versions.get(outcome.agent, ("", []))[1]
            self.store.set_agent_version(outcome.agent, self.versions.get(outcome.agent, ""), {*outputs, *written})
            self.store.set_build(outcome)
            if not outcome.ok:
                failures[outcome.agent] = outcome
                log(f"Build of {outcome.agent} failed ({outcome.detail}); see {outcome.log}. "
                    "Its games are forfeits (reason: build); the others play on.")
        return failures

    def failed_builds(self) -> dict[str, BuildResult]:
        """Agents whose last build did not succeed (their games are forfeits), if builds are on."""
        if not self.build:
            return {}
        names = {agent.name for agent in self.tournament.agents if agent.build}
        return {name: b for name, b in self.store.builds().items() if name in names and not b.ok}

    def _renumber(self) -> None:
        self.numbers = {game.key: i for i, game in enumerate(self.store.scheduled_games(), 1)}

    def _pair_next_swiss_round(self) -> bool:
        """Pair the next Swiss round if the previous ones are finished; ``True`` if a round was added."""
        stored = self.store.rounds()
        number = len(stored) + 1
        if number > int(self.tournament.rounds or 0):
            return False
        if self.store.unfinished_games(exclude=self.withdrawn):
            return False
        finished = self.store.finished_games(exclude=self.withdrawn)
        # An agent added since the start is paired from this round on (with no points yet);
        # a withdrawn one is paired no more.
        active = pairing.active_names(self.tournament, self.withdrawn)
        table = standings_of(self.tournament, self.store, self.withdrawn, finished)
        scores = {line.agent: line.points for line in table.lines}
        met = {frozenset((g.white, g.black)) for g in finished}
        # Pairings stored but whose games are not all finished yet count as met too.
        met |= {frozenset((g.white, g.black)) for g in self.store.scheduled_games()}
        swiss = pairing.swiss_round(active, scores, met, self.store.byes())
        self.store.add_round(number, pairing.expand(self.tournament, number, swiss.pairs), swiss.bye, swiss.repeats)
        self._renumber()
        return True

    # -- playing ----------------------------------------------------------------

    def job(self, game: ScheduledGame, remote: bool) -> GameJob:
        t = self.tournament
        return GameJob(
            key=game.key,
            white=t.agent(game.white),
            black=t.agent(game.black),
            config=self.config,
            seed=game.seed,
            opening=tuple(move.line() for move in game_opening(t, game.index)),
            out_dir=None if remote else str(self.game_dir(game)),
            white_version=self.versions.get(game.white, ""),
            black_version=self.versions.get(game.black, ""),
        )

    def game_dir(self, game: ScheduledGame) -> Path:
        return game_directory(self.tournament, game.key, game.white, game.black)

    def cpu_line(self) -> str:
        """The start's line saying how the games at once are kept apart: their own cores, or loudly not."""
        sandboxed = self.tournament.referee.get("sandbox", "bwrap") == "bwrap"
        return cpu_line(self.concurrency or default_concurrency(), bool(self.scheduler), sandboxed)

    def make_pool(self) -> Pool:
        if self.scheduler:
            return DaskPool(self.scheduler, self.concurrency, self.scheduler_timeout)
        return LocalPool(self.concurrency or default_concurrency())

    def run(self) -> None:
        """Play every unfinished game (pairing Swiss rounds as they complete).

        Stops early, leaving the rest for ``resume``, after ``max_games``
        games or when :meth:`request_stop` is called.  The standings are
        :meth:`standings`' (not computed here: a match never reads them).
        """
        pool = self.make_pool()
        queue = deque(self._to_play())
        pending: dict[Any, ScheduledGame] = {}
        played = 0
        abandoned = True
        failed_builds = self.failed_builds()
        # The next game, marked running in the transaction of the last result (one sync for both).
        marked: Optional[StartMark] = None
        try:
            while True:
                while queue and len(pending) < pool.slots and not self._should_stop(played + len(pending)):
                    game = queue.popleft()
                    if marked is not None and marked.key == game.key:
                        attempt, marked = marked.attempt, None
                    else:
                        attempt = self.store.mark_running(game.key, runner=self.identity)
                    self._emit(ScheduleEvent(ScheduleEventKind.STARTED, game, self.numbers.get(game.key, 0)))
                    self._set_aside(game, attempt)
                    culprits = [failed_builds[n] for n in (game.white, game.black) if n in failed_builds]
                    if culprits:
                        # Not played: an agent that did not build cannot start.
                        outcome = self._build_forfeit(game, culprits)
                        if self.store.finish(game.key, outcome):
                            played += 1
                        self._emit(ScheduleEvent(ScheduleEventKind.FINISHED, game, self.numbers.get(game.key, 0), outcome))
                        continue
                    self.in_progress[game.key] = {"number": self.numbers.get(game.key, 0), "white": game.white,
                                                  "black": game.black, "started": time.monotonic(), "ply": 0,
                                                  "clocks": {"W": 0.0, "B": 0.0}, "to_move": "W",
                                                  "since": time.monotonic(), "live": not pool.remote}
                    pending[pool.submit(self.job(game, pool.remote), self._watcher(game))] = game
                if marked is not None:  # hearing the last result, the runner stopped (an SPRT decided, Ctrl-C...)
                    self.store.unmark(marked)
                    marked = None
                if not pending:
                    if self._should_stop(played) or self.only or not (self.tournament.format == "swiss"
                                                                      and self._pair_next_swiss_round()):
                        break
                    queue.extend(self._to_play())
                    continue
                for future in pool.wait(list(pending), timeout=0.5):
                    game = pending.pop(future)
                    self.in_progress.pop(game.key, None)
                    try:
                        result = future.result()
                        outcome = outcome_from(result)
                    except Exception as exc:  # noqa: BLE001 - a lost worker, a record not kept, a referee bug
                        # No result: the attempt is voided (and kept, with why) and resume plays it again.
                        why = f"{type(exc).__name__}: {exc}" if not isinstance(exc, GameFileError) else str(exc)
                        self.store.void(game.key, why)
                        self.failed.append((game.key, why))
                        self._emit(ScheduleEvent(ScheduleEventKind.FAILED, game, self.numbers.get(game.key, 0), error=why))
                        continue
                    if pool.remote:
                        self._save_remote_files(game, result, outcome)
                    following = queue[0] if (queue and marked is None and len(pending) < pool.slots
                                             and not self._should_stop(played + 1 + len(pending))) else None
                    if following is None:
                        finished = self.store.finish(game.key, outcome)
                    else:
                        finished, marked = self.store.finish_then_start(game.key, outcome, following.key,
                                                                        runner=self.identity)
                    if finished:
                        played += 1
                    self._emit(ScheduleEvent(ScheduleEventKind.FINISHED, game, self.numbers.get(game.key, 0), outcome))
            abandoned = bool(pending)
        finally:
            # Every game still marked running (in the pool, or just being
            # started when the signal came) is voided, with why, before its
            # agents are ended: whatever those games return now is not a result.
            self.in_progress.clear()
            self.store.void_running(f"the runner ({self.identity}) was stopped (Ctrl-C, SIGTERM or an error) "
                                    "before the game ended")
            pool.close(abandon=abandoned)

    def _to_play(self) -> list[ScheduledGame]:
        """The unfinished games this run plays: all of them, or only those of :attr:`only`."""
        games = self.store.unfinished_games(exclude=self.withdrawn)
        return [game for game in games if self.only in (game.white, game.black)] if self.only else games

    def _watcher(self, game: ScheduledGame) -> Callable[[Any], None]:
        """The referee's events of ``game`` kept as the move number and the clocks (read by the display).

        Each event is also appended to the game's live log (:mod:`.livelog`),
        which ``othello serve`` follows from another process.
        """
        key = game.key
        live_log = LiveLogWriter(self.game_dir(game))

        def watch(event: Any) -> None:
            live_log(event)
            state = self.in_progress.get(key)
            if state is None:
                return
            if event.kind in ("move", "lost-turn"):
                state["ply"] += 1
            if event.kind in ("move", "lost-turn", "waiting"):
                state["clocks"] = {colour.value: seconds for colour, seconds in event.clocks.items()}
            if event.kind == "waiting" and event.colour is not None:
                state["to_move"], state["since"] = event.colour.value, event.at

        return watch

    def request_stop(self) -> None:
        """Start no new game; the runner returns when the games in flight are done."""
        self.stop_requested.set()

    def _should_stop(self, count: int) -> bool:
        return self.stop_requested.is_set() or (self.max_games is not None and count >= self.max_games)

    def _emit(self, event: ScheduleEvent) -> None:
        if self.on_event is not None:
            self.on_event(event, self)

    def _set_aside(self, game: ScheduledGame, attempt: int) -> None:
        """Move the files of an earlier, voided attempt to ``games/voided/`` (kept, never overwritten)."""
        directory = self.game_dir(game)
        if not (directory.exists() or directory.is_symlink()):
            return
        voided = self.tournament.results_dir / "games" / "voided"
        target = _move_aside(directory, voided, f"{directory.name}.attempt{max(1, attempt - 1)}")
        if attempt > 1:
            self.store.set_attempt_files(game.key, attempt - 1, str(target))

    def _build_forfeit(self, game: ScheduledGame, culprits: list[BuildResult]) -> GameOutcome:
        """The result of a game an agent could not play because its build failed; its record written like any other."""
        names = {b.agent for b in culprits}
        winner = None if len(names) == 2 else BLACK if game.white in names else WHITE
        detail = "; ".join(f"the build of {b.agent} {'timed out' if b.status == 'timeout' else 'failed'} "
                           f"({b.detail}; see build/{b.agent}.log)" for b in culprits)
        record = GameRecord(
            white=game.white, black=game.black, seed=game.seed, time_per_move=self.tournament.time_per_move,
            result=Result(winner, Termination.BUILD, 2, 2, detail),
            extra={"tournament": {"game": game.key, "not_played": "build"},
                   "agents": {name: {"colour": colour, "version": self.versions.get(name, "")}
                              for name, colour in ((game.white, "W"), (game.black, "B"))}},
        )
        played = PlayedGame.of_record(record)
        outcome = outcome_from(played)
        outcome.game_dir = str(self._write_game_files(game, played.record_json, {}))
        return outcome

    def _write_game_files(self, game: ScheduledGame, record_json: str, stderr: dict[str, str]) -> Path:
        """Write a game's record (and logs) that the runner itself produced, in a fresh game directory."""
        from ...referee.files import write_atomically

        directory = self.game_dir(game)
        if directory.is_symlink() or directory.is_file():
            directory.unlink()
        elif directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            write_atomically(fd, "game.json", record_json)
            for name, text in stderr.items():
                write_atomically(fd, f"{name}.stderr.log", text)
        finally:
            os.close(fd)
        return directory

    def _save_remote_files(self, game: ScheduledGame, result: PlayedGame, outcome: GameOutcome) -> None:
        """A game played on another machine: keep its record (the exact bytes hashed) and stderr here too."""
        stderr = {game.white: result.white_stderr, game.black: result.black_stderr}
        outcome.game_dir = str(self._write_game_files(game, result.record_json, stderr))

    # -- results ----------------------------------------------------------------

    def standings(self) -> Standings:
        return standings_of(self.tournament, self.store, self.withdrawn)

    def progress(self) -> Progress:
        """The counts of :func:`progress` for this runner's tournament."""
        return progress(self.tournament, self.store)

    def close(self) -> None:
        self.store.close()
        self.lock.release()

