"""``othello match A B``: is A better than B?  Game pairs, a fixed number or until an SPRT decides."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Optional

import click

from ...agents.registry import builtin_agents
from ...protocol import BOARD_SIZES, GameRecord, IllegalMoveError, ParseError
from ...protocol.openings import BALANCED, format_opening, read_openings, suite_path
from ...referee import AgentSpec, GameConfig, check_opening, distinct_labels
from ...referee.cli import parse_agent_times, time_option
from ...referee.clock import PLAY_SECONDS
from ...referee.config import SANDBOXES
from ...referee.display import fault_lines, summary
from ...referee.process import sigterm_as_interrupt
from ...referee.sandbox import SandboxUnavailable
from ...referee.time_use import time_use
from ..results.lock import LockHeldError
from ..results.state import read_state
from ..results.store import StoreError
from ..run.runner import Runner
from ..schedule.config import MAX_GAMES_PER_PAIRING, TournamentFileError
from ..stats import SPRT
from .match import MATCH_FILE, MatchState, PairResult, load_match, run_match, write_match_file

SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model")
EXIT_NOT_STARTED = 3
EXIT_NO_SANDBOX = 4
EXIT_INTERRUPTED = 130


def _split(words: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Agents and SPRT parameters (``elo0=0`` ...) from the positional words, in any order."""
    agents: list[str] = []
    params: list[str] = []
    for word in words:
        key = word.split("=", 1)[0].strip().lower()
        (params if "=" in word and key in SPRT_KEYS else agents).append(word)
    return agents, params


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("words", nargs=-1, required=False, metavar="A B [SPRT PARAMETERS]")
@click.option("--games", type=click.IntRange(min=2), default=None,
              help="Play this many games (an even number: game pairs).")
@click.option("--sprt", "use_sprt", is_flag=True,
              help="Play until the SPRT decides; parameters follow as words: elo0=0 elo1=10 alpha=0.05 beta=0.05 "
                   "[model=normalized|logistic] (these are the defaults).")
@click.option("--max-games", type=click.IntRange(min=2, max=MAX_GAMES_PER_PAIRING), default=1000, show_default=True,
              help="With --sprt: stop undecided after this many games.")
@click.option("--openings", "openings_file", default=None, metavar="FILE|balanced",
              help="Opening suite: a file of one opening a line (PROTOCOL.md section 8), or the balanced suite "
                   "shipped with the package; each pair plays one, drawn by --seed without repeats.  Without it "
                   "every game starts from the start position.")
