"""``othello check AGENT``: a conformance checker for agent programs.

The checker is a scripted referee.  It starts the agent (a built-in name or
``NAME=COMMAND``, as for ``othello play``) in a fresh directory for each
scenario, plays its side through the files, and grades what the agent does:

- it starts as White and as Black;
- it deletes ``NAME.in`` after reading it;
- it answers in time (``time + 0.25`` s, PROTOCOL.md section 4);
- it receives a pass, and it passes when it must;
- it plays a game to the end and exits;
- it copes with a move line in lower case with CRLF (advisory: the referee
  writes upper case only);
- it notices an illegal opponent move (advisory: the referee never relays one);
- if it declares openings (``openings:NAME=COMMAND``, PROTOCOL.md section 8),
  it plays on from an opening, as the side to move and as the side that waits;
- if it declares the bigger boards (``sizes:NAME=COMMAND``, section 9), it
  plays a whole game on 10x10 as White and on 14x14 (two-digit rows,
  columns to N) as Black, each starting with the size line.

Under each failure the card shows where it happened (the game, the move
number, the position drawn) and the last lines of the agent's output, and
the game folders are kept (their path is printed) when anything failed.

Passes: an agent that declares openings is started from positions where a
pass is forced at once (:data:`FORCED_PASS_OPENINGS`), with each colour to
pass, so "passes when it must" and "receives a pass" are always exercised.
Any other agent only ever sees moves from the start, so the checker steers
its games towards a pass: it searches for moves that leave the side that
should pass without moves, and plays more games if needed.  Its own moves
come from a seeded generator, so a deterministic agent gets the same games
every time.  A strong program that keeps its mobility may never be steered
into a pass: the item is then UNTESTED, which is not a failure (the card
says so, and how to have it tested).
"""

from __future__ import annotations

import dataclasses
import os
import random
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from ..protocol import (
    BLACK,
    DEFAULT_SIZE,
    WHITE,
    Board,
    Colour,
    FaultyMove,
    GameRecord,
    Move,
    MoveRecord,
    Result,
    Termination,
    format_colour,
    format_end,
    format_move,
    format_size,
)
from ..protocol.openings import format_opening, opening_board, parse_opening
from ..referee import files
from ..referee.busy import MoveTiming, Usage
from ..protocol.notation import format_clock_line
from ..referee.clock import CHECK_SECONDS, STARTUP_SECONDS, Clock, TimeControl, TimeRule, format_clock, parse_clock
from ..referee.config import END_GRACE_SECONDS, GameConfig
from ..referee.launch import isolation_for
from ..referee.process import AgentProcess, StartError
from ..referee.rerun import compare_boards, recorded_turns
from ..referee.hints import HOME_HERE, ORIENTATION, hints, printed_move
from ..referee.seat import AgentSeat
from ..referee.spec import AgentSpec
from ..referee.watch import Waker, make_waker

CHECKER = "checker"  # the checker's side in a scripted game's record
POLL = 0.005
QUIET = 0.3  # how long Black is watched for a move written out of turn
WATCH_LONGER = 2.0  # seconds watched past a move's deadline, to tell a late move from none
EXIT_LOOK = 0.1  # seconds between two readings of an agent's figures while it is expected to exit
PROGRAM_BYTES = 16 << 20  # the most of a program file searched for a hard-coded name
# "bob.in" in a program (a string in C's binary, a script's source, a class file): a name it may wait for.
_IN_NAME = re.compile(rb"(?<![A-Za-z0-9_./{}-])([A-Za-z0-9_-]{1,32})\.in(?![A-Za-z0-9_.])")


# ---------------------------------------------------------------------------
# The report card
# ---------------------------------------------------------------------------

PASS, FAIL, ADVISORY, UNTESTED = "PASS", "FAIL", "ADVISORY", "UNTESTED"
# The check could not tell: a move was late, or none came, while the agent waited for a core (referee/busy.py).
# Neither a pass nor a failure: the card says so, with the figures, and how to have it told.
UNSURE = "UNSURE"
QUIETER = "run the check again on a quieter machine"  # what the card advises after UNSURE (a class server: its own)
BUSY_WATCH = 60.0  # seconds of clock a starved agent is watched for its move, its own time not yet used up

ITEMS = [
    ("white", "starts as White"),
    ("black", "starts as Black"),
    ("deletes", "deletes NAME.in after reading"),
    ("in-time", "answers in time"),
    ("receives-pass", "receives a pass"),
    ("must-pass", "passes when it must"),
    ("full-game", "plays a game to the end and exits"),
    ("liberal", "copes with a lower-case move line and CRLF"),
    ("illegal", "notices an illegal opponent move"),
]
# Good manners the referee never tests (it writes upper case, it relays no illegal move): a miss is advice, shown
# apart from the failures, with why it does not fail the card.
WHY_ADVICE = {"liberal": "the referee writes upper case only", "illegal": "the referee never relays an illegal move"}

OUTPUT_LINES = 8  # lines of the agent's output shown under a failure

OPENINGS_ITEM = ("openings", "plays on from an opening (PROTOCOL.md section 8)")
SIZES_ITEM = ("sizes", "plays the bigger boards it declares (PROTOCOL.md section 9)")
CHECK_SIZES = ((10, WHITE), (14, BLACK))  # the smallest and the largest: a two-digit row, columns to N
# Three plies: Black to move.  The agent plays it as Black (it moves at once) and as White (it waits).
CHECK_OPENING = "d3 c5 f6"
# Openings after which the side to move has no legal move but the game is not over: it must pass at once.  Found by
# a breadth-first search with protocol/rules.py (White: the shortest there is, 8 plies; Black: none within 10 plies,
# this one by a beam search keeping the positions where Black has fewest moves).  The agent plays each as the side
# that must pass ("passes when it must") and as the other side ("receives a pass").  Tested to be what they claim.
FORCED_PASS_OPENINGS = {WHITE: "d3 c3 b3 b2 f5 a3 a1 c1", BLACK: "d3 c5 f6 d2 c2 b2 b1 f3 a2 g7 d1"}
PASS_ITEMS = ("must-pass", "receives-pass")


@dataclass
class Item:
    key: str
    title: str
    status: Optional[str] = None  # PASS / FAIL / ADVISORY / UNSURE; None: never exercised (UNTESTED)
    detail: str = ""
    evidence: list[str] = field(default_factory=list)  # shown under a failure: where, the agent's output
    to_test: str = ""  # UNTESTED only: what would have it tested (shown after the verdict)

    def grade(self, ok: bool, detail: str = "", advisory: bool = False, evidence: Optional[list[str]] = None) -> None:
        """Record a finding; a failure is never overwritten by a later success."""
        if self.status == FAIL:
            return
        if ok:
            if self.status is None:
                self.status, self.detail = PASS, detail
        else:
            self.status, self.detail = (ADVISORY if advisory else FAIL), detail
            self.evidence = list(evidence or [])

    def could_not_tell(self, detail: str) -> None:
        """The machine, not the agent, made a move late: no verdict (a failure stays; a later one overrides it)."""
        if self.status not in (FAIL, UNSURE):
            self.status, self.detail, self.evidence = UNSURE, detail, []


