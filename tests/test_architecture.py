"""The layers of the package, read from the source: no import runs upwards, and protocol/ has no cycle.

The drawing in README.md (Layout) is the picture of what this checks::

    cli.py  (the command line: every subcommand)
    classroom/  <- web/  <- tournaments/  <- agents/  <- referee/  <- protocol/

Each layer imports only the layers to its right.  Every ``import`` in a
module counts, including those inside functions: a lazy import is still an
arrow.
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
    assert {"protocol.rules", "referee.game", "agents.check", "tournaments.runner", "cli"} <= set(MODULES)
    assert "protocol.rules" in imports_of("protocol.notation", MODULES["protocol.notation"])
    assert "referee.files" in imports_of("referee.game", MODULES["referee.game"])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_a_layer_above_its_own(name: str) -> None:
    upward = sorted(target for target in imports_of(name, MODULES[name]) if layer(target) > layer(name))
    assert not upward, f"{name} imports {', '.join(upward)}, a layer above it ({' < '.join(LAYERS)})"


def test_protocol_has_no_import_cycle() -> None:
    graph = {name: {t for t in imports_of(name, path) if t.startswith("protocol.") and t != name}
             for name, path in MODULES.items() if name.startswith("protocol.")}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycle = path[path.index(name):] + [name]
            raise AssertionError("import cycle in protocol/: " + " -> ".join(cycle))
        if name in done:
            return
        for target in sorted(graph.get(name, ())):
            visit(target, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
