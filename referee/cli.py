"""``othello play A B``: one game between two agents, shown move by move."""

from __future__ import annotations

import json
import math
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import click

from .clock import PLAY_SECONDS, TimeRule, parse_clock, time_rule
from .config import ILLEGAL_RULES, MAX_MOVE_PAUSE, SANDBOXES, GameConfig
from .display import Display, fault_lines, side_by_side, summary
from .time_use import time_use
from ..protocol import BLACK, BOARD_SIZES, DEFAULT_SIZE, WHITE, GameRecord, IllegalMoveError, Move, ParseError
from ..protocol.openings import format_opening, parse_opening, read_openings, suite_path
from .game import check_opening, play_game
from .game_pair import draw_openings, play_pair
from .process import sigterm_as_interrupt
from .sandbox import SandboxUnavailable
from .spec import AgentSpec, BuiltinAgents, distinct_labels, draw_colours

if TYPE_CHECKING:
    from .rerun import BoardCheck

EXIT_NOT_STARTED = 3  # an agent could not be started
EXIT_NO_SANDBOX = 4  # the sandbox was asked for and cannot run on this machine


def _builtins(ctx: click.Context) -> BuiltinAgents:
    """The built-in agents the command line passed down (the referee does not import them)."""
    return ctx.find_object(BuiltinAgents) or BuiltinAgents()


def _spec(ctx: click.Context, param: click.Parameter, value: str) -> AgentSpec:
    try:
        return AgentSpec.parse(value, builtins=_builtins(ctx)).versioned()
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


