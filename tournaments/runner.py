"""Running a tournament: the schedule, the games in parallel, every result stored at once.

The runner is the only writer of the database.  Games run in a pool (threads
on this machine, or a Dask cluster with ``scheduler``); each game is a call of
:func:`play_job`, which takes and returns plain data, so it runs the same on
a worker of another machine.  When a game comes back the runner stores it in
one transaction, with the SHA-256 of the exact ``game.json`` the referee
wrote.  One runner at a time holds the tournament (:mod:`.lock`).  If the
runner stops, the games in flight are voided: ``resume`` replays them from
the same seed and colours, keeps each voided attempt in the database (and its
files under ``games/voided/``), and ends any agent the dead runner left.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Protocol

from ..protocol import BLACK, WHITE, GameRecord, Result, Termination, parse_move
from ..referee.config import GRACE_SECONDS
from . import lock as locking
from . import pairing
from .config import AgentEntry, Tournament, TournamentFileError, check_builtins
from .livelog import LiveLogWriter
from .pairing import ScheduledGame, game_opening
from .safefiles import GAME_RECORD_LIMIT, STDERR_READ_LIMIT, read_ends, read_whole
from .standings import Standings, compute
from .store import BuildResult, GameOutcome, Store

# A game voided this many times (in flight at a stop, or unplayable) is
# pointed out to the instructor: an agent may be stopping the runner on purpose.
VOIDED_FLAG_AT = 2

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


def planned_games(tournament: Tournament, withdrawn: Any = ()) -> int:
    """How many games the file's tournament has, before any is stored (Swiss: every round pairs the same number)."""
    schedule = pairing.fixed_schedule(tournament, withdrawn)
    if schedule is not None:
        return len(schedule)
    per_round = len(pairing.active_names(tournament, withdrawn)) // 2 * tournament.games_per_pairing
    return per_round * int(tournament.rounds or 0)


def withdrawn_agents(tournament: Tournament, store: Optional[Store]) -> dict[str, str]:
    """Every withdrawn agent and why: ``withdraw = true`` in the file, or ``othello tournament withdraw``."""
    found = dict(store.withdrawals()) if store is not None else {}
    for name, reason in tournament.withdrawn.items():
        found.setdefault(name, reason)
    return {name: found[name] for name in tournament.agent_names if name in found}


def progress(tournament: Tournament, store: Optional[Store]) -> dict[str, Any]:
    """Counts that add up, from the database and the file (no database: the file's plan).

    ``scheduled`` counts every game that will count: those stored (less the
    withdrawn agents' games, counted apart in ``excluded``), the new pairings
    the file adds and ``run`` will store (``to_add``), and a Swiss's rounds
    not paired yet.  ``rounds`` says how many rounds the tournament has, how
    many are paired (stored) and how many are complete (every counted game
    finished).
    """
    withdrawn = withdrawn_agents(tournament, store)
    if store is None:
        total = planned_games(tournament, withdrawn)
        rounds = pairing.total_rounds(tournament)
        return {"scheduled": total, "finished": 0, "running": 0, "excluded": 0, "to_add": 0,
                "withdrawn": withdrawn, "rounds": {"total": rounds, "paired": 0, "complete": 0}}
    counts = store.counts(exclude=withdrawn)
    stored = store.scheduled_games()
    active = store.scheduled_games(exclude=withdrawn)
    unfinished = {game.key for game in store.unfinished_games(exclude=withdrawn)}
    paired = sorted({game.round for game in stored} | {row["round"] for row in store.rounds()})
    complete = sum(1 for number in paired
                   if not any(game.round == number and game.key in unfinished for game in active))
    if tournament.format == "swiss":
        to_add = 0
        per_round = len(pairing.active_names(tournament, withdrawn)) // 2 * tournament.games_per_pairing
        future = max(0, int(tournament.rounds or 0) - len(paired)) * per_round
        total_rounds = max(int(tournament.rounds or 0), len(paired))
    elif not stored:
        to_add = planned_games(tournament, withdrawn)
        future = 0
        total_rounds = pairing.total_rounds(tournament)
    else:
        to_add = len(pairing.additions(tournament, stored, withdrawn))
        future = 0
        total_rounds = len(paired) + (1 if to_add else 0)
    return {
        "scheduled": counts["scheduled"] + to_add + future,
        "finished": counts["finished"],
        "running": counts["running"],
        "excluded": counts["excluded"],
        "to_add": to_add,
        "withdrawn": withdrawn,
        "rounds": {"total": total_rounds, "paired": len(paired), "complete": complete},
    }


