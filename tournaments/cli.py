"""``othello tournament``: run, resume, inspect and report a tournament described by a TOML file.

Exit codes: 0 done (or stopped on purpose with ``--max-games``), 1 a problem
with the file, the database or the cluster, 2 a usage error, 130 stopped by
Ctrl-C or SIGTERM (``resume`` finishes it).
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Optional

import click
from rich.console import Console

from .results.state import Progress
from .results.store import StoreError
from .schedule import config
from .schedule.config import Tournament, TournamentFileError

EXIT_INTERRUPTED = 130


def demo_path() -> Path:
    """The demo tournament file shipped with the package."""
    return Path(str(resources.files("othello_arena.tournaments").joinpath("demo.toml")))


def _load(file: Optional[str], demo: bool) -> Tournament:
    if demo and file:
        raise click.UsageError("give a tournament FILE or --demo, not both")
    if not demo and not file:
        raise click.UsageError("missing tournament FILE (or --demo for the built-in demo)")
    try:
        if demo:
            # The packaged file may sit in a read-only site-packages: its
            # results go under the current directory instead.
            return config.load(demo_path(), results_base=Path.cwd() / "results" / "demo")
        assert file is not None
        return config.load(file)
    except TournamentFileError as exc:
        raise click.ClickException(str(exc)) from None


file_argument = click.argument("file", required=False, type=click.Path(dir_okay=False))
demo_option = click.option("--demo", is_flag=True, help="Use the demo tournament shipped with the package.")


@click.group()
def tournament() -> None:
    """Run a tournament between agents: every pairing, standings, ratings, a report.

    FILE is a TOML tournament file (see tournaments/demo.toml). Results go to
    a SQLite database in the file's results directory, written as each game
    finishes, so a run stopped at any moment (Ctrl-C, a crash) is finished by
    `othello tournament resume FILE`.
    """


def _run(tournament_: Tournament, *, resume: bool, concurrency: Optional[int], scheduler: Optional[str],
         scheduler_timeout: float, max_games: Optional[int], build: bool, quiet: bool, fresh: bool = False,
         rerun: Optional[tuple[Optional[str], str]] = None, accept_changed: tuple[str, ...] = (), only: bool = False,
         flagged: bool = False) -> None:
    """``run``, ``resume`` and ``rerun``: take the tournament, say what changed, play, print the standings."""
    console = Console(stderr=False, highlight=False)
    runner = _take(tournament_, resume=resume or bool(rerun), rerun=bool(rerun), concurrency=concurrency,
                   scheduler=scheduler, scheduler_timeout=scheduler_timeout, max_games=max_games, build=build,
                   fresh=fresh, only=rerun[0] if rerun and only else None)
    runner.rebuild = (rerun[0],) if rerun and rerun[0] and not flagged else ()
    try:
        try:
            runner.prepare()
            replayed = runner.rerun(rerun[0], rerun[1], flagged=flagged) if rerun else []
            # After the rerun: its agent's old games are out of the way, so only the others can mix versions.
            accepted = runner.check_versions(accept_changed)
        except (TournamentFileError, StoreError) as exc:
            raise click.ClickException(str(exc)) from None
        _say_what_changed(runner, console, rerun, replayed, flagged)
        for agent in accepted:
            console.print(f"{agent.describe()}: accepted (--accept-changed); its next games are played by the new "
                          "version, its earlier games stay.")
        counts = runner.progress()
        total = counts.scheduled
        if not resume and not rerun and counts.finished:
            console.print(f"{tournament_.name}: {counts.finished} of {total} games already played; resuming.")
        if counts.finished == total:
            console.print(f"{tournament_.name}: all {total} games are played.")
        else:
            _play(runner, console, counts, resume=resume, rerun=rerun, concurrency=concurrency, scheduler=scheduler,
                  build=build, quiet=quiet)
        _finish(runner, console)
    finally:
        runner.close()


def _take(tournament_: Tournament, *, resume: bool, rerun: bool, concurrency: Optional[int],
          scheduler: Optional[str], scheduler_timeout: float, max_games: Optional[int], build: bool,
          fresh: bool, only: Optional[str] = None) -> Any:
    """The tournament's runner, holding its lock; a click error if there is nothing to resume or another runner has it."""
    from .results.lock import LockHeldError
    from .run.runner import Runner

    if tournament_.is_match:
        # Its runner must stop when the SPRT decides, and count pairs: that is othello match's job.
        raise click.ClickException(f"{tournament_.path} is a match written by othello match ([match]); go on with it "
                                   f"with: othello match --resume {tournament_.path.parent}")
    if resume and not tournament_.database.exists():
        raise click.ClickException(
            f"nothing to {'rerun' if rerun else 'resume'}: {tournament_.database} does not exist; "
            "start with `othello tournament run`"
        )
    try:
        # Takes the tournament's lock first: a second runner stops here, before touching anything.
        return Runner(tournament_, concurrency=concurrency, scheduler=scheduler,
                      scheduler_timeout=scheduler_timeout, max_games=max_games, build=build, fresh=fresh, only=only)
    except (StoreError, LockHeldError) as exc:
        raise click.ClickException(f"{tournament_.path}: {exc}") from None