@click.command()
@click.argument("agent_a", metavar="A", callback=_spec)
@click.argument("agent_b", metavar="B", callback=_spec)
@click.option("--time", "time_per_move", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds of wall-clock time per move [default: 60; with --clock: no cap per move].")
@click.option("--time-for", "time_for", multiple=True, metavar="NAME=SECONDS",
              help="Time odds: this agent's own seconds per move (the other keeps --time); repeatable.")
@click.option("--clock", "clock", metavar="BASE+INC", default=None,
              help="A game clock: a bank of BASE seconds for each program, INC more after each of its moves "
                   "(e.g. 300+2, 3+0.1); --time then caps a single move.")
@click.option("--startup-time", type=click.FloatRange(min=0), default=GameConfig.startup_time, show_default=True,
              help="Extra seconds on each agent's first move, to start up.")
@click.option("--seed", type=int, default=None, help="Seed of the colour draw (default: a random one, kept in game.json).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Game directory: the agents' directories and game.json (default: games/<time>-A-B).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the result line.")
@click.option("--json", "as_json", is_flag=True, help="Print only game.json on standard output.")
@click.option("--illegal", type=click.Choice(ILLEGAL_RULES), default="lose", show_default=True,
              help="An illegal move loses the game, or only the turn (seed 003's other rule).")
@click.option("--manual-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds per move for a person (manual:NAME); default: no limit.")
@click.option("--manual-clock", "manual_clock", metavar="BASE+INC", default=None,
              callback=lambda ctx, param, value: clock_option(value, "--manual-clock"),
              help="A game clock for a person (manual:NAME), as --clock gives programs one; each prompt says "
                   "what is left of it.")
@click.option("--strict-manual", is_flag=True,
              help="A person's malformed or illegal move loses, as a program's does (default: they are told "
                   "what was wrong and asked again).")
@click.option("--memory", "memory_mb", type=click.IntRange(min=0), default=GameConfig.memory_mb, show_default=True,
              help="Memory of each agent in MiB: all its processes and its /tmp and /dev/shm together "
                   "(0: none; othello doctor says how it is enforced here).")
@click.option("--processes", "max_processes", type=click.IntRange(min=0), default=GameConfig.max_processes,
              show_default=True, help="Most processes an agent may run at once (0: no limit).")
@click.option("--disk", "disk_mb", type=click.IntRange(min=0), default=GameConfig.disk_mb, show_default=True,
              help="MiB an agent may keep in its directory and in its /tmp, and the largest file it may write (0: none).")
@click.option("--suspend/--no-suspend", default=GameConfig.suspend_waiting, show_default=True,
              help="Freeze the waiting agent while the other thinks: no thinking on the opponent's time, "
                   "no CPU taken from it.")
@click.option("--sandbox", type=click.Choice(SANDBOXES), default=GameConfig.sandbox, show_default=True,
              help="Run each agent in its own bubblewrap sandbox, or (none) as yourself with rlimits only.")
@click.option("--polling", is_flag=True, help="Poll the files instead of using file events (e.g. on NFS).")
@click.option("--openings", "openings_file", default=None, metavar="FILE|balanced",
              help="Play a game pair (each agent White once) from an opening drawn by --seed from this file "
                   "(one opening a line, 'd3 c5 f6' or '(W D 3) (B C 5) (W F 6)', PROTOCOL.md section 8), "
                   "or from the balanced suite shipped with the package.")
@click.option("--size", "size", type=click.Choice([str(n) for n in BOARD_SIZES]), default=str(DEFAULT_SIZE),
              show_default=True,
              help="The board's size (seed 002's 8, 10, 12, 14); both agents must play it (PROTOCOL.md section 9).")
@click.option("--opening", "opening_text", default=None, metavar="MOVES",
              help="Play a game pair from this one opening, e.g. 'd3 c5 f6'.")
@click.option("--pause", "move_pause", type=click.FloatRange(min=0, max=MAX_MOVE_PAUSE), default=0.0,
              metavar="SECONDS", help="Wait this long after each move, on nobody's clock, to follow the game.")
def play(
    agent_a: AgentSpec,
    agent_b: AgentSpec,
    time_per_move: Optional[float],
    time_for: tuple[str, ...],
    clock: Optional[str],
    startup_time: float,
    seed: Optional[int],
    out_dir: Optional[Path],
    quiet: bool,
    as_json: bool,
    illegal: str,
    manual_time: Optional[float],
    manual_clock: Optional[tuple[float, float]],
    strict_manual: bool,
    memory_mb: int,
    max_processes: int,
    suspend: bool,
    polling: bool,
    disk_mb: int,
    sandbox: str,
    openings_file: Optional[str],
    opening_text: Optional[str],
    size: str,
    move_pause: float,
) -> None:
    """Play one game between A and B; colours are drawn at random.

    A and B are each a built-in agent (random, ...), NAME=COMMAND for any
    program (alice="python3 alice.py --name {name}"; {name}, {dir}, {time}
    and {home}, the folder you run this in, are replaced: carol="java -cp
    {home} Carol {name}"), or manual:NAME for a person who plays by writing
    NAME.out in a text editor.  Exits 0 when the game is played, whatever its
    result; 3 if an agent could not be started.

    With --openings FILE (or --opening MOVES) it plays a game pair instead:
    the same opening twice, A as White in OUT/1 then as Black in OUT/2.  Both
    agents must understand openings (built-in agents do; a program is given
    as openings:NAME=COMMAND).

    With --size 10 (12, 14) the board is bigger, columns A-N and rows 1-14
    as in (B N 14); both agents must play that size (a person does, and the
    built-in random, beginner, greedy and paper players; a program is given
    as sizes:NAME=COMMAND).
    """
    rule = time_option(time_per_move, clock, PLAY_SECONDS)
    opening = _opening(openings_file, opening_text, seed)
    if opening is not None:
        seed = opening[1]
    try:
        check_opening(*distinct_labels(agent_a, agent_b), opening[0] if opening else [], int(size))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    agent_times = parse_agent_times(time_for, [spec.label for spec in distinct_labels(agent_a, agent_b)])
    builtins = _builtins(click.get_current_context())
    builtins.prepare_for([agent_a, agent_b], lambda line: click.echo(line, err=True))  # before any clock runs
    white, black, seed = draw_colours(agent_a, agent_b, seed)
    if opening is not None:
        white, black = distinct_labels(agent_a, agent_b)  # a pair: A is White first, then Black
    if out_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        out_dir = Path("games") / f"{stamp}-{agent_a.file_name}-{agent_b.file_name}"
    config = GameConfig(
        time_per_move=rule.per_move,
        clock=rule.clock,
        startup_time=startup_time,
        manual_time=manual_time,
        strict_manual=strict_manual,
        illegal=illegal,
        memory_mb=memory_mb,
        max_processes=max_processes,
        disk_mb=disk_mb,
        suspend_waiting=suspend,
        sandbox=sandbox,
        polling=polling,
        size=int(size),
        agent_times=agent_times,
        # a person has no clock unless given one: theirs, whatever the programs have
        agent_clocks=tuple((spec.label, manual_clock) for spec in (white, black) if spec.is_manual and manual_clock),
        move_pause=move_pause,
    )
    display = Display(file=sys.stderr if as_json else None, quiet=quiet or as_json, prompts=sys.stderr)
    if opening is not None:
        _play_pair(white, black, opening[0], config, out_dir, seed, display, quiet, as_json)
        return
    _play_one(white, black, config, out_dir, seed, display, quiet or as_json, as_json)


def _play_one(white: AgentSpec, black: AgentSpec, config: GameConfig, out_dir: Path, seed: int, display: Display,
              quiet: bool, as_json: bool) -> None:
    """Play the one game of ``othello play``, print its result and exit as the command line promises."""
    if not quiet:
        click.echo(f"{white.label} (W) vs {black.label} (B), seed {seed}, {config.time_text}; files in {out_dir}")
    try:
        with sigterm_as_interrupt():
            record = play_game(white, black, config, out_dir, seed=seed, on_event=display)
    except SandboxUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_NO_SANDBOX)
    except OSError as exc:  # the game directory itself: not an agent's fault
        raise click.ClickException(f"cannot play in {out_dir}: {exc}") from None
    except KeyboardInterrupt:
        click.echo(f"interrupted: the game was not finished; its agents were stopped (files in {out_dir})", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(record.to_dict(), indent=2))
    else:
        click.echo(summary(record))
        for line in [] if quiet else fault_lines(record, out_dir):  # -q: the result line only
            click.echo(f"  {line}")
        for use in [] if quiet else time_use([record]):
            click.echo(f"time: {use.line()}")
    not_started = [label for label, info in record.extra.get("agents", {}).items() if info.get("start_error")]
    if not_started:
        for label in not_started:
            click.echo(f"error: {record.extra['agents'][label]['start_error']}", err=True)
        sys.exit(EXIT_NOT_STARTED)


