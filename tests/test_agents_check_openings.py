"""othello check, openings and bigger boards: checked when an agent declares them, noted when it does not."""

from __future__ import annotations

import sys
from pathlib import Path

from othello_arena.agents.check import FAIL, PASS, check_agent
from othello_arena.referee import AgentSpec

# A runtime agent that declares openings but reads only the colour of its first NAME.in:
# it thinks the game starts from the start position.
FORGETFUL = r'''
import sys
from pathlib import Path
from othello_arena.agents.runtime import AgentSession, default_time

class Forgetful(AgentSession):
    def handle(self, text):
        if self.colour is None:
            text = text.splitlines()[0] + "\n"
        return super().handle(text)

def first_legal(board, colour, time_left):
    return board.legal_moves()[0]

raise SystemExit(Forgetful(first_legal, sys.argv[1], Path("."), default_time(), sys.stderr).run())
'''


def test_a_builtin_agent_plays_on_from_an_opening_as_both_colours() -> None:
    card = check_agent(AgentSpec.builtin("greedy"), 2.0, attempts=2)
    assert card["openings"].status == PASS, card.lines()
    assert "played on from d3 c5 f6 as both colours" in "\n".join(card.lines())
    assert "sizes" not in card.items  # given as plain greedy: 8x8 only


def test_an_agent_that_declares_openings_but_ignores_them_fails(tmp_path: Path) -> None:
    (tmp_path / "forgetful.py").write_text(FORGETFUL)
    spec = AgentSpec.parse(f"openings:bad={sys.executable} forgetful.py {{name}}", base=tmp_path)
    card = check_agent(spec, 1.0, attempts=1, startup=2.0)
    assert card["openings"].status == FAIL, card.lines()
    assert "from the opening d3 c5 f6" in card["openings"].detail
    assert card["white"].status == PASS  # from the start position it is fine
    assert not card.passed


def test_an_agent_that_does_not_declare_openings_is_not_checked_for_them(tmp_path: Path) -> None:
    (tmp_path / "forgetful.py").write_text(FORGETFUL)
    card = check_agent(AgentSpec.parse(f"plain={sys.executable} forgetful.py {{name}}", base=tmp_path), 1.0,
                       attempts=1, startup=2.0)
    assert "openings" not in card.items
    assert "not checked: openings, as it does not declare them" in "\n".join(card.lines())


# The same mistake on a bigger board: a runtime agent that declares the sizes but reads only the colour
# of its first NAME.in, so it plays 8x8 moves on a 10x10 board.
SIZE_BLIND = FORGETFUL.replace("class Forgetful", "class SizeBlind").replace("Forgetful(first_legal", "SizeBlind(first_legal")


def test_a_builtin_agent_that_plays_every_size_is_checked_on_10x10_and_14x14() -> None:
    from othello_arena.agents.registry import builtin_agents

    card = check_agent(builtin_agents().spec("random"), 2.0, attempts=1)
    assert card["sizes"].status == PASS, card.lines()
    assert "played to the end on 10x10 as White" in card["sizes"].detail and "14x14 as Black" in card["sizes"].detail


def test_an_agent_that_declares_the_sizes_but_ignores_the_size_line_fails(tmp_path: Path) -> None:
    (tmp_path / "blind.py").write_text(SIZE_BLIND)
    card = check_agent(AgentSpec.parse(f"sizes:bad={sys.executable} blind.py {{name}}", base=tmp_path), 1.0,
                       attempts=1, startup=2.0)
    assert card["sizes"].status == FAIL, card.lines()
    assert "on 10x10 as White" in card["sizes"].detail and "illegal move" in card["sizes"].detail
    assert card["white"].status == PASS and not card.passed
