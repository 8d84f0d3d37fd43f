"""Put an agent back at a move of a recorded game: ``othello replay GAME --rerun NAME --at N``.

The agent is started as the referee starts it (its sandbox, its limits, its
time per move) and given exactly the inputs it was given before move ``N``
of the game, then its answer is read as the referee reads one:

- an agent that declared openings (PROTOCOL.md section 8) gets one first
  ``NAME.in``: its colour and every move played before move ``N``, and
  answers at once;
- any other agent gets the game's files again, one at a time: its colour,
  then each opponent move in its own ``NAME.in`` after it has answered (its
  earlier answers are read and compared with the record, not relayed:
  the opponent's recorded moves are what it is given).

Move numbers are counted as in the record's ``moves``, from 1 (the faulty
move of a game lost on a fault is the number after the last one, as its
``result.move_number`` says).  A fault of the agent during the rerun is a
``problem`` in the answer, never an exception.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from ..protocol import DEFAULT_SIZE, Colour, GameRecord, Move, format_colour, format_move, format_size
from . import files
from .clock import Clock, TimeControl, parse_clock
from .config import GameConfig
from .launch import isolation_for
from .process import StartError
from .seat import AgentSeat
from .spec import BUILTIN, PROGRAM, AgentSpec, BuiltinAgents
from .watch import Waker, make_waker

STDERR_LINES = 40  # the last lines of the agent's standard error shown on the terminal


@dataclass
class Rerun:
    """What the agent does now at move ``number``, beside what it did then.

    ``move`` is its answer line now (``None``: no answer, ``problem`` says
    why), ``recorded`` the line recorded then, ``seconds`` how long it took
    now, ``comments`` its ``(C ...)`` lines, ``stderr`` its standard output
    and error during the rerun, ``diverged`` its earlier moves that differ
    from the record (replayed move by move only), ``inputs`` how it was given
    the position.
    """

    agent: str
    number: int
    colour: Colour
    recorded: Optional[str]
    move: Optional[str] = None
    seconds: Optional[float] = None
    comments: list[str] = field(default_factory=list)
    stderr: str = ""
    problem: str = ""
    diverged: list[str] = field(default_factory=list)
    inputs: str = ""

    @property
    def same(self) -> bool:
        """Whether it plays now what it played then."""
        return self.move is not None and self.move == self.recorded

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent, "move_number": self.number, "colour": self.colour.value,
            "move": self.move, "recorded": self.recorded, "same": self.same,
            "seconds": None if self.seconds is None else round(self.seconds, 4),
            "comments": list(self.comments), "stderr": self.stderr, "problem": self.problem,
            "diverged": list(self.diverged), "inputs": self.inputs,
        }


def recorded_spec(record: GameRecord, name: str, builtins: BuiltinAgents, command: Optional[str] = None) -> AgentSpec:
    """Agent ``name`` of the game as it was started then (or run by ``command`` now); ValueError naming what is wrong."""
    if name not in (record.white, record.black):
        raise ValueError(f"no agent {name!r} in this game: it was {record.white} (White) against {record.black} (Black)")
    entry: dict[str, Any] = record.extra.get("agents", {}).get(name, {})
    file_name = str(entry.get("file_name", name))
    openings = bool(entry.get("openings", False))
    home = Path(entry["home"]) if entry.get("home") else None
    if command is not None:
        spec = AgentSpec.from_command(file_name, command)
        return AgentSpec(name, file_name, PROGRAM, spec.command, home=spec.home, openings=openings,
                         sizes=(record.size,) if record.size != DEFAULT_SIZE else spec.sizes)
    kind = entry.get("kind")
    if kind == BUILTIN:
        return builtins.spec(file_name).relabelled(name)
    if kind == PROGRAM and entry.get("command"):
        return AgentSpec(name, file_name, PROGRAM, tuple(str(part) for part in entry["command"]), home=home,
                         openings=openings, sizes=(record.size,) if record.size != DEFAULT_SIZE else (DEFAULT_SIZE,))
    raise ValueError(f"the record does not say how {name} was run ({kind or 'no'} command): give it with --command CMD")


def recorded_time(record: GameRecord, name: str) -> float:
    """The seconds per move ``name`` had in the game (its own under time odds)."""
    own = record.extra.get("referee", {}).get("agent_times", {})
    if name in own:
        return float(own[name])
    if record.time_per_move:
        return float(record.time_per_move)
    if record.clock:  # a game clock alone: the fair share of the bank the agent was told (OTHELLO_TIME)
        base, increment = parse_clock(record.clock)
        share = TimeControl(None, base=base, increment=increment).fair_share()
        if share is not None:
            return share
    return float(GameConfig.time_per_move or 60.0)


def recorded_line(record: GameRecord, name: str, number: int) -> Optional[str]:
    """The line ``name`` played at move ``number``; ValueError if the move is not one of its moves."""
    colour = _colour_of(record, name)
    if 1 <= number <= len(record.moves):
        entry = record.moves[number - 1]
        if entry.move.colour is colour:
            return entry.move.line()
    elif number == len(record.moves) + 1 and record.fault is not None and record.fault.colour is colour:
        return record.fault.line
    theirs = [str(i) for i, entry in enumerate(record.moves, 1) if entry.move.colour is colour]
    if record.fault is not None and record.fault.colour is colour:
        theirs.append(str(len(record.moves) + 1))
    shown = ", ".join(theirs[:8]) + (" ..." if len(theirs) > 8 else "")
    raise ValueError(f"move {number} is not one of {name}'s moves in this game of {len(record.moves)} moves "
                     f"(its moves: {shown or 'none'})")


def _colour_of(record: GameRecord, name: str) -> Colour:
    from ..protocol import BLACK, WHITE

    if name == record.white:
        return WHITE
    if name == record.black:
        return BLACK
    raise ValueError(f"no agent {name!r} in this game: it was {record.white} (White) against {record.black} (Black)")


def rerun_agent(record: GameRecord, spec: AgentSpec, number: int, config: GameConfig,
                hidden: Sequence[Path] = (), work_dir: Optional[Path] = None) -> Rerun:
    """Run ``spec`` (the game's agent ``spec.label``) on the inputs it had before move ``number``; its answer now.

    ``config`` gives the time per move, the sandbox and the limits;
    ``hidden`` are paths the agent must not see (the recorded game's
    directory).  The agent runs in a fresh directory under ``work_dir``
    (default: a temporary one, removed afterwards).  Raises ValueError for
    a name or a number the game does not have.
    """
    colour = _colour_of(record, spec.label)
    result = Rerun(spec.label, number, colour, recorded_line(record, spec.label, number))
    if work_dir is None:
        with tempfile.TemporaryDirectory(prefix="othello-rerun-") as temp:
            return _run(record, spec, config, Path(temp), hidden, result)
    work_dir.mkdir(parents=True, exist_ok=True)
    return _run(record, spec, config, work_dir.resolve(), hidden, result)


def _run(record: GameRecord, spec: AgentSpec, config: GameConfig, root: Path, hidden: Sequence[Path],
         result: Rerun) -> Rerun:
    seat = AgentSeat(spec, root / spec.file_name, root / f"{spec.file_name}.stderr.log")
    seat.open()
    waker: Waker = make_waker([seat.directory], config.polling, config.poll_interval,
                              names=[seat.in_name, seat.out_name])
    clock = Clock(TimeControl(config.time_per_move, config.grace, config.startup_time))
    first = format_colour(result.colour) + (format_size(record.size) if record.size != DEFAULT_SIZE else "")
    earlier = [*record.opening, *(entry.move for entry in record.moves[: result.number - 1])]
    try:
        try:
            seat.start(config, isolation_for(config), time_per_move=config.time_per_move, hidden=[root, *hidden],
                       on_exit=waker.poke)
        except StartError as exc:
            result.problem = f"could not be started: {exc}"
            return result
        if spec.openings:
            result.inputs = f"one {seat.in_name}: its colour and the {len(earlier)} moves before move {result.number}"
            _answer(seat, waker, clock, config, record.size, first + "".join(format_move(m) for m in earlier), result)
        else:
            result.inputs = f"the game's files again, one {seat.in_name} at a time, its own moves read and compared"
            _move_by_move(seat, waker, clock, config, record.size, first, earlier, result)
    finally:
        if seat.process is not None:
            seat.process.kill_all()
        waker.close()
        seat.close()
        try:
            result.stderr = seat.stderr_path.read_text(errors="replace")
        except OSError:
            result.stderr = ""
    return result


def _move_by_move(seat: AgentSeat, waker: Waker, clock: Clock, config: GameConfig, size: int, first: str,
                  earlier: list[Move], result: Rerun) -> None:
    """Give the agent its colour, then each opponent move after its own answer, as the referee did; then read move ``number``."""
    pending = first
    for index, move in enumerate(earlier, 1):
        if move.colour is not result.colour:
            if not pending:
                pending = format_move(move)
                continue
            # Its colour file: taken before the opponent's first move is written (as Black in a game).
            if not _wait_taken(seat, waker, clock, config, pending, result):
                return
            pending = format_move(move)
            continue
        then = _answer(seat, waker, clock, config, size, pending, result, final=False)
        pending = ""
        if then is None:
            result.problem = f"at its earlier move {index}: {result.problem}"
            return
        if then != move.line():
            result.diverged.append(f"move {index}: {then} now, {move.line()} then")
    _answer(seat, waker, clock, config, size, pending, result)


def _wait_taken(seat: AgentSeat, waker: Waker, clock: Clock, config: GameConfig, text: str, result: Rerun) -> bool:
    """Write ``text`` and wait until the agent has deleted it (within its first move's time)."""
    seat.write_in(text)
    deadline = time.monotonic() + (clock.allowance() or 0.0)
    while seat.in_present():
        if seat.exited:
            result.problem = f"exited (code {_code(seat)}) before it deleted {seat.in_name}"
            return False
        if time.monotonic() > deadline:
            result.problem = f"did not delete {seat.in_name} within {clock.limit_applied()}"
            return False
        waker.wait(0.05)
    return True


def _answer(seat: AgentSeat, waker: Waker, clock: Clock, config: GameConfig, size: int, text: str,
            result: Rerun, final: bool = True) -> Optional[str]:
    """Write ``text`` as ``NAME.in`` (unless empty: already given), and read the agent's answer as the referee would.

    The final answer (``final``) is kept in ``result``; an earlier one is
    only returned.  ``None``: no answer, ``result.problem`` says why.
    """
    if text:
        seat.write_in(text)
    clock.start(time.monotonic())
    deadline = clock.deadline()
    limit = clock.limit_applied()
    while True:
        exited = seat.exited
        try:
            message = seat.take_message(waker, config.out_limit, size)
        except files.OutFileError as exc:
            result.problem = f"malformed: {exc}"
            return None
        now = time.monotonic()
        if message is not None:
            late = clock.expired(now)
            seconds = clock.stop(now)
            line = message.move.line() if message.move is not None else message.line
            if final:
                result.move, result.seconds, result.comments = line, seconds, list(message.comments)
                if message.move is None:
                    result.problem = f"malformed: {message.error}"
                elif late:
                    result.problem = f"too late: {seconds:.3f} s, over {limit}"
            return line if message.move is not None else _no_move(result, f"malformed: {message.error}")
        if exited:
            return _no_move(result, f"exited (code {_code(seat)}) without a move")
        if deadline is not None and now > deadline:
            return _no_move(result, f"did not move within {limit}; waited {clock.elapsed(now):.2f} s")
        waker.wait(None if deadline is None else max(0.0, deadline - now))


def _no_move(result: Rerun, problem: str) -> Optional[str]:
    """No answer: say why in ``result``."""
    result.problem = problem
    return None


def _code(seat: AgentSeat) -> Optional[int]:
    return seat.process.returncode if seat.process is not None else None


__all__ = ["Rerun", "recorded_line", "recorded_spec", "recorded_time", "rerun_agent"]
