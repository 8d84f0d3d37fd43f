"""A class of 300 on one machine: its pages' latencies, the ladder's games an hour, admission, memory and disk.

Run by hand from the checkout (a few minutes to make the class, then the run):

    python bench/class_load.py make /tmp/class300 [--students 300] [--games 20000]
    python bench/class_load.py reads /tmp/class300 [--profile]     # the read paths in one process, no server
    python bench/class_load.py run /tmp/class300 [--seconds 180] [--dask 2]

``make`` builds a class with ``othello class init`` (300 students, the
references random and greedy, 0.1 s a move) and fills it through
classroom/store.py's own methods, as admission and the ladder fill it:

- one version of each student: the Python starter (agents/examples/starter.py)
  with a line of its own, stored as an upload is (``store_version``).  The
  first is built and checked for real (:func:`admission.admit`, in the
  sandbox); its card, renamed, is every other's (300 real checks would take
  an hour);
- ``--games`` finished ladder games in pairs of two, one opening a pair from
  the ladder's suite: each student climbs random and greedy, then plays
  classmates near its (hidden) strength.  A game's moves are a random legal
  playout from the opening (a pool of 3,000), its result drawn from the two
  strengths, its record a game.json as the referee writes it (agents,
  referee, every move) kept in the database and, as the ladder keeps it, in
  ``games/NNNNNN/`` with versions.json.  The store has no way to back-date a
  row, so one UPDATE spreads started_at/finished_at over the past week (else
  the ladder's hourly budget would count the whole week as this hour).

``run`` copies that class (the server changes it), starts ``othello class
serve`` on loopback with ``-j`` all cores but one (or ``--dask N``: a local
Dask cluster of N one-thread workers in this process), and measures twice:

1. idle: one client asks each page and API answer in turn (``--idle-rounds``);
2. the peak: every student holds an event stream from an address of their
   own (127.0.X.Y: a browser each) and, as the page's script does, fetches
   their page again at each message and every 60 s (one student in five
   has the standings page open instead); the instructor holds the
   dashboard's stream, reloads it and downloads the grade sheet; a student
   sends a new version (the starter, a new line) every ``--submit-every``
   seconds over HTTP, and the time from the upload's answer to the card is
   taken by polling ``/api/versions/ID`` once a second.

It prints p50/p99 of every answer at both, the ladder's finished games an
hour at both, admission latency, the server's RSS and the database's size,
and the load average the machine was at.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import dataclasses
import datetime as dt
import json
import math
import os
import pstats
import random
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the class server tests' helpers: a class, a server process

from classroom_helpers import make_class  # noqa: E402
from test_classroom_server import Server  # noqa: E402

from othello_arena.classroom.admission import admit, record_card  # noqa: E402
from othello_arena.classroom.ladder import game_folder, opening_suite, outcome_of, reference_fingerprint  # noqa: E402
from othello_arena.classroom.settings import ClassSettings, load  # noqa: E402
from othello_arena.classroom.store import (Card, ClassStore, GameStatus, NewVersion, PairKind, Side,  # noqa: E402
                                           VersionStatus)
from othello_arena.classroom.submit import multipart  # noqa: E402
from othello_arena.classroom.uploads import program_fingerprint, store_version  # noqa: E402
from othello_arena.protocol import BLACK, WHITE, Board, GameRecord, Move, MoveRecord, Result, Termination  # noqa: E402

STARTER = (ROOT / "agents" / "examples" / "starter.py").read_bytes()
COMMAND = "python3 starter.py {name}"
REFERENCES = ["random", "greedy"]
PLAYOUTS = 3000
DAY = 86400


# -- making the class ----------------------------------------------------------------------


def student_ids(count: int) -> list[str]:
    return [f"s{number:03d}" for number in range(1, count + 1)]


def starter_files(student: str, marker: str) -> dict[str, bytes]:
    return {"starter.py": STARTER + f"\n# {student} {marker}\n".encode()}


def store_admitted(settings: ClassSettings, store: ClassStore, student: str, marker: str) -> int:
    """A version stored as an upload is (files, row); returns its id (status checking until decided)."""
    files = starter_files(student, marker)
    print_, path = store_version(settings.folder, student, files, COMMAND, "")
    program = program_fingerprint(path, COMMAND, "", True, False)
    version, _ = store.add_version(NewVersion(student, print_, COMMAND, "", True, False,
                                              tuple((name, len(data)) for name, data in files.items()), program),
                                   check_again=lambda _: False)
    return version.id


def playouts(settings: ClassSettings, count: int, chance: random.Random) -> dict[tuple[str, ...], list[list[str]]]:
    """Random legal games from the ladder's openings: opening lines -> the move lines played after it."""
    suite = opening_suite(settings.ladder.openings)
    found: dict[tuple[str, ...], list[list[str]]] = {}
    for _ in range(count):
        opening = chance.choice(suite) if suite else ()
        board = Board.start()
        for move in opening:
            board = board.play(move)
        moves = []
        while not board.is_game_over():
            move = chance.choice(board.legal_moves())
            moves.append(move.line())
            board = board.play(move)
        found.setdefault(tuple(move.line() for move in opening), []).append(moves)
    return found


