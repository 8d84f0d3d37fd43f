"""A steady, known load for the benchmarks' "under load" rows: N processes that spin on the CPU.

    python bench/busy_load.py --procs 4 --seconds 600 &   # a load average of about 4
    ... the benchmark ...
    kill %1

Each process alternates about 90 ms of arithmetic with 10 ms of sleep (a busy neighbour that still
blocks now and then, as test suites and compilers do), so a machine with C cores is loaded to about
``procs`` runnable tasks, and the scheduler's wake-up of a benchmark's own processes is what a shared
machine gives.  Nothing is pinned.  It stops by itself after ``--seconds``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time


def spin(seconds: float, busy: float, idle: float) -> None:
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        busy_until = time.monotonic() + busy
        while time.monotonic() < busy_until:
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        time.sleep(idle)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=4, help="spinning processes (default 4)")
    parser.add_argument("--seconds", type=float, default=600.0, help="stop after this long (default 600)")
    parser.add_argument("--busy-ms", type=float, default=90.0, help="arithmetic between sleeps (default 90 ms)")
    parser.add_argument("--idle-ms", type=float, default=10.0, help="sleep between runs of arithmetic (default 10 ms)")
    args = parser.parse_args()
    workers = [
        multiprocessing.Process(target=spin, args=(args.seconds, args.busy_ms / 1000, args.idle_ms / 1000), daemon=True)
        for _ in range(args.procs)
    ]
    for worker in workers:
        worker.start()
    try:
        for worker in workers:
            worker.join()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