def parse_agent_times(given: Sequence[str], labels: Sequence[str]) -> tuple[tuple[str, float], ...]:
    """``--time-for NAME=SECONDS`` values as :attr:`GameConfig.agent_times`; a bad one is named (click's error)."""
    times: dict[str, float] = {}
    for text in given:
        name, sep, value = text.rpartition("=")
        if not sep or not name:
            raise click.BadParameter(f"{text!r}: expected NAME=SECONDS", param_hint="--time-for")
        if name not in labels:
            raise click.BadParameter(f"{name!r} is not an agent of this game ({', '.join(labels)})",
                                     param_hint="--time-for")
        try:
            seconds = float(value)
        except ValueError:
            seconds = float("nan")
        if not (math.isfinite(seconds) and seconds > 0):
            raise click.BadParameter(f"{text!r}: the seconds must be a positive number", param_hint="--time-for")
        times[name] = seconds
    return tuple(times.items())


def clock_option(value: Optional[str], hint: str = "--clock") -> Optional[tuple[float, float]]:
    """A ``--manual-clock BASE+INC`` value (a person's clock); a bad one is named with the form expected (click's error)."""
    if value is None:
        return None
    try:
        return parse_clock(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=hint) from None


def time_option(time_per_move: Optional[float], clock: Optional[str], default: float) -> TimeRule:
    """``--time`` and ``--clock`` as given (``None``: not given) read as every front end reads them (:func:`.clock.time_rule`).

    A bad clock is click's error, naming ``--clock`` and the form expected.
    """
    try:
        return time_rule(time_per_move, clock, default)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--clock") from None


def _opening(openings_file: Optional[str], opening_text: Optional[str],
             seed: Optional[int]) -> Optional[tuple[list[Move], int]]:
    """The opening of ``--openings FILE`` (drawn by ``seed``) or ``--opening MOVES``, with the seed; ``None`` without."""
    if openings_file is not None and opening_text is not None:
        raise click.UsageError("give --openings FILE or --opening MOVES, not both")
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    try:
        if opening_text is not None:
            return parse_opening(opening_text), seed
        if openings_file is not None:
            suite = read_openings(suite_path(openings_file))
            if not suite:
                raise click.UsageError(f"{openings_file} holds no opening")
            return draw_openings(suite, 1, seed)[0], seed
    except (ParseError, IllegalMoveError) as exc:
        raise click.UsageError(str(exc)) from None
    except OSError as exc:
        raise click.UsageError(f"cannot read {openings_file}: {exc}") from None
    return None


