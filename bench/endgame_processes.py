"""The exact endgame as whole processes: ``othello analyze --exact`` against Edax's ``-solve``, as users type them.

    python bench/endgame_processes.py --edax EDAX/bin/lEdax-x86-64-v3 --edax-dir EDAX            # both sets
    python bench/endgame_processes.py --edax ... --edax-dir ... --set games --mode file          # one set, one mode
    python bench/endgame_processes.py --edax ... --edax-dir ... --busy 4                         # under a known load
    python bench/endgame_processes.py --make-set results/demo/games > bench/endgame_games.obf    # remake the set's first block
    python bench/endgame_processes.py --make-set M1/games M2/games M3/games --empties 21 23 25   # a block more

Two sets: ``games`` (bench/endgame_games.obf, 20-24 empties from the project's own games, its header
says how it was made) and ``ffo`` (FFO #40-#44 from Edax's ``problem/fforum-40-59.obf``, 20-23
empties, checked against the published scores).  Two modes, each solver a whole process timed from
outside (start-up, loading and exit included):

- ``position``: one process per position, ``othello analyze --exact --json OBF`` against
  ``lEdax -solve ONE.obf`` (a file of that one position), alternating who goes first position by
  position, so that a shared machine's load falls on both alike;
- ``file``: one process for the whole set, ``othello analyze --file SET --exact --json`` against
  ``lEdax -solve SET``, then the other way round when ``--repeat`` is 2 or more.

Edax (abulmo/edax-reversi 4.6, built outside this project as its README says) runs on one thread
(``-n 1``) at level 60 (``-l 60``: exact, no selective search; its default level solves 26 empties
at 98 % probability only), with the ``data/eval.dat`` of zero weights that ``bench/endgame_vs_edax.py
--make-zero-eval`` writes.  Every score of the two must agree (and match the published one for FFO);
the script exits 1 otherwise.  Figures: wall and CPU seconds of both, the champion's peak memory
(the operating system's accounting of each finished process); the ratios champion / Edax of wall and
CPU seconds (on a loaded machine the CPU ratio is the steadier one); the load
average (1 minute) before and after each table.  ``--busy N`` runs ``bench/busy_load.py --procs N``
during the measurements (the issue's "under load"), started 20 s before so that the load average shows it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from othello_arena.protocol import format_obf, parse_obf

BENCH = Path(__file__).resolve().parent
GAMES_SET = BENCH / "endgame_games.obf"
# One result line of ``lEdax -solve``: " 1|   20   +38        0:01.369      21000788   15340240 a2 B1 ..."
EDAX_LINE = re.compile(r"^\s*\d+\|\s*(\d+)(@\d+%)?\s+([+-]\d+)\s")
FFO_FIRST, FFO_LAST = 40, 44


@dataclass
class Position:
    name: str
    obf: str  # the OBF line, ";" ended
    empties: int
    published: Optional[int] = None  # the published score (FFO)


@dataclass
class Run:
    """One finished process: wall and CPU seconds, peak memory, what it printed."""

    wall: float
    cpu: float
    peak_mb: float
    out: str


def run(command: list[str], cwd: Optional[Path] = None) -> Run:
    """Start ``command``, wait for it, and take the operating system's accounting of it."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{out}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out)


def load_average() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


# -- the sets ------------------------------------------------------------------------


def read_set(path: Path) -> list[Position]:
    positions = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#%":
            continue
        obf = stripped.split(";")[0].strip() + ";"
        positions.append(Position(f"line {number}", obf, obf.count("-")))
    return positions


def read_ffo(edax_dir: Path) -> list[Position]:
    path = edax_dir / "problem" / "fforum-40-59.obf"
    positions = []
    for offset, line in enumerate(path.read_text().splitlines()):
        number = 40 + offset
        if FFO_FIRST <= number <= FFO_LAST:
            obf, _, rest = line.partition(";")
            best = max(int(item.split(":")[1]) for item in rest.split(";") if ":" in item)
            positions.append(Position(f"#{number}", obf.strip() + ";", obf.count("-"), best))
    return positions


