"""The example agents in other languages (agents/examples/): built and played through real files."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from agents_helpers import HandDriver, play_by_hand
from othello_arena.protocol import BLACK, WHITE

EXAMPLES = Path(__file__).resolve().parent.parent / "agents" / "examples"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("awk") is None,
                                reason="needs gcc and awk")


@pytest.fixture(scope="module")
def greedy_c(tmp_path_factory) -> Path:
    """agents/examples/greedy.c built with the line in its comment."""
    binary = tmp_path_factory.mktemp("build") / "greedy"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(binary), str(EXAMPLES / "greedy.c")], check=True)
    return binary


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
    """A game that ended normally, every move legal from the start (replayed by the rules core)."""
    from othello_arena.protocol import Board

    assert record.result.termination == "normal", record.result
    board = Board()
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
