"""othello check and openings: checked when an agent declares them, noted when it does not."""

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
    assert "openings are not checked: not declared" in "\n".join(card.lines())