def make_set(games_dirs: list[Path], count: int, empties_cycle: list[int]) -> str:
    """A block of the games set from folders of game records: see the header it writes."""
    from othello_arena.protocol.record import GameRecord

    weak = ("random", "beginner", "greedy")
    games = [g for d in games_dirs for g in sorted(d.iterdir())
             if (g / "game.json").exists() and not any(w in g.name for w in weak)]
    in_turn = ", ".join(str(e) for e in empties_cycle)
    lines = [
        f"# Positions of {in_turn} empties (in turn) from the games under {', '.join(str(d) for d in games_dirs)},",
        "# the folders in that order and each one's games in the order of their names, leaving out those with",
        "# random, beginner or greedy; a game that never had that many empties with a move to play gives none.",
        f"# Made by `python bench/endgame_processes.py --make-set {' '.join(str(d) for d in games_dirs)} --count {count}"
        f" --empties {' '.join(str(e) for e in empties_cycle)}`.",
        "# One OBF line each (X = White, who moves first), then the game it comes from.",
    ]
    wanted = 0
    for index, game in enumerate(games):
        if wanted >= count:
            break
        empties = empties_cycle[index % len(empties_cycle)]
        record = GameRecord.load(str(game / "game.json"))
        for board, _ in record.positions():
            if 64 - bin(board.white | board.black).count("1") == empties and not board.is_game_over():
                lines.append(f"{format_obf(board)}  % {game.parent.parent.name}/{game.name}, {empties} empties")
                wanted += 1
                break
    return "\n".join(lines) + "\n"


# -- the two solvers -----------------------------------------------------------------


def othello_command() -> list[str]:
    """``othello`` as installed beside this Python (the user's command)."""
    script = Path(sys.executable).parent / "othello"
    return [str(script)] if script.exists() else [shutil.which("othello") or "othello"]


def edax_scores(out: str) -> list[int]:
    scores = []
    for line in out.splitlines():
        m = EDAX_LINE.match(line)
        if m:
            if m.group(2):
                raise SystemExit(f"Edax did not solve exactly (selective search):\n{line}")
            scores.append(int(m.group(3)))
    return scores


def champion_scores(out: str) -> list[int]:
    data = json.loads(out.strip().splitlines()[-1])
    reports = data if isinstance(data, list) else [data]
    if not all(r["exact"] for r in reports):
        raise SystemExit(f"the champion did not solve exactly:\n{out}")
    return [int(r["score"]) for r in reports]


class Solvers:
    def __init__(self, edax: Path, edax_dir: Path, work: Path) -> None:
        self.edax, self.edax_dir, self.work = edax, edax_dir, work

    def edax_file(self, path: Path) -> tuple[Run, list[int]]:
        r = run([str(self.edax), "-solve", str(path), "-n", "1", "-l", "60"], cwd=self.edax_dir)
        return r, edax_scores(r.out)

    def champion_file(self, path: Path) -> tuple[Run, list[int]]:
        r = run([*othello_command(), "analyze", "--file", str(path), "--exact", "--json"])
        return r, champion_scores(r.out)

    def edax_position(self, position: Position) -> tuple[Run, list[int]]:
        path = self.work / "one.obf"
        path.write_text(position.obf + "\n")
        return self.edax_file(path)

    def champion_position(self, position: Position) -> tuple[Run, list[int]]:
        r = run([*othello_command(), "analyze", "--exact", "--json", position.obf.rstrip(";")])
        return r, champion_scores(r.out)


# -- the tables ----------------------------------------------------------------------


def check(name: str, edax: list[int], champion: list[int], published: list[Optional[int]]) -> int:
    wrong = 0
    for i, (e, c, p) in enumerate(zip(edax, champion, published)):
        if e != c or (p is not None and c != p):
            print(f"WRONG {name} position {i + 1}: Edax {e:+d}, champion {c:+d}, published {p}")
            wrong += 1
    if len(edax) != len(champion) or len(edax) != len(published):
        print(f"WRONG {name}: {len(edax)} Edax scores, {len(champion)} champion scores, {len(published)} positions")
        wrong += 1
    return wrong


