"""``othello class final DIR``: the final tournament on each student's last version admitted before the deadline.

It writes ``DIR/final.toml`` (a tournament file as ``othello tournament``
reads it: the students' built copies, already built and checked, and the
reference agents class.toml names for the final; its results in
``DIR/final/results``) and runs it with the existing runner, then its
report, as the instructor would by hand: ``othello tournament run
final.toml`` and ``othello tournament report final.toml``.  The file lies
in the class's folder because each agent's ``cwd``, ``builds/ID/FP``, must
lie inside the file's folder (an agent's home is its own folder, never more).

What the final is made of (:func:`plan_final`):

- the students, ``id = "STUDENT"`` each (the export's first column), ranked
  among themselves; the references play every student and carry
  ``reference = true``: listed apart, never ranked among them;
- game pairs from the class's openings (``[ladder] openings``), colours
  swapped, when every student's version declares that it reads openings
  (the tournament runner plays an opening only with programs that declare
  it, and one file has one rule).  Otherwise the whole final plays from the
  start position, 2 games a pairing, and its log and the dashboard say which
  programs do not read openings: two deterministic programs play the same
  two games however many are asked, so their pairing is one game each way;
- by default (``[final] games_per_pairing`` not given) as many openings as
  :data:`GAME_BUDGET` games allow, at most :data:`MOST_GAMES` a pairing.  How
  that default was chosen: a class of 30 and two references is 496
  pairings; 4 games each is 1,984 games, about 5.5 hours on two cores at
  the ~20 s of a typical game at 1 s a move (an evening, the ladder
  paused).  Each student then plays 124 games, a 95 % interval of about
  +-60 Elo: neighbours 120 Elo apart are separated, closer ones come out
  tied (``2-4`` in the report, ``rank_best``/``rank_worst`` in the sheet),
  which is the truth at that cost.  Halving the interval takes four times
  the games: a class that wants it gives games_per_pairing.  A smaller class
  gets more games a pairing (10 students: 8), a larger one 2 (the least a
  pair can be).

While it runs the ladder is paused (:class:`FinalMarker`): the final writes
``final/running`` with its process, the server's scheduler reads it before
each game, so a final started from the terminal pauses a running server's
ladder as one started from the dashboard does; a killed final's marker is
stale (its process is gone) and pauses nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import psutil
import tomli_w

from .arena import default_concurrency, load_tournament, tournament_tables
from .settings import ClassSettings
from .store import ClassStore, GameStatus, Version

GAME_BUDGET = 2000  # games of a default final: an evening on two cores for a class of 30 (the docstring's sums)
MOST_GAMES = 8  # a pairing's games by default, however small the class: 4 openings, each with both colours
NO_OPENING_GAMES = 2  # from the start position: one game each way (more would repeat them)
TYPICAL_GAME_SECONDS = 20.0  # the estimate's game length before the ladder has measured any
PAUSED = "the ladder is paused while the final runs"
FINAL_FOLDER = "final"


def final_versions(settings: ClassSettings, store: ClassStore) -> list[Version]:
    """Each student's last admitted version submitted before the deadline (all admitted ones without a deadline)."""
    chosen: dict[str, Version] = {}
    for version in store.admitted_versions():
        submitted = dt.datetime.fromisoformat(version.submitted_at)
        if settings.deadline is None or submitted <= settings.deadline:
            chosen[version.student] = version
    return [chosen[student] for student in sorted(chosen)]


@dataclass(frozen=True)
class FinalPlan:
    """Who plays the final, from which positions and how many games: what final.toml says, and why."""

    versions: tuple[Version, ...]
    references: tuple[str, ...]
    openings: Optional[str]  # the suite the games start from; None: the start position
    games_per_pairing: int
    pairings: int
    rounds: Optional[int]  # swiss only
    notes: tuple[str, ...] = field(default=())  # what the log and the dashboard say of it, a line each

    @property
    def games(self) -> int:
        return self.pairings * self.games_per_pairing


