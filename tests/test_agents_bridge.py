"""The GTP bridge, with a real engine: gtp-rhino (Debian package grhino)."""

from __future__ import annotations

import io
import random
import re
import shutil
import sys
from pathlib import Path

import pytest

from agents_helpers import HandDriver, play_by_hand
from othello_arena.agents.bridge import GTPBridge, GTPEngine, GTPError, gtp_colour, gtp_vertex, moves_between, parse_vertex
from othello_arena.protocol import BLACK, WHITE, Board, Move, parse_square, square_name

RHINO = shutil.which("gtp-rhino") or ("/usr/games/gtp-rhino" if Path("/usr/games/gtp-rhino").exists() else None)
needs_rhino = pytest.mark.skipif(RHINO is None, reason="gtp-rhino not installed (apt-get install grhino)")


def test_colours_swap_and_square_labels_stay():
    assert gtp_colour(WHITE) == "black" and gtp_colour(BLACK) == "white"
    assert gtp_vertex(Move(WHITE, parse_square("D3"))) == "d3"
    assert gtp_vertex(Move.pass_(BLACK)) == "pass"
    assert parse_vertex("E6", WHITE) == Move(WHITE, parse_square("E6"))
    assert parse_vertex("PASS", BLACK) == Move.pass_(BLACK)


def test_moves_between_finds_a_move_and_a_pass_then_move():
    start = Board()
    d3 = Move(WHITE, parse_square("D3"))
    assert moves_between(start, start.play(d3)) == [d3]
    assert moves_between(start, start) == []
    assert moves_between(start, Board(to_move=BLACK)) == [Move.pass_(WHITE)]  # a lost turn, relayed as a pass
    assert moves_between(start, Board(white=1, black=2)) is None


def showboard_cells(engine: GTPEngine) -> dict[str, str]:
    """The engine's board as {square label: 'X' | 'O' | '.'}."""
    cells = {}
    for line in engine.send("showboard").splitlines():
        match = re.match(r"^\s*([1-8])\s+((?:[XO.]\s*){8})$", line)
        if match:
            for column, cell in zip("ABCDEFGH", match.group(2).split()):
                cells[f"{column}{match.group(1)}"] = cell
    assert len(cells) == 64
    return cells


@needs_rhino
@pytest.mark.parametrize("colour", [WHITE, BLACK])
def test_rhino_plays_only_legal_moves_and_sees_our_board(colour):
    """A whole game in-process: every engine move is checked by the rules core, and the
    engine's own board (standard orientation) matches ours with colours swapped."""
    log = io.StringIO()
    engine = GTPEngine([RHINO, "-l", "1"], log)
    try:
        bridge = GTPBridge(engine, 5.0)
        rng = random.Random(3)
        board = Board()
        engine_moves = 0
        while not board.is_game_over():
            if board.to_move is colour:
                move, _ = bridge(board, colour, 5.0)
                engine_moves += bool(move)
            else:
                move = rng.choice(board.legal_moves())
            board = board.play(move)  # raises if the engine's move is illegal
        assert engine_moves > 10
        assert "illegal" not in log.getvalue(), log.getvalue()
        refusals = [line for line in log.getvalue().splitlines() if "refused" in line]
        assert all("pass" in line for line in refusals), refusals  # only gtp-rhino's self-skipped passes
        # the engine's last known position is ours, up to the last opponent move
        cells = showboard_cells(engine)
        for sq in range(64):
            ours = bridge.known.at(sq)
            expected = {WHITE: "X", BLACK: "O", None: "."}[ours]
            assert cells[square_name(sq)] == expected, square_name(sq)
    finally:
        engine.close()


def test_an_engine_that_cannot_start_is_a_gtp_error():
    with pytest.raises(GTPError, match="cannot start"):
        GTPEngine(["/nonexistent/engine"])


@needs_rhino
@pytest.mark.parametrize("colour", [WHITE, BLACK])
def test_bridge_command_plays_a_whole_game_through_files(tmp_path, colour):
    command = [sys.executable, "-m", "othello_arena", "bridge", "gtp", "--name", "rhino", "--", RHINO, "-l", "1"]
    driver = HandDriver(command, "rhino", tmp_path)
    try:
        board = play_by_hand(driver, colour)
        assert board.is_game_over()
        code, _, err = driver.wait_exit()
        assert code == 0, err
        assert "illegal" not in err, err
    finally:
        driver.close()


@needs_rhino
def test_bridge_plays_a_real_game_through_the_referee(tmp_path):
    from othello_arena.referee import AgentSpec, GameConfig, play_game

    rhino = AgentSpec.parse(f"rhino={sys.executable} -m othello_arena bridge gtp --name {{name}} -- {RHINO} -l 1")
    record = play_game(AgentSpec.parse("greedy"), rhino, GameConfig(time_per_move=5), tmp_path / "game")
    assert record.result.termination == "normal", record.result
    board = Board()
    for entry in record.moves:
        board = board.play(entry.move)
    assert board.is_game_over()
