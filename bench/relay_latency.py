"""Relay latency and per-game overhead of the referee, file events against polling.

Run by hand (never by the tests):

    python bench/relay_latency.py --games 20 --no-polling          # add --steps for the table of steps

The modes take turns game by game (the load of a shared machine drifts), and a
game's worth of the floor is measured before each round; one mode is the
referee as it was before issue 27's second session (patched in by the bench),
so that a run gives the before and the after.  The output is markdown, ready
for bench/RESULTS.md.

Two instant agents (they block on inotify, so they take no CPU while they
wait) play whole games.  Just before renaming its ``NAME.out`` into place an
agent writes ``time.monotonic()`` (CLOCK_MONOTONIC, the same clock in every
process) in a comment, and with it the moment it last saw its own ``NAME.in``.
Two ends of a relay are measured from the mover's stamp: the referee's
``relayed`` event (the other side's ``NAME.in`` is in place and the side
continued), and the moment the other agent has seen its ``NAME.in`` (its
own stamp: the relay as an agent lives it, its own wake-up included).  (The
first relay of each game is left out: it waits for Black to delete its
colour file, i.e. for Black's program to start.)  With ``--steps`` every step
of every relay is stamped too (the referee's methods wrapped), and a second
table gives each step's time.  The per-game overhead is the game's wall time
minus the agents' own thinking time (their clocks, as the referee measured
them): it covers starting the two processes, the colour files, every relay
and the end of the game.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from othello_arena.protocol import Termination
from othello_arena.referee import AgentSpec, GameConfig, GameEvent, play_game

AGENT = r'''
import ctypes, os, struct, sys, time
from othello_arena.protocol import Board, Colour, Termination, parse_line, format_move

IN_CLOSE_WRITE, IN_MOVED_TO = 0x08, 0x80
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
libc.inotify_add_watch(fd, b".", IN_CLOSE_WRITE | IN_MOVED_TO)
name = os.environ["OTHELLO_NAME"]

seen = 0.0  # when the last NAME.in was seen: told in the next move's comment (the relay's last step)

def wait_in():
    global seen
    path = name + ".in"
    while not os.path.exists(path):
        os.read(fd, 4096)  # blocks until something happens in the directory
    seen = time.monotonic()
    with open(path) as f:
        text = f.read()
    os.remove(path)
    return text

board, colour = Board(), None
while True:
    if colour is not None and board.to_move is colour and not board.is_game_over():
        move = board.legal_moves()[0]
        board = board.play(move)
        with open(name + ".out.tmp", "w") as f:
            f.write(f"(C t={time.monotonic():.6f} seen={seen:.6f})\n" + format_move(move))
        os.rename(name + ".out.tmp", name + ".out")
        continue
    for line in wait_in().splitlines():
        if line.startswith("(END"):
            sys.exit(0)
        if colour is None:
            colour = Colour.parse(line)
        elif line.strip():
            board = board.play(parse_line(line))
'''


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


@dataclass
class Mode:
    """One way of running the referee; its games are interleaved with the other modes' (the machine drifts)."""

    label: str
    polling: bool = False
    sandbox: str = "bwrap"
    suspend: bool = True
    before_second: bool = False  # the referee before issue 27's second session (see as_before_second_session)
    latencies: list[float] = field(default_factory=list)  # the mover's stamp -> the referee's relayed event
    seen: list[float] = field(default_factory=list)  # the mover's stamp -> the other agent has seen its NAME.in
    steps: list[dict[str, float]] = field(default_factory=list)  # with --steps: each relay's moments, by step
    overheads: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)