def agent_entry(folder: Path, label: str, colour: str, student: bool, chance: random.Random) -> dict[str, Any]:
    """A side of game.json's ``agents`` as the referee writes it."""
    command = (["python3", "starter.py", label] if student else
               [sys.executable, "-m", "othello_arena", "agent", label, "--name", label])
    return {"colour": colour, "directory": label, "stderr_log": f"{label}.stderr.log",
            "seconds": round(chance.uniform(1, 5), 4), "kind": "command" if student else "builtin",
            "command": command, "openings": True, "oom_kills": 0, "refused_processes": 0,
            "cpu_seconds": round(chance.uniform(1, 5), 2), "exit_code": 0, "peak_processes": 1,
            **({"home": str(folder / "builds" / label)} if student else {})}


def record_of(settings: ClassSettings, white: Side, black: Side, opening: tuple[str, ...], moves: list[str],
              white_wins: Optional[bool], seed: int, chance: random.Random) -> GameRecord:
    records = [MoveRecord(Move.parse(line), round(chance.uniform(0.001, 0.09), 4))
               for line in moves]
    high = chance.randint(33, 64)
    low = 64 - high - chance.randint(0, min(4, 64 - high))
    discs = (32, 32) if white_wins is None else (high, low) if white_wins else (low, high)
    winner = None if white_wins is None else WHITE if white_wins else BLACK
    result = Result(winner, Termination.NORMAL, *discs)
    extra = {"agents": {white.label: agent_entry(settings.folder, white.label, "W", white.version is not None, chance),
                        black.label: agent_entry(settings.folder, black.label, "B", black.version is not None, chance)},
             "referee": {"watch": "inotify", "file_events": 2 * len(moves) + 3, "grace": 0.25, "illegal": "lose",
                         "suspend_waiting": True, "strict_manual": False,
                         "wall_seconds": round(chance.uniform(2, 9), 3), "sandbox": "bwrap",
                         "limits": {"by": "cgroup v1", "memory_mb": 4096, "processes": 64, "disk_mb": 256},
                         "cpus": [1]}}
    opened = [Move.parse(line) for line in opening]
    return GameRecord(white=white.label, black=black.label, seed=seed, moves=records, result=result,
                      time_per_move=settings.time.per_move, extra=extra, opening=opened)


def make(folder: Path, students: int, games: int, seed: int) -> None:
    started = time.monotonic()
    chance = random.Random(seed)
    ids = student_ids(students)
    make_class(folder, ids, REFERENCES, time=0.1)
    settings = load(folder)
    store = ClassStore(settings.database)
    # one real admission: build, check in the sandbox, its card
    first = store_admitted(settings, store, ids[0], "v1")
    version = store.version(first)
    assert version is not None
    checked = time.monotonic()
    card = admit(settings, version)
    print(f"the real check of {ids[0]}'s starter: {card.status.value} in {time.monotonic() - checked:.1f} s")
    record_card(settings, store, card)
    versions = {ids[0]: first}
    for student in ids[1:]:
        number = store_admitted(settings, store, student, "v1")
        row = store.version(number)
        assert row is not None
        built = settings.folder / "builds" / student / row.fingerprint
        shutil.copytree(settings.folder / "submissions" / student / row.fingerprint, built)
        record_card(settings, store, dataclasses.replace(card, student=student, version=number,
                                                         fingerprint=row.fingerprint, status=VersionStatus.ADMITTED))
        versions[student] = number
    prints = {version.student: version.fingerprint for version in store.current_versions()}
    print(f"{len(versions)} versions admitted ({time.monotonic() - started:.0f} s)")

    pool = playouts(settings, PLAYOUTS, chance)
    openings = list(pool)
    strength = {student: chance.gauss(0.0, 1.0) for student in ids}
    strength.update({"random": -2.5, "greedy": -0.8})
    sides = {student: Side(student, versions[student], prints[student]) for student in ids}
    sides.update({ref.name: Side(ref.name, None, reference_fingerprint(ref)) for ref in settings.references})
    by_strength = sorted(ids, key=lambda student: strength[student])
    plan: list[tuple[str, str, PairKind]] = [(student, ref, PairKind.CLIMB) for student in ids for ref in REFERENCES]
    while 2 * len(plan) < games:
        place = chance.randrange(len(by_strength))
        other = min(len(by_strength) - 1, max(0, place + chance.choice([-1, 1]) * chance.randint(1, 12)))
        if other != place:
            plan.append((by_strength[place], by_strength[other], PairKind.LADDER))
    made = 0
    for a, b, kind in plan[:games // 2]:
        opening = chance.choice(openings)
        pair_seed = chance.randrange(2**31)
        planned = [(sides[a], sides[b], pair_seed + 1), (sides[b], sides[a], pair_seed + 2)]
        store.add_pair(sides[a], sides[b], kind, opening, planned)
        for game in store.games(GameStatus.QUEUED):
            p_white = 1.0 / (1.0 + math.exp(strength[game.black] - strength[game.white]))
            roll = chance.random()
            white_wins = None if roll < 0.04 else roll < 0.04 + 0.96 * p_white
            record = record_of(settings, *game.sides, opening, chance.choice(pool[opening]), white_wins, game.seed,
                               chance)
            text = record.to_json()
            store.start_game(game.id)
            store.finish_game(game.id, outcome_of(record, text))
            where = game_folder(settings, game.id)
            where.mkdir(parents=True)
            (where / "game.json").write_text(text, encoding="utf-8")
            sides_json = {colour: {"player": side.label, "version": side.version, "fingerprint": side.fingerprint}
                          for colour, side in zip(("white", "black"), game.sides)}
            (where / "versions.json").write_text(json.dumps(sides_json, indent=1), encoding="utf-8")
            made += 1
        if made % 2000 == 0:
            print(f"{made} games ({time.monotonic() - started:.0f} s)", flush=True)
    store.close()
    backdate(settings.database, made)
    print(f"made {folder}: {students} students, {made} games in {time.monotonic() - started:.0f} s; "
          f"class.sqlite {size_mb(settings.database):.1f} MB")


def backdate(database: Path, games: int) -> None:
    """Spread the games' times over the past week (set-up only: the store never back-dates a row)."""
    db = sqlite3.connect(database)
    end = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)
    start = end - dt.timedelta(days=7)
    first = db.execute("SELECT MIN(id) FROM games").fetchone()[0] or 0
    step = 7 * DAY / max(1, games)
    rows = []
    for (game_id,) in db.execute("SELECT id FROM games ORDER BY id").fetchall():
        at = (start + dt.timedelta(seconds=(game_id - first) * step)).replace(microsecond=0).isoformat()
        rows.append((at, at, at, game_id))
    db.executemany("UPDATE games SET created_at = ?, started_at = ?, finished_at = ? WHERE id = ?", rows)
    db.commit()
    db.close()


