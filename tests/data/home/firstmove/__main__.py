"""Play the first legal move; the data file (found through ``{home}``) says which greeting to print."""

import os
import sys
import time

from othello_arena.protocol import Board, Colour, parse_line
from othello_arena.protocol.notation import is_end_line

from firstmove import __doc__ as _  # the package itself must be importable: run from {home}

name, data_file = sys.argv[1], sys.argv[2]
with open(data_file) as handle:
    print(handle.read().strip(), file=sys.stderr)


def take() -> str:
    while not os.path.exists(f"{name}.in"):
        time.sleep(0.005)
    with open(f"{name}.in") as handle:
        text = handle.read()
    os.unlink(f"{name}.in")
    return text


board = Board()
me = Colour.parse(take().strip())
while True:
    if board.to_move is me and not board.is_game_over():
        move = board.legal_moves()[0]
        board = board.play(move)
        with open(f"{name}.out.tmp", "w") as handle:
            handle.write(move.line() + "\n")
        os.replace(f"{name}.out.tmp", f"{name}.out")
    for line in take().splitlines():
        if is_end_line(line):
            sys.exit(0)
        if line.strip():
            board = board.play(parse_line(line))