def _play_pair(first: AgentSpec, second: AgentSpec, opening: list[Move], config: GameConfig, out_dir: Path,
               seed: int, display: Display, quiet: bool, as_json: bool) -> None:
    """``othello play --openings``: the game pair, each game's result, then the pair's score."""
    if not (quiet or as_json):
        click.echo(f"game pair from the opening {format_opening(opening)} (seed {seed}): {first.label} is White, "
                   f"then Black; {config.time_text}; files in {out_dir}/1 and {out_dir}/2")
    try:
        with sigterm_as_interrupt():
            records = play_pair(first, second, opening, config, out_dir, seed=seed, on_event=display)
    except SandboxUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_NO_SANDBOX)
    except OSError as exc:
        raise click.ClickException(f"cannot play in {out_dir}: {exc}") from None
    except KeyboardInterrupt:
        click.echo(f"interrupted: the pair was not finished; its agents were stopped (files in {out_dir})", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps([record.to_dict() for record in records], indent=2))
    else:
        points = {first.label: 0.0, second.label: 0.0}
        for number, record in enumerate(records, 1):
            click.echo(summary(record))
            for line in fault_lines(record, out_dir / str(number)):
                click.echo(f"  {line}")
            if record.result is not None:
                for colour in (WHITE, BLACK):
                    points[record.name(colour)] += record.result.points(colour)
        click.echo(f"pair: {first.label} {points[first.label]:g} - {points[second.label]:g} {second.label}")
        for use in [] if quiet else time_use(records):
            click.echo(f"time: {use.line()}")
    for record in records:
        for info in record.extra.get("agents", {}).values():
            if info.get("start_error"):
                click.echo(f"error: {info['start_error']}", err=True)
                sys.exit(EXIT_NOT_STARTED)


# The self-test ``othello doctor`` runs inside a sandbox: each line is
# "ok <what>" or "FAIL <what>", printed by the sandboxed program itself.
_SELF_TEST = r'''
import os, socket, sys
def report(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
home = os.getcwd()
others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
report(len(others) <= 2, f"sees only its own processes ({len(others) + 2} in its PID namespace)")
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
    report(False, "no network")
except OSError:
    report(True, "no network")
try:  # lands, if anywhere, in the sandbox's private /tmp: the referee checks its own side
    open(os.path.join(home, "..", "outside.txt"), "w").write("x")
except OSError:
    pass
for target in ("/usr/outside.txt", sys.argv[1]):
    try:
        open(target, "w").write("x")
        report(False, f"cannot write {target}")
    except OSError:
        report(True, f"cannot write {target}")
try:
    open(os.path.join(home, "inside.txt"), "w").write("x")
    report(True, "writes its own directory")
except OSError as exc:
    report(False, f"writes its own directory ({exc})")
report(not os.path.exists(sys.argv[2]), "cannot see the referee's folder")
report("OTHELLO_DOCTOR_SECRET" not in os.environ, "gets none of the referee's environment")
'''


@click.command()
def doctor() -> None:
    """Tell what isolation this machine gives agents, and test it.

    Prints whether bubblewrap is installed and works, each limit and how it
    is enforced here (or that it is not, and what to do), then runs a short
    self-test inside a real sandbox.  Exit code 0 if agents can be
    sandboxed here and every check passed.
    """
    import os
    import tempfile

    from .cores import cpu_lines
    from .launch import run_sandboxed
    from .limits import limit_lines
    from .sandbox import describe, probe, toolchains

    isolation = probe()
    for line in describe(isolation):
        click.echo(line)
    defaults = GameConfig()
    click.echo(f"limits of each agent for this user here (othello play's defaults, --memory {defaults.memory_mb} "
               f"--processes {defaults.max_processes} --disk {defaults.disk_mb}"
               f"{'' if isolation.works else ', and --sandbox none'}):")
    for limit in limit_lines(defaults, isolation if isolation.works else None):
        click.echo(limit.text())
    for line in cpu_lines(isolation.works):  # how games at once are kept apart
        click.echo(line)
    for what in toolchains().skipped:  # said here once; a build just goes without it
        click.echo(f"builds: {what}: skipped")
    if not isolation.works:
        click.echo("self-test: skipped (no sandbox); games need --sandbox none here")
        sys.exit(1)
    with tempfile.TemporaryDirectory(prefix="othello-doctor-") as temp:
        root = Path(temp)
        (root / "agent").mkdir()
        (root / "referee").mkdir()
        script = root / "selftest.py"
        script.write_text(_SELF_TEST)
        log = root / "selftest.log"
        os.environ["OTHELLO_DOCTOR_SECRET"] = "x"
        command = f"{sys.executable} {script} {root / 'referee' / 'game.json'} {root / 'referee'}"
        code, timed_out, _ = run_sandboxed(command, root / "agent", log, 30, GameConfig(), readable=[script],
                                           hidden=[root])
        del os.environ["OTHELLO_DOCTOR_SECRET"]
        lines = log.read_text(errors="replace").splitlines()
        escaped = (root / "outside.txt").exists()
        lines.append(("FAIL " if escaped else "ok   ") + "wrote nothing outside its directory")
    click.echo("self-test in a sandbox:")
    for line in lines:
        click.echo(f"  {line}")
    failed = timed_out or code != 0 or not lines or any(line.startswith("FAIL") for line in lines)
    sys.exit(1 if failed else 0)


