"""Relay latency and per-game overhead of the referee, file events against polling.

Run by hand (never by the tests):

    python bench/relay_latency.py --games 20

The modes take turns game by game (the load of a shared machine drifts), and one
mode is the referee as it was before issue 27 (its relay waited until the side
that had moved was seen stopped), so that a run gives the before and the after.

Two instant agents (they block on inotify, so they take no CPU while they
wait) play whole games.  Just before renaming its ``NAME.out`` into place an
agent writes ``time.monotonic()`` (CLOCK_MONOTONIC, the same clock in every
process) in a comment; the referee's ``relayed`` event carries the moment
the other side's ``NAME.in`` is in place.  The difference is the relay
latency: event delivery + reading and checking the move + writing the
other file.  (The first relay of each game is left out: it waits for Black
to delete its colour file, i.e. for Black's program to start.)  The per-game overhead is the game's wall time minus the
agents' own thinking time (their clocks, as the referee measured them): it
covers starting the two processes, the colour files, every relay and the
end of the game.
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
from typing import Any, Iterator

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

def wait_in():
    path = name + ".in"
    while not os.path.exists(path):
        os.read(fd, 4096)  # blocks until something happens in the directory
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
            f.write(f"(C t={time.monotonic():.6f})\n" + format_move(move))
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
    waited_stop: bool = False  # the referee before issue 27: the relay waited until the mover was seen stopped
    latencies: list[float] = field(default_factory=list)
    overheads: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)


@contextlib.contextmanager
def waiting_for_the_stop(enabled: bool) -> Iterator[None]:
    """With ``enabled``, the referee as it was before issue 27: ``confirm_suspended`` waited for the stop."""
    if not enabled:
        yield
        return
    from othello_arena.referee import game

    def confirm_waiting(self: Any, player: Any) -> None:
        if player.process is None:
            return
        if player.process.suspended and self.isolation is not None:
            player.process.wait_stopped()
        else:
            player.process.scan_tree()

    current = game._Game.confirm_suspended
    game._Game.confirm_suspended = confirm_waiting  # type: ignore[method-assign]
    try:
        yield
    finally:
        game._Game.confirm_suspended = current  # type: ignore[method-assign]


def play_one(mode: Mode, game: int, interval: float, work: Path) -> None:
    """Play one game in ``mode`` and add its relay latencies and overhead to the mode's."""
    script = work / "bench_agent.py"
    if not script.exists():
        script.write_text(AGENT)
    config = GameConfig(time_per_move=10, polling=mode.polling, poll_interval=interval, sandbox=mode.sandbox,
                        suspend_waiting=mode.suspend)
    relayed: list[GameEvent] = []

    def collect(event: GameEvent) -> None:
        if event.kind == "relayed":
            relayed.append(event)

    white = AgentSpec.program("a", [sys.executable, str(script)])
    black = AgentSpec.program("b", [sys.executable, str(script)])
    folder = work / f"{len(list(work.iterdir()))}-{game}"
    started = time.monotonic()
    with waiting_for_the_stop(mode.waited_stop):
        record = play_game(white, black, config, folder, on_event=collect)
    wall = time.monotonic() - started
    assert record.result is not None and record.result.termination is Termination.NORMAL, record.result
    # relayed events follow the moves in order (the last move is never relayed: the game ends).
    # The first relay is left out: it waits, as the protocol says, until Black (still
    # starting up) has deleted its colour file.
    for event, entry in list(zip(relayed, record.moves))[1:]:
        stamp = float(entry.comments[0].split("=")[1])
        mode.latencies.append(event.at - stamp)
    thinking = sum(entry.seconds for entry in record.moves)
    mode.walls.append(wall)
    mode.overheads.append(wall - thinking)


def summary(mode: Mode) -> dict[str, float]:
    return {
        "moves": len(mode.latencies),
        "median_ms": statistics.median(mode.latencies) * 1000,
        "p99_ms": percentile(mode.latencies, 0.99) * 1000,
        "max_ms": max(mode.latencies) * 1000,
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


def delivery_floor(count: int, work: Path) -> dict[str, float]:
    """The floor: another process renames a stamped file into place; we block on raw inotify."""
    import ctypes
    import os
    import subprocess

    directory = work / "floor"
    directory.mkdir()
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
    return {
        "moves": len(delays),
        "median_ms": statistics.median(delays) * 1000,
        "p99_ms": percentile(delays, 0.99) * 1000,
        "max_ms": max(delays) * 1000,
        "overhead_s": float("nan"),
        "wall_s": float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--poll-interval", type=float, default=0.005, help="polling baseline interval (s)")
    parser.add_argument("--no-polling", action="store_true", help="leave out the polling row")
    parser.add_argument("--referee-first", action="store_true",
                        help="run the referee's main thread under SCHED_FIFO (root; the agents it starts are not): "
                             "the referee's own path, without the queue of a loaded machine in front of it")
    args = parser.parse_args()
    if args.referee_first:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(1))
    modes = [
        Mode("file events, sandbox, waiting side frozen (default)"),
        Mode("the same, the relay waiting until the mover is seen stopped (before issue 27)", waited_stop=True),
        Mode("file events, sandbox, not frozen", suspend=False),
        Mode("file events, no sandbox, not frozen", sandbox="none", suspend=False),
    ]
    if not args.no_polling:
        modes.append(Mode(f"polling every {args.poll_interval * 1000:g} ms, sandbox, frozen", polling=True))
    load = [open("/proc/loadavg").read().split()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        floor = delivery_floor(60 * args.games, work)
        for game in range(args.games):  # the modes in turn, game by game
            for mode in modes:
                play_one(mode, game, args.poll_interval, work)
    load.append(open("/proc/loadavg").read().split()[0])
    print(f"{args.games} games per mode, two instant agents, the modes in turn game by game; "
          f"load average {load[0]} before, {load[1]} after"
          + ("; the referee first (SCHED_FIFO)" if args.referee_first else "") + "\n")
    print("| mode | relays | median ms | p99 ms | max ms | overhead per game s | wall per game s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = [("floor: raw inotify delivery, no referee", floor), *((mode.label, summary(mode)) for mode in modes)]
    for label, row in rows:
        print(
            f"| {label} | {row['moves']} | {row['median_ms']:.3f} | {row['p99_ms']:.3f} | {row['max_ms']:.2f} "
            f"| {row['overhead_s']:.3f} | {row['wall_s']:.3f} |"
        )


if __name__ == "__main__":
    main()
