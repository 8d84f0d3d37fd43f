"""``othello class submit``: send a version from a terminal (multipart over HTTP), and wait for its card."""

from __future__ import annotations

import http.client
import json
import secrets
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Optional


class SubmitError(RuntimeError):
    """The server refused, or could not be reached (the message says which, and why)."""


class Unreachable(SubmitError):
    """No answer from the server: nothing listens, the connection broke, or it or its proxy says it is away (502-504)."""


RESTART_WAIT = 300.0  # seconds --wait waits for a server that stopped answering (a restart takes seconds)
BACKOFF = (1.0, 2.0, 4.0, 8.0)  # seconds between tries while it does not answer, the last one repeated
# what a reverse proxy answers while the server behind it is down (503: also the server's own, to a crowd)
PROXY_AWAY = (502, 503, 504)


def files_of(paths: list[Path]) -> list[tuple[str, bytes]]:
    """The files to send: a folder's files by their path inside it, a file by its name, one .zip as it is."""
    found: list[tuple[str, bytes]] = []
    for path in paths:
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.is_file() and not file.is_symlink():
                    found.append((file.relative_to(path).as_posix(), file.read_bytes()))
        elif path.is_file():
            found.append((path.name, path.read_bytes()))
        else:
            raise SubmitError(f"{path}: no such file or folder")
    return found


def multipart(fields: dict[str, str], files: list[tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body and its content type."""
    boundary = "----othello" + secrets.token_hex(16)
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value.encode() + b"\r\n")
    for filename, data in files:
        quoted = filename.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{quoted}"\r\n'
                      f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def request(url: str, token: str, body: Optional[bytes] = None, content_type: str = "") -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    if content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(url, data=body, headers=headers, method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=120) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error", "")
        except (ValueError, AttributeError, OSError, http.client.HTTPException):
            message = ""
        if exc.code in PROXY_AWAY:
            raise Unreachable(f"{url} answered {exc.code}: {message or exc.reason} (the server is away, or too "
                              "busy)") from None
        raise SubmitError(f"the server said {exc.code}: {message or exc.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise Unreachable(f"cannot reach {url}: {exc}") from None


def send(base: str, token: str, command: str, build: str, paths: list[Path]) -> dict[str, Any]:
    body, content_type = multipart({"command": command, "build": build}, files_of(paths))
    data: dict[str, Any] = request(base.rstrip("/") + "/api/submissions", token, body, content_type)
    return data


def wait_for_card(base: str, token: str, version_id: int, timeout: float, say: Callable[[str], None],
                  interval: float = 2.0, restart_wait: float = RESTART_WAIT) -> dict[str, Any]:
    """Ask for the version ``version_id`` (the API's id, not the student's number) every ``interval`` seconds until
    its card has come; return it.

    A server that stops answering is waited for (it may be restarting: a
    version it was checking is then checked again), trying again after
    :data:`BACKOFF`, for ``restart_wait`` seconds at most, each outage said
    once through ``say``.  :class:`SubmitError` after ``timeout`` seconds
    in all, or when the server does not come back in time.
    """
    deadline = time.monotonic() + timeout
    address = f"{base.rstrip('/')}/api/versions/{version_id}"
    away_since: Optional[float] = None  # monotonic time of the first unanswered try of this outage
    tries = 0
    said = ""  # the last waiting reason said
    while True:
        try:
            data: dict[str, Any] = request(address, token)
        except Unreachable as exc:
            moment = time.monotonic()
            if away_since is None:
                away_since, tries = moment, 0
                say(f"the server does not answer (restarting?): waiting for it, {_seconds(restart_wait)} at most...")
            gone = moment - away_since
            if gone >= restart_wait or moment >= deadline:
                why = (f"the server has not answered for {_seconds(gone)}: it is down, or unreachable from here"
                       if gone >= restart_wait else
                       f"no card after {timeout:g} s (--timeout), the server not answering for the last {_seconds(gone)}")
                raise SubmitError(f"{why} ({exc}). The version was received: its card comes once the server runs "
                                  f"again (on your page, or at /api/versions/{version_id})") from None
            time.sleep(min(BACKOFF[min(tries, len(BACKOFF) - 1)], max(0.0, deadline - moment),
                           max(0.0, away_since + restart_wait - moment)))
            tries += 1
            continue
        if away_since is not None:
            say("the server answers again (a version it was checking when it stopped is checked again)")
            away_since = None
        if data["status"] != "checking":
            return data
        # A card while still checking: the server was too busy to time it and checks it again later (its reason)
        waiting = str(data.get("reason") or "") if data.get("card") else ""
        if waiting and waiting != said:
            say(waiting)
            said = waiting
        if time.monotonic() > deadline:
            raise SubmitError(f"no card after {timeout:g} s: " + (waiting or "the server is still checking")
                              + " (see /api/me later)")
        time.sleep(interval)


def _seconds(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def card_lines(version: dict[str, Any]) -> list[str]:
    """The card as a student reads it in a terminal."""
    card = version.get("card") or {}
    lines = [f"version {version['version']} ({version['fingerprint'][:12]}): {version['status'].upper()}"
             + (f": {version['reason']}" if version.get("reason") else "")]
    build_log, environment = (card.get("build_log") or "").strip("\n"), card.get("build_environment") or []
    if card.get("build_status") or build_log.strip() or environment:  # a build ran: the compiler's words first
        status = f" ({card['build_status']})" if card.get("build_status") else ""
        lines += ["", f"build output{status}, last lines:" if build_log.strip() else f"build output{status}: (nothing)",
                  *("  " + line for line in build_log.splitlines() if build_log.strip())]
    if card.get("check"):
        stderr = (card.get("stderr") or "").strip("\n")
        lines += ["", *card["check"], "",
                  "your program's stderr in the check, last lines:" if stderr.strip()
                  else "your program's stderr in the check: (nothing)",
                  *("  " + line for line in stderr.splitlines() if stderr.strip())]
    if environment:  # the referee's own lines last: what the build ran with, rarely the cause
        lines += ["", "the referee's lines: the environment the build ran in", *("  " + line for line in environment)]
    return lines
