"""One game of a tournament in and out: :func:`play_job` runs locally or on a Dask worker.

A :class:`GameJob` (the two agents as the file names them, the game's
configuration, seed, opening and directory) is plain data, so it crosses to
another machine as it is (it pickles); :func:`play_job` returns a
:class:`PlayedGame`: the record exactly as the referee wrote it, the agents'
stderr and where it ran; :func:`outcome_from` turns that into the row the
store keeps (the :class:`~othello_arena.protocol.Result` unchanged),
flagging a timeout that looks caused by the machine's load.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

from ...protocol import BOARD_SIZES, WHITE, GameRecord, Termination, parse_move
from ...referee.busy import LOAD_CPU_SHARE
from ...referee.cores import usable_cores as usable_core_list
from ...referee.clock import GRACE_SECONDS
from ...referee.config import GameConfig
from ..results.safefiles import GAME_RECORD_LIMIT, STDERR_READ_LIMIT, read_ends, read_whole
from ..results.store import GameOutcome
from ..schedule.config import AgentEntry, Tournament



def usable_cores() -> int:
    """How many cores this process may run on (the affinity mask, not the machine's total)."""
    return len(usable_core_list())



def game_config(tournament: Tournament) -> GameConfig:
    """The referee's settings of every game of the file: its time rule, the odds, [referee] (checked when loaded)."""
    return GameConfig(
        time_per_move=tournament.time.per_move, clock=tournament.time.clock,
        # the odds of every agent: the referee uses those of each game's two
        agent_times=tournament.agent_times, agent_clocks=tournament.agent_clocks,
        keep_files_mb=tournament.keep_files_mb,
        # no agent may see the tournament's results, even from a folder it may read
        hidden_paths=(str(tournament.results_dir.resolve()),),
        **tournament.referee)


def agent_spec(entry: AgentEntry) -> Any:
    """The referee's AgentSpec for a tournament agent."""
    from ...agents.registry import sizes_of
    from ...referee import AgentSpec

    # The record, the standings and the agent's directory use its name (the
    # label); NAME.in / NAME.out use ``files`` when its program hard-codes them.
    files = entry.file_name
    if entry.command is None:
        builtin = entry.builtin or entry.name
        return AgentSpec.builtin(builtin, file_name=files, sizes=sizes_of(builtin)).relabelled(entry.name)
    # The program runs in its own directory inside the game directory
    # (PROTOCOL.md section 2); the agent's cwd is where the relative paths of
    # its command (alice.py, ./bob) are found.
    spec = AgentSpec.from_command(entry.name, entry.command, base=Path(entry.cwd) if entry.cwd else None)
    return dataclasses.replace(spec, file_name=files, openings=entry.openings, reads_clock=entry.reads_clock,
                               sizes=BOARD_SIZES if entry.sizes else spec.sizes)


@dataclasses.dataclass(frozen=True)
class GameJob:
    """One game to play: plain data, so a worker on another machine receives it as it is.

    ``out_dir`` is the game directory, or ``None`` to play in a temporary
    directory and send everything back (a remote worker); ``config`` holds
    the referee's :class:`~othello_arena.referee.GameConfig` (frozen: it
    pickles to a worker as it is);
    ``opening`` the opening's move lines; ``white_version`` and
    ``black_version`` the programs' fingerprints, taken by the runner before
    their builds (:mod:`.versions`), for the record.
    """

    key: str
    white: AgentEntry
    black: AgentEntry
    config: GameConfig
    seed: int
    opening: tuple[str, ...] = ()
    out_dir: Optional[str] = None
    white_version: str = ""
    black_version: str = ""


@dataclasses.dataclass(frozen=True)
class PlayedGame:
    """What :func:`play_job` sends back: the record as the referee wrote it, the agents' stderr, where it ran."""

    record: dict[str, Any]
    record_json: str
    record_sha256: str
    white_stderr: str = ""
    black_stderr: str = ""
    worker: str = ""
    pid: int = 0
    load: float = 0.0  # the machine's load average when the game ended
    cores: int = 1
    wall: float = 0.0
    game_dir: str = ""  # "" when played in a temporary directory

    @classmethod
    def of_record(cls, record: GameRecord) -> "PlayedGame":
        """A game the runner itself decided (never played: a failed build), as if the referee had written it."""
        text = record.to_json()
        return cls(record.to_dict(), text, hashlib.sha256(text.encode()).hexdigest())


class GameFileError(RuntimeError):
    """The game's record could not be kept as the referee wrote it (not a regular file, changed, too big)."""


def play_job(job: GameJob, on_event: Optional[Callable[[Any], None]] = None) -> PlayedGame:
    """Play one game; return its record and the agents' stderr.

    Never raises for an agent's fault: the referee makes that a result.  It
    raises :class:`GameFileError` when ``game.json`` is not, byte for byte,
    the record the referee produced (a directory or a link planted in its
    place, or a file rewritten after the referee wrote it): that game has no
    result anybody could trust, and the runner says so.  ``on_event``
    hears the referee's events (the live display's moves and clocks; only
    where the game runs in this process).
    """
    from ...referee.game import played_game

    white = dataclasses.replace(agent_spec(job.white), version=job.white_version)
    black = dataclasses.replace(agent_spec(job.black), version=job.black_version)
    temporary = job.out_dir is None
    out_dir = Path(tempfile.mkdtemp(prefix="othello-game-")) if job.out_dir is None else Path(job.out_dir)
    try:
        if out_dir.exists() and not temporary:
            shutil.rmtree(out_dir)  # the runner moves a voided attempt aside first; this is a last resort
        out_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        try:
            opening = [parse_move(line) for line in job.opening]
            record, text = played_game(white, black, job.config, out_dir, seed=job.seed, on_event=on_event,
                                       opening=opening)
        except OSError as exc:
            raise GameFileError(_record_problem(out_dir, f"the referee could not write it: {exc}")) from None
        wall = time.monotonic() - started
        try:
            written = read_whole(out_dir, "game.json", GAME_RECORD_LIMIT)
        except OSError as exc:
            raise GameFileError(_record_problem(out_dir, str(exc))) from None
        if written != text.encode("utf-8"):
            raise GameFileError(f"{out_dir / 'game.json'} was changed after the referee wrote it; the game is void")
        return PlayedGame(
            record=record.to_dict(),
            record_json=text,
            record_sha256=hashlib.sha256(written).hexdigest(),
            white_stderr=_read_stderr(out_dir, record, white.label),
            black_stderr=_read_stderr(out_dir, record, black.label),
            worker=socket.gethostname(),
            pid=os.getpid(),
            load=os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0,
            cores=usable_cores(),
            wall=wall,
            game_dir="" if temporary else str(out_dir),
        )
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


def outcome_from(result: PlayedGame) -> GameOutcome:
    """Turn what :func:`play_job` returned into the row the store keeps."""
    record = GameRecord.from_dict(result.record)
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
        record=result.record,
        record_text=result.record_json,
        record_sha256=result.record_sha256,
        white_stderr=result.white_stderr,
        black_stderr=result.black_stderr,
        game_dir=result.game_dir,
        worker=result.worker,
        white_version=_agent_versions(record).get("W"),
        black_version=_agent_versions(record).get("B"),
    )
    outcome.load_flag = load_flag(record, outcome, result.load, result.cores)
    return outcome


