"""Helpers for the agents' tests: play the referee's part by hand, through real files.

A :class:`HandDriver` starts an agent program in its own directory and
process group, then writes ``NAME.in`` (atomically, as the referee does) and
takes ``NAME.out``, as PROTOCOL.md section 7 describes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from othello_arena.protocol import Board, Colour, Move, parse_message

WAIT = 30.0  # generous: the machine is shared; only a broken agent ever waits this long


class HandDriver:
    """One agent process driven through its files."""

    def __init__(self, command: Sequence[str], name: str, directory: Path, env: Optional[dict] = None) -> None:
        self.name = name
        self.directory = directory
        self.inbox = directory / f"{name}.in"
        self.outbox = directory / f"{name}.out"
        full_env = dict(os.environ, OTHELLO_NAME=name, OTHELLO_DIR=str(directory), OTHELLO_TIME="10")
        full_env.update(env or {})
        self.process = subprocess.Popen(
            list(command), cwd=directory, env=full_env, start_new_session=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

    def send(self, text: str) -> None:
        """Write NAME.in by atomic rename, as the referee does."""
        tmp = self.directory / f".{self.name}.in.tmp"
        tmp.write_text(text, newline="")
        os.replace(tmp, self.inbox)

    def wait_taken(self) -> None:
        """Wait until the agent has deleted NAME.in."""
        deadline = time.monotonic() + WAIT
        while self.inbox.exists():
            assert time.monotonic() < deadline, f"{self.name} never deleted {self.inbox.name}"
            assert self.process.poll() is None or not self.inbox.exists(), "agent exited without reading its file"
            time.sleep(0.01)

    def receive(self) -> tuple[list[str], Move]:
        """Wait for a complete NAME.out, read and delete it; return (comments, move)."""
        deadline = time.monotonic() + WAIT
        while True:
            if self.outbox.exists():
                text = self.outbox.read_text()
                if text.endswith("\n"):
                    break
            assert time.monotonic() < deadline, f"{self.name} wrote no move"
            assert self.process.poll() is None, f"agent exited: {self.process.stderr.read() if self.process.stderr else ''}"
            time.sleep(0.01)
        self.outbox.unlink()
        comments, moves = parse_message(text)
        assert len(moves) == 1, f"expected one move line, got {text!r}"
        return [c.text for c in comments], moves[0]

    def wait_exit(self) -> tuple[int, str, str]:
        """Wait for the process to exit; return (code, stdout, stderr)."""
        out, err = self.process.communicate(timeout=WAIT)
        return self.process.returncode, out, err

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.communicate()


def builtin_command(agent: str, *extra: str) -> list[str]:
    """The command that runs a built-in agent as a program."""
    return [sys.executable, "-m", "othello_arena", "agent", agent, *extra]


def first_legal(board: Board) -> Move:
    """The test's own (deterministic) choice of move."""
    return board.legal_moves()[0]


def play_by_hand(driver: HandDriver, colour: Colour, ours=first_legal) -> Board:
    """Play a whole game against the agent, checking every move it makes.

    Returns the final board; the agent must notice the end by itself.
    """
    board = Board()
    driver.send(colour.value + "\n")
    driver.wait_taken()
    while not board.is_game_over():
        if board.to_move is colour:
            _, move = driver.receive()
            assert move.colour is colour
            board = board.play(move)  # raises if the agent's move is illegal
        else:
            move = ours(board)
            board = board.play(move)
            driver.send(move.line() + "\n")
            if not board.is_game_over():
                driver.wait_taken()
    return board
