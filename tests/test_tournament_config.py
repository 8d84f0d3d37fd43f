"""The tournament file: parsing, defaults, paths relative to the file, clear errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from othello_arena.tournaments.schedule import config
from othello_arena.tournaments.schedule.config import TournamentFileError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_file_with_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "students" / "alice").mkdir(parents=True)
    path = write(
        tmp_path,
        """
[tournament]
name = "Class"
format = "swiss"
rounds = 4
games_per_pairing = 2
time_per_move = 0.5
concurrency = 2
seed = 7
results = "out"

[referee]
illegal = "lose-turn"

[[agents]]
name = "greedy"

[[agents]]
name = "alice"
command = "python3 alice.py"
cwd = "students/alice"
build = "true"
""",
    )
    t = config.load(path)
    assert t.name == "Class" and t.format == "swiss" and t.rounds == 4
    assert t.agent_names == ["greedy", "alice"]
    assert t.agent("greedy").is_builtin
    assert t.agent("alice").cwd == str(tmp_path / "students" / "alice")
    assert t.results_dir == tmp_path / "out"
    assert t.database == tmp_path / "out" / "tournament.sqlite"
    assert t.concurrency == 2 and t.seed == 7 and t.time_per_move == 0.5
    assert t.referee == {"illegal": "lose-turn"}


def test_string_agents_and_defaults(tmp_path: Path) -> None:
    t = config.load(write(tmp_path, 'agents = ["random", "bob=python3 bob.py"]\n'))
    assert t.format == "round-robin" and t.games_per_pairing == 2 and t.colours == "both"
    assert t.concurrency is None
    assert t.agent("bob").command == "python3 bob.py" and t.agent("bob").cwd == str(tmp_path)
    assert t.results_dir == tmp_path / "results" / "t"


def test_schedule_basis_ignores_clock_and_agents_but_not_seed(tmp_path: Path) -> None:
    a = config.parse('agents = ["a=x", "b=y"]\n[tournament]\ntime_per_move = 1\n', tmp_path / "t.toml")
    b = config.parse('agents = ["a=z", "b=y"]\n[tournament]\ntime_per_move = 9\n', tmp_path / "t.toml")
    c = config.parse('agents = ["a=x", "c=y"]\n', tmp_path / "t.toml")
    d = config.parse('agents = ["a=x", "b=y"]\n[tournament]\nseed = 2\n', tmp_path / "t.toml")
    # Agents come and go (their games are matched by name); the rules of the schedule may not change.
    assert a.schedule_basis() == b.schedule_basis() == c.schedule_basis() != d.schedule_basis()
    # Schema 2 databases kept a key with the agents in it: still computable, to upgrade them.
    assert a.legacy_schedule_key(a.agent_names) != c.legacy_schedule_key(c.agent_names)


@pytest.mark.parametrize(
    "text, message",
    [
        ("agents = [\n", "not valid TOML"),
        ('agents = ["a"]\n', "at least two agents"),
        ('agents = ["a", "a"]\n', "two agents are named 'a'"),
        ('agents = ["a", "b"]\n[tournament]\nformat = "knockout"\n', "format 'knockout' is not one of"),
        ('agents = ["a", "b"]\n[tournament]\ngames_per_pairing = 3\n', "is odd, but every pairing plays both colours"),
        ('agents = ["a", "b"]\n[tournament]\ncolours = "blue"\n', "colours 'blue'"),
        ('agents = ["a", "b"]\n[tournament]\ntime_per_move = -1\n', "time_per_move = -1: expected a positive number of seconds, at most 3600"),
        ('agents = ["a", "b"]\n[tournament]\nconcurrency = 0\n', 'concurrency = 0: expected "auto" or an integer from 1 to 1024'),
        ('agents = ["a", "b"]\n[tournament]\nconcurrency = 5000\n', 'concurrency = 5000: expected "auto" or an integer from 1 to 1024'),
        ('agents = ["a", "b"]\n[tournament]\ngames_per_pairing = 20000000\n',
         "games_per_pairing = 20000000: expected an integer from 1 to 20000"),
        ('agents = ["a", "b"]\n[tournament]\ngames_per_pairing = "2"\n', 'games_per_pairing = "2": expected an integer'),
        ('agents = ["a", "b"]\n[tournament]\ntime_per_move = true\n', "time_per_move = true: expected a number"),
        ('agents = ["a", "b"]\n[tournament]\nbuild_timeout = 0\n', "build_timeout = 0: expected a positive number of seconds, at most 86400"),
        ('agents = ["a", "b", "c"]\n[tournament]\nformat = "swiss"\nrounds = 5000\n', "rounds = 5000: expected an integer from 1 to 1000"),
        ('agents = ["a", "b"]\n[tournament]\nresults = 3\n', "results = 3: expected a string"),
        ('agents = [' + ", ".join(f'"a{i}"' for i in range(400)) + ']\n[tournament]\ngames_per_pairing = 4\n',
         "schedules 319200 games, more than the 100000"),
        ('agents = ["a", "b"]\n[referee]\nsuspend_waiting = "false"\n',
         '[referee] suspend_waiting = "false": expected true or false'),
        ('agents = ["a", "b"]\n[referee]\npolling = "no"\n', '[referee] polling = "no": expected true or false'),
        ('agents = ["a", "b"]\n[referee]\nmemory_mb = 1.5\n', "[referee] memory_mb = 1.5: expected an integer"),
        ('agents = ["a", "b"]\n[referee]\ngrace = "0.1"\n', '[referee] grace = "0.1": expected a number'),
        ('agents = ["a", "b"]\n[referee]\ngrace = -1\n', "[referee]: grace must not be negative"),
        ('agents = ["a", "b"]\n[referee]\nsandbox = "docker"\n', "sandbox 'docker': expected one of bwrap, none"),
        ('agents = ["a", "b"]\n[referee]\ntime_per_move = 5\n',
         "[referee] time_per_move = 5: time_per_move is a [tournament] key; set it in [tournament] only"),
        ('agents = ["a", "b"]\n[referee]\nspeed = 2\n', "unknown key(s) in [referee]: speed"),
        ('agents = ["a", "game.json"]\n', "name 'game.json' is reserved"),
        ('agents = ["a", "build"]\n', "name 'build' is reserved"),
        ('agents = ["a", "a.stderr.log"]\n', "name 'a.stderr.log' is reserved"),
        ('agents = ["a", ".referee"]\n', "name '.referee' must start with a letter or digit"),
        ('agents = ["a", "' + "x" * 100 + '"]\n', "is not usable as a file name"),
        ('[[agents]]\nname = "a"\n[[agents]]\nname = "GAME.JSON"\n', "name 'GAME.JSON' is reserved"),
        ('agents = ["a", "b"]\n[tournament]\nseed = "x"\n', '[tournament] seed = "x": expected an integer'),
        ('agents = ["a", "b"]\n[tournament]\nformat = "gauntlet"\n', "needs gauntlet"),
        ('agents = ["a", "b"]\n[tournament]\nformat = "gauntlet"\ngauntlet = []\n', "needs gauntlet"),
        ('agents = ["a", "b"]\n[tournament]\nformat = "gauntlet"\ngauntlet = ["z"]\n', "gauntlet names z"),
        ('agents = ["a", "b"]\n[tournament]\nrounds = 3\n', "rounds only applies"),
        ('agents = ["a", "b"]\n[tournament]\nspeed = 3\n', "unknown key(s) in [tournament]: speed"),
        ('agents = ["a", "b bad"]\n', "name 'b bad'"),
        ('agents = ["a", "b"]\n[extra]\n', "unknown section(s) extra"),
        ('[[agents]]\nname = "a"\ncwd = "nowhere"\ncommand = "x"\n[[agents]]\nname = "b"\n', "is not a directory"),
        ('[[agents]]\nname = "a"\ncolour = "W"\n[[agents]]\nname = "b"\n', "unknown key(s) colour"),
        ('[[agents]]\nname = "a"\nbuild = "make"\n[[agents]]\nname = "b"\n', "build is only for agents with a command"),
        ('[[agents]]\nname = "a"\ncommand = 5\n[[agents]]\nname = "b"\n', "agent #1 (a): command = 5: expected a string"),
        ('[[agents]]\nname = "a"\nsizes = "yes"\n[[agents]]\nname = "b"\n', 'agent #1 (a): sizes = "yes": expected true or false'),
        ('[[agents]]\nname = 3\n[[agents]]\nname = "b"\n', "agent #1: name = 3: expected a string"),
        ('[[agents]]\ncommand = "x"\n[[agents]]\nname = "b"\n', "agent #1 has no name"),
        ('agents = ["a", "b"]\n[tournament]\nformat = "gauntlet"\ngauntlet = ["a", 3]\n',
         '[tournament] gauntlet = ["a", 3]: expected a list of agent names'),
        ('agents = ["a", "b"]\n[tournament]\nname = "' + "x" * 201 + '"\n',
         "[tournament] name is 201 characters long; expected at most 200"),
        ('[tournament]\nname = "x"\nagents = ["a", "b"]\n',
         "unknown key(s) in [tournament]: agents; agents = ... is written below the [tournament] line, so TOML reads "
         "it as a key of [tournament]: move it above [tournament] (to the top of the file)"),
        ('[referee]\ngrace = 1\nagents = ["a", "b"]\n', "agents = ... is written below the [referee] line"),
    ],
)
def test_errors_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(TournamentFileError) as caught:
        config.load(write(tmp_path, text))
    assert message in str(caught.value)
    assert str(tmp_path / "t.toml") in str(caught.value)


def test_missing_file() -> None:
    with pytest.raises(TournamentFileError, match="no such tournament file"):
        config.load("/nonexistent/t.toml")


def test_unknown_builtin(tmp_path: Path) -> None:
    t = config.load(write(tmp_path, 'agents = ["random", "nosuch"]\n'))
    with pytest.raises(TournamentFileError, match="'nosuch' is not a built-in agent; built-in agents are random"):
        config.check_builtins(t, ["random"])


def test_the_demo_is_valid_from_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from othello_arena.agents import registry
    from othello_arena.cli import cli
    from othello_arena.tournaments.cli import demo_path

    demo = config.load(demo_path())
    config.check_builtins(demo, registry.names())
    assert len(demo.agents) >= 4 and demo.results_dir == demo_path().parent.parent / "results" / "demo"
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["tournament", "check", "--demo"])
    assert result.exit_code == 0, result.output
    assert "round-robin" in result.output
    # The packaged demo keeps its results under the current directory.
    packaged = config.load(demo_path(), results_base=tmp_path / "results" / "demo")
    assert packaged.database == tmp_path / "results" / "demo" / "tournament.sqlite"


def test_referee_types_come_from_the_game_config() -> None:
    """Every GameConfig field (sandbox, added by the referee, included) has a type the file is checked against."""
    import dataclasses

    from othello_arena.referee import GameConfig

    types = config.referee_types()
    assert set(types) == {f.name for f in dataclasses.fields(GameConfig)}
    assert types["suspend_waiting"] is bool and types["manual_time"] is float and types["sandbox"] is str
    assert types["memory_mb"] is int


def test_referee_values_are_kept_typed(tmp_path: Path) -> None:
    t = config.load(write(tmp_path, 'agents = ["a", "b"]\n[referee]\nsuspend_waiting = false\n'
                                    'grace = 1\npolling = true\nsandbox = "none"\n'))
    assert t.referee == {"suspend_waiting": False, "grace": 1.0, "polling": True, "sandbox": "none"}
    assert isinstance(t.referee["grace"], float)


def test_longest_name_is_accepted_and_check_agrees_with_run(tmp_path: Path) -> None:
    """A name at the file-name limit passes; one character more is refused by loading, so by check and run alike."""
    longest = "x" * 64
    assert config.load(write(tmp_path, f'agents = ["a", "{longest}"]\n')).agent_names == ["a", longest]
    from click.testing import CliRunner

    from othello_arena.cli import cli

    path = write(tmp_path, f'agents = ["random", "{longest}y"]\n')
    for command in ("check", "run", "resume", "status"):
        result = CliRunner().invoke(cli, ["tournament", command, str(path)])
        assert result.exit_code == 1 and "is not usable as a file name" in result.output, (command, result.output)


def test_an_agent_may_have_its_own_time_per_move(tmp_path: Path) -> None:
    from othello_arena.referee import GameConfig
    from othello_arena.tournaments.run.jobs import game_config_fields

    text = '[tournament]\ntime_per_move = 1\n[[agents]]\nname = "random"\n[[agents]]\nname = "greedy"\ntime_per_move = {}\n'
    t = config.load(write(tmp_path, text.format("3")))
    assert t.agent("greedy").time_per_move == 3.0 and t.agent("random").time_per_move is None
    game = GameConfig(**game_config_fields(t))
    assert game.time_control("greedy", manual=False).per_move == 3.0
    assert game.time_control("random", manual=False).per_move == 1.0
    for bad, message in (("0", "expected a positive number of seconds"), ('"3"', "expected a number"),
                         ("7200", "at most 3600")):
        with pytest.raises(TournamentFileError, match="greedy.*time_per_move") as caught:
            config.load(write(tmp_path, text.format(bad)))
        assert message in str(caught.value), caught.value


def test_choices_are_read_whatever_their_case_and_separators(tmp_path: Path) -> None:
    for written in ("RR", "Round Robin", "round_robin", "roundrobin"):
        t = config.load(write(tmp_path, f'agents = ["a", "b"]\n[tournament]\nformat = "{written}"\ncolours = " Both"\n'))
        assert (t.format, t.colours) == ("round-robin", "both"), written


@dataclass(frozen=True)
class Room:
    """A table declared as the tournament file's are (as the class server's file may be)."""

    name: str = config.key("the room's name")
    seats: int = config.key("seats in the room", 30, low=1, high=500)
    mode: str = config.key("who may enter", "open", choices=("open", "closed"), aliases=(("shut", "closed"),))
    start: Optional[float] = config.key("seconds before the first game", None, positive=True, unit="seconds")
    hosts: tuple[str, ...] = config.key("who runs it", ())


def test_a_table_is_read_from_its_declaration_alone() -> None:
    """A new key is one field: its type, range or choices and its doc give the parsing, the default and the error."""
    read = config.read_table(Room, {"name": "A", "mode": "Shut", "start": 2, "hosts": "ann"}, "class.toml", "[room]")
    assert read == Room(name="A", seats=30, mode="closed", start=2.0, hosts=("ann",))
    assert isinstance(read.start, float)
    for table, message in [
        ({}, "class.toml: [room] has no name"),
        ({"name": "A", "seats": 0}, "class.toml: [room] seats = 0: expected an integer from 1 to 500"),
        ({"name": "A", "seats": True}, "class.toml: [room] seats = true: expected an integer"),
        ({"name": "A", "mode": "ajar"}, "class.toml: [room] mode 'ajar' is not one of open, closed"),
        ({"name": "A", "start": 0}, "class.toml: [room] start = 0: expected a positive number of seconds"),
        ({"name": "A", "start": "1"}, 'class.toml: [room] start = "1": expected a number'),
        ({"name": "A", "hosts": [1]}, "class.toml: [room] hosts = [1]: expected a list of strings"),
        ({"name": "A", "seat": 3}, "class.toml: unknown key(s) in [room]: seat; known keys are hosts, mode, name, seats, start"),
    ]:
        with pytest.raises(TournamentFileError) as caught:
            config.read_table(Room, table, "class.toml", "[room]")
        assert str(caught.value) == message


def test_every_key_has_a_doc_and_the_instructors_guide_shows_it() -> None:
    """The tables are declared once; the instructors' guide's example file still names every key of them."""
    import dataclasses
    import re

    guide = (Path(__file__).resolve().parent.parent / "docs" / "INSTRUCTORS.md").read_text(encoding="utf-8")
    example = guide[guide.index("A tournament is a TOML file"):guide.index("**Openings.**")]
    written = set(re.findall(r"\b([a-z_]+) = ", example))
    for declaration in (config.TournamentTable, config.AgentEntry, config.MatchTable):
        for item in dataclasses.fields(declaration):
            doc = item.metadata["rule"].doc
            assert doc and "\n" not in doc, item.name
            if declaration is not config.MatchTable:  # (written by othello match, not by hand)
                assert item.name in written, f"docs/INSTRUCTORS.md's example tournament file lacks {item.name}"
    assert config.TOURNAMENT_KEYS == {item.name for item in dataclasses.fields(config.TournamentTable)}


def test_reference_agents_and_student_ids(tmp_path: Path) -> None:
    loaded = config.load(write(tmp_path, '[[agents]]\nname = "greedy"\nreference = true\n'
                                         '[[agents]]\nname = "alice"\nid = "s1234"\n[[agents]]\nname = "bob"\n'))
    assert loaded.references == ("greedy",)
    assert [(a.name, a.id, a.reference) for a in loaded.agents] == [("greedy", "", True), ("alice", "s1234", False),
                                                                     ("bob", "", False)]
    gauntlet = config.load(write(tmp_path, 'agents = ["ref", "a", "b"]\n[tournament]\nformat = "gauntlet"\n'
                                           'gauntlet = ["ref"]\n'))
    assert gauntlet.references == ("ref",)  # a gauntlet's challengers are references too
    for text, message in (
        ('[[agents]]\nname = "a"\nreference = "yes"\n[[agents]]\nname = "b"\n',
         'agent #1 (a): reference = "yes": expected true or false'),
        ('[[agents]]\nname = "a"\nid = 1234\n[[agents]]\nname = "b"\n', "agent #1 (a): id = 1234: expected a string"),
        ('[[agents]]\nname = "a"\nid = "s1"\n[[agents]]\nname = "b"\nid = "s1"\n',
         "agents 'a' and 'b' have the same id 's1'"),
    ):
        with pytest.raises(TournamentFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
            config.load(write(tmp_path, text))


def test_a_game_clock_for_the_tournament_and_for_one_agent(tmp_path: Path) -> None:
    from othello_arena.tournaments.run.jobs import agent_spec, game_config_fields

    (tmp_path / "bob").mkdir()
    text = ('[tournament]\nclock = "10+0.1"\n[[agents]]\nname = "greedy"\n'
            '[[agents]]\nname = "bob"\ncwd = "bob"\ncommand = "./bob {name}"\nclock = "20+0.5"\nreads_clock = true\n')
    tournament = config.parse(text, tmp_path / "t.toml")
    assert tournament.clock == "10+0.1" and tournament.time_per_move is None  # the bank rules: no cap unless given
    fields = game_config_fields(tournament)
    assert fields["clock"] == (10.0, 0.1) and fields["agent_clocks"] == [("bob", (20.0, 0.5))]
    assert agent_spec(tournament.agent("bob")).reads_clock
    assert "clock 10+0.1" in tournament.time_text and "bob clock 20+0.5" in tournament.time_text
    capped = config.parse(text.replace('clock = "10+0.1"', 'clock = "10+0.1"\ntime_per_move = 2'), tmp_path / "t.toml")
    assert capped.time_per_move == 2.0


@pytest.mark.parametrize("where, value", [("[tournament]", '"5"'), ("[tournament]", '"+1"'), ("agent", '"-3+1"')])
def test_a_bad_clock_in_the_file_is_named_with_the_form(tmp_path: Path, where: str, value: str) -> None:
    text = '[tournament]\n[[agents]]\nname = "greedy"\n[[agents]]\nname = "random"\n'
    text = text.replace("[tournament]\n", f"[tournament]\nclock = {value}\n") if where == "[tournament]" \
        else text + f"clock = {value}\n"
    with pytest.raises(config.TournamentFileError, match="clock .*expected BASE\\+INC in seconds"):
        config.parse(text, tmp_path / "t.toml")


def test_a_tournament_keeps_one_mb_of_each_agents_files_and_a_match_keeps_them_all(tmp_path: Path) -> None:
    from othello_arena.tournaments.run.jobs import game_config_fields

    plain = config.load(write(tmp_path, 'agents = ["a", "b"]\n'))
    assert plain.keep_files_mb == 1 and game_config_fields(plain)["keep_files_mb"] == 1
    assert config.load(write(tmp_path, 'agents = ["a", "b"]\n[tournament]\nkeep_files_mb = 0\n')).keep_files_mb == 0
    match = config.load(write(tmp_path, 'agents = ["a", "b"]\n[match]\n'))
    assert match.keep_files_mb is None  # within the disk limit: a student looks at their files
    for text, message in (
        ('agents = ["a", "b"]\n[tournament]\nkeep_files_mb = -1\n', "[tournament] keep_files_mb = -1: expected"),
        ('agents = ["a", "b"]\n[referee]\nkeep_files_mb = 5\n', "keep_files_mb is a [tournament] key"),
    ):
        with pytest.raises(config.TournamentFileError, match=re.escape(message)):
            config.load(write(tmp_path, text))