@click.command()
@click.argument("game", type=click.Path(exists=True, dir_okay=True))
@click.option("--step", is_flag=True, help="Wait for Enter between moves.")
@click.option("--format", "fmt", type=click.Choice(["board", "transcript", "ggf", "json"]), default="board",
              show_default=True, help="Print boards move by move, or export the game.")
@click.option("--rerun", "rerun_name", default=None, metavar="NAME",
              help="Run agent NAME of the game again at move --at: its move now beside the move recorded then, and "
                   "its board (where it draws one) against the referee's.")
@click.option("--at", "at", type=int, default=None, metavar="N",
              help="The board before move N (numbered as in the record's moves, from 1), whose turn it is and the "
                   "move played there; with --rerun: the move to play again (one of NAME's moves).")
@click.option("--command", "command", default=None, metavar="CMD",
              help="With --rerun: run this command instead of the recorded one (a new version of the agent); it may "
                   "begin with openings:, clock: or sizes: as NAME=COMMAND does.")
@click.option("--time", "time_per_move", type=click.FloatRange(min=0, min_open=True), default=None,
              help="With --rerun: seconds per move, instead of the game's time rule (default: the agent's time in "
                   "the game, its clock too).")
@click.option("--sandbox", type=click.Choice(SANDBOXES), default=GameConfig.sandbox, show_default=True,
              help="With --rerun: run the agent in its bubblewrap sandbox, or (none) as yourself.")
@click.option("--json", "as_json", is_flag=True, help="With --rerun: print one JSON object.")
def replay(game: str, step: bool, fmt: str, rerun_name: Optional[str], at: Optional[int], command: Optional[str],
           time_per_move: Optional[float], sandbox: str, as_json: bool) -> None:
    """Step through a game record (game.json, or a game directory), or print it whole.

    With --at N alone it prints the board before move N (the position in
    which move N is played), whose turn it is, and the move played there.

    With --rerun NAME --at N, agent NAME is started again (in its sandbox,
    with the game's time rule) and given exactly what it was given before
    move N: its colour and the moves before, in one file if it declared
    openings, else the game's files one at a time (and where it then plays
    other than the record, it says at which move).  It prints the move it
    plays now, its comments, its standard error, its time, and the move
    recorded then; where the agent draws its board (in its (C ...) comments
    or on its standard output or error), the first move where that board
    differs from the referee's.  --command CMD runs a new version in its
    place: "openings:./v2 {name}" is started at move N from the recorded
    position.
    """
    from ..protocol.cli import load_record, print_position, print_record

    record, path = load_record(game)
    if rerun_name is None:
        if command is not None or time_per_move is not None or as_json:
            raise click.UsageError("--command, --time and --json go with --rerun NAME")
        if at is not None:
            if step or fmt != "board":
                raise click.UsageError("--at N draws the one board before move N: --step and --format go without it")
            print_position(record, path, at)
            return
        print_record(record, path, step, fmt)
        return
    if at is None:
        raise click.UsageError("--rerun NAME needs --at N, the move to play again (numbered as in the record's moves)")
    _rerun(record, Path(path).resolve().parent, rerun_name, at, command, time_per_move, sandbox, as_json)


