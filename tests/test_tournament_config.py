"""The tournament file: parsing, defaults, paths relative to the file, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from othello_arena.tournaments import config
from othello_arena.tournaments.config import TournamentFileError


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


def test_schedule_key_ignores_clock_but_not_agents(tmp_path: Path) -> None:
    a = config.parse('agents = ["a=x", "b=y"]\n[tournament]\ntime_per_move = 1\n', tmp_path / "t.toml")
    b = config.parse('agents = ["a=z", "b=y"]\n[tournament]\ntime_per_move = 9\n', tmp_path / "t.toml")
    c = config.parse('agents = ["a=x", "c=y"]\n', tmp_path / "t.toml")
    assert a.schedule_key() == b.schedule_key() != c.schedule_key()


@pytest.mark.parametrize(
    "text, message",
    [
        ("agents = [\n", "not valid TOML"),
        ('agents = ["a"]\n', "at least two agents"),
        ('agents = ["a", "a"]\n', "two agents are named 'a'"),
        ('agents = ["a", "b"]\n[tournament]\nformat = "knockout"\n', "format 'knockout' is not one of"),
        ('agents = ["a", "b"]\n[tournament]\ngames_per_pairing = 3\n', "is odd, but every pairing plays both colours"),
        ('agents = ["a", "b"]\n[tournament]\ncolours = "blue"\n', "colours 'blue'"),
        ('agents = ["a", "b"]\n[tournament]\ntime_per_move = -1\n', "time_per_move must be a positive"),
        ('agents = ["a", "b"]\n[tournament]\nconcurrency = 0\n', "concurrency must be"),
        ('agents = ["a", "b"]\n[tournament]\nseed = "x"\n', "seed must be an integer"),
        ('agents = ["a", "b"]\n[tournament]\nformat = "gauntlet"\n', "needs gauntlet"),
        ('agents = ["a", "b"]\n[tournament]\nformat = "gauntlet"\ngauntlet = ["z"]\n', "gauntlet names z"),
        ('agents = ["a", "b"]\n[tournament]\nrounds = 3\n', "rounds only applies"),
        ('agents = ["a", "b"]\n[tournament]\nspeed = 3\n', "unknown key(s) in [tournament]: speed"),
        ('agents = ["a", "b bad"]\n', "name 'b bad'"),
        ('agents = ["a", "b"]\n[extra]\n', "unknown section(s) extra"),
        ('[[agents]]\nname = "a"\ncwd = "nowhere"\ncommand = "x"\n[[agents]]\nname = "b"\n', "is not a directory"),
        ('[[agents]]\nname = "a"\ncolour = "W"\n[[agents]]\nname = "b"\n', "unknown key(s) colour"),
        ('[[agents]]\nname = "a"\nbuild = "make"\n[[agents]]\nname = "b"\n', "build is only for agents with a command"),
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