@click.option("--time", "time_per_move", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds of wall-clock time per move [default: 60; with --clock: no cap per move].")
@click.option("--clock", "clock", metavar="BASE+INC", default=None,
              help="A game clock: a bank of BASE seconds for each agent, INC more after each of its moves "
                   "(e.g. 10+0.1 for fast testing); --time then caps a single move.")
@click.option("--time-for", "time_for", multiple=True, metavar="NAME=SECONDS",
              help="Time odds: this agent's own seconds per move (the other keeps --time); repeatable.")
@click.option("--seed", type=int, default=None, help="Seed of the opening draw and the colours (default: a random "
              "one, printed).")
@click.option("-j", "--concurrency", type=click.IntRange(1), default=None,
              help="Games at once (default: one per core with one core spare).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Match directory: match.toml, the database, games/ and match.json "
                   "(default: matches/<time>-A-B).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Go on with the match in this directory (after Ctrl-C, a crash or a reboot): the games in "
                   "flight are replayed, the others kept.")
@click.option("--sandbox", type=click.Choice(SANDBOXES), default=GameConfig.sandbox, show_default=True,
              help="Run each agent in its own bubblewrap sandbox, or (none) as yourself.")
@click.option("--size", "size", type=click.Choice([str(n) for n in BOARD_SIZES]), default="8", show_default=True,
              help="The board's size (seed 002's 8, 10, 12, 14; PROTOCOL.md section 9).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final figures.")
@click.option("--verbose", "-v", is_flag=True,
              help="Every figure after each pair: pentanomial counts, Elo and nElo with intervals, the LLR and "
                   "the SPRT's parameters (match.json has them too).")
def match(words: tuple[str, ...], games: Optional[int], use_sprt: bool, max_games: int,
          openings_file: Optional[str], time_per_move: Optional[float], clock: Optional[str],
          time_for: tuple[str, ...], seed: Optional[int], concurrency: Optional[int], out_dir: Optional[Path], resume_dir: Optional[Path], sandbox: str, size: str,
          quiet: bool, verbose: bool) -> None:
    """Play A against B in game pairs (each opening twice, colours swapped) and say which is better.

    Either a fixed number of games (--games 100) or until a sequential test
    decides (--sprt elo0=0 elo1=10 alpha=0.05 beta=0.05): H1 means A is
    better by about elo1, H0 that it is not better than elo0.  After each
    pair it prints A's W-D-L, Elo with a 95% interval computed over pairs
    and with --sprt the LLR between its two bounds; at the end a verdict in
    words and each agent's time use.  --verbose adds the pentanomial counts
    of pairs (A's pair score 0, 0.5, 1, 1.5, 2: LL LD DD/WL WD WW), nElo and
    the SPRT's parameters.

    The match runs on the tournament runner (games in parallel with -j, each
    result stored in SQLite as it comes): its directory holds match.toml, a
    tournament file (othello tournament status/report read it), and
    othello match --resume DIR goes on after a stop.  Exit 0 when the match
    is played, 2 on a bad command line, 3 if an agent could not start, 4
    without the sandbox, 130 when interrupted.
    """
    if resume_dir is not None:
        if (words or games is not None or use_sprt or openings_file or seed is not None or out_dir is not None
                or size != "8" or time_for or clock is not None or time_per_move is not None):
            raise click.UsageError("--resume DIR goes on with the match as it was started: give no agents, "
                                   "--games, --sprt, --openings, --seed, --size, --time, --clock, --time-for or --out with it "
                                   "(only -j and -q)")
        directory = resume_dir
    else:
        directory = _start(words, games, use_sprt, max_games, openings_file, time_per_move, seed, concurrency,
                           out_dir, sandbox, quiet, int(size), time_for, clock)
    _play(directory, concurrency, quiet, verbose)


def _start(words: tuple[str, ...], games: Optional[int], use_sprt: bool, max_games: int,
           openings_file: Optional[str], time_per_move: Optional[float], seed: Optional[int],
           concurrency: Optional[int], out_dir: Optional[Path], sandbox: str, quiet: bool, size: int = 8,
           time_for: tuple[str, ...] = (), clock: Optional[str] = None) -> Path:
    """Check the command line and write the match's file; return its directory."""
    rule = time_option(time_per_move, clock, PLAY_SECONDS)
    agents, params = _split(words)
    if len(agents) != 2:
        raise click.UsageError(f"expected two agents A and B, got {len(agents)}: {' '.join(agents) or 'none'}")
    if params and not use_sprt:
        raise click.UsageError(f"SPRT parameters ({' '.join(params)}) need --sprt")
    if use_sprt == (games is not None):
        raise click.UsageError("give --games N or --sprt (with its parameters), one of them")
    try:
        builtins = builtin_agents()
        a, b = (AgentSpec.parse(text, builtins=builtins).versioned() for text in agents)
        sprt = SPRT.parse(params) if use_sprt else None
        check_opening(*distinct_labels(a, b), [], size)  # both must play the board's size
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    agent_times = dict(parse_agent_times(time_for, [spec.label for spec in distinct_labels(a, b)]))
    openings: Optional[str] = None
    if openings_file is not None:
        path = suite_path(openings_file)
        try:
            suite = read_openings(path)
        except (ParseError, IllegalMoveError) as exc:
            raise click.UsageError(str(exc)) from None
        except OSError as exc:
            raise click.UsageError(f"cannot read the openings {openings_file}: {exc}") from None
        if not suite:
            raise click.UsageError(f"the opening suite {openings_file} is empty")
        try:
            check_opening(*distinct_labels(a, b), suite[0], size)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        openings = BALANCED if openings_file.strip().lower() == BALANCED else str(path.resolve())
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    if out_dir is None:
        out_dir = Path("matches") / f"{time.strftime('%Y%m%d-%H%M%S')}-{a.file_name}-{b.file_name}"
    if (out_dir / MATCH_FILE).exists():
        raise click.UsageError(f"{out_dir} holds a match already: go on with it with --resume {out_dir}, "
                               "or give another --out")
    try:
        write_match_file(out_dir, a, b, games=games if games is not None else max_games, sprt=sprt,
                         time=rule, seed=seed, openings=openings, concurrency=concurrency,
                         sandbox=sandbox, size=size, agent_times=agent_times)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if not quiet:
        what = f"{games} games" if games is not None else f"until the SPRT decides (at most {max_games} games)"
        suite_text = f"openings from {openings_file}" if openings_file else "no openings"
        click.echo(f"{a.label} vs {b.label}: {what}, {suite_text}, seed {seed}, "
                   f"{rule.text_with_odds(agent_times.items())}; "
                   f"files in {out_dir}")
        if openings is None:
            click.echo("note: without --openings every game starts from the start position; "
                       "deterministic agents then repeat the same games", err=True)
    return out_dir


def _require_sandbox(directory: Path) -> None:
    """Stop before the first game, with the sandbox's own message, if the match's agents need bwrap and it is not there."""
    from ...referee.sandbox import require

    if load_match(directory).referee.get("sandbox", GameConfig.sandbox) == "bwrap":
        require()


def match_records(directory: Path) -> list[GameRecord]:
    """The records of the match's games that are finished (a game in flight or damaged is left out: the database has its result)."""
    records = []
    for path in sorted((directory / "games").glob("*/game.json")):
        try:
            records.append(GameRecord.load(str(path)))
        except (OSError, ParseError):
            continue
    return records


def _closing_lines(directory: Path, state: MatchState) -> list[str]:
    """What the verdict rests on, above it: why a decided match played no more games, and the timeouts that
    may be the machine's fault rather than an agent's (flagged by the runner: they count in the figures above)."""
    played = read_state(load_match(directory))
    lines = [played.progress_text()] if state.decision is not None else []
    if played.flagged:
        games = len(played.flagged)
        lines.append(f"{games} game(s) of {played.progress.finished} ended by a timeout that may be the machine's "
                     "load rather than the agent's: they count in the figures above; on a quieter machine, or with "
                     "fewer games at once (-j), a new match would tell")
        lines.extend(f"  {item.game}: {item.describe()}" for item in played.flagged[:5])
        if games > 5:
            lines.append(f"  ... and {games - 5} more (othello tournament status {directory / MATCH_FILE} lists them)")
    return lines


def _play(directory: Path, concurrency: Optional[int], quiet: bool, verbose: bool = False) -> None:
    """Play the match in ``directory`` on the runner, printing each pair; exit with the match's code."""

    def figures(state: MatchState) -> str:
        return " | ".join(state.lines()) if verbose else state.progress_line()

    def started(state: MatchState, runner: Runner) -> None:
        click.echo(runner.cpu_line())  # how the games at once are kept apart (loudly when they share cores)
        if runner.voided_at_start:
            click.echo(f"{len(runner.voided_at_start)} game(s) were in flight when the match stopped: voided "
                       f"(kept in the database) and replayed: {', '.join(runner.voided_at_start)}")
        if state.pairs and not quiet:
            click.echo(f"{len(state.pairs)} pair(s) already played: {figures(state)}")

    def show(state: MatchState, pair: PairResult) -> None:
        if quiet:
            return
        opening = format_opening(pair.opening) or "start position"
        first, second = pair.points
        click.echo(f"pair {pair.number} ({opening}): {state.a} {first:g} + {second:g} | {figures(state)}")
        for game in pair.games:  # a crash or a fault: where, its output, the known hints
            game_dir = Path(directory) / game
            try:
                record = GameRecord.load(str(game_dir / "game.json"))
            except (OSError, ParseError):
                continue
            lines = fault_lines(record, game_dir)
            if lines:
                click.echo(f"  {game}: {summary(record)}")
                click.echo("\n".join(f"    {line}" for line in lines))

    try:
        _require_sandbox(directory)
        with sigterm_as_interrupt():
            state = run_match(directory, concurrency=concurrency, on_pair=show, on_start=started,
                              log=lambda line: click.echo(line, err=True))
    except (TournamentFileError, StoreError, LockHeldError) as exc:
        raise click.UsageError(str(exc)) from None
    except SandboxUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_NO_SANDBOX)
    except KeyboardInterrupt:
        click.echo(f"interrupted: the games in flight are voided; go on with: othello match --resume {directory}",
                   err=True)
        sys.exit(EXIT_INTERRUPTED)
    click.echo(f"final: {state.a} vs {state.b}: " + " | ".join(state.lines()))
    for use in sorted(time_use(match_records(directory)), key=lambda use: use.agent != state.a):  # A first
        click.echo(f"time: {use.line()}")
    for line in _closing_lines(directory, state):
        click.echo(line)
    click.echo(state.verdict())
    if state.stopped == "not-started":
        click.echo(f"error: an agent could not be started (see the game.json files under {directory / 'games'}); "
                   "fix it and start a new match", err=True)
        sys.exit(EXIT_NOT_STARTED)
