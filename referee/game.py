"""One game between two agents through files: :func:`play_game`.

The referee is a loop that sleeps on file events (or polls), and each time
it wakes it looks at the files and the processes themselves:

1. start both agents, each in its own seat (:class:`.player.Player`, an
   :class:`.seat.AgentSeat` with the game's account of the side): its own
   directory inside the game directory;
2. write each side its colour (``W`` / ``B``);
3. then turn by turn: *read* the side to move's complete ``NAME.out`` (the
   seat takes it and deletes it), *judge* it against the side's clock
   (:class:`.clock.Clock`: the one rule of time) and the rules core,
   *relay* it to the other side's ``NAME.in`` (the other's clock starts);
4. at the end, however it ends, send both sides the end line, give them a
   short grace to exit, stop every process they started, write ``game.json``.

A fault of an agent is never an exception here: it ends the game with a
:class:`~othello_arena.protocol.Termination` (``timeout``, ``illegal``,
``malformed``, ``crash``) in the result.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

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
    format_comment,
    format_end,
    format_move,
    format_size,
)
from ..protocol.notation import format_clock_line, legal_names
from ..protocol.openings import format_opening, opening_board
from . import files
from .clock import format_clock
from .config import GameConfig
from .launch import isolation_for
from .player import LimitMonitor, Player
from .process import StartError
from .spec import AgentSpec, distinct_labels
from .watch import Waker, make_waker

@dataclass
class GameEvent:
    """Something to show: ``start``, ``waiting``, ``move``, ``lost-turn``, ``retry``, ``relayed``, ``warning`` or ``end``.

    ``clocks`` holds each colour's total thinking time so far, ``banks``
    what is left of each colour's game clock (``None``: none) when the
    event was sent; for
    ``waiting``, ``path`` is the ``NAME.out`` the side to move must write,
    ``time_limit`` its seconds (``None``: no limit) and ``manual`` whether a
    person plays it; ``record`` comes with ``end``; ``relayed`` follows a
    move once the other side's ``NAME.in`` is in place; ``retry`` says
    (``message``) what was wrong with a person's ``NAME.out``, before they
    are prompted again.  ``at`` is the ``time.monotonic()`` of the event;
    ``names`` the label of each colour; ``comments`` the agent's comment
    lines that came with a ``move`` (or ``lost-turn``), as in the record.
    """

    kind: str
    board: Board
    move: Optional[Move] = None
    colour: Optional[Colour] = None
    player: str = ""
    seconds: float = 0.0
    clocks: dict[Colour, float] = field(default_factory=dict)
    banks: dict[Colour, Optional[float]] = field(default_factory=dict)
    message: str = ""
    path: Optional[Path] = None
    time_limit: Optional[float] = None
    manual: bool = False
    record: Optional[GameRecord] = None
    names: dict[Colour, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)
    comments: list[str] = field(default_factory=list)


EventCallback = Callable[[GameEvent], None]


@dataclass
class _Fault:
    """An agent broke a rule: ``loser`` loses (``None``: both did, a draw), ``termination`` says how.

    ``line``, ``seconds`` and ``comments`` are the faulty answer as the
    record keeps it (:class:`~othello_arena.protocol.FaultyMove`).
    """

    loser: Optional[Colour]
    termination: Termination
    detail: str
    line: Optional[str] = None
    seconds: Optional[float] = None
    comments: tuple[str, ...] = ()


_UNSAFE = re.compile(r"[^A-Za-z0-9_.+#-]")


def _directory_names(white: AgentSpec, black: AgentSpec) -> tuple[str, str]:
    first = _UNSAFE.sub("_", white.label).lstrip(".") or "white"
    second = _UNSAFE.sub("_", black.label).lstrip(".") or "black"
    if second == first:
        second += "-2"
    return first, second


# A side told to stop is looked at again (a newcomer stopped too) after a pause that doubles up to this,
# for at most STOP_LOOKS_SECONDS: as long as the referee waited for it before (AgentProcess.wait_stopped).
STOP_LOOK_MAX_PAUSE = 0.002
STOP_LOOKS_SECONDS = 0.2


@dataclass
class _PendingStop:
    """A side whose processes were told to stop and not all seen stopped yet."""

    player: Player
    until: float  # looks end then: what still runs is left to the next suspension
    pause: float = 0.0001


class _Starter:
    """Starts one side's program in a thread that then stays, as the parent thread of its processes, until released.

    The referee's children die with it through ``PR_SET_PDEATHSIG``
    (:mod:`.process`), which the kernel sends when the *thread* that forked
    the child ends, not the process: a thread that started an agent and
    returned would kill it at once.  :meth:`release` lets the thread end,
    once the agent's processes are gone.
    """

    def __init__(self, label: str, start: Callable[[], Optional[_Fault]]) -> None:
        self._start = start
        self._done = threading.Event()
        self._released = threading.Event()
        self._fault: Optional[_Fault] = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, name=f"referee-start-{label}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._fault = self._start()
        except BaseException as exc:  # a referee error: raised in the game's own thread by result()
            self._error = exc
        finally:
            self._done.set()
        self._released.wait()

    def result(self) -> Optional[_Fault]:
        """Wait for the start; the side's fault (``None``: it started), or raise what the start raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._fault

    def release(self) -> None:
        self._released.set()
        self._thread.join(timeout=5)