# ---------------------------------------------------------------------------
# One game, as plain data in and out (runs locally or on a Dask worker)
# ---------------------------------------------------------------------------


def game_config_fields(tournament: Tournament) -> dict[str, Any]:
    """The referee's GameConfig fields from the file (time_per_move plus [referee], checked when loaded)."""
    fields = {"time_per_move": tournament.time_per_move, **tournament.referee}
    # No agent may see the tournament's results, even from a folder it may read.
    fields["hidden_paths"] = [str(tournament.results_dir.resolve())]
    return fields


def agent_spec(entry: dict[str, Any]) -> Any:
    """The referee's AgentSpec for a tournament agent (given as ``dataclasses.asdict(AgentEntry)``)."""
    from ..agents.registry import sizes_of
    from ..protocol import BOARD_SIZES
    from ..referee import AgentSpec

    # The record, the standings and the agent's directory use its name (the
    # label); NAME.in / NAME.out use ``files`` when its program hard-codes them.
    files = entry.get("files") or entry["name"]
    if entry.get("command") is None:
        builtin = entry.get("builtin") or entry["name"]
        return AgentSpec.builtin(builtin, file_name=files, sizes=sizes_of(builtin)).relabelled(entry["name"])
    # The program runs in its own directory inside the game directory
    # (PROTOCOL.md section 2); the agent's cwd is where the relative paths of
    # its command (alice.py, ./bob) are found.
    spec = AgentSpec.from_command(entry["name"], entry["command"], base=Path(entry["cwd"]) if entry.get("cwd") else None)
    return dataclasses.replace(spec, file_name=files, openings=bool(entry.get("openings", False)),
                               sizes=BOARD_SIZES if entry.get("sizes") else spec.sizes)


def game_directory(tournament: Tournament, key: str, white: str, black: str) -> Path:
    """Where a game of the tournament is played and kept (its agents' directories, ``game.json``, ``live.jsonl``)."""
    return tournament.results_dir / "games" / f"{key}_{white}_vs_{black}"


class GameFileError(RuntimeError):
    """The game's record could not be kept as the referee wrote it (not a regular file, changed, too big)."""