def _say_what_changed(runner: Any, console: Console, rerun: Optional[tuple[Optional[str], str]], replayed: list[str],
                      flagged: bool = False) -> None:
    """What ``prepare`` found and did: orphans ended, games voided, agents withdrawn or added, a rerun queued."""
    if runner.orphans_killed:
        console.print(f"Ended {runner.orphans_killed} agent process(es) left by a runner that was killed.")
    if runner.voided_at_start:
        console.print(f"{len(runner.voided_at_start)} game(s) were in flight when the last runner stopped: "
                      f"voided (kept in the database) and replayed: {', '.join(runner.voided_at_start)}")
    for name, reason in runner.withdrawn.items():
        console.print(f"{name} is withdrawn ({reason}): its games are out of the standings and not played.")
    if runner.added:
        added = {game.key for game in runner.added}
        before = {n for g in runner.store.scheduled_games() if g.key not in added for n in (g.white, g.black)}
        newcomers = sorted({n for g in runner.added for n in (g.white, g.black)} - before)
        console.print(f"{len(runner.added)} new game(s) scheduled in round {runner.added[0].round}"
                      + (f" for {', '.join(newcomers)}" if newcomers else "")
                      + "; every other game keeps its seed and colours.")
    if rerun:
        what = (f"the flagged timeouts{' of ' + rerun[0] if rerun[0] else ''}" if flagged else rerun[0])
        console.print(f"Rerun of {what}: {len(replayed)} finished game(s) queued again with the same seeds "
                      "and colours; the old results are kept in the database (table replaced), out of the standings.")


def _play(runner: Any, console: Console, counts: Progress, *, resume: bool, rerun: Optional[tuple[Optional[str], str]],
          concurrency: Optional[int], scheduler: Optional[str], build: bool, quiet: bool) -> None:
    """Build what needs building, then play the unfinished games with a live table (or a line per game)."""
    from ..referee.process import sigterm_as_interrupt
    from .run.display import LineDisplay, LiveDisplay
    from .run.pools import RunnerError

    tournament_ = runner.tournament
    total = counts.scheduled
    where = f"on {scheduler}" if scheduler else "on this machine"
    console.print(
        f"{tournament_.name}: {tournament_.format}, {len(tournament_.agents) - len(runner.withdrawn)} agents, "
        f"{total} games, {tournament_.time_text}, {where}; results in {tournament_.database}"
    )
    _say_limits(runner, console)
    console.print(runner.cpu_line())  # how the games at once are kept apart: each on its own cores, or (loudly) not
    runner.prepare_builtins(console.print)  # on resume too: the cache may be new since
    if build:
        # resume builds only the agents whose build never finished (the runner died during it),
        # and agents new to the file; a rerun rebuilds its agent.
        runner.build_agents(console.print, only_missing=resume or bool(rerun), also=runner.rebuild)
    live = console.is_terminal and not quiet
    display: Any = LiveDisplay(console, total, counts.finished) if live else LineDisplay(console, total)
    try:
        with sigterm_as_interrupt(), display:
            runner.on_event = display
            runner.run()
    except KeyboardInterrupt:
        _refresh_report(tournament_, console)
        console.print(
            f"\nStopped: {runner.progress().finished} of {total} games are stored. "
            f"Finish with: othello tournament resume {tournament_.path}"
        )
        sys.exit(EXIT_INTERRUPTED)
    except RunnerError as exc:
        raise click.ClickException(str(exc)) from None