def reader_thread_waker() -> type:
    """The referee's inotify waker before the second session of issue 27: watchdog's reader thread hands
    each event to the game's thread (a second wake-up and a hand-over of the GIL)."""
    from watchdog.observers.inotify_c import InotifyConstants as K
    from watchdog.observers.inotify_c import InotifyFD

    from othello_arena.referee import watch

    class ReaderThreadWaker(watch._EventDrivenWaker):
        mode = "inotify"

        def __init__(self, directories: Any, names: Any = None, safety_interval: float = 0.5) -> None:
            super().__init__(safety_interval)
            self._names = None if names is None else {os.fsencode(name) for name in names}
            shared = InotifyFD.get_instance()
            self._own = not shared.is_alive()
            self._fd = InotifyFD() if self._own else shared
            if self._own:
                self._fd.start()
            self._paths: dict[int, str] = {}
            mask = K.IN_CREATE | K.IN_MODIFY | K.IN_CLOSE_WRITE | K.IN_MOVED_TO | K.IN_MOVED_FROM | K.IN_DELETE
            self._registered: list[tuple[int, int]] = []
            for directory in directories:
                wd = self._fd.add_callback(os.fsencode(directory), mask | K.IN_DONT_FOLLOW, self, id(self))
                self._paths[wd] = str(directory)
                self._registered.append((wd, id(self)))

        def on_event(self, event: Any) -> None:
            name = getattr(event, "name", b"")
            if self._names is not None and name and name not in self._names:
                return
            with self._cond:
                directory = self._paths.get(getattr(event, "wd", -1))
                if directory is not None and name:
                    path = os.path.join(directory, os.fsdecode(name))
                    if event.is_close_write or event.is_moved_to:
                        self._closed[path] = True
                    elif event.is_create or event.is_modify:
                        self._closed[path] = False
                    else:
                        self._closed.pop(path, None)
                self.events += 1
                self._generation += 1
                self._cond.notify_all()

        def on_watch_deleted(self, wd: int) -> None:
            self.poke()

        def on_queue_overflow(self) -> None:
            self.poke()

        def close(self) -> None:
            registered, self._registered = self._registered, []
            if registered:
                self._fd.remove_callbacks(registered)
            if self._own:
                self._own = False
                self._fd.stop()
                self._fd.join(timeout=5)

    return ReaderThreadWaker


@contextlib.contextmanager
def as_before_second_session(enabled: bool) -> Iterator[None]:
    """With ``enabled``, the referee as it was before issue 27's second session: its file events come through
    watchdog's reader thread, the look at the mover's stop comes before the relayed event, and each
    ``NAME.in``'s temporary file is created in the relay (not made ahead)."""
    if not enabled:
        yield
        return
    from othello_arena.referee import game, seat, watch

    def relay_move(self: Any, mover: Any, move: Any) -> Any:  # game._Game.relay_move as it was
        other = self.players[mover.colour.opponent]
        self.suspend(mover)
        if other.colour is not self.first_colour and len(self.record.moves) == 1 and not other.spec.is_manual:
            fault = self.wait_gone(other, self.second_colour_deadline)
            if fault:
                return fault
        fault = self.relay(other, game.format_move(move) + self.clock_line(other), mover)
        other.clock.start(time.monotonic())
        if fault:
            return fault
        self.confirm_suspended(mover)
        self.emit("relayed", move=move, colour=other.colour, player=other.label)
        return None

    current, relay_move_now, prepare_in_now = watch.InotifyWaker, game._Game.relay_move, seat.AgentSeat.prepare_in
    watch.InotifyWaker = reader_thread_waker()  # type: ignore[misc]
    seat.AgentSeat.prepare_in = lambda self: None  # type: ignore[method-assign]
    game._Game.relay_move = relay_move  # type: ignore[method-assign]
    try:
        yield
    finally:
        watch.InotifyWaker = current  # type: ignore[misc]
        seat.AgentSeat.prepare_in = prepare_in_now  # type: ignore[method-assign]
        game._Game.relay_move = relay_move_now  # type: ignore[method-assign]


# The relay's steps, in order: each is stamped when it is done (--steps).  "moved" is the agent's
# stamp before its rename, "seen" the other agent's, once its NAME.in is there.
STEPS = [
    ("moved", "the mover stamps, then renames its NAME.out into place"),
    ("event", "the inotify event read (by the game's thread; before: by watchdog's reader thread)"),
    ("woken", "the game thread's wait returns"),
    ("read", "NAME.out read, parsed and deleted"),
    ("judged", "the move checked against the clock and the rules, and played"),
    ("stop sent", "the mover told to stop"),
    ("resumed", "the other side told to continue"),
    ("in placed", "the other side's NAME.in renamed into place"),
    ("relayed", "the relayed event (the bench's end of a relay)"),
    ("confirmed", "one look at the mover's stop"),
    ("seen", "the other agent has seen its NAME.in (its own stamp)"),
]


