"""The referee playing whole games: agent specs, colours, polling, people, the command line."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from referee_helpers import command, left_running, recorded_pids, write_agent

from othello_arena.cli import cli
from othello_arena.protocol import BLACK, WHITE, GameRecord, Move, MoveRecord, parse_line
from othello_arena.referee import AgentSpec, BuiltinAgents, GameConfig, GameEvent, draw_colours, play_game
from othello_arena.referee.files import Message, read_message

FAST = GameConfig(time_per_move=3, end_grace=0.3)


# -- agent specs ------------------------------------------------------------------


def test_spec_forms(tmp_path: Path) -> None:
    (tmp_path / "alice.py").write_text("")
    alice = AgentSpec.parse("alice=python3 alice.py --name {name} --time {time}", base=tmp_path)
    assert (alice.kind, alice.label, alice.file_name) == ("program", "alice", "alice")
    assert alice.command == ("python3", str(tmp_path / "alice.py"), "--name", "{name}", "--time", "{time}")
    assert alice.argv(Path("/g/alice"), 2.5) == ["python3", str(tmp_path / "alice.py"), "--name", "alice", "--time", "2.5"]
    # a bare word after --name stays a word even if a file of that name exists
    (tmp_path / "foo").write_text("")
    foo = AgentSpec.parse("foo=./foo --name foo awk{x}", base=tmp_path)
    assert foo.command == (str(tmp_path / "foo"), "--name", "foo", "awk{x}")
    me = AgentSpec.parse("manual:me")
    assert (me.kind, me.command, me.is_manual) == ("manual", None, True)
    rnd = AgentSpec.parse("random", builtins=BuiltinAgents(("random", "greedy")))
    assert rnd.kind == "builtin" and rnd.command is not None
    assert rnd.command[-4:] == ("agent", "random", "--name", "random")
    # the referee knows no agent by itself: the names are passed in from above
    with pytest.raises(ValueError, match="no built-in agent 'random' \\(known: none\\)"):
        AgentSpec.parse("random")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty agent"),
        ("=./x", "needs a name"),
        ("x=", "needs a command"),
        ("manual:", "needs a name"),
        ("bad name=./x", "not usable as a file name"),
        ("x='unclosed", "cannot split"),
        ("./agent", "NAME=COMMAND"),
        ("no-such-builtin-agent", "no built-in agent"),
    ],
)
def test_bad_specs_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AgentSpec.parse(text)


def test_colours_are_drawn_from_the_seed() -> None:
    a, b = AgentSpec.manual("a"), AgentSpec.manual("b")
    draws = {draw_colours(a, b, seed)[0].label for seed in range(20)}
    assert draws == {"a", "b"}
    assert draw_colours(a, b, 5) == draw_colours(a, b, 5)
    white, black, seed = draw_colours(a, a, None)
    assert {white.label, black.label} == {"a", "a-2"} and isinstance(seed, int)


def test_message_completeness() -> None:
    d3 = Move.parse("(W D 3)")
    assert read_message("(W D", closed=False) is None
    assert read_message("(W D 3)", closed=False) is None  # the writer may add more
    assert read_message("(W D 3)", closed=True) == Message(d3)
    assert read_message("(C thinking)\n", closed=True) is None  # comments alone are no message
    assert read_message("(C d 9)\r\n(w d 3)\r\n", closed=False) == Message(d3, ("d 9",))
    assert read_message("(W D 3)\n(C still writ", closed=False) == Message(d3)  # a line being written waits
    assert read_message("\n", closed=False) is None
    empty = read_message("\n", closed=True)
    assert empty is not None and empty.move is None and empty.error.startswith("an empty message")
    assert read_message("(C depth 9)\n(W D 3)\n\n", closed=False) == Message(d3, ("depth 9",))
    two = read_message("(W D 3)\n(W C 4)\n", closed=False)
    assert two is not None and two.move is None and "2 move lines" in two.error
    bad = read_message("(C ok)\nhello\n(W D 3)\n", closed=False)  # an unparsable line is an answer: malformed
    assert bad is not None and bad.move is None and bad.comments == ("ok",) and "'hello'" in bad.error


def test_a_forfeit_round_trips_in_the_record() -> None:
    record = GameRecord("a", "b", moves=[MoveRecord(Move.parse("(W P)"), 0.1, ["lost turn"], forfeit=True),
                                         MoveRecord(Move.parse("(B C 5)"), 0.2)])
    again = GameRecord.from_json(record.to_json())
    assert again.moves[0].forfeit and not again.moves[1].forfeit
    assert again.final_board().count(BLACK) == 4


# -- whole games --------------------------------------------------------------------


def test_a_whole_game_relays_every_move(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    events: list[GameEvent] = []
    white = AgentSpec.program("alice", command(script))
    black = AgentSpec.program("bob", command(script))
    record = play_game(white, black, FAST, tmp_path / "g", seed=11, on_event=events.append)
    assert record.result is not None and record.result.termination == "normal"
    board = record.final_board()
    assert board.is_game_over()
    assert (record.result.white_discs, record.result.black_discs) == (board.count(WHITE), board.count(BLACK))
    assert record.seed == 11 and record.white == "alice" and record.black == "bob"
    assert record.moves[0].comments == ["move 0"]
    moves = [e.move for e in events if e.kind == "move"]
    assert moves == [m.move for m in record.moves]
    assert events[-1].kind == "end" and events[-1].record is record
    assert record.extra["agents"]["alice"]["exit_code"] == 0
    assert not (tmp_path / "g" / "alice" / "alice.out").exists()
    assert not (tmp_path / "g" / ".referee").exists()  # removed once empty: no temporary NAME.in left behind
    assert left_running(tmp_path / "g") == []


def test_two_copies_with_a_hard_coded_name_play_each_other(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    spec = AgentSpec.program("foo", command(script, name="foo"))  # --name foo: ignores OTHELLO_NAME
    record = play_game(spec, spec, FAST, tmp_path / "g")
    assert (record.white, record.black) == ("foo", "foo-2")
    assert record.result is not None and record.result.termination == "normal"
    assert (tmp_path / "g" / "foo-2" / "pids").exists()


def test_polling_reads_pieces_and_a_closed_line_without_newline(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    config = GameConfig(time_per_move=3, end_grace=0.3, polling=True)
    white = AgentSpec.program("alice", command(script, "pieces-reopen", 1))
    black = AgentSpec.program("bob", command(script, "nano", 1))
    record = play_game(white, black, config, tmp_path / "g")
    assert record.extra["referee"]["watch"] == "polling"
    assert record.result is not None and record.result.termination == "normal", record.result
    assert left_running(tmp_path / "g") == []


def test_a_builtin_agent_plays_a_program(tmp_path: Path) -> None:
    registry = pytest.importorskip("othello_arena.agents.registry")
    if "random" not in registry.names():
        pytest.skip("no built-in random agent")
    script = write_agent(tmp_path)
    record = play_game(AgentSpec.builtin("random"), AgentSpec.program("bob", command(script)), FAST, tmp_path / "g")
    assert record.result is not None and record.result.termination == "normal", record.result


def test_suspension_stops_the_waiting_agent_and_the_game_goes_on(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    config = GameConfig(time_per_move=3, end_grace=0.3, suspend_waiting=True)
    record = play_game(AgentSpec.program("a", command(script)), AgentSpec.program("b", command(script)), config, tmp_path / "g")
    assert record.result is not None and record.result.termination == "normal", record.result
    assert left_running(tmp_path / "g") == []


@pytest.mark.parametrize("ghost", ["white", "black"])
def test_a_side_that_cannot_start_loses_and_the_other_is_ended(tmp_path: Path, ghost: str) -> None:
    # Both sides start at once, the second (Black) from a starter thread: either may fail alone.
    script = write_agent(tmp_path)
    before = {t.name for t in threading.enumerate()}
    player = AgentSpec.program("bob", command(script))
    missing = AgentSpec.program("ghost", ["/nonexistent/ghost"])
    white, black = (missing, player) if ghost == "white" else (player, missing)
    record = play_game(white, black, FAST, tmp_path / "g")
    assert record.result is not None and record.result.termination == "crash"
    assert record.name(record.result.winner) == "bob"  # type: ignore[arg-type]
    assert "ghost could not be started" in record.result.detail
    assert "cannot start '/nonexistent/ghost'" in record.extra["agents"]["ghost"]["start_error"]
    assert left_running(tmp_path / "g") == []
    assert {t.name for t in threading.enumerate()} - {"inotify-closer"} <= before  # the process's one closer (referee/watch.py) stays


def test_neither_side_starting_is_a_draw(tmp_path: Path) -> None:
    record = play_game(AgentSpec.program("x", ["/nonexistent/x"]), AgentSpec.program("y", ["/nonexistent/y"]),
                       FAST, tmp_path / "g")
    assert record.result is not None and record.result.termination == "crash" and record.result.winner is None
    assert record.result.detail.startswith("neither agent could be started: x could not be started")
    assert "; y could not be started" in record.result.detail


def test_an_agent_started_by_the_starter_thread_lives_until_the_game_ends_it(tmp_path: Path) -> None:
    # PR_SET_PDEATHSIG follows the thread that forked the agent: Black's starter thread stays until teardown.
    script = write_agent(tmp_path)
    config = GameConfig(time_per_move=3, end_grace=0.3, sandbox="none")
    record = play_game(AgentSpec.program("a", command(script)), AgentSpec.program("b", command(script)), config,
                       tmp_path / "g")
    assert record.result is not None and record.result.termination == "normal", record.result
    assert record.extra["agents"]["b"]["exit_code"] == 0  # it ended on its own, at the end line: never killed
    assert len(record.moves) > 50


def test_wait_exit_says_whether_the_program_has_ended(tmp_path: Path) -> None:
    from othello_arena.referee.launch import start_agent

    config = GameConfig(sandbox="none")
    (tmp_path / "quick").mkdir()
    (tmp_path / "slow").mkdir()
    quick = start_agent(AgentSpec.program("q", [sys.executable, "-c", "pass"]), tmp_path / "quick", config,
                        tmp_path / "quick.log", None)
    slow = start_agent(AgentSpec.program("s", [sys.executable, "-c", "import time; time.sleep(60)"]),
                       tmp_path / "slow", config, tmp_path / "slow.log", None)
    try:
        assert quick.wait_exit(30) and quick.returncode == 0
        assert not slow.wait_exit(0.2) and slow.returncode is None
    finally:
        quick.kill_all(term_grace=0)
        slow.kill_all(term_grace=0)
    assert slow.wait_exit(0) and slow.returncode is not None


# -- a person playing by hand ------------------------------------------------------------


def _person(game_dir: Path, name: str, stop: threading.Event) -> None:
    """Play like a person with an editor: read me.in, delete it, save me.out (first legal move)."""
    from othello_arena.protocol import Board, Colour

    inbox, outbox = game_dir / name / f"{name}.in", game_dir / name / f"{name}.out"
    board, colour = Board(), None
    while not stop.is_set():
        if not inbox.exists():
            time.sleep(0.005)
            continue
        text = inbox.read_text()
        inbox.unlink()
        for line in text.splitlines():
            if line.startswith("(END"):
                return
            if colour is None:
                colour = Colour.parse(line)
            else:
                board = board.play(parse_line(line))  # type: ignore[arg-type]
        if colour is board.to_move and not board.is_game_over():
            move = board.legal_moves()[0]
            board = board.play(move)
            outbox.write_text(move.line() + "\n")


def test_a_manual_player_is_prompted_and_plays_through_the_files(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    stop = threading.Event()
    person = threading.Thread(target=_person, args=(tmp_path / "g", "me", stop), daemon=True)
    person.start()
    prompts: list[GameEvent] = []
    try:
        record = play_game(
            AgentSpec.manual("me"), AgentSpec.program("bot", command(script)), FAST, tmp_path / "g",
            on_event=lambda e: prompts.append(e) if e.kind == "waiting" and e.manual else None,
        )
    finally:
        stop.set()
        person.join(5)
    assert record.result is not None and record.result.termination == "normal", record.result
    assert prompts and prompts[0].time_limit is None and prompts[0].path == (tmp_path / "g" / "me" / "me.out").resolve()
    assert record.extra["agents"]["me"]["kind"] == "manual"


# -- the command line -------------------------------------------------------------------


def _agent_arg(script: Path, name: str, fault: str = "none", at: int = 0) -> str:
    return f"{name}={sys.executable} {script} --fault {fault} --at {at}"


def test_cli_plays_and_prints_the_board(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    result = CliRunner().invoke(
        cli, ["play", _agent_arg(script, "alice"), _agent_arg(script, "bob"), "--time", "3", "--seed", "4",
              "--out", str(tmp_path / "g")],
    )
    assert result.exit_code == 0, result.output
    assert "    A B C D E F G H" in result.output and "game over" in result.output
    record = GameRecord.load(str(tmp_path / "g" / "game.json"))
    assert record.result is not None and record.result.termination == "normal"
    lines = result.output.splitlines()
    assert lines[-3] == f"{record.white} (W) vs {record.black} (B): {record.result.summary(record.white, record.black)}"
    assert [line.split(":")[1].strip() for line in lines[-2:]] == [record.white, record.black]  # then each one's time use
    assert all(line.startswith("time: ") and " s a move on average" in line for line in lines[-2:])
    assert record.seed == 4


def test_cli_json_and_a_fault_still_exit_zero(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    result = CliRunner().invoke(
        cli, ["play", _agent_arg(script, "alice", "garbage", 0), _agent_arg(script, "bob", "garbage", 0),
              "--time", "3", "--json", "--out", str(tmp_path / "g")],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["result"]["reason"] == "malformed"
    assert data["result"]["winner"] == "B"  # White faults first


def test_cli_quiet_prints_one_line(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    result = CliRunner().invoke(
        cli, ["play", _agent_arg(script, "a"), _agent_arg(script, "b"), "--time", "3", "-q", "--out", str(tmp_path / "g")],
    )
    assert result.exit_code == 0, result.output
    record = GameRecord.load(str(tmp_path / "g" / "game.json"))
    assert record.result is not None
    # one line: who played which colour, then the result's one summary text
    detail = f": {record.result.detail}" if record.result.detail else ""
    line = f"{record.white} (W) vs {record.black} (B): {record.result.summary(record.white, record.black)}{detail}"
    assert result.stdout.strip().splitlines() == [line]


def test_cli_bad_command_line_and_unstartable_agent(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(cli, ["play", "random", "x="])
    assert bad.exit_code == 2 and "needs a command" in bad.output
    bad_time = runner.invoke(cli, ["play", "random", "random", "--time", "0"])
    assert bad_time.exit_code == 2
    (tmp_path / "file").write_text("")
    bad_out = runner.invoke(cli, ["play", "random", "random", "--out", str(tmp_path / "file" / "g")])
    assert bad_out.exit_code == 1 and "cannot play in" in bad_out.output
    script = write_agent(tmp_path)
    ghost = runner.invoke(cli, ["play", "ghost=/nonexistent/ghost", _agent_arg(script, "bob"), "--time", "3",
                                "-q", "--out", str(tmp_path / "g")])
    assert ghost.exit_code == 3
    assert "cannot start '/nonexistent/ghost'" in ghost.output
    record = GameRecord.load(str(tmp_path / "g" / "game.json"))
    assert record.result is not None and record.result.termination == "crash"
    assert record.name(record.result.winner) == "bob"  # type: ignore[arg-type]


def test_the_watchdog_observer_is_the_fallback_of_direct_inotify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from othello_arena.referee import watch

    def unavailable(*args: object, **kwargs: object) -> None:
        raise OSError("inotify watch limit reached")

    monkeypatch.setattr(watch, "InotifyWaker", unavailable)
    script = write_agent(tmp_path)
    white = AgentSpec.program("alice", command(script, "nano", 1))
    record = play_game(white, AgentSpec.program("bob", command(script)), FAST, tmp_path / "g")
    assert record.extra["referee"]["watch"] == "events"
    assert record.result is not None and record.result.termination == "normal", record.result


def test_games_in_threads_at_once_leave_no_thread_behind(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    play_game(AgentSpec.program("w", command(script)), AgentSpec.program("b", command(script)), FAST, tmp_path / "warm")
    before = {t.name for t in threading.enumerate()}
    records: list[GameRecord] = []

    def one(index: int) -> None:
        spec = AgentSpec.program("x", command(script))
        records.append(play_game(spec, spec, FAST, tmp_path / f"g{index}"))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(records) == 3 and all(r.result and r.result.termination == "normal" for r in records)
    assert {t.name for t in threading.enumerate()} - {"inotify-closer"} <= before  # the process's one closer (referee/watch.py) stays
    for index in range(3):
        assert left_running(tmp_path / f"g{index}") == []


def test_the_rich_board_is_the_protocol_drawing(tmp_path: Path) -> None:
    from othello_arena.protocol import Board
    from othello_arena.referee.display import board_text

    move = Move.parse("(W D 3)")
    board = Board().play(move)
    assert board_text(board, move).plain == "".join(board.draw(move).splitlines(keepends=True)[:10])


def test_cli_manual_player_sees_where_to_write(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    stop = threading.Event()
    person = threading.Thread(target=_person, args=(tmp_path / "g", "me", stop), daemon=True)
    person.start()
    try:
        result = CliRunner().invoke(
            cli, ["play", "manual:me", _agent_arg(script, "bot"), "--time", "3", "-q", "--out", str(tmp_path / "g")],
        )
    finally:
        stop.set()
        person.join(5)
    assert result.exit_code == 0, result.output
    assert "no time limit" in result.stderr
    assert f"Write your move into {(tmp_path / 'g' / 'me' / 'me.out').resolve()}" in result.stderr


def test_a_forked_child_gets_file_events_of_its_own(tmp_path: Path) -> None:
    """A process pool forked after a game (the tournament) must not be left with a dead event reader."""
    import warnings

    script = write_agent(tmp_path)
    spec = AgentSpec.program("x", command(script))
    play_game(spec, spec, FAST, tmp_path / "parent")  # a game in the parent first: nothing of it may stand in the way
    result = tmp_path / "child.txt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (Python 3.12+)
        pid = os.fork()
    if pid == 0:  # the child: play, write what happened, leave at once
        try:
            record = play_game(spec, spec, FAST, tmp_path / "child")
            referee = record.extra["referee"]
            result.write_text(f"{referee['watch']} {referee['file_events']} {record.result.termination}")  # type: ignore[union-attr]
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    mode, events, reason = result.read_text().split()
    assert (mode, reason) == ("inotify", "normal")
    assert int(events) > 60  # the events reached the child's referee (not only its safety timeout)