def size_mb(database: Path) -> float:
    return sum(path.stat().st_size for path in (database, Path(f"{database}-wal")) if path.exists()) / 1e6


# -- the read paths in one process ------------------------------------------------------------


def one_more_game(settings: ClassSettings, store: ClassStore) -> None:
    """A ladder pair between two students, its games finished as the scheduler records them: the standings change."""
    chance = random.Random(99)
    first, second = store.current_versions()[:2]
    sides = [Side(version.student, version.id, version.fingerprint) for version in (first, second)]
    opening, played_after = next(iter(playouts(settings, 1, chance).items()))
    store.add_pair(sides[0], sides[1], PairKind.LADDER, opening, [(sides[0], sides[1], 1), (sides[1], sides[0], 2)])
    for game in store.games(GameStatus.QUEUED):
        played = record_of(settings, *game.sides, opening, played_after[0], True, game.seed, chance)
        store.start_game(game.id)
        store.finish_game(game.id, outcome_of(played, played.to_json()))


def reads(folder: Path, profile: bool, repeat: int, only: str) -> None:
    """Each read path the pages call, timed in this process (no server, no HTTP): the first time, then the median
    of the next ``repeat - 1``; then the standings again after a pair of games more (a copy of the class is changed)."""
    from othello_arena.classroom import service
    from othello_arena.classroom.grades import grade_sheet, standings

    settings = load(folder)
    store = ClassStore(settings.database)
    student = student_ids(1)[0]
    paths = {
        "standings": lambda: standings(settings, store),
        "student_view": lambda: service.student_json(service.student_view(settings, store, student)),
        "standings_view": lambda: service.standings_json(service.standings_view(settings, store)),
        "class_view": lambda: service.class_json(service.class_view(settings, store)),
        "grade_sheet": lambda: grade_sheet(settings, store),
    }
    profiler = cProfile.Profile() if profile else None
    chosen = [name for name in paths if not only or name in only.split(",")]
    for name in chosen + (["standings after 2 more games"] if "standings" in chosen else []):
        if name == "standings after 2 more games":
            one_more_game(settings, store)
        call = paths.get(name, paths["standings"])
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            if profiler is not None:
                profiler.enable()
            call()
            if profiler is not None:
                profiler.disable()
            times.append(time.perf_counter() - started)
        print(f"{name:30s} first {times[0] * 1000:8.1f} ms, then median "
              f"{sorted(times[1:])[len(times[1:]) // 2] * 1000 if times[1:] else float('nan'):8.1f} ms", flush=True)
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)
    store.close()


# -- HTTP on loopback ----------------------------------------------------------------------


@dataclasses.dataclass
class Timing:
    route: str
    seconds: float
    status: int
    phase: str
    at: float = 0.0  # when it was sent (time.monotonic())