def per_position(solvers: Solvers, name: str, positions: list[Position], repeat: int) -> int:
    """One process a position, alternating; a table row a position, then the totals."""
    load_before = load_average()
    print(f"\n{name}, one process a position (`othello analyze --exact --json OBF` vs `lEdax -solve ONE.obf -n 1 -l 60`):\n")
    print("| position | empties | score | Edax s | champion s | champion / Edax | Edax CPU s | champion CPU s | "
          "CPU champion / Edax | champion peak MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    wrong = 0
    total_e = total_c = total_cpu = total_ecpu = 0.0
    peak = 0.0
    for i, position in enumerate(positions):
        walls: dict[str, list[float]] = {"edax": [], "champion": []}
        cpu = ecpu = peak_here = 0.0
        for k in range(repeat):
            order = ("edax", "champion") if (i + k) % 2 == 0 else ("champion", "edax")
            for who in order:
                if who == "edax":
                    r, edax = solvers.edax_position(position)
                    ecpu += r.cpu
                else:
                    r, champ = solvers.champion_position(position)
                    cpu += r.cpu
                    peak_here = max(peak_here, r.peak_mb)
                walls[who].append(r.wall)
            wrong += check(position.name, edax, champ, [position.published])
        e = sum(walls["edax"]) / repeat
        c = sum(walls["champion"]) / repeat
        total_e += e
        total_c += c
        total_cpu += cpu / repeat
        total_ecpu += ecpu / repeat
        peak = max(peak, peak_here)
        print(f"| {position.name} | {position.empties} | {champ[0]:+d} | {e:.2f} | {c:.2f} | {c / e:.2f} | "
              f"{ecpu / repeat:.2f} | {cpu / repeat:.2f} | {cpu / ecpu:.2f} | {peak_here:.0f} |", flush=True)
    print(f"| **all {len(positions)}** | | | **{total_e:.2f}** | **{total_c:.2f}** | **{total_c / total_e:.2f}** | "
          f"{total_ecpu:.2f} | {total_cpu:.2f} | **{total_cpu / total_ecpu:.2f}** | {peak:.0f} |")
    print(f"\nload average {load_before} before, {load_average()} after")
    return wrong


def per_file(solvers: Solvers, name: str, positions: list[Position], repeat: int) -> int:
    """One process for the whole set, each solver, ``repeat`` times in turn."""
    path = solvers.work / f"{name}.obf"
    path.write_text("".join(p.obf + "\n" for p in positions))
    load_before = load_average()
    print(f"\n{name}, one process for the {len(positions)} positions (`othello analyze --file SET --exact --json` "
          f"vs `lEdax -solve SET -n 1 -l 60`):\n")
    print("| run | first | Edax s | champion s | champion / Edax | Edax CPU s | champion CPU s | CPU champion / Edax | "
          "champion peak MB | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    wrong = 0
    sums = {"edax": 0.0, "champion": 0.0}
    for k in range(repeat):
        order = ("edax", "champion") if k % 2 == 0 else ("champion", "edax")
        runs: dict[str, Run] = {}
        for who in order:
            if who == "edax":
                runs[who], edax = solvers.edax_file(path)
            else:
                runs[who], champ = solvers.champion_file(path)
        wrong += check(name, edax, champ, [p.published for p in positions])
        e, c = runs["edax"], runs["champion"]
        sums["edax"] += e.wall
        sums["champion"] += c.wall
        print(f"| {k + 1} | {order[0]} | {e.wall:.2f} | {c.wall:.2f} | {c.wall / e.wall:.2f} | {e.cpu:.2f} | {c.cpu:.2f} | "
              f"{c.cpu / e.cpu:.2f} | {c.peak_mb:.0f} | {load_average()} |", flush=True)
    if repeat > 1:
        print(f"| **all** | | **{sums['edax']:.2f}** | **{sums['champion']:.2f}** | "
              f"**{sums['champion'] / sums['edax']:.2f}** | | | | | |")
    print(f"\nload average {load_before} before, {load_average()} after")
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edax", type=Path, help="Edax's program (bin/lEdax-...)")
    parser.add_argument("--edax-dir", type=Path, help="the folder Edax runs in (data/eval.dat, problem/)")
    parser.add_argument("--set", choices=("games", "ffo", "both"), default="both")
    parser.add_argument("--mode", choices=("position", "file", "both"), default="both")
    parser.add_argument("--positions", type=Path, default=GAMES_SET, help="the games set (default bench/endgame_games.obf)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each solver on each position / file")
    parser.add_argument("--busy", type=int, default=0, metavar="N", help="run bench/busy_load.py --procs N meanwhile")
    parser.add_argument("--make-set", type=Path, nargs="+", metavar="GAMES_DIR",
                        help="print a block of the games set made from the game records under GAMES_DIR ...")
    parser.add_argument("--count", type=int, default=12, help="positions of --make-set")
    parser.add_argument("--empties", type=int, nargs="+", default=[20, 22, 24],
                        help="--make-set's empties, game by game in turn (default 20 22 24)")
    args = parser.parse_args()
    if args.make_set:
        print(make_set(args.make_set, args.count, args.empties), end="")
        return
    if args.edax is None or args.edax_dir is None:
        parser.error("--edax and --edax-dir are needed")
    sets = []
    if args.set in ("games", "both"):
        sets.append(("games", read_set(args.positions)))
    if args.set in ("ffo", "both"):
        sets.append(("FFO #40-#44", read_ffo(args.edax_dir)))
    busy = None
    if args.busy:
        busy = subprocess.Popen([sys.executable, str(BENCH / "busy_load.py"), "--procs", str(args.busy),
                                 "--seconds", "3600"], start_new_session=True)
        time.sleep(20)
    wrong = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            solvers = Solvers(args.edax.resolve(), args.edax_dir.resolve(), Path(tmp))
            for name, positions in sets:
                if args.mode in ("position", "both"):
                    wrong += per_position(solvers, name, positions, args.repeat)
                if args.mode in ("file", "both"):
                    wrong += per_file(solvers, name, positions, args.repeat)
    finally:
        if busy is not None:
            os.killpg(busy.pid, signal.SIGTERM)  # its spinning children too
            busy.wait()
    print("\nall scores agree" if not wrong else f"\n{wrong} WRONG")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