class MachineBusy(Exception):
    """The agent waited for a core so long that the check cannot go on judging it (its figures in ``timing``)."""

    def __init__(self, timing: MoveTiming, awaited: str = "move", what: str = "the move") -> None:
        super().__init__(timing.busy_text(awaited, what=what))
        self.timing, self.awaited, self.what = timing, awaited, what


@dataclass
class ReportCard:
    agent: str
    time_per_move: float
    items: dict[str, Item] = field(default_factory=lambda: {key: Item(key, title) for key, title in ITEMS})
    slowest: float = 0.0
    games: int = 0
    moves_timed: int = 0  # the agent's moves read: no move, no verdict on speed
    seconds_timed: float = 0.0  # their time in all (a tournament's duration estimate takes their mean)
    kept: Optional[Path] = None  # the game folders, kept because something failed
    notes: list[str] = field(default_factory=list)  # shown after the items
    hints: list[str] = field(default_factory=list)  # each shown once, however many items it explains
    not_checked: list[str] = field(default_factory=list)  # what the card leaves out, and why (after the verdict)
    clock: str = ""  # the game clock checked under, "10+0.1"; "" for none
    first_fault: Optional[tuple[str, str, int]] = None  # (game, agent, move number) of the first game lost on a fault
    first_illegal: str = ""  # "game1 at move 17": the first illegal move, when there is one
    home: str = HOME_HERE  # what {home} is for the card's reader (a class server's card: the submission's folder)
    # the items failed by the end of the game of the first illegal move: a failure after it may be its consequence
    failed_by_illegal: Optional[frozenset[str]] = None
    illegal_game: Optional[tuple[str, GameRecord, Colour]] = None  # that game: its name, record, the agent's colour
    busy_advice: str = QUIETER  # what to do after an UNSURE item (a class server checks again by itself: "")
    stopped_busy: bool = False  # the check stopped before the end: the machine too busy to go on judging the agent

    def new_game(self) -> None:
        """A scripted game begins (games are played one at a time): what failed before it is known."""
        if self.first_illegal and self.failed_by_illegal is None:
            self.failed_by_illegal = frozenset(key for key, item in self.items.items() if item.status == FAIL)
        self.games += 1

    def hint(self, text: str) -> None:
        """A hint for the card, said once (the same cause often fails several items)."""
        if text not in self.hints:
            self.hints.append(text)

    def __getitem__(self, key: str) -> Item:
        return self.items[key]

    @property
    def mean_move_seconds(self) -> Optional[float]:
        """The mean time of the agent's moves in the check, or ``None`` when it made none."""
        return self.seconds_timed / self.moves_timed if self.moves_timed else None

    @property
    def passed(self) -> bool:
        """All items passed (advisory findings do not fail the card); ``False`` if one failed or was not tested."""
        return all(item.status in (PASS, ADVISORY) for item in self.items.values())

    @property
    def failed(self) -> bool:
        """Some item FAILED: the agent is wrong.  An item that could not be exercised (UNTESTED) is not a failure."""
        return any(item.status == FAIL for item in self.items.values())

    @property
    def unsure(self) -> list[Item]:
        """The items the check could not tell (the machine was too busy to time the agent): no verdict either way."""
        return [item for item in self.items.values() if item.status == UNSURE]

    def machine_busy(self, timing: MoveTiming, awaited: str = "", what: str = "the move") -> None:
        """A move (``what``) late, or what was ``awaited`` not come, while the machine kept the agent from a core:
        ``answers in time`` is UNSURE, with the figures."""
        self["in-time"].could_not_tell(timing.busy_text(awaited, what=what, then=self.busy_advice))

    @property
    def untested(self) -> list[Item]:
        """The items the check could not exercise (no finding either way)."""
        return [item for item in self.items.values() if item.status is None]

    def lines(self) -> list[str]:
        """The card: the items (PASS / FAIL / UNTESTED), the hints once, the verdict, then advice apart."""
        rule = TimeRule(self.time_per_move, parse_clock(self.clock) if self.clock else None)
        out = [f"othello check {self.agent}  ({rule.text}, {self.games} games)"]
        shown: list[list[str]] = []
        advice = [item for item in self.items.values() if item.status == ADVISORY]
        for item in self.items.values():
            if item.status == ADVISORY:
                continue
            status = item.status or UNTESTED
            detail = item.detail
            out.append(f"  {status:<8} {item.title}" + (f": {detail}" if detail else ""))
            if item.status == FAIL and item.evidence:
                # the same failure often fails several items: show its evidence once
                out += ["           (where, and its output: as above)"] if item.evidence in shown else [
                    f"           {line}" for line in item.evidence]
                shown.append(item.evidence)
        out += [f"  {note}" for note in self.notes]
        out += [f"  hint: {hint}" for hint in self.hints]
        untested = self.untested
        if self.failed:
            out.append("some checks FAILED")
        elif self.unsure:
            names = ", ".join(f'"{item.title}"' for item in self.unsure)
            out.append(f"no check failed; could not tell: {names} (the machine was too busy to time your program; "
                       "this does not count against it)" + (f": {self.busy_advice}" if self.busy_advice else ""))
        elif untested:
            names = ", ".join(f'"{item.title}"' for item in untested)
            out.append(f"no check failed; not tested: {names} (the check could not exercise "
                       f"{'it' if len(untested) == 1 else 'them'}; this does not count against your program)")
            out += [f"to have it tested: {item.to_test}" for item in untested if item.to_test]
        else:
            out.append("all checks passed")
        if advice:
            out.append("advice (good manners the referee does not require; the card passes without them):")
            out += [f"  {item.title}: {item.detail} ({WHY_ADVICE.get(item.key, 'not required')})" for item in advice]
        out += [f"not checked: {what}" for what in self.not_checked]
        if self.kept is not None:
            game, agent, number = self.first_fault or ("gameN", "NAME", "N")
            where = "at its first faulty move" if self.first_fault else "at move N"
            out.append(f"the games' files are kept in {self.kept} (each agent's output in gameN.stderr.log, each game in "
                       f"gameN.json: `othello replay {self.kept}/{game}.json --rerun {agent} --at {number}` runs it "
                       f"again {where})")
        return out


# ---------------------------------------------------------------------------
# One scripted game with the agent
# ---------------------------------------------------------------------------


class AgentGone(Exception):
    """The agent exited (or could not start) while the checker waited for it."""


class AgentSilent(Exception):
    """The agent wrote nothing in time."""


