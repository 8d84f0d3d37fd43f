"""Multi-prob-cut: the regression that lets a shallow search predict a deep one (Buro, 1997).

A search ``depth`` plies deep of a position is, to a good approximation, a
linear function of a shallower search of the same position plus noise:
``deep = a * shallow + b + e``, with ``e`` of standard deviation ``sigma``.
Where the shallow search says the deep one would almost surely fail high (or
low), the midgame search (:func:`.search.negascout`) cuts without searching
deep: the shallow value must exceed ``(beta + t * sigma - b) / a``, ``t`` the
engine's cut threshold (:data:`.engine.PROBCUT_THRESHOLD`).

The table, per phase of the game (empties // :data:`PHASE_WIDTH`) and per
deep depth, is fitted by :mod:`.probcut_training` on positions the engine
labels itself, and shipped as ``data/probcut.npz``.

The endgame has a table of its own in the same file (:func:`load_endgame_table`):
per number of empties, the exact final score (discs) predicted from a
shallow search of :func:`shallow_depth` of the empties (its value in discs),
``exact = a * shallow + b + e``.  The selective solver (:func:`.search.solve`
with a threshold) cuts where the shallow search says the exact score is
beyond the window by the threshold times sigma; run at growing thresholds
(:data:`ENDGAME_THRESHOLDS`), it finds a good move long before the exact
solve ends, as Edax's and Egaroucid's selectivity levels do.  This module has no
compiled code and imports nothing of the engine (the search reads it): its
table is a plain float64 array.
"""

from __future__ import annotations

from importlib import resources
from typing import Callable, Optional

import numpy as np

PHASE_WIDTH = 10  # empties per phase of the regression table
N_PHASES = 60 // PHASE_WIDTH + 1
MIN_DEPTH = 3  # the shallowest search that tries a cut (its shallow search is depth 1)
MAX_DEPTH = 24  # depths beyond the fitted ones use the deepest fitted row
PARAM_A, PARAM_B, PARAM_SIGMA, PARAM_SHALLOW = 0, 1, 2, 3
N_PARAMS = 4
PROBCUT_FILE = "probcut.npz"

# The endgame's table: a row per number of empties (0-60), the same four parameters, in discs.
ENDGAME_ROWS = 61
ENDGAME_MIN_EMPTIES = 12  # fewer empties: solved exactly even at a selective level (the cut's shallow search costs about what the solve does)
# The selective solver's levels, in hundredths of sigma: the chance that one cut is right is
# 86 %, 93 %, 98 %, 99.5 % (one-sided normal); after the last, the exact solve.
ENDGAME_THRESHOLDS = (110, 150, 200, 260)


def shallow_depth(depth: int) -> int:
    """The depth of the shallow search that predicts a search ``depth`` deep.

    About a quarter less than half the depth, of the same parity: the
    evaluation swings with the side to move at the horizon, and two
    searches ending on the same side agree best (Edax and Egaroucid pair
    depths the same way).
    """
    return max(1, 2 * (depth // 4) + (depth & 1))


def empty_table() -> np.ndarray:
    """A table that cuts nothing: sigma infinite (float64 [N_PHASES, MAX_DEPTH + 1, N_PARAMS])."""
    table = np.zeros((N_PHASES, MAX_DEPTH + 1, N_PARAMS), dtype=np.float64)
    table[:, :, PARAM_A] = 1.0
    table[:, :, PARAM_SIGMA] = np.inf
    for depth in range(MAX_DEPTH + 1):
        table[:, depth, PARAM_SHALLOW] = shallow_depth(depth)
    return table


def empty_endgame_table() -> np.ndarray:
    """An endgame table that cuts nothing: sigma infinite (float64 [ENDGAME_ROWS, N_PARAMS])."""
    table = np.zeros((ENDGAME_ROWS, N_PARAMS), dtype=np.float64)
    table[:, PARAM_A] = 1.0
    table[:, PARAM_SIGMA] = np.inf
    for empties in range(ENDGAME_ROWS):
        table[empties, PARAM_SHALLOW] = shallow_depth(empties)
    return table


def load_table(path: Optional[str] = None) -> np.ndarray:
    """The fitted midgame table, from ``path`` or the package's ``data/``; without a file, one that cuts nothing."""
    return _load(path, "table", (N_PHASES, MAX_DEPTH + 1, N_PARAMS), empty_table)


def load_endgame_table(path: Optional[str] = None) -> np.ndarray:
    """The fitted endgame table (see the module doc), as :func:`load_table`; a file without one: none that cuts."""
    return _load(path, "endgame", (ENDGAME_ROWS, N_PARAMS), empty_endgame_table)


def _load(path: Optional[str], key: str, shape: tuple[int, ...], empty: Callable[[], np.ndarray]) -> np.ndarray:
    if path is None:
        ref = resources.files(__package__).joinpath("data", PROBCUT_FILE)
        with resources.as_file(ref) as real:
            if not real.exists():
                return empty()
            return _read(str(real), key, shape, empty)
    return _read(path, key, shape, empty)


def _read(path: str, key: str, shape: tuple[int, ...], empty: Callable[[], np.ndarray]) -> np.ndarray:
    with np.load(path) as data:
        if key not in data.files:
            return empty()
        table: np.ndarray = np.ascontiguousarray(data[key], dtype=np.float64)
    if table.shape != shape:
        raise ValueError(f"probcut file {path}: its {key!r} has shape {table.shape}, expected {shape}")
    return table
