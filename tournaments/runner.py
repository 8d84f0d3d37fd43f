"""Running a tournament: the schedule, the games in parallel, every result stored at once.

The runner is the only writer of the database.  Games run in a pool (threads
on this machine, or a Dask cluster with ``scheduler``); each game is a call of
:func:`play_job`, which takes and returns plain data, so it runs the same on
a worker of another machine.  When a game comes back the runner stores it in
one transaction; if the runner dies, the games in flight are simply played
again by ``resume`` (their old files are removed first).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Protocol

from ..protocol import WHITE, GameRecord
from . import pairing
from .config import AgentEntry, Tournament, TournamentFileError, check_builtins
from .pairing import ScheduledGame
from .standings import Standings, compute
from .store import GameOutcome, Store

# A timeout is flagged as caused by load when the agent got less than this
# share of a core while its clock ran (an agent thinking hard uses ~100%).
LOAD_CPU_SHARE = 0.5


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def default_concurrency(cores: Optional[int] = None) -> int:
    """Games at once by default: one core per game, one core left for the referees.

    The two agents of a game alternate, so a game needs one core; the
    referees and the runner mostly wait on files but still need some CPU, so
    on more than two cores one is left for them.  Never more games than cores.
    """
    cores = cores or usable_cores()
    return max(1, cores - 1) if cores > 2 else 1


def planned_games(tournament: Tournament) -> int:
    """How many games the whole tournament has (Swiss included: every round pairs the same number)."""
    schedule = pairing.fixed_schedule(tournament)
    if schedule is not None:
        return len(schedule)
    per_round = len(tournament.agents) // 2 * tournament.games_per_pairing
    return per_round * int(tournament.rounds or 0)


# ---------------------------------------------------------------------------
# One game, as plain data in and out (runs locally or on a Dask worker)
# ---------------------------------------------------------------------------


def game_config_fields(tournament: Tournament) -> dict[str, Any]:
    """The referee's GameConfig fields from the file (time_per_move plus [referee])."""
    from ..referee import GameConfig

    known = {f.name for f in dataclasses.fields(GameConfig)}
    unknown = set(tournament.referee) - known
    if unknown:
        raise TournamentFileError(
            f"{tournament.path}: unknown key(s) in [referee]: {', '.join(sorted(unknown))}; "
            f"known keys are {', '.join(sorted(known - {'time_per_move'}))}"
        )
    fields = {"time_per_move": tournament.time_per_move, **tournament.referee}
    try:
        GameConfig(**fields)
    except (TypeError, ValueError) as exc:
        raise TournamentFileError(f"{tournament.path}: [referee]: {exc}") from None
    return fields


def agent_spec(entry: dict[str, Any]) -> Any:
    """The referee's AgentSpec for a tournament agent (given as ``dataclasses.asdict(AgentEntry)``)."""
    from ..referee import AgentSpec

    if entry.get("command") is None:
        return AgentSpec.builtin(entry.get("builtin") or entry["name"], file_name=entry["name"])
    # The program runs in its own directory inside the game directory
    # (PROTOCOL.md section 2); the agent's cwd is where the relative paths of
    # its command (alice.py, ./bob) are found.
    return AgentSpec.parse(f"{entry['name']}={entry['command']}", base=Path(entry["cwd"]) if entry.get("cwd") else None)


def play_job(job: dict[str, Any]) -> dict[str, Any]:
    """Play one game described by plain data; return the record and the agents' stderr as plain data.

    ``job["out_dir"]`` is the game directory, or ``None`` to play in a
    temporary directory and return everything (a worker on another machine).
    Never raises for an agent's fault: the referee makes that a result.
    """
    from ..referee import GameConfig, play_game

    white, black = agent_spec(job["white"]), agent_spec(job["black"])
    config = GameConfig(**job["config"])
    temporary = job.get("out_dir") is None
    out_dir = Path(tempfile.mkdtemp(prefix="othello-game-")) if temporary else Path(job["out_dir"])
    try:
        if out_dir.exists() and not temporary:
            shutil.rmtree(out_dir)  # a game replayed after a crash starts from scratch
        out_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        record = play_game(white, black, config, out_dir, seed=job["seed"])
        wall = time.monotonic() - started
        return {
            "record": record.to_dict(),
            "white_stderr": _read_stderr(out_dir, record, white.label),
            "black_stderr": _read_stderr(out_dir, record, black.label),
            "worker": socket.gethostname(),
            "pid": os.getpid(),
            "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0,
            "cores": usable_cores(),
            "wall": wall,
            "game_dir": "" if temporary else str(out_dir),
        }
    finally:
        if temporary:
            shutil.rmtree(out_dir, ignore_errors=True)


