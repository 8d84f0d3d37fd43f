"""The pattern features of the learned evaluation, and its weights file.

A pattern is a list of squares read in order as a base-3 number (0 empty,
1 the side to move, 2 the other side).  Each pattern is placed on the board
in its four rotations (the instances); the instances of a pattern share one
table of weights, so a corner is valued the same in every corner.  The
weights depend on the game stage (empties // ``STAGE_WIDTH``).

Patterns (squares named on the A1 corner; the other instances are rotations):

========  ==========================================  =======
name      squares                                      configs
========  ==========================================  =======
edge+2x   A1..H1 and B2, G2                            59049
corner3   A1 B1 C1 / A2 B2 C2 / A3 B3 C3               19683
row2      A2..H2                                       6561
row3      A3..H3                                       6561
row4      A4..H4                                       6561
diag8     A1 B2 ... H8                                 6561
diag7     A2 B3 ... G8                                 2187
diag6     A3 ... F8                                    729
diag5     A4 ... E8                                    243
diag4     A5 ... D8                                    81
========  ==========================================  =======

then the scalar features: mobility and potential mobility of each side, and
the parity of the empties (one-hot, see :func:`.evaluation.pattern_indices`).

This module only describes the features (no numba): the compiled
evaluation (:mod:`.evaluation`) reads them, the training
(:mod:`.training`) fits their weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Optional

import numpy as np

STAGE_WIDTH = 4  # empties per stage of the learned evaluation
N_SCALARS = 130  # one-hot slots of the scalar features (see evaluation.pattern_indices)
N_SCALAR_FEATURES = 5


def square_number(name: str) -> int:
    """The square's number (A1 = 0 ... H8 = 63) of its name, ``"B2"`` -> 9."""
    return (int(name[1]) - 1) * 8 + "ABCDEFGH".index(name[0])



PATTERNS: dict[str, list[int]] = {
    "edge+2x": [square_number(n) for n in "A1 B1 C1 D1 E1 F1 G1 H1 B2 G2".split()],
    "corner3": [square_number(n) for n in "A1 B1 C1 A2 B2 C2 A3 B3 C3".split()],
    "row2": [square_number(n) for n in "A2 B2 C2 D2 E2 F2 G2 H2".split()],
    "row3": [square_number(n) for n in "A3 B3 C3 D3 E3 F3 G3 H3".split()],
    "row4": [square_number(n) for n in "A4 B4 C4 D4 E4 F4 G4 H4".split()],
    "diag8": [square_number(n) for n in "A1 B2 C3 D4 E5 F6 G7 H8".split()],
    "diag7": [square_number(n) for n in "A2 B3 C4 D5 E6 F7 G8".split()],
    "diag6": [square_number(n) for n in "A3 B4 C5 D6 E7 F8".split()],
    "diag5": [square_number(n) for n in "A4 B5 C6 D7 E8".split()],
    "diag4": [square_number(n) for n in "A5 B6 C7 D8".split()],
}

N_STAGES = 60 // STAGE_WIDTH + 1  # empties 0..60
WEIGHTS_FILE = "weights.npz"


def rotate(sq: int) -> int:
    """The square a quarter turn away (A1 -> H1 -> H8 -> A8)."""
    col, row = sq % 8, sq // 8
    return col * 8 + (7 - row)


@dataclass(frozen=True)
class PatternTables:
    """The instances as arrays for the compiled code."""

    squares: np.ndarray  # int64 [n_instances, 10], padded with -1
    lengths: np.ndarray  # int64 [n_instances]
    offsets: np.ndarray  # int64 [n_instances + 1]: weight offset; last = start of the scalars
    n_features: int  # weights per stage
    n_indices: int  # indices per position (instances + scalar features)


def build_tables() -> PatternTables:
    """The four rotations of every pattern, with the offsets of their weight tables."""
    squares, lengths, offsets = [], [], []
    offset = 0
    for base in PATTERNS.values():
        instance = list(base)
        for _ in range(4):
            squares.append(instance + [-1] * (10 - len(instance)))
            lengths.append(len(instance))
            offsets.append(offset)
            instance = [rotate(s) for s in instance]
        offset += 3 ** len(base)
    offsets.append(offset)
    return PatternTables(
        squares=np.array(squares, dtype=np.int64),
        lengths=np.array(lengths, dtype=np.int64),
        offsets=np.array(offsets, dtype=np.int64),
        n_features=offset + N_SCALARS,
        n_indices=len(lengths) + N_SCALAR_FEATURES,
    )


TABLES = build_tables()


def load_weights(path: Optional[str] = None) -> np.ndarray:
    """The trained weights (int32 [N_STAGES, n_features], centi-discs).

    From ``path``, else the file shipped in the package's ``data/``.  Without
    any file, zeros (an evaluation that knows nothing): the engine still
    plays, by search alone.
    """
    if path is None:
        try:
            ref = resources.files(__package__).joinpath("data", WEIGHTS_FILE)
            with resources.as_file(ref) as real:
                if not real.exists():
                    return np.zeros((N_STAGES, TABLES.n_features), dtype=np.int32)
                return _read(str(real))
        except (FileNotFoundError, ModuleNotFoundError):
            return np.zeros((N_STAGES, TABLES.n_features), dtype=np.int32)
    return _read(path)


def _read(path: str) -> np.ndarray:
    with np.load(path) as data:
        weights: np.ndarray = data["weights"].astype(np.int32)
    expected = (N_STAGES, TABLES.n_features)
    if weights.shape != expected:
        raise ValueError(f"weights file {path} has shape {weights.shape}, expected {expected} (patterns changed?)")
    return weights