class Client:
    """A person at a browser: an address of their own on loopback (the server caps connections per address)."""

    def __init__(self, port: int, token: str, address: str, timings: list[Timing], phase: list[str]) -> None:
        self.port, self.token, self.address, self.timings, self.phase = port, token, address, timings, phase

    def head(self, method: str, path: str, extra: str = "", length: int = 0) -> bytes:
        return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAuthorization: Bearer {self.token}\r\n"
                f"Connection: close\r\n{extra}" + (f"Content-Length: {length}\r\n" if method == "POST" else "")
                + "\r\n").encode()

    async def request(self, route: str, path: str, body: bytes = b"", content_type: str = "") -> tuple[int, bytes]:
        started = time.monotonic()
        status, data = 0, b""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", self.port, local_addr=(self.address, 0)), 60)
            method = "POST" if body else "GET"
            writer.write(self.head(method, path, f"Content-Type: {content_type}\r\n" if content_type else "",
                                   len(body)) + body)
            await writer.drain()
            data = await asyncio.wait_for(reader.read(-1), 120)
            writer.close()
            status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
        except (OSError, asyncio.TimeoutError, ValueError, IndexError):
            status = 0
        self.timings.append(Timing(route, time.monotonic() - started, status, self.phase[0], started))
        return status, data.split(b"\r\n\r\n", 1)[-1]

    async def stream(self, until: float, on_message: Any, opened: list[int], query: Any = lambda: "",
                     open_now: Optional[list[int]] = None) -> int:
        """Hold ``/api/events`` (``?parts=`` what ``query()`` gives) until ``until``; call ``on_message`` with each
        message's data after the first (a dict, ``{}`` if not JSON); count the streams open in ``open_now``."""
        messages = 0
        open_now = open_now if open_now is not None else [0]
        while time.monotonic() < until:
            counted = False
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", self.port, local_addr=(self.address, 0)), 60)
                writer.write(self.head("GET", "/api/events" + query()))
                await writer.drain()
                line = await asyncio.wait_for(reader.readline(), 60)
                status = int(line.split(b" ", 2)[1]) if line.startswith(b"HTTP/") else 0
                opened.append(status)
                if status != 200:
                    writer.close()
                    await asyncio.sleep(30)
                    continue
                open_now[0] += 1
                counted = True
                while time.monotonic() < until:
                    left = until - time.monotonic()
                    try:
                        line = await asyncio.wait_for(reader.readline(), max(0.1, left))
                    except asyncio.TimeoutError:
                        break
                    if not line:
                        break
                    if line.startswith(b"data: "):
                        messages += 1
                        try:
                            data = json.loads(line[6:])
                        except ValueError:
                            data = {}
                        if messages > 1 or "parts" in data:  # (a page by parts compares even the first)
                            on_message(data if isinstance(data, dict) else {})
                writer.close()
            except (OSError, asyncio.TimeoutError, ValueError, IndexError):
                opened.append(0)
                await asyncio.sleep(5)
            finally:
                if counted:
                    open_now[0] -= 1
        return messages

    async def first_marks(self, query: str) -> dict[str, str]:
        """The marks a fresh stream of this person's gives first (what their page should show now)."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", self.port, local_addr=(self.address, 0)), 60)
            writer.write(self.head("GET", "/api/events" + query))
            await writer.drain()
            while True:
                line = await asyncio.wait_for(reader.readline(), 120)
                if not line:
                    return {}
                if line.startswith(b"data: "):
                    writer.close()
                    return dict(json.loads(line[6:]).get("parts", {}))
        except (OSError, asyncio.TimeoutError, ValueError):
            return {}


MARKED = re.compile(r'data-part="([a-z-]+)" data-mark="([0-9a-f]+)"')
OWN_PARTS = ("versions", "games")  # passed on at once; the others (what moves with everybody's games) held 30-45 s


class Page:
    """A student's open page as classroom/static/class.js keeps it.

    By parts (a server that marks them): the page's parts' marks; at a
    message, the parts whose mark moved are fetched alone (``/parts``) after
    a wait drawn per page (0.2-2 s, a burst fetched once).  Otherwise (the
    server before): at each message after the first, and every 60 s, the
    whole page again.
    """

    def __init__(self, client: Client, standings: bool, chance: random.Random) -> None:
        self.client, self.chance = client, chance
        self.path, self.route = ("/standings", "standings page") if standings else ("/", "student page /")
        self.marks: dict[str, str] = {}
        self.first: dict[str, str] = {}
        self.wanted: set[str] = set()
        self.fetching = False
        self.fetches = 0

    def query(self) -> str:
        return "?parts=" + ",".join(self.marks) if self.marks else ""

    async def load(self) -> None:
        status, body = await self.client.request(self.route, self.path)
        if status == 200:
            self.marks.update(MARKED.findall(body.decode("utf-8", "replace")))
            self.first = self.first or dict(self.marks)

    def on_message(self, data: dict[str, Any]) -> None:
        marks = data.get("parts")
        if not isinstance(marks, dict) or not self.marks:
            asyncio.ensure_future(self.load())
            return
        self.wanted |= {name for name, mark in marks.items() if name in self.marks and self.marks[name] != mark}
        if self.wanted and not self.fetching:
            self.fetching = True
            asyncio.ensure_future(self.fetch())

    async def fetch(self) -> None:
        try:
            await asyncio.sleep(self.chance.uniform(0.2, 2.0))
            while self.wanted:
                names = sorted(self.wanted)
                self.wanted.clear()
                status, body = await self.client.request("parts /parts", "/parts?names=" + ",".join(names))
                self.fetches += 1
                if status == 200:
                    for html in json.loads(body).get("parts", {}).values():
                        self.marks.update(MARKED.findall(html))
        finally:
            self.fetching = False


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def rss_mb(pid: int) -> tuple[float, float]:
    """(RSS, peak RSS) of one process, MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            found[line.split(":")[0]] = int(line.split()[1]) / 1024
    return found.get("VmRSS", 0.0), found.get("VmHWM", 0.0)