def _agent_versions(record: GameRecord) -> dict[str, str]:
    """Per colour, the program's version the record names (``agents.NAME.version``)."""
    agents = record.extra.get("agents")
    if not isinstance(agents, dict):
        return {}
    return {info["colour"]: info["version"] for info in agents.values()
            if isinstance(info, dict) and info.get("colour") in ("W", "B") and isinstance(info.get("version"), str)
            and info["version"]}


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
    label = record.white if loser is WHITE else record.black
    own = record.extra.get("referee", {}).get("agent_times", {}).get(label)
    limit = (own or record.time_per_move or 0.0) + GRACE_SECONDS
    # The referee's own figure when it has one; else its moves' time and the limit of the move it lost on, a lower
    # bound: a first move's start-up allowance is not in the record, so the clock may have run longer.
    measured = times.get("seconds")
    wall = measured or ((outcome.white_seconds if loser is WHITE else outcome.black_seconds) + limit)
    cpu = times.get("cpu_seconds")
    notes = []
    if cpu is not None and wall > 0 and cpu < LOAD_CPU_SHARE * wall:
        notes.append(f"CPU {cpu:.2f} s over {'' if measured else 'at least '}{wall:.2f} s of clock")
    if load > cores or record.extra.get("load_suspect"):
        notes.append(f"load average {load:.1f} on {cores} cores")
    return "; ".join(notes) or None


def flagged_timeout(result: PlayedGame) -> Optional[str]:
    """The load flag of a played game as the tournaments keep it (:func:`load_flag`): a note, or ``None``.

    For a runner that decides on the spot (a class's ladder replays such a
    game rather than count it), where a tournament keeps the flag for
    ``othello tournament rerun --flagged``.
    """
    return outcome_from(result).load_flag


