"""Relay latency and per-game overhead of the referee, file events against polling.

Run by hand (never by the tests):

    python bench/relay_latency.py --games 20

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
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


def measure(games: int, polling: bool, interval: float, work: Path, sandbox: str = "bwrap",
            suspend: bool = True) -> dict[str, float]:
    script = work / "bench_agent.py"
    script.write_text(AGENT)
    latencies: list[float] = []
    overheads: list[float] = []
    walls: list[float] = []
    config = GameConfig(time_per_move=10, polling=polling, poll_interval=interval, sandbox=sandbox,
                        suspend_waiting=suspend)
    for game in range(games):
        relayed: list[GameEvent] = []

        def collect(event: GameEvent) -> None:
            if event.kind == "relayed":
                relayed.append(event)

        white = AgentSpec.program("a", [sys.executable, str(script)])
        black = AgentSpec.program("b", [sys.executable, str(script)])
        started = time.monotonic()
        folder = work / f"{'poll' if polling else 'events'}-{sandbox}-{suspend}-{game}"
        record = play_game(white, black, config, folder, on_event=collect)
        wall = time.monotonic() - started
        assert record.result is not None and record.result.termination is Termination.NORMAL, record.result
        # relayed events follow the moves in order (the last move is never relayed: the game ends).
        # The first relay is left out: it waits, as the protocol says, until Black (still
        # starting up) has deleted its colour file.
        for event, entry in list(zip(relayed, record.moves))[1:]:
            stamp = float(entry.comments[0].split("=")[1])
            latencies.append(event.at - stamp)
        thinking = sum(entry.seconds for entry in record.moves)
        walls.append(wall)
        overheads.append(wall - thinking)
    return {
        "moves": len(latencies),
        "median_ms": statistics.median(latencies) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "max_ms": max(latencies) * 1000,
        "overhead_s": statistics.median(overheads),
        "wall_s": statistics.median(walls),
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = [
            ("floor: raw inotify delivery, no referee", delivery_floor(60 * args.games, work)),
            ("file events, sandbox, waiting side frozen (default)", measure(args.games, False, args.poll_interval, work)),
            ("file events, sandbox, not frozen", measure(args.games, False, args.poll_interval, work, suspend=False)),
            ("file events, no sandbox, not frozen", measure(args.games, False, args.poll_interval, work, "none", False)),
            (f"polling every {args.poll_interval * 1000:g} ms, sandbox, frozen",
             measure(args.games, True, args.poll_interval, work)),
        ]
    print(f"{args.games} games per mode, two instant agents\n")
    print("| mode | relays | median ms | p99 ms | max ms | overhead per game s | wall per game s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, row in rows:
        print(
            f"| {label} | {row['moves']} | {row['median_ms']:.3f} | {row['p99_ms']:.3f} | {row['max_ms']:.2f} "
            f"| {row['overhead_s']:.3f} | {row['wall_s']:.3f} |"
        )


if __name__ == "__main__":
    main()
