"""The read model of a tournament: what its database and file say, as one typed value.

:func:`read_state` opens the database read-only (no lock: safe while a
runner plays) and builds a :class:`TournamentState`: progress, standings,
crosstable, withdrawals, replaced results, flagged and voided games, builds
and a summary per agent.  ``othello tournament status``, the report, the
export and the web app all read this one value and never import what plays
games; :func:`status_json` is the plain data ``status --json`` prints.

A game marked running counts as running only while a runner holds the
tournament's lock; otherwise it was in flight when its runner stopped
(*interrupted*) and ``resume`` voids and replays it.
"""

from __future__ import annotations

import datetime
import json
import statistics
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ..schedule import pairing
from ..schedule.config import Tournament
from .lock import holder as lock_holder
from .pairs import MatchState, read_match
from .standings import Line, Standings, compute
from .store import BuildResult, FinishedGame, GameRow, GameStatus, RoundRow, Store

# A game voided this many times (in flight at a stop, or unplayable) is
# pointed out to the instructor: an agent may be stopping the runner on purpose.
VOIDED_FLAG_AT = 2

RATING_MODEL = "Bradley-Terry maximum likelihood on the Elo scale (average 1500), 95% intervals"


# ---------------------------------------------------------------------------
# Progress: counts that add up
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rounds:
    """How many rounds the tournament has, how many are paired (stored), how many complete."""

    total: int
    paired: int
    complete: int


@dataclass(frozen=True)
class Progress:
    """Game counts that add up (see :func:`progress`)."""

    scheduled: int  # every game that will count: stored, to add, and Swiss rounds not paired yet
    finished: int
    running: int  # marked running in the database (in flight, or interrupted if no runner holds the lock)
    excluded: int  # the withdrawn agents' stored games, counted apart
    to_add: int  # the new pairings the file adds, which ``run`` will store
    rounds: Rounds

    @property
    def complete(self) -> bool:
        return self.finished == self.scheduled


def planned_games(tournament: Tournament, withdrawn: Any = ()) -> int:
    """How many games the file's tournament has, before any is stored (Swiss: every round pairs the same number)."""
    schedule = pairing.fixed_schedule(tournament, withdrawn)
    if schedule is not None:
        return len(schedule)
    per_round = len(pairing.active_names(tournament, withdrawn)) // 2 * tournament.games_per_pairing
    return per_round * int(tournament.rounds or 0)


def withdrawn_agents(tournament: Tournament, store: Optional[Store]) -> dict[str, str]:
    """Every withdrawn agent and why: ``withdraw = true`` in the file, or ``othello tournament withdraw``."""
    found = dict(store.withdrawals()) if store is not None else {}
    for name, reason in tournament.withdrawn.items():
        found.setdefault(name, reason)
    return {name: found[name] for name in tournament.agent_names if name in found}


def progress(tournament: Tournament, store: Optional[Store]) -> Progress:
    """Counts that add up, from the database and the file (no database: the file's plan).

    ``scheduled`` counts every game that will count: those stored (less the
    withdrawn agents' games, counted apart in ``excluded``), the new pairings
    the file adds and ``run`` will store (``to_add``), and a Swiss's rounds
    not paired yet.
    """
    withdrawn = withdrawn_agents(tournament, store)
    if store is None:
        total = planned_games(tournament, withdrawn)
        return Progress(total, 0, 0, 0, 0, Rounds(pairing.total_rounds(tournament), 0, 0))
    counts = store.counts(exclude=withdrawn)
    stored = store.scheduled_games()
    active = store.scheduled_games(exclude=withdrawn)
    unfinished = {game.key for game in store.unfinished_games(exclude=withdrawn)}
    paired = sorted({game.round for game in stored} | {row.round for row in store.rounds()})
    complete = sum(1 for number in paired
                   if not any(game.round == number and game.key in unfinished for game in active))
    if tournament.format == "swiss":
        to_add = 0
        per_round = len(pairing.active_names(tournament, withdrawn)) // 2 * tournament.games_per_pairing
        future = max(0, int(tournament.rounds or 0) - len(paired)) * per_round
        total_rounds = max(int(tournament.rounds or 0), len(paired))
    elif not stored:
        to_add = planned_games(tournament, withdrawn)
        future = 0
        total_rounds = pairing.total_rounds(tournament)
    else:
        to_add = len(pairing.additions(tournament, stored, withdrawn))
        future = 0
        total_rounds = len(paired) + (1 if to_add else 0)
    return Progress(counts["scheduled"] + to_add + future, counts["finished"], counts["running"], counts["excluded"],
                    to_add, Rounds(total_rounds, len(paired), complete))


