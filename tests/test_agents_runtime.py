"""The agent side of the protocol: `othello agent` as a real process, driven through real files."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from agents_helpers import HandDriver, builtin_command, play_by_hand
from othello_arena.agents import registry
from othello_arena.agents.cli import agent as agent_command
from othello_arena.protocol import BLACK, WHITE, Board, Move, parse_square


@pytest.fixture
def driver_factory(tmp_path):
    drivers = []

    def start(command, name, **kwargs):
        directory = tmp_path / name
        directory.mkdir()
        driver = HandDriver(command, name, directory, **kwargs)
        drivers.append(driver)
        return driver

    yield start
    for driver in drivers:
        driver.close()


@pytest.mark.parametrize("colour", [WHITE, BLACK])
def test_random_agent_plays_a_whole_game_and_exits_by_itself(driver_factory, colour):
    driver = driver_factory(builtin_command("random"), "random")
    board = play_by_hand(driver, colour)
    assert board.is_game_over()
    code, _, err = driver.wait_exit()
    assert code == 0, err
    assert not driver.outbox.exists()


def test_name_option_chooses_the_file_names(driver_factory):
    driver = driver_factory(builtin_command("random", "--name", "alice"), "alice", env={"OTHELLO_NAME": "ignored"})
    driver.send("W\n")
    _, move = driver.receive()
    assert Board().is_legal(move)


def test_black_waits_then_answers_a_lower_case_crlf_move(driver_factory):
    driver = driver_factory(builtin_command("random"), "bob")
    driver.send("B\n")
    driver.wait_taken()
    driver.send("( w  d 3 )\r\n")
    driver.wait_taken()
    _, move = driver.receive()
    assert move.colour is BLACK
    assert Board().play(Move(WHITE, parse_square("D3"))).is_legal(move)


def test_end_line_makes_the_agent_exit(driver_factory):
    driver = driver_factory(builtin_command("random"), "bob")
    driver.send("B\n")
    driver.wait_taken()
    driver.send("(END B 0 5 timeout)\n")
    code, _, err = driver.wait_exit()
    assert code == 0, err
    assert not driver.outbox.exists()


def test_illegal_opponent_move_is_reported_and_the_agent_claims_the_win(driver_factory):
    driver = driver_factory(builtin_command("random"), "bob")
    driver.send("B\n")
    driver.wait_taken()
    driver.send("(W A 1)\n")  # flips nothing
    code, out, err = driver.wait_exit()
    assert code == 0
    assert "A1" in err and "Black (B) wins" in err
    assert "wins" in out
    assert not driver.outbox.exists()


def test_garbage_in_the_inbox_is_a_protocol_error(driver_factory):
    driver = driver_factory(builtin_command("random"), "bob")
    driver.send("hello\n")
    code, _, err = driver.wait_exit()
    assert code == 2
    assert "colour" in err


def test_unknown_agent_lists_the_known_ones():
    result = CliRunner().invoke(agent_command, ["nobody"])
    assert result.exit_code == 2
    assert "random" in result.output
    with pytest.raises(KeyError, match="known agents: .*random"):
        registry.get_strategy("nobody")
    with pytest.raises(ValueError):
        registry.get_strategy("nobody")


def test_builtin_agents_do_not_load_numba():
    code = (
        "import sys\n"
        "from othello_arena.cli import cli\n"
        "from othello_arena.agents import registry\n"
        "cmd = cli.get_command(None, 'agent')\n"
        "registry.get_strategy('random')\n"
        "assert 'numba' not in sys.modules, 'numba was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_pass_relayed_for_a_lost_turn_is_accepted(driver_factory):
    """With --illegal lose-turn the referee relays the opponent's illegal move as a pass."""
    driver = driver_factory(builtin_command("random"), "bob")
    driver.send("B\n")
    driver.wait_taken()
    driver.send("(W P)\n")  # White had moves: its turn was forfeited
    _, move = driver.receive()
    assert move.colour is BLACK and Board(to_move=BLACK).is_legal(move)


def test_run_agent_api_with_comments(driver_factory, tmp_path):
    """The documented way to write an agent: a strategy function and one call."""
    script = tmp_path / "alice.py"
    script.write_text(
        "from othello_arena.agents.runtime import run_agent\n"
        "def first(board, colour, time_left):\n"
        "    assert 0 < time_left <= 10\n"
        "    return board.legal_moves()[0], ['first legal move', f'{len(board.legal_moves())} to choose from']\n"
        "raise SystemExit(run_agent(first, 'alice'))\n"
    )
    driver = driver_factory([sys.executable, str(script)], "alice")
    driver.send("W\n")
    comments, move = driver.receive()
    assert comments == ["first legal move", "4 to choose from"]
    assert move == Board().legal_moves()[0]


def test_agent_help_lists_every_builtin_and_refuses_an_unknown_one():
    from click.testing import CliRunner

    from othello_arena.agents.registry import names
    from othello_arena.cli import cli

    help_text = " ".join(CliRunner().invoke(cli, ["agent", "--help"]).output.split())
    for name in names():
        assert name in help_text
    refused = CliRunner().invoke(cli, ["agent", "grandmaster"])
    assert refused.exit_code == 2 and "'grandmaster' is not one of" in refused.output


def test_an_agent_whose_referee_died_exits_by_itself(tmp_path):
    # A referee killed with SIGKILL cannot stop its agents: a waiting agent notices that
    # its parent is gone and exits, instead of waiting for NAME.in forever.
    import subprocess
    import sys

    import psutil

    middle = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-m', 'othello_arena', 'agent', 'random', '--name', 'orphan'],"
        " stdin=subprocess.DEVNULL, stderr=open('stderr.log', 'w'))\n"
        "print(p.pid, flush=True)\n"
        # Exit only once the agent waits: its inotify watch exists after it noted its parent.
        # (A fixed sleep was too short under load: an agent still starting when its parent
        # died took the reaper for its parent and waited on.)
        "import os, time\n"
        "deadline = time.monotonic() + 60\n"
        "def watching():\n"
        "    for fd in os.listdir(f'/proc/{p.pid}/fd'):\n"
        "        try:\n"
        "            if 'inotify' in os.readlink(f'/proc/{p.pid}/fd/{fd}'): return True\n"
        "        except OSError: pass\n"
        "    return False\n"
        "while not watching() and time.monotonic() < deadline: time.sleep(0.05)\n"
        "time.sleep(0.2)\n"
    )
    out = subprocess.run([sys.executable, "-c", middle], cwd=tmp_path, capture_output=True, text=True, check=True)
    agent = psutil.Process(int(out.stdout.split()[0]))
    try:
        agent.wait(timeout=30)
    except psutil.TimeoutExpired:
        agent.kill()
        raise AssertionError("the orphaned agent kept waiting") from None
    assert "is gone" in (tmp_path / "stderr.log").read_text()
    assert not (tmp_path / "orphan.out").exists()
