"""Shared helpers of the class server's tests: a class made as an instructor makes one."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any


def make_class(folder: Path, students: list[str], references: list[str], **settings: Any) -> dict[str, str]:
    """``othello class init`` for ``students``; class.toml edited; return every token by id (and 'instructor')."""
    roster = folder.parent / f"{folder.name}-roster.csv"
    roster.write_text("id,name\n" + "".join(f"{s},{s.title()}\n" for s in students), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "othello_arena", "class", "init", str(folder), "--roster", str(roster),
                    "--time", str(settings.pop("time", 0.3))], check=True, capture_output=True)
    text = (folder / "class.toml").read_text(encoding="utf-8")
    text = re.sub(r"^references = .*$", "references = " + json.dumps(references), text, count=1, flags=re.M)
    for key, value in settings.items():
        text = re.sub(rf"^{key} = [^#\n]*", f"{key} = {json.dumps(value)}  ", text, flags=re.M)
    (folder / "class.toml").write_text(text, encoding="utf-8")
    with open(folder / "tokens.csv", encoding="utf-8") as handle:
        tokens = {row["id"]: row["token"] for row in csv.DictReader(handle)}
    tokens["instructor"] = (folder / "instructor.token").read_text().strip()
    return tokens