class CpuShares:
    """Where the machine's CPU went over a phase, in cores: the server (the pages), its worker (with what of its
    children it reaped), this bench's own client, and the rest of the machine (the agents, and anything else
    running beside the bench).

    A latency measured here includes the client's own wait for a core: with the client and the server on the same
    two cores, a busy client is late to read an answer the server sent in time; these shares tell which it was.
    """

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid

    @staticmethod
    def _times(pid: int) -> tuple[float, float]:
        """(its own CPU, its reaped descendants' CPU), seconds."""
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        own = (int(fields[11]) + int(fields[12])) / CpuShares.TICK
        return own, (int(fields[13]) + int(fields[14])) / CpuShares.TICK

    def snapshot(self) -> dict[str, float]:
        with open("/proc/stat") as handle:
            numbers = [int(x) for x in handle.readline().split()[1:]]
        busy = (sum(numbers[:8]) - numbers[3] - numbers[4]) / self.TICK  # all but idle and iowait
        server, reaped = self._times(self.server_pid)
        below = reaped
        import psutil

        for child in psutil.Process(self.server_pid).children(recursive=True):
            try:
                own, gone = self._times(child.pid)
            except (OSError, IndexError):
                continue
            below += own + gone
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return {"busy": busy, "server": server, "worker": below, "client": usage.ru_utime + usage.ru_stime,
                "clock": time.monotonic()}

    @staticmethod
    def line(before: dict[str, float], after: dict[str, float]) -> str:
        span = after["clock"] - before["clock"]
        share = {key: (after[key] - before[key]) / span for key in ("busy", "server", "worker", "client")}
        rest = share["busy"] - share["server"] - share["worker"] - share["client"]
        return (f"{share['busy']:.2f} of {os.cpu_count()} cores busy: the server's pages {share['server']:.2f}, its "
                f"worker with the checks and the games {share['worker']:.2f}, this bench's client "
                f"{share['client']:.2f}, the rest of the machine {rest:.2f} (the sandboxed agents among it: "
                f"their CPU does not reach the worker's children's counts)")


def finished_since(database: Path, since: str, until: str = "9999") -> int:
    """The games finished from ``since`` (ISO, to the second) to before ``until``."""
    db = sqlite3.connect(database)
    try:
        return int(db.execute("SELECT COUNT(*) FROM games WHERE status = 'finished' AND finished_at >= ? AND "
                              "finished_at < ?", (since, until)).fetchone()[0])
    finally:
        db.close()


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def tokens_of(folder: Path) -> dict[str, str]:
    import csv

    with open(folder / "tokens.csv", encoding="utf-8") as handle:
        tokens = {row["id"]: row["token"] for row in csv.DictReader(handle)}
    tokens["instructor"] = (folder / "instructor.token").read_text().strip()
    return tokens


def some_game(database: Path) -> int:
    db = sqlite3.connect(database)
    try:
        return int(db.execute("SELECT MAX(id) FROM games WHERE status = 'finished'").fetchone()[0])
    finally:
        db.close()


async def idle_rounds(port: int, tokens: dict[str, str], ids: list[str], game: int, rounds: int,
                      timings: list[Timing], phase: list[str]) -> None:
    student = Client(port, tokens[ids[0]], "127.0.0.1", timings, phase)
    teacher = Client(port, tokens["instructor"], "127.0.0.1", timings, phase)
    for _ in range(rounds):
        for route, path in (("student page /", "/"), ("/api/me", "/api/me"), ("standings page", "/standings"),
                            ("/api/standings", "/api/standings"), ("/api/games/ID", f"/api/games/{game}"),
                            ("game page", f"/games/{game}")):
            await student.request(route, path)
        for route, path in (("dashboard /", "/"), ("/api/class", "/api/class"), ("grade sheet", "/api/export.csv")):
            await teacher.request(route, path)


