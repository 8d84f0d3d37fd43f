"""The instructor's warm read paths in one process: the dashboard as rendered, /api/class's text, the grade sheet.

    python bench/class_dashboard.py CLASS [--repeat 7] [--profile cumulative|tottime]

Each path is called once to warm up (the first standings, the copies, the roster), the threads that
computes started are waited for, each is called once more, then ``--repeat`` times: the median and the
least of the wall time and of this thread's CPU, and the answer's size.  Run on a copy of a class made by
``bench/class_load.py make`` (a class.sqlite opened here is migrated to this checkout's schema).  With an
older tree on ``PYTHONPATH`` the same script times that tree's paths (those it has).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import threading
import time
from pathlib import Path

from othello_arena.classroom import service
from othello_arena.classroom.app import ClassApi
from othello_arena.classroom.grades import grade_sheet
from othello_arena.classroom.pages import DASHBOARD_GAMES_SHOWN, ClassPages
from othello_arena.classroom.settings import load
from othello_arena.classroom.similarity import DEFAULT_THRESHOLD
from othello_arena.classroom.store import ClassStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", default="", help="print cProfile's 45 first lines sorted by this key")
    args = parser.parse_args()
    settings = load(args.folder)
    store = ClassStore(settings.database)
    api = ClassApi(settings, store, lambda: None)
    pages = ClassPages(api)
    template = pages.templates.env.get_template("dashboard.html")

    def dashboard() -> str:
        data = service.class_view(settings, store, DASHBOARD_GAMES_SHOWN, fresh=False)
        extra = {"versions_html": pages.versions_html(data)} if hasattr(pages, "versions_html") else {}
        return template.render(class_name=settings.name, person="instructor", instructor=True, data=data,
                               final=api.final.state(), verdict_error="", copy_threshold=DEFAULT_THRESHOLD, **extra)

    def class_api() -> str:
        if hasattr(service, "class_text"):
            return service.class_text(service.class_view(settings, store, fresh=False))
        return json.dumps(api.class_data())

    paths = {"dashboard": dashboard, "class_api": class_api, "grade_sheet": lambda: grade_sheet(settings, store)}
    started = time.perf_counter()
    for _ in range(2):
        for path in paths.values():
            path()
        for thread in threading.enumerate():
            if thread.name in ("standings", "copies", "ladder-state"):
                thread.join()
    print(f"warm-up {time.perf_counter() - started:.1f} s", flush=True)
    profiler = cProfile.Profile()
    for name, path in paths.items():
        wall, cpu = [], []
        for _ in range(args.repeat):
            started, used = time.perf_counter(), time.thread_time()
            if args.profile:
                profiler.enable()
            out = path()
            if args.profile:
                profiler.disable()
            wall.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - used)
        print(f"{name:12s} wall median {sorted(wall)[len(wall) // 2] * 1000:7.1f} ms  min {min(wall) * 1000:7.1f}; "
              f"cpu median {sorted(cpu)[len(cpu) // 2] * 1000:7.1f} ms  min {min(cpu) * 1000:7.1f}; "
              f"size {len(out):,}", flush=True)
    if args.profile:
        pstats.Stats(profiler).sort_stats(args.profile).print_stats(45)
    store.close()


if __name__ == "__main__":
    main()
