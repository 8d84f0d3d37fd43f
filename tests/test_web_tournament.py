"""A tournament followed live in a real browser while ``othello tournament run`` plays it in another process.

The server only reads (the database, each game's live log and record); the
runner is a separate process, as when an instructor runs it in one terminal
and puts ``othello serve`` on the projector from another.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tournament_helpers import agent, query, write_tournament
from web_helpers import WAIT_MS, browser, raw_get, raw_post, serving, token_of  # noqa: F401 - browser is a fixture

pytestmark = pytest.mark.slow


def points_shown(page) -> float:
    return sum(float(text) for text in page.locator("#standings .points").all_inner_texts())


def test_the_live_view_follows_a_running_tournament(tmp_path: Path, browser) -> None:  # noqa: F811
    # Moves slow enough (50 ms) that a game is seen in progress; a crasher for the agent page's forfeits.
    agents = [agent("first", "first", "--delay 0.05"), agent("last", "last", "--delay 0.05"),
              agent("crasher", "flips", "--crash-at 3")]
    path = write_tournament(tmp_path, agents, concurrency=1, seed=3, games_per_pairing=1, colours="random")
    with serving(tmp_path, str(path), "--games", str(tmp_path / "web-games")) as (base, lines):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(base + "/tournament")
        page.wait_for_selector("#standings tr[data-agent=first]")
        assert points_shown(page) == 0
        runner = subprocess.Popen([sys.executable, "-m", "othello_arena", "tournament", "run", str(path), "-q"],
                                  cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True)
        try:
            # A game in progress, on its own board, advancing move by move, with the agents' comment lines.
            game = page.locator(".live-game").first
            page.wait_for_selector(".live-game[data-plies]:not([data-plies='0'])")
            seen = int(game.get_attribute("data-plies") or 0)
            page.wait_for_function(
                f"() => [...document.querySelectorAll('.live-game')].some(g => Number(g.dataset.plies) > {seen})")
            page.wait_for_selector(".live-game .comment:has-text('said: move')")  # the agent's (C move N)
            # The standings change as games finish.
            page.wait_for_function("() => [...document.querySelectorAll('#standings .points')]"
                                   ".some(cell => Number(cell.textContent) > 0)")
            assert runner.wait(timeout=240) == 0, runner.stderr.read() if runner.stderr else ""
        finally:
            if runner.poll() is None:
                os.killpg(runner.pid, signal.SIGKILL)
                runner.wait()
            if runner.stderr is not None:
                runner.stderr.close()
        page.wait_for_function("() => document.querySelectorAll('#games tr[data-status=finished]').length === 3")
        assert points_shown(page) == 3.0
        assert page.locator("#live-none").is_visible()
        assert "3 of 3 games played" in page.inner_text("#counts")

        # A finished game replays from its record.
        key = query(tmp_path / "results" / "tournament.sqlite", "SELECT key FROM games WHERE reason = 'normal'")[0]["key"]
        page.click(f"#games tr[data-key='{key}'] a")
        page.wait_for_selector("#status[data-state=over]")
        plies = page.locator("#moves tr").count()
        assert plies > 10
        page.click("#first")
        assert page.inner_text("#ply") == f"0 / {plies}"
        assert page.locator("#downloads a", has_text="game.json").count() == 1

        # The crasher's page: its forfeits; the end of its stderr for the token's holder only.
        page.goto(base + "/tournament/agents/crasher")
        page.wait_for_selector("#logs-note:not([hidden])")
        assert page.locator(".forfeit").count() == 2 and page.locator(".forfeit pre.stderr").count() == 0
        page.goto(base + "/tournament/agents/crasher?token=" + token_of(lines))
        page.wait_for_selector(".forfeit pre.stderr")
        assert page.locator(".forfeit").count() == 2
        assert "crashing on purpose" in page.locator(".forfeit pre.stderr").first.inner_text()
        page.close()


def test_the_app_serves_no_path_outside_the_results(tmp_path: Path, tournament_file) -> None:
    path = tournament_file(seed=1, games_per_pairing=1, colours="random")
    from click.testing import CliRunner

    from othello_arena.cli import cli

    assert CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"]).exit_code == 0
    (tmp_path / "secret.txt").write_text("not for the web\n")
    games = tmp_path / "results" / "games"
    game_dir = next(games.iterdir())
    # What an agent could leave in its own directory: links out of the results.
    agent_dir = next(p for p in game_dir.iterdir() if p.is_dir())
    (agent_dir / "link.txt").symlink_to(tmp_path / "secret.txt")
    (agent_dir / "up").symlink_to(tmp_path)
    with serving(tmp_path, str(path), "--games", str(tmp_path / "web-games")) as (base, lines):
        # With the token (which opens the raw results): still nothing outside them.
        token = {"X-Othello-Token": token_of(lines)}
        relative = f"/results/games/{game_dir.name}"
        status, body = raw_get(base, f"{relative}/game.json")
        assert status == 200 and b'"result"' in body
        for attempt in (
            "/results/../secret.txt", "/results/games/../../secret.txt", "/results/%2e%2e/secret.txt",
            "/results/..%2fsecret.txt", f"/results{tmp_path}/secret.txt", "/results//etc/passwd",
            f"{relative}/{agent_dir.name}/link.txt", f"{relative}/{agent_dir.name}/up/secret.txt",
            "/static/../secret.txt", "/static/%2e%2e/app.py", "/results/games",
        ):
            status, body = raw_get(base, attempt, token)
            assert status == 404, f"{attempt} answered {status}: {body[:200]!r}"
            assert b"not for the web" not in body and b"root:" not in body


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_playing_needs_the_printed_token_on_loopback_too(tmp_path: Path, host: str) -> None:
    # On loopback too: every user of a shared machine can connect to 127.0.0.1.
    with serving(tmp_path, "--host", host, "--games", str(tmp_path / "games")) as (base, lines):
        token = token_of(lines)
        base = base.replace("0.0.0.0", "127.0.0.1")
        status, _ = raw_get(base, "/")
        assert status == 200  # watching is for everybody
        body = b'{"mode": "agents", "opponent": "random", "second_opponent": "random", "time_per_move": 2}'
        status, answer = raw_post(base, "/api/games", body, {"Content-Type": "application/json"})
        assert status == 403 and b"token" in answer
        status, _ = raw_post(base, "/api/games", body, {"Content-Type": "application/json", "X-Othello-Token": "wrong"})
        assert status == 403
        status, answer = raw_post(base, "/api/games", body, {"Content-Type": "application/json", "X-Othello-Token": token})
        assert status == 201, answer
        status, page = raw_get(base, "/games/1")  # everybody may watch it, nobody without the token may move
        assert status == 200 and b"Arena.gamePage(\"/api/games/1\", true, false)" in page
        status, page = raw_get(base, "/play")
        assert b"needs the token" in page and b'id="play"' not in page


def test_a_form_posted_by_another_site_starts_nothing(tmp_path: Path) -> None:
    # Even with the token's cookie (the browser sends it along with another site's form).
    with serving(tmp_path, "--games", str(tmp_path / "games")) as (base, lines):
        cookie = {"Cookie": f"othello_token={token_of(lines)}"}
        form = b"mode=agents&opponent=x%3Dsh+-c+id"
        status, _ = raw_post(base, "/api/games", form, {"Content-Type": "application/x-www-form-urlencoded", **cookie})
        assert status == 415
        body = b'{"mode": "agents", "opponent": "random"}'
        status, _ = raw_post(base, "/api/games", body, {"Content-Type": "application/json",
                                                        "Origin": "http://evil.example", **cookie})
        assert status == 403
        status, _ = raw_get(base, "/", {"Host": "evil.example"})  # DNS rebinding: a name that is not this machine
        assert status == 400
        status, answer = raw_post(base, "/api/games", b'{"mode": "agents", "opponent": "no such agent"}',
                                  {"Content-Type": "application/json", **cookie})
        assert status == 400 and b"opponent" in answer  # a bad input is named
        assert not (tmp_path / "games").exists() or not any((tmp_path / "games").iterdir())


def test_no_token_lets_anyone_on_loopback_play_and_is_refused_beyond_it(tmp_path: Path) -> None:
    with serving(tmp_path, "--no-token", "--games", str(tmp_path / "games")) as (base, lines):
        assert not any("?token=" in line for line in lines)
        body = b'{"mode": "agents", "opponent": "random", "second_opponent": "random", "time_per_move": 2}'
        status, answer = raw_post(base, "/api/games", body, {"Content-Type": "application/json"})
        assert status == 201, answer
    refused = subprocess.run([sys.executable, "-m", "othello_arena", "serve", "--no-token", "--host", "0.0.0.0",
                              "--port", "0"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--no-token" in refused.stderr and "always needs its token" in refused.stderr


def test_start_clicked_before_the_record_arrives_takes_the_replay_to_the_start(tmp_path: Path, tournament_file, browser) -> None:  # noqa: F811
    # On a slow link the page is there before its record: a click on Start then threw (the view was
    # not loaded) and was lost; the replay opened at the end.  It is kept for when the record arrives.
    path = tournament_file(concurrency=1, seed=3, games_per_pairing=1, colours="random")
    run = subprocess.run([sys.executable, "-m", "othello_arena", "tournament", "run", str(path), "-q"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    key = query(tmp_path / "results" / "tournament.sqlite", "SELECT key FROM games")[0]["key"]
    with serving(tmp_path, str(path)) as (base, _):
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(base + "/tournament")
        href = page.get_attribute(f"#games tr[data-key='{key}'] a", "href")
        assert href
        held = []
        page.route(lambda url: url.endswith("/events") and key in url, lambda route: held.append(route))
        page.goto(base + href)
        for _ in range(600):  # the request for its record reaches the route handler (events run while waiting)
            if held:
                break
            page.wait_for_timeout(50)
        assert held and page.inner_text("#ply") == ""
        page.click("#first")
        for route in held:
            route.continue_()
        page.wait_for_selector("#status[data-state=over]")
        plies = page.locator("#moves tr").count()
        page.wait_for_function(f"() => document.querySelector('#ply').textContent === '0 / {plies}'")
        assert errors == []
