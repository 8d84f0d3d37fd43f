"""Shared helpers of the web tests: a real ``othello serve`` process and a real headless Chromium.

The server runs as the user would run it (a subprocess, its own process
group, the address read from what it prints); the browser is Debian's
chromium driven by Playwright (its own browsers are never downloaded).
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
ADDRESS = re.compile(r"Othello Arena at (http://[^/\s]+)/")
WAIT_MS = 60_000  # a generous limit for any condition in the browser: the machine is shared


@contextmanager
def serving(directory: Path, *args: str, startup: float = 60.0) -> Iterator[tuple[str, list[str]]]:
    """Run ``othello serve ARGS --port 0`` in ``directory``; yield its base URL and the lines it printed first."""
    process = subprocess.Popen(
        [sys.executable, "-m", "othello_arena", "serve", "--port", "0", *args],
        cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + startup
        base: Optional[str] = None
        assert process.stdout is not None
        while base is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            found = ADDRESS.search(line)
            if found:
                base = found.group(1)
        if base is None:
            process.kill()
            raise AssertionError("othello serve printed no address:\n" + "\n".join(lines) + (process.stdout.read() or ""))
        # The rest of its output (the token lines) comes right after the address.
        while not any("Ctrl-C" in line for line in lines):
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
        yield base, lines
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if process.stdout is not None:
            process.stdout.close()


def token_of(lines: list[str]) -> str:
    """The token ``othello serve`` printed (the address to open to play ends with ``?token=...``)."""
    line = next(line for line in lines if "?token=" in line)
    return line.split("?token=", 1)[1].split()[0]


def raw_get(base: str, path: str, headers: Optional[dict[str, str]] = None) -> tuple[int, bytes]:
    """GET ``path`` exactly as written (no normalising of ``..``), as an attacker's client would send it."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest("GET", path, skip_accept_encoding=True)
        for key, value in (headers or {}).items():
            connection.putheader(key, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def raw_post(base: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Chromium (Debian's), shared by the tests of a module."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (Debian package chromium)")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield browser
        finally:
            browser.close()