async def peak(port: int, tokens: dict[str, str], ids: list[str], seconds: float, submit_every: float,
               timings: list[Timing], phase: list[str], admissions: list[tuple[str, float, str]]) -> dict[str, Any]:
    until = time.monotonic() + seconds
    opened: list[int] = []
    chance = random.Random(7)
    clients = {student: Client(port, tokens[student], f"127.0.{1 + number // 200}.{1 + number % 200}", timings, phase)
               for number, student in enumerate(ids)}
    teacher = Client(port, tokens["instructor"], "127.0.9.1", timings, phase)
    on_standings = set(ids[::5])
    pages = {student: Page(clients[student], student in on_standings, random.Random(number))
             for number, student in enumerate(ids)}
    open_now = [0]
    samples: list[tuple[float, int]] = []
    late: list[float] = []

    async def browser(student: str) -> int:
        await asyncio.sleep(chance.uniform(0, 10))  # a class arriving, not one burst
        page = pages[student]
        await page.load()
        minute = None if page.marks else asyncio.ensure_future(every(60.0, page.load))  # the page before: 60 s
        try:
            return await clients[student].stream(until, page.on_message, opened, page.query, open_now)
        finally:
            if minute is not None:
                minute.cancel()

    async def sampler() -> None:  # the streams open at each second (a stream counts from its answer's head to its end)
        while time.monotonic() < until:
            samples.append((seconds - (until - time.monotonic()), open_now[0]))
            await asyncio.sleep(1.0)

    async def arrived() -> None:  # the answers of the class's arrival are told apart from the peak's
        await asyncio.sleep(ARRIVAL_SECONDS)
        phase[0] = "peak"

    async def lateness() -> None:  # the client's own event loop: how late a 50 ms sleep wakes (its wait for a core)
        while time.monotonic() < until:
            slept = time.monotonic()
            await asyncio.sleep(0.05)
            late.append(time.monotonic() - slept - 0.05)

    async def every(period: float, action: Any) -> None:
        while time.monotonic() < until:
            await asyncio.sleep(period)
            await action()

    async def instructor() -> None:
        async def dashboard() -> None:
            await teacher.request("dashboard /", "/")
        sheet = asyncio.ensure_future(every(60.0, lambda: teacher.request("grade sheet", "/api/export.csv")))
        api = asyncio.ensure_future(every(20.0, lambda: teacher.request("/api/class", "/api/class")))
        await dashboard()
        await teacher.stream(until, lambda data: None if "id" in data else asyncio.ensure_future(dashboard()), opened)
        sheet.cancel()
        api.cancel()

    async def api_pollers() -> None:  # `othello class submit --wait` and scripts poll the API
        while time.monotonic() < until:
            student = clients[chance.choice(ids)]
            await student.request("/api/me", "/api/me")
            await student.request("/api/standings", "/api/standings")
            await asyncio.sleep(1.0)

    async def submitter() -> None:
        count = 0
        pending: list[asyncio.Future[None]] = []
        while time.monotonic() < until - 5:
            await asyncio.sleep(submit_every)
            count += 1
            student = ids[(count * 37) % len(ids)]
            body, kind = multipart({"command": COMMAND, "build": ""},
                                   [(name, data) for name, data in starter_files(student, f"peak {count}").items()])
            status, data = await clients[student].request("POST /api/submissions", "/api/submissions", body, kind)
            if status != 201:
                admissions.append((student, float("nan"), f"refused {status}: {data[:200]!r}"))
                continue
            version = json.loads(data)["id"]  # (its "version" is the student's number of it; the URL takes the id)
            pending.append(asyncio.ensure_future(card_wait(student, version, time.monotonic())))
        if pending:
            await asyncio.wait(pending, timeout=max(1.0, until + 240 - time.monotonic()))

    async def card_wait(student: str, version: int, sent: float) -> None:
        said = ""
        while time.monotonic() < until + 240:
            status, data = await clients[student].request("/api/versions/ID", f"/api/versions/{version}")
            if status == 200:
                found = json.loads(data)
                if found["status"] != "checking":
                    admissions.append((student, time.monotonic() - sent, found["status"]))
                    return
                said = str((found.get("card") or {}).get("reason") or found.get("reason") or "")
            await asyncio.sleep(1.0)
        admissions.append((student, float("inf"), "no card within the run and 240 s after"
                           + (f" (it said: {said[:80]})" if said else "")))

    phase[0] = "arrival"
    tasks = [asyncio.ensure_future(browser(student)) for student in ids]
    tasks += [asyncio.ensure_future(instructor()), asyncio.ensure_future(api_pollers()),
              asyncio.ensure_future(submitter()), asyncio.ensure_future(sampler()), asyncio.ensure_future(lateness()),
              asyncio.ensure_future(arrived())]
    results = await asyncio.gather(*tasks, return_exceptions=True)
    messages = [result for result in results[:len(ids)] if isinstance(result, int)]
    errors = [repr(result) for result in results if isinstance(result, BaseException)]
    found = {"streams_opened": sum(1 for status in opened if status == 200),
             "streams_refused": sorted({status for status in opened if status != 200}),
             "students_with_messages": sum(1 for count in messages if count), "messages": sum(messages),
             "parts_fetches": sum(page.fetches for page in pages.values()), "errors": errors[:5]}
    settled = [count for at, count in samples if at >= 15]  # (the class arrives over the first 10 s)
    found["streams_open_at_once"] = (f"min {min(settled)}, median {sorted(settled)[len(settled) // 2]}, max "
                                     f"{max(settled)} over {len(settled)} samples, one a second from 15 s"
                                     if settled else "no sample")
    late.sort()
    found["client_lateness_ms"] = (f"p50 {1000 * percentile(late, 0.5):.0f}, p99 {1000 * percentile(late, 0.99):.0f}, "
                                   f"max {1000 * late[-1]:.0f} (how late its 50 ms sleeps woke)" if late else "none")
    if any(page.marks for page in pages.values()):
        found["pages_at_the_end"] = await pages_current(pages)
    return found