def standings_of(tournament: Tournament, store: Store, withdrawn: Mapping[str, str],
                 finished: Optional[list[FinishedGame]] = None) -> Standings:
    """The standings of the agents still in (less the withdrawn and their games): the one recipe.

    ``finished``: the games that count, if read already (``store.finished_games(exclude=withdrawn)``).
    """
    if finished is None:
        finished = store.finished_games(exclude=withdrawn)
    return compute(pairing.active_names(tournament, withdrawn), finished, store.byes())


# ---------------------------------------------------------------------------
# The parts of the state
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Withdrawal:
    """A withdrawn agent, why, and how many of its stored games left the standings."""

    agent: str
    reason: str
    games: int


@dataclass(frozen=True)
class ReplacedResult:
    """A result a rerun took out of the standings (kept in the ``replaced`` table)."""

    game: str
    white: str
    black: str
    attempt: int
    winner: Optional[str]
    reason: Optional[str]
    discs: tuple[Optional[int], Optional[int]]
    replaced: float
    why: str
    files: str


@dataclass(frozen=True)
class FlaggedGame:
    """A timeout the referee flagged as perhaps caused by load, with what the agent's other games say.

    ``agent`` ran out of time at ``move`` (the game's move number, the
    opening's moves apart); ``median`` and ``slowest`` are its seconds per
    move in its other finished games (``None``: it has none): an agent whose
    slowest move elsewhere is far below the limit was likely short of CPU,
    one that often nears the limit likely has no clock of its own.
    """

    game: str
    white: str
    black: str
    note: str
    agent: str = ""
    move: int = 0
    median: Optional[float] = None
    slowest: Optional[float] = None

    def describe(self) -> str:
        """The flag for people: who, at which move, and its move times elsewhere."""
        text = f"timeout under load? {self.note}"
        if self.agent:
            text += f"; {self.agent} ran out of time at move {self.move}"
            text += (f"; its other games: median {self.median:.2f} s, max {self.slowest:.2f} s a move"
                     if self.median is not None and self.slowest is not None else "; it has no other game yet")
        return text


def _move_seconds(row: GameRow, agent: str) -> list[float]:
    """The seconds of each move ``agent`` made in a finished game (from its record)."""
    try:
        moves = json.loads(row.record or "").get("moves", [])
        colour = "W" if agent == row.white else "B"
        return [float(entry["seconds"]) for entry in moves
                if str(entry.get("move", ""))[1:2] == colour and isinstance(entry.get("seconds"), (int, float))]
    except (ValueError, TypeError, AttributeError, KeyError):
        return []


def flagged_games(games: Sequence[GameRow]) -> tuple[FlaggedGame, ...]:
    """Every flagged timeout with who timed out, at which move, and that agent's move times in its other games."""
    flagged = []
    times: dict[str, list[tuple[str, list[float]]]] = {}  # agent -> (game, its move times), each record read once
    for row in games:
        if not row.load_flag:
            continue
        agent = row.black if row.winner == "W" else row.white if row.winner == "B" else ""
        if agent and agent not in times:
            times[agent] = [(other.key, _move_seconds(other, agent)) for other in games
                            if other.is_finished and other.plays(agent)]
        others = [seconds for key, moves in times.get(agent, []) if key != row.key for seconds in moves]
        flagged.append(FlaggedGame(row.key, row.white, row.black, row.load_flag, agent, (row.plies or 0) + 1,
                                   statistics.median(others) if others else None, max(others) if others else None))
    return tuple(flagged)


@dataclass(frozen=True)
class VoidedAttempt:
    """An attempt at a game that ended with no result."""

    attempt: int
    started: float
    ended: Optional[float]
    why: str
    runner: str
    files: str


@dataclass(frozen=True)
class VoidedGame:
    """A game with voided attempts, and where it is now."""

    game: str
    white: str
    black: str
    status: GameStatus
    attempts: tuple[VoidedAttempt, ...]

    @property
    def voided(self) -> int:
        return len(self.attempts)

    @property
    def flagged(self) -> bool:
        """Voided again and again: an agent may be stopping the runner on purpose."""
        return self.voided >= VOIDED_FLAG_AT


@dataclass(frozen=True)
class CrossCell:
    """One agent's games against one opponent: points, games, and wins, draws and losses."""

    points: float
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class AgentSummary:
    """One agent of the file: how it plays, its line of the standings, its build, its games."""

    name: str
    description: str
    files: str  # the names of its move files, when they are not the default ones
    reference: bool  # a reference agent, not a student: never ranked among them
    id: str  # the student's id in the class roster ("" when the file gives none)
    line: Optional[Line]  # None when withdrawn
    withdrawn: Optional[str]  # why, when withdrawn
    build: Optional[BuildResult]
    games: tuple[str, ...]  # the keys of its games, played or not, in playing order


