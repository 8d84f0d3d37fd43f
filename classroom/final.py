"""``othello class final DIR``: the final tournament on each student's last version admitted before the deadline.

It writes ``DIR/final.toml`` (a tournament file as ``othello tournament``
reads it: the students' built copies, already built and checked, and the
reference agents class.toml names for the final; its results in
``DIR/final/results``) and runs it with the existing runner, then its
report, as the instructor would by hand: ``othello tournament run
final.toml`` and ``othello tournament report final.toml``.  The file lies
in the class's folder because each agent's ``cwd``, ``builds/ID/FP``, must
lie inside the file's folder (an agent's home is its own folder, never more).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Optional

from .settings import ClassSettings
from .store import ClassStore, Version


def final_versions(settings: ClassSettings, store: ClassStore) -> list[Version]:
    """Each student's last admitted version submitted before the deadline (all admitted ones without a deadline)."""
    chosen: dict[str, Version] = {}
    for version in store.admitted_versions():
        submitted = dt.datetime.fromisoformat(version.submitted_at)
        if settings.deadline is None or submitted <= settings.deadline:
            chosen[version.student] = version
    return [chosen[student] for student in sorted(chosen)]


def tournament_file(settings: ClassSettings, versions: list[Version]) -> str:
    """The final's tournament TOML."""
    references = [ref for ref in settings.references if ref.name in settings.final.references]
    everyone_reads_openings = all(version.openings for version in versions)
    lines = ["# Written by othello class final: each student's last admitted version before the deadline.",
             "[tournament]",
             f"name = {json.dumps(settings.name + ' final')}",
             f"format = {json.dumps(settings.final.format)}",
             f"games_per_pairing = {settings.final.games_per_pairing}",
             # the class's time rule as class.toml gives it (under a clock without a cap: the bank alone)
             *(f"{key} = {json.dumps(value) if isinstance(value, str) else f'{value:g}'}"
               for key, value in settings.time.file_keys().items()),
             'results = "final/results"']
    if everyone_reads_openings and settings.final.games_per_pairing % 2 == 0 and settings.ladder.openings.lower() != "none":
        lines.append(f"openings = {json.dumps(settings.ladder.openings)}")
    if settings.final.format == "swiss":
        lines.append(f"rounds = {max(1, math.ceil(math.log2(max(2, len(versions) + len(references))))) + 1}")
    if settings.referee:  # the class's limits of every program ([referee] of class.toml)
        lines += ["", "[referee]", *(f"{key} = {value}" for key, value in settings.referee.items())]
    for version in versions:
        home = settings.folder / "builds" / version.student / version.fingerprint
        lines += ["", "[[agents]]", f"name = {json.dumps(version.student)}",
                  f"command = {json.dumps(version.command)}", f"cwd = {json.dumps(str(home))}",
                  f"# version {version.id}, fingerprint {version.fingerprint}, submitted {version.submitted_at}"]
        if version.openings:
            lines.append("openings = true")
        if version.reads_clock:
            lines.append("reads_clock = true")
    for reference in references:
        lines += ["", "[[agents]]", f"name = {json.dumps(reference.name)}", f"builtin = {json.dumps(reference.builtin)}"]
        if reference.time_per_move:
            lines.append(f"time_per_move = {reference.time_per_move:g}")
    return "\n".join(lines) + "\n"


def run_final(settings: ClassSettings, store: ClassStore, jobs: Optional[int], fresh: bool) -> tuple[Path, int]:
    """Write the final's file and run it, then its report; return the file and the runner's exit status."""
    versions = final_versions(settings, store)
    if len(versions) + len(settings.final.references) < 2:
        raise ValueError("the final needs two players at least: fewer students have an admitted version")
    folder = settings.folder / "final"
    folder.mkdir(exist_ok=True)
    path = settings.folder / "final.toml"
    text = tournament_file(settings, versions)
    changed = not path.exists() or path.read_text(encoding="utf-8") != text
    path.write_text(text, encoding="utf-8")
    started = (folder / "results").exists()
    command = [sys.executable, "-m", "othello_arena", "tournament"]
    if started and not fresh and not changed:
        command += ["resume", str(path)]
    else:
        command += ["run", str(path), "--no-build"] + (["--fresh"] if started else [])
    if jobs:
        command += ["-j", str(jobs)]
    code = subprocess.call(command)
    if code == 0:
        code = subprocess.call([sys.executable, "-m", "othello_arena", "tournament", "report", str(path)])
    return path, code


class FinalProcess:
    """The final started from the API (the instructor's button): ``othello class final DIR`` in its own process."""

    def __init__(self, settings: ClassSettings) -> None:
        self.settings = settings
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.log = settings.folder / "final" / "final.log"

    def start(self) -> bool:
        """Start it; ``False`` if it is already running."""
        if self.process is not None and self.process.poll() is None:
            return False
        self.log.parent.mkdir(exist_ok=True)
        with open(self.log, "wb") as output:
            self.process = subprocess.Popen([sys.executable, "-m", "othello_arena", "class", "final",
                                             str(self.settings.folder)], stdout=output, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        return True

    def state(self) -> dict[str, object]:
        running = self.process is not None and self.process.poll() is None
        code = None if self.process is None or running else self.process.returncode
        try:
            tail = self.log.read_bytes()[-8000:].decode("utf-8", "replace")
        except OSError:
            tail = ""
        report = self.settings.folder / "final" / "results" / "report" / "index.html"
        return {"running": running, "exit": code, "log": tail, "report": report.exists()}

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