def _pairings(form: str, players: int, rounds: Optional[int]) -> int:
    if form == "swiss":
        return (rounds or 1) * (players // 2)
    once = players * (players - 1) // 2
    return 2 * once if form == "double-round-robin" else once


def plan_final(settings: ClassSettings, store: ClassStore) -> FinalPlan:
    """The final's plan: its players, its openings and its length, with the reasons said in :attr:`FinalPlan.notes`."""
    versions = final_versions(settings, store)
    references = tuple(ref.name for ref in settings.references if ref.name in settings.final.references)
    players = len(versions) + len(references)
    form = settings.final.format
    rounds = max(1, math.ceil(math.log2(max(2, players)))) + 1 if form == "swiss" else None
    pairings = _pairings(form, players, rounds)
    unaware = [version.student for version in versions if not version.openings]
    suite = settings.ladder.openings if settings.ladder.openings.lower() != "none" else None
    notes = []
    if suite is None:
        openings = None
        notes.append("Openings: none ([ladder] openings = \"none\"): every game starts from the start position.")
    elif unaware:
        openings = None
        notes.append(f"Openings: not played. {', '.join(unaware)} "
                     f"{'does' if len(unaware) == 1 else 'do'} not declare that "
                     f"{'its program reads' if len(unaware) == 1 else 'their programs read'} openings, and the "
                     "tournament runner plays an opening only with programs that do: every game of the final starts "
                     "from the start position, for everybody. Two deterministic programs then play the same game "
                     "each way however many are asked, so many ranks will be tied.")
    else:
        openings = suite
        notes.append(f"Openings: {suite}; each pairing plays its openings twice, the colours swapped.")
    default = (NO_OPENING_GAMES if openings is None
               else max(2, min(MOST_GAMES, 2 * (GAME_BUDGET // max(1, pairings) // 2))))
    given = settings.final.games_per_pairing
    if given is not None:
        games = given
        notes.append(f"Games a pairing: {games} ([final] games_per_pairing)"
                     + (f"; the default would be {default} (delete the key for it)." if given < default else "."))
    elif openings is None:
        games = default
        notes.append(f"Games a pairing: {games}, one each way (from the start position more would repeat them).")
    else:
        games = default
        notes.append(f"Games a pairing: {games} ({games // 2} openings), the most within {GAME_BUDGET} games "
                     f"(at most {MOST_GAMES}); give [final] games_per_pairing for more.")
    return FinalPlan(tuple(versions), references, openings, games, pairings, rounds, tuple(notes))


def mean_game_seconds(store: ClassStore) -> Optional[float]:
    """How long a ladder game took on average (the newest 200), or None before any was played."""
    spans = []
    for game in store.games(GameStatus.FINISHED, latest=200):
        if game.started_at and game.finished_at:
            spans.append((dt.datetime.fromisoformat(game.finished_at)
                          - dt.datetime.fromisoformat(game.started_at)).total_seconds())
    return sum(spans) / len(spans) if spans else None


def estimate_line(plan: FinalPlan, seconds: Optional[float], jobs: int) -> str:
    """The final's size and how long it should take, from the ladder's measured games where there are some."""
    each = seconds if seconds is not None else TYPICAL_GAME_SECONDS
    source = (f"the ladder's games took {each:.0f} s on average" if seconds is not None
              else f"no ladder game measured yet: {each:.0f} s a game assumed")
    hours = plan.games * each / max(1, jobs) / 3600
    return (f"The final: {_count(len(plan.versions), 'student')}, {_count(len(plan.references), 'reference')}, "
            f"{_count(plan.pairings, 'pairing')}, {_count(plan.games, 'game')}; {source}, {jobs} at once: "
            f"about {hours:.1f} hours.")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def tournament_document(settings: ClassSettings, plan: FinalPlan) -> dict[str, Any]:
    """The final's tournament file as data (what :func:`tournament_file` writes with a TOML writer)."""
    table: dict[str, Any] = {"name": settings.name + " final", "format": settings.final.format,
                             "games_per_pairing": plan.games_per_pairing,
                             # the class's time rule as class.toml gives it (under a clock without a cap: the bank)
                             **settings.time.file_keys(), "results": f"{FINAL_FOLDER}/results"}
    if plan.openings is not None:
        table["openings"] = plan.openings
    if plan.rounds is not None:
        table["rounds"] = plan.rounds
    agents: list[dict[str, Any]] = []
    for version in plan.versions:
        home = settings.folder / "builds" / version.student / version.fingerprint
        agent: dict[str, Any] = {"name": version.student, "id": version.student, "command": version.command,
                                 "cwd": str(home)}
        if version.openings:
            agent["openings"] = True
        if version.reads_clock:
            agent["reads_clock"] = True
        agents.append(agent)
    for name in plan.references:
        reference = settings.reference(name)
        assert reference is not None
        agent = {"name": reference.name, "builtin": reference.builtin, "reference": True}
        if reference.time_per_move:
            agent["time_per_move"] = reference.time_per_move
        agents.append(agent)
    document: dict[str, Any] = {"tournament": table}
    if settings.referee:  # the class's limits of every program ([referee] of class.toml)
        document["referee"] = dict(settings.referee)
    document["agents"] = agents
    return document


def tournament_file(settings: ClassSettings, plan: FinalPlan) -> str:
    """The final's tournament TOML, written by a TOML writer (any student's text quoted as TOML quotes it)."""
    header = ["# Written by othello class final: each student's last admitted version before the deadline."]
    header += [f"# {version.student}: version {version.number}, fingerprint {version.fingerprint}, submitted "
               f"{version.submitted_at}" for version in plan.versions]
    header += [f"# {line}" for line in plan.notes]
    return "\n".join(header) + "\n\n" + tomli_w.dumps(tournament_document(settings, plan))


# -- the pause: a marker the server's ladder reads -------------------------------------------


class FinalMarker:
    """``DIR/final/running``: which process plays the final; while that process lives, the ladder waits."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / FINAL_FOLDER / "running"

    def hold(self) -> None:
        """Say that this process plays the final (its pid and start time: a reused pid is not mistaken for it)."""
        self.path.parent.mkdir(exist_ok=True)
        me = psutil.Process()
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps({"pid": me.pid, "started": me.create_time()}), encoding="utf-8")
        os.replace(temporary, self.path)

    def release(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def running(self) -> bool:
        """Whether a final's process is alive now (a marker left by a killed final is not)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            process = psutil.Process(int(data["pid"]))
            same = abs(float(process.create_time()) - float(data["started"])) < 1.0  # not another process of its pid
            return same and bool(process.is_running()) and str(process.status()) != psutil.STATUS_ZOMBIE
        except (OSError, ValueError, KeyError, TypeError, psutil.Error):
            return False


class LadderPause:
    """The scheduler's ``paused``: true while a final runs; says it in the server's log when it starts and ends."""

    def __init__(self, folder: Path, log: Callable[[str], None], remote: bool = False) -> None:
        self.marker, self.log, self.remote = FinalMarker(folder), log, remote
        self.was = False

    def __call__(self) -> bool:
        now = self.marker.running()
        if now != self.was:
            if self.remote:  # the scheduler pauses only games on this machine's cores
                self.log("ladder: the final runs; the ladder's games go on, on the Dask workers" if now
                         else "ladder: the final ended")
            else:
                self.log(f"ladder: {PAUSED} (games in flight finish)" if now
                         else "ladder: the final ended: the ladder goes on")
            self.was = now
        return now


# -- running it -----------------------------------------------------------------------


def run_final(settings: ClassSettings, store: ClassStore, jobs: Optional[int], fresh: bool,
              echo: Callable[[str], None] = print) -> tuple[Path, int]:
    """Write the final's file and run it, then its report; return the file and the runner's exit status."""
    marker = FinalMarker(settings.folder)
    if marker.running():
        raise ValueError(f"a final is running already (its process is named in {marker.path})")
    plan = plan_final(settings, store)
    if len(plan.versions) + len(plan.references) < 2:
        raise ValueError("the final needs two players at least: fewer students have an admitted version")
    folder = settings.folder / FINAL_FOLDER
    folder.mkdir(exist_ok=True)
    path = settings.folder / "final.toml"
    text = tournament_file(settings, plan)
    changed = not path.exists() or path.read_text(encoding="utf-8") != text
    path.write_text(text, encoding="utf-8")
    (folder / "plan.json").write_text(json.dumps({"notes": list(plan.notes)}), encoding="utf-8")
    for line in plan.notes:
        echo(line)
    echo(estimate_line(plan, mean_game_seconds(store), jobs or default_concurrency()))
    started = (folder / "results").exists()
    command = [sys.executable, "-m", "othello_arena", "tournament"]
    if started and not fresh and not changed:
        command += ["resume", str(path)]
    else:
        command += ["run", str(path), "--no-build"] + (["--fresh"] if started else [])
    if jobs:
        command += ["-j", str(jobs)]
    if threading.current_thread() is threading.main_thread():
        # stopped (the server's shutdown, a kill): SystemExit here makes subprocess.call end the runner, whose
        # games would otherwise go on beside the ladder, and the finally below release the marker
        signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    marker.hold()
    try:
        echo(f"{PAUSED.capitalize()}: a class server on {settings.folder} starts no ladder game until it ends.")
        sys.stdout.flush()
        code = subprocess.call(command)
        if code == 0:
            code = replay_flagged(path, jobs, echo)
        if code == 0:
            code = subprocess.call([sys.executable, "-m", "othello_arena", "tournament", "report", str(path)])
    finally:
        marker.release()
    return path, code


def flagged_games(path: Path) -> list[dict[str, Any]]:
    """The final's finished games lost on a timeout the tournaments flag as caused by load (``load_flag``)."""
    return [game for game in tournament_tables(load_tournament(path))["games"]
            if game["load_flag"] and game["status"] == "finished"]


def replay_flagged(path: Path, jobs: Optional[int], echo: Callable[[str], None] = print) -> int:
    """Play again the final's games lost on a timeout flagged as caused by load, as the ladder does (at most
    :data:`~.ladder.LOAD_RETRIES` times, same seeds and colours): ``othello tournament rerun FILE --flagged``.
    Returns the runner's exit status; what is still flagged after the last try is said (the report flags it)."""
    from .ladder import LOAD_RETRIES

    for attempt in range(1, LOAD_RETRIES + 1):
        flagged = flagged_games(path)
        if not flagged:
            return 0
        echo(f"{len(flagged)} game(s) lost on a timeout the machine's load may have caused: played again "
             f"({attempt} of at most {LOAD_RETRIES})")
        sys.stdout.flush()
        code = subprocess.call([sys.executable, "-m", "othello_arena", "tournament", "rerun", str(path), "--flagged"]
                               + (["-j", str(jobs)] if jobs else []))
        if code != 0:
            return code
    still = flagged_games(path)
    if still:
        echo(f"{len(still)} game(s) still lost on a timeout flagged as caused by load after {LOAD_RETRIES} replays "
             f"(they count, flagged in the report): play them again on a quieter machine with `othello tournament "
             f"rerun {path} --flagged`")
    return 0


class FinalProcess:
    """The final started from the API (the instructor's button): ``othello class final DIR`` in its own process."""

    def __init__(self, settings: ClassSettings) -> None:
        self.settings = settings
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.log = settings.folder / FINAL_FOLDER / "final.log"
        self.marker = FinalMarker(settings.folder)

    def start(self) -> bool:
        """Start it; ``False`` if a final is running already (this one, or one started from a terminal)."""
        if (self.process is not None and self.process.poll() is None) or self.marker.running():
            return False
        self.log.parent.mkdir(exist_ok=True)
        with open(self.log, "wb") as output:
            self.process = subprocess.Popen([sys.executable, "-m", "othello_arena", "class", "final",
                                             str(self.settings.folder)], stdout=output, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        return True

    def state(self) -> dict[str, object]:
        """Running (from here or a terminal), the exit status, the plan's notes, the end of the output, the report."""
        ours = self.process is not None and self.process.poll() is None
        running = ours or self.marker.running()
        code = None if self.process is None or ours else self.process.returncode
        try:
            tail = self.log.read_bytes()[-8000:].decode("utf-8", "replace")
        except OSError:
            tail = ""
        try:
            notes = [str(line) for line in json.loads(
                (self.settings.folder / FINAL_FOLDER / "plan.json").read_text(encoding="utf-8"))["notes"]]
        except (OSError, ValueError, KeyError, TypeError):
            notes = []
        report = self.settings.folder / FINAL_FOLDER / "results" / "report" / "index.html"
        return {"running": running, "exit": code, "log": tail, "report": report.exists(), "notes": notes,
                "ladder": PAUSED if running else ""}

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