def _say_limits(runner: Any, console: Console) -> None:
    """Each limit of the agents and how it holds here (othello doctor's lines), a WARNING where it does not."""
    from ..referee.limits import limit_lines
    from ..referee.sandbox import probe

    config = runner.config
    for line in limit_lines(config, probe() if config.sandbox == "bwrap" else None):
        console.print(line.text(), markup=False, style=None if line.enforced else "bold red")


def _finish(runner: Any, console: Console) -> None:
    """The standings, the report refreshed, and what is left to do (games without a result, games to play)."""
    from .run.display import standings_table
    from .results.standings import format_table

    tournament_ = runner.tournament
    standings = runner.standings()
    counts = runner.progress()
    finished, total = counts.finished, counts.scheduled
    if console.is_terminal:
        console.print(standings_table(standings, limit=len(standings.lines), title="Standings"))
    else:
        click.echo(format_table(standings))
    _refresh_report(tournament_, console)
    if runner.failed:
        raise click.ClickException(
            f"{len(runner.failed)} game(s) have no result: {runner.failed[0][0]}: {runner.failed[0][1]}. "
            f"Their attempts are voided (kept, see `othello tournament status`); "
            f"`othello tournament resume {tournament_.path}` plays them again"
        )
    if finished < total:
        console.print(f"{finished} of {total} games played. Finish with: othello tournament resume {tournament_.path}")
    else:
        console.print(f"Done: {total} games. Report: {tournament_.results_dir / 'report' / 'index.html'}")


def _refresh_report(tournament_: Tournament, console: Console) -> None:
    """Write the report at the end of every run, so the instructor always reads the latest (never fatal)."""
    from .results.report import public_report_dir, write_report

    try:
        write_report(tournament_, public_report_dir(tournament_))
    except Exception as exc:  # noqa: BLE001 - the results are safe in the database; say so and go on
        console.print(f"The report could not be written ({type(exc).__name__}: {exc}); "
                      f"`othello tournament report {tournament_.path}` tries again.")