@dataclass(frozen=True)
class TournamentState:
    """A tournament as its database and its file say, at one moment (built by :func:`read_state`)."""

    name: str
    format: str
    database: Path
    started: bool  # False: no database yet, the counts are the file's plan
    runner: Optional[dict[str, Any]]  # who holds the lock (pid, host...), None when no runner plays
    progress: Progress
    withdrawn: tuple[Withdrawal, ...]
    standings: Standings
    crosstable: Mapping[str, Mapping[str, CrossCell]]  # agent -> opponent -> cell, only pairs that met
    games: tuple[GameRow, ...]  # every game of the schedule, in playing order
    rounds: tuple[RoundRow, ...]
    replaced: tuple[ReplacedResult, ...]
    flagged: tuple[FlaggedGame, ...]
    voided: tuple[VoidedGame, ...]
    builds: Mapping[str, BuildResult]
    agents: tuple[AgentSummary, ...]
    references: tuple[str, ...] = ()  # the reference agents (Tournament.references), never ranked among students
    match: Optional[MatchState] = None  # a match of othello match: its pairs, figures and verdict

    @property
    def running(self) -> int:
        """Games being played now (only while a runner holds the lock)."""
        return self.progress.running if self.runner is not None else 0

    @property
    def interrupted(self) -> int:
        """Games left running by a runner that stopped: ``resume`` voids and replays them."""
        return 0 if self.runner is not None else self.progress.running

    @property
    def voided_attempts(self) -> int:
        return sum(game.voided for game in self.voided)

    @property
    def withdrawn_names(self) -> dict[str, str]:
        return {item.agent: item.reason for item in self.withdrawn}

    @cached_property
    def unsandboxed(self) -> tuple[str, ...]:
        """The finished games whose record says their agents ran without the sandbox (``sandbox = "none"``)."""
        return tuple(row.key for row in self.games if row.is_finished and _unsandboxed(row.record))

    def game(self, key: str) -> Optional[GameRow]:
        """Game ``key``, ``None`` if the schedule has none."""
        return next((row for row in self.games if row.key == key), None)

    def agent(self, name: str) -> Optional[AgentSummary]:
        return next((agent for agent in self.agents if agent.name == name), None)

    @cached_property
    def student_ranks(self) -> dict[str, Optional[int]]:
        """Each agent of the standings' rank among the students only; ``None`` for a reference agent.

        In the standings' order, with their ties: two students tie here when
        they tie there (same rank), whatever references stood between.
        """
        ranks: dict[str, Optional[int]] = {}
        previous: Optional[Line] = None
        position = 0
        for line in self.standings.lines:
            if line.agent in self.references:
                ranks[line.agent] = None
                continue
            position += 1
            tied = previous is not None and previous.rank == line.rank
            ranks[line.agent] = ranks[previous.agent] if tied and previous is not None else position
            previous = line
        return ranks

    @cached_property
    def student_rank_ranges(self) -> dict[str, Optional[tuple[int, int]]]:
        """Each student's ranks that the evidence allows, ``(best, worst)``; ``None`` for a reference agent.

        A student is clearly above another when the 95% rating intervals do
        not overlap (its low above the other's high).  The best rank is one
        more than the students clearly above, the worst the number of students
        less those clearly below; the standings' rank always lies within.
        ``(3, 3)``: the evidence separates the student from every neighbour;
        ``(2, 4)``: ranks 2 to 4 are statistically tied, whatever order the
        points give them.  A student without a rating (no game) may be anywhere.
        """
        ranks = self.student_ranks
        students = [line.agent for line in self.standings.lines if ranks.get(line.agent) is not None]
        ratings = self.standings.ratings
        ranges: dict[str, Optional[tuple[int, int]]] = {agent: None for agent in ranks}
        for agent in students:
            rank = ranks[agent]
            assert rank is not None
            mine = ratings.get(agent)
            others = [ratings.get(other) for other in students if other != agent]
            if mine is None or any(other is None for other in others):
                ranges[agent] = (1, len(students))
                continue
            above = sum(1 for other in others if other is not None and other.low > mine.high)
            below = sum(1 for other in others if other is not None and other.high < mine.low)
            ranges[agent] = (min(rank, above + 1), max(rank, len(students) - below))
        return ranges

    def rank_text(self, agent: str) -> str:
        """A student's rank as people read it: ``3``, or ``2-4`` when the evidence ties ranks 2 to 4; ``ref``."""
        found = self.student_rank_ranges.get(agent)
        if found is None:
            return "ref"
        best, worst = found
        return str(best) if best == worst else f"{best}-{worst}"

    def counts(self, row: GameRow) -> bool:
        """Whether a game counts in the standings (no withdrawn agent played it)."""
        withdrawn = self.withdrawn_names
        return row.white not in withdrawn and row.black not in withdrawn

    def progress_text(self) -> str:
        """How far it is, for people: ``12 of 28 games played, 2 in progress``; a match says it in its own words.

        A match with an SPRT schedules its cap of games, most of which it
        never plays: its line says what the test decided (or that it has not
        yet) rather than counting those games as to be played.
        """
        if self.match is not None:
            return self.match.games_line(self.progress.finished, self.running)
        return f"{self.progress.finished} of {self.progress.scheduled} games played, {self.running} in progress"

    def listed(self, row: GameRow) -> bool:
        """Whether a page lists the game: every game, less a match's games its SPRT has not started.

        Those are played only if the test still needs them, and never once it
        decided; :meth:`progress_text` says how many there may be.
        """
        return not (self.match is not None and self.match.sprt is not None and row.status is GameStatus.SCHEDULED)

    def shown_status(self, row: GameRow) -> str:
        """A game's status for people: ``interrupted`` for a game marked running that no runner plays."""
        if row.status is GameStatus.RUNNING and self.runner is None:
            return "interrupted"
        return row.status.value


