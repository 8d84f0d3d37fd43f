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

A new version given as a command alone may begin with the prefixes of
``NAME=COMMAND`` (``openings:./v2 {name}``, ``clock:``, ``sizes:``); one
that declares openings is started at move ``N`` from the recorded position.
Under a game clock an agent that reads the clock line (``clock:``) gets it,
with its bank as the rerun's clock keeps it (the recorded times charged).

Where the agent draws its board (in its ``(C ...)`` comments, or on its
standard output and error), each drawing is compared with the referee's
boards of the same turn (:func:`compare_boards`): the first move where they
differ is named.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from ..protocol import (DEFAULT_SIZE, Board, Colour, GameRecord, Move, OthelloError, format_colour, format_move,
                        format_size, square_name)
from ..protocol.notation import Drawing, find_drawings, format_clock_line, parse_move
from . import files
from .clock import Clock, TimeControl, TimeRule, parse_clock
from .config import GameConfig
from .launch import isolation_for
from .process import StartError
from .seat import AgentSeat
from .spec import BUILTIN, PROGRAM, AgentSpec, BuiltinAgents
from .watch import Waker, make_waker

STDERR_LINES = 40  # the last lines of the agent's standard error shown on the terminal
OUTPUT_SETTLES = 0.2  # seconds an answer waits for the agent's output before it to reach the log
DROPPED = "\n[referee: "  # the log's mark where the referee dropped output over its cap (process.py)


@dataclass
class Turn:
    """One answer of the agent during the rerun: the move ``number`` it answered, its line now (``None``: none),
    its comments, and how much of its output log there was once the answer was read and its output before it
    logged (``log_end``)."""

    number: int
    line: Optional[str]
    comments: list[str]
    log_end: int
    settled: bool = True  # its output had stopped coming when log_end was taken (else the mark may be early)


@dataclass
class BoardCheck:
    """The agent's drawn boards against the referee's: where they came from, how many were compared, over which
    moves, and the first that differs (``None``: none did).

    ``source`` is ``"comments"``, ``"output"`` (its standard output and
    error), both joined by ``" and "``, or ``""``: it drew no board.  ``unlabelled`` says a drawing had no
    row numbers (read with the top row the highest, as PROTOCOL.md draws it).
    ``stopped`` says why the comparison ended early (its moves left the
    record's game), else ``""``.
    """

    source: str = ""
    compared: int = 0
    moves: tuple[int, int] = (0, 0)
    unlabelled: bool = False
    stopped: str = ""
    difference: Optional["BoardDifference"] = None
    reading: str = ""  # "" as drawn, else how the drawings were read to agree longest (READINGS)

    def to_dict(self) -> dict[str, Any]:
        diff = self.difference
        return {"source": self.source, "compared": self.compared, "moves": list(self.moves),
                "unlabelled": self.unlabelled, "reading": self.reading, "stopped": self.stopped,
                "first_difference": None if diff is None else {
                    "move_number": diff.number, "squares": diff.squares(), "referee_at": diff.referee_at,
                    "agent_board": diff.agent.draw(), "referee_board": diff.referee.draw(),
                    "nearer_at": diff.closest_at or None,
                    "nearer_squares": None if diff.closest is None else diff.squares(diff.closest)}}


@dataclass
class BoardDifference:
    """The first drawing of the agent (``agent``) that is none of the referee's boards of its turn at move ``number``;
    ``referee`` is the closest of those, ``referee_at`` says which (``"before move 15"``)."""

    number: int
    agent: Board
    referee: Board
    referee_at: str
    closest: Optional[Board] = None  # another of the referee's boards of that turn, nearer to the drawing
    closest_at: str = ""

    def squares(self, referee: Optional[Board] = None) -> list[str]:
        """The squares where the drawing differs from ``referee`` (the board it was given), A1 first."""
        referee = referee or self.referee
        size = referee.size
        theirs, ours = (self.agent.white, self.agent.black), (referee.white, referee.black)
        return [square_name(sq, size) for sq in range(size * size)
                if any(((a >> sq) & 1) != ((b >> sq) & 1) for a, b in zip(theirs, ours))]


