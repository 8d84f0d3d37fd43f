"""``othello class submit``: send a version from a terminal (multipart over HTTP), and wait for its card."""

from __future__ import annotations

import json
import secrets
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Optional


class SubmitError(RuntimeError):
    """The server refused, or could not be reached (the message says which, and why)."""


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
        except ValueError:
            message = ""
        raise SubmitError(f"the server said {exc.code}: {message or exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise SubmitError(f"cannot reach {url}: {exc}") from None


def send(base: str, token: str, command: str, build: str, paths: list[Path]) -> dict[str, Any]:
    body, content_type = multipart({"command": command, "build": build}, files_of(paths))
    data: dict[str, Any] = request(base.rstrip("/") + "/api/submissions", token, body, content_type)
    return data


def wait_for_card(base: str, token: str, version: int, timeout: float, say: Callable[[str], None],
                  interval: float = 2.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        data: dict[str, Any] = request(f"{base.rstrip('/')}/api/versions/{version}", token)
        if data["status"] != "checking":
            return data
        if time.monotonic() > deadline:
            raise SubmitError(f"no card after {timeout:g} s: the server is still checking (see /api/me later)")
        time.sleep(interval)


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