@contextlib.contextmanager
def stamping_steps(steps: Optional[list[dict[str, float]]]) -> Iterator[None]:
    """With ``steps``, stamp each step of every relay (the referee's methods wrapped) into ``steps``."""
    if steps is None:
        yield
        return
    from othello_arena.referee import game, process, seat, watch

    moved_to: dict[bytes, float] = {}
    woken = [0.0]

    def after(cls: Any, name: str, step: Callable[[Any, Any], Optional[str]]) -> Callable[[], None]:
        method = getattr(cls, name)

        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            value = method(self, *args, **kwargs)
            label = step(self, value)
            if label is not None:
                at = time.monotonic()
                if label == "read":  # a new relay begins (the game's last move has none: left out later)
                    steps.append({})
                    event = moved_to.pop(os.fsencode(self.out_name), None)
                    if event is not None:  # (else the file was found before its event was read)
                        steps[-1].update(event=event, woken=max(woken[0], event))
                if steps and label not in steps[-1]:
                    steps[-1][label] = at
            return value

        setattr(cls, name, wrapped)
        return lambda: setattr(cls, name, method)

    # The event is read by the game's thread (_on_event) or, before, by watchdog's reader thread (on_event).
    reader = watch.InotifyWaker
    threaded = hasattr(reader, "on_event")
    original_on_event = reader.on_event if threaded else reader._on_event

    def stamped_on_event(self: Any, *event: Any) -> None:
        name, moved = (event[0].name, event[0].is_moved_to) if threaded else (event[2], event[1] & watch.IN_MOVED_TO)
        if moved:
            moved_to[name] = time.monotonic()
        original_on_event(self, *event)

    setattr(reader, "on_event" if threaded else "_on_event", stamped_on_event)
    undo = [
        after(reader if "wait" in vars(reader) else watch.Waker, "wait",
              lambda self, value: woken.__setitem__(0, time.monotonic())),
        after(seat.AgentSeat, "take_message", lambda self, value: "read" if value is not None else None),
        after(game._Game, "judge", lambda self, value: "judged"),
        after(game._Game, "suspend", lambda self, value: "stop sent"),
        after(process.AgentProcess, "resume", lambda self, value: "resumed"),
        after(seat.AgentSeat, "write_in", lambda self, value: "in placed"),
        after(game._Game, "confirm_suspended", lambda self, value: "confirmed"),
    ]
    emit = game._Game.emit

    def stamped_emit(self: Any, kind: str, **fields: Any) -> None:
        emit(self, kind, **fields)
        if kind == "relayed" and steps:
            steps[-1]["relayed"] = time.monotonic()

    game._Game.emit = stamped_emit  # type: ignore[method-assign]
    try:
        yield
    finally:
        game._Game.emit = emit  # type: ignore[method-assign]
        setattr(reader, "on_event" if threaded else "_on_event", original_on_event)
        for restore in undo:
            restore()


def stamps(entry: Any) -> dict[str, float]:
    """The agent's stamps in a move's first comment: ``t`` (just before the rename) and ``seen``."""
    return {key: float(value) for key, value in (part.split("=") for part in entry.comments[0].split())}