class _Game:
    """The state of one game being played; :func:`play_game` is its only user."""

    def __init__(
        self,
        white: AgentSpec,
        black: AgentSpec,
        config: GameConfig,
        out_dir: Path,
        seed: Optional[int],
        on_event: Optional[EventCallback],
        opening: Sequence[Move] = (),
    ) -> None:
        white, black = distinct_labels(white, black)
        board = check_opening(white, black, opening, config.size)
        self.config = config
        self.out_dir = Path(out_dir).resolve()
        self.on_event = on_event
        white_dir, black_dir = _directory_names(white, black)
        self.players = {
            WHITE: Player(white, WHITE, self.out_dir / white_dir, config),
            BLACK: Player(black, BLACK, self.out_dir / black_dir, config),
        }
        self.board = board
        # The side to move after the opening moves first; the other is "second".
        self.first_colour = board.to_move
        self.record = GameRecord(white.label, black.label, seed=seed, time_per_move=config.time_per_move,
                                 opening=list(opening), start=Board.start(config.size),
                                 clock=format_clock(*config.clock) if config.clock else None)
        self.waker: Waker = Waker()
        self.warnings: list[str] = []
        self.started = time.monotonic()
        self._monitor: Optional[LimitMonitor] = None
        self.timeout_seen = False
        self.temp_fd = -1
        self.second_colour_deadline: Optional[float] = None  # the second side must delete its first NAME.in by then
        self.stopping: Optional[_PendingStop] = None  # a side told to stop, not yet seen stopped (see confirm_suspended)
        self.move_event: Optional[tuple[str, dict[str, Any]]] = None  # the move judged, its event not sent yet
        self.record_json = ""  # the text of game.json, once written
        self.starters: list[_Starter] = []  # the threads that started the other sides, held until teardown
        # Raises SandboxUnavailable before anything starts if the sandbox was
        # asked for and cannot run here.
        self.isolation = isolation_for(config)

    # -- events ----------------------------------------------------------------

    def emit(self, kind: str, **fields: Any) -> None:
        if self.on_event is None:
            return
        clocks = {colour: player.clock.used for colour, player in self.players.items()}
        now = time.monotonic()
        banks = {colour: player.clock.remaining(now) for colour, player in self.players.items()}
        try:
            names = {colour: player.label for colour, player in self.players.items()}
            self.on_event(GameEvent(kind, self.board, clocks=clocks, banks=banks, names=names, **fields))
        except Exception as exc:  # a display must not stop a game
            self.warnings.append(f"event callback failed on {kind!r}: {exc!r}")

    def warn(self, text: str, player: Optional[Player] = None) -> None:
        (player.warnings if player else self.warnings).append(text)
        self.emit("warning", message=text, player=player.label if player else "")

    # -- set up and tear down ----------------------------------------------------

    def setup(self) -> Optional[_Fault]:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for player in self.players.values():
            player.open()
        # The referee's temporary files live outside the watched directories.
        temp_dir = self.out_dir / ".referee"
        temp_dir.mkdir(exist_ok=True)
        self.temp_fd = os.open(temp_dir, os.O_RDONLY | os.O_DIRECTORY)
        for player in self.players.values():
            player.temp_fd = self.temp_fd
        self.waker = make_waker(
            [p.directory for p in self.players.values()], self.config.polling, self.config.poll_interval,
            names=[name for p in self.players.values() for name in (p.in_name, p.out_name)],
        )
        self.emit("start", message="; ".join(
            f"{p.label} ({p.colour.value}) plays in {p.directory} with {p.in_name} and {p.out_name}"
            for p in self.players.values()
        ) + (f"; opening {format_opening(self.record.opening)}, {self.first_colour.full_name} to move"
             if self.record.opening else "")
          + (f"; a {self.config.size}x{self.config.size} board" if self.config.size != DEFAULT_SIZE else ""))
        failed = [fault for fault in self.start_processes() if fault is not None]
        if len(failed) == 2:
            return _Fault(None, Termination.CRASH, "neither agent could be started: " + "; ".join(f.detail for f in failed))
        if failed:
            return failed[0]
        self._monitor = LimitMonitor(self.players.values(), self.config, on_kill=self.waker.poke)
        self._monitor.start()
        return None

    def start_processes(self) -> list[Optional[_Fault]]:
        """Start both programs at once, the second side's in a :class:`_Starter` thread; each one's fault, if any
        (White's first).

        Starting an agent is mostly waiting: for the fork to reach ``exec``
        (a CPU for the child), then for bwrap to build the sandbox.  One
        after the other, the game waited for both in turn (issue 27); at
        once, the waits overlap.  The second side starts
        first: its start-up is the game's first wait (it must take its
        colour file before the first side is told to move).
        """
        programs = [player for player in (self.players[self.first_colour.opponent], self.players[self.first_colour])
                    if not player.spec.is_manual]
        if not programs:
            return []
        self.starters = [_Starter(player.label, functools.partial(self.start_process, player)) for player in programs[:-1]]
        try:
            last = self.start_process(programs[-1])
        finally:
            faults = [starter.result() for starter in self.starters]  # each one started, or failed, before going on
        by_colour = dict(zip((player.colour for player in programs), [*faults, last]))
        return [by_colour[colour] for colour in (WHITE, BLACK) if colour in by_colour]

    def start_process(self, player: Player) -> Optional[_Fault]:
        try:
            control = player.clock.control  # under a game clock OTHELLO_TIME is a fair share of the bank
            process = player.start(self.config, self.isolation, time_per_move=control.fair_share(), clock=control.clock_text,
                                   move_cap=control.per_move if control.base is not None else None,
                                   hidden=[self.out_dir], on_exit=self.waker.poke, warn=lambda text: self.warn(text, player))
        except StartError as exc:
            player.start_error = str(exc)
            return _Fault(player.colour, Termination.CRASH, f"{player.label} could not be started: {exc}")
        cgroup = process.cgroup
        # Without a cgroup: memory by the referee's watchdog, processes and file size by rlimits.
        player.limits = f"cgroup v{cgroup.version}" if cgroup is not None else "watchdog and rlimits"
        return None

    def teardown(self, result: Result) -> None:
        end = format_end(result)
        for player in self.players.values():
            if player.process:  # know every process before any exits and orphans its children
                player.process.scan_tree()
        for player in self.players.values():
            if player.dir_fd < 0:
                continue
            player.snapshot = None
            if player.process:
                player.process.resume()
            text = player.pending_colour + (format_move(player.unsent) if player.unsent else "") + end
            try:
                player.write_in(text)
            except OSError as exc:
                self.warn(f"could not write the end line to {player.in_name}: {exc}", player)
        deadline = time.monotonic() + self.config.end_grace
        for player in self.players.values():
            if player.process:
                player.process.wait_exit(max(0.0, deadline - time.monotonic()))
        for player in self.players.values():
            if player.process:
                player.process.kill_all()
        for starter in self.starters:  # their agents are gone: the threads that started them may end
            starter.release()
        self.starters = []
        if self._monitor is not None:
            self._monitor.stop()
        self.waker.close()
        keep_mb, why = self.config.files_kept()
        for player in self.players.values():
            if player.process is not None and keep_mb is not None:  # a person's directory is theirs
                player.trim(keep_mb, why)
            player.close()
        if self.temp_fd >= 0:
            os.close(self.temp_fd)
            self.temp_fd = -1
            try:
                os.rmdir(self.out_dir / ".referee")
            except OSError:
                pass

    # -- the files ------------------------------------------------------------------

    def sleep(self, deadline: Optional[float]) -> None:
        """Wait for the files to change, until ``deadline``; a side still stopping is looked at meanwhile, and
        each side's next ``NAME.in`` is made ready (off the relay's path: see :meth:`.seat.AgentSeat.prepare_in`)."""
        for player in self.players.values():
            player.prepare_in()
        deadline = _earliest(deadline, self.look_stopping())
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.waker.wait(timeout)

    def faults(self, waiting: list[Player], mover: Optional[Player]) -> Optional[_Fault]:
        """Faults of the sides not to move (and of every side's processes)."""
        for player in self.players.values():
            if breach := player.limit_breach(self.config.max_processes, self.config.disk_mb):
                return _Fault(player.colour, Termination.CRASH, breach)
        for player in waiting:
            if player.out_present():
                if self.second_chance(player, "written before your turn: wait for your " + player.in_name):
                    player.discard_out(self.waker)
                    continue
                # Unsandboxed, a file written in a frozen agent's directory is the
                # other's doing; sandboxed, no other process can reach it.
                if player.suspended and mover is not None and self.isolation is None:
                    return _Fault(
                        mover.colour, Termination.ILLEGAL,
                        f"{mover.label} wrote {player.label}'s file {player.out_name} while {player.label} was suspended",
                    )
                return _Fault(player.colour, Termination.MALFORMED, f"{player.label} wrote {player.out_name} when it was not its turn")
            if player.process and player.process.exited:
                return _Fault(
                    player.colour, Termination.CRASH,
                    f"{player.label} exited (code {player.process.returncode}) before the end of the game{player.limit_note()}",
                )
        return None

    def relay(self, player: Player, text: str, mover: Optional[Player]) -> Optional[_Fault]:
        """Let ``player`` continue and write ``text`` into its ``NAME.in``; its clock starts when this returns."""
        if mover is not None:
            fault = self.faults([player], mover)  # a move written before its turn began
            if fault:
                return fault
        changes = player.changes_since_snapshot()
        if changes and mover is not None and self.isolation is None:
            return _Fault(
                mover.colour, Termination.ILLEGAL,
                f"{mover.label} changed {player.label}'s files while {player.label} was suspended: {', '.join(changes)}",
            )
        if player.process:
            # Before the file: its wake-up (a wait for a CPU on a loaded machine) overlaps the writing.
            player.process.resume()
        if player.in_present() and not player.spec.is_manual:
            # (a person need not delete NAME.in: it is simply replaced)
            self.warn(f"{player.label} had not deleted {player.in_name}: replaced it", player)
        text = player.pending_colour + text
        try:
            player.write_in(text)
        except OSError as exc:
            return _Fault(player.colour, Termination.CRASH, f"cannot write {player.label}'s {player.in_name}: {exc}")
        player.unsent = None
        if player.person is not None:
            player.person.pending_colour = ""
            player.person.last_in = text
        return None

    def suspend(self, player: Player) -> None:
        """Stop every process of ``player``, who waits now.

        Sandboxed, the stop is only sent here and confirmed by
        :meth:`confirm_suspended` after the relay: the signals are on their
        way before the other side can read its move, and the relay does not
        wait for them.  Unsandboxed, its files are snapshot once it is still
        (the other side could touch them).
        """
        if self.config.suspend_waiting and player.process and not player.process.exited:
            player.process.suspend()
            if self.isolation is None:
                player.process.wait_stopped()
                player.take_snapshot()

    def confirm_suspended(self, player: Player) -> None:
        """After the relay: see every process of ``player`` stopped (newcomers too), without waiting for it.

        A process sent ``SIGSTOP`` stops when the system next runs it: on a
        busy machine milliseconds later.  Waiting here held up the
        ``relayed`` event and the reading of the other side's answer (issue
        27: a relay's 10 ms tail, sandboxed); the other side plays
        meanwhile, so one look is taken now and the rest while the game
        waits for the files (:meth:`sleep`), until none runs.
        """
        if player.process is None:
            return
        if player.process.suspended and self.isolation is not None:
            if not player.process.stop_stragglers():
                self.stopping = _PendingStop(player, time.monotonic() + STOP_LOOKS_SECONDS)
        else:
            player.process.scan_tree()

    def look_stopping(self) -> Optional[float]:
        """One more look at the side still stopping, if any; when to look again (``None``: no need)."""
        pending = self.stopping
        if pending is None or pending.player.process is None:
            return None
        now = time.monotonic()
        if pending.player.process.stop_stragglers() or now >= pending.until:
            self.stopping = None
            return None
        pending.pause = min(pending.pause * 2, STOP_LOOK_MAX_PAUSE)
        return now + pending.pause

    # -- the game ---------------------------------------------------------------------

    def first_text(self, player: Player) -> str:
        """A side's first ``NAME.in``: its colour, the size line on a bigger board (section 9), the opening's moves (section 8)."""
        size = format_size(self.config.size) if self.config.size != DEFAULT_SIZE else ""
        clock = self.clock_line(player) if player.colour is self.first_colour else ""  # it is asked for a move
        return format_colour(player.colour) + size + "".join(format_move(move) for move in self.record.opening) + clock

    def clock_line(self, player: Player) -> str:
        """The last line of a ``NAME.in`` asking ``player`` for a move: its bank, if it has a clock and reads the line (section 10)."""
        bank = player.clock.bank
        return format_clock_line(bank) if bank is not None and player.spec.reads_clock else ""

    def start_colours(self) -> Optional[_Fault]:
        """Write both first files (the colour, and the opening if any).  With suspension the second side must take its file first.

        The side to move (White, or after an opening the side whose turn it
        is) is the first; the other, the second, gets its file first.  A
        person playing second gets no file yet: their first ``NAME.in``
        holds it together with the first side's move.  A file alone would be
        replaced by that move at once, and a person who reads it, then
        deletes it as the protocol says, would delete the move unseen and
        wait for ever.
        """
        first, second = self.players[self.first_colour], self.players[self.first_colour.opponent]
        if second.person is not None:
            second.person.pending_colour = self.first_text(second)
            return self.relay(first, self.first_text(first), None)
        fault = self.relay(second, self.first_text(second), None)
        if fault:
            return fault
        second_deadline = second.clock.deadline(since=time.monotonic())  # its first move's time
        if self.config.suspend_waiting and second.process:
            fault = self.wait_gone(second, second_deadline)
            if fault:
                return fault
            self.suspend(second)
        fault = self.relay(first, self.first_text(first), None)
        if fault:
            return fault
        self.confirm_suspended(second)
        self.second_colour_deadline = second_deadline
        return None

    def wait_gone(self, player: Player, deadline: Optional[float]) -> Optional[_Fault]:
        """Wait until ``player`` has deleted its ``NAME.in`` (the colour file)."""
        others = [p for p in self.players.values()]
        while player.in_present():
            fault = self.faults(others, None)
            if fault:
                return fault
            if deadline is not None and time.monotonic() > deadline:
                return _Fault(player.colour, Termination.TIMEOUT, f"{player.label} did not delete {player.in_name} in time ({player.clock.limit_applied()})")
            self.sleep(deadline)
        return None

    def read_move(self, player: Player) -> tuple[Optional[files.Message], Optional[_Fault]]:
        """Wait for ``player``'s complete ``NAME.out`` (its clock runs)."""
        deadline = player.clock.deadline()
        other = self.players[player.colour.opponent]
        while True:
            if player.limit_breach(self.config.max_processes, self.config.disk_mb):  # killed by the monitor: say why
                return None, self.faults([], player)
            exited = player.exited
            try:
                message = player.take_message(self.waker, self.config.out_limit, self.config.size)
            except files.OutFileError as exc:
                return None, _Fault(player.colour, Termination.MALFORMED, f"{player.label}: {exc}",
                                    seconds=player.clock.elapsed(time.monotonic()))
            if message is not None:
                return message, None
            if exited and player.process is not None:
                code = player.process.returncode
                return None, _Fault(player.colour, Termination.CRASH,
                                    f"{player.label} exited (code {code}) without a move{player.limit_note()}",
                                    seconds=player.clock.elapsed(time.monotonic()))
            fault = self.faults([other], player)
            if fault:
                return None, fault
            now = time.monotonic()
            if deadline is not None and now > deadline:
                waited = player.clock.elapsed(now)
                return None, _Fault(player.colour, Termination.TIMEOUT,
                                    f"{player.label} did not move within {player.clock.limit_applied()}; waited {waited:.2f} s",
                                    seconds=waited)
            # The second side's first file: it must be deleted within the time limit.
            if (
                other.colour is not self.first_colour and not self.record.moves
                and self.second_colour_deadline is not None
                and now > self.second_colour_deadline and other.in_present()
            ):
                return None, _Fault(other.colour, Termination.TIMEOUT, f"{other.label} did not delete {other.in_name} in time ({other.clock.limit_applied()})")
            self.sleep(deadline if player.colour is not self.first_colour or self.record.moves
                       else _earliest(deadline, self.second_colour_deadline))

    def play(self) -> Result:
        """The game: start both sides, then read a move, judge it and relay it, until the game ends."""
        fault = self.setup() or self.start_colours()
        if fault:
            return self.fault_result(fault)
        mover = self.players[self.first_colour]
        mover.clock.start(time.monotonic())
        while True:
            self.announce_turn(mover)
            message, fault = self.read_move(mover)
            read_at = time.monotonic()
            if fault:
                return self.fault_result(fault)
            assert message is not None
            verdict = self.judge(mover, message, read_at)
            if verdict is None:
                continue  # a person's mistake, asked again: same turn, same clock
            if isinstance(verdict, Result):
                self.emit_move()
                return verdict
            try:
                fault = self.relay_move(mover, verdict)
            finally:
                self.emit_move()  # (sent by the relay, unless it stopped before the relay: then here)
            if fault:
                return self.fault_result(fault)
            mover = self.players[mover.colour.opponent]

    def announce_turn(self, mover: Player) -> None:
        """Tell the display whose turn it is and what they answer."""
        first_of_second = mover.colour is not self.first_colour and len(self.record.moves) == 1
        first_name = self.first_colour.full_name
        self.emit(
            "waiting", colour=mover.colour, player=mover.label, path=mover.out_path,
            time_limit=mover.clock.control.thinking_time(mover.clock.bank), manual=mover.spec.is_manual,
            message=(f"your colour, the opening and {first_name}'s first move" if self.record.opening
                     else f"your colour and {first_name}'s first move") if first_of_second
            else "the opponent's last move",
        )

    def judge(self, mover: Player, message: files.Message, read_at: float) -> Union[Move, Result, None]:
        """Check the mover's message against the clock and the rules, and play it.

        Returns the move to relay (a lost turn's pass too), the result if
        the game ends (by a fault or on the board), or ``None`` when a
        person is asked again.
        """
        if mover.clock.expired(read_at):
            limit = mover.clock.limit_applied()
            seconds = mover.clock.stop(read_at)
            return self.fault_result(_Fault(mover.colour, Termination.TIMEOUT,
                                            f"{mover.label} moved after {seconds:.3f} s, over {limit}",
                                            message.line, seconds, message.comments))
        if message.move is None:
            if self.second_chance(mover, f"malformed: {message.error}"):
                return None
            seconds = mover.clock.stop(read_at)
            return self.fault_result(_Fault(mover.colour, Termination.MALFORMED, f"{mover.label}: {message.error}",
                                            message.line, seconds, message.comments))
        move = message.move
        why = self.board.why_illegal(move)
        if why is not None and self.second_chance(mover, f"illegal: {move.line()}: {why}"):
            return None
        seconds = mover.clock.stop(read_at)
        comments = [*message.comments, *(mover.person.take_notes() if mover.person else [])]
        if why is not None:
            if self.config.illegal == "lose" or mover.lost_turns >= self.config.max_lost_turns:
                return self.fault_result(_Fault(mover.colour, Termination.ILLEGAL, f"{mover.label} played {move.line()}: {why}",
                                                message.line or move.line(), seconds, tuple(comments)))
            mover.lost_turns += 1
            note = f"lost turn: illegal move {move.line()} ({why})"
            move = Move.pass_(mover.colour, self.board.size)
            self.record.moves.append(MoveRecord(move, seconds, [*comments, note], forfeit=True, clock=mover.clock.bank))
            self.board = self.board.play_unchecked(move)
            self.move_event = ("lost-turn", dict(move=move, colour=mover.colour, player=mover.label, seconds=seconds,
                                                 message=note, comments=[*comments, note]))
        else:
            self.record.moves.append(MoveRecord(move, seconds, comments, clock=mover.clock.bank))
            self.board = self.board.play_unchecked(move)  # checked just above
            self.move_event = ("move", dict(move=move, colour=mover.colour, player=mover.label, seconds=seconds,
                                            comments=comments))
        self.players[mover.colour.opponent].unsent = move
        return self.board.outcome() or move

    def emit_move(self) -> None:
        """Send the event of the move just judged, once (:meth:`relay_move` sends it as soon as the move is relayed).

        Not before the relay: the event goes to every display and to the
        game's live log (a line written to a file), about 50 us of the
        referee's time that the other side waited for while it came
        before its ``NAME.in`` (issue 38); it comes still before ``relayed``.
        """
        if self.move_event is not None:
            kind, fields = self.move_event
            self.move_event = None
            self.emit(kind, **fields)

    def relay_move(self, mover: Player, move: Move) -> Optional[_Fault]:
        """Freeze the mover and put its move in the other side's ``NAME.in``; the other side's clock starts."""
        other = self.players[mover.colour.opponent]
        self.suspend(mover)
        if self.config.move_pause:
            self.emit_move()  # shown first: the pause is for the people watching it
            time.sleep(self.config.move_pause)
        if other.colour is not self.first_colour and len(self.record.moves) == 1 and not other.spec.is_manual:
            # The second side's first file must be read before the first move replaces it.
            fault = self.wait_gone(other, self.second_colour_deadline)
            if fault:
                return fault
        fault = self.relay(other, format_move(move) + self.clock_line(other), mover)
        other.clock.start(time.monotonic())
        self.emit_move()
        if fault:
            return fault
        self.emit("relayed", move=move, colour=other.colour, player=other.label)
        self.confirm_suspended(mover)  # after the relay: who runs now, and the CPU time so far
        return None

    def second_chance(self, player: Player, problem: str) -> bool:
        """A person's bad ``NAME.out``: say what was wrong and what is legal, and wait for another.

        Returns ``False`` (the usual fault) for a program, or for a person
        when ``strict_manual`` is set.  Otherwise the bad file is deleted,
        the person's ``NAME.in`` is written again with a comment line saying
        what was wrong above what they are answering (they may have deleted
        it already), the terminal is told through a ``retry`` event, and the
        retry is counted; the note goes into the record of the move that
        follows.  A person's clock, if any, runs on.
        """
        person = player.person
        if person is None or self.config.strict_manual:
            return False
        person.refuse(player.out_name, problem)
        to_move = self.board.to_move is player.colour
        legal = legal_names(self.board) if to_move else ""
        advice = f"; legal: {legal or 'none, so pass: ' + Move.pass_(player.colour, self.board.size).line()}" if to_move else ""
        text = format_comment(f"your {player.out_name} was {problem}{advice}; write {player.out_name} again")
        if to_move:  # (a person waiting for their turn is told in the terminal only)
            try:
                player.write_in(text + person.last_in)
            except OSError as exc:
                self.warn(f"could not write {player.in_name} again: {exc}", player)
        self.emit("retry", colour=player.colour, player=player.label, path=player.out_path,
                  message=f"your {player.out_name} was {problem}{advice}")
        return True

    def fault_result(self, fault: _Fault) -> Result:
        """The result of a fault, at the move the referee was waiting for; the faulty side's answer goes into the record."""
        white, black = self.board.count(WHITE), self.board.count(BLACK)
        if fault.termination is Termination.TIMEOUT:
            self.timeout_seen = True
        winner = None if fault.loser is None else fault.loser.opponent
        if fault.loser is not None:
            self.record.fault = FaultyMove(fault.loser, fault.line, fault.seconds, list(fault.comments))
            if fault.seconds is not None:  # a turn that ended with no move read still used its time
                self.players[fault.loser].clock.end_without_move(fault.seconds)
        return Result(winner, fault.termination, white, black, fault.detail, len(self.record.moves) + 1)

    # -- the record ----------------------------------------------------------------------

    def finish(self, result: Result) -> GameRecord:
        record = self.record
        record.result = result
        agents: dict[str, Any] = {}
        for player in self.players.values():
            agents[player.label] = player.record_entry(self.out_dir)
        record.extra["agents"] = agents
        referee: dict[str, Any] = {
            "watch": self.waker.mode,
            "file_events": self.waker.events,
            "grace": self.config.grace,
            "illegal": self.config.illegal,
            "suspend_waiting": self.config.suspend_waiting,
            "strict_manual": self.config.strict_manual,
            "wall_seconds": round(time.monotonic() - self.started, 3),
            "sandbox": self.config.sandbox,
            "limits": {
                "by": " and ".join(sorted({p.limits for p in self.players.values() if p.limits})) or "none",
                "memory_mb": self.config.memory_mb,
                "processes": self.config.max_processes,
                "disk_mb": self.config.disk_mb,
            },
        }
        referee["cpus"] = list(self.config.cpus)  # the game's cores; []: not pinned, any core
        if self.config.manual_time is not None:
            referee["manual_time"] = self.config.manual_time
        own = {label: seconds for label, seconds in self.config.agent_times if label in (record.white, record.black)}
        if own:  # time odds: these agents had their own time per move
            referee["agent_times"] = own
        if self.warnings:
            referee["warnings"] = self.warnings
        record.extra["referee"] = referee
        if self.timeout_seen:
            # A timeout on a loaded machine may be the machine's fault, not the agent's.
            load = os.getloadavg()[0]
            record.extra["load_suspect"] = load > (os.cpu_count() or 1)
            referee["load_average"] = round(load, 2)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.record_json = record.to_json()
        fd = os.open(self.out_dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            files.write_atomically(fd, "game.json", self.record_json)
        finally:
            os.close(fd)
        return record


def check_opening(white: AgentSpec, black: AgentSpec, opening: Sequence[Move], size: int = DEFAULT_SIZE) -> Board:
    """The position the game starts from: the start of a ``size`` board after ``opening``; else raise ValueError.

    An opening game with an agent that does not declare it would start that
    agent from the wrong position (it would think it plays from the start),
    so it is refused before anything starts.  An illegal opening, or one
    that ends the game, raises :class:`~othello_arena.protocol.IllegalMoveError`
    (a ValueError).  Likewise a game on a board that is not 8x8 is refused
    when an agent does not play that size (:attr:`AgentSpec.sizes`,
    PROTOCOL.md section 9); openings are for 8x8 games only.
    """
    check_sizes(white, black, size)
    if not opening:
        return Board.start(size)
    if size != DEFAULT_SIZE:
        raise ValueError(f"cannot play an opening on a {size}x{size} board: openings are for 8x8 games only "
                         "(PROTOCOL.md section 8)")
    unaware = [spec for spec in (white, black) if not spec.openings]
    if unaware:
        names = " and ".join(spec.label for spec in unaware)
        raise ValueError(
            f"cannot play the opening {format_opening(opening)!r}: {names} "
            f"{'does' if len(unaware) == 1 else 'do'} not declare that it understands openings "
            "(an agent that does is given as openings:NAME=COMMAND, PROTOCOL.md section 8; "
            "without it, play from the start position)"
        )
    return opening_board(list(opening))


def check_sizes(white: AgentSpec, black: AgentSpec, size: int) -> None:
    """Raise ValueError, naming the agent, unless both play on a ``size`` x ``size`` board.

    An agent that does not know about sizes would play the 8x8 game on its
    own board and lose on its first move off it, so the game is refused
    before anything starts (one sentence, not a forfeit).
    """
    for spec in (white, black):
        if size in spec.sizes:
            continue
        plays = ", ".join(f"{n}x{n}" for n in spec.sizes)
        if spec.kind == "program":
            how = ("a program that plays every size of seed 002 (8, 10, 12, 14) is given as sizes:NAME=COMMAND "
                   "and reads the size line of its first NAME.in, PROTOCOL.md section 9")
        else:
            how = "choose a size it plays, or another agent"
        raise ValueError(f"cannot play on a {size}x{size} board: {spec.label} plays only on {plays} ({how})")


def _earliest(*times: Optional[float]) -> Optional[float]:
    present = [t for t in times if t is not None]
    return min(present) if present else None


def play_game(
    white: AgentSpec,
    black: AgentSpec,
    config: Optional[GameConfig] = None,
    out_dir: Path | str = "game",
    seed: Optional[int] = None,
    on_event: Optional[EventCallback] = None,
    opening: Sequence[Move] = (),
) -> GameRecord:
    """Play one game, White (moves first) against Black; return its record.

    Each agent runs in ``out_dir/<label>/`` with its ``NAME.in`` and
    ``NAME.out``; its output is kept in ``out_dir/<label>.stderr.log`` and
    ``game.json`` is written in ``out_dir``.  ``seed`` is
    only recorded (it is the seed that drew the colours: see
    :func:`~othello_arena.referee.draw_colours`).  ``on_event`` receives a
    :class:`GameEvent` at the start, before each turn, after each move and
    at the end.

    ``opening`` is a list of moves from the start position: each agent's
    first ``NAME.in`` then holds its colour and these moves, and the side to
    move after them moves first (PROTOCOL.md section 8).  Raises
    :class:`ValueError` before anything starts if the opening is illegal or
    ends the game, or if an agent does not understand openings
    (:attr:`AgentSpec.openings`).

    A fault of an agent never raises: it is the result's termination.  The call
    installs no signal handler and keeps no global state, so several games
    may run at once in threads.  Every process an agent started is gone
    when it returns.
    """
    return played_game(white, black, config, out_dir, seed, on_event, opening)[0]


def played_game(
    white: AgentSpec,
    black: AgentSpec,
    config: Optional[GameConfig] = None,
    out_dir: Path | str = "game",
    seed: Optional[int] = None,
    on_event: Optional[EventCallback] = None,
    opening: Sequence[Move] = (),
) -> tuple[GameRecord, str]:
    """:func:`play_game`, and the exact text of the ``game.json`` it wrote.

    The tournament runner compares that file with the text, byte for
    byte, and stores the text: serialised once, not twice (``json`` with an
    indent runs in Python: a millisecond a game, issue 38).
    """
    game = _Game(white, black, config or GameConfig(), Path(out_dir), seed, on_event, opening)  # refuses a size an agent does not play
    result: Optional[Result] = None
    try:
        result = game.play()
    finally:
        if result is None:  # the referee itself failed: still leave no process behind
            game.teardown(Result(None, Termination.CRASH, game.board.count(WHITE), game.board.count(BLACK), "referee error"))
    game.teardown(result)
    record = game.finish(result)
    game.emit("end", record=record)
    return record, game.record_json


__all__ = ["GameEvent", "check_opening", "check_sizes", "play_game", "played_game"]
