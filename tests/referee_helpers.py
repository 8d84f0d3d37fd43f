"""Helpers for the referee tests: a scripted agent that can misbehave on purpose.

``AGENT`` is a real program (run with the test's Python) that plays the first
legal move each turn, through real files, and at its ``--at`` N-th own move
(0-based) does what ``--fault`` says instead.  Every process it starts
appends its pid to ``pids`` in the agent's directory, so a test can check
that none is left running.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil

AGENT = r'''
import os, signal, subprocess, sys, time
from othello_arena.protocol import Board, Colour, format_move, parse_line, Move, BLACK, WHITE, square_name

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
fault = args.get("--fault", "none")
at = int(args.get("--at", "0"))
name = args.get("--name") or os.environ.get("OTHELLO_NAME", "agent")
limit = float(os.environ.get("OTHELLO_TIME", "60"))
with open("pids", "a") as f:
    f.write(f"{os.getpid()}\n")

def spawn_sleeper(new_session=False):
    code = "import os,time\n" + ("os.setsid()\n" if new_session else "") + "open('pids','a').write(f'{os.getpid()}\\n')\ntime.sleep(1000)"
    subprocess.Popen([sys.executable, "-c", code], start_new_session=False)

if fault == "crash-start":
    sys.exit(3)
if fault == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

def wait_in(before_delete=None):
    path = name + ".in"
    while not os.path.exists(path):
        time.sleep(0.001)
    time.sleep(0.001)
    with open(path) as f:
        text = f.read()
    if before_delete:
        before_delete(text)
    os.remove(path)
    return text

def write(text):
    with open(name + ".out.tmp", "w") as f:
        f.write(text)
    os.rename(name + ".out.tmp", name + ".out")

def misbehave(board, colour, move):
    me = colour.value
    other = colour.opponent.value
    out = name + ".out"
    if fault == "crash":
        sys.exit(1)
    if fault == "silent":
        time.sleep(1000)
    if fault == "late":
        time.sleep(limit + 0.8)
        write(format_move(move)); return
    if fault == "garbage":
        write("hello, referee\n"); return
    if fault == "empty":
        write("\n"); return
    if fault == "two":
        second = board.legal_moves()[-1]
        write(format_move(move) + format_move(second)); return
    if fault == "wrong-colour":
        write(f"({other} {square_name(move.square)[0]} {square_name(move.square)[1]})\n"); return
    if fault == "occupied":
        write(f"({me} D 4)\n" if board.at(27) is not None else f"({me} E 5)\n"); return
    if fault == "occupied-comment":  # a student's debug comment with the faulty move
        write(f"(C depth 3 picks D4)\n({me} D 4)\n" if board.at(27) is not None else f"(C depth 3 picks E5)\n({me} E 5)\n"); return
    if fault == "bad-pass":
        write(f"({me} P)\n"); return
    if fault in ("illegal-square", "lose-turn"):
        write(f"({me} A 1)\n"); return
    if fault == "huge":
        with open(out, "w") as f:
            for _ in range(2000):
                f.write("(C " + "x" * 5000 + ")\n")
            f.write(format_move(move))
        return
    if fault == "pieces":
        text = "(C slow writer)\n" + format_move(move)
        with open(out, "w") as f:
            for ch in text:
                f.write(ch); f.flush(); time.sleep(1.2 / len(text))
        return
    if fault == "pieces-reopen":
        text = format_move(move).rstrip("\n")
        for ch in text:
            with open(out, "a") as f:
                f.write(ch)
            time.sleep(1.2 / len(text))
        return
    if fault == "vim":
        with open("4913", "w") as f:
            pass
        os.remove("4913")
        with open(out + ".swp", "w") as f:
            f.write(format_move(move))
        time.sleep(0.2)
        os.rename(out + ".swp", out); return
    if fault == "nano":
        with open(out, "w") as f:
            f.write(f"({me}")
        time.sleep(0.3)
        with open(out, "r+") as f:
            f.truncate(0)
            f.seek(0)
            time.sleep(0.1)
            f.write(format_move(move).rstrip("\n"))
            f.flush()
            time.sleep(0.3)
        return
    if fault == "bom":  # Windows Notepad's UTF-8
        with open(out + ".tmp", "wb") as f:
            f.write(b"\xef\xbb\xbf" + format_move(move).encode())
        os.rename(out + ".tmp", out); return
    if fault == "utf16":  # Windows Notepad's "Unicode"
        with open(out + ".tmp", "wb") as f:
            f.write(format_move(move).replace("\n", "\r\n").encode("utf-16"))
        os.rename(out + ".tmp", out); return
    if fault == "fifo":
        os.mkfifo(out); return
    if fault == "symlink":
        os.symlink(args["--target"], out); return
    if fault == "fork":
        spawn_sleeper(); write(format_move(move)); return
    if fault == "daemon":  # double fork: the middle process exits at once, the daemon leaves the session
        code = ("import os,sys,time\n"
                "if os.fork(): os._exit(0)\n"
                "os.setsid()\n"
                "open('pids','a').write(f'{os.getpid()}\\n')\n"
                "time.sleep(1000)")
        subprocess.run([sys.executable, "-c", code])
        write(format_move(move)); return
    if fault == "fork-setsid":
        spawn_sleeper(True); write(format_move(move)); return
    if fault == "many-processes":
        for _ in range(8):
            spawn_sleeper()
        time.sleep(1000)
    if fault == "tamper":
        for victim in os.listdir(".."):
            path = os.path.join("..", victim)
            if victim in (os.path.basename(os.getcwd()),) or not os.path.isdir(path):
                continue
            for entry in os.listdir(path):
                if entry.endswith(".in"):
                    os.remove(os.path.join(path, entry))
            with open(os.path.join(path, victim + ".out"), "w") as f:
                f.write(f"({other} A 1)\n")
        with open("../game.json", "w") as f:
            f.write("not a record")
        write(format_move(move)); return
    if fault == "tamper-referee":
        for target, text in (("../game.json", "not a record"), ("../junk.txt", "junk")):
            try:
                with open(target, "w") as f:
                    f.write(text)
            except OSError:
                pass  # sandboxed, the folder above its own (/game) is read-only
        other_dirs = [d for d in os.listdir("..") if os.path.isdir(os.path.join("..", d)) and d != os.path.basename(os.getcwd())]
        for d in other_dirs:
            log = os.path.join("..", d, "stderr.log")
            if os.path.exists(log):
                os.remove(log)
        write(format_move(move)); return
    if fault == "memory-hog":
        hoard = bytearray(1 << 30)  # 1 GiB: over the limit the test sets, so MemoryError
        write(format_move(move)); return
    if fault == "noisy":
        sys.stderr.write("x" * 3_000_000 + "the last words\n")
        sys.stderr.flush()
        write(format_move(move)); return
    raise SystemExit(f"unknown fault {fault}")

GOOD_MOVE = {"bom", "utf16", "daemon", "noisy", "pieces", "pieces-reopen", "vim", "nano", "fork", "fork-setsid", "tamper-referee"}
board = Board()
colour = None
moves_made = 0
def premature(text):
    if fault == "premature" and text.strip() == "B":
        write("(B C 5)\n")  # before its turn: the referee must see it before White's move is relayed
    if fault == "keep-colour":
        time.sleep(1000)  # never deletes its colour file
first = wait_in(premature)
colour = Colour.parse(first.strip())
while True:
    if board.to_move is colour and not board.is_game_over():
        legal = board.legal_moves()
        move = legal[0]
        if fault not in ("none", "premature", "keep-colour", "linger", "ignore-term") and moves_made == at:
            misbehave(board, colour, move)
            if fault == "lose-turn":  # the referee ignored the move: our turn is lost
                board = board.play_unchecked(Move.pass_(colour)); moves_made += 1
                continue
            if fault not in GOOD_MOVE:
                time.sleep(1000)  # the game must end on this fault: wait to be killed
            board = board.play(move); moves_made += 1
            continue
        write(f"(C move {moves_made})\n" + format_move(move))
        board = board.play(move)
        moves_made += 1
        continue
    text = wait_in()
    for line in text.splitlines():
        if line.strip().upper().startswith("(END"):
            if fault in ("linger", "ignore-term"):
                time.sleep(1000)
            sys.exit(0)
        if line.strip():
            move = parse_line(line)
            # under the lose-turn rule a lost turn reaches us as a pass the rules would refuse
            board = board.play_unchecked(move) if move.is_pass else board.play(move)
'''


def write_agent(directory: Path) -> Path:
    """Write the scripted agent into ``directory``; return its path."""
    path = directory / "scripted_agent.py"
    path.write_text(AGENT)
    return path


def command(script: Path, fault: str = "none", at: int = 0, **extra: str) -> list[str]:
    """The command line of the scripted agent with a fault at its ``at``-th move."""
    argv = [sys.executable, str(script), "--fault", fault, "--at", str(at)]
    for key, value in extra.items():
        argv += [f"--{key}", value]
    return argv


def recorded_pids(game_dir: Path) -> list[int]:
    """Every pid the scripted agents of a game wrote down."""
    pids = []
    for path in game_dir.glob("*/pids"):
        pids += [int(line) for line in path.read_text().split()]
    return pids


def left_running(game_dir: Path) -> list[str]:
    """The processes of a game's agents still running, seen from outside their sandboxes.

    Inside its PID namespace an agent cannot know its pid here, so a
    process is found by what it cannot hide: its working directory, its
    command line or its environment naming a folder of the game, or its
    environment holding the seat marker of a game beside it (inside its
    sandbox an agent sees its directory as /game/NAME); a zombie waiting for
    its parent does not count.
    """
    from othello_arena.referee.launch import games_mark

    marker = str(Path(game_dir).resolve())
    seat = f"OTHELLO_SEAT={games_mark(Path(game_dir).resolve().parent)}."
    running = []
    for process in psutil.process_iter():
        try:
            if process.pid == os.getpid() or process.status() == psutil.STATUS_ZOMBIE:
                continue
            seen = [process.cwd(), *process.cmdline(), *(f"{k}={v}" for k, v in process.environ().items())]
        except (psutil.Error, OSError):
            continue
        if any(marker in text or text.startswith(seat) for text in seen):
            running.append(f"{process.pid} {' '.join(process.cmdline())[:80]}")
    return running


__all__ = ["AGENT", "command", "left_running", "recorded_pids", "write_agent", "os"]