async def pages_current(pages: dict[str, Page]) -> str:
    """Whether each page shows what the server gives now, part by part: a fresh stream's first marks against
    the marks the page holds after the run (its own versions and games, passed on at once, and the parts that
    move with everybody's games, which streams hold back)."""
    gate = asyncio.Semaphore(30)

    async def now(page: Page) -> dict[str, str]:
        async with gate:
            return await page.client.first_marks(page.query())

    fresh = await asyncio.gather(*(now(page) for page in pages.values()))
    own_moved = own_current = own_stale = shared_current = shared_pages = 0
    for page, marks in zip(pages.values(), fresh):
        own = [name for name in OWN_PARTS if name in page.marks]
        if own and any(page.first.get(name) != marks.get(name) for name in own):
            own_moved += 1
        if own and all(page.marks.get(name) == marks.get(name) for name in own):
            own_current += 1
        elif own:
            own_stale += 1
        shared = [name for name in page.marks if name not in OWN_PARTS]
        shared_pages += bool(shared)
        shared_current += bool(shared) and all(page.marks.get(name) == marks.get(name) for name in shared)
    return (f"{own_moved} student pages saw their own versions or games move during the run; {own_current} show them "
            f"as the server has them at the end, {own_stale} do not; the parts held 30-45 s by each stream: "
            f"{shared_current} of {shared_pages} pages current")




ARRIVAL_SECONDS = 15.0  # the peak's first seconds, while the class arrives (every page and stream opened in 10 s)
PHASES = ("idle", "arrival", "peak")


def slow_seconds(timings: list[Timing]) -> str:
    """When the peak's slowest answers (past its p99 over every route) were sent: clustered in a few seconds (a
    burst of work at one change of the class) or spread over the run (the machine's load)."""
    peak = sorted((t for t in timings if t.phase == "peak"), key=lambda t: t.seconds)
    if len(peak) < 100:
        return "too few answers"
    slow = peak[int(0.99 * len(peak)):]
    start = min(t.at for t in peak)
    seconds = collections.Counter(int(t.at - start) for t in slow)
    return (f"{len(slow)} answers past {1000 * slow[0].seconds:.0f} ms, sent in {len(seconds)} distinct seconds "
            f"of the run; the busiest: " + ", ".join(f"s{second} ({count})" for second, count in seconds.most_common(5)))


def report(timings: list[Timing]) -> None:
    """Each answer's p50 and p99 idle, while the class arrives (the first :data:`ARRIVAL_SECONDS` of the peak:
    300 pages and streams opened in 10 s) and at the peak after it, in ms."""
    routes = sorted({timing.route for timing in timings})
    head = "".join(f" {phase + ' p50':>12s} {phase + ' p99':>12s} {'n':>5s}" for phase in PHASES)
    print(f"{'answer':24s}{head}  not 2xx (arrival, peak)")
    for route in routes:
        cells = ""
        for phase in PHASES:
            times = [t.seconds * 1000 for t in timings if t.route == route and t.phase == phase]
            cells += f" {percentile(times, 0.5):12.0f} {percentile(times, 0.99):12.0f} {len(times):5d}"
        bad = sum(1 for t in timings if t.route == route and t.phase != "idle" and not 200 <= t.status < 300)
        print(f"{route:24s}{cells}  {bad}")