def play_one(mode: Mode, game: int, interval: float, work: Path, steps: bool = False, cpus: tuple[int, ...] = ()) -> None:
    """Play one game in ``mode`` and add its relay latencies and overhead to the mode's."""
    script = work / "bench_agent.py"
    if not script.exists():
        script.write_text(AGENT)
    config = GameConfig(time_per_move=10, polling=mode.polling, poll_interval=interval, sandbox=mode.sandbox,
                        suspend_waiting=mode.suspend, cpus=cpus)
    relayed: list[GameEvent] = []

    def collect(event: GameEvent) -> None:
        if event.kind == "relayed":
            relayed.append(event)

    white = AgentSpec.program("a", [sys.executable, str(script)])
    black = AgentSpec.program("b", [sys.executable, str(script)])
    folder = work / f"{len(list(work.iterdir()))}-{game}"
    started = time.monotonic()
    traced: list[dict[str, float]] = []
    with as_before_second_session(mode.before_second), stamping_steps(traced if steps else None):
        record = play_game(white, black, config, folder, on_event=collect)
    wall = time.monotonic() - started
    assert record.result is not None and record.result.termination is Termination.NORMAL, record.result
    # relayed events follow the moves in order (the last move is never relayed: the game ends).
    # The first relay is left out: it waits, as the protocol says, until Black (still
    # starting up) has deleted its colour file.
    for event, entry in list(zip(relayed, record.moves))[1:]:
        mode.latencies.append(event.at - stamps(entry)["t"])
    # The other agent's "seen" for move i comes in its move i + 1 (the game's last move has no answer).
    for entry, answer in list(zip(record.moves, record.moves[1:]))[1:]:
        mode.seen.append(stamps(answer)["seen"] - stamps(entry)["t"])
    # The relay of move i: the mover's stamp is in move i's comment, the other's "seen" in move i + 1's.
    traced = [moments for moments in traced if "relayed" in moments]
    for i, moments in list(enumerate(traced))[1:]:
        if i + 1 < len(record.moves):
            mode.steps.append({"moved": stamps(record.moves[i])["t"], **moments,
                               "seen": stamps(record.moves[i + 1])["seen"]})
    thinking = sum(entry.seconds for entry in record.moves)
    mode.walls.append(wall)
    mode.overheads.append(wall - thinking)


def step_rows(modes: list[Mode]) -> list[str]:
    """Markdown: each step's time since the step before, median / p99 in ms, a column per mode."""
    traced = [mode for mode in modes if mode.steps]
    lines = ["| step (time since the step before) | " + " | ".join(f"{mode.label}: median / p99 ms" for mode in traced) + " |",
             "| --- |" + " --- |" * len(traced)]
    for (step, what), (before, _) in zip(STEPS[1:], STEPS):
        cells = []
        for mode in traced:
            gaps = [(moments.get(step, moments[before]) - moments[before]) * 1000 for moments in mode.steps
                    if before in moments]
            cells.append(f"{statistics.median(gaps):.3f} / {percentile(gaps, 0.99):.3f}")
        lines.append(f"| {step}: {what} | " + " | ".join(cells) + " |")
    for label, start, end in (("relay (moved to relayed)", "moved", "relayed"), ("moved to in placed", "moved", "in placed"),
                              ("moved to confirmed", "moved", "confirmed"),
                              ("moved to seen by the other agent", "moved", "seen")):
        cells = []
        for mode in traced:
            spans = [(moments[end] - moments[start]) * 1000 for moments in mode.steps]
            cells.append(f"{statistics.median(spans):.3f} / {percentile(spans, 0.99):.3f}")
        lines.append(f"| **{label}** | " + " | ".join(cells) + " |")
    return lines


def seconds(value: float) -> str:
    """A table's cell of seconds; ``-`` where the row has none (the floor)."""
    return "-" if value != value else f"{value:.3f}"


def summary(mode: Mode) -> dict[str, float]:
    return {
        "moves": len(mode.latencies),
        "median_ms": statistics.median(mode.latencies) * 1000,
        "p99_ms": percentile(mode.latencies, 0.99) * 1000,
        "max_ms": max(mode.latencies) * 1000,
        "seen_median_ms": statistics.median(mode.seen) * 1000,
        "seen_p99_ms": percentile(mode.seen, 0.99) * 1000,
        "seen_max_ms": max(mode.seen) * 1000,
        "overhead_s": statistics.median(mode.overheads),
        "wall_s": statistics.median(mode.walls),
    }


WRITER = r'''
import os, sys, time
directory, count = sys.argv[1], int(sys.argv[2])
time.sleep(0.2)
for i in range(count):
    with open(os.path.join(directory, "x.tmp"), "w") as f:
        f.write(f"{time.monotonic():.6f}")
    os.rename(os.path.join(directory, "x.tmp"), os.path.join(directory, f"x{i}.in"))
    time.sleep(0.003)
'''


