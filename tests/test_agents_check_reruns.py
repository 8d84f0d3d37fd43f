"""othello check keeps every game it fails as a record that reruns (issue 37): the fault and its move number, the
opening, and the card's `othello replay ... --rerun NAME --at N` is the real command; a board drift is named as the
likely cause of the failures after it."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.agents.check import FAIL, check_agent
from othello_arena.cli import cli
from othello_arena.protocol import WHITE, GameRecord, Termination, square_name
from othello_arena.referee.spec import AgentSpec

from test_agents_check_openings import FORGETFUL

TESTS = Path(__file__).resolve().parent


def rerun_advice(lines: list[str]) -> list[str]:
    """The arguments of the card's `othello replay GAME --rerun NAME --at N`."""
    text = "\n".join(lines)
    found = re.search(r"`othello replay (\S+) --rerun (\S+) --at (\d+)` runs it again at its first faulty move", text)
    assert found is not None, text
    return [found[1], "--rerun", found[2], "--at", found[3]]


@pytest.mark.slow
@pytest.mark.parametrize("board", ["", "comments"])
def test_a_board_drift_is_named_once_and_its_game_reruns_at_the_illegal_move(board: str) -> None:
    # (with --board comments it draws its board in comments above each move: compared with the referee's)
    shows = f" --board {board}" if board else ""
    card = check_agent(AgentSpec.parse(f"bad={sys.executable} {TESTS / 'broken_agent.py'} drift {{name}}{shows}"), 1.0,
                       attempts=1, startup=2.0)
    failed = [key for key, item in card.items.items() if item.status == FAIL]
    assert {"white", "black", "must-pass", "receives-pass"} <= set(failed), card.lines()
    text = "\n".join(card.lines())
    assert text.count("usually means its board differs from the referee's") == 1
    assert "hint: its first illegal move (game1 at move 7)" in text
    assert "the other failures may follow from it: fix that one first" in text
    # Each failure of a later game says, where it is read, that it may follow from that drift; the first does not.
    # Drawn in its comments, its board is seen to differ at move 7 (its board missed Black's flips of move 6).
    record = GameRecord.load(str(card.kept / "game1.json"))
    positions = [position for position, _ in record.positions()]
    flipped = (positions[6].black ^ positions[5].black) & ~(1 << (record.moves[5].move.square or 0))
    squares = " ".join(square_name(sq) for sq in range(64) if flipped >> sq & 1)
    drift = f"game1 at move 7 ({squares} differ{'s' if ' ' not in squares else ''})"
    cause = ("the board drift its drawn board shows in game1 at move 7" if board else
             "its earlier illegal move, game1 at move 7, where its board most likely drifted from the referee's")
    for key in ("black", "must-pass", "receives-pass"):
        assert card[key].detail.endswith(f"(this may follow from {cause}: see the hint)"), card[key].detail
    assert "may follow" not in card["white"].detail and "may follow" not in card["full-game"].detail
    assert (f"the board it draws in its comments first differs from the referee's in {drift}" in text) == bool(board)
    # The game keeps the fault as the referee would: the result, its reason and move number, the move played.
    assert card.kept is not None
    record = GameRecord.load(str(card.kept / "game1.json"))
    assert record.result is not None and record.result.termination is Termination.ILLEGAL
    assert record.result.move_number == len(record.moves) + 1 == 7 and record.result.winner is not WHITE
    assert record.fault is not None and record.fault.line == "(W G 2)"
    # The card's advice is the real command: it takes the agent back there, and it plays the same move again.
    args = rerun_advice(card.lines())
    assert args[0] == str(card.kept / "game1.json") and args[1:] == ["--rerun", "bad", "--at", "7"]
    result = CliRunner().invoke(cli, ["replay", *args, "--sandbox", "none"])
    assert result.exit_code == 0, result.output
    assert "now:      (W G 2)" in result.output and "recorded: (W G 2)  (the same)" in result.output
    # Its board, drawn in its comments, first differs from the referee's at that move: it missed Black's flips.
    assert ("its board, drawn in its (C ...) comments: first differs from the referee's at move 7, the same before "
            "(3 drawings)" in result.output) == bool(board)
    shutil.rmtree(card.kept)


def test_a_failure_after_an_opening_keeps_the_opening_and_reruns_at_the_move_after_it(tmp_path: Path):
    (tmp_path / "forgetful.py").write_text(FORGETFUL)
    spec = AgentSpec.parse(f"openings:bad={sys.executable} forgetful.py {{name}}", base=tmp_path)
    card = check_agent(spec, 1.0, attempts=0, startup=2.0)
    assert card.first_fault is not None, card.lines()
    game, agent, number = card.first_fault
    assert card.kept is not None
    record = GameRecord.load(str(card.kept / f"{game}.json"))
    assert record.opening, "the first failure is from an opening"
    # counted as the record counts (the opening's moves are not), as the evidence says
    assert number == len(record.moves) + 1 == record.result.move_number
    evidence = "\n".join(line for item in card.items.values() for line in item.evidence)
    assert f"in {game} (" in evidence and f"to play move {number} after the opening" in evidence
    args = rerun_advice(card.lines())
    assert args[1:] == ["--rerun", agent, "--at", str(number)]
    result = CliRunner().invoke(cli, ["replay", *args, "--sandbox", "none"])
    assert result.exit_code == 0, result.output
    assert f"recorded: {record.fault.line}  (the same)" in result.output
    shutil.rmtree(card.kept)
