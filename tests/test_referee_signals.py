"""A referee stopped with SIGTERM stops its agents too (real processes, real signals)."""

import signal
import subprocess
import sys
import time

import psutil

SILENT = f"{sys.executable} -c 'import time; time.sleep(1000)'"


def start_and_terminate(args: list[str], cwd) -> tuple[int, list[psutil.Process], str]:
    referee = subprocess.Popen(
        [sys.executable, "-m", "othello_arena", *args], cwd=cwd,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    parent = psutil.Process(referee.pid)
    agents: list[psutil.Process] = []
    deadline = time.monotonic() + 30
    while len(agents) < 2 and time.monotonic() < deadline:  # wait until both agents run
        agents = [
            p for p in parent.children(recursive=True)
            if p.name() != "bwrap" and "sleep(1000)" in " ".join(p.cmdline())  # the agents, not their sandboxes
        ]
        time.sleep(0.1)
    assert len(agents) == 2, "the agents did not start"
    referee.send_signal(signal.SIGTERM)
    _, err = referee.communicate(timeout=30)
    return referee.returncode, agents, err


def test_sigterm_to_othello_play_stops_its_agents(tmp_path):
    code, agents, err = start_and_terminate(
        ["play", f"a={SILENT}", f"b={SILENT}", "--time", "60", "--out", str(tmp_path / "g"), "--quiet"], tmp_path
    )
    assert code == 130
    assert "interrupted" in err
    gone, alive = psutil.wait_procs(agents, timeout=10)
    assert alive == []