class ScriptedGame:
    """The agent in its own directory, and the checker's end of its two files."""

    def __init__(self, spec: AgentSpec, root: Path, label: str, time_per_move: float, card: ReportCard,
                 startup: float = STARTUP_SECONDS, config: Optional[GameConfig] = None,
                 size: int = DEFAULT_SIZE) -> None:
        self.spec = spec
        self.card = card
        self.time = time_per_move
        # The agent's seat, as the referee's: the same start-up, the same reading of a complete NAME.out.
        self.seat = AgentSeat(spec, root / label, root / f"{label}.stderr.log")
        self.seat.open()
        self.directory = self.seat.directory
        self.log_path = self.seat.stderr_path
        self.in_name, self.out_name = self.seat.in_name, self.seat.out_name
        self.root = root
        self.config = config or GameConfig(time_per_move=time_per_move)
        self.waker: Waker = Waker()  # the file watcher, once started
        self._board = Board.start(size)
        self.plies = 0  # moves (passes too) played so far in this game
        self.colour: Optional[Colour] = None  # the agent's, once sent
        self.moves_read = 0  # the agent's moves taken from NAME.out
        self.after_pass = False  # the checker has just passed: the agent's next move answers it
        self.used_at_send = Usage(0.0, 0.0)  # what the agent had used when NAME.in was last written
        self.runnable_since: Optional[tuple[float, Usage]] = None  # while its exit is watched: runnable at every look since
        self.exited_at = 0.0
        # The referee's clock: the same grace, the same start-up allowance on the first move (PROTOCOL.md section 4),
        # the same game clock if one is given (section 10).
        self.clock = Clock(replace(self.config.time_control(spec.label, manual=False), startup=startup))
        # The game as a record, kept as LABEL.json beside the agent's folder: `othello replay --rerun` reads it.
        self.record = GameRecord(spec.label, CHECKER, time_per_move=time_per_move, start=Board.start(size))
        card.new_game()

    def __enter__(self) -> "ScriptedGame":
        # Started as the referee starts it: the same sandbox, the same limits, the same file watcher.
        self.waker = make_waker([self.directory], self.config.polling, self.config.poll_interval,
                                names=[self.in_name, self.out_name])
        control = self.clock.control
        try:
            self.seat.start(self.config, isolation_for(self.config), time_per_move=control.fair_share(),
                            clock=control.clock_text, move_cap=control.per_move if control.base is not None else None,
                            hidden=[self.root], on_exit=self.waker.poke)
        except StartError as exc:
            self.close()
            raise AgentGone(str(exc)) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def process(self) -> AgentProcess:
        """The agent's processes (once started by ``with``)."""
        assert self.seat.process is not None, "the scripted game is not started"
        return self.seat.process

    @property
    def dir_fd(self) -> int:
        return self.seat.dir_fd

    def close(self) -> None:
        if self.seat.process is not None:
            self.seat.process.kill_all()
        self.waker.close()
        self.seat.close()
        self.save_record()

    def save_record(self) -> None:
        """Write the game so far as ``LABEL.json`` in the checker's folder, named as the agent's colour says."""
        if self.colour is None:
            return
        record = self.record
        if self.colour is BLACK:
            record.white, record.black = CHECKER, self.spec.label
        entry: dict[str, object] = {"colour": self.colour.value, "stderr_log": self.log_path.name,
                                    **self.spec.start_entry()}
        record.extra["agents"] = {self.spec.label: entry}
        record.extra["check"] = "a scripted game of othello check (the checker played the other side)"
        try:
            (self.root / f"{self.directory.name}.json").write_text(record.to_json())
        except OSError:
            pass  # the evidence is a help, never a reason to fail the check

    def play(self, move: Move, seconds: float = 0.0, comments: tuple[str, ...] = ()) -> None:
        """A move of either side: the board after it, and the move in the record."""
        self.board = self.board.play(move)
        self.record.moves.append(MoveRecord(move, seconds, list(comments)))

    @property
    def board(self) -> Board:
        return self._board

    @board.setter
    def board(self, board: Board) -> None:
        self._board = board  # always the position after one more move
        self.plies += 1

    # -- files ------------------------------------------------------------------

    def send(self, text: str) -> float:
        """Write NAME.in atomically; return the time it was in place (the clock starts)."""
        if self.seat.process is not None:
            self.used_at_send = self.process.usage()
        self.seat.write_in(text)
        return time.monotonic()

    def timing(self, started: float, now: float, limit: float, awaiting: bool = False) -> MoveTiming:
        """The figures of the turn begun at ``started`` (NAME.in written), at ``now``: the clock, the agent's use
        (``awaiting``: nothing came yet, so whether it is held in the run queue now is looked at too)."""
        return MoveTiming.measure(now - started, self.process.usage(awaiting).since(self.used_at_send), limit)

    def clock_line(self) -> str:
        """The clock line that ends a ``NAME.in`` asking for a move, for an agent that reads it under a clock (section 10)."""
        bank = self.clock.bank
        return format_clock_line(bank) if bank is not None and self.spec.reads_clock else ""

    def in_present(self) -> bool:
        return self.seat.in_present()

    def wait_deleted(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the agent to delete NAME.in."""
        deadline = time.monotonic() + seconds
        while self.in_present():
            if time.monotonic() > deadline or self.process.exited:
                return not self.in_present()
            time.sleep(POLL)
        return True

    def output_log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def evidence(self) -> list[str]:
        """Where the game stands (game, move number, the position drawn) and the end of the agent's output."""
        side = f"as {self.colour.full_name}, " if self.colour else ""
        opening = self.record.opening
        after = f" after the opening {format_opening(opening)}" if opening else ""
        lines = [f"in {self.directory.name} ({side}{self.board.to_move.full_name} to play move {self.move_number}"
                 f"{after}):"]
        lines += ["  " + line for line in self.board.draw().rstrip("\n").splitlines()]
        output = self.output_log().rstrip("\n").splitlines()
        if output:
            lines.append(f"its output ({self.log_path.name}), last lines:")
            lines += ["  | " + line for line in output[-OUTPUT_LINES:]]
        else:
            lines.append(f"its output ({self.log_path.name}) is empty")
        process = self.seat.process
        code = process.returncode if process is not None and process.exited else None
        # (a move printed on standard output is named by the failure itself: not again as a hint)
        lines += [f"hint: {hint}" for hint in hints(self.output_log(), code, self.moves_read, self.out_name,
                                                    home=self.card.home)
                  if not hint.startswith("your program printed")]
        return lines

    def sent_lines(self) -> list[str]:
        """The move lines the agent got through to the referee (its NAME.out): an echo of one is no mistake."""
        return [str(entry.move) for entry in self.record.moves if self.colour is None or entry.move.colour is self.colour]

    def untaken(self) -> str:
        """Why NAME.in is still there, in a few words for the item; the whole hint goes on the card, once.

        Read but kept, or never read: then the agent waits for another name,
        which its program may name (:func:`names_in_program`) or a file in
        its folder may show.
        """
        try:
            info = os.stat(self.in_name, dir_fd=self.dir_fd, follow_symlinks=False)
            read = info.st_atime_ns > info.st_mtime_ns  # a read after the rename moves the access time on
        except OSError:
            read = False
        if read:
            self.card.hint(f"it read {self.in_name} but did not delete it: delete it once read (PROTOCOL.md section 3)")
            return f"it read {self.in_name} but kept it"
        command = " ".join((self.spec.command or ())[:2])
        named = names_in_program(self.spec, self.directory)
        left = self.names_in_folder()
        if named or left:
            other = (named or left)[0]
            where = "its program names it" if named else f"it left {', '.join(self.files_of(other))} in its folder"
            self.card.hint(f"it never read {self.in_name}: it waits for {other}.in ({where}), so the name is "
                           f"hard-coded: call it by that name, `{other}={command} ...`, or give the program `{{name}}`")
        else:
            self.card.hint(f"it never read {self.in_name}: is the name hard-coded? then call it by that name, "
                           f"`NAME={command} ...`, or give the program `{{name}}`")
        return f"it never read {self.in_name}"

    def files_of(self, name: str) -> list[str]:
        """The files in its folder of the agent name ``name`` (``bob.out``)."""
        try:
            return sorted(entry for entry in os.listdir(self.directory) if entry.split(".")[0] == name)
        except OSError:
            return []

    def names_in_folder(self) -> list[str]:
        """Agent names that files in its folder suggest (``bob.out``, ``bob.in.tmp``), other than its own."""
        try:
            entries = os.listdir(self.directory)
        except OSError:
            return []
        return sorted({entry.split(".")[0] for entry in entries
                       if any(part in ("in", "out") for part in entry.split(".")[1:])} - {self.spec.file_name})

    def read_move(self, started: float) -> tuple[files.Message, float]:
        """Wait for a complete NAME.out, take it; return the message and the seconds it took."""
        clock = self.clock
        clock.start(started)
        deadline = clock.deadline()
        assert deadline is not None  # the checker always has a time per move
        deadline += WATCH_LONGER
        while True:
            message = self.seat.take_message(self.waker, 64 << 10, size=self.board.size)
            now = time.monotonic()
            if message is not None:
                first_move, late, limit = clock.first_move, clock.expired(now), clock.explain()
                timing = self.timing(started, now, clock.allowance() or 0.0) if late else None
                seconds = clock.stop(now)
                excused = timing is not None and timing.machine_to_blame()
                if not first_move and not excused:  # a first move's start-up is not thinking; a starved one unjudged
                    self.card.slowest = max(self.card.slowest, seconds)
                if timing is not None and excused:
                    self.card.machine_busy(timing)
                elif timing is not None:
                    self.card["in-time"].grade(False, f"a move took {seconds:.2f} s (limit {limit}; it used "
                                               f"{timing.used_text()})", evidence=self.evidence())
                self.moves_read += 1
                self.card.moves_timed += 1
                self.card.seconds_timed += seconds
                return message, seconds
            if self.process.exited:
                self.fault(Termination.CRASH, "exited without a move", FaultyMove(self.board.to_move, None, now - started))
                raise AgentGone(f"the agent exited (code {self.process.returncode}) without a move"
                                f"{self.process.memory_note()}")
            if now > deadline:
                timing = self.timing(started, now, clock.allowance() or 0.0, awaiting=True)
                if timing.machine_to_blame(awaiting=True):
                    # Starved of a core, not slow: watched on while its own time is not used up, then no verdict.
                    if timing.own_seconds is not None and timing.clock < (clock.allowance() or 0.0) + BUSY_WATCH:
                        deadline = now + WATCH_LONGER
                        continue
                    raise MachineBusy(timing)
                self.fault(Termination.TIMEOUT, "no move in time", FaultyMove(self.board.to_move, None, now - started))
                # What the wait was made of: the limit (the time, the grace, a first move's start-up), then the
                # checker's own watch, to tell a late move from none.
                waited = f"{now - started:.1f} s: {clock.explain()} allowed, {WATCH_LONGER:g} s more watched"
                printed = printed_move(self.output_log(), self.sent_lines())
                if printed is not None:  # the classic mistake: name it, not its consequence
                    raise AgentSilent(f"your program printed {printed} on standard output: write it to "
                                      f"{self.out_name} (no {self.out_name} within {waited})")
                why = f"; {self.untaken()}" if self.in_present() and not self.moves_read else ""
                raise AgentSilent(f"no move within {waited}{why}")
            self.waker.wait(POLL)

    @property
    def move_number(self) -> int:
        """The number of the move to play now, counted as in the record's moves (an opening's moves not counted)."""
        return len(self.record.moves) + 1

    def fault(self, termination: Termination, detail: str, faulty: FaultyMove) -> None:
        """The agent lost this game on a fault: kept in the record as the referee keeps one (the fault, the result at
        its move number), so that `othello replay GAME --rerun NAME --at N` takes the agent back there."""
        board = self.board
        self.record.fault = faulty
        self.record.result = Result(faulty.colour.opponent, termination, board.count(WHITE), board.count(BLACK),
                                    detail, self.move_number)
        if self.card.first_fault is None:
            self.card.first_fault = (self.directory.name, self.spec.label, self.move_number)
        if termination is Termination.ILLEGAL and not self.card.first_illegal:
            self.card.first_illegal = f"{self.directory.name} at move {self.move_number}"
            self.card.illegal_game = (self.directory.name, self.record, faulty.colour)

    def agent_move(self, started: float, colour: Colour) -> Move:
        """Read the agent's move and check it; raise AgentGone on anything wrong."""
        must_pass = self.board.legal_moves() == [Move.pass_(colour)]
        try:
            message, seconds = self.read_move(started)
            if message.move is None:
                self.fault(Termination.MALFORMED, f"malformed NAME.out: {message.error}",
                           FaultyMove(colour, message.line, seconds, list(message.comments)))
                raise AgentGone(f"malformed NAME.out: {message.error}")
            why = self.board.why_illegal(message.move)
            if message.move.colour is not colour:
                why = f"wrong colour {message.move.colour.value}"
            if why is not None:
                self.fault(Termination.ILLEGAL, f"illegal move {message.move.line()}: {why}",
                           FaultyMove(colour, message.line, seconds, list(message.comments)))
                raise AgentGone(f"illegal move {message.move.line()}: {why}")
        except (AgentGone, AgentSilent) as exc:
            opening = self.record.opening
            # (a failure at the opening's first move, the agent's or the checker's pass: the opening set it up)
            place = f" (from the opening {format_opening(opening)})" if opening and self.move_number <= 2 else ""
            if must_pass:
                self.card["must-pass"].grade(False, f"it had to pass{place}: {exc}", evidence=self.evidence())
            if self.after_pass:
                self.card["receives-pass"].grade(False, f"after the opponent's pass{place}: {exc}",
                                                 evidence=self.evidence())
            raise
        if self.after_pass:
            self.card["receives-pass"].grade(True, f"answered the opponent's pass with {message.move.line()}")
            self.after_pass = False
        if must_pass:
            self.card["must-pass"].grade(True, "passed when it had no move")
        self.play(message.move, seconds, message.comments)
        return message.move

    def watch_exit(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the agent to exit, reading its CPU and its wait for a core as it goes: once
        a process is gone, so are the kernel's counts of it, and an agent starved on its way out would be judged
        on what it had used before the end line (seen: 0 s of CPU and 0.1 s of waiting over 3.4 s of clock)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if self.process.wait_exit(max(0.0, min(EXIT_LOOK, left))):
                self.exited_at = time.monotonic()
                return True
            if left <= EXIT_LOOK:
                return False
            used, runnable = self.process.usage(), self.process.runnable()
            if not runnable:
                self.runnable_since = None
            elif self.runnable_since is None:
                self.runnable_since = (time.monotonic(), used)

    def exit_timing(self, started: float, limit: float) -> MoveTiming:
        """The figures of an exit that came late: what was read while it was there, and the time since the looks
        found it runnable for good that neither its CPU nor a counted wait explains.  The kernel counts a wait
        for a core when it ends, so a wait in progress at the last look, ended by the slice the agent exited in,
        is never read: it is counted as the wait it most likely was (in the agent's favour: a judge that cannot
        tell does not guess against it)."""
        timing = self.timing(started, self.exited_at, limit)
        if self.runnable_since is None or timing.used.waited is None:
            return timing
        since, then = self.runnable_since
        seen = self.process.usage()
        unseen = (self.exited_at - since) - (seen.cpu - then.cpu) - ((seen.waited or 0.0) - (then.waited or 0.0))
        return dataclasses.replace(timing, used=Usage(timing.used.cpu, timing.used.waited + max(0.0, unseen)))

    def end(self, last_move: str = "") -> bool:
        """Send the last move (if unsent) and the end line; return whether the agent exits in time."""
        outcome = self.board.outcome()
        assert outcome is not None, "the game is not over"
        self.record.result = outcome
        if not self.process.exited:
            if self.in_present() and not last_move:
                self.wait_deleted(self.time)
            started = self.send(last_move + format_end(outcome))
            if not self.watch_exit(END_GRACE_SECONDS + 0.5):
                # Watched longer before the figures are judged: just past the limit, any wait at all explains it.
                late = self.watch_exit(WATCH_LONGER)
                timing = (self.exit_timing(started, END_GRACE_SECONDS + 0.5) if late else
                          self.timing(started, time.monotonic(), END_GRACE_SECONDS + 0.5, awaiting=True))
                if timing.machine_to_blame(awaiting=not late):  # starved: it had no core to exit with
                    raise MachineBusy(timing, "" if late else "exit", "the exit")
                return False
        return self.process.wait_exit(END_GRACE_SECONDS + 0.5)


# ---------------------------------------------------------------------------
# The checker's own moves: steer towards a pass
# ---------------------------------------------------------------------------

WIN = 10**6


def _pass_value(board: Board, depth: int, steerer: Colour, victim: Colour, alpha: float, beta: float) -> float:
    """How close ``steerer`` can bring ``victim`` to a forced pass (the other side resists)."""
    if board.is_game_over():
        return -WIN
    moves = board.legal_moves()
    if not moves[0] and board.to_move is victim:
        return WIN + depth
    if depth == 0:
        few_discs = 60 if board.count(victim) < 3 else 0  # close to a wipe-out, which ends the game instead
        return 3 * board.legal_squares(victim.opponent).bit_count() - 10 * board.legal_squares(victim).bit_count() - few_discs
    maximising = board.to_move is steerer
    best: float = -2 * WIN if maximising else 2 * WIN
    for move in moves:
        value = _pass_value(board.play_unchecked(move), depth - 1, steerer, victim, alpha, beta)
        if maximising:
            best, alpha = max(best, value), max(alpha, value)
        else:
            best, beta = min(best, value), min(beta, value)
        if alpha >= beta:
            break
    return best


class _OutOfNodes(Exception):
    """The exact search used up its node budget."""


def can_force_pass(board: Board, steerer: Colour, victim: Colour, memo: dict[Board, bool], budget: list[int]) -> bool:
    """Exactly: can ``steerer`` reach a position where ``victim`` must pass, whatever the other side plays?"""
    if board.is_game_over():
        return False
    moves = board.legal_moves()
    if not moves[0] and board.to_move is victim:
        return True
    known = memo.get(board)
    if known is not None:
        return known
    budget[0] -= 1
    if budget[0] < 0:
        raise _OutOfNodes
    outcomes = (can_force_pass(board.play_unchecked(m), steerer, victim, memo, budget) for m in moves)
    result = any(outcomes) if board.to_move is steerer else all(outcomes)
    memo[board] = result
    return result


EXACT_EMPTIES = 12  # with this few empty squares, look for a forced pass exactly
EXACT_NODES = 50_000  # ... within this many positions (a second or two in Python)


def steering_move(board: Board, victim: Colour, rng: random.Random, depth: int = 2,
                  memo: Optional[dict[Board, bool]] = None) -> Move:
    """A move for the side to move that tends to leave ``victim`` without a move.

    Near the end of the game it searches exactly for a move that forces the
    pass whatever the other side does.  Otherwise (or if that search is too
    big) it looks ``depth`` plies ahead, the other side resisting, at the
    victim's mobility against the other side's, avoiding wipe-outs (a game
    over has no pass).  ``memo``: the exact search's answers, kept by the
    caller for the rest of one game (the same steerer and victim): the next
    move's search is most of this one's subtree.
    """
    moves = board.legal_moves()
    rng.shuffle(moves)
    me = board.to_move
    if board.empty.bit_count() <= EXACT_EMPTIES:
        memo = {} if memo is None else memo
        budget = [EXACT_NODES]
        try:
            for move in moves:
                if can_force_pass(board.play_unchecked(move), me, victim, memo, budget):
                    return move
        except _OutOfNodes:
            pass
    return max(moves, key=lambda m: _pass_value(board.play_unchecked(m), depth - 1, me, victim, -2 * WIN, 2 * WIN))


# ---------------------------------------------------------------------------
# The scenarios
# ---------------------------------------------------------------------------


def _start(game: ScriptedGame, colour: Colour, card: ReportCard, opening: tuple[Move, ...] = ()) -> float:
    """Send the colour (and the opening's moves); for the side that waits check the file goes and nothing is written out of turn."""
    size = format_size(game.board.size) if game.board.size != DEFAULT_SIZE else ""
    board = opening_board(list(opening)) if opening else game.board
    clock = game.clock_line() if board.to_move is colour else ""  # the agent is asked for a move
    started = game.send(format_colour(colour) + size + "".join(format_move(move) for move in opening) + clock)
    game.colour = colour
    if opening:
        game._board, game.plies = board, len(opening)
        game.record.opening = list(opening)
    if game.board.to_move is not colour:
        # The colour file goes within the first move's time (grace included), as the referee counts it.
        if not game.wait_deleted(game.clock.allowance() or 0.0):
            if game.process.exited:
                raise AgentGone(f"the agent exited (code {game.process.returncode}) without reading and deleting "
                                f"{game.in_name}")
            problem = (f"{game.in_name} (the colour) was not deleted within {game.time + game.clock.control.startup:g} s: "
                       + game.untaken())
            late = game.wait_deleted(WATCH_LONGER)  # judged further from the limit (see ScriptedGame.end)
            timing = game.timing(started, time.monotonic(), game.clock.allowance() or 0.0, awaiting=not late)
            if timing.machine_to_blame(awaiting=not late):  # starved of a core: it may not have been able to read it
                raise MachineBusy(timing, "" if late else f"deletion of {game.in_name}", f"deleting {game.in_name}")
            card["deletes"].grade(False, problem, evidence=game.evidence())  # not UNTESTED under this line
            raise AgentGone(problem)
        time.sleep(QUIET)
        if files.exists(game.dir_fd, game.out_name):
            raise AgentGone(f"it wrote a move as {colour.full_name} before {colour.opponent.full_name} had moved")
    return started


def play_scenario(game: ScriptedGame, colour: Colour, card: ReportCard, victim: Colour, rng: random.Random,
                  stop_at_pass: bool, lower_case: bool = False, opening: tuple[Move, ...] = ()) -> str:
    """Play the checker's side until the end (or until ``victim`` has passed), from ``opening`` if given.

    Returns the last move still to send with the end line ("" if none).
    """
    started = _start(game, colour, card, opening)
    checker = colour.opponent
    forced: dict[Board, bool] = {}  # the steering's exact answers, for this game's steerer and victim
    while not game.board.is_game_over():
        if game.board.to_move is colour:
            move = game.agent_move(started, colour)
            if game.in_present():
                card["deletes"].grade(False, f"{game.in_name} was still there when its move {move.line()} arrived",
                                      evidence=game.evidence())
                files.remove(game.dir_fd, game.in_name)
            else:
                card["deletes"].grade(True)
            if not move:
                if stop_at_pass and victim is colour:
                    return ""
        else:
            move = steering_move(game.board, victim, rng, memo=forced)
            game.play(move)
            text = format_move(move)
            if lower_case:
                text = move.line().lower().replace(" ", "  ") + "\r\n"
            game.after_pass = not move
            if game.board.is_game_over():
                return text  # sent with the end line, as the referee does
            if game.in_present():
                card["deletes"].grade(False, f"{game.in_name} was not deleted after the agent read it",
                                      evidence=game.evidence())
            started = game.send(text + game.clock_line())
            if stop_at_pass and not move and victim is checker:
                # the agent must now answer the pass with a move
                game.agent_move(started, colour)
                return ""
    return ""


def check_agent(spec: AgentSpec, time_per_move: float = CHECK_SECONDS, attempts: int = 8, seed: int = 0,
                workdir: Optional[Path] = None, log: Callable[[str], None] = lambda line: None,
                startup: float = STARTUP_SECONDS, sandbox: str = GameConfig.sandbox,
                fail_fast: bool = False, clock: Optional[tuple[float, float]] = None,
                limits: Optional[GameConfig] = None, home: str = HOME_HERE, busy_advice: str = QUIETER) -> ReportCard:
    """Run every scenario on the agent ``spec``; return the report card (``fail_fast``: stop at the first failure).

    ``startup`` is the extra time on each game's first move, as the referee
    gives; ``sandbox`` as for a game (``"bwrap"`` or ``"none"``); ``limits``
    the referee's other settings of the checker's games (memory, processes,
    disk: a class's ``[referee]``), their time and sandbox this call's;
    ``home`` what its hints call ``{home}`` (a class server's check: the submission's folder);
    ``busy_advice`` what the card says to do when the machine was too busy to time the agent (UNSURE).
    Raises :class:`~othello_arena.referee.sandbox.SandboxUnavailable` before
    any game if the sandbox cannot run here.
    """
    config = replace(limits or GameConfig(), time_per_move=time_per_move, sandbox=sandbox, clock=clock)
    isolation_for(config)
    card = ReportCard(str(spec), time_per_move, clock=format_clock(*clock) if clock else "", home=home,
                      busy_advice=busy_advice)
    if spec.openings:
        card.items[OPENINGS_ITEM[0]] = Item(*OPENINGS_ITEM)
    elif not spec.is_manual:
        card.not_checked.append("openings, as it does not declare them (a program that reads them is given as "
                                "openings:NAME=COMMAND, PROTOCOL.md section 8)")
    if _checked_sizes(spec):
        card.items[SIZES_ITEM[0]] = Item(*SIZES_ITEM)
    missing = missing_program(spec)
    if missing is not None:
        for key in ("white", "black"):
            card[key].grade(False, missing)
        return card  # nothing else can be said: no PASS for speed either
    root = Path(tempfile.mkdtemp(prefix="othello-check-", dir=workdir))
    try:
        scenarios = _run_scenarios(spec, card, root, time_per_move, attempts, random.Random(seed), log, startup, config,
                                   fail_fast)
        if scenarios.refused_first == {WHITE, BLACK}:
            card.hint(ORIENTATION)
        _grade_speed(card, time_per_move, config.grace)
        _untested_without_a_move(card)
        _drift_hint(card)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    if card.failed:
        card.kept = root  # the student's evidence: every game's files and the agent's output
    else:
        shutil.rmtree(root, ignore_errors=True)
    return card


def names_in_program(spec: AgentSpec, directory: Path) -> list[str]:
    """Names ``X`` of ``"X.in"`` written in the agent's program files (the program, and a script or jar it is given).

    A C program that opens ``"bob.in"`` keeps the string in its binary; a
    script or a class file keeps it in its text.  Built-in agents and
    programs that are not files here give none.
    """
    if spec.command is None or spec.is_manual:
        return []
    home = spec.home or Path.cwd()
    found: list[str] = []
    for word in spec.argv(directory, 1.0):
        path = Path(word) if "/" in word else Path(shutil.which(word) or home / word)
        path = path if path.is_absolute() else home / path
        if not path.is_file() or path.stat().st_size > PROGRAM_BYTES or _is_interpreter(path):
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found += [name.decode() for name in _IN_NAME.findall(data) if name.decode() not in found]
    return [name for name in found if name not in ("NAME", spec.file_name)]


def _is_interpreter(path: Path) -> bool:
    """python3, java, node...: a program whose strings say nothing of the agent's."""
    return path.resolve().parent in {Path(p).resolve() for p in ("/usr/bin", "/bin", "/usr/local/bin", "/usr/lib/jvm")} \
        or "python" in path.name or path.name in ("java", "node", "awk", "gawk", "mawk")


def missing_program(spec: AgentSpec) -> Optional[str]:
    """Say so if the program of ``spec`` does not exist (not built yet?), else ``None``."""
    assert spec.command is not None
    program = spec.argv(Path("."), 1.0)[0]
    home = spec.home or Path.cwd()
    if "/" in program:
        if (home / program).exists():  # (an absolute program ignores home)
            return None
    elif shutil.which(program) is not None:
        return None
    return f"no program `{spec.command[0]}` here ({home}): build it first?"


def _run_scenarios(spec: AgentSpec, card: ReportCard, root: Path, time_per_move: float, attempts: int,
                   rng: random.Random, log: Callable[[str], None], startup: float, config: GameConfig,
                   fail_fast: bool = False) -> "_Scenarios":
    """Play every scenario in ``root``, grading ``card``; return them (what they noticed)."""
    scenarios = _Scenarios(spec, card, root, time_per_move, attempts, rng, log, startup, config, fail_fast=fail_fast)
    steps = [scenarios.whole_games, scenarios.passes, scenarios.lower_case]
    steps += [scenarios.openings] if spec.openings else []
    steps += [scenarios.sizes] if _checked_sizes(spec) else []
    for step in [*steps, scenarios.illegal_move]:
        if scenarios.stopped():
            card.notes.append("stopped at the first failure (--fail-fast): what was not reached is UNTESTED")
            break
        try:
            step()
        except MachineBusy as busy:  # no game can be judged on this machine now: stop, and say why
            card.machine_busy(busy.timing, busy.awaited, busy.what)
            card.stopped_busy = True
            card.notes.append("stopped: the machine was too busy to time the program (see answers in time); what "
                              "was not reached is UNTESTED")
            break
    return scenarios


# The items that need a move from the agent: with none ever read, their verdicts say nothing.
NEEDS_A_MOVE = ("in-time", "receives-pass", "must-pass", "full-game", "liberal", "illegal", OPENINGS_ITEM[0], SIZES_ITEM[0])


def _grade_speed(card: ReportCard, time_per_move: float, grace: float) -> None:
    """``answers in time`` over every game played: the card's one slowest-move figure (first moves' start-up apart)."""
    if not card.moves_timed:  # a program that never moved is not fast
        return
    allowed = TimeControl(time_per_move, grace).allowance(first_move=False) or 0.0
    card["in-time"].grade(card.slowest <= allowed, f"slowest move {card.slowest:.2f} s of {allowed:g} s allowed "
                          f"(its first moves' start-up apart; {card.moves_timed} moves)")


def _untested_without_a_move(card: ReportCard) -> None:
    """No move was ever read from the agent: what depends on one is UNTESTED, not a second failure or a false PASS."""
    if card.moves_timed:
        return
    for key in NEEDS_A_MOVE:
        if key in card.items and card.items[key].status != UNSURE:
            item = card.items[key]
            item.status, item.evidence, item.to_test = None, [], ""
            item.detail = ("not reached: the machine was too busy to time it (see answers in time)" if card.unsure
                           else "not reached: no move was ever read from it (see starts as White)")


def _drift_hint(card: ReportCard) -> None:
    """Several failures after an illegal move: most likely one cause, the agent's board drifting from the referee's.

    Where the agent drew its board in its comments, the move where that
    board first differs from the referee's is named (:mod:`..referee.rerun`'s
    comparison, on the game as recorded).
    """
    failed = [item for item in card.items.values() if item.status == FAIL]
    if not (card.first_illegal and len(failed) > 1 and ORIENTATION not in card.hints):  # (upside down: said already)
        return
    drift, squares = _drawn_drift(card)
    drawn = (f"; the board it draws in its comments first differs from the referee's in {drift} ({squares})"
             if drift else "")
    card.hint(f"its first illegal move ({card.first_illegal}) usually means its board differs from the referee's "
              f"(a flip missed, a move not played on it){drawn}; the other failures may follow from it: fix that one "
              "first, then check again (`othello replay ... --rerun` below takes it back there)")
    # Each failure in a later game says so where it is read ("may": the check cannot see inside the agent).
    cause = (f"the board drift its drawn board shows in {drift}" if drift else
             f"its earlier illegal move, {card.first_illegal}, where its board most likely drifted from the referee's")
    earlier = card.failed_by_illegal
    for item in failed:
        if earlier is not None and item.key not in earlier:
            item.detail += f" (this may follow from {cause}: see the hint)"


def _drawn_drift(card: ReportCard) -> tuple[str, str]:
    """Where the board the agent drew in its comments first differs from the referee's, in the game of its first
    illegal move, and the squares (``("game1 at move 5", "B2 differs")``); ``("", "")`` if it drew none, or none
    that differs."""
    if card.illegal_game is None:
        return "", ""
    game, record, colour = card.illegal_game
    difference = compare_boards(record, recorded_turns(record, colour)).difference
    if difference is None:
        return "", ""
    squares = difference.squares()
    return (f"{game} at move {difference.number}",
            f"{' '.join(squares[:6])}{' ...' if len(squares) > 6 else ''} differ{'s' if len(squares) == 1 else ''}")


def _checked_sizes(spec: AgentSpec) -> list[tuple[int, Colour]]:
    """The (size, colour) games of the bigger-board check that ``spec`` declares it plays."""
    return [(size, colour) for size, colour in CHECK_SIZES if size in spec.sizes]


@dataclass
class _Scenarios:
    """The checker's scenarios, in the order they run, each grading its items of the card."""

    spec: AgentSpec
    card: ReportCard
    root: Path
    time_per_move: float
    attempts: int
    rng: random.Random
    log: Callable[[str], None]
    startup: float
    config: GameConfig
    played: int = 0
    fail_fast: bool = False  # stop at the first failure (a broken agent takes a minute otherwise)
    refused_first: set[Colour] = field(default_factory=set)  # the colours whose first move (or White's) it refused

    def game(self, size: int = DEFAULT_SIZE) -> ScriptedGame:
        """A fresh scripted game, in its own folder."""
        self.played += 1
        return ScriptedGame(self.spec, self.root, f"game{self.played}", self.time_per_move, self.card, self.startup,
                            self.config, size)

    def whole_games(self) -> None:
        """1-2. A whole game as White and as Black, steering towards passes."""
        for colour, key, victim in ((WHITE, "white", WHITE), (BLACK, "black", WHITE)):
            if self.stopped():
                return
            self.log(f"a whole game as {colour.full_name}")
            g = self.game()
            try:
                with g:
                    last = play_scenario(g, colour, self.card, victim, self.rng, stop_at_pass=False)
                    self.card[key].grade(True, f"played to the end, {g.board.count(WHITE)}-{g.board.count(BLACK)}")
                    exited = g.end(last)
                    self.card["full-game"].grade(exited, "exited after the end" if exited else
                                                 f"still running {END_GRACE_SECONDS:g} s after the end line",
                                                 evidence=g.evidence())
            except (AgentGone, AgentSilent) as exc:
                self.card[key].grade(False, str(exc), evidence=g.evidence())
                self.card["full-game"].grade(False, f"as {colour.full_name}: {exc}", evidence=g.evidence())
                first_own = g.plies == (0 if colour is WHITE else 1) and g.moves_read <= 1
                if isinstance(exc, AgentGone) and first_own and (colour is BLACK or str(exc).startswith("illegal move")):
                    self.refused_first.add(colour)
                if isinstance(exc, AgentSilent):
                    self.card["in-time"].grade(False, str(exc), evidence=g.evidence())

    def stopped(self) -> bool:
        """With ``fail_fast``, whether a check has failed already (then nothing more is played)."""
        return self.fail_fast and self.card.failed

    def passes(self) -> None:
        """3. Passes: from openings that force one, if the agent reads openings; then steered games for what is left."""
        if self.spec.openings:
            self.forced_passes()
        steered = 0
        for attempt in range(self.attempts):
            for key, victim_is_agent in (("must-pass", True), ("receives-pass", False)):
                if self.card[key].status is not None or self.stopped():
                    continue
                steered += 1
                colour = WHITE if (attempt + victim_is_agent) % 2 == 0 else BLACK
                victim = colour if victim_is_agent else colour.opponent
                self.log(f"steering a game towards a pass ({self.card[key].title}), attempt {attempt + 1}")
                g = self.game()
                try:
                    with g:
                        play_scenario(g, colour, self.card, victim, self.rng, stop_at_pass=True)
                except (AgentGone, AgentSilent) as exc:
                    self.card[key].grade(False, f"while steering towards a pass: {exc}", evidence=g.evidence())
        for key in PASS_ITEMS:
            item = self.card[key]
            if item.status is None and not self.stopped():
                situation = "your program must pass" if key == "must-pass" else "the checker (its opponent) must pass"
                item.detail = (f"the check never reached a position where {situation} (in 2 whole games and {steered} "
                               "steered towards a pass); this does not count against it")
                # (an agent that declares openings never gets here: it was started where it must pass)
                item.to_test = ("have your program read openings and declare it (openings:NAME=COMMAND, PROTOCOL.md "
                                "section 8); the check then starts it from openings where it must pass at once")

    def forced_passes(self) -> None:
        """From each opening of :data:`FORCED_PASS_OPENINGS`: as the side that must pass, and as the side that waits."""
        done: dict[str, list[str]] = {key: [] for key in PASS_ITEMS}
        for passer, text in FORCED_PASS_OPENINGS.items():
            opening = tuple(parse_opening(text))
            for colour, key in ((passer, "must-pass"), (passer.opponent, "receives-pass")):
                if self.stopped():
                    return
                self.log(f"a game from the opening {text}, where {passer.full_name} must pass, as {colour.full_name}")
                g = self.game()
                try:
                    with g:
                        play_scenario(g, colour, self.card, passer, self.rng, stop_at_pass=True, opening=opening)
                    done[key].append(colour.full_name)
                except (AgentGone, AgentSilent) as exc:
                    self.card[key].grade(False, f"from the opening {text} ({passer.full_name} has no move) as "
                                         f"{colour.full_name}: {exc}", evidence=g.evidence())
        for key, colours in done.items():
            if self.card[key].status == PASS and len(colours) == len(FORCED_PASS_OPENINGS):
                what = "passed when it had no move" if key == "must-pass" else "answered the opponent's pass with a move"
                self.card[key].detail = f"{what}, as White and as Black (from openings that force a pass)"

    def lower_case(self) -> None:
        """4. A lower-case move line with CRLF (advisory: the referee writes upper case only)."""
        self.log("a lower-case move with CRLF")
        g = self.game()
        try:
            with g:
                started = _start(g, WHITE, self.card)
                g.agent_move(started, WHITE)
                reply = g.board.legal_moves()[0]
                g.play(reply)
                started = g.send(f"( {reply.colour.value.lower()} {reply.line()[3:-1].lower()} )\r\n" + g.clock_line())
                move = g.agent_move(started, WHITE)
                self.card["liberal"].grade(True, f"answered {reply.line().lower()!r} with {move.line()}")
        except (AgentGone, AgentSilent) as exc:
            self.card["liberal"].grade(False, str(exc), advisory=True)

    def openings(self) -> None:
        """5. Openings, when declared: as the side to move after the opening, and as the side that waits."""
        opening = tuple(parse_opening(CHECK_OPENING))
        for colour in (opening_board(list(opening)).to_move, opening_board(list(opening)).to_move.opponent):
            self.log(f"a game from the opening {CHECK_OPENING} as {colour.full_name}")
            g = self.game()
            try:
                with g:
                    last = play_scenario(g, colour, self.card, colour, self.rng, stop_at_pass=False, opening=opening)
                    g.end(last)
                    self.card["openings"].grade(True, f"played on from {format_opening(opening)} as both colours")
            except (AgentGone, AgentSilent) as exc:
                self.card["openings"].grade(False, f"from the opening {CHECK_OPENING} as {colour.full_name}: {exc}",
                                       evidence=g.evidence())

    def sizes(self) -> None:
        """6. Bigger boards, when declared: a whole game on each, from the size line to the end line."""
        played = []
        for size, colour in _checked_sizes(self.spec):
            self.log(f"a whole game on {size}x{size} as {colour.full_name}")
            g = self.game(size)
            try:
                with g:
                    last = play_scenario(g, colour, self.card, colour, self.rng, stop_at_pass=False)
                    g.end(last)
                    played.append(f"{size}x{size} as {colour.full_name} ({g.board.count(WHITE)}-{g.board.count(BLACK)})")
            except (AgentGone, AgentSilent) as exc:
                self.card["sizes"].grade(False, f"on {size}x{size} as {colour.full_name}: {exc}", evidence=g.evidence())
                return
        self.card["sizes"].grade(True, "played to the end on " + " and ".join(played))

    def illegal_move(self) -> None:
        """7. An illegal opponent move (advisory)."""
        self.log("an illegal opponent move")
        g = self.game()
        try:
            with g:
                _start(g, BLACK, self.card)
                illegal = Move(WHITE, 0)  # A1 flips nothing at the start
                g.send(format_move(illegal))
                deadline = g.clock.control.deadline(time.monotonic(), first_move=False) or 0.0
                while not g.process.exited and not files.exists(g.dir_fd, g.out_name) and time.monotonic() < deadline:
                    time.sleep(POLL)
                g.process.wait_exit(0.2)
                wrote = files.exists(g.dir_fd, g.out_name)
                said = "illegal" in g.output_log().lower()
                if g.process.exited and not wrote:
                    self.card["illegal"].grade(True, "it stopped without answering" + (" and said so" if said else ""))
                else:
                    self.card["illegal"].grade(False, "it answered (W A 1), which flips nothing, with a move; it "
                                               "should say so on stderr and exit (PROTOCOL.md section 3)", advisory=True)
        except (AgentGone, AgentSilent) as exc:
            self.card["illegal"].grade(False, str(exc), advisory=True)

