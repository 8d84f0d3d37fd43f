"""The small example agents (agents/examples/greedy.c, corners.awk): built and played through real files.

Both read openings (PROTOCOL.md section 8): by hand, and through the referee
against agents on the Python runtime.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from agents_helpers import HandDriver, play_by_hand
from opening_helpers import play_from_opening

from othello_arena.protocol import BLACK, WHITE
from othello_arena.protocol.openings import opening_board, parse_opening

EXAMPLES = Path(__file__).resolve().parent.parent / "agents" / "examples"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("awk") is None,
                                reason="needs gcc and awk: apt-get install gcc mawk")


def example_commands(greedy_c: Path) -> dict[str, list[str]]:
    return {"c": [str(greedy_c), "{name}"], "awk": ["awk", "-f", str(EXAMPLES / "corners.awk"), "{name}"]}


@pytest.fixture
def start(tmp_path, greedy_c):
    drivers = []

    def start(kind: str, name: str = "ex") -> HandDriver:
        directory = tmp_path / f"{kind}-{len(drivers)}"
        directory.mkdir()
        command = [part.replace("{name}", name) for part in example_commands(greedy_c)[kind]]
        driver = HandDriver(command, name, directory)
        drivers.append(driver)
        return driver

    yield start
    for driver in drivers:
        driver.close()


def random_choice(seed):
    rng = random.Random(seed)
    return lambda board: rng.choice(board.legal_moves())


@pytest.mark.parametrize("kind", ["c", "awk"])
@pytest.mark.parametrize("colour", [WHITE, BLACK])
def test_example_plays_a_whole_legal_game_by_hand(start, kind, colour):
    driver = start(kind)
    board = play_by_hand(driver, colour, random_choice(7))
    assert board.is_game_over()
    code, _, err = driver.wait_exit()
    assert code == 0, err


@pytest.mark.parametrize("kind", ["c", "awk"])
def test_example_reads_lower_case_crlf_and_notices_an_illegal_move(start, kind):
    driver = start(kind)
    driver.send("B\r\n")
    driver.wait_taken()
    driver.send("(w c 4)\r\n")  # legal: C4 flips D4
    _, move = driver.receive()
    assert move.colour is BLACK
    driver.send("(W H 8)\n")  # flips nothing
    code, out, err = driver.wait_exit()
    assert code == 0
    assert "illegal" in err and "Black wins" in err
    assert not driver.outbox.exists()


@pytest.mark.parametrize("kind", ["c", "awk"])
@pytest.mark.parametrize("opening", ["d3 c5 f6", "f5 d6 c3 d3"])
def test_example_plays_on_from_an_opening_as_both_colours(start, kind, opening):
    """Its first NAME.in holds its colour and the opening's moves: it moves at once if it is to move, else waits."""
    moves = parse_opening(opening)
    for colour in (WHITE, BLACK):
        driver = start(kind)
        chosen = play_from_opening(driver, colour, moves, seed=3)
        after = opening_board(moves)
        # to move after the opening: its first move answers that position; else it waited for ours
        assert (chosen[0][0] == after) == (after.to_move is colour)
        code, _, err = driver.wait_exit()
        assert code == 0, err


@pytest.mark.parametrize("kind", ["c", "awk"])
def test_example_stops_on_an_illegal_move_in_the_opening(start, kind):
    driver = start(kind)
    driver.send("W\n(W D 3)\n(B D 3)\n")  # D3 is taken
    code, _, err = driver.wait_exit()
    assert code == 0 and "illegal" in err and "(B D 3)" in err
    assert not driver.outbox.exists()


@pytest.mark.parametrize("kind", ["c", "awk"])
def test_example_accepts_a_pass_relayed_for_a_lost_turn(start, kind):
    from othello_arena.protocol import Board

    driver = start(kind)
    driver.send("B\n")
    driver.wait_taken()
    driver.send("(W P)\n")  # with --illegal lose-turn, White's illegal move arrives as a pass
    _, move = driver.receive()
    assert move.colour is BLACK and Board(to_move=BLACK).is_legal(move)


@pytest.mark.parametrize("kind", ["c", "awk"])
def test_example_exits_on_the_end_line(start, kind):
    driver = start(kind)
    driver.send("B\n")
    driver.wait_taken()
    driver.send("(END W 3 1 timeout)\n")
    code, _, err = driver.wait_exit()
    assert code == 0, err


# -- real games through the referee ---------------------------------------------------


def referee_game(white: str, black: str, directory: Path, seconds: float = 5.0):
    from othello_arena.agents.registry import builtin_agents
    from othello_arena.referee import AgentSpec, GameConfig, play_game

    builtins = builtin_agents()
    return play_game(AgentSpec.parse(white, builtins=builtins), AgentSpec.parse(black, builtins=builtins),
                     GameConfig(time_per_move=seconds), directory)


def assert_clean_game(record) -> None:
    """A game that ended normally, every move legal from the opening or the start (replayed by the rules core)."""
    from othello_arena.protocol import Board

    assert record.result.termination == "normal", record.result
    board = opening_board(record.opening) if record.opening else Board()
    for entry in record.moves:
        board = board.play(entry.move)
    assert board.is_game_over()
    assert (board.count(WHITE), board.count(BLACK)) == (record.result.white_discs, record.result.black_discs)


@pytest.mark.parametrize("white, black", [("c", "awk"), ("awk", "c")])
def test_examples_play_each_other_through_the_referee(tmp_path, greedy_c, white, black):
    specs = {"c": f"cgreedy={greedy_c} {{name}}", "awk": f"corners=awk -f {EXAMPLES / 'corners.awk'} {{name}}"}
    assert_clean_game(referee_game(specs[white], specs[black], tmp_path / "game"))


@pytest.mark.parametrize("example, builtin", [("c", "random"), ("awk", "greedy")])
def test_examples_play_python_agents_through_the_referee(tmp_path, greedy_c, example, builtin):
    spec = {"c": f"cgreedy={greedy_c} {{name}}", "awk": f"corners=awk -f {EXAMPLES / 'corners.awk'} {{name}}"}[example]
    assert_clean_game(referee_game(spec, builtin, tmp_path / "one"))
    assert_clean_game(referee_game(builtin, spec, tmp_path / "two"))


@pytest.mark.parametrize("example, builtin", [("c", "greedy"), ("awk", "random")])
def test_examples_play_a_game_pair_from_an_opening_with_python_agents(tmp_path, greedy_c, example, builtin):
    """Declared with openings:, through the referee against an agent on the Python runtime (agents/runtime.py)."""
    from othello_arena.referee import AgentSpec, GameConfig, play_game

    spec = {"c": f"openings:cgreedy={greedy_c} {{name}}",
            "awk": f"openings:corners=awk -f {EXAMPLES / 'corners.awk'} {{name}}"}[example]
    ours, theirs = AgentSpec.parse(spec), AgentSpec.builtin(builtin)
    opening = parse_opening("d3 c5 f6")  # Black to move after it
    for white, black, folder in ((ours, theirs, "1"), (theirs, ours, "2")):
        record = play_game(white, black, GameConfig(time_per_move=5.0), tmp_path / folder, opening=opening)
        assert record.opening == opening and record.moves[0].move.colour is BLACK
        assert_clean_game(record)
