"""Publishing without exposing students: the report and ``othello serve`` keep stderr, build logs and files back.

A real tournament: an agent that writes a secret to its stderr (and crashes,
so it has forfeits whose stderr the instructor's copy shows), a build that
fails with a secret in its log.  The published report holds neither secret
in any file it writes; ``--with-logs`` (the instructor's copy) holds both.
A real ``othello serve`` refuses the database, the build log, the stderr
logs and an agent's folder without the token (401, 403 with a wrong one),
serves them with it, and never shows a secret in a page or API answer to a
visitor without the token.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from tournament_helpers import agent, agent_with_build, write_tournament
from web_helpers import raw_get, serving, token_of

pytestmark = pytest.mark.slow

STDERR_SECRET = "grace-traceback-SECRET-7f3a"
BUILD_SECRET = "heidi-source-line-42-SECRET"  # the build computes the 42: its command does not hold the secret


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tournament file of a class whose run is over (the published report written by the run)."""
    root = tmp_path_factory.mktemp("privacy")
    broken = agent_with_build(root, "broken", "first", "echo main.c:3: heidi-source-line-$((6*7))-SECRET; exit 2")
    agents = [agent("first", "first"), agent("leaky", "flips", "--crash-at 3", "--secret", STDERR_SECRET[::-1]), broken]
    path = write_tournament(root, agents, concurrency=2, seed=4, games_per_pairing=2)
    result = CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"])
    assert result.exit_code == 0, result.output
    # The secrets are really there, in the raw results.
    assert any(STDERR_SECRET in log.read_text() for log in (root / "results" / "games").glob("*/leaky.stderr.log"))
    assert BUILD_SECRET in (root / "results" / "build" / "broken.log").read_text()
    return path


def secrets_in(folder: Path) -> list[str]:
    """Every file under ``folder`` that holds a secret (its bytes, whatever it is)."""
    return [str(file) for file in sorted(folder.rglob("*")) if file.is_file()
            and any(secret.encode() in file.read_bytes() for secret in (STDERR_SECRET, BUILD_SECRET))]


def test_the_published_report_holds_no_stderr_or_build_log(played: Path, tmp_path: Path) -> None:
    published = played.parent / "results" / "report"
    assert (published / "agents" / "leaky.html").is_file()
    assert secrets_in(published) == []
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["tournament", "report", str(played), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert secrets_in(out) == []
    # No link to them either: the pages link to games' records only.
    pages = "".join(file.read_text() for file in out.rglob("*.html"))
    assert ".stderr.log" not in pages and ".log\"" not in pages
    text = (out / "index.html").read_text()
    data = json.loads(text.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert {link for game in data["games"] for link in game["links"]} == {"game.json"}
    assert [build["log"] for build in data["builds"]] == [""]
    leaky = (out / "agents" / "leaky.html").read_text()
    assert "Forfeits (" in leaky and "not published" in leaky and "--with-logs" in leaky


def test_the_instructors_copy_with_logs(played: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["tournament", "report", str(played), "--with-logs", "-o", str(tmp_path / "mine")])
    assert result.exit_code == 0, result.output
    assert STDERR_SECRET in (tmp_path / "mine" / "agents" / "leaky.html").read_text()
    data = (tmp_path / "mine" / "index.html").read_text()
    assert "leaky.stderr.log" in data and "build/broken.log" in data
    broken = (tmp_path / "mine" / "agents" / "broken.html").read_text()
    [href] = re.findall(r'href="([^"]*broken\.log)"', broken)
    log = (tmp_path / "mine" / "agents" / href).resolve()
    assert BUILD_SECRET in log.read_text()
    # Default folder: beside the published report, never into it (othello serve shows that one to everybody).
    result = runner.invoke(cli, ["tournament", "report", str(played), "--with-logs"])
    assert result.exit_code == 0, result.output
    assert (played.parent / "results" / "report-with-logs" / "index.html").is_file()
    result = runner.invoke(cli, ["tournament", "report", str(played), "--with-logs",
                                 "-o", str(played.parent / "results" / "report")])
    assert result.exit_code == 2 and "published report" in result.output
    assert secrets_in(played.parent / "results" / "report") == []


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_serve_refuses_raw_results_without_the_token(played: Path, host: str) -> None:
    root = played.parent
    game = next(folder for folder in sorted((root / "results" / "games").iterdir())
                if (folder / "leaky.stderr.log").is_file() and STDERR_SECRET in (folder / "leaky.stderr.log").read_text())
    agent_file = next(file for file in (game / "leaky").rglob("*") if file.is_file())
    raw = ["/results/tournament.sqlite", "/results/build/broken.log", f"/results/games/{game.name}/leaky.stderr.log",
           f"/results/{agent_file.relative_to(root / 'results').as_posix()}"]
    with serving(root, str(played), "--host", host, "--games", str(root / "web-games")) as (base, lines):
        token = token_of(lines)
        for path in raw:
            status, body = raw_get(base, path)
            assert status == 401, f"{path} answered {status} without the token"
            assert b"token" in json.loads(body)["error"].encode()
            status, body = raw_get(base, path, {"X-Othello-Token": "not-the-token"})
            assert status == 403 and b"wrong token" in body, f"{path} answered {status} to a wrong token"
            status, body = raw_get(base, path, {"X-Othello-Token": token})
            assert status == 200, f"{path} answered {status} with the token"
            status, _ = raw_get(base, f"{path}?token={token}")
            assert status == 200
        status, body = raw_get(base, f"/results/games/{game.name}/leaky.stderr.log", {"Cookie": f"othello_token={token}"})
        assert status == 200 and STDERR_SECRET.encode() in body
        status, body = raw_get(base, "/results/build/broken.log", {"X-Othello-Token": token})
        assert BUILD_SECRET.encode() in body

        # What everybody may read, and none of it holds a secret.
        key = game.name.split("_")[0]
        public = ["/", "/tournament", "/tournament/agents/leaky", "/tournament/agents/broken", f"/tournament/games/{key}",
                  "/api/tournament", "/api/tournament/agents/leaky", "/api/tournament/agents/broken",
                  f"/api/tournament/games/{key}", "/results/report/index.html", "/results/report/agents/leaky.html",
                  "/results/report/agents/broken.html", "/results/report/status.json",
                  f"/results/games/{game.name}/game.json"]
        for path in public:
            status, body = raw_get(base, path)
            assert status == 200, f"{path} answered {status}"
            assert STDERR_SECRET.encode() not in body and BUILD_SECRET.encode() not in body, path
        status, body = raw_get(base, f"/api/tournament/games/{key}")
        assert b"stderr.log" not in body
        # The instructor, with the token, reads the agent's stderr on its page.
        status, body = raw_get(base, "/api/tournament/agents/leaky", {"Cookie": f"othello_token={token}"})
        assert status == 200 and STDERR_SECRET.encode() in body