def play_job(job: dict[str, Any], on_event: Optional[Callable[[Any], None]] = None) -> dict[str, Any]:
    """Play one game described by plain data; return the record and the agents' stderr as plain data.

    ``job["out_dir"]`` is the game directory, or ``None`` to play in a
    temporary directory and return everything (a worker on another machine).
    Never raises for an agent's fault: the referee makes that a result.  It
    raises :class:`GameFileError` when ``game.json`` is not, byte for byte,
    the record the referee produced (a directory or a link planted in its
    place, or a file rewritten after the referee wrote it): that game has no
    result anybody could trust, and the runner says so.  ``on_event``
    hears the referee's events (the live display's moves and clocks; only
    where the game runs in this process).
    """
    from ..referee import GameConfig, play_game

    white, black = agent_spec(job["white"]), agent_spec(job["black"])
    config = GameConfig(**job["config"])
    temporary = job.get("out_dir") is None
    out_dir = Path(tempfile.mkdtemp(prefix="othello-game-")) if temporary else Path(job["out_dir"])
    try:
        if out_dir.exists() and not temporary:
            shutil.rmtree(out_dir)  # the runner moves a voided attempt aside first; this is a last resort
        out_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        try:
            opening = [parse_move(line) for line in job.get("opening", [])]
            record = play_game(white, black, config, out_dir, seed=job["seed"], on_event=on_event, opening=opening)
        except OSError as exc:
            raise GameFileError(_record_problem(out_dir, f"the referee could not write it: {exc}")) from None
        wall = time.monotonic() - started
        text = record.to_json()
        try:
            written = read_whole(out_dir, "game.json", GAME_RECORD_LIMIT)
        except OSError as exc:
            raise GameFileError(_record_problem(out_dir, str(exc))) from None
        if written != text.encode("utf-8"):
            raise GameFileError(f"{out_dir / 'game.json'} was changed after the referee wrote it; the game is void")
        return {
            "record": record.to_dict(),
            "record_json": text,
            "record_sha256": hashlib.sha256(written).hexdigest(),
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


def _record_problem(out_dir: Path, what: str) -> str:
    path = out_dir / "game.json"
    if path.is_symlink():
        what = f"{path} is a symbolic link"
    elif path.exists() and not path.is_file():
        what = f"{path} is a directory or a special file, not a regular file"
    return f"the record of this game was not kept: {what}; the game is void (not scored), and listed by status"


def _read_stderr(out_dir: Path, record: GameRecord, label: str) -> str:
    """The agent's captured output: the file the referee names in the record (beside the agent's directory).

    Read capped (its first and last 32 KiB) and never through a link: an
    agent that made it a link to someone else's file, or a sparse file of
    100 GB, costs nothing and leaks nothing; a note says what was found.
    """
    info = record.extra.get("agents", {}).get(label, {})
    name = info.get("stderr_log") if isinstance(info, dict) else None
    if not isinstance(name, str):
        return ""
    try:
        return read_ends(out_dir, name, STDERR_READ_LIMIT)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"[not read: {exc}]"


def outcome_from(result: dict[str, Any]) -> GameOutcome:
    """Turn what :func:`play_job` returned into the row the store keeps."""
    record = GameRecord.from_dict(result["record"])
    assert record.result is not None, "the referee always ends a game with a result"
    seconds = {"W": 0.0, "B": 0.0}
    for entry in record.moves:
        seconds[entry.move.colour.value] += entry.seconds
    cpu = {colour: times.get("cpu_seconds") for colour, times in _agent_times(record).items()}
    outcome = GameOutcome(
        result=record.result,
        plies=len(record.moves),
        white_seconds=seconds["W"],
        black_seconds=seconds["B"],
        white_cpu=cpu.get("W"),
        black_cpu=cpu.get("B"),
        record=result["record"],
        record_text=result.get("record_json"),
        record_sha256=result.get("record_sha256"),
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
    loser = outcome.result.loser
    if outcome.result.termination is not Termination.TIMEOUT or loser is None:
        return None
    times = _agent_times(record).get(loser.value, {})
    limit = (record.time_per_move or 0.0) + GRACE_SECONDS
    wall = times.get("seconds") or ((outcome.white_seconds if loser is WHITE else outcome.black_seconds) + limit)
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

    def submit(self, job: dict[str, Any], on_event: Optional[Callable[[Any], None]] = None) -> Any: ...

    def wait(self, futures: list[Any], timeout: float) -> list[Any]: ...

    def close(self, abandon: bool) -> None: ...


class LocalPool:
    """Games in threads of this process (each game's agents are processes of their own)."""

    remote = False

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=slots, thread_name_prefix="game")
        self.children_before = _child_pids()

    def submit(self, job: dict[str, Any],
               on_event: Optional[Callable[[Any], None]] = None) -> concurrent.futures.Future[dict[str, Any]]:
        return self.executor.submit(play_job, job, on_event)

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

    def submit(self, job: dict[str, Any], on_event: Optional[Callable[[Any], None]] = None) -> Any:
        # The game runs on another machine: no live moves (the display shows who plays whom and since when).
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


def kill_orphans(root: Path) -> int:
    """End the agent processes a dead runner left under ``root`` (the games directory); return how many.

    An agent process is recognised by the ``OTHELLO_DIR`` the referee puts in
    its environment (kept by its daemons too) or by a working directory in an
    agent's directory (``root/GAME/AGENT``); only this user's processes, and
    only while this runner holds the tournament's lock, so none can be a
    live game's.
    """
    import psutil

    root = root.resolve()
    marker = f"OTHELLO_DIR={root}/"
    killed = 0
    for process in psutil.process_iter(["pid", "uids", "cwd"]):
        try:
            if process.info["pid"] == os.getpid() or process.info["uids"] is None or process.info["uids"].real != os.getuid():
                continue
            cwd = process.info.get("cwd")
            inside = bool(cwd) and len(Path(cwd).parts) > len(root.parts) + 1 and Path(cwd).is_relative_to(root)
            if not inside:
                with open(f"/proc/{process.pid}/environ", "rb") as handle:
                    inside = marker.encode() in handle.read()
            if inside:
                process.kill()
                killed += 1
        except (psutil.Error, OSError, ValueError):
            continue
    return killed


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
        on_event: Optional[Callable[[GameEvent, "Runner"], None]] = None,
        max_games: Optional[int] = None,
        build: bool = True,
        fresh: bool = False,
    ) -> None:
        self.tournament = tournament
        self.concurrency = concurrency or tournament.concurrency
        self.scheduler = scheduler
        self.scheduler_timeout = scheduler_timeout
        self.on_event = on_event
        self.max_games = max_games
        self.build = build
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
        self.config_fields: dict[str, Any] = {}
        self.numbers: dict[str, int] = {}
        self.stop_requested = threading.Event()
        self.failed: list[tuple[str, str]] = []
        self.orphans_killed = 0
        self.voided_at_start: list[str] = []
        self.added: list[ScheduledGame] = []  # games of agents added to the file since the last run
        # The games being played now, for the live display: who plays whom, the move, the clocks.
        self.in_progress: dict[str, dict[str, Any]] = {}
        self.withdrawn: dict[str, str] = {}

    # -- setup ------------------------------------------------------------------

    def prepare(self) -> None:
        """Check the file against the built-in agents, bind the database, clean up after a dead runner, store rounds."""
        from ..agents import registry

        check_builtins(self.tournament, registry.names(), registry.sizes_of)
        self.config_fields = game_config_fields(self.tournament)
        if self.config_fields.get("sandbox", "bwrap") == "bwrap":
            from ..referee.sandbox import SandboxUnavailable, require

            try:  # stop before the first game, not with every game a forfeit
                require()
            except SandboxUnavailable as exc:
                raise TournamentFileError(f"{self.tournament.path}: {exc}") from None
        for agent in self.tournament.agents:
            try:
                agent_spec(dataclasses.asdict(agent))
            except ValueError as exc:
                raise TournamentFileError(f"{self.tournament.path}: agent {agent.name!r}: {exc}") from None
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

    def prepare_builtins(self, log: Callable[[str], None]) -> bool:
        """Make the built-in agents ready before any game, like a build (the champion compiles once)."""
        from ..agents import registry

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

    def rerun(self, agent: str, why: str) -> list[str]:
        """Queue every finished game of ``agent`` again (after a resubmission); return their keys.

        Each result is copied into the ``replaced`` table and its files moved
        to ``games/replaced/`` before the game goes back in the queue, with
        its seed and colours: the history keeps it, the standings do not.
        """
        if agent not in self.tournament.agent_names:
            raise TournamentFileError(f"{self.tournament.path}: no agent named {agent!r} "
                                      f"(agents: {', '.join(self.tournament.agent_names)})")
        if agent in self.withdrawn:
            raise TournamentFileError(f"{self.tournament.path}: {agent} is withdrawn ({self.withdrawn[agent]}); "
                                      "a withdrawn agent's games are not played")
        rows = self.store.replace_results(agent, why, exclude=self.withdrawn)
        target = self.tournament.results_dir / "games" / "replaced"
        for row in rows:
            directory = Path(row["game_dir"] or "")
            if row["game_dir"] and (directory.exists() or directory.is_symlink()):
                target.mkdir(parents=True, exist_ok=True)
                kept = target / f"{directory.name}.attempt{row['attempts']}"
                suffix = 1
                while kept.exists() or kept.is_symlink():
                    suffix += 1
                    kept = target / f"{directory.name}.attempt{row['attempts']}-{suffix}"
                os.rename(directory, kept)
                self.store.set_replaced_files(row["key"], row["attempts"], str(kept))
        return [row["key"] for row in rows]

    def build_agents(self, log: Callable[[str], None], only_missing: bool = False,
                     also: tuple[str, ...] = ()) -> dict[str, BuildResult]:
        """Run each agent's build command once, in its directory, with the file's time limit; return the failures.

        The outcome of every build is stored, so a resumed run keeps the
        forfeits of an agent that did not build; ``only_missing`` (resume)
        builds only agents with no stored outcome (the runner died while building),
        and those named in ``also`` (a rerun rebuilds its agent); withdrawn agents are never built.
        """
        from ..referee import GameConfig
        from .build import run_build

        failures: dict[str, BuildResult] = {}
        logs = self.tournament.results_dir / "build"
        stored = self.store.builds()
        for agent in self.tournament.agents:
            if not agent.build or agent.name in self.withdrawn:
                continue
            if only_missing and agent.name in stored and agent.name not in also:
                continue
            log(f"Building {agent.name}: {agent.build}")
            outcome = run_build(agent.name, agent.build, agent.cwd, logs / f"{agent.name}.log",
                                self.tournament.build_timeout, GameConfig(**self.config_fields),
                                hidden=[self.tournament.results_dir.resolve()])
            self.store.set_build(outcome)
            if not outcome.ok:
                failures[agent.name] = outcome
                log(f"Build of {agent.name} failed ({outcome.detail}); see {outcome.log}. "
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
        table = compute(active, finished, self.store.byes())
        scores = {line.agent: line.points for line in table.lines}
        met = {frozenset((g.white, g.black)) for g in finished}
        # Pairings stored but whose games are not all finished yet count as met too.
        met |= {frozenset((g.white, g.black)) for g in self.store.scheduled_games()}
        swiss = pairing.swiss_round(active, scores, met, self.store.byes())
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
            "opening": [move.line() for move in game_opening(t, game.index)],
            "out_dir": None if remote else str(self.game_dir(game)),
        }

    def game_dir(self, game: ScheduledGame) -> Path:
        return game_directory(self.tournament, game.key, game.white, game.black)

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
        queue = deque(self.store.unfinished_games(exclude=self.withdrawn))
        pending: dict[Any, ScheduledGame] = {}
        played = 0
        abandoned = True
        failed_builds = self.failed_builds()
        try:
            while True:
                while queue and len(pending) < pool.slots and not self._should_stop(played + len(pending)):
                    game = queue.popleft()
                    attempt = self.store.mark_running(game.key, runner=self.identity)
                    self._emit(GameEvent("started", game, self.numbers.get(game.key, 0)))
                    self._set_aside(game, attempt)
                    culprits = [failed_builds[n] for n in (game.white, game.black) if n in failed_builds]
                    if culprits:
                        # Not played: an agent that did not build cannot start.
                        outcome = self._build_forfeit(game, culprits)
                        if self.store.finish(game.key, outcome):
                            played += 1
                        self._emit(GameEvent("finished", game, self.numbers.get(game.key, 0), outcome))
                        continue
                    self.in_progress[game.key] = {"number": self.numbers.get(game.key, 0), "white": game.white,
                                                  "black": game.black, "started": time.monotonic(), "ply": 0,
                                                  "clocks": {"W": 0.0, "B": 0.0}, "to_move": "W",
                                                  "since": time.monotonic(), "live": not pool.remote}
                    pending[pool.submit(self.job(game, pool.remote), self._watcher(game))] = game
                if not pending:
                    if self._should_stop(played) or not (self.tournament.format == "swiss" and self._pair_next_swiss_round()):
                        break
                    queue.extend(self.store.unfinished_games(exclude=self.withdrawn))
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
                        self._emit(GameEvent("failed", game, self.numbers.get(game.key, 0), error=why))
                        continue
                    if pool.remote:
                        self._save_remote_files(game, result, outcome)
                    if self.store.finish(game.key, outcome):
                        played += 1
                    self._emit(GameEvent("finished", game, self.numbers.get(game.key, 0), outcome))
            abandoned = bool(pending)
        finally:
            # Every game still marked running (in the pool, or just being
            # started when the signal came) is voided, with why, before its
            # agents are ended: whatever those games return now is not a result.
            self.in_progress.clear()
            self.store.void_running(f"the runner ({self.identity}) was stopped (Ctrl-C, SIGTERM or an error) "
                                    "before the game ended")
            pool.close(abandon=abandoned)
        return self.standings()

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

    def _emit(self, event: GameEvent) -> None:
        if self.on_event is not None:
            self.on_event(event, self)

    def _set_aside(self, game: ScheduledGame, attempt: int) -> None:
        """Move the files of an earlier, voided attempt to ``games/voided/`` (kept, never overwritten)."""
        directory = self.game_dir(game)
        if not (directory.exists() or directory.is_symlink()):
            return
        voided = self.tournament.results_dir / "games" / "voided"
        voided.mkdir(parents=True, exist_ok=True)
        target = voided / f"{directory.name}.attempt{max(1, attempt - 1)}"
        suffix = 1
        while target.exists() or target.is_symlink():
            suffix += 1
            target = voided / f"{directory.name}.attempt{max(1, attempt - 1)}-{suffix}"
        os.rename(directory, target)
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
            extra={"tournament": {"game": game.key, "not_played": "build"}},
        )
        text = record.to_json()
        outcome = outcome_from({"record": record.to_dict(), "record_json": text,
                                "record_sha256": hashlib.sha256(text.encode()).hexdigest()})
        outcome.game_dir = str(self._write_game_files(game, text, {}))
        return outcome

    def _write_game_files(self, game: ScheduledGame, record_json: str, stderr: dict[str, str]) -> Path:
        """Write a game's record (and logs) that the runner itself produced, in a fresh game directory."""
        from ..referee.files import write_atomically

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

    def _save_remote_files(self, game: ScheduledGame, result: dict[str, Any], outcome: GameOutcome) -> None:
        """A game played on another machine: keep its record (the exact bytes hashed) and stderr here too."""
        text = result.get("record_json") or GameRecord.from_dict(result["record"]).to_json()
        stderr = {name: result.get(f"{side}_stderr", "") for side, name in (("white", game.white), ("black", game.black))}
        outcome.game_dir = str(self._write_game_files(game, text, stderr))

    # -- results ----------------------------------------------------------------

    def standings(self) -> Standings:
        active = pairing.active_names(self.tournament, self.withdrawn)
        return compute(active, self.store.finished_games(exclude=self.withdrawn), self.store.byes())

    def progress(self) -> dict[str, Any]:
        """The counts of :func:`progress` for this runner's tournament."""
        return progress(self.tournament, self.store)

    def close(self) -> None:
        self.store.close()
        self.lock.release()