def run(source: Path, seconds: float, idle_seconds: float, idle_rounds_count: int, submit_every: float,
        dask: int, jobs: Optional[int], keep: bool) -> None:
    import resource

    workdir = Path(tempfile.mkdtemp(prefix="class-load-"))
    folder = workdir / "class"
    started = time.monotonic()
    shutil.copytree(source, folder, symlinks=True)
    print(f"copied the class in {time.monotonic() - started:.0f} s; class.sqlite {size_mb(folder / 'class.sqlite'):.1f} MB")
    tokens = tokens_of(folder)
    ids = sorted(student for student in tokens if student != "instructor")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # 300 streams and their reloads, here and there
    cluster = None
    args: list[str] = []
    if dask:
        import warnings

        from distributed import LocalCluster

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster = LocalCluster(processes=True, n_workers=dask, threads_per_worker=1, host="127.0.0.1",
                                   dashboard_address=":0")
        args = ["--dask", cluster.scheduler_address]
    elif jobs:
        args = ["-j", str(jobs)]
    server = Server(folder, *args)
    port = int(server.base.rsplit(":", 1)[1])
    timings: list[Timing] = []
    phase = ["idle"]
    admissions: list[tuple[str, float, str]] = []
    game = some_game(folder / "class.sqlite")
    print("\n".join(line for line in server.lines if "token=" not in line))
    try:
        # After a start the server compares every admitted version for copies (before schema 6 each
        # version's fingerprints were computed again, minutes of CPU for 300, and the dashboard waited): timed apart.
        warm = Client(port, tokens["instructor"], "127.0.0.1", [], ["warm-up"])
        started = time.monotonic()
        asyncio.run(warm.request("dashboard, first after the start", "/"))
        first_dashboard = time.monotonic() - started
        loads = [os.getloadavg()[0]]
        idle_from = utc_now()
        idle_started = time.monotonic()
        asyncio.run(idle_rounds(port, tokens, ids, game, idle_rounds_count, timings, phase))
        time.sleep(max(0.0, idle_seconds - (time.monotonic() - idle_started)))
        idle_span = time.monotonic() - idle_started
        idle_games = finished_since(folder / "class.sqlite", idle_from)
        idle_rss = rss_mb(server.process.pid)
        loads.append(os.getloadavg()[0])
        phase[0] = "peak"
        print(f"the peak starts: server pid {server.process.pid}, load average {loads[-1]:.1f}", flush=True)
        shares = CpuShares(server.process.pid)
        cpu_before = shares.snapshot()
        peak_from = utc_now()
        peak_started = time.monotonic()
        streams = asyncio.run(peak(port, tokens, ids, seconds, submit_every, timings, phase, admissions))
        peak_span = seconds  # (the games of the load's window: the cards waited for after it are not counted)
        peak_until = (dt.datetime.fromisoformat(peak_from) + dt.timedelta(seconds=seconds)).isoformat()
        peak_games = finished_since(folder / "class.sqlite", peak_from, peak_until)
        peak_rss = rss_mb(server.process.pid)
        peak_cpu = CpuShares.line(cpu_before, shares.snapshot())
        loads.append(os.getloadavg()[0])
    finally:
        server.stop()
        if cluster is not None:
            cluster.close()
    print(f"\nclass: {len(ids)} students, {some_game(folder / 'class.sqlite')} games in class.sqlite; "
          f"ladder {'on ' + str(dask) + ' local Dask workers' if dask else '-j ' + str(jobs or 'default')}")
    print(f"the first dashboard after the start: {first_dashboard:.1f} s")
    print(f"load average (1 min) at start, after idle, after peak: {', '.join(f'{load:.1f}' for load in loads)} "
          f"on {os.cpu_count()} cores")
    report(timings)
    print(f"CPU over the peak: {peak_cpu}")
    print(f"the slowest 1 % at the peak: {slow_seconds(timings)}")
    print(f"ladder: idle {idle_games} games finished in {idle_span:.0f} s ({idle_games * 3600 / idle_span:.0f}/h); "
          f"peak {peak_games} in {peak_span:.0f} s ({peak_games * 3600 / peak_span:.0f}/h); the server's whole run: "
          f"{finished_since(folder / 'class.sqlite', idle_from)} games")
    print(f"event streams: {streams}")
    waits = sorted(seconds for _, seconds, _ in admissions if seconds == seconds)
    print(f"admission (upload's answer to card): {len(admissions)} versions, p50 {percentile(waits, 0.5):.0f} s, "
          f"max {max(waits) if waits else float('nan'):.0f} s; "
          f"verdicts {dict(sorted(collections.Counter(status for _, _, status in admissions).items()))}")
    print(f"server RSS: idle {idle_rss[0]:.0f} MB, after the peak {peak_rss[0]:.0f} MB (peak {peak_rss[1]:.0f} MB)")
    print(f"class.sqlite (+WAL) after the run: {size_mb(folder / 'class.sqlite'):.1f} MB; "
          f"the class folder: {subprocess.run(['du', '-sh', str(folder)], capture_output=True, text=True).stdout.split()[0]}")
    if keep:
        print(f"kept: {folder}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    making = sub.add_parser("make", help="make a class of STUDENTS with GAMES finished games")
    making.add_argument("folder", type=Path)
    making.add_argument("--students", type=int, default=300)
    making.add_argument("--games", type=int, default=20000)
    making.add_argument("--seed", type=int, default=1)
    reading = sub.add_parser("reads", help="time the read paths in this process")
    reading.add_argument("folder", type=Path)
    reading.add_argument("--profile", action="store_true")
    reading.add_argument("--repeat", type=int, default=3)
    reading.add_argument("--only", default="", help="the paths to time, by name, comma-separated (default: all)")
    running = sub.add_parser("run", help="serve a copy of the class and load it")
    running.add_argument("folder", type=Path)
    running.add_argument("--seconds", type=float, default=180.0)
    running.add_argument("--idle-seconds", type=float, default=60.0)
    running.add_argument("--idle-rounds", type=int, default=20)
    running.add_argument("--submit-every", type=float, default=5.0)
    running.add_argument("--dask", type=int, default=0, metavar="WORKERS")
    running.add_argument("-j", "--jobs", type=int, default=None)
    running.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if args.command == "make":
        make(args.folder, args.students, args.games, args.seed)
    elif args.command == "reads":
        reads(args.folder, args.profile, args.repeat, args.only)
    else:
        run(args.folder, args.seconds, args.idle_seconds, args.idle_rounds, args.submit_every, args.dask, args.jobs,
            args.keep)


if __name__ == "__main__":
    main()
