"""A head-to-head match in game pairs, played by the tournament runner.

``othello match A B`` writes ``match.toml`` in its directory: a tournament
file of one pairing, A against B, whose ``games_per_pairing`` is the number
of games (with an SPRT: the most it may play), with the opening suite, the
seed and a ``[match]`` table naming the SPRT.  The tournament runner plays
it, so a match has what a tournament has: games in parallel, agents in
their sandboxes, every result stored in SQLite as it comes, and a resume
after a stop (``othello match --resume DIR``) that replays only the games
in flight.

Games 2k-1 and 2k of the pairing are game pair k: the k-th opening drawn
from the suite by the seed, once with each colour
(:func:`~.pairing.expand`, :func:`~.pairing.game_opening`).  When both
games of a pair are stored, A's two scores go into the pentanomial counts,
the Elo estimate and the LLR (:mod:`.stats`); once the SPRT decides, the
runner starts no new game (the games already running finish and are
stored, and the figures count them).  ``match.json`` keeps the figures and
every pair, rewritten after each pair.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Callable, Optional

from ...referee import AgentSpec, distinct_labels
from ...referee.clock import TimeRule
from ...referee.spec import BUILTIN
from ..run.runner import Runner, ScheduleEvent, ScheduleEventKind
from ..schedule import config as tournament_config
from ..results.pairs import MatchState, PairResult, complete_pair, new_state
from ..stats import SPRT

MATCH_FILE = "match.toml"
SUMMARY_FILE = "match.json"


# ---------------------------------------------------------------------------
# The match file
# ---------------------------------------------------------------------------


def write_match_file(directory: Path, a: AgentSpec, b: AgentSpec, *, games: int, sprt: Optional[SPRT],
                     time: TimeRule, seed: int, openings: Optional[str], concurrency: Optional[int],
                     sandbox: str, size: int = 8, agent_times: Optional[dict[str, float]] = None) -> Path:
    """Write ``directory/match.toml``, the tournament file of the match; return its path.

    Raises :class:`ValueError` for arguments that do not make a match (an odd
    number of games, a person as a player); the file itself is then checked
    by the tournament file's own rules when the match loads it.
    """
    if games < 2 or games % 2:
        raise ValueError(f"a match plays game pairs: the number of games must be even and at least 2, not {games}")
    a, b = distinct_labels(a, b)
    lines = [
        "# Written by `othello match`: a tournament of one pairing, played by the tournament runner.",
        "# Go on after a stop with: othello match --resume " + shlex.quote(str(directory)),
        "[tournament]",
        f"name = {_toml(f'match {a.label} vs {b.label}')}",
        'format = "round-robin"',
        f"games_per_pairing = {games}",
        'colours = "both"',
        f"seed = {seed}",
        'results = "."',
    ]
    lines += [f"{key} = {_toml(value)}" for key, value in time.file_keys().items()]  # (under a clock maybe no cap)
    if concurrency is not None:
        lines.append(f"concurrency = {concurrency}")
    if openings is not None:
        lines.append(f"openings = {_toml(openings)}")
    lines += ["", "[referee]", f"sandbox = {_toml(sandbox)}"]
    if size != 8:
        lines.append(f"size = {size}")
    lines += ["", "[match]",
              f"sprt = {_toml(_sprt_words(sprt) if sprt is not None else '')}"]
    for spec in (a, b):
        table = _agent_table(spec)
        if agent_times and spec.label in agent_times:  # time odds
            table["time_per_move"] = float(agent_times[spec.label])
        lines += ["", "[[agents]]", *(f"{key} = {_toml(value)}" for key, value in table.items())]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / MATCH_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _agent_table(spec: AgentSpec) -> dict[str, Any]:
    """The ``[[agents]]`` table that starts ``spec`` the way the referee would."""
    if spec.is_manual:
        raise ValueError(f"{spec}: a match is played by programs; a person plays with othello play")
    if spec.kind == BUILTIN:
        return {"name": spec.label, "builtin": spec.file_name}  # (a second copy keeps the file name: its built-in)
    table: dict[str, Any] = {"name": spec.label, "command": shlex.join(spec.command or ())}
    if spec.home is not None:
        table["cwd"] = str(spec.home)
    if spec.file_name != spec.label:
        table["files"] = spec.file_name
    if spec.openings:
        table["openings"] = True
    if len(spec.sizes) > 1:
        table["sizes"] = True
    if spec.reads_clock:
        table["reads_clock"] = True
    return table


def _sprt_words(sprt: SPRT) -> str:
    return f"elo0={sprt.elo0:g} elo1={sprt.elo1:g} alpha={sprt.alpha:g} beta={sprt.beta:g} model={sprt.model}"


def _toml(value: Any) -> str:
    # A JSON string or literal is a TOML basic string or literal too (the same escapes).
    return json.dumps(value, ensure_ascii=False)


def load_match(directory: Path) -> tournament_config.Tournament:
    """The match in ``directory`` (its ``match.toml``); :class:`~.config.TournamentFileError` if there is none."""
    path = Path(directory) / MATCH_FILE
    if not path.is_file():
        raise tournament_config.TournamentFileError(f"{directory}: no match here ({MATCH_FILE} is missing)")
    match = tournament_config.load(path)
    if not match.is_match:
        raise tournament_config.TournamentFileError(f"{path}: not a match (it has no [match] table)")
    return match


# ---------------------------------------------------------------------------
# Playing it
# ---------------------------------------------------------------------------


def run_match(
    directory: Path,
    *,
    concurrency: Optional[int] = None,
    on_pair: Optional[Callable[[MatchState, PairResult], None]] = None,
    on_start: Optional[Callable[[MatchState, Runner], None]] = None,
    log: Callable[[str], None] = lambda line: None,
) -> MatchState:
    """Play (or go on with) the match in ``directory`` until its games are played or its SPRT decides.

    The pairs already stored count first (a resumed match); ``on_start``
    hears the state before any new game, ``on_pair`` each pair as it
    completes.  ``KeyboardInterrupt`` stops it like a tournament: the
    games in flight are voided and replayed by the next run.  Raises
    :class:`~.config.TournamentFileError`, :class:`~.store.StoreError` and
    :class:`~.lock.LockHeldError` as the runner does.
    """
    match = load_match(directory)
    state = new_state(match)
    runner = Runner(match, concurrency=concurrency)
    try:
        runner.prepare()
        schedule = {game.index: game for game in runner.store.scheduled_games()}
        for index in sorted(schedule):
            if index % 2 == 0:
                pair = complete_pair(match, runner.store, schedule, index)
                if pair is not None:
                    state.add(pair)
        if on_start is not None:
            on_start(state, runner)

        def heard(event: ScheduleEvent, runner_: Runner) -> None:
            if event.kind is not ScheduleEventKind.FINISHED:
                return
            if event.outcome is not None and start_errors(event.outcome.record):
                # Every game would be a forfeit of the same agent: stop, and say why (exit code 3).
                state.stopped = "not-started"
                runner_.request_stop()
            pair = complete_pair(match, runner_.store, schedule, event.game.index)
            if pair is None:
                return
            state.add(pair)
            _write_summary(directory, state)
            if on_pair is not None:
                on_pair(state, pair)
            if state.decision is not None:
                runner_.request_stop()

        if state.decision is None and runner.store.unfinished_games():
            runner.prepare_builtins(log)
            runner.on_event = heard
            try:
                runner.run()
            except KeyboardInterrupt:
                state.stopped = "interrupted"
                raise
        state.stopped = _why_stopped(state, runner)
    finally:
        runner.close()
        _write_summary(directory, state)
    return state


def start_errors(record: Optional[dict[str, Any]]) -> list[str]:
    """Why an agent of this game (a record as plain data) could not be started, if one could not."""
    agents = (record or {}).get("agents")
    if not isinstance(agents, dict):
        return []
    return [str(info["start_error"]) for info in agents.values() if isinstance(info, dict) and info.get("start_error")]


def _why_stopped(state: MatchState, runner: Runner) -> str:
    if state.stopped == "not-started":
        return state.stopped
    if state.decision is not None:
        return "sprt"
    if runner.store.unfinished_games():
        return "interrupted"
    return "games" if state.sprt is None else "max-games"


def _write_summary(directory: Path, state: MatchState) -> None:
    (Path(directory) / SUMMARY_FILE).write_text(json.dumps(state.to_dict(), indent=2) + "\n", encoding="utf-8")


__all__ = ["MATCH_FILE", "MatchState", "PairResult", "load_match", "run_match", "start_errors", "write_match_file"]
