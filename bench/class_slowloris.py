"""Slowloris against a real class server while its ladder plays: are students served, games kept, sandboxes ended?

Run by hand (root or not), from the checkout:

    python bench/class_slowloris.py [--connections 1100] [--seconds 50]

It makes a class of two students, each sending the Python starter (admitted
by the real check), starts ``othello class serve`` at a soft limit of 1024
open files (as most machines give a user), waits for the ladder to play,
then opens the connections from 127.0.0.2 (all of 127/8 is this machine),
each sending a request line and a header every second, while a student polls
``/api/me`` from 127.0.0.1.  It prints the student's answer times, the
ladder's games by status before and after, what the server wrote after its start,
and the processes left under the class folder.
"""

from __future__ import annotations

import argparse
import resource
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the class server tests' helpers: a class, a server process, calls

from test_classroom_server import Server, call, make_class, send_files, version_status, wait_for  # noqa: E402


def games(folder: Path) -> dict[str, int]:
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        return dict(db.execute("SELECT status, COUNT(*) FROM games GROUP BY status").fetchall())
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1100)
    parser.add_argument("--seconds", type=float, default=50.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="class-slowloris-")) / "class"
    tokens = make_class(folder, ["alice", "bob"], ["random", "greedy"], time=0.2)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 1024), hard))
    server = Server(folder)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.connections + 1024), hard))
    try:
        starter = (ROOT / "agents" / "examples" / "starter.py").read_bytes()
        for student in ("alice", "bob"):
            status, sent = send_files(server.base, tokens[student], [("starter.py", starter)],
                                      "openings:python3 starter.py {name}")
            assert status == 201, sent
            card = wait_for(lambda: version_status(server.base, tokens[student], sent["id"]), 300, "a card")
            print(f"{student}: {card['status']}")
        time.sleep(10)
        before = games(folder)
        port = int(server.base.rsplit(":", 1)[1])
        crowd = []
        for _ in range(args.connections):
            connection = socket.socket()
            connection.bind(("127.0.0.2", 0))
            connection.settimeout(10)
            try:
                connection.connect(("127.0.0.1", port))
                connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            except OSError as exc:
                print(f"connection {len(crowd) + 1}: {exc}")
                break
            crowd.append(connection)
        waits = []
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            started = time.monotonic()
            status, _, _ = call(server.base, "/api/me", tokens["alice"])
            waits.append((time.monotonic() - started, status))
            for connection in crowd[:64]:
                try:
                    connection.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass
            time.sleep(1)
        for connection in crowd:
            connection.close()
        after = games(folder)
    finally:
        server.stop()
    times = sorted(seconds for seconds, _ in waits)
    answered = sum(1 for _, status in waits if status == 200)
    print(f"{len(crowd)} slow connections for {args.seconds:g} s")
    print(f"the student: {answered} of {len(waits)} answered, median {times[len(times) // 2] * 1000:.0f} ms, "
          f"max {times[-1] * 1000:.0f} ms")
    print(f"ladder games before: {before}; after: {after}")
    said = server.lines[server.lines.index(next(l for l in server.lines if "Ctrl-C stops it" in l)) + 1:]
    print(f"the server wrote {sum(len(line) + 1 for line in said)} bytes after its start (the checks, the ladder "
          "and the attack)")
    left = subprocess.run(["pgrep", "-f", str(folder)], capture_output=True, text=True).stdout.split()
    print(f"processes left under the class folder: {left}")


if __name__ == "__main__":
    main()