# ---------------------------------------------------------------------------
# Building it: the one place that reads a tournament
# ---------------------------------------------------------------------------


def read_state(tournament: Tournament, *, must_exist: bool = True) -> TournamentState:
    """The tournament's state, read from its database without the lock.

    No database yet: :class:`~.store.StoreError` ("no results yet"), or with
    ``must_exist=False`` the file's plan (``started`` False, nothing played).
    """
    if not must_exist and not Path(tournament.database).exists():
        return _not_started(tournament)
    runner = lock_holder(tournament.database)
    with Store(tournament.database, create=False) as store:
        counts = progress(tournament, store)
        withdrawn = withdrawn_agents(tournament, store)
        finished = store.finished_games(exclude=withdrawn)
        table = standings_of(tournament, store, withdrawn, finished)
        games = tuple(store.game_rows())
        rows = {row.key: row for row in games}
        replaced = tuple(
            ReplacedResult(row.key, row.white, row.black, row.attempt, row.winner, row.reason,
                           (row.white_discs, row.black_discs), row.replaced, row.why, row.game_dir or "")
            for row in store.replaced_rows())
        voided = tuple(
            VoidedGame(key, rows[key].white, rows[key].black, rows[key].status,
                       tuple(VoidedAttempt(a.attempt, a.started, a.ended, a.why or "", a.runner or "", a.files or "")
                             for a in attempts))
            for key, attempts in store.voided().items())
        builds = store.builds()
        rounds = tuple(store.rounds())
        match = read_match(tournament, store) if tournament.is_match else None
    flagged = flagged_games(games)
    return TournamentState(
        name=tournament.name, format=tournament.format, database=Path(tournament.database), started=True,
        runner=runner, progress=counts,
        withdrawn=tuple(Withdrawal(name, reason, sum(1 for row in games if row.plays(name)))
                        for name, reason in withdrawn.items()),
        standings=table, crosstable=_crosstable(table, finished), games=games, rounds=rounds,
        replaced=replaced, flagged=flagged, voided=voided, builds=builds,
        agents=_agents(tournament, table, games, withdrawn, builds), references=tournament.references,
        match=match,
    )


def _not_started(tournament: Tournament) -> TournamentState:
    withdrawn = withdrawn_agents(tournament, None)
    table = compute(pairing.active_names(tournament, withdrawn), [])
    return TournamentState(
        name=tournament.name, format=tournament.format, database=Path(tournament.database), started=False,
        runner=None, progress=progress(tournament, None),
        withdrawn=tuple(Withdrawal(name, reason, 0) for name, reason in withdrawn.items()),
        standings=table, crosstable={}, games=(), rounds=(), replaced=(), flagged=(), voided=(), builds={},
        agents=_agents(tournament, table, (), withdrawn, {}), references=tournament.references,
    )


