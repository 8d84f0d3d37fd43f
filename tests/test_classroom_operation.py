"""The class server as its instructor runs it (issue 37): its log, a restart under a waiting submit, the rate
limit's Retry-After, deleting a class folder, and the sandbox's caches; each with real processes."""

from __future__ import annotations

import datetime as dt
import json
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Optional

import pytest

from classroom_helpers import make_class
from sandbox_helpers import unprivileged_user
from test_classroom_server import EXAMPLES, ADDRESS, call, send_files, wait_for

from othello_arena.classroom.admission import RATE_WINDOW, rate_limit_wait
from othello_arena.classroom.submit import SubmitError, wait_for_card

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d ")  # the local time with its offset
# The starter at a fixed depth: it answers in milliseconds, so its card does not hang on the machine's load
FAST = "python3 agent.py {name} --depth 1"
STDERR_SECRET = "alice-stderr-7f3a"  # what alice's program writes to stderr: never in the server's log
CODE_SECRET = "alice-code-91c2"  # a comment in alice's code: never in the server's log either


class LoggedServer:
    """``othello class serve`` with its stdout (the start) and its stderr (the events, in a file) apart."""

    def __init__(self, folder: Path, log: Path, *args: str) -> None:
        self.log = log
        self.errors: IO[str] = open(log, "a", encoding="utf-8")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "othello_arena", "class", "serve", str(folder), "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=self.errors, text=True, start_new_session=True)
        self.start: list[str] = []
        self.base = ""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.start.append(line.rstrip("\n"))
            found = ADDRESS.search(line.rstrip("\n"))
            if found and not self.base:
                self.base = found.group(1).rstrip("/")
            if "Ctrl-C stops it" in line:
                break
        assert self.base, "the server printed no address:\n" + "\n".join(self.start) + log.read_text()

    def events(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.errors.close()


def said(server: LoggedServer, pattern: str) -> Optional[str]:
    """The first line of the server's log that matches ``pattern``."""
    return next((line for line in server.events() if re.search(pattern, line)), None)


# -- the log: one line per event -----------------------------------------------------------


@pytest.mark.slow
def test_serve_logs_each_event_in_a_line_with_its_time_and_no_students_output(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob"], ["random"], time=0.5, submissions_per_hour=2)
    # alice's program says a secret on stderr, and holds one in a comment: neither may reach the instructor's log
    marked = (f"import sys\nsys.stderr.write('{STDERR_SECRET}\\n')  # {CODE_SECRET}\n"
              + (EXAMPLES / "starter.py").read_text(encoding="utf-8"))
    server = LoggedServer(folder, tmp_path / "serve.log", "-j", "1")
    try:
        base = server.base
        assert server.events() == []  # the start is on stdout; the log on stderr begins with the first event
        status, alice = send_files(base, tokens["alice"], [("agent.py", marked.encode())], FAST)
        assert status == 201, alice
        assert wait_for(lambda: said(server, rf"submission: alice's version {alice['version']} received "
                                             r"\(1 file, [\d,]+ bytes\), to be built and checked"), 60, "the submission")
        assert wait_for(lambda: said(server, rf"card: alice's version {alice['version']} ADMITTED"), 600, "alice's card")
        status, bob = send_files(base, tokens["bob"], [("agent.py", b"print('x')\n")], FAST, "false")
        assert status == 201, bob
        rejected = wait_for(lambda: said(server, rf"card: bob's version {bob['version']} REJECTED"), 600, "bob's card")
        assert rejected.endswith("REJECTED: the build failed (exit 1)")
        # the ladder plays alice against random, then has nobody left for her
        game = wait_for(lambda: said(server, r"game \d+: .* \(White\) vs .* \(Black\): (1-0|0-1|1/2-1/2) \("), 600,
                        "a finished game")
        assert "alice (version" in game and "random" in game
        wait_for(lambda: said(server, "ladder: idle: one student's version only"), 600, "the ladder idle")
        # alice's second version: the ladder plays again
        status, again = send_files(base, tokens["alice"], [("agent.py", (marked + "# v2\n").encode())],
                                   FAST)
        assert status == 201, again
        wait_for(lambda: said(server, "ladder: playing again"), 600, "the ladder playing again")
        # a third within the hour: refused, the log says so and when the next is taken
        status, body, headers = call(base, "/api/submissions", tokens["alice"], json.dumps(
            {"command": FAST, "files": [{"name": "agent.py", "content": marked + "# v3\n"}]}).encode(),
            "application/json")
        assert status == 429
        assert said(server, r"refused: a submission of alice's \(429\): at most 2 submissions an hour: the next one "
                            r"is taken in \d+ min \d+ s \(at \d\d:\d\d:\d\d UTC\)")
        # a final started elsewhere (its marker held by a process: here this one), then over
        from othello_arena.classroom.final import FinalMarker

        marker = FinalMarker(folder)
        marker.hold()
        try:
            wait_for(lambda: said(server, r"ladder: the ladder is paused while the final runs"), 60, "the final's start")
        finally:
            marker.release()
        wait_for(lambda: said(server, "ladder: the final ended"), 60, "the final's end")
        # the instructor's verdict by hand, from the dashboard
        status, body, _ = call(base, f"/api/versions/{again['id']}/verdict", tokens["instructor"],
                               json.dumps({"action": "reject", "reason": "a test"}).encode(), "application/json")
        assert status == 200, body
        assert (alice["version"], bob["version"], again["version"]) == (1, 1, 2)  # each student's own numbers
        assert said(server, rf"verdict by the instructor on the dashboard \(reject\): alice's version {again['version']} "
                            rf"is rejected and no longer plays; their version {alice['version']} plays")
    finally:
        server.stop()
    lines = server.events()
    assert lines and all(STAMP.match(line) for line in lines), [line for line in lines if not STAMP.match(line)]
    text = "\n".join(lines)
    assert STDERR_SECRET not in text and CODE_SECRET not in text
    assert "Traceback" not in text
    assert re.search(r"stopped \(", lines[-1]), lines[-1]


# -- the rate limit: Retry-After -------------------------------------------------------------------


def test_lines_logged_by_threads_at_once_stay_whole() -> None:
    # Seen in the test above: a line glued to another and an empty one after (print writes a line and its end
    # apart; the event loop, the copies' thread and the worker's threads log at once).  A real standard error, a
    # pipe, as the server's: its writes give the other threads their turn.
    script = (
        "import sys, threading\n"
        "from othello_arena.classroom.escapes import log_event\n"
        "sys.setswitchinterval(1e-6)\n"  # a thread switch at nearly every step: what a loaded server's threads do
        "threads = [threading.Thread(target=lambda n=n: [log_event(f'thread {n} line {i} ' + 'x' * 100)\n"
        "                                                for i in range(1000)]) for n in range(6)]\n"
        "[thread.start() for thread in threads]\n"
        "[thread.join() for thread in threads]\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.split("\n")
    assert lines[-1] == "" and len(lines) == 6 * 1000 + 1
    broken = [line for line in lines[:-1]
              if not (STAMP.match(line) and re.fullmatch(r"thread \d line \d+ x{100}", STAMP.sub("", line)))]
    assert broken == []


def test_rate_limit_wait_is_when_the_window_has_room_again() -> None:
    moment = dt.datetime(2026, 11, 28, 12, 0, 0, tzinfo=dt.timezone.utc)

    def at(minutes_ago: float) -> str:
        return (moment - dt.timedelta(minutes=minutes_ago)).isoformat()

    assert rate_limit_wait([at(50), at(10)], 3, moment) is None
    # three of three: the oldest (50 min ago) leaves the window 10 min and a second from now
    assert rate_limit_wait([at(10), at(50), at(30)], 3, moment) == 10 * 60 + 1
    # five in the window over a limit of three (the limit lowered since): three must leave, the third oldest last
    assert rate_limit_wait([at(55), at(50), at(40), at(20), at(5)], 3, moment) == 20 * 60 + 1
    assert rate_limit_wait([at(60)], 1, moment) == 1  # at the window's very edge: the next second
    assert RATE_WINDOW == dt.timedelta(hours=1)


def test_a_429_says_when_and_gives_retry_after(tmp_path: Path) -> None:
    from test_classroom_server import serving

    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice"], ["random"], submissions_per_hour=1)
    with serving(folder) as server:
        first = time.time()
        status, _ = send_files(server.base, tokens["alice"], [("a.py", b"print(1)\n")], "python3 a.py {name}")
        assert status == 201
        status, body, headers = call(server.base, "/api/submissions", tokens["alice"], json.dumps(
            {"command": "python3 a.py {name}", "files": [{"name": "a.py", "content": "print(2)\n"}]}).encode(),
            "application/json")
        asked = time.time()
    assert status == 429
    retry = int(headers["Retry-After"])
    # the first submission leaves the hour's window an hour (and a second) after it was stored
    assert first + 3600 - asked - 2 <= retry <= first + 3600 - (first - 1) + 1
    message = json.loads(body)["error"]
    taken = dt.datetime.fromtimestamp(asked + retry, dt.timezone.utc)
    assert message.startswith(f"at most 1 submissions an hour: the next one is taken in {retry // 60} min ")
    assert re.search(r"\(at (\d\d:\d\d:\d\d) UTC\)$", message)
    stated = dt.datetime.strptime(re.findall(r"\d\d:\d\d:\d\d", message)[-1], "%H:%M:%S").time()
    gap = abs((dt.datetime.combine(taken.date(), stated, dt.timezone.utc) - taken).total_seconds())
    assert min(gap, 86400 - gap) <= 3


# -- submit --wait through a restart ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def read_until(stream: IO[str], needle: str, kept: list[str]) -> None:
    """Read ``stream``'s lines into ``kept`` until one holds ``needle`` (fails at the stream's end)."""
    for line in stream:
        kept.append(line)
        if needle in line:
            return
    raise AssertionError(f"{needle!r} never came:\n" + "".join(kept))


def release_build(folder: Path, student: str, fingerprint: str) -> None:
    """Let the held build of ``student``'s version go on: the file its build line waits for, once it has been copied."""
    built = folder / "builds" / student / fingerprint
    wait_for(lambda: (built / "agent.py").exists(), 120, f"{student}'s build folder", interval=0.1)
    (built / "go").write_text("")


HELD_BUILD = "while [ ! -e go ]; do sleep 0.05; done"  # a build that waits for the test: the server stops meanwhile


@pytest.mark.slow
def test_submit_wait_goes_on_through_a_restart_and_says_when_the_server_never_comes_back(tmp_path: Path) -> None:
    from test_classroom_server import Server

    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob"], ["random"], time=0.5)
    port = free_port()
    work = tmp_path / "alice"
    work.mkdir()
    (work / "agent.py").write_bytes((EXAMPLES / "starter.py").read_bytes())
    server = Server(folder, "--port", str(port))
    base = server.base
    assert base.endswith(f":{port}")
    submit = subprocess.Popen([sys.executable, "-m", "othello_arena", "class", "submit", base, str(work / "agent.py"),
                               "--token", tokens["alice"], "--command", FAST, "--build", HELD_BUILD,
                               "--wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        assert submit.stdout is not None and submit.stderr is not None
        printed = submit.stdout.readline()
        fingerprint = printed.split()[0]
        assert "version 1" in printed, printed
        server.stop()  # while the build is held: no card yet
        said: list[str] = []
        read_until(submit.stderr, "the server does not answer (restarting?): waiting for it", said)
        assert submit.poll() is None
        server = Server(folder, "--port", str(port))
        # while it runs, the class folder cannot be deleted
        refused = subprocess.run([sys.executable, "-m", "othello_arena", "class", "delete", str(folder), "--yes"],
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode == 1 and "othello class serve runs on" in refused.stderr, refused.stderr
        assert (folder / "class.sqlite").exists()
        release_build(folder, "alice", fingerprint)  # checked again from its files, as a restart does
        out, err = submit.communicate(timeout=600)
        assert submit.returncode in (0, 1), out + err  # the card came (admitted: 0; 1 only if the machine is too slow)
        assert re.search(r"^version 1 \([0-9a-f]{12}\): (ADMITTED|REJECTED)", out, re.M), out
        err = "".join(said) + err
        assert err.count("the server does not answer") == 1  # said once, not at each try
        assert "the server answers again" in err and "Traceback" not in err

        # bob's server stops and never comes back: the wait ends, saying so, within --timeout
        (work / "agent.py").write_text((EXAMPLES / "starter.py").read_text() + "# bob's\n")
        bob = subprocess.Popen([sys.executable, "-m", "othello_arena", "class", "submit", server.base,
                                str(work / "agent.py"), "--token", tokens["bob"], "--command", FAST,
                                "--build", HELD_BUILD, "--wait", "--timeout", "20"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert bob.stdout is not None
        bob_printed = bob.stdout.readline()
        assert "  version 1  " in bob_printed, bob_printed  # bob's first (the class's second): numbered per student
        server.stop()
        out, err = bob.communicate(timeout=120)
        assert bob.returncode == 2, out + err
        assert "the server does not answer (restarting?)" in err
        assert re.search(r"othello class submit: no card after 20 s \(--timeout\), the server not answering for the "
                         r"last \d+ s \(cannot reach .*\)\. The version was received: its card comes once the server "
                         r"runs again", err), err
    finally:
        if submit.poll() is None:
            submit.kill()
            submit.communicate()
        server.stop()
    # stopped: the class folder, its read-only build with it, is deleted whole
    assert not os.access(folder / "builds" / "alice" / fingerprint, os.W_OK) or os.geteuid() == 0
    deleted = subprocess.run([sys.executable, "-m", "othello_arena", "class", "delete", str(folder), "--yes"],
                             capture_output=True, text=True, timeout=120)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.startswith(f"deleted {folder} (") and not folder.exists()


def test_wait_gives_up_after_the_restart_bound_when_nothing_answers() -> None:
    # A real socket where nothing listens: refused at once, each try, until the bound
    port = free_port()
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(SubmitError) as refused:
        wait_for_card(f"http://127.0.0.1:{port}", "token", 7, timeout=600, say=said.append, restart_wait=1.5)
    assert time.monotonic() - started < 60
    assert said == ["the server does not answer (restarting?): waiting for it, 2 s at most..."]
    message = str(refused.value)
    assert message.startswith("the server has not answered for 2 s: it is down, or unreachable from here (cannot reach ")
    assert message.endswith("The version was received: its card comes once the server runs again (on your page, "
                            "or at /api/versions/7)")


# -- othello class delete ------------------------------------------------------------------------------


def test_delete_refuses_what_is_not_a_class_and_asks_first(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from othello_arena.cli import cli

    plain = tmp_path / "notes"
    plain.mkdir()
    (plain / "class.toml").write_text("")
    result = CliRunner().invoke(cli, ["class", "delete", str(plain), "--yes"])
    assert result.exit_code == 1 and plain.exists()
    assert "is not a class folder: it holds no class.sqlite (othello class init makes them): nothing deleted" in result.output
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random"])
    link = tmp_path / "link"
    link.symlink_to(folder)
    result = CliRunner().invoke(cli, ["class", "delete", str(link), "--yes"])
    assert result.exit_code == 1 and "is a link: give the class folder itself" in result.output
    result = CliRunner().invoke(cli, ["class", "delete", str(folder)], input="n\n")
    assert result.exit_code == 1 and f"Delete the class folder {folder}" in result.output
    assert "nothing deleted" in result.output and (folder / "class.sqlite").exists()
    result = CliRunner().invoke(cli, ["class", "delete", str(folder)], input="y\n")
    assert result.exit_code == 0, result.output
    assert not folder.exists()


def test_delete_adds_the_owners_write_permission_only(tmp_path: Path) -> None:
    from othello_arena.classroom.removal import owner_writable
    from othello_arena.classroom.uploads import make_read_only

    root = tmp_path / "class"
    version = root / "builds" / "alice" / ("f" * 64)
    version.mkdir(parents=True)
    (version / "agent.c").write_text("int main(void) { return 0; }")
    (version / "agent").symlink_to("agent.c")
    make_read_only(version)
    os.chmod(root, 0o700)  # the instructor's alone, as init and serve leave it
    problems: list[str] = []
    owner_writable(root, problems)
    assert problems == []
    modes = {path.relative_to(root).as_posix(): stat.S_IMODE(path.lstat().st_mode)
             for path in [root, *root.rglob("*")] if not path.is_symlink()}
    assert modes["."] == 0o700  # (the root)
    assert modes[f"builds/alice/{'f' * 64}"] == 0o755 and modes[f"builds/alice/{'f' * 64}/agent.c"] == 0o644


def test_an_instructor_who_is_not_root_deletes_a_class_with_read_only_versions() -> None:
    user = unprivileged_user()
    if user is None:
        pytest.skip("no unprivileged user can run this Python here (as root: useradd, and the interpreter readable)")
    record = pwd.getpwnam(user)
    root = Path(tempfile.mkdtemp(prefix="othello-delete-"))
    try:
        os.chmod(root, 0o755)
        os.chown(root, record.pw_uid, record.pw_gid)
        (root / "roster.csv").write_text("id,name\nalice,Alice\n")

        def run(*argv: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["runuser", "-u", user, "--", *argv], cwd=root, capture_output=True, text=True,
                                  timeout=120)

        for name in ("cls", "gone"):
            made = run(sys.executable, "-m", "othello_arena", "class", "init", name, "--roster", "roster.csv")
            assert made.returncode == 0, made.stderr
            # a version stored and built as the server leaves them: read-only, by the admission's own function
            store = ("from pathlib import Path; from othello_arena.classroom.uploads import make_read_only\n"
                     "for kind in ('submissions', 'builds'):\n"
                     f"    folder = Path('{name}', kind, 'alice', 'f' * 64, 'src'); folder.mkdir(parents=True)\n"
                     "    (folder / 'agent.c').write_text('int main(void) { return 0; }')\n"
                     "    make_read_only(folder.parent)\n")
            assert run(sys.executable, "-c", store).returncode == 0
        removed = run("rm", "-rf", "cls/builds")
        assert removed.returncode != 0 and "Permission denied" in removed.stderr  # what the instructor met
        deleted = run(sys.executable, "-m", "othello_arena", "class", "delete", "cls", "--yes")
        assert deleted.returncode == 0, deleted.stderr
        assert not (root / "cls").exists()
        # what rm -rf left of a class is no class: refused, and told how to remove it
        assert run("rm", "-rf", "gone").returncode != 0 and not (root / "gone" / "class.toml").exists()
        refused = run(sys.executable, "-m", "othello_arena", "class", "delete", "gone", "--yes")
        assert refused.returncode == 1 and (root / "gone").exists()
        advice = "remove it with chmod -R u+w gone && rm -rf gone"
        assert refused.stderr.rstrip().endswith(advice), refused.stderr
        assert run("sh", "-c", advice.removeprefix("remove it with ")).returncode == 0
        assert not (root / "gone").exists()
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- the sandbox's caches --------------------------------------------------------------------------------


def test_a_go_build_leaves_no_cache_in_its_folder_and_games_get_the_same_caches(tmp_path: Path) -> None:
    from othello_arena.referee import GameConfig
    from othello_arena.referee.launch import isolation_for, run_sandboxed
    from othello_arena.referee.sandbox import SANDBOX_CACHES
    from othello_arena.tournaments.run.build import run_build

    if isolation_for(GameConfig()) is None:
        pytest.skip("no sandbox here: the caches go to the sandbox's own /tmp only")
    if shutil.which("go") is None:
        pytest.skip("Go is not installed (golang-go): its build cache cannot be looked for")
    folder = tmp_path / "alice"
    folder.mkdir()
    shutil.copy(EXAMPLES / "starter.go", folder / "starter.go")
    # the build as the admission runs it (the starter's build line without its own GOCACHE=)
    built = run_build("alice", "go build -o starter_go starter.go && go env GOCACHE && ls $GOCACHE | wc -l",
                      str(folder), tmp_path / "build.log", 300)
    log = (tmp_path / "build.log").read_text()
    assert built.status == "ok", log
    assert sorted(path.name for path in folder.iterdir()) == ["starter.go", "starter_go"]  # no .cache, no go/
    cache_lines = log.splitlines()[-2:]
    assert cache_lines[0] == "/tmp/go-build" and int(cache_lines[1]) > 0  # Go did use a cache: in the sandbox
    assert "caches in the sandbox's /tmp, not kept after it: XDG_CACHE_HOME=/tmp/.cache GOCACHE=/tmp/go-build" in log
    # a game's program has the same variables
    game = tmp_path / "game"
    game.mkdir()
    ran = run_sandboxed("env > seen.txt", game, tmp_path / "game.log", 60, GameConfig())
    assert ran.code == 0, (tmp_path / "game.log").read_text()
    seen = dict(line.split("=", 1) for line in (game / "seen.txt").read_text().splitlines() if "=" in line)
    assert {name: seen.get(name) for name in SANDBOX_CACHES} == SANDBOX_CACHES


def test_wait_says_when_the_server_was_too_busy_to_time_the_version_and_checks_it_again() -> None:
    """A version whose check could not tell stays 'checking' with a card: the wait says the card's reason (once),
    and gives up at --timeout saying it, not "still checking"."""
    import json as json_module
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from othello_arena.classroom.admission import BUSY_WAIT

    reason = f"{BUSY_WAIT} (check 1 of at most 3, the next in 5 min): could not tell: the machine was busy (load 9.3)"

    class Busy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            body = json_module.dumps({"id": 7, "version": 1, "status": "checking", "reason": reason,
                                      "card": {"status": "checking", "reason": reason}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Busy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    said: list[str] = []
    try:
        with pytest.raises(SubmitError) as gave_up:
            wait_for_card(f"http://127.0.0.1:{server.server_address[1]}", "token", 7, timeout=1.0, say=said.append,
                          interval=0.2)
    finally:
        server.shutdown()
        server.server_close()
    assert said == [reason]
    assert str(gave_up.value) == f"no card after 1 s: {reason} (see /api/me later)"
