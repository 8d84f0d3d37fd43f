"""The package is type-checked strictly (python-chess's habit); the check runs with the tests."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def mypy_strict_protocol(root: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """mypy --strict on ``root``/protocol, whatever the checkout folder is called.

    The repository root is the package ``othello_arena`` and holds an
    ``__init__.py``, so mypy would climb from protocol/ to the checkout
    folder and take its name for a package: a clone called ``othello-arena``
    is no valid package name (issue 11).  ``--explicit-package-bases``
    makes protocol/ a package rooted where mypy runs.
    """
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--explicit-package-bases", "--cache-dir", str(cache), "protocol/"],
        cwd=root, capture_output=True, text=True,
    )


def test_protocol_package_passes_mypy_strict(tmp_path):
    result = mypy_strict_protocol(ROOT, tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_check_passes_in_a_checkout_named_after_the_project(tmp_path):
    clone = tmp_path / "othello-arena"
    shutil.copytree(ROOT / "protocol", clone / "protocol", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "__init__.py", clone / "__init__.py")
    result = mypy_strict_protocol(clone, tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_whole_package_passes_mypy_strict(tmp_path):
    """Every module of the installed package, with the settings in pyproject.toml ([tool.mypy])."""
    # mypy finds the package by its import name: a link named othello_arena to the checkout, whatever it is called.
    (tmp_path / "othello_arena").symlink_to(ROOT, target_is_directory=True)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir",
         str(tmp_path / "cache"), "-p", "othello_arena"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues found in" in result.stdout
    checked = int(result.stdout.split("no issues found in ")[1].split()[0])
    assert checked > 50, result.stdout  # the whole package, not a part of it
