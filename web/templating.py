"""The pages' templates: the web app's own, and under them those of an app built on it (the class server's).

One loader over both folders, the other app's first: its pages extend and
include the web app's (``layout.html``, every page's frame; ``_game_view.html``,
one game's board, moves and replay), so a game looks the same on both
servers and is drawn by one template.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

import jinja2
from starlette.templating import Jinja2Templates

from .gameview import board_of

if TYPE_CHECKING:  # for mypy only: importlib.abc's name warns at run time from Python 3.12 (we support 3.10)
    from importlib.abc import Traversable

WEB_TEMPLATES = resources.files("othello_arena.web").joinpath("templates")


def page_templates(*first: Traversable) -> Jinja2Templates:
    """Templates looked up in the folders ``first``, in order, then in the web app's.

    A name found first hides the web app's: the class's ``base.html`` is its
    own (it extends ``layout.html``), while ``_game_view.html`` is the web app's.
    """
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(folder)) for folder in (*first, WEB_TEMPLATES)])
    env = jinja2.Environment(loader=loader, autoescape=jinja2.select_autoescape())
    env.globals["board_of"] = board_of  # the game view's first paint (_game_view.html)
    return Jinja2Templates(env=env)