def delivery_floor(count: int, work: Path) -> list[float]:
    """The floor: another process renames a stamped file into place; we block on raw inotify."""
    import ctypes
    import os
    import subprocess

    directory = Path(tempfile.mkdtemp(dir=work, prefix="floor"))
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    libc.inotify_add_watch(fd, bytes(directory), 0x80)  # IN_MOVED_TO
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(directory), str(count)])
    delays = []
    seen = 0
    while seen < count:
        buffer = os.read(fd, 65536)
        now = time.monotonic()
        offset = 0
        while offset < len(buffer):
            length = int.from_bytes(buffer[offset + 12 : offset + 16], "little")
            name = buffer[offset + 16 : offset + 16 + length].rstrip(b"\0").decode()
            offset += 16 + length
            stamp = float((directory / name).read_text())
            delays.append(now - stamp)
            seen += 1
    writer.wait()
    os.close(fd)
    return delays


def floor_summary(delays: list[float]) -> dict[str, float]:
    """The floor's row: its delivery is the floor of both the referee's wake-up and the other agent's."""
    median, p99, top = statistics.median(delays) * 1000, percentile(delays, 0.99) * 1000, max(delays) * 1000
    return {"moves": len(delays), "median_ms": median, "p99_ms": p99, "max_ms": top, "seen_median_ms": median,
            "seen_p99_ms": p99, "seen_max_ms": top, "overhead_s": float("nan"), "wall_s": float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--poll-interval", type=float, default=0.005, help="polling baseline interval (s)")
    parser.add_argument("--no-polling", action="store_true", help="leave out the polling row")
    parser.add_argument("--referee-first", action="store_true",
                        help="run the referee's main thread under SCHED_FIFO (root; the agents it starts are not): "
                             "the referee's own path, without the queue of a loaded machine in front of it")
    parser.add_argument("--steps", action="store_true",
                        help="also stamp each step of every relay (the referee's methods wrapped) and print a table of them")
    parser.add_argument("--modes", default="",
                        help="only the modes whose label contains one of these comma-separated words (default: all)")
    parser.add_argument("--cpus", default="",
                        help="pin both agents to these cores (comma-separated), as a tournament pins a game's agents")
    args = parser.parse_args()
    cpus = tuple(int(cpu) for cpu in args.cpus.split(",") if cpu)
    if args.referee_first:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(1))
    modes = [
        Mode("file events, sandbox, waiting side frozen (default)"),
        Mode("the same as before issue 27's second session (events through a reader thread, the look at "
             "the mover's stop before the relayed event, NAME.in's temporary file created in the relay)", before_second=True),
        Mode("file events, sandbox, not frozen", suspend=False),
        Mode("file events, no sandbox, not frozen", sandbox="none", suspend=False),
    ]
    if not args.no_polling:
        modes.append(Mode(f"polling every {args.poll_interval * 1000:g} ms, sandbox, frozen", polling=True))
    if args.modes:
        modes = [mode for mode in modes if any(word in mode.label for word in args.modes.split(","))]
    load = [open("/proc/loadavg").read().split()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        floor: list[float] = []
        for game in range(args.games):  # the modes in turn, game by game, and a game's worth of the floor
            floor += delivery_floor(60, work)
            for mode in modes:
                play_one(mode, game, args.poll_interval, work, args.steps, cpus)
    load.append(open("/proc/loadavg").read().split()[0])
    print(f"{args.games} games per mode, two instant agents, the modes in turn game by game; "
          f"load average {load[0]} before, {load[1]} after"
          + ("; the referee first (SCHED_FIFO)" if args.referee_first else "")
          + (f"; the agents pinned to cpu {args.cpus}" if cpus else "") + "\n")
    print("| mode | relays | relayed: median ms | p99 ms | max ms | seen by the other agent: median ms | p99 ms "
          "| max ms | overhead per game s | wall per game s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = [("floor: raw inotify delivery, no referee", floor_summary(floor)),
            *((mode.label, summary(mode)) for mode in modes)]
    for label, row in rows:
        print(
            f"| {label} | {row['moves']} | {row['median_ms']:.3f} | {row['p99_ms']:.3f} | {row['max_ms']:.2f} "
            f"| {row['seen_median_ms']:.3f} | {row['seen_p99_ms']:.3f} | {row['seen_max_ms']:.2f} "
            f"| {seconds(row['overhead_s'])} | {seconds(row['wall_s'])} |"
        )
    if args.steps:
        print()
        print("\n".join(step_rows(modes)))


if __name__ == "__main__":
    main()
