"""Every relative link of README.md and docs/*.md resolves: the file or folder exists, and a ``#anchor`` names a
heading of the page it points to, as GitHub makes anchors from headings.  No network: web addresses are left alone.

The README is the front page and the guides are where its content went (issue 40): a guide renamed, a heading
reworded or a section moved must not leave a link that lands nowhere.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_MOST_LINES = 200  # the front page: what it is, the two commands, three examples, links to the guides

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def pages() -> list[Path]:
    """The README and every guide in docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every line outside fenced code blocks (a link in a code block is code)."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def heading_text(markdown: str) -> str:
    """A heading's text as GitHub renders it: code spans without their backticks, links as their text, no emphasis."""
    text = CODE_SPAN.sub(lambda match: match.group(2), markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, every character but letters, digits, ``_``, ``-`` and spaces dropped,
    spaces made hyphens (``Playing a game: othello play`` -> ``playing-a-game-othello-play``)."""
    return re.sub(r"[^\w\- ]", "", heading_text(heading).strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor GitHub gives ``path``'s headings; a repeated one gets ``-1``, ``-2``... as GitHub numbers them."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """``(line number, target)`` of every Markdown link and image of ``path`` outside code."""
    found = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for match in LINK.finditer(CODE_SPAN.sub("", line)):
            found.append((number, match.group(1)))
    return found


def broken_links(path: Path) -> list[str]:
    """What is wrong with each relative link of ``path`` (empty: every one resolves), one line each."""
    problems = []
    for number, target in links(path):
        if SCHEME.match(target):  # https:, mailto: ...: not ours to check, and no network here
            continue
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        where = f"{os.path.relpath(path, ROOT)}, line {number}: {target}"
        if not destination.exists():
            problems.append(f"{where}: no such file or folder {os.path.relpath(destination, ROOT)}")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            problems.append(f"{where}: no heading of {os.path.relpath(destination, ROOT)} has the anchor #{anchor}")
    return problems


def test_github_anchors_are_made_as_github_makes_them() -> None:
    # the slug itself (else a wrong slug would pass wrong anchors or refuse right ones): headings of the guides
    assert slug("Playing a game: othello play") == "playing-a-game-othello-play"
    assert slug("4. Debug it at the move where it went wrong: `othello replay --rerun`") == \
        "4-debug-it-at-the-move-where-it-went-wrong-othello-replay---rerun"
    assert slug("The champion's compiled code") == "the-champions-compiled-code"
    assert slug("cgroups, and running as a non-root user") == "cgroups-and-running-as-a-non-root-user"
    assert slug("**Bold** and `time_per_move`") == "bold-and-time_per_move"


def test_the_checker_finds_a_broken_link_and_passes_a_good_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the checker itself, on pages made here (else the test below would pass on nothing)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "guide.md").write_text("# A guide\n\n## Two words\n\n## Two words\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[ok](guide.md#two-words) [ok too](guide.md#two-words-1) [web](https://example.org/x)\n"
                    "[self](#here)\n\n## Here\n\n```\n[in code](nowhere.md)\n```\n`[in a span](nowhere.md)`\n",
                    encoding="utf-8")
    assert broken_links(page) == []
    page.write_text("[gone](missing.md) [wrong anchor](guide.md#three-words) ![picture](img/x.png)\n", encoding="utf-8")
    assert broken_links(page) == [
        "page.md, line 1: missing.md: no such file or folder missing.md",
        "page.md, line 1: guide.md#three-words: no heading of guide.md has the anchor #three-words",
        "page.md, line 1: img/x.png: no such file or folder img/x.png",
    ]


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert links(page), f"{page.relative_to(ROOT)} has no link: the checker found nothing to check"
    problems = broken_links(page)
    assert not problems, "\n".join(problems)


def test_the_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MOST_LINES, f"README.md has {len(lines)} lines: move detail to a guide in docs/"
    for guide in ("docs/STUDENTS.md", "docs/INSTRUCTORS.md", "docs/OPERATORS.md", "docs/MAINTAINERS.md"):
        assert f"]({guide})" in "\n".join(lines), f"README.md does not link {guide}"


def test_the_readme_quotes_the_demos_last_line_and_sends_nobody_to_write_its_report_again() -> None:
    """The demo writes its report and names it last (test_tournament_run checks that line on a real run)."""
    from othello_arena.tournaments.results.state import planned_games
    from othello_arena.tournaments.schedule.config import load

    demo = load(ROOT / "tournaments" / "demo.toml")
    results = demo.results_dir.resolve().relative_to(ROOT)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"`Done: {planned_games(demo)} games. Report: .../{results.as_posix()}/report/index.html`" in readme
    assert "then writes" not in readme and "`othello tournament report tournaments/demo.toml` then" not in readme
