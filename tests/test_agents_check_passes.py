"""othello check and passes: forced from an opening for an agent that reads openings, steered otherwise, and a
situation never reached is UNTESTED (not tested, not counted against the agent), never a failure."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.agents.check import FAIL, FORCED_PASS_OPENINGS, PASS, ReportCard, check_agent
from othello_arena.agents.cli import check as check_command
from othello_arena.protocol import BLACK, WHITE, GameRecord, Move
from othello_arena.protocol.openings import opening_board, parse_opening
from othello_arena.referee.game import check_opening
from othello_arena.referee.spec import AgentSpec

# A runtime agent that keeps its mobility, as a strong program does: two plies of alpha-beta over its moves minus the
# opponent's and the corners, where a position with no move for it (the opponent having one) is all but lost.
# Deterministic (no clock), and the checker's steering never leaves it without a move (seed 0).  With `nopass` it
# exits when it must pass.
MOBILITY = r'''
import os
import sys
from pathlib import Path
from othello_arena.agents.runtime import AgentSession, default_time

CORNERS = (1 << 0) | (1 << 7) | (1 << 56) | (1 << 63)

def evaluate(board):
    me, them = board.to_move, board.to_move.opponent
    mine, theirs = board.legal_squares(me).bit_count(), board.legal_squares(them).bit_count()
    if mine == 0 and theirs:
        return -1000
    return 10 * (mine - theirs) + 50 * ((board.discs(me) & CORNERS).bit_count() - (board.discs(them) & CORNERS).bit_count())

def negamax(board, depth, alpha, beta):
    if depth == 0 or board.is_game_over():
        return evaluate(board)
    best = -10**6
    for move in board.legal_moves():
        best = max(best, -negamax(board.play_unchecked(move), depth - 1, -beta, -alpha))
        alpha = max(alpha, best)
        if alpha >= beta:
            break
    return best

def mobility(board, colour, time_left):
    moves = board.legal_moves()
    if not moves[0] and sys.argv[2:] == ["nopass"]:
        os._exit(3)
    return max(moves, key=lambda move: -negamax(board.play_unchecked(move), 1, -10**6, 10**6))

raise SystemExit(AgentSession(mobility, sys.argv[1], Path("."), default_time(), sys.stderr).run())
'''


@pytest.fixture
def mobility_agent(tmp_path: Path) -> Path:
    (tmp_path / "mobility.py").write_text(MOBILITY)
    return tmp_path


def spec(home: Path, prefix: str = "", *arguments: str) -> AgentSpec:
    return AgentSpec.parse(f"{prefix}mob={sys.executable} mobility.py {{name}} {' '.join(arguments)}".strip(), base=home)


@pytest.mark.parametrize("passer", [WHITE, BLACK])
def test_the_forced_pass_openings_are_legal_and_force_a_pass_at_once(passer) -> None:
    board = opening_board(parse_opening(FORCED_PASS_OPENINGS[passer]))  # legal, and the game is not over
    assert board.to_move is passer
    assert board.legal_moves() == [Move.pass_(passer)]
    assert board.has_move(passer.opponent) and not board.is_game_over()
    # the referee starts a game from it (the checker's games are the referee's)
    greedy = AgentSpec.builtin("greedy")
    assert check_opening(greedy, greedy, parse_opening(FORCED_PASS_OPENINGS[passer])) == board


def test_an_agent_that_reads_openings_is_made_to_pass_as_both_colours(mobility_agent: Path) -> None:
    card = check_agent(spec(mobility_agent, "openings:"), 1.0, attempts=0, startup=3.0)
    assert card["must-pass"].status == PASS, card.lines()
    assert card["must-pass"].detail == ("passed when it had no move, as White and as Black (from openings that "
                                        "force a pass)")
    assert card["receives-pass"].status == PASS
    assert "as White and as Black" in card["receives-pass"].detail
    assert card.passed and not card.failed


def test_an_agent_that_reads_openings_and_does_not_pass_fails_from_the_opening(mobility_agent: Path) -> None:
    card = check_agent(spec(mobility_agent, "openings:", "nopass"), 1.0, attempts=0, startup=3.0)
    must = card["must-pass"]
    assert must.status == FAIL, card.lines()
    assert must.detail == f"it had to pass (from the opening {FORCED_PASS_OPENINGS[WHITE]}): the agent exited (code 3) without a move"
    assert f"in game3 (as White, White to play move 1 after the opening {FORCED_PASS_OPENINGS[WHITE]}):" in must.evidence[0]
    assert card.failed and not card.passed
    assert "some checks FAILED" in card.lines()
    # both forced games failed, and are kept to replay
    assert card.kept is not None
    records = [GameRecord.load(str(path)) for path in sorted(card.kept.glob("game*.json"))]
    for passer, text in FORCED_PASS_OPENINGS.items():
        forced = [r for r in records if r.opening == parse_opening(text) and (r.white == "mob") == (passer is WHITE)]
        assert len(forced) == 1 and forced[0].fault is not None and forced[0].fault.colour is passer, text
    shutil.rmtree(card.kept)


@pytest.mark.slow
def test_a_strong_program_without_openings_is_never_failed_for_a_pass_it_was_not_steered_into(mobility_agent: Path):
    result = CliRunner().invoke(check_command, ["-q", "--time", "1", "--startup-time", "3", "--attempts", "1",
                                                f"mob={sys.executable} {mobility_agent / 'mobility.py'} {{name}}"])
    assert "FAIL " not in result.output and result.exit_code == 0, result.output
    assert "UNTESTED passes when it must: the check never reached a position where your program must pass" \
        in result.output
    assert ('no check failed; not tested: "passes when it must" (the check could not exercise it; this does not '
            'count against your program)') in result.output
    assert "to have it tested: have your program read openings and declare it (openings:NAME=COMMAND" in result.output
    assert "--attempts" not in result.output  # more steered games would not help it


def test_a_card_with_an_item_not_tested_has_no_failure_and_says_so_in_words() -> None:
    card = ReportCard("strong", 1.0)
    for key, item in card.items.items():
        if key != "must-pass":
            item.grade(True)
    card["must-pass"].detail = "the check never reached a position where your program must pass (in 10 games)"
    card["must-pass"].to_test = "have your program read openings"
    assert not card.passed and not card.failed
    assert [item.key for item in card.untested] == ["must-pass"]
    lines = card.lines()
    assert "  UNTESTED passes when it must: the check never reached a position where your program must pass" in \
        "\n".join(lines)
    assert lines[-2] == ('no check failed; not tested: "passes when it must" (the check could not exercise it; '
                         'this does not count against your program)')
    assert lines[-1] == "to have it tested: have your program read openings"
    card["white"].grade(False, "it crashed")
    assert card.failed and card.lines()[-1] == "some checks FAILED"