@dataclass
class Rerun:
    """What the agent does now at move ``number``, beside what it did then.

    ``move`` is its answer line now (``None``: no answer, ``problem`` says
    why), ``recorded`` the line recorded then, ``seconds`` how long it took
    now, ``comments`` its ``(C ...)`` lines, ``stderr`` its standard output
    and error during the rerun, ``diverged`` its earlier moves that differ
    from the record (replayed move by move only; ``diverged_at`` the first),
    ``inputs`` how it was given the position, ``turns`` its answers in the
    rerun, ``boards`` its drawn boards against the referee's.
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
    diverged_at: Optional[int] = None
    turns: list[Turn] = field(default_factory=list)
    boards: BoardCheck = field(default_factory=BoardCheck)

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
            "diverged": list(self.diverged), "diverged_at": self.diverged_at, "inputs": self.inputs,
            "boards": self.boards.to_dict(),
        }


def recorded_spec(record: GameRecord, name: str, builtins: BuiltinAgents, command: Optional[str] = None) -> AgentSpec:
    """Agent ``name`` of the game as it was started then (or run by ``command`` now); ValueError naming what is wrong."""
    if name not in (record.white, record.black):
        raise ValueError(f"no agent {name!r} in this game: it was {record.white} (White) against {record.black} (Black)")
    entry: dict[str, Any] = record.extra.get("agents", {}).get(name, {})
    file_name = str(entry.get("file_name", name))
    openings = bool(entry.get("openings", False))
    reads_clock = bool(entry.get("reads_clock", False))
    home = Path(entry["home"]) if entry.get("home") else None
    sizes = (record.size,) if record.size != DEFAULT_SIZE else (DEFAULT_SIZE,)
    if command is not None:
        # Its own prefixes (openings:./v2 {name}) declare what it reads; without them it reads what the recorded one did.
        spec = AgentSpec.from_declared_command(file_name, command)
        return AgentSpec(name, file_name, PROGRAM, spec.command, home=spec.home, openings=openings or spec.openings,
                         sizes=sizes, reads_clock=reads_clock or spec.reads_clock)
    kind = entry.get("kind")
    if kind == BUILTIN:
        return builtins.spec(file_name).relabelled(name)
    if kind == PROGRAM and entry.get("command"):
        return AgentSpec(name, file_name, PROGRAM, tuple(str(part) for part in entry["command"]), home=home,
                         openings=openings, sizes=sizes, reads_clock=reads_clock)
    raise ValueError(f"the record does not say how {name} was run ({kind or 'no'} command): give it with --command CMD")


def recorded_rule(record: GameRecord, name: str) -> TimeRule:
    """The time rule ``name`` had in the game: its own seconds per move under time odds, else the game's seconds per
    move and its game clock (whose bank the rerun keeps as the referee kept it)."""
    own = record.extra.get("referee", {}).get("agent_times", {})
    clock = parse_clock(record.clock) if record.clock else None
    if name in own:
        return TimeRule(float(own[name]), clock)
    if record.time_per_move or clock is not None:
        return TimeRule(float(record.time_per_move) if record.time_per_move else None, clock)
    return TimeRule(float(GameConfig.time_per_move or 60.0))


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

    ``config`` gives the time per move (and the game clock, if the game had
    one), the sandbox and the limits; ``hidden`` are paths the agent must
    not see (the recorded game's directory).  The agent runs in a fresh
    directory under ``work_dir`` (default: a temporary one, removed
    afterwards).  Its drawn boards are compared with the referee's
    (``boards``).  Raises ValueError for a name or a number the game does
    not have.
    """
    colour = _colour_of(record, spec.label)
    result = Rerun(spec.label, number, colour, recorded_line(record, spec.label, number))
    if work_dir is None:
        with tempfile.TemporaryDirectory(prefix="othello-rerun-") as temp:
            return _run(record, spec, config, Path(temp), hidden, result)
    work_dir.mkdir(parents=True, exist_ok=True)
    return _run(record, spec, config, work_dir.resolve(), hidden, result)


def recorded_bank(record: GameRecord, colour: Colour, number: int, control: TimeControl) -> Optional[float]:
    """What ``colour``'s game clock held before move ``number``, the record's times charged as the referee charged
    them (``None``: the game had no clock)."""
    clock = Clock(control)
    for entry in record.moves[: number - 1]:
        if entry.move.colour is colour:
            clock.start(0.0)
            clock.stop(entry.seconds)
    return clock.bank


