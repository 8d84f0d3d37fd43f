"""``othello class ...``: init, serve, submit, final, export (one click group; each command loads what it needs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import click

from .submit import RESTART_WAIT


@click.group(name="class")
def class_group() -> None:
    """A class server: students submit versions, each is checked in the sandbox and plays a ladder.

    \b
    othello class init DIR --roster ROSTER.csv      the class folder, a token per student
    othello class serve DIR                         the web API, the admission worker and the ladder
    othello class submit URL --token T --command C  send a version from a terminal
    othello class final DIR                         the final tournament on each student's last version
    othello class export DIR -o grades.csv          the grade sheet
    othello class delete DIR                        the class folder removed whole (read-only builds too)
    othello class admit|reject|recheck DIR STUDENT VERSION --reason TEXT
                                                    the instructor's verdict on a student's version
                                                    (numbered per student: 1, 2, 3...), by hand
    """


@class_group.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--roster", required=True, type=click.Path(dir_okay=False, exists=True),
              help="CSV with a header holding id and name (more columns kept).")
@click.option("--time", "time_per_move", type=click.FloatRange(0.01, 600), default=None,
              help="Seconds per move in checks and games (default 1; written into a new class.toml).")
def init(folder: str, roster: str, time_per_move: Optional[float]) -> None:
    """Make the class folder FOLDER (or add the roster's new students to it)."""
    from .roster import RosterError, init_class
    from .settings import SettingsError

    try:
        report = init_class(Path(folder), Path(roster), time_per_move)
    except (RosterError, SettingsError) as exc:
        raise click.ClickException(str(exc)) from None
    for line in report.lines:
        click.echo(line)


@class_group.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but loopback opens it to the network (a warning says so).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="0: any free port.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Ladder games at once (default: class.toml's ladder.concurrency, else all cores but one).")
@click.option("--dask", "dask", metavar="ADDRESS", default=None, help="Play the games on this Dask scheduler's workers.")
@click.option("--tls-cert", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Serve HTTPS with this certificate (PEM, the chain after it); with --tls-key.")
@click.option("--tls-key", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="The certificate's private key (PEM).")
@click.option("--trusted-proxy", "trusted_proxies", metavar="ADDRESS", multiple=True,
              help="A reverse proxy's address (or network, 10.0.0.0/24): its X-Forwarded-For and X-Forwarded-Proto "
                   "are believed, and its clients capped one by one. Repeat for several. Default: none believed.")
def serve(folder: str, host: str, port: int, jobs: Optional[int], dask: Optional[str],
          tls_cert: Optional[Path], tls_key: Optional[Path], trusted_proxies: tuple[str, ...]) -> None:
    """Run the class server on FOLDER: the API, the admission checks and the ladder.

    It prints the instructor's address (with the token) and runs until
    Ctrl-C; killed, it loses nothing: started again, it goes on.  Beyond
    this machine (--host), give it --tls-cert and --tls-key: tokens then
    travel encrypted, and a plain HTTP request to the port is refused.
    Behind an HTTPS reverse proxy, name it with --trusted-proxy.
    """
    from .server import ServerError, serve as run

    if (tls_cert is None) != (tls_key is None):
        raise click.BadParameter("give both --tls-cert and --tls-key, or neither", param_hint="--tls-cert/--tls-key")
    try:
        run(Path(folder), host, port, jobs, dask, lambda line: click.echo(line),
            tls=(tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None,
            trusted_proxies=trusted_proxies)
    except ServerError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:  # Ctrl-C, re-raised by uvicorn once it has stopped: the way to stop it, no error
        pass


@class_group.command()
@click.argument("url")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--token", required=True, envvar="OTHELLO_CLASS_TOKEN", help="Your token (or $OTHELLO_CLASS_TOKEN).")
@click.option("--command", "command", required=True,
              help="How to run it, e.g. 'python3 agent.py {name}'; 'openings:...' if it reads openings, "
                   "'clock:...' if it reads the clock line (both: 'clock:openings:...').")
@click.option("--build", default="", help="How to build it, e.g. 'gcc -O2 -o agent agent.c' (run in the sandbox).")
@click.option("--wait", is_flag=True, help="Wait for the admission card, print it; exit 0 admitted, 1 rejected. "
                                          f"A server that stops answering (a restart) is waited for, {RESTART_WAIT:g} s at most.")
@click.option("--timeout", type=click.FloatRange(min=1), default=900, show_default=True, help="Seconds --wait waits.")
def submit(url: str, paths: tuple[Path, ...], token: str, command: str, build: str, wait: bool, timeout: float) -> None:
    """Send PATHS (files, folders or one .zip) as a new version to the class server at URL; print its fingerprint."""
    from .submit import SubmitError, card_lines, send, wait_for_card

    try:
        version = send(url, token, command, build, list(paths))
        click.echo(f"{version['fingerprint']}  version {version['version']}"
                   + ("" if version.get("new") else " (sent before: the same version)") + f"  {version['status']}")
        if not wait:
            return
        # (the API's URLs take the id; "version" is the student's number of it)
        version = wait_for_card(url, token, version["id"], timeout, lambda line: click.echo(line, err=True))
    except SubmitError as exc:
        click.echo(f"othello class submit: {exc}", err=True)
        sys.exit(2)
    for line in card_lines(version):
        click.echo(line)
    sys.exit(0 if version["status"] == "admitted" else 1)


@class_group.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--yes", is_flag=True, help="Delete without asking.")
def delete(folder: Path, yes: bool) -> None:
    """Delete the class folder FOLDER and everything in it: the database, every version, build, card and game.

    Its versions and builds are read-only, so rm -rf fails for all but root;
    this makes them writable first.  It asks first (unless --yes), and
    refuses a folder that is not a class's, one a server runs on, and one a
    final runs on.  Exit 0 deleted; 1 when not (refused, or not all of it
    could be removed: each path is said).
    """
    from .removal import NotDeletable, contents, delete_class, hold_for_deletion

    try:
        held = hold_for_deletion(folder)
    except NotDeletable as exc:
        raise click.ClickException(str(exc)) from None
    found = contents(folder)
    if not yes and not click.confirm(f"Delete the class folder {folder.resolve()} ({found.text()}) and everything in "
                                     "it? It cannot be undone", default=False):
        os.close(held)
        raise click.ClickException("nothing deleted")
    problems = delete_class(folder, held)
    if problems:
        for line in problems[:20]:
            click.echo(f"  {line}", err=True)
        raise click.ClickException(f"{folder} is not wholly deleted: {len(problems)} path(s) could not be removed "
                                   "(above)")
    click.echo(f"deleted {folder} ({found.text()})")


@class_group.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write here (default: print).")
def export(folder: str, output: Optional[str]) -> None:
    """The grade sheet of FOLDER as CSV: one row per student (also while the server runs)."""
    from .grades import grade_sheet
    from .settings import SettingsError, load
    from .store import ClassStore

    try:
        settings = load(Path(folder))
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    store = ClassStore(settings.database)
    try:
        text = grade_sheet(settings, store)
    finally:
        store.close()
    if output is None:
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {output} ({text.count(chr(10)) - 1} students)")


@class_group.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True))
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Games at once (default: the runner's).")
@click.option("--fresh", is_flag=True, help="Start the final over (its earlier results are deleted).")
def final(folder: str, jobs: Optional[int], fresh: bool) -> None:
    """The final tournament: each student's last admitted version before the deadline, with the tournament runner.

    It writes FOLDER/final.toml (its results in FOLDER/final/results),
    runs it (resuming an interrupted final), then writes its report.  The
    references play every student and are never ranked among them; games
    come from the class's openings when every program reads them; a class
    server on FOLDER starts no ladder game while the final runs.
    """
    from .final import run_final
    from .settings import SettingsError, load
    from .store import ClassStore

    try:
        settings = load(Path(folder))
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    store = ClassStore(settings.database)
    try:
        path, code = run_final(settings, store, jobs, fresh, echo=lambda line: click.echo(line))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    click.echo(f"the final's tournament file: {path}")
    sys.exit(code)


def _verdict_command(action_name: str, summary: str) -> None:
    """``othello class admit|reject|recheck``: one command per action, the same arguments and rule."""

    @class_group.command(name=action_name, help=summary + """

    VERSION is the student's own number of it (1: their first), as their
    card and the dashboard say.  It works on FOLDER's database directly,
    whether the server runs or not:
    a running server's ladder and admission worker see the change within
    seconds.  The verdict is kept (who, when, what, why), never
    overwritten, and the reason is shown on the student's card.  Exit 0
    when given; 2 with the reason when refused (no reason, no such student
    or version, a version still being checked).""")
    @click.argument("folder", type=click.Path(file_okay=False, exists=True))
    @click.argument("student")
    @click.argument("version", type=int)
    @click.option("--reason", required=True, help="Why (kept, and shown on the student's card).")
    def command(folder: str, student: str, version: int, reason: str) -> None:
        import getpass

        from .admission import VerdictRefused, instructor_verdict, verdict_outcome
        from .settings import SettingsError, load
        from .store import ClassStore, VerdictAction

        try:
            settings = load(Path(folder))
        except SettingsError as exc:
            raise click.ClickException(str(exc)) from None
        store = ClassStore(settings.database)
        try:
            # VERSION as the dashboard and the student's card number it: the student's first, second...
            row = store.numbered_version(student, version)
            verdict = instructor_verdict(settings, store, student, -1 if row is None else row.id,
                                         VerdictAction(action_name), reason, f"{getpass.getuser()} (command line)")
            click.echo(verdict_outcome(store, verdict))
        except VerdictRefused as exc:
            click.echo(f"othello class {action_name}: {exc}", err=True)
            sys.exit(2)
        finally:
            store.close()


_verdict_command("admit", "Admit STUDENT's VERSION by hand, for --reason: it plays (if it is their newest admitted one).")
_verdict_command("reject", "Reject STUDENT's VERSION by hand, for --reason: it stops playing at once.")
_verdict_command("recheck", "Have STUDENT's VERSION built and checked again (--reason says why): its new card decides.")
