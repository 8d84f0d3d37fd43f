"""One time rule: every front end (the command line's --time/--clock, a tournament file, class.toml) reads the same
seconds per move, game clock and cap into the same :class:`TimeRule`, and every line says it in the same words."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import pytest
from click.testing import CliRunner

from othello_arena.classroom.settings import load as load_class
from othello_arena.cli import cli
from othello_arena.referee.clock import FILE_SECONDS, PLAY_SECONDS, TimeRule, time_rule
from othello_arena.tournaments.run.jobs import game_config
from othello_arena.tournaments.schedule import config

# (seconds per move given, clock given) -> the rule, and how every line says it
RULES = [
    (2.0, None, TimeRule(2.0), "2 s per move"),
    (0.5, None, TimeRule(0.5), "0.5 s per move"),
    (None, "300+2", TimeRule(None, (300.0, 2.0)), "clock 300+2"),  # the bank alone: no cap unless given
    (10.0, "300+2", TimeRule(10.0, (300.0, 2.0)), "clock 300+2, 10 s per move at most"),
    (0.5, "3+0.1", TimeRule(0.5, (3.0, 0.1)), "clock 3+0.1, 0.5 s per move at most"),
    (None, " 60 + 0 ", TimeRule(None, (60.0, 0.0)), "clock 60+0"),
]


def from_command_line(tmp_path: Path, seconds: Optional[float], clock: Optional[str]) -> str:
    """The rule ``othello play`` states in its first line (a program that cannot start ends the game at once)."""
    options = [*(["--time", f"{seconds:g}"] if seconds is not None else []),
               *(["--clock", clock] if clock is not None else [])]
    result = CliRunner().invoke(cli, ["play", "random", "x=/no/such/program", "--sandbox", "none", "--seed", "1",
                                      "--out", str(tmp_path / "game"), *options])
    assert result.exit_code == 3, result.output  # 3: an agent could not be started
    found = re.search(r", seed 1, (.*); files in ", result.output)
    assert found, result.output
    return found.group(1)


def from_tournament_file(tmp_path: Path, seconds: Optional[float], clock: Optional[str]) -> config.Tournament:
    keys = [*([f"time_per_move = {seconds}"] if seconds is not None else []),
            *([f'clock = "{clock}"'] if clock is not None else [])]
    text = "[tournament]\n" + "".join(f"{key}\n" for key in keys) + '[[agents]]\nname = "random"\n' \
        '[[agents]]\nname = "greedy"\n'
    return config.parse(text, tmp_path / "t.toml")


def class_folder(tmp_path: Path, seconds: Optional[float], clock: Optional[str]) -> Path:
    folder = tmp_path / "class"
    folder.mkdir()
    keys = [*([f"time_per_move = {seconds}"] if seconds is not None else []),
            *([f'clock = "{clock}"'] if clock is not None else [])]
    (folder / "class.toml").write_text("[class]\n" + "".join(f"{key}\n" for key in keys), encoding="utf-8")
    return folder


@pytest.mark.parametrize("seconds, clock, rule, text", RULES)
def test_every_front_end_reads_the_same_rule_and_says_it_the_same_way(
        tmp_path: Path, seconds: Optional[float], clock: Optional[str], rule: TimeRule, text: str) -> None:
    assert time_rule(seconds, clock, PLAY_SECONDS) == time_rule(seconds, clock, FILE_SECONDS) == rule
    assert rule.text == text

    assert from_command_line(tmp_path, seconds, clock) == text

    tournament = from_tournament_file(tmp_path, seconds, clock)
    assert tournament.time == rule and tournament.time_text == text
    game = game_config(tournament)  # what each of its games is given
    assert game.time_rule == rule and game.time_text == text

    settings = load_class(class_folder(tmp_path, seconds, clock))
    assert settings.time == rule and settings.time.text == text
    assert settings.game.time_rule == rule


@pytest.mark.parametrize("seconds, clock, rule, text", RULES)
def test_a_rule_written_as_a_files_keys_reads_back_the_same(
        seconds: Optional[float], clock: Optional[str], rule: TimeRule, text: str) -> None:
    keys = rule.file_keys()
    written_clock = keys.get("clock")
    written_seconds = keys.get("time_per_move")
    assert isinstance(written_clock, (str, type(None))) and isinstance(written_seconds, (float, type(None)))
    assert time_rule(written_seconds, written_clock, FILE_SECONDS) == rule


def test_without_time_or_clock_each_front_end_takes_its_default(tmp_path: Path) -> None:
    assert from_command_line(tmp_path, None, None) == f"{PLAY_SECONDS:g} s per move"
    assert from_tournament_file(tmp_path, None, None).time == TimeRule(FILE_SECONDS)
    assert load_class(class_folder(tmp_path, None, None)).time == TimeRule(FILE_SECONDS)


def test_odds_are_said_after_the_rule(tmp_path: Path) -> None:
    text = '[tournament]\ntime_per_move = 2\n[[agents]]\nname = "random"\ntime_per_move = 5\n' \
        '[[agents]]\nname = "greedy"\nclock = "60+1"\n'
    tournament = config.parse(text, tmp_path / "t.toml")
    assert tournament.time_text == "2 s per move (random 5 s, greedy clock 60+1)"
    assert game_config(tournament).time_text == tournament.time_text


@pytest.mark.parametrize("seconds, clock, message", [
    (None, "5", "expected BASE+INC in seconds"),
    (None, "0+1", "the base must be more than 0 seconds"),
    (0.0, None, "time per move must be a positive number of seconds"),
])
def test_a_bad_rule_is_refused_with_what_was_wrong(seconds: Optional[float], clock: Optional[str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        time_rule(seconds, clock, PLAY_SECONDS)