def _run_options(function: Any) -> Any:
    options = [
        click.option("-j", "--concurrency", type=click.IntRange(1),
                     help="Games at once (default: from the file, else one per core with one core spare)."),
        click.option("--scheduler", metavar="tcp://HOST:8786", help="Run the games on this Dask cluster."),
        click.option("--scheduler-timeout", type=click.FloatRange(min=0.1), default=20.0, show_default=True,
                     help="Seconds to wait for the Dask scheduler to answer."),
        click.option("--max-games", type=click.IntRange(1), help="Stop after this many games (resume plays the rest)."),
        click.option("-q", "--quiet", is_flag=True, help="One line per game, no live table."),
        click.option("--accept-changed", "accept_changed", multiple=True, metavar="NAME|all",
                     help="Play on although NAME's submission changed since its earlier games (mixing its "
                          "versions in the standings); repeatable; all: every agent."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


@tournament.command()
@file_argument
@demo_option
@_run_options
@click.option("--no-build", is_flag=True, help="Skip the agents' build commands.")
@click.option("--fresh", is_flag=True, help="Delete earlier results of this tournament and start over.")
def run(file: Optional[str], demo: bool, concurrency: Optional[int], scheduler: Optional[str],
        scheduler_timeout: float, max_games: Optional[int], quiet: bool, accept_changed: tuple[str, ...],
        no_build: bool, fresh: bool) -> None:
    """Run the tournament in FILE (continuing it if it was started before).

    An agent whose submission changed since its earlier games is named and
    the run refused (see rerun and --accept-changed): versions are not mixed.
    """
    tournament_ = _load(file, demo)
    _run(tournament_, resume=False, concurrency=concurrency, scheduler=scheduler,
         scheduler_timeout=scheduler_timeout, max_games=max_games, build=not no_build, quiet=quiet, fresh=fresh,
         accept_changed=accept_changed)


@tournament.command()
@file_argument
@demo_option
@_run_options
def resume(file: Optional[str], demo: bool, concurrency: Optional[int], scheduler: Optional[str],
           scheduler_timeout: float, max_games: Optional[int], quiet: bool, accept_changed: tuple[str, ...]) -> None:
    """Finish a tournament that was stopped: finished games are kept, unfinished ones replayed.

    An agent whose submission changed since its earlier games is named and
    the resume refused: `rerun FILE NAME` replays its games with the new
    version, --accept-changed NAME plays on with both.
    """
    _run(_load(file, demo), resume=True, concurrency=concurrency, scheduler=scheduler,
         scheduler_timeout=scheduler_timeout, max_games=max_games, build=True, quiet=quiet,
         accept_changed=accept_changed)


@tournament.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("agent", required=False)
@_run_options
@click.option("--reason", default=None, help="Why, kept with the replaced results (default: resubmitted; "
                                             "with --flagged: timeout under load).")
@click.option("--only", is_flag=True, help="Play only AGENT's games; other unplayed games wait for resume.")
@click.option("--flagged", is_flag=True, help="Replay only the timeouts flagged as caused by load (AGENT's, or "
                                              "everyone's without AGENT); nothing is rebuilt.")
def rerun(file: str, agent: Optional[str], concurrency: Optional[int], scheduler: Optional[str],
          scheduler_timeout: float, max_games: Optional[int], quiet: bool, accept_changed: tuple[str, ...],
          reason: Optional[str], only: bool, flagged: bool) -> None:
    """After AGENT is resubmitted: rebuild it and replay its games (same seeds and colours).

    Its old results stay in the database (table replaced, files under
    games/replaced/) and leave the standings; nobody else is rebuilt and no
    other finished game is replayed. Like resume, it then plays every
    unfinished game of the tournament, AGENT's and everyone else's not yet
    played; with --only, AGENT's games alone. With --flagged, only the
    games lost by a timeout flagged "under load?" are replayed.
    """
    if agent is None and not flagged:
        raise click.UsageError("give the AGENT to rerun, or --flagged (every flagged timeout)")
    if only and agent is None:
        raise click.UsageError("--only needs an AGENT")
    why = reason or ("timeout under load?" if flagged else "resubmitted")
    _run(_load(file, False), resume=False, concurrency=concurrency, scheduler=scheduler,
         scheduler_timeout=scheduler_timeout, max_games=max_games, build=True, quiet=quiet,
         rerun=(agent, why), accept_changed=accept_changed, only=only, flagged=flagged)


@tournament.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("agent")
@click.option("--reason", required=True, help="Why (shown in status and the report).")
def withdraw(file: str, agent: str, reason: str) -> None:
    """Withdraw AGENT: its games leave the standings (kept in the database) and its unplayed games are dropped.

    Takes the tournament's lock: stop a runner first. The same as
    withdraw = true (and withdraw_reason) on the agent in the file.
    """
    from .results.lock import LockHeldError
    from .run.runner import Runner

    tournament_ = _load(file, False)
    if not tournament_.database.exists():
        raise click.ClickException(f"{tournament_.database} does not exist: nothing is played yet; "
                                   "remove the agent from the file instead")
    try:
        runner = Runner(tournament_)
    except (StoreError, LockHeldError) as exc:
        raise click.ClickException(f"{tournament_.path}: {exc}; stop the runner, then withdraw") from None
    try:
        try:
            runner.store.bind(tournament_.schedule_basis(), tournament_.to_dict(),
                              legacy_key=tournament_.legacy_schedule_key)
            runner.withdraw(agent, reason)
        except (TournamentFileError, StoreError) as exc:
            raise click.ClickException(str(exc)) from None
        counts = runner.progress()
    finally:
        runner.close()
    _refresh_report(tournament_, Console(highlight=False))
    click.echo(f"{agent} is withdrawn ({reason}): {counts.excluded} of its games are out of the standings "
               f"(kept in the database); {counts.finished} of {counts.scheduled} games played.")


@tournament.command()
@file_argument
@demo_option
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Directory for the files (default: RESULTS/export).")
def export(file: Optional[str], demo: bool, fmt: str, output: Optional[str]) -> None:
    """Export the games, standings and crosstable for a spreadsheet (CSV) or a script (JSON).

    CSV writes games.csv, standings.csv and crosstable.csv; JSON writes one
    tournament.json. Reads only: safe while a runner plays.
    """
    from .results.export import export as write_export

    tournament_ = _load(file, demo)
    target = Path(output) if output else tournament_.results_dir / "export"
    try:
        paths = write_export(tournament_, target, fmt)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    for path in paths:
        click.echo(str(path))


@tournament.command()
@file_argument
@demo_option
@click.option("--json", "as_json", is_flag=True, help="Print the state as JSON for scripts.")
def status(file: Optional[str], demo: bool, as_json: bool) -> None:
    """How far the tournament is, and the standings so far."""
    from .results.standings import format_crosstable, format_table
    from .results.state import read_state, status_json

    tournament_ = _load(file, demo)
    try:
        state = read_state(tournament_, must_exist=not as_json)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(status_json(state), indent=2))
        return
    rounds = state.progress.rounds
    if tournament_.format == "swiss":
        round_text = f"rounds: {rounds.complete} of {rounds.total} complete, {rounds.paired} paired"
    else:
        round_text = f"rounds: {rounds.complete} of {rounds.total} complete"
    if state.match is not None:  # a match says what its SPRT decided, not rounds and games it never needed
        click.echo(f"{state.name}: {state.progress_text()}.")
    else:
        click.echo(f"{state.name}: {state.progress.finished} of {state.progress.scheduled} games finished"
                   + (f", {state.running} running" if state.running else "")
                   + f"; {round_text}.")
    if state.progress.to_add:
        click.echo(f"The file adds {state.progress.to_add} game(s) (new agents' pairings): `othello tournament run "
                   f"{tournament_.path}` schedules and plays them.")
    for withdrawal in state.withdrawn:
        click.echo(f"withdrawn: {withdrawal.agent} ({withdrawal.reason}): its {withdrawal.games} game(s) are out of the "
                   "standings and the counts (kept in the database).")
    if state.replaced:
        click.echo(f"Replaced by reruns: {len(state.replaced)} result(s), kept in the database (table replaced).")
    if state.runner:
        click.echo(f"A runner is playing it: pid {state.runner.get('pid')} on {state.runner.get('host')}.")
    elif state.interrupted:
        click.echo(f"No runner is playing it; {state.interrupted} game(s) were in flight when the last runner "
                   f"stopped (resume voids and replays them): othello tournament resume {tournament_.path}")
    if state.match is not None:  # a match: its own figures over pairs, as othello match prints them
        click.echo(f"{state.match.a} vs {state.match.b}: {state.match.progress_line()}")
        click.echo(state.match.verdict())
    # A match: its own Elo over pairs in the table, as on its pages, not a pool rating.
    click.echo(format_table(state.standings, elo=None if state.match is None else
                            {name: state.match.elo_text(name) for name in tournament_.agent_names}))
    click.echo("")
    click.echo(format_crosstable(state.standings))
    if state.unsandboxed:
        click.echo(f"warning: {len(state.unsandboxed)} game(s) were played without the sandbox (sandbox = \"none\"): "
                   "their agents could reach each other and the results.")
    for flagged in state.flagged:
        click.echo(f"flagged: {flagged.game} ({flagged.white} vs {flagged.black}): {flagged.describe()}")
    for name, build in sorted(state.builds.items()):
        if not build.ok:
            click.echo(f"build of {name}: {build.status} ({build.detail}); its games are forfeits "
                       f"(reason build); log: {build.log}")
    if state.voided:
        click.echo(f"Voided attempts: {state.voided_attempts} (games in flight when a runner stopped, or "
                   "whose record could not be kept; each replayed with the same seed and colours):")
    for game in state.voided:
        mark = "FLAGGED " if game.flagged else ""
        click.echo(f"  {mark}{game.game} ({game.white} vs {game.black}): voided {game.voided} time(s), "
                   f"now {game.status.value}" + (f" - voided again and again: check these agents" if mark else ""))
        for attempt in game.attempts:
            click.echo(f"    attempt {attempt.attempt}: {attempt.why}")


@tournament.command()
@file_argument
@demo_option
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Directory for the report (default: RESULTS/report; with --with-logs: RESULTS/report-with-logs).")
@click.option("--with-logs", is_flag=True,
              help="The instructor's own copy: the end of each forfeit's stderr and links to the agents' stderr "
                   "and build logs. Never published: not into RESULTS/report, which othello serve shows to everybody.")
def report(file: Optional[str], demo: bool, output: Optional[str], with_logs: bool) -> None:
    """Write a static HTML report: standings, crosstable, ratings, every game replayable.

    The report holds no agent's stderr, build log or source (it is made to be
    published to the class) unless --with-logs asks for the instructor's copy.
    """
    from .results.report import public_report_dir, write_report

    tournament_ = _load(file, demo)
    default = tournament_.results_dir / "report-with-logs" if with_logs else public_report_dir(tournament_)
    target = Path(output) if output else default
    try:
        index = write_report(tournament_, target, with_logs=with_logs)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--output") from None
    click.echo(f"Report: {index}")


@tournament.command()
@file_argument
@demo_option
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON for scripts.")
def verify(file: Optional[str], demo: bool, as_json: bool) -> None:
    """Check every stored game against its game.json and the rules; exit 1 naming each game that fails.

    The record stored with each result must match its SHA-256, game.json
    must be that record byte for byte, and the record must replay under the
    rules to the winner, reason and discs the standings use. Reads only: safe
    while a runner plays.
    """
    from .results.verify import as_json as verification_json
    from .results.verify import report_lines
    from .results.verify import verify as verify_games

    tournament_ = _load(file, demo)
    try:
        result = verify_games(tournament_)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(verification_json(result))
    else:
        for line in report_lines(result):
            click.echo(line)
    if not result.ok:
        sys.exit(1)


def _has_games(tournament_: Tournament) -> bool:
    """Whether the tournament's database holds a game (``check-agents`` alone stores only its checks)."""
    from .results.store import Store

    if not tournament_.database.exists():
        return False
    try:
        with Store(tournament_.database, create=False) as store:
            return next(store.game_rows(), None) is not None
    except Exception:  # noqa: BLE001 - an unreadable database is said by the commands that read it
        return True


def _print_estimate(tournament_: Tournament, concurrency: int) -> None:
    """How long the games should take (worst case, and typical from earlier games' move times)."""
    from .results.estimate import estimate
    from .results.store import Store

    store = None
    if tournament_.database.exists():
        try:
            store = Store(tournament_.database, create=False)
        except Exception:  # noqa: BLE001 - an unreadable database: the worst case still stands
            store = None
    try:
        for line in estimate(tournament_, concurrency, store).lines():
            click.echo(line)
    finally:
        if store is not None:
            store.close()


@tournament.command("check-agents")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Folder of the cards, one NAME.txt per agent (default: RESULTS/check-agents).")
@click.option("--attempts", type=click.IntRange(min=0), default=8, show_default=True,
              help="Extra games steered towards a pass, as for othello check.")
def check_agents(file: str, out_dir: Optional[str], attempts: int) -> None:
    """Build every agent of FILE as the runner would (sandboxed) and check each follows the protocol.

    Writes one card per agent (DIR/NAME.txt), to forward to its student as
    it is: the build log when the build failed, else the report of
    `othello check`. Prints a summary; exit code 1 if any agent fails, 3 if
    none does but the check could not tell for one (the machine too busy to
    time it: its card says so, with the figures).
    """
    from ..referee.sandbox import SandboxUnavailable
    from .run.roster import check_agents as check_all

    tournament_ = _load(file, False)
    target = Path(out_dir) if out_dir else tournament_.results_dir / "check-agents"
    try:
        cards = check_all(tournament_, target, attempts=attempts, log=lambda line: click.echo(f"... {line}", err=True))
    except (SandboxUnavailable, OSError, ValueError) as exc:
        raise click.ClickException(f"{tournament_.path}: {exc}") from None
    width = max(len(card.agent) for card in cards) if cards else 5
    click.echo(f"{'agent':<{width}}  {'verdict':<14} card")
    for card in cards:
        click.echo(f"{card.agent:<{width}}  {card.verdict:<14} {target / (card.agent + '.txt')}")
    unsure = [card.agent for card in cards if card.verdict == "could not tell"]
    failed = [card.agent for card in cards if card.verdict not in ("passed", "could not tell")]
    click.echo(f"{len(cards) - len(failed) - len(unsure)} of {len(cards)} agents passed"
               + (f"; failed: {', '.join(failed)}" if failed else "")
               + (f"; could not tell (the machine was too busy to time them: check again on a quieter machine): "
                  f"{', '.join(unsure)}" if unsure else ""))
    sys.exit(1 if failed else 3 if unsure else 0)


@tournament.command()
@file_argument
@demo_option
def check(file: Optional[str], demo: bool) -> None:
    """Check the tournament file and print the schedule it gives and how long it should take, without playing."""
    from ..agents import registry
    from .schedule import pairing
    from .run.pools import default_concurrency
    from .run.jobs import game_config
    from .results.state import planned_games

    tournament_ = _load(file, demo)
    try:
        config.check_builtins(tournament_, registry.names(), registry.sizes_of)
        game_config(tournament_)
    except TournamentFileError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{tournament_.name}: {tournament_.format}, {planned_games(tournament_, tournament_.withdrawn)} games, "
               f"{pairing.total_rounds(tournament_)} rounds, {tournament_.games_per_pairing} per pairing, "
               f"colours {tournament_.colours}, seed {tournament_.seed}, "
               f"concurrency {tournament_.concurrency or default_concurrency()}")
    for agent in tournament_.agents:
        click.echo(f"  {agent.name}: {agent.describe()}" + (f" (in {agent.cwd})" if agent.cwd else "")
                   + (f" (files {agent.files}.in / {agent.files}.out)" if agent.files else "")
                   + (f" ({agent.time_per_move:g} s a move of its own)" if agent.time_per_move else "")
                   + (f" WITHDRAWN: {tournament_.withdrawn[agent.name]}" if agent.withdraw else ""))
    _print_estimate(tournament_, tournament_.concurrency or default_concurrency())
    if _has_games(tournament_):
        click.echo(f"A database exists ({tournament_.database}): `othello tournament status` shows what is played; "
                   "the schedule below is the file's for a fresh start (games already stored keep theirs).")
    schedule = pairing.fixed_schedule(tournament_, tournament_.withdrawn)
    if schedule is None:
        click.echo("Swiss: each round is paired when the previous one is finished.")
    else:
        for game in schedule:
            click.echo(f"  {game.key}: {game.white} (W) vs {game.black} (B)")