def _rerun(record: GameRecord, game_dir: Path, name: str, at: int, command: Optional[str],
           time_per_move: Optional[float], sandbox: str, as_json: bool) -> None:
    from .rerun import STDERR_LINES, recorded_line, recorded_rule, recorded_spec, rerun_agent

    try:
        spec = recorded_spec(record, name, _builtins(click.get_current_context()), command)
        recorded_line(record, name, at)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    rule = TimeRule(time_per_move) if time_per_move else recorded_rule(record, name)
    config = GameConfig(time_per_move=rule.per_move, clock=rule.clock, sandbox=sandbox, size=record.size)
    _builtins(click.get_current_context()).prepare_for([spec], lambda line: click.echo(line, err=True))
    try:
        answer = rerun_agent(record, spec, at, config, hidden=[game_dir])
    except SandboxUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_NO_SANDBOX)
    if as_json:
        click.echo(json.dumps(answer.to_dict(), indent=2))
        sys.exit(EXIT_NOT_STARTED if answer.problem.startswith("could not be started") else 0)
    given = f"; given {answer.inputs}" if answer.inputs else ""
    click.echo(f"{name} ({answer.colour.full_name}) at move {at}, {rule.text}{given}")
    for line in answer.diverged:
        click.echo(f"  differs from the record at {line}")
    if answer.diverged_at is not None:
        click.echo(f"  replayed move by move, it left the recorded game at move {answer.diverged_at}: from there on "
                   "it was given the recorded opponent's moves on a board of its own; a version that reads openings "
                   f"(--command \"openings:...\") is started at move {at} from the recorded position instead")
    for comment in answer.comments:
        click.echo(f"  (C {comment})")
    took = "" if answer.seconds is None else f" in {answer.seconds:.3f} s"
    now = answer.move if answer.move is not None else "no move"
    click.echo(f"now:      {now}{took}" + (f"  ({answer.problem})" if answer.problem else ""))
    click.echo(f"recorded: {answer.recorded if answer.recorded is not None else 'no move'}"
               + ("  (the same)" if answer.same else ""))
    for line in board_lines(answer.boards, record.size) if answer.turns else []:  # (none: it never ran)
        click.echo(line)
    lines = answer.stderr.rstrip("\n").splitlines()
    if lines:
        click.echo(f"its standard output and error ({len(lines)} lines{', the last ' + str(STDERR_LINES) if len(lines) > STDERR_LINES else ''}):")
        for line in lines[-STDERR_LINES:]:
            click.echo(f"  | {line}")
    else:
        click.echo("its standard output and error: empty")
    if answer.problem.startswith("could not be started"):
        sys.exit(EXIT_NOT_STARTED)


def board_lines(check: "BoardCheck", size: int) -> list[str]:
    """What the rerun found of the agent's board against the referee's, for people (both drawn at a difference)."""
    if not check.source:
        return [f"its board: none drawn (no {size} rows of {size} cells, W B . or O X -, in its (C ...) comments "
                "or its standard output and error), so nothing can be compared with the referee's"]
    where = " and ".join("its (C ...) comments" if source == "comments" else "its standard output and error"
                         for source in check.source.split(" and "))
    lines = []
    diff = check.difference
    first, last = check.moves
    span = f"move {first}" if first == last else f"moves {first} to {last}"
    if diff is None:
        lines.append(f"its board, drawn in {where}: the same as the referee's each time ({check.compared} drawings, "
                     f"{span})")
    else:
        squares = diff.squares()
        earlier = f", the same before ({check.compared - 1} drawings)" if check.compared > 1 else ""
        lines.append(f"its board, drawn in {where}: first differs from the referee's at move {diff.number}{earlier}; "
                     f"{len(squares)} square{'s differ' if len(squares) != 1 else ' differs'}: {' '.join(squares)}")
        lines += [f"  {line}" for line in side_by_side(diff.agent, diff.referee,
                                                       (f"its board (drawn during move {diff.number})",
                                                        f"the referee's, {diff.referee_at}"))]
        if diff.closest is not None:
            near = diff.squares(diff.closest)
            lines.append(f"  (nearer to the referee's board {diff.closest_at}: {len(near)} "
                         f"square{'s differ' if len(near) != 1 else ' differs'}: {' '.join(near)})")
    if check.stopped:
        lines.append(f"  compared no further: {check.stopped}")
    if check.reading:
        lines.append(f"  (its drawings read {check.reading}: so they agree with the referee's longest; PROTOCOL.md "
                     f"draws row {size} at the top, W white and B black)")
    elif check.unlabelled:
        lines.append(f"  (rows without numbers were read with row {size} at the top, as PROTOCOL.md draws the board)")
    return lines
