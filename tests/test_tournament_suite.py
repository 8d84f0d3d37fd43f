"""Opening suites: symmetry, the generator (a scripted evaluator, then the champion for real), the shipped suite."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import Board
from othello_arena.protocol.openings import (
    canonical_key,
    opening_board,
    parse_opening,
    read_openings,
    suite_path,
    symmetric_boards,
)
from othello_arena.tournaments.schedule.suite import format_suite, generate


def test_mirror_images_are_one_opening() -> None:
    first_moves = {canonical_key(opening_board(parse_opening(m))) for m in ("d3", "c4", "f5", "e6")}
    assert len(first_moves) == 1  # the four first moves are one opening
    # the three replies: diagonal, perpendicular, parallel
    assert len({canonical_key(opening_board(parse_opening(m))) for m in ("d3 c3", "d3 c5", "d3 e3")}) == 3
    board = opening_board(parse_opening("d3 c5 f6 f5"))
    images = symmetric_boards(board)
    assert len(images) == 8 and images[0] == board
    assert all(canonical_key(image) == canonical_key(board) for image in images)
    assert len(set(symmetric_boards(Board()))) == 2  # the start: symmetric under 4 of the 8, mapped to 2 boards


def _discs(board: Board) -> float:
    """A scripted evaluator: the side to move's disc difference."""
    me = board.to_move
    return float(board.count(me) - board.count(me.opponent))


def test_the_generator_keeps_balanced_distinct_openings_from_the_seed() -> None:
    found = generate(30, seed=4, plies=6, within=2.0, evaluate=_discs)
    assert len(found) == 30
    keys = set()
    for moves, score in found:
        assert len(moves) == 6 and abs(score) <= 2
        board = opening_board(moves)
        assert score == _discs(board)
        keys.add(canonical_key(board))
    assert len(keys) == 30  # no two are mirror images
    assert generate(30, seed=4, plies=6, within=2.0, evaluate=_discs) == found  # reproducible
    assert generate(30, seed=5, plies=6, within=2.0, evaluate=_discs) != found
    text = format_suite(found, "made by a test")
    assert text.startswith("# made by a test\n") and "  # " in text.splitlines()[1]


def test_generate_with_the_champion_is_reproducible_and_show_reads_it(tmp_path: Path) -> None:
    runner = CliRunner()
    outputs = []
    for name in ("a.txt", "b.txt"):
        result = runner.invoke(cli, ["openings", "generate", "--count", "3", "--depth", "2", "--seed", "9",
                                     "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        outputs.append((tmp_path / name).read_text())
    assert outputs[0] == outputs[1] and len(read_openings(tmp_path / "a.txt")) == 3
    shown = runner.invoke(cli, ["openings", "show", str(tmp_path / "a.txt")])
    assert shown.exit_code == 0 and "3 openings, 3 distinct up to symmetry, 8-8 plies" in shown.output


def test_the_shipped_balanced_suite() -> None:
    path = suite_path("balanced")
    assert path.is_file(), path
    suite = read_openings(path)
    assert len(suite) >= 1000
    assert all(len(moves) == 8 for moves in suite)
    assert len({canonical_key(opening_board(moves)) for moves in suite}) == len(suite)
    header = path.read_text().splitlines()[0]
    assert header.startswith("# othello openings generate ") and "--seed 1" in header
    for line in path.read_text().splitlines()[2:]:
        assert abs(float(line.split("#")[1])) <= 2.0


def test_play_and_match_take_the_balanced_suite_by_name(tmp_path: Path) -> None:
    from othello_arena.protocol import GameRecord
    from othello_arena.protocol.openings import format_opening

    result = CliRunner().invoke(cli, ["play", "random", "greedy", "--openings", "balanced", "--seed", "3",
                                      "--time", "3", "--out", str(tmp_path / "p"), "-q"])
    assert result.exit_code == 0, result.output
    record = GameRecord.load(str(tmp_path / "p" / "1" / "game.json"))
    shipped = {format_opening(moves) for moves in read_openings(suite_path("balanced"))}
    assert len(record.opening) == 8 and format_opening(record.opening) in shipped