def _run(record: GameRecord, spec: AgentSpec, config: GameConfig, root: Path, hidden: Sequence[Path],
         result: Rerun) -> Rerun:
    seat = AgentSeat(spec, root / spec.file_name, root / f"{spec.file_name}.stderr.log")
    seat.open()
    waker: Waker = make_waker([seat.directory], config.polling, config.poll_interval,
                              names=[seat.in_name, seat.out_name])
    control = config.time_control(spec.label, manual=False)
    clock = Clock(control)
    first = format_colour(result.colour) + (format_size(record.size) if record.size != DEFAULT_SIZE else "")
    earlier = [*record.opening, *(entry.move for entry in record.moves[: result.number - 1])]
    runner = _Rerunner(seat, waker, clock, config, record.size, result, spec.reads_clock)
    try:
        try:
            seat.start(config, isolation_for(config), time_per_move=control.fair_share(), clock=control.clock_text,
                       move_cap=control.per_move if control.base is not None else None, hidden=[root, *hidden],
                       on_exit=waker.poke)
        except StartError as exc:
            result.problem = f"could not be started: {exc}"
            return result
        if spec.openings:
            result.inputs = f"one {seat.in_name}: its colour and the {len(earlier)} moves before move {result.number}"
            # started now, at move N: its bank is what the game had left it (the start-up allowance still its own)
            clock.bank = recorded_bank(record, result.colour, result.number, control)
            if clock.bank is not None:
                result.inputs += f", its clock at {clock.bank:.3f} s as the record's times left it"
            runner.answer(result.number, first + "".join(format_move(m) for m in earlier))
        else:
            result.inputs = f"the game's files again, one {seat.in_name} at a time, its own moves read and compared"
            runner.move_by_move(first, earlier)
    finally:
        if seat.process is not None:
            seat.process.kill_all()
        waker.close()
        seat.close()
        try:
            log = seat.stderr_path.read_bytes()
        except OSError:
            log = b""
        result.stderr = log.decode(errors="replace")
    # (latin-1: one character a byte, as the turns' log_end count)
    result.boards = compare_boards(record, result.turns, log.decode("latin-1"), result.diverged_at)
    return result


@dataclass
class _Rerunner:
    """The referee's side of a rerun: the agent's seat, its clock, and the answers read so far (in ``result``)."""

    seat: AgentSeat
    waker: Waker
    clock: Clock
    config: GameConfig
    size: int
    result: Rerun
    reads_clock: bool

    def move_by_move(self, first: str, earlier: list[Move]) -> None:
        """Give the agent its colour, then each opponent move after its own answer, as the referee did; then read
        move ``number``.  (An agent without openings never plays a game from one: ``earlier`` are the game's moves.)"""
        result = self.result
        pending = first
        for index, move in enumerate(earlier, 1):
            if move.colour is not result.colour:
                if not pending:
                    pending = format_move(move)
                    continue
                # Its colour file: taken before the opponent's first move is written (as Black in a game).
                if not self.wait_taken(pending):
                    return
                pending = format_move(move)
                continue
            then = self.answer(index, pending, final=False)
            pending = ""
            if then is None:
                result.problem = f"at its earlier move {index}: {result.problem}"
                return
            if then != move.line():
                result.diverged.append(f"move {index}: {then} now, {move.line()} then")
                if result.diverged_at is None:
                    result.diverged_at = index
        self.answer(result.number, pending)

    def wait_taken(self, text: str) -> bool:
        """Write ``text`` and wait until the agent has deleted it (within its first move's time)."""
        seat, result = self.seat, self.result
        seat.write_in(text)
        deadline = time.monotonic() + (self.clock.allowance() or 0.0)
        while seat.in_present():
            if seat.exited:
                result.problem = f"exited (code {_code(seat)}) before it deleted {seat.in_name}"
                return False
            if time.monotonic() > deadline:
                result.problem = f"did not delete {seat.in_name} within {self.clock.limit_applied()}"
                return False
            self.waker.wait(0.05)
        return True

    def answer(self, number: int, text: str, final: bool = True) -> Optional[str]:
        """Write ``text`` as ``NAME.in`` (unless empty: already given), and read the agent's answer to move
        ``number`` as the referee would.

        The file asks for a move: under a game clock an agent that reads the
        clock line gets it last (PROTOCOL.md section 10).  The final answer
        (``final``) is kept in ``result``; an earlier one is only returned.
        ``None``: no answer, ``result.problem`` says why.  Every answer is a
        :class:`Turn` of ``result``.
        """
        seat, clock, result = self.seat, self.clock, self.result
        if text:
            bank = clock.bank
            seat.write_in(text + (format_clock_line(bank) if self.reads_clock and bank is not None else ""))
        clock.start(time.monotonic())
        deadline = clock.deadline()
        limit = clock.limit_applied()
        while True:
            exited = seat.exited
            try:
                message = seat.take_message(self.waker, self.config.out_limit, self.size)
            except files.OutFileError as exc:
                return self.no_move(number, f"malformed: {exc}")
            now = time.monotonic()
            if message is not None:
                late = clock.expired(now)
                seconds = clock.stop(now)
                line = message.move.line() if message.move is not None else message.line
                result.turns.append(Turn(number, line, list(message.comments), *self.log_mark()))
                if final:
                    result.move, result.seconds, result.comments = line, seconds, list(message.comments)
                    if message.move is None:
                        result.problem = f"malformed: {message.error}"
                    elif late:
                        result.problem = f"too late: {seconds:.3f} s, over {limit}"
                return line if message.move is not None else self.no_move(number, f"malformed: {message.error}",
                                                                            turn=False)
            if exited:
                return self.no_move(number, f"exited (code {_code(seat)}) without a move")
            if deadline is not None and now > deadline:
                return self.no_move(number, f"did not move within {limit}; waited {clock.elapsed(now):.2f} s")
            self.waker.wait(None if deadline is None else max(0.0, deadline - now))

    def no_move(self, number: int, problem: str, turn: bool = True) -> Optional[str]:
        """No answer to move ``number``: say why in ``result`` (and keep the turn: what it printed before is its)."""
        self.result.problem = problem
        if turn:
            self.result.turns.append(Turn(number, None, [], *self.log_mark()))
        return None

    def log_mark(self) -> tuple[int, bool]:
        """The bytes in the agent's output log once what it wrote so far is there, and whether it stopped writing."""
        process = self.seat.process
        settled = process.output_logged(OUTPUT_SETTLES) if process is not None else True
        try:
            return self.seat.stderr_path.stat().st_size, settled
        except OSError:
            return 0, settled


