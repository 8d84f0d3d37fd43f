"""The layers of the package, read from the source: no import runs upwards, and no module imports itself round a circle.

Inside tournaments/, what reads results (web/ and tournaments/results/: the read model, the report, the
export, verify) never imports what plays games (tournaments/run/ runner, jobs, pools, build).

The drawing in docs/MAINTAINERS.md (The layers) is the picture of what this checks::

    cli.py  (the command line: every subcommand)
    classroom/  <- web/  <- tournaments/  <- agents/  <- referee/  <- protocol/

Each layer imports only the layers to its right, and within a layer the
modules form no circle either (issue 22).  Every ``import`` in a module
counts, including those inside functions: a lazy import is still an arrow.
The same walk checks that the champion's compiled-code cache digests every
source its compiled code is made from.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "othello_arena"
LAYERS = ["protocol", "referee", "agents", "tournaments", "web", "classroom"]  # lowest first
TOP = len(LAYERS)  # the modules at the root (cli.py, __main__.py) stand on all of them


def modules() -> dict[str, Path]:
    """Every module of the installed package, by dotted name (``referee.game``), tests and benches left out."""
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[0] not in (*LAYERS, "cli", "__main__", "__init__") or "examples" in parts:
            continue
        found[".".join(p for p in parts if p != "__init__") or PACKAGE] = path
    return found


def imports_of(name: str, path: Path) -> set[str]:
    """The package's own modules that ``name`` imports, as dotted names relative to the package."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    if name == PACKAGE:
        package = []
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == PACKAGE:
                target = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:  # "from . import files" names a module, "from .rules import Board" does not
                found.add(".".join([*target, alias.name]) if ".".join([*target, alias.name]) in MODULES else ".".join(target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    found.add(".".join(alias.name.split(".")[1:]))
    return {target for target in found if target}


MODULES = modules()


def layer(name: str) -> int:
    top = name.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else TOP


def test_the_walk_sees_the_package() -> None:
    # the walk itself: it finds the modules and their imports (else the tests below would pass on nothing)
    assert {"protocol.rules", "referee.game", "agents.check", "tournaments.run.runner", "cli"} <= set(MODULES)
    assert "protocol.rules" in imports_of("protocol.notation", MODULES["protocol.notation"])
    assert "referee.files" in imports_of("referee.game", MODULES["referee.game"])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_a_layer_above_its_own(name: str) -> None:
    upward = sorted(target for target in imports_of(name, MODULES[name]) if layer(target) > layer(name))
    assert not upward, f"{name} imports {', '.join(upward)}, a layer above it ({' < '.join(LAYERS)})"


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``a -> b -> a``) of every strongly connected group of modules in ``graph`` (Tarjan's walk)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for target in sorted(graph.get(name, ())):
            if target not in index:
                connect(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group: set[str] = set()
            while name not in group:
                group.add(stack.pop())
            if len(group) > 1 or name in graph.get(name, ()):
                groups.append(group)

    for name in sorted(graph):
        if name not in index:
            connect(name)
    return [cycle_through(min(group), group, graph) for group in groups]


def cycle_through(start: str, group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path from ``start`` back to itself inside ``group`` (breadth first), as a closed list."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        name = queue.pop(0)
        for target in sorted(graph.get(name, set()) & group):
            if target == start:
                return [*paths[name], start]
            if target not in paths:
                paths[target] = [*paths[name], target]
                queue.append(target)
    raise AssertionError(f"{start} is on no cycle of {sorted(group)}")


def import_graph() -> dict[str, set[str]]:
    """Every module of the package and the package's modules it imports (lazy imports included)."""
    return {name: {t for t in imports_of(name, path) if t in MODULES} for name, path in MODULES.items()}


def test_the_cycle_finder_names_a_circle_and_passes_a_tree() -> None:
    # the finder itself (else the test below would pass on nothing): the champion's circle of issue 22,
    # drawn small, and the same modules as a tree
    circle = {"prepare": {"agent"}, "agent": {"engine"}, "engine": {"bitboard", "patterns"},
              "bitboard": {"compiled_cache"}, "compiled_cache": {"prepare"}, "patterns": {"search"},
              "search": {"bitboard"}, "alone": {"alone"}}
    assert sorted(import_cycles(circle)) == [
        ["agent", "engine", "bitboard", "compiled_cache", "prepare", "agent"], ["alone", "alone"]]
    tree = {**circle, "compiled_cache": {"cache_paths"}, "alone": set()}
    assert import_cycles(tree) == []


def test_no_import_cycle_anywhere() -> None:
    # Issue 22: a circle of 8 files in agents/champion/ (prepare -> agent -> engine -> bitboard ->
    # compiled_cache -> prepare) had grown unseen while only protocol/ was checked.
    cycles = import_cycles(import_graph())
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


# What compiled modules of the champion import from outside it for their Python side only (nothing of
# it is compiled in): anything else they import must be among the sources of the compiled-code cache's digest.
PYTHON_SIDE_ONLY = {"agents.champion.training": {"protocol"}}


def test_the_compiled_code_cache_digests_every_source_the_compiled_code_is_made_from() -> None:
    # numba compiles in what a function calls, inlines or reads as a global array, yet checks a cached
    # function against its own file only: a source left out of the digest would leave stale code running.
    from othello_arena.agents.champion.cache_paths import digested_sources

    digested = {path.resolve() for path in digested_sources()}
    compiled = [name for name, path in MODULES.items()
                if name.startswith("agents.champion.") and "@njit" in path.read_text(encoding="utf-8")]
    assert {"agents.champion.bitboard", "agents.champion.evaluation", "agents.champion.search"} <= set(compiled)
    for name in compiled:
        assert MODULES[name].resolve() in digested, name
        for target in sorted(imports_of(name, MODULES[name]) - PYTHON_SIDE_ONLY.get(name, set())):
            assert MODULES[target].resolve() in digested, (
                f"{name} imports {target}, which the compiled-code cache's digest leaves out "
                "(agents/champion/cache_paths.py: OUTSIDE_SOURCES)")


# What plays games, and who only reads what was played (fishtest's split: pages never import the worker).
RUN_MACHINERY = {"tournaments.run.runner", "tournaments.run.jobs", "tournaments.run.pools", "tournaments.run.build"}
READERS = sorted(name for name in MODULES if name.startswith(("web", "tournaments.results")))


def test_the_readers_are_found() -> None:
    assert {"tournaments.results.state", "tournaments.results.report", "tournaments.results.export",
            "tournaments.results.verify", "web.tournament"} <= set(READERS)
    assert RUN_MACHINERY <= set(MODULES)


@pytest.mark.parametrize("name", READERS)
def test_readers_never_import_the_machinery_that_plays_games(name: str) -> None:
    imported = sorted(imports_of(name, MODULES[name]) & RUN_MACHINERY)
    assert not imported, f"{name} reads results but imports {', '.join(imported)}: read through tournaments.results.state"


# The class server's database is one typed store (issue 40): every SQL statement of classroom/ is in store.py.
CLASSROOM = sorted(name for name in MODULES if name.startswith("classroom."))


def names_sqlite3(path: Path) -> bool:
    """Whether a module imports sqlite3 (``import sqlite3``, ``from sqlite3 import ...``), lazily or not."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "sqlite3" for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "sqlite3":
            return True
    return False


def test_in_classroom_only_the_store_imports_sqlite3() -> None:
    assert "classroom.store" in CLASSROOM and names_sqlite3(MODULES["classroom.store"])  # the walk sees it
    importers = [name for name in CLASSROOM if names_sqlite3(MODULES[name])]
    assert importers == ["classroom.store"], f"{importers}: only classroom/store.py speaks to the database"