def _read_stderr(out_dir: Path, record: GameRecord, label: str) -> str:
    """The agent's captured output: the file the referee names in the record (beside the agent's directory)."""
    info = record.extra.get("agents", {}).get(label, {})
    name = info.get("stderr_log") if isinstance(info, dict) else None
    if not isinstance(name, str):
        return ""
    path = out_dir / name
    if path.is_file() and not path.is_symlink():
        return path.read_text(encoding="utf-8", errors="replace")
    return ""


def outcome_from(result: dict[str, Any]) -> GameOutcome:
    """Turn what :func:`play_job` returned into the row the store keeps."""
    record = GameRecord.from_dict(result["record"])
    assert record.result is not None, "the referee always ends a game with a result"
    seconds = {"W": 0.0, "B": 0.0}
    for entry in record.moves:
        seconds[entry.move.colour.value] += entry.seconds
    cpu = {colour: times.get("cpu_seconds") for colour, times in _agent_times(record).items()}
    outcome = GameOutcome(
        winner=record.result.winner.value if record.result.winner else None,
        reason=record.result.reason,
        detail=record.result.detail,
        white_discs=record.result.white_discs,
        black_discs=record.result.black_discs,
        plies=len(record.moves),
        white_seconds=seconds["W"],
        black_seconds=seconds["B"],
        white_cpu=cpu.get("W"),
        black_cpu=cpu.get("B"),
        record=result["record"],
        white_stderr=result.get("white_stderr", ""),
        black_stderr=result.get("black_stderr", ""),
        game_dir=result.get("game_dir", ""),
        worker=str(result.get("worker", "")),
    )
    outcome.load_flag = load_flag(record, outcome, float(result.get("load", 0.0)), int(result.get("cores", 1)))
    return outcome


def _agent_times(record: GameRecord) -> dict[str, dict[str, float]]:
    """Per colour, the clock seconds and CPU seconds the referee measured (``record.extra["agents"]``)."""
    found: dict[str, dict[str, float]] = {}
    agents = record.extra.get("agents")
    if isinstance(agents, dict):
        for info in agents.values():
            if not isinstance(info, dict) or info.get("colour") not in ("W", "B"):
                continue
            times = found.setdefault(info["colour"], {})
            for key in ("seconds", "cpu_seconds"):
                if isinstance(info.get(key), (int, float)):
                    times[key] = float(info[key])
    return found


def load_flag(record: GameRecord, outcome: GameOutcome, load: float, cores: int) -> Optional[str]:
    """A note when a timeout looks caused by load rather than by the agent, else ``None``.

    Two signs: the agent that ran out of time used far less CPU than the wall
    time its clock ran (it was waiting for a core, not thinking), or the
    machine's load average exceeded its cores when the game ended.
    """
    if outcome.reason != "timeout" or outcome.winner is None:
        return None
    loser = "B" if outcome.winner == "W" else "W"
    times = _agent_times(record).get(loser, {})
    limit = (record.time_per_move or 0.0) + 0.25
    wall = times.get("seconds") or ((outcome.white_seconds if loser == "W" else outcome.black_seconds) + limit)
    cpu = times.get("cpu_seconds")
    notes = []
    if cpu is not None and wall > 0 and cpu < LOAD_CPU_SHARE * wall:
        notes.append(f"CPU {cpu:.2f} s over {wall:.2f} s of clock")
    if load > cores or record.extra.get("load_suspect"):
        notes.append(f"load average {load:.1f} on {cores} cores")
    return "; ".join(notes) or None


# ---------------------------------------------------------------------------
# Pools: where the games run
# ---------------------------------------------------------------------------


