"""The grade sheet as a spreadsheet opens it, and the copies it names (by their moves, by their code).

The class is a real class.sqlite made by ``othello class init`` from a
roster with an e-mail column and a name with diacritics; the ladder's games
are given results in the database as the scheduler records them
(:func:`test_classroom_ladder.finish`); the sheet is written by the command
line and parsed back as a spreadsheet would read it.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Iterator
from xml.etree import ElementTree

import pytest

from test_classroom_ladder import admit_version, finish, plan_all

from othello_arena.classroom.grades import FINAL_COLUMNS, grade_sheet, standings
from othello_arena.classroom.ladder import Ladder
from othello_arena.classroom.settings import load
from othello_arena.classroom.store import ClassStore, GameStatus
from othello_arena.protocol import GameRecord, Result, Termination

EXAMPLES = Path(__file__).resolve().parent.parent / "agents" / "examples"
ROSTER = "id,name,email,group\nzoe,Zoë Ångström,zoe@example.org,A\nbob,Bob,bob@example.org,B\ncarol,Carol,,A\n"


@pytest.fixture()
def ladder(tmp_path: Path) -> Iterator[Ladder]:
    """A class of zoe, bob and carol from a roster with an e-mail and a group column; random and greedy its rungs."""
    folder = tmp_path / "class"
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "othello_arena", "class", "init", str(folder), "--roster", str(roster)],
                   check=True, capture_output=True)
    text = (folder / "class.toml").read_text(encoding="utf-8")
    text = re.sub(r"^references = .*$", 'references = ["random", "greedy"]', text, count=1, flags=re.M)
    text = re.sub(r"^pairs_per_opponent = \d+", "pairs_per_opponent = 1", text, flags=re.M)
    (folder / "class.toml").write_text(text, encoding="utf-8")
    settings = load(folder)
    assert [ref.name for ref in settings.references] == ["random", "greedy"]
    store = ClassStore(settings.database)
    yield Ladder(settings, store)
    store.close()


def submitted(ladder: Ladder, student: str, fingerprint: str, files: dict[str, str]) -> int:
    """A version admitted with these files in its submission folder (where the sheet's comparison reads them)."""
    folder = ladder.settings.folder / "submissions" / student / fingerprint
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return admit_version(ladder.store, student, fingerprint)


def play_everything(ladder: Ladder, moves_of: "dict[str, list[str]]", random_player: str = "") -> None:
    """Every pair the ladder plans, played: each game's moves those of its non-random player (``moves_of``);
    a game of ``random_player`` different every time, as a random program plays.  Draws throughout.

    The ladder keeps choosing games all week: this plays until every two students (and each student and each
    reference) have met, in 50 rounds at most (a ladder that never gets there fails rather than hangs)."""
    students = {version.student for version in ladder.store.current_versions()}
    players = students | {ref.name for ref in ladder.settings.references}
    wanted = {frozenset((a, b)) for a in students for b in players if a != b}
    for _ in range(50):
        met = {frozenset((game.white, game.black)) for game in ladder.store.finished_games()}
        if wanted <= met or not plan_all(ladder):
            return
        for game in ladder.store.games(GameStatus.QUEUED):
            if random_player and game.plays(random_player):
                moves = [f"(W {'ABCDEFGH'[game.id % 8]} {1 + game.id // 8 % 8})"]
            else:
                player = game.white if game.white in moves_of else game.black
                moves = moves_of.get(player, ["(W D 3)"])
            finish(ladder.store, game.id, GameRecord(white=game.white, black=game.black,
                                                     result=Result(None, Termination.NORMAL, 32, 32)), moves)


def test_a_renamed_copy_is_named_even_when_a_random_classmate_plays_both(ladder: Ladder) -> None:
    """bob's version is zoe's program (other files, so another fingerprint); carol plays at random.

    Before, "every common game alike" failed on carol's games (she plays each copy differently), and
    the k-th opening was counted per student: bob was never named."""
    submitted(ladder, "zoe", "z1", {"agent.py": "zoe"})
    submitted(ladder, "bob", "b1", {"bot.py": "bob"})
    submitted(ladder, "carol", "c1", {"rand.py": "carol"})
    same = ["(W D 3)", "(B C 3)", "(W C 4)"]
    play_everything(ladder, {"zoe": same, "bob": same, "greedy": same, "random": same}, random_player="carol")
    carol_games = [game for game in ladder.store.finished_games() if game.plays("carol")]
    assert carol_games and len({game.moves_sha256 for game in carol_games}) == len(carol_games)  # never the same
    lines, _ = standings(ladder.settings, ladder.store)
    by_id = {line.id: line for line in lines}
    assert by_id["zoe"].same_moves_as == ["bob"] and by_id["bob"].same_moves_as == ["zoe"]
    assert by_id["carol"].same_moves_as == []


def test_two_different_programs_are_not_named(ladder: Ladder) -> None:
    submitted(ladder, "zoe", "z1", {"agent.py": "zoe"})
    submitted(ladder, "bob", "b1", {"bot.py": "bob"})
    play_everything(ladder, {"zoe": ["(W D 3)", "(B C 3)"], "bob": ["(W D 3)", "(B E 3)"]})
    lines, _ = standings(ladder.settings, ladder.store)
    assert all(line.same_moves_as == [] for line in lines)


def read_back(path: Path) -> tuple[bytes, list[dict[str, str]]]:
    data = path.read_bytes()
    return data, list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


def test_the_sheet_opens_in_a_spreadsheet_with_numbers_the_roster_and_the_names_intact(ladder: Ladder,
                                                                                      tmp_path: Path) -> None:
    starter = (EXAMPLES / "starter.py").read_text(encoding="utf-8")
    own = "\n".join(f"def strategy_{i}(board, weights):\n    best = max(board, key=lambda m: weights[m] * {i} - len(board))"
                    f"\n    return [w + {i} for w in weights if w > best]\n" for i in range(12))
    submitted(ladder, "zoe", "z1", {"agent.py": starter + own})
    # bob: zoe's program renamed, its comments changed, its names changed
    copied = own.replace("strategy_", "plan_").replace("weights", "w8").replace("best", "top")
    submitted(ladder, "bob", "b1", {"mine.py": starter + "# my very own work\n" + copied})
    submitted(ladder, "carol", "c1", {"agent.py": starter})  # the starter as it is: shares nothing of her own
    play_everything(ladder, {"zoe": ["(W D 3)"], "bob": ["(W D 3)"], "carol": ["(W F 5)"]})
    sheet = tmp_path / "grades.csv"
    written = subprocess.run([sys.executable, "-m", "othello_arena", "class", "export", str(ladder.settings.folder),
                              "-o", str(sheet)], capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    data, rows = read_back(sheet)
    assert data.startswith(b"\xef\xbb\xbfid,name,email,group,")  # the BOM: Excel reads the rest as UTF-8
    by_id = {row["id"]: row for row in rows}
    zoe = by_id["zoe"]
    assert zoe["name"] == "Zoë Ångström" and zoe["email"] == "zoe@example.org" and zoe["group"] == "A"
    assert by_id["carol"]["email"] == ""
    # the graded version as each student numbers it: their first, though bob's and carol's are the class's 2nd and 3rd
    assert [by_id[who]["version"] for who in ("zoe", "bob", "carol")] == ["1", "1", "1"]
    # numbers as numbers: no a/b cell anywhere, points and games apart
    assert not any("/" in value for row in rows for value in row.values())
    assert zoe["vs_random_points"] == "1" and zoe["vs_random_games"] == "2"  # two draws
    assert float(zoe["score"]) == float(zoe["games"]) / 2 and int(zoe["rating"]) and zoe["rank"].isdigit()
    # before the final, its columns are empty
    assert all(row[column] == "" for row in rows for column in FINAL_COLUMNS)
    # the renamed copy is named by its code and by its moves; the starter alone names nobody
    assert zoe["similar_to"].startswith("bob (") and by_id["bob"]["similar_to"].startswith("zoe (")
    assert by_id["carol"]["similar_to"] == ""
    assert zoe["same_moves_as"] == "bob"
    # the API gives the very same sheet
    assert grade_sheet(ladder.settings, ladder.store).encode("utf-8") == data


def xlsx_cells(path: Path) -> list[list[tuple[str, str]]]:
    """The first sheet of an xlsx file as rows of (type, text): ``n`` a number, ``s`` a string (shared or inline)."""
    main = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    with zipfile.ZipFile(path) as book:
        shared = ["".join(t.text or "" for t in item.iter(f"{main}t"))
                  for item in ElementTree.fromstring(book.read("xl/sharedStrings.xml")).iter(f"{main}si")]
        sheet = ElementTree.fromstring(book.read("xl/worksheets/sheet1.xml"))
    rows = []
    for row in sheet.iter(f"{main}row"):
        cells: list[tuple[str, str]] = []
        for cell in row.iter(f"{main}c"):
            letters = "".join(c for c in cell.get("r", "") if c.isalpha())
            column = sum(26 ** i * (ord(c) - 64) for i, c in enumerate(reversed(letters))) - 1
            cells += [("", "")] * (column + 1 - len(cells))  # an empty cell is left out of the file
            kind, value = cell.get("t", "n"), cell.find(f"{main}v")
            text = value.text or "" if value is not None else ""
            cells[column] = ("s", shared[int(text)]) if kind == "s" else (kind, text)
        rows.append(cells)
    return rows


@pytest.mark.slow
def test_the_sheet_converts_to_a_spreadsheet_and_back(ladder: Ladder, tmp_path: Path) -> None:
    """LibreOffice (when installed) opens the CSV: names intact, the BOM taken as the mark it is, numbers as numbers.

    Headless, LibreOffice reads a CSV in the charset it is told (without one, Latin-1: the BOM is not
    looked at there, as its import dialog and Excel do), so it is told UTF-8, as the dialog detects it."""
    office = shutil.which("soffice") or shutil.which("libreoffice")
    if office is None:
        pytest.skip("needs LibreOffice (apt-get install libreoffice-calc-nogui)")
    submitted(ladder, "zoe", "z1", {"agent.py": "print(1)\n"})
    play_everything(ladder, {})
    sheet = tmp_path / "grades.csv"
    sheet.write_text(grade_sheet(ladder.settings, ladder.store), encoding="utf-8")
    subprocess.run([office, f"-env:UserInstallation=file://{tmp_path / 'profile'}", "--headless",
                    "--infilter=CSV:44,34,76,1", "--convert-to", "xlsx", "--outdir", str(tmp_path), str(sheet)],
                   check=True, capture_output=True, timeout=300)
    header, *rows = xlsx_cells(tmp_path / "grades.xlsx")
    columns = [text for _, text in header]
    assert columns[:4] == ["id", "name", "email", "group"]  # the BOM is no character of the first cell
    zoe = dict(zip(columns, next(row for row in rows if row[0] == ("s", "zoe"))))
    assert zoe["name"] == ("s", "Zoë Ångström") and zoe["email"] == ("s", "zoe@example.org")
    for column in ("games", "score", "vs_random_points", "vs_random_games", "rating", "rank"):
        assert zoe[column][0] == "n", (column, zoe[column])  # a number cell, never a date or a text
    assert zoe["vs_random_points"] == ("n", "1") and zoe["vs_random_games"] == ("n", "2")