def _code(seat: AgentSeat) -> Optional[int]:
    return seat.process.returncode if seat.process is not None else None


# ---------------------------------------------------------------------------
# Its board against the referee's
# ---------------------------------------------------------------------------


# How a program's drawings may be read: as drawn (PROTOCOL.md's way), and the two common other ways, row 1 at the
# top (an array printed in index order, rows unnumbered) and the colours the other way round (X for White).
READINGS = (("", False, False), ("with row 1 at the top", True, False),
            ("with the colours the other way round", False, True),
            ("with row 1 at the top and the colours the other way round", True, True))


def compare_boards(record: GameRecord, turns: Sequence[Turn], log: str = "", diverged_at: Optional[int] = None
                   ) -> BoardCheck:
    """The agent's drawn boards, from the comments of its ``turns`` and its output ``log``, against the referee's.

    A drawing belongs to the turn whose answer was read after it (comments:
    the answer they came with); one drawn after the last answer to the last
    turn.  It agrees when it is one of the referee's boards from before the
    agent's previous move to after its move of that turn (the move it played
    now): an agent draws its board when it likes, before or after its move,
    and its output may reach the log late.  The comparison stops after
    ``diverged_at``, a move it played other than the record (its board is
    its own game's from there on).  The turns of a recorded game
    (:func:`recorded_turns`) give its drawings in comments as they were.
    The drawings are read in each of :data:`READINGS` (rows without numbers
    upside down, colours swapped), and the reading under which they agree
    longest is kept, and named.  Nothing is guessed: without a drawing the
    check says so.
    """
    if not turns:
        return BoardCheck()
    drawn: list[tuple[int, Drawing]] = []  # (index of the turn, drawing), in the order drawn
    sources = []
    for index, turn in enumerate(turns):
        found = find_drawings("\n".join(turn.comments), record.size)
        drawn += [(index, drawing) for drawing in found]
        sources += ["comments"] if found else []
    # Output drawings go to a turn by where they end in the log: not past output the referee dropped (the rest of
    # the log came at the end), nor after a turn whose output kept coming (its mark may be early).
    unsettled = next((turn for turn in turns if not turn.settled), None)
    limit = len(log)
    if DROPPED in log:
        limit = log.index(DROPPED)
    if unsettled is not None:
        limit = min(limit, unsettled.log_end)
    output = find_drawings(log, record.size)
    unplaced = [drawing for drawing in output if drawing.end > limit]
    output = [drawing for drawing in output if drawing.end <= limit]
    if output:
        sources.append("output")
        drawn += [(next((i for i, turn in enumerate(turns) if drawing.end <= turn.log_end), len(turns) - 1), drawing)
                  for drawing in output]
        drawn.sort(key=lambda item: item[0])  # (stable: a turn's comments, then its output)
    if not drawn:
        return BoardCheck()
    positions = [board for board, _ in record.positions()]  # index i: after i moves (0: the start, or the opening)
    unlabelled = any(not drawing.labelled for _, drawing in drawn)
    checks = [_compare(record, turns, diverged_at, drawn, positions, reading)
              for reading in READINGS if unlabelled or not reading[1]]

    def reach(check: BoardCheck) -> tuple[int, int]:  # how far they agree: no difference beats the latest one
        return (check.difference.number if check.difference is not None else len(positions) + 1, check.compared)

    best = max(checks, key=reach)  # (the first of equals: as drawn before any other reading)
    best.source = " and ".join(dict.fromkeys(sources))
    best.unlabelled = unlabelled
    if unplaced and best.difference is None and not best.stopped:
        why = (f"its output kept coming at move {unsettled.number}" if unsettled is not None and DROPPED not in log
               else "the referee kept only the start and the end of its output (over its cap)")
        best.stopped = f"{len(unplaced)} later drawings in its output cannot be placed at a move: {why}"
    return best


