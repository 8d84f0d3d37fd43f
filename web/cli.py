"""``othello serve [FILE.toml]``: the arena in a browser."""

from __future__ import annotations

import ipaddress
import secrets
import socket
import sys
from pathlib import Path
from typing import Optional

import click

from ..referee.config import SANDBOXES

DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command()
@click.argument("tournament_file", metavar="[FILE.toml]", required=False,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback makes the app read-only for everyone "
                   "except holders of the token it prints.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=DEFAULT_PORT, show_default=True,
              help="Port to listen on (0: any free port; the address is printed).")
@click.option("--games", "games_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("games/web"),
              show_default=True, help="Where the games played in the browser are kept (each its own directory).")
@click.option("--sandbox", type=click.Choice(SANDBOXES), default="bwrap", show_default=True,
              help="Run the agents of browser games in their bubblewrap sandbox, or (none) as yourself.")
@click.option("--no-token", is_flag=True,
              help="On loopback, let anyone who can connect start games without the token: only on a "
                   "machine where you are the only user.")
def serve(tournament_file: Optional[Path], host: str, port: int, games_dir: Path, sandbox: str,
          no_token: bool) -> None:
    """Start the web app: play agents by clicking, watch games, follow a tournament live.

    With FILE.toml it shows that tournament (standings, crosstable, games in
    progress move by move, every game replayable, a page per agent), also
    while `othello tournament run FILE.toml` plays in another terminal: it
    only reads the results.  Stop it with Ctrl-C.
    """
    import uvicorn

    from .app import Settings, create_app

    tournament = None
    if tournament_file is not None:
        from ..tournaments.schedule.config import TournamentFileError, load

        try:
            tournament = load(tournament_file)
        except (TournamentFileError, OSError) as exc:
            raise click.BadParameter(str(exc), param_hint="FILE.toml") from None
    loopback = is_loopback(host)
    if no_token and not loopback:
        raise click.BadParameter("a server that listens beyond this machine always needs its token",
                                 param_hint="--no-token")
    # A token on loopback too (as Jupyter): every user of a shared machine
    # (a lab, a server) can connect to 127.0.0.1, and starting a game runs a
    # command of their choosing as you.
    token = None if no_token else secrets.token_urlsafe(18)
    settings = Settings(
        games_dir=games_dir, tournament=tournament, token=token, sandbox=sandbox,
        allowed_hosts=("127.0.0.1", "localhost", "::1") if loopback else ("*",), base=Path.cwd(),
    )
    try:
        listener, address = listen(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from None
    click.echo(f"Othello Arena at {address}" + (f" (tournament {tournament.name})" if tournament else ""))
    if not loopback:
        click.echo("Listening beyond this machine: everybody may watch, read-only.")
    if token is not None:
        click.echo(f"To start or play games, open {address}?token={token}"
                   + ("" if not loopback else " (other users of this machine may only watch)"))
    click.echo("Ctrl-C stops it.")
    sys.stdout.flush()
    config = uvicorn.Config(create_app(settings), log_level="warning", access_log=False,
                            timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[listener])


def listen(host: str, port: int) -> tuple[socket.socket, str]:
    """A socket listening on ``host:port`` (port 0: any free one) and its address, ``http://HOST:PORT/``.

    It listens before the address is printed: whoever reads it may connect at
    once (queued until served).  Raises :class:`OSError` when it cannot.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host.strip("[]"), port))
        listener.listen(128)
    except OSError:
        listener.close()
        raise
    shown = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
    return listener, f"http://{shown}:{listener.getsockname()[1]}/"
