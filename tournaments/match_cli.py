"""``othello match A B``: is A better than B?  Game pairs, a fixed number or until an SPRT decides."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Optional

import click

from ..protocol import IllegalMoveError, ParseError
from ..protocol.openings import format_opening, read_openings, suite_path
from ..referee import AgentSpec, GameConfig
from ..referee.config import SANDBOXES
from ..referee.process import sigterm_as_interrupt
from ..referee.sandbox import SandboxUnavailable
from ..agents.registry import builtin_agents
from .match import MatchState, PairResult, run_match
from .stats import SPRT

SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model")
EXIT_NOT_STARTED = 3
EXIT_NO_SANDBOX = 4


def _split(words: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Agents and SPRT parameters (``elo0=0`` ...) from the positional words, in any order."""
    agents: list[str] = []
    params: list[str] = []
    for word in words:
        key = word.split("=", 1)[0].strip().lower()
        (params if "=" in word and key in SPRT_KEYS else agents).append(word)
    return agents, params


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("words", nargs=-1, required=True, metavar="A B [SPRT PARAMETERS]")
@click.option("--games", type=click.IntRange(min=2), default=None,
              help="Play this many games (an even number: game pairs).")
@click.option("--sprt", "use_sprt", is_flag=True,
              help="Play until the SPRT decides; parameters follow as words: elo0=0 elo1=10 alpha=0.05 beta=0.05 "
                   "[model=normalized|logistic] (these are the defaults).")
@click.option("--max-games", type=click.IntRange(min=2), default=1000, show_default=True,
              help="With --sprt: stop undecided after this many games.")
@click.option("--openings", "openings_file", default=None, metavar="FILE|balanced",
              help="Opening suite: a file of one opening a line (PROTOCOL.md section 8), or the balanced suite "
                   "shipped with the package; each pair plays one, drawn by --seed without repeats.  Without it "
                   "every game starts from the start position.")
@click.option("--time", "time_per_move", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds of wall-clock time per move.")
@click.option("--seed", type=int, default=None, help="Seed of the opening draw (default: a random one, printed).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Match directory: pair-0001/1, pair-0001/2, ... and match.json (default: matches/<time>-A-B).")
@click.option("--sandbox", type=click.Choice(SANDBOXES), default=GameConfig.sandbox, show_default=True,
              help="Run each agent in its own bubblewrap sandbox, or (none) as yourself.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final figures.")
def match(words: tuple[str, ...], games: Optional[int], use_sprt: bool, max_games: int,
          openings_file: Optional[str], time_per_move: float, seed: Optional[int], out_dir: Optional[Path],
          sandbox: str, quiet: bool) -> None:
    """Play A against B in game pairs (each opening twice, colours swapped) and say which is better.

    Either a fixed number of games (--games 100) or until a sequential test
    decides (--sprt elo0=0 elo1=10 alpha=0.05 beta=0.05): H1 means A is
    better by about elo1, H0 that it is not better than elo0.  After each
    pair it prints W-D-L, the pentanomial counts of pairs (A's pair score 0,
    0.5, 1, 1.5, 2: LL LD DD/WL WD WW), Elo with a 95% interval computed
    over pairs, and with --sprt the LLR and its bounds.  Exit 0 when the
    match is played, 2 on a bad command line, 3 if an agent could not start.
    """
    agents, params = _split(words)
    if len(agents) != 2:
        raise click.UsageError(f"expected two agents A and B, got {len(agents)}: {' '.join(agents) or 'none'}")
    if params and not use_sprt:
        raise click.UsageError(f"SPRT parameters ({' '.join(params)}) need --sprt")
    if use_sprt == (games is not None):
        raise click.UsageError("give --games N or --sprt (with its parameters), one of them")
    try:
        a, b = (AgentSpec.parse(text, builtins=builtin_agents()) for text in agents)
        sprt = SPRT.parse(params) if use_sprt else None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    openings = None
    if openings_file is not None:
        try:
            openings = read_openings(suite_path(openings_file))
        except (ParseError, IllegalMoveError) as exc:
            raise click.UsageError(str(exc)) from None
        except OSError as exc:
            raise click.UsageError(f"cannot read the openings {openings_file}: {exc}") from None
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    if out_dir is None:
        out_dir = Path("matches") / f"{time.strftime('%Y%m%d-%H%M%S')}-{a.file_name}-{b.file_name}"
    config = GameConfig(time_per_move=time_per_move, sandbox=sandbox)

    def show(state: MatchState, pair: PairResult) -> None:
        if quiet:
            return
        opening = format_opening(pair.opening) or "start position"
        first, second = pair.points
        click.echo(f"pair {pair.number} ({opening}): {state.a} {first:g} + {second:g} | " + " | ".join(state.lines()))

    if not quiet:
        what = f"{games} games" if games is not None else f"until the SPRT decides (at most {max_games} games)"
        suite = f"openings from {openings_file} ({len(openings or [])})" if openings_file else "no openings"
        click.echo(f"{a.label} vs {b.label}: {what}, {suite}, seed {seed}, {time_per_move:g} s per move; files in {out_dir}")
        if openings is None:
            click.echo("note: without --openings every game starts from the start position; "
                       "deterministic agents then repeat the same games", err=True)
    builtin_agents().prepare_for([a, b], lambda line: click.echo(line, err=True))
    try:
        with sigterm_as_interrupt():
            state = run_match(a, b, config, out_dir, openings, games, sprt, max_games, seed, show)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    except SandboxUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_NO_SANDBOX)
    except KeyboardInterrupt:
        click.echo(f"interrupted: the match was stopped (files in {out_dir})", err=True)
        sys.exit(130)
    click.echo(f"final: {state.a} vs {state.b}: " + " | ".join(state.lines()))
    if state.sprt is not None:
        verdict = {"H1": f"H1 accepted: {state.a} is better (elo1={state.sprt.elo1:g})",
                   "H0": f"H0 accepted: {state.a} is not better than elo0={state.sprt.elo0:g}"}
        click.echo(verdict.get(state.decision or "", f"no decision after {state.games} games"))
    if state.stopped == "not-started":
        click.echo("error: an agent could not be started (see the games' game.json)", err=True)
        sys.exit(EXIT_NOT_STARTED)