def _compare(record: GameRecord, turns: Sequence[Turn], last: Optional[int], drawn: list[tuple[int, Drawing]],
             positions: list[Board], reading: tuple[str, bool, bool]) -> BoardCheck:
    """The drawings read one way (:data:`READINGS`) against the referee's boards of their turns, up to the first
    that is none of them (or past move ``last``, where it left the record)."""
    name, upside_down, swapped = reading
    check = BoardCheck(reading=name)
    for index, drawing in drawn:
        turn = turns[index]
        if last is not None and turn.number > last:
            check.stopped = (f"at move {last} it played other than the record: from there on its board is its own "
                             "game's, not the recorded one, so later drawings are not compared")
            break
        board = drawing.upside_down if upside_down and drawing.upside_down is not None else drawing.board
        if swapped:
            board = Board(board.black, board.white, board.to_move, board.size)
        candidates = _referee_boards(record, positions, turns, index)
        check.compared += 1
        check.moves = (check.moves[0] or turn.number, turn.number)
        if any(_same_discs(board, referee) for referee, _ in candidates):
            continue
        # Against the board it was given (what it should hold while it thinks): a board that missed the flips of
        # the opponent's move is nearer to the one before that move, but the squares a student must look at are
        # those it failed to flip.  The nearest other board is named beside it, for an agent that draws its board
        # at another moment (after its own move, say).
        closest, closest_at = min(candidates, key=lambda item: (_differing(board, item[0]),
                                                                not item[1].startswith("before move")))
        given = next((item for item in candidates if item[1].startswith(f"before move {turn.number}")), None)
        referee, where = given or (closest, closest_at)
        nearer = _differing(board, closest) < _differing(board, referee)
        check.difference = BoardDifference(turn.number, board, referee, where,
                                           closest if nearer else None, closest_at if nearer else "")
        break
    return check


def recorded_turns(record: GameRecord, colour: Colour) -> list[Turn]:
    """The moves of ``colour`` in a recorded game as turns, with the comments they came with (the fault last)."""
    turns = [Turn(number, entry.move.line(), list(entry.comments), 0)
             for number, entry in enumerate(record.moves, 1) if entry.move.colour is colour]
    fault = record.fault
    if fault is not None and fault.colour is colour:
        turns.append(Turn(len(record.moves) + 1, fault.line, list(fault.comments), 0))
    return turns


def _referee_boards(record: GameRecord, positions: list[Board], turns: Sequence[Turn],
                    index: int) -> list[tuple[Board, str]]:
    """The referee's boards of the agent's turn ``index``, each named: from before its previous move (the start
    for its first) to after its move of this turn, the move it played now."""
    turn = turns[index]
    start = turns[index - 1].number - 1 if index > 0 else 0
    before = min(turn.number - 1, len(positions) - 1)
    named = [(positions[i], _position_name(record, i, turn.number)) for i in range(max(0, start), before + 1)]
    if turn.line is not None:
        try:
            move = parse_move(turn.line, record.size)
            named.append((positions[before].play(move), f"after move {turn.number}, {move.line()}"))
        except OthelloError:
            pass  # an illegal move has no board after it
    return named


def _position_name(record: GameRecord, index: int, number: int) -> str:
    """The referee's board after ``index`` moves, named for the agent's turn at move ``number``."""
    if index == number - 1:
        return f"before move {number}" + (f", after {record.moves[index - 1].move.line()}" if index > 0 else "")
    if index == 0:
        return "after the opening" if record.opening else "at the start"
    return f"after move {index}, {record.moves[index - 1].move.line()}"


def _same_discs(drawn: Board, board: Board) -> bool:
    return drawn.white == board.white and drawn.black == board.black


def _differing(drawn: Board, board: Board) -> int:
    return ((drawn.white ^ board.white) | (drawn.black ^ board.black)).bit_count()


__all__ = ["READINGS", "BoardCheck", "BoardDifference", "Rerun", "Turn", "compare_boards", "recorded_bank", "recorded_line",
           "recorded_rule", "recorded_spec", "recorded_turns", "rerun_agent"]
