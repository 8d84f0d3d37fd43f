"""What several test files share: a marker per layer, and the fixtures more than one file builds.

A maintainer's quick loop over one layer is one command:

    python -m pytest -m classroom                 # or protocol, referee, agents, tournaments, web, package
    python -m pytest -m "classroom and not slow"  # without the browser and the whole-week stories

Each test file gets its layer's marker from its name (``LAYER_OF_PREFIX``):
the layers of the package (protocol/ <- referee/ <- agents/ <- tournaments/
<- web/ <- classroom/).  A file of no layer (the import structure, mypy, the
command line's imports) gets ``package``: it checks the whole package.

The helper modules (``tournament_helpers``, ``web_helpers``, ...) stay plain
modules, imported by their top-level names: pytest puts this folder on
``sys.path`` (its default ``prepend`` import mode, tests/ having no
``__init__.py``).  Their fixtures that several files use are made available
here, so a test file needs no import to use them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

from classroom_helpers import make_class
from sandbox_helpers import user  # noqa: F401 - a fixture: the referee as root and as an unprivileged user
from tournament_helpers import agent, write_tournament
from web_helpers import browser  # noqa: F401 - a fixture: Debian's Chromium through Playwright

if TYPE_CHECKING:  # imported where used: a broken class layer fails its own tests, not every layer's collection
    from othello_arena.classroom.settings import ClassSettings
    from othello_arena.classroom.store import ClassStore

ROOT = Path(__file__).resolve().parent.parent

# A test file's layer, by the start of its name; the first that matches wins.
LAYER_OF_PREFIX = {
    "test_protocol_": "protocol",
    "test_referee_": "referee",
    "test_sandbox": "referee",  # referee/sandbox.py
    "test_agents_": "agents",
    "test_champion_": "agents",  # agents/champion/
    "test_tournament_": "tournaments",
    "test_web_": "web",
    "test_classroom_": "classroom",
}
WHOLE_PACKAGE = "package"


def layer_of(file_name: str) -> str:
    """The marker of a test file named ``file_name``: its layer, or ``package``."""
    return next((layer for prefix, layer in LAYER_OF_PREFIX.items() if file_name.startswith(prefix)), WHOLE_PACKAGE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(layer_of(item.path.name))


# -- agents -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def greedy_c(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """agents/examples/greedy.c built with the line in its comment (warnings as errors: an example builds clean)."""
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    binary = tmp_path_factory.mktemp("build") / "greedy"
    source = ROOT / "agents" / "examples" / "greedy.c"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(binary), str(source)], check=True)
    return binary


# -- tournaments ------------------------------------------------------------------------


@pytest.fixture
def tournament_file(tmp_path: Path) -> Callable[..., Path]:
    """``tournament_file(**settings)``: ``tmp_path/t.toml``, two tiny deterministic agents, ``first`` and ``last``.

    ``agents=[...]`` (tables from :func:`tournament_helpers.agent`) and
    ``referee={...}`` as :func:`tournament_helpers.write_tournament` takes them.
    """
    def write(agents: list[str] | None = None, **settings: Any) -> Path:
        return write_tournament(tmp_path, agents or [agent("first", "first"), agent("last", "last")], **settings)

    return write


# -- the class server -------------------------------------------------------------------


@pytest.fixture
def class_folder(tmp_path: Path) -> Callable[..., Path]:
    """``class_folder(students, references, **keys)``: ``tmp_path/class`` made by ``othello class init``.

    ``keys`` edit class.toml (``time`` is init's ``--time``); the tokens are
    in the folder's tokens.csv and instructor.token (or use
    :func:`classroom_helpers.make_class`, which returns them).
    """
    def make(students: list[str], references: list[str], **keys: Any) -> Path:
        folder = tmp_path / "class"
        make_class(folder, students, references, **keys)
        return folder

    return make


@pytest.fixture
def class_store(class_folder: Callable[..., Path]) -> Iterator[Callable[..., tuple[ClassSettings, ClassStore]]]:
    """``class_store(students, references, **keys)``: a new class's settings and its open store, closed at the end."""
    from othello_arena.classroom.settings import load
    from othello_arena.classroom.store import ClassStore

    opened: list[ClassStore] = []

    def open_class(students: list[str], references: list[str], **keys: Any) -> tuple[ClassSettings, ClassStore]:
        settings = load(class_folder(students, references, **keys))
        opened.append(ClassStore(settings.database))
        return settings, opened[-1]

    yield open_class
    for store in opened:
        store.close()
