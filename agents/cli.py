"""``othello agent``, ``othello check`` and ``othello bridge``: the agents' commands."""

from __future__ import annotations

import sys
from typing import Optional

import click

from ..referee.clock import CHECK_SECONDS
from .registry import names as builtin_names


@click.command()
@click.argument("agent", type=click.Choice(builtin_names()), metavar="AGENT")
@click.option("--name", "file_name", envvar="OTHELLO_NAME", default=None,
              help="File name: the agent uses NAME.in and NAME.out (default: $OTHELLO_NAME, else AGENT).")
@click.option("--dir", "directory", envvar="OTHELLO_DIR", default=".", show_default=True,
              type=click.Path(file_okay=False, exists=True),
              help="Directory of the two files (default: $OTHELLO_DIR, else the current one).")
@click.option("--time", "time_per_move", envvar="OTHELLO_TIME", default=None, type=click.FloatRange(min=0, min_open=True),
              help="Seconds per move (default: $OTHELLO_TIME, else 60).")
def agent(agent: str, file_name: Optional[str], directory: str, time_per_move: Optional[float]) -> None:
    """Run the built-in agent AGENT as a file-protocol program.

    It plays one game through NAME.in and NAME.out exactly as a student's
    program would, then exits.  Example: `othello agent greedy --name bob`.

    \b
    AGENT is one of: random, beginner, greedy, weighted, minimax, alphabeta,
    paper-easy, paper-normal, paper-hard, champion.
    """
    from .registry import get_strategy, sizes_of
    from .runtime import run_agent

    # AGENT is a click.Choice of the registry's names: click has refused any other.
    sys.exit(run_agent(get_strategy(agent), file_name or agent, directory, time_per_move, sizes=sizes_of(agent)))


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("protocol", type=click.Choice(["gtp"]))
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--name", "file_name", envvar="OTHELLO_NAME", default="engine", show_default=True,
              help="File name: the agent uses NAME.in and NAME.out (default: $OTHELLO_NAME).")
@click.option("--dir", "directory", envvar="OTHELLO_DIR", default=".", type=click.Path(file_okay=False, exists=True),
              help="Directory of the two files (default: $OTHELLO_DIR, else the current one).")
@click.option("--time", "time_per_move", envvar="OTHELLO_TIME", default=None, type=click.FloatRange(min=0, min_open=True),
              help="Seconds per move (default: $OTHELLO_TIME, else 60).")
def bridge(protocol: str, command: tuple[str, ...], file_name: str, directory: str,
           time_per_move: Optional[float]) -> None:
    """Run an engine that speaks PROTOCOL (gtp) as a file-protocol agent.

    Example, as a player of `othello play`:

    \b
        othello play random \\
          "rhino=othello bridge gtp --name {name} -- /usr/games/gtp-rhino -l 2"

    The engine's colours and coordinates are mapped for it (standard
    orientation: same square labels, colour names swapped).
    """
    from .bridge import GTPError, run_gtp_bridge

    try:
        code = run_gtp_bridge(list(command), file_name, directory, time_per_move)
    except GTPError as exc:
        click.echo(f"othello bridge: {exc}", err=True)
        code = 1
    sys.exit(code)


@click.command()
@click.argument("agent_text", metavar="AGENT")
@click.option("--time", "time_per_move", type=click.FloatRange(min=0, min_open=True), default=CHECK_SECONDS,
              show_default=True, help="Seconds per move given to the agent (OTHELLO_TIME).")
@click.option("--clock", "clock_text", metavar="BASE+INC", default=None,
              help="Check under a game clock (e.g. 10+0.1): a bank with an increment, told to the agent "
                   "(OTHELLO_CLOCK, and the clock line to a clock:NAME=COMMAND agent); --time then caps a move.")
@click.option("--attempts", type=click.IntRange(min=0), default=8, show_default=True,
              help="Extra games steered towards a pass, if the two whole games had none (an agent that "
                   "declares openings is also started where it must pass, so it needs none).")
@click.option("--startup-time", "startup", type=click.FloatRange(min=0), default=None,
              help="Extra seconds on the first move of each game, to start up (default: the referee's, 5).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the checker's own moves.")
@click.option("--sandbox", type=click.Choice(["bwrap", "none"]), default="bwrap", show_default=True,
              help="Run the agent in the referee's sandbox (as in a game), or (none) as yourself.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the report card.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first failed check (the rest is UNTESTED).")
def check(agent_text: str, time_per_move: float, clock_text: Optional[str], attempts: int, startup: Optional[float],
          seed: int, sandbox: str, quiet: bool, fail_fast: bool) -> None:
    """Check that the agent AGENT follows the file protocol; print a report card.

    AGENT is given as for `othello play`: a built-in name, or NAME=COMMAND
    (e.g. "bob=./bob {name}").  The checker plays scripted games with it,
    each in a fresh temporary directory.  Under each failure it shows where
    (move number, position) and the end of the agent's output, and keeps
    the games' files (it prints where).

    Exit code 0 if no check failed, 1 if one did (FAIL: the agent is wrong).
    An item the check could not exercise (UNTESTED: e.g. no game reached a
    position where the agent must pass) and the advisory checks (an illegal
    opponent move, a lower-case move line) do not count against it: the card
    says so.  3: no check failed but one could not tell (UNSURE: the machine
    was too busy to time the agent, which waited for a core rather than
    thought; the card gives the clock, the CPU and the load): run it again
    on a quieter machine.  2: a bad AGENT or option; 4: the sandbox cannot
    run here.
    """
    from ..referee.cli import time_option
    from ..referee.clock import STARTUP_SECONDS
    from ..referee.process import sigterm_as_interrupt
    from ..referee.sandbox import SandboxUnavailable
    from ..referee.spec import AgentSpec
    from .check import check_agent
    from .registry import builtin_agents

    rule = time_option(time_per_move, clock_text, CHECK_SECONDS)  # (--time has a default: a move is capped)
    builtins = builtin_agents()
    try:
        spec = AgentSpec.parse(agent_text, builtins=builtins)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="AGENT") from None
    if spec.is_manual:
        raise click.BadParameter("a manual player cannot be checked", param_hint="AGENT")
    progress = (lambda line: None) if quiet else (lambda line: click.echo(f"... {line}", err=True))
    builtins.prepare_for([spec], progress)  # compile before the checker's clocks run
    try:
        with sigterm_as_interrupt():
            card = check_agent(spec, rule.move_seconds, attempts, seed, log=progress,
                               startup=STARTUP_SECONDS if startup is None else startup, sandbox=sandbox,
                               fail_fast=fail_fast, clock=rule.clock)
    except SandboxUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(4)
    except KeyboardInterrupt:
        click.echo("interrupted: the check was not finished; the agent was stopped", err=True)
        sys.exit(130)
    for line in card.lines():
        click.echo(line)
    sys.exit(1 if card.failed else 3 if card.unsure else 0)