class Pool(Protocol):
    """Where games run: ``slots`` games at once; ``remote`` pools return files as data."""

    remote: bool

    @property
    def slots(self) -> int: ...

    def submit(self, job: dict[str, Any]) -> Any: ...

    def wait(self, futures: list[Any], timeout: float) -> list[Any]: ...

    def close(self, abandon: bool) -> None: ...


class LocalPool:
    """Games in threads of this process (each game's agents are processes of their own)."""

    remote = False

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=slots, thread_name_prefix="game")
        self.children_before = _child_pids()

    def submit(self, job: dict[str, Any]) -> concurrent.futures.Future[dict[str, Any]]:
        return self.executor.submit(play_job, job)

    def wait(self, futures: list[Any], timeout: float) -> list[Any]:
        done, _ = concurrent.futures.wait(futures, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED)
        return list(done)

    def close(self, abandon: bool) -> None:
        if abandon:
            # The games in flight are abandoned (replayed on resume): end their
            # agents, so the referee threads return at once.
            _terminate_children(self.children_before)
        self.executor.shutdown(wait=True, cancel_futures=True)


class DaskPool:
    """Games on a Dask distributed cluster; the runner keeps the only database."""

    remote = True

    def __init__(self, address: str, slots: Optional[int], timeout: float = 20.0) -> None:
        from distributed import Client

        try:
            self.client = Client(address, timeout=f"{timeout}s")
        except OSError as exc:
            raise RunnerError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        self.fixed_slots = slots
        self.checked = 0.0
        self.total_threads = 1

    @property
    def slots(self) -> int:
        """Games in flight: as given, else one per worker thread (workers may join or leave)."""
        if self.fixed_slots:
            return self.fixed_slots
        if time.monotonic() - self.checked > 5.0:
            self.total_threads = max(1, sum(self.client.nthreads().values()))
            self.checked = time.monotonic()
        return self.total_threads

    def submit(self, job: dict[str, Any]) -> Any:
        # pure=False: a game replayed after a crash is a new task, not a cached result.
        return self.client.submit(play_job, job, pure=False, key=f"othello-{job['key']}-{time.time_ns()}")

    def wait(self, futures: list[Any], timeout: float) -> list[Any]:
        from distributed import wait

        try:
            done, _ = wait(futures, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:  # also asyncio's and Dask's (aliases since Python 3.11)
            return []
        return list(done)

    def close(self, abandon: bool) -> None:
        self.client.close()


def _child_pids() -> set[int]:
    import psutil

    return {child.pid for child in psutil.Process().children()}


def _terminate_children(keep: set[int]) -> None:
    """Kill the processes this runner started (the agents of the abandoned games) and theirs."""
    import psutil

    for child in psutil.Process().children():
        if child.pid in keep:
            continue
        try:
            family = [child, *child.children(recursive=True)]
        except psutil.Error:
            continue
        for process in family:
            try:
                process.kill()
            except psutil.Error:
                pass


class RunnerError(RuntimeError):
    """The tournament cannot run (a setup problem, not an agent's fault)."""


# ---------------------------------------------------------------------------
# The runner
# ---------------------------------------------------------------------------


@dataclass
class GameEvent:
    """What the display hears: a game started or finished."""

    kind: str  # "started", "finished" or "failed" (not the agents' fault: a lost worker; replayed on resume)
    game: ScheduledGame
    number: int  # 1-based position in the schedule
    outcome: Optional[GameOutcome] = None
    error: str = ""


class Runner:
    """Plays the unfinished games of a tournament and stores each result as it comes."""

    def __init__(
        self,
        tournament: Tournament,
        *,
        concurrency: Optional[int] = None,
        scheduler: Optional[str] = None,
        scheduler_timeout: float = 20.0,
        on_event: Optional[Callable[[GameEvent, "Runner"], None]] = None,
        max_games: Optional[int] = None,
        build: bool = True,
    ) -> None:
        self.tournament = tournament
        self.concurrency = concurrency or tournament.concurrency
        self.scheduler = scheduler
        self.scheduler_timeout = scheduler_timeout
        self.on_event = on_event
        self.max_games = max_games
        self.build = build
        self.store = Store(tournament.database)
        self.config_fields: dict[str, Any] = {}
        self.numbers: dict[str, int] = {}
        self.stop_requested = threading.Event()
        self.failed: list[tuple[str, str]] = []

    # -- setup ------------------------------------------------------------------

    def prepare(self) -> None:
        """Check the file against the built-in agents and the referee, bind the database, store fixed rounds."""
        from ..agents import registry

        check_builtins(self.tournament, registry.names())
        self.config_fields = game_config_fields(self.tournament)
        for agent in self.tournament.agents:
            try:
                agent_spec(dataclasses.asdict(agent))
            except ValueError as exc:
                raise TournamentFileError(f"{self.tournament.path}: agent {agent.name!r}: {exc}") from None
        self.store.bind(self.tournament.schedule_key(), self.tournament.to_dict())
        self.store.reset_running()
        rounds = pairing.fixed_rounds(self.tournament)
        if rounds is not None:
            for number, pairs in enumerate(rounds, 1):
                if not self.store.has_round(number):
                    self.store.add_round(number, pairing.expand(self.tournament, number, pairs))
        else:
            self._pair_next_swiss_round()
        self._renumber()

    def prepare_builtins(self, log: Callable[[str], None]) -> bool:
        """Make the built-in agents ready before any game, like a build (the champion compiles once)."""
        from ..agents import registry

        return registry.prepare([agent.builtin or agent.name for agent in self.tournament.agents if agent.is_builtin], log)

    def build_agents(self, log: Callable[[str], None]) -> dict[str, int]:
        """Run each agent's build command once, in its directory; return the failures' exit codes."""
        failures: dict[str, int] = {}
        logs = self.tournament.results_dir / "build"
        for agent in self.tournament.agents:
            if not agent.build:
                continue
            logs.mkdir(parents=True, exist_ok=True)
            log(f"Building {agent.name}: {agent.build}")
            with open(logs / f"{agent.name}.log", "w", encoding="utf-8") as output:
                done = subprocess.run(agent.build, shell=True, cwd=agent.cwd, stdout=output, stderr=subprocess.STDOUT)
            if done.returncode:
                failures[agent.name] = done.returncode
                log(f"Build of {agent.name} failed (exit {done.returncode}); see {logs / (agent.name + '.log')}. "
                    "Its games are played anyway and will probably be lost.")
        return failures

    def _renumber(self) -> None:
        self.numbers = {game.key: i for i, game in enumerate(self.store.scheduled_games(), 1)}

    def _pair_next_swiss_round(self) -> bool:
        """Pair the next Swiss round if the previous ones are finished; ``True`` if a round was added."""
        stored = self.store.rounds()
        number = len(stored) + 1
        if number > int(self.tournament.rounds or 0):
            return False
        if self.store.unfinished_games():
            return False
        finished = self.store.finished_games()
        table = compute(self.tournament.agent_names, finished, self.store.byes())
        scores = {line.agent: line.points for line in table.lines}
        met = {frozenset((g.white, g.black)) for g in finished}
        # Pairings stored but whose games are not all finished yet count as met too.
        met |= {frozenset((g.white, g.black)) for g in self.store.scheduled_games()}
        swiss = pairing.swiss_round(self.tournament.agent_names, scores, met, self.store.byes())
        self.store.add_round(number, pairing.expand(self.tournament, number, swiss.pairs), swiss.bye, swiss.repeats)
        self._renumber()
        return True

    # -- playing ----------------------------------------------------------------

    def job(self, game: ScheduledGame, remote: bool) -> dict[str, Any]:
        t = self.tournament
        return {
            "key": game.key,
            "white": dataclasses.asdict(t.agent(game.white)),
            "black": dataclasses.asdict(t.agent(game.black)),
            "config": self.config_fields,
            "seed": game.seed,
            "out_dir": None if remote else str(self.game_dir(game)),
        }

    def game_dir(self, game: ScheduledGame) -> Path:
        return self.tournament.results_dir / "games" / f"{game.key}_{game.white}_vs_{game.black}"

    def make_pool(self) -> Pool:
        if self.scheduler:
            return DaskPool(self.scheduler, self.concurrency, self.scheduler_timeout)
        return LocalPool(self.concurrency or default_concurrency())

    def run(self) -> Standings:
        """Play every unfinished game (pairing Swiss rounds as they complete); return the standings.

        Stops early, leaving the rest for ``resume``, after ``max_games``
        games or when :meth:`request_stop` is called.
        """
        pool = self.make_pool()
        queue = deque(self.store.unfinished_games())
        pending: dict[Any, ScheduledGame] = {}
        played = 0
        abandoned = True
        try:
            while True:
                while queue and len(pending) < pool.slots and not self._should_stop(played + len(pending)):
                    game = queue.popleft()
                    self.store.mark_running(game.key)
                    pending[pool.submit(self.job(game, pool.remote))] = game
                    self._emit(GameEvent("started", game, self.numbers.get(game.key, 0)))
                if not pending:
                    if self._should_stop(played) or not (self.tournament.format == "swiss" and self._pair_next_swiss_round()):
                        break
                    queue.extend(self.store.unfinished_games())
                    continue
                for future in pool.wait(list(pending), timeout=0.5):
                    game = pending.pop(future)
                    try:
                        result = future.result()
                        outcome = outcome_from(result)
                    except Exception as exc:  # noqa: BLE001 - a lost worker or a referee bug, not an agent's fault
                        # The game stays unfinished: resume plays it again.
                        self.store.unmark_running(game.key)
                        self.failed.append((game.key, f"{type(exc).__name__}: {exc}"))
                        self._emit(GameEvent("failed", game, self.numbers.get(game.key, 0), error=str(exc)))
                        continue
                    if pool.remote:
                        self._save_remote_files(game, result, outcome)
                    if self.store.finish(game.key, outcome):
                        played += 1
                    self._emit(GameEvent("finished", game, self.numbers.get(game.key, 0), outcome))
            abandoned = bool(pending)
        finally:
            pool.close(abandon=abandoned)
            self.store.reset_running()
        return self.standings()

    def request_stop(self) -> None:
        """Start no new game; the runner returns when the games in flight are done."""
        self.stop_requested.set()

    def _should_stop(self, count: int) -> bool:
        return self.stop_requested.is_set() or (self.max_games is not None and count >= self.max_games)

    def _emit(self, event: GameEvent) -> None:
        if self.on_event is not None:
            self.on_event(event, self)

    def _save_remote_files(self, game: ScheduledGame, result: dict[str, Any], outcome: GameOutcome) -> None:
        """A game played on another machine: keep its record and stderr here too."""
        directory = self.game_dir(game)
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
        (directory / "game.json").write_text(json.dumps(result["record"], indent=2) + "\n", encoding="utf-8")
        for side, name in (("white", game.white), ("black", game.black)):
            (directory / f"{name}.stderr.log").write_text(result.get(f"{side}_stderr", ""), encoding="utf-8")
        outcome.game_dir = str(directory)

    # -- results ----------------------------------------------------------------

    def standings(self) -> Standings:
        return compute(self.tournament.agent_names, self.store.finished_games(), self.store.byes())

    def close(self) -> None:
        self.store.close()


def status(tournament: Tournament) -> dict[str, Any]:
    """The tournament's state as plain data (``othello tournament status --json``)."""
    with Store(tournament.database, create=False) as store:
        counts = store.counts()
        table = compute(tournament.agent_names, store.finished_games(), store.byes())
        flagged = [
            {"game": row["key"], "white": row["white"], "black": row["black"], "note": row["load_flag"]}
            for row in store.game_rows()
            if row["load_flag"]
        ]
        return {
            "name": tournament.name,
            "format": tournament.format,
            "scheduled": planned_games(tournament),
            "finished": counts["finished"],
            "running": counts["running"],
            "rounds": {"paired": len(store.rounds()), "total": pairing.total_rounds(tournament)},
            "complete": counts["finished"] == planned_games(tournament),
            "standings": table.to_list(),
            "crosstable": table.crosstable_dict(),
            "load_flagged": flagged,
            "database": str(tournament.database),
            "rating_model": "Bradley-Terry maximum likelihood on the Elo scale (average 1500), 95% intervals",
        }


@contextlib.contextmanager
def sigterm_stops() -> Iterator[None]:
    """While inside, SIGTERM stops the runner like Ctrl-C (main thread only; the old handler comes back)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = [
    "AgentEntry", "GameEvent", "LocalPool", "DaskPool", "Runner", "RunnerError", "default_concurrency",
    "planned_games", "play_job", "status", "usable_cores",
]