def status(tournament: Tournament) -> dict[str, Any]:
    """The tournament's state as plain data (``othello tournament status --json``).

    Read without the lock.  Games marked running count as running only while
    a runner holds the lock; otherwise they were in flight when the runner
    stopped (``interrupted``) and ``resume`` will void and replay them.
    """
    holder = locking.holder(tournament.database)
    with Store(tournament.database, create=False) as store:
        counts = progress(tournament, store)
        withdrawn = counts["withdrawn"]
        active = pairing.active_names(tournament, withdrawn)
        table = compute(active, store.finished_games(exclude=withdrawn), store.byes())
        rows = {row["key"]: row for row in store.game_rows()}
        replaced = [{"game": row["key"], "white": row["white"], "black": row["black"], "attempt": row["attempt"],
                     "winner": row["winner"], "reason": row["reason"],
                     "discs": [row["white_discs"], row["black_discs"]], "replaced": row["replaced"],
                     "why": row["why"], "files": row["game_dir"] or ""}
                    for row in store.replaced_rows()]
        flagged = [
            {"game": row["key"], "white": row["white"], "black": row["black"], "note": row["load_flag"]}
            for row in rows.values()
            if row["load_flag"]
        ]
        voided = [
            {
                "game": key, "white": rows[key]["white"], "black": rows[key]["black"],
                "status": rows[key]["status"], "voided": len(attempts),
                "attempts": [{"attempt": a["attempt"], "started": a["started"], "ended": a["ended"],
                              "why": a["why"] or "", "runner": a["runner"] or "", "files": a["files"] or ""}
                             for a in attempts],
            }
            for key, attempts in store.voided().items()
        ]
        builds = {name: {"status": b.status, "exit_code": b.exit_code, "detail": b.detail, "log": b.log}
                  for name, b in store.builds().items()}
        unsandboxed = [row["key"] for row in rows.values() if row["status"] == "finished" and _unsandboxed(row["record"])]
        return {
            "name": tournament.name,
            "format": tournament.format,
            "scheduled": counts["scheduled"],
            "finished": counts["finished"],
            "running": counts["running"] if holder else 0,
            "interrupted": 0 if holder else counts["running"],
            "runner": holder,
            "rounds": counts["rounds"],
            "complete": counts["finished"] == counts["scheduled"],
            "to_add": counts["to_add"],
            "withdrawn": [{"agent": name, "reason": reason, "games": sum(
                1 for row in rows.values() if name in (row["white"], row["black"]))}
                for name, reason in withdrawn.items()],
            "withdrawn_games": counts["excluded"],
            "replaced": replaced,
            "standings": table.to_list(),
            "repeated_games": table.repeats,
            "repeats_note": table.repeats_note(),
            "crosstable": table.crosstable_dict(),
            "load_flagged": flagged,
            "voided": voided,
            "voided_attempts": sum(item["voided"] for item in voided),
            "repeatedly_voided": [item for item in voided if item["voided"] >= VOIDED_FLAG_AT],
            "builds": builds,
            "unsandboxed": unsandboxed,
            "database": str(tournament.database),
            "rating_model": "Bradley-Terry maximum likelihood on the Elo scale (average 1500), 95% intervals",
        }


def _unsandboxed(record_text: Optional[str]) -> bool:
    """Whether a stored game record says its agents ran without the sandbox (``sandbox = "none"``)."""
    if not record_text:
        return False
    try:
        referee = json.loads(record_text).get("referee", {})
    except (ValueError, AttributeError):
        return False
    return isinstance(referee, dict) and referee.get("sandbox") == "none"


__all__ = [
    "AgentEntry", "GameEvent", "GameFileError", "LocalPool", "DaskPool", "Runner", "RunnerError",
    "default_concurrency", "kill_orphans", "planned_games", "play_job", "status", "usable_cores",
]