def _crosstable(table: Standings, finished: list[FinishedGame]) -> dict[str, dict[str, CrossCell]]:
    """Each pair that met: the points and games of the standings, with wins, draws and losses."""
    tally: dict[tuple[str, str], list[int]] = {}
    for game in finished:
        for agent, opponent in ((game.white, game.black), (game.black, game.white)):
            tally.setdefault((agent, opponent), [0, 0, 0])[{1.0: 0, 0.5: 1, 0.0: 2}[game.points(agent)]] += 1
    cells: dict[str, dict[str, CrossCell]] = {}
    for agent, row in table.crosstable.items():
        for opponent, (points, count) in row.items():
            if count:
                wins, draws, losses = tally.get((agent, opponent), [0, 0, 0])
                cells.setdefault(agent, {})[opponent] = CrossCell(points, count, wins, draws, losses)
    return cells


def _agents(tournament: Tournament, table: Standings, games: tuple[GameRow, ...], withdrawn: Mapping[str, str],
            builds: Mapping[str, BuildResult]) -> tuple[AgentSummary, ...]:
    lines = {line.agent: line for line in table.lines}
    return tuple(
        AgentSummary(agent.name, agent.describe(), agent.files or "", agent.name in tournament.references, agent.id,
                     lines.get(agent.name), withdrawn.get(agent.name), builds.get(agent.name),
                     tuple(row.key for row in games if row.plays(agent.name)))
        for agent in tournament.agents)


def _unsandboxed(record_text: Optional[str]) -> bool:
    """Whether a stored game record says its agents ran without the sandbox (``sandbox = "none"``)."""
    if not record_text:
        return False
    try:
        referee = json.loads(record_text).get("referee", {})
    except (ValueError, AttributeError):
        return False
    return isinstance(referee, dict) and referee.get("sandbox") == "none"


# ---------------------------------------------------------------------------
# As plain data
# ---------------------------------------------------------------------------


def iso_time(seconds: Optional[float]) -> str:
    """A stored Unix time as ISO 8601 in UTC (``2026-11-25T19:46:27Z``), for people and spreadsheets; ``""`` for none."""
    if seconds is None:
        return ""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def status_json(state: TournamentState) -> dict[str, Any]:
    """The state as ``othello tournament status --json`` prints it (and the report's ``status.json``)."""
    if not state.started:
        # Not started: a valid answer for scripts, with what is known before the first game.
        return {"name": state.name, "scheduled": state.progress.scheduled, "finished": 0, "running": 0,
                "interrupted": 0, "runner": None, "complete": False, "standings": [], "voided": [],
                "voided_attempts": 0, "repeatedly_voided": []}
    counts = state.progress
    voided = [_voided_json(game) for game in state.voided]
    return {
        "name": state.name,
        "format": state.format,
        "scheduled": counts.scheduled,
        "finished": counts.finished,
        "running": state.running,
        "interrupted": state.interrupted,
        "runner": state.runner,
        "rounds": {"total": counts.rounds.total, "paired": counts.rounds.paired, "complete": counts.rounds.complete},
        "complete": counts.complete,
        "to_add": counts.to_add,
        "withdrawn": [{"agent": item.agent, "reason": item.reason, "games": item.games} for item in state.withdrawn],
        "withdrawn_games": counts.excluded,
        "replaced": [{"game": item.game, "white": item.white, "black": item.black, "attempt": item.attempt,
                      "winner": item.winner, "reason": item.reason, "discs": list(item.discs),
                      "replaced": item.replaced, "why": item.why, "files": item.files} for item in state.replaced],
        "standings": state.standings.to_list(),
        "repeated_games": state.standings.repeats,
        "repeats_note": state.standings.repeats_note(),
        "crosstable": state.standings.crosstable_dict(),
        "load_flagged": [{"game": item.game, "white": item.white, "black": item.black, "note": item.note,
                          "agent": item.agent, "move": item.move, "median_seconds": item.median,
                          "max_seconds": item.slowest} for item in state.flagged],
        "voided": voided,
        "voided_attempts": state.voided_attempts,
        "repeatedly_voided": [item for item, game in zip(voided, state.voided) if game.flagged],
        "builds": {name: {"status": b.status, "exit_code": b.exit_code, "detail": b.detail, "log": b.log}
                   for name, b in state.builds.items()},
        "unsandboxed": list(state.unsandboxed),
        "database": str(state.database),
        "rating_model": RATING_MODEL,
    }


def _voided_json(game: VoidedGame) -> dict[str, Any]:
    return {"game": game.game, "white": game.white, "black": game.black, "status": game.status.value,
            "voided": game.voided,
            "attempts": [{"attempt": a.attempt, "started": a.started, "ended": a.ended, "why": a.why,
                          "runner": a.runner, "files": a.files} for a in game.attempts]}
