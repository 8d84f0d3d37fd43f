"""The class server's HTTP side (Starlette): the JSON API for students, the instructor and ``class submit``.

Who may read what (one rule, :meth:`ClassApi.may_read_player`):

- every request names its person by ``Authorization: Bearer TOKEN`` (or the
  cookie that ``/?token=TOKEN`` sets once: HttpOnly, SameSite=Strict);
  without a known token everything under ``/api`` is 401;
- a student reads their own versions, cards, code and stderr, every game's
  record (without the sides' command lines and files) and the standings;
  another student's version is 404, as one that does not exist; another
  student's stderr is 403;
- the instructor reads everything, and alone gets ``/api/class`` and the
  grade sheet (403 for a student);
- nothing of the class folder is served as a file: every answer is built
  from the database (the games' records, stderr kept there) or read from a
  version's folder through :func:`.uploads.read_file` for its owner and the
  instructor.

Request bodies are capped before they are read whole (413); server-sent
event streams are capped per person, in all and in duration (:meth:`ClassApi.events`).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.policy
import json
import random
import threading
import time
import weakref
from dataclasses import dataclass
from email.parser import BytesParser
from typing import Any, AsyncIterator, Callable, Optional

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse

from .admission import (RateLimited, VerdictRefused, VersionBusy, instructor_verdict, public_version, submit,
                        verdict_outcome)
from .escapes import visible
from .final import FinalProcess
from .grades import grade_sheet, kept_standings_marked, standings
from .ladder import game_record
from .live import HELD, Kept, LiveMarks, Marks, parts_of
from . import service
from .settings import ClassSettings
from .store import INSTRUCTOR, ClassStore, Game, VerdictAction, Version
from .uploads import UploadRefused, read_file

COOKIE = "othello_class_token"
VERDICT_BODY = 16 << 10  # bytes of a verdict's request (an action and a reason)
FORM_OVERHEAD = 64 << 10  # bytes a multipart body may hold beyond the files (field names, boundaries)
STREAMS_PER_PERSON = 4  # a person's event streams open at once: a page each (tabs, a phone); past it 429
# Students' event streams open at once: every page of a class of 300 (the instructor's are apart, always served).
# The streams share one watcher of the class (one query of the change mark every STREAM_INTERVAL however many are
# open); a change costs one computation of every part's marks (.live), and each stream a line to send if a part
# of its page moved.
MAX_STREAMS = 320
STREAM_RETRY_SECONDS = 30  # the Retry-After of a refused stream; the page refreshes every 60 s without one anyway
STREAM_SECONDS = 600.0  # a stream ends after this; the page reconnects if it still wants one
STREAM_INTERVAL = 2.0
STREAM_KEEPALIVE = 15.0  # seconds a quiet stream waits before a comment line (proxies close idle connections)
ANSWERS_KEPT = 400  # the answers of /api/me (one a student) and /api/standings kept, the least recently used dropped
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
MAX_ID = (1 << 63) - 1  # SQLite's largest integer: an id past it names no row


class TooLarge(Exception):
    pass


@dataclass(frozen=True)
class Refusal:
    """A request refused: the HTTP status and the reason, said to the person (as JSON or on the page)."""

    status: int
    reason: str
    retry_after: Optional[int] = None  # seconds until it may be asked again (a rate limit's Retry-After)


class LiveStandings:
    """The standings that the event streams and the pages share: those the server's worker keeps in the database.

    Every student's standing is in their page, so a game that finishes
    changes every open page.  The worker process works them out as the
    class changes (:func:`.grades.keep_standings`: 0.7 s of interpreter a
    change at 20,000 games, which here made every answer wait for the
    interpreter); this process reads the row, its JSON once per change.
    What each page shows of them is marked once per change for everybody
    (:class:`.live.LiveMarks`).
    """

    def __init__(self, settings: ClassSettings, store: ClassStore) -> None:
        self.settings, self.store = settings, store

    def standings(self) -> tuple[str, service.Standings]:
        """(what they were worked out from, the standings) (call it from a worker thread: it queries the database;
        a class never served before has none kept: the first are computed here, once)."""
        kept = kept_standings_marked(self.store)
        if kept is None:
            standings(self.settings, self.store, fresh=False)
            kept = kept_standings_marked(self.store)
        assert kept is not None  # (standings() keeps what it computes)
        return kept


class ClassApi:
    """The handlers, for one class folder's settings and database."""

    def __init__(self, settings: ClassSettings, store: ClassStore, on_submitted: Callable[[], None],
                 log: Callable[[str], None] = lambda line: None) -> None:
        self.settings, self.store, self.on_submitted, self.log = settings, store, on_submitted, log
        self.streams: dict[str, int] = {}  # the event streams open, by person
        self.streams_lock = threading.Lock()
        self.live = LiveStandings(settings, store)
        self.views = LiveMarks(settings, store, self.live.standings)  # every page part's mark, once per change
        self.marks: Optional[Marks] = None  # the last marks the watcher saw (for the streams)
        self.marks_changed = asyncio.Event()  # set (and replaced) when they moved
        self.watcher: Optional[asyncio.Future[None]] = None
        self.answers: Kept[bytes] = Kept(ANSWERS_KEPT)  # /api/me and /api/standings, made once per change
        self.final = FinalProcess(settings)

    # -- who is asking -------------------------------------------------------------

    def person(self, request: Request) -> Optional[str]:
        """The student id, :data:`INSTRUCTOR`, or ``None`` for an unknown or missing token."""
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header[:7].lower() == "bearer " else request.cookies.get(COOKIE, "")
        return self.store.who(token)

    @staticmethod
    def refuse(status: int, message: str) -> JSONResponse:
        """The API's answer to a refused request: ``{"error": message}``."""
        return JSONResponse({"error": message}, status_code=status)

    def unknown(self) -> JSONResponse:
        return self.refuse(401, "no valid token: send Authorization: Bearer TOKEN (your link holds your token)")

    def may_read_player(self, person: str, game: Game, player: str) -> bool:
        """Whose stderr ``person`` may read: their own, anybody's for the instructor; a reference's for its opponent."""
        if person == INSTRUCTOR or person == player:
            return True
        version = game.white_version if game.white == player else game.black_version
        is_reference = version is None and self.settings.reference(player) is not None
        return is_reference and game.plays(person)

    # -- pages (the real ones come later: this one says where the API is) --------

    async def index(self, request: Request) -> Response:
        given = request.query_params.get("token", "")
        if given:
            response: Response = RedirectResponse("/", status_code=303)  # the token leaves the address bar
            if self.store.who(given) is not None:
                response.set_cookie(COOKIE, given, httponly=True, samesite="strict", max_age=180 * 86400,
                                    secure=request.url.scheme == "https")
            return response
        person = self.person(request)
        who = "not signed in: open the link with your token" if person is None else f"signed in as {person}"
        return HTMLResponse(f"<!doctype html><title>{_html(self.settings.name)}</title><h1>{_html(self.settings.name)}</h1>"
                            f"<p>{_html(who)}</p><p>The JSON API: /api/me, /api/standings, /api/submissions.</p>")

    # -- the API -------------------------------------------------------------------

    async def take_submission(self, request: Request, person: str) -> tuple[Version, bool] | Refusal:
        """A version sent by ``person`` (the API's upload and the page's form): the version and whether it is
        new, or why it is refused."""
        if person == INSTRUCTOR:
            return Refusal(403, "the instructor submits no agent: use a student's token")
        if request.cookies.get(COOKIE) and not request.headers.get("authorization"):
            origin = request.headers.get("origin")
            if origin and origin.split("://", 1)[-1] != request.headers.get("host", ""):
                return Refusal(403, f"a request from {origin} is not from this class's pages")
        limit = self.settings.admission.max_upload_bytes + FORM_OVERHEAD
        try:
            body = await read_capped(request, limit)
        except TooLarge:
            return Refusal(413, f"the upload is larger than {self.settings.admission.max_upload_bytes} bytes")
        try:
            fields, uploads = parse_submission(request.headers.get("content-type", ""), body)
            version, new = await anyio.to_thread.run_sync(
                lambda: submit(self.settings, self.store, person, uploads, fields.get("command", ""), fields.get("build", "")))
        except RateLimited as exc:
            self.log(f"refused: a submission of {person}'s (429): {exc}")
            return Refusal(429, str(exc), exc.retry_after)
        except UploadRefused as exc:
            return Refusal(400, str(exc))
        if new:
            self.on_submitted()
        files = f"{len(version.files)} file{'s' * (len(version.files) != 1)}, {version.bytes:,} bytes"
        self.log(f"submission: {person}'s version {version.number} received ({files}), to be built and checked" if new
                 else f"submission: {person} sent their version {version.number} again (the same program: it goes on as "
                      "it is)")
        return version, new

    async def submissions(self, request: Request) -> Response:
        person = self.person(request)
        if person is None:
            return self.unknown()
        taken = await self.take_submission(request, person)
        if isinstance(taken, Refusal):
            answer = self.refuse(taken.status, taken.reason)
            if taken.retry_after is not None:
                answer.headers["Retry-After"] = str(taken.retry_after)
            return answer
        version, new = taken
        data = public_version(version)
        data["new"] = new
        return JSONResponse(data, status_code=201 if new else 200)

    async def me(self, request: Request) -> Response:
        person = self.person(request)
        if person is None:
            return self.unknown()
        if person == INSTRUCTOR:
            return JSONResponse({"id": INSTRUCTOR, "instructor": True, "name": "instructor", "versions": [], "games": []})
        return Response(await anyio.to_thread.run_sync(self.me_json, person), media_type="application/json")

    def me_json(self, person: str) -> bytes:
        """``/api/me`` of a student, made once per change of their versions, games or the standings (polled by
        scripts and ``othello class submit --wait``: a poll costs a lookup while nothing moved).  Their versions
        are looked at on every call: the class's marks may be a computation behind."""
        marks = self.views.current()
        mark = (self.store.own_versions_state(person), marks.of(person, ("games",)), marks.key[1])
        return self.answers.get(("me", person), mark, lambda: as_json(self.me_data(person, marks.ranked)))

    def me_data(self, person: str, ranked: Optional[service.Standings] = None) -> dict[str, Any]:
        return service.student_json(service.student_view(self.settings, self.store, person, ranked))

    def owned_version(self, request: Request) -> Version | Response:
        """The version the path names, for its owner and the instructor; else the answer (401, or 404).

        Another student's version is answered as one that does not exist: a
        403 there would let a student count everyone's submissions by id.
        """
        person = self.person(request)
        if person is None:
            return self.unknown()
        row = self.store.version(path_id(request.path_params["version"]))
        if row is None or person not in (INSTRUCTOR, row.student):
            return self.refuse(404, "no such version" if person == INSTRUCTOR else "no such version of yours")
        return row

    async def version(self, request: Request) -> Response:
        row = self.owned_version(request)
        if isinstance(row, Response):
            return row
        data = public_version(row, verdicts=self.store.verdicts(row.id))
        data["student"] = row.student
        return JSONResponse(data)

    async def version_file(self, request: Request) -> Response:
        row = self.owned_version(request)
        if isinstance(row, Response):
            return row
        folder = self.settings.folder / "submissions" / row.student / row.fingerprint
        data = await anyio.to_thread.run_sync(read_file, folder, request.path_params["path"])
        if data is None:
            return self.refuse(404, "no such file in this version")
        return Response(data, media_type="text/plain; charset=utf-8",
                        headers={"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"})

    async def game(self, request: Request) -> Response:
        person = self.person(request)
        if person is None:
            return self.unknown()
        row = self.store.game(path_id(request.path_params["game"]))
        if row is None:
            return self.refuse(404, "no such game")
        return JSONResponse(game_record(service.game_as_seen(row, person, self.settings.folder)))

    async def game_log(self, request: Request) -> Response:
        person = self.person(request)
        if person is None:
            return self.unknown()
        row = self.store.game(path_id(request.path_params["game"]))
        player = request.path_params["player"]
        if row is None or not row.plays(player):
            return self.refuse(404, "no such game, or no such player in it")
        if not self.may_read_player(person, row, player):
            return self.refuse(403, f"{player}'s output is for {player} and the instructor only")
        # kept visible since the ladder records it so; a row kept before that is made so here
        return PlainTextResponse(visible(row.stderr_of(player)), headers={"X-Content-Type-Options": "nosniff"})

    async def standings(self, request: Request) -> Response:
        if self.person(request) is None:
            return self.unknown()
        return Response(await anyio.to_thread.run_sync(self.standings_json), media_type="application/json")

    def standings_json(self) -> bytes:
        """``/api/standings``, made once per change of the class."""
        marks = self.views.current()
        return self.answers.get(("standings",), marks.key, lambda: as_json(service.standings_json(
            service.standings_view(self.settings, self.store, ranked=marks.ranked))))

    async def export(self, request: Request) -> Response:
        person = self.person(request)
        if person is None:
            return self.unknown()
        if person != INSTRUCTOR:
            return self.refuse(403, "the grade sheet is for the instructor only")
        text = await anyio.to_thread.run_sync(lambda: grade_sheet(self.settings, self.store, fresh=False))
        return Response(text, media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="grades.csv"'})

    async def class_view(self, request: Request) -> Response:
        person = self.person(request)
        if person is None:
            return self.unknown()
        if person != INSTRUCTOR:
            return self.refuse(403, "the class view is for the instructor only")
        text = await anyio.to_thread.run_sync(
            lambda: service.class_text(service.class_view(self.settings, self.store, fresh=False)))
        return Response(text, media_type="application/json")

    def class_data(self, ranked: Optional[service.Standings] = None) -> dict[str, Any]:
        return service.class_json(service.class_view(self.settings, self.store, ranked=ranked, fresh=False))

    async def starters(self, request: Request) -> Response:
        """The eight starters as submission templates (their files, command and build lines)."""
        if self.person(request) is None:
            return self.unknown()
        from .starters import starters

        return JSONResponse({"starters": await anyio.to_thread.run_sync(starters)})

    async def final_run(self, request: Request) -> Response:
        """GET: the final's state (running, exit status, the end of its output); POST: start it (instructor)."""
        person = self.person(request)
        if person is None:
            return self.unknown()
        if person != INSTRUCTOR:
            return self.refuse(403, "the final is the instructor's")
        if request.method == "POST":
            if request.headers.get("authorization") is None:
                origin = request.headers.get("origin")
                if not origin or origin.split("://", 1)[-1] != request.headers.get("host", ""):
                    return self.refuse(403, "start the final from this class's pages or with the token")
            if not self.final.start():
                return self.refuse(409, "the final is running already")
            return JSONResponse(self.final.state(), status_code=202)
        return JSONResponse(self.final.state())

    async def take_verdict(self, request: Request, fields: dict[str, str]) -> tuple[str, int] | Refusal:
        """The instructor's verdict by hand on the version the path names (``action``, ``reason`` in ``fields``):
        what it did in a line and the version's id, or why it is refused (a student: 403; no reason: 400)."""
        person = self.person(request)
        if person is None:
            return Refusal(401, "no valid token: send Authorization: Bearer TOKEN (your link holds your token)")
        if person != INSTRUCTOR:
            return Refusal(403, "only the instructor admits, rejects or re-checks a version by hand")
        if request.headers.get("authorization") is None:
            origin = request.headers.get("origin")
            if not origin or origin.split("://", 1)[-1] != request.headers.get("host", ""):
                return Refusal(403, "give a verdict from this class's pages or with the token")
        version = self.store.version(path_id(request.path_params["version"]))
        if version is None:
            return Refusal(404, f"no version {request.path_params['version']!r} in this class")
        try:
            action = VerdictAction(fields.get("action", ""))
        except ValueError:
            return Refusal(400, f"action {fields.get('action', '')!r}: one of admit, reject, recheck")
        try:
            verdict = await anyio.to_thread.run_sync(
                lambda: instructor_verdict(self.settings, self.store, version.student, version.id, action,
                                           fields.get("reason", ""), "the instructor (dashboard)"))
        except VersionBusy as exc:
            return Refusal(409, str(exc))
        except VerdictRefused as exc:
            return Refusal(400, str(exc))
        self.on_submitted()  # the admission worker looks at once (a re-check, or a build to make again)
        outcome = verdict_outcome(self.store, verdict)
        self.log(f"verdict by the instructor on the dashboard ({action.value}): {outcome}")
        return outcome, version.id

    async def verdict(self, request: Request) -> Response:
        """POST ``{"action": "admit"|"reject"|"recheck", "reason": TEXT}``: the instructor's verdict by hand."""
        person = self.person(request)
        if person is None:
            return self.unknown()
        if person != INSTRUCTOR:
            return self.refuse(403, "only the instructor admits, rejects or re-checks a version by hand")
        try:
            body = await read_capped(request, VERDICT_BODY)
            data = json.loads(body)
        except TooLarge:
            return self.refuse(413, f"a verdict is at most {VERDICT_BODY} bytes")
        except (ValueError, RecursionError):  # (RecursionError: nested too deeply for the decoder)
            return self.refuse(400, 'the body is not JSON: {"action": "admit", "reason": "..."}')
        if not isinstance(data, dict) or not all(isinstance(data.get(k, ""), str) for k in ("action", "reason")):
            return self.refuse(400, 'expected {"action": "admit"|"reject"|"recheck", "reason": TEXT}')
        if not all(encodes(data.get(k, "")) for k in ("action", "reason")):
            return self.refuse(400, "the reason is not text: it holds a lone surrogate (\\ud800), which no file can keep")
        given = await self.take_verdict(request, {k: data.get(k, "") for k in ("action", "reason")})
        if isinstance(given, Refusal):
            return self.refuse(given.status, given.reason)
        outcome, version_id = given
        row = self.store.version(version_id)
        assert row is not None
        return JSONResponse({"outcome": outcome, **public_version(row, verdicts=self.store.verdicts(version_id))})

    def stream_closed(self, person: str) -> None:
        with self.streams_lock:  # (a finalizer may run in whichever thread collects the stream)
            self.streams[person] -= 1
            if not self.streams[person]:
                del self.streams[person]

    async def events(self, request: Request) -> Response:
        """The marks of the parts of ``person``'s page (``?parts=a,b``, else their page's), each time one changes.

        The first message is every mark (``{"id": person, "parts": {part: mark}}``); the next come only when
        a part's mark moved, the shared parts no more often than :data:`.live.HELD` says (:mod:`.live`), so a
        page fetches again the parts it shows differently, and only those (``/parts?names=...``).  A person
        holds at most :data:`STREAMS_PER_PERSON` (429 past it); the students at most :data:`MAX_STREAMS`
        together (503), and the instructor's are never counted among them: one student's pages can take
        neither the class's streams nor the instructor's.
        """
        person = self.person(request)
        if person is None:
            return self.unknown()
        try:
            parts = parts_of(person, request.query_params.get("parts", ""))
        except ValueError as exc:
            return self.refuse(400, str(exc))
        retry = {"Retry-After": str(STREAM_RETRY_SECONDS)}
        with self.streams_lock:
            if self.streams.get(person, 0) >= STREAMS_PER_PERSON:
                return JSONResponse({"error": f"{STREAMS_PER_PERSON} event streams of yours are open already: "
                                              "close a page"}, status_code=429, headers=retry)
            students = sum(count for who, count in self.streams.items() if who != INSTRUCTOR)
            if person != INSTRUCTOR and students >= MAX_STREAMS:
                return JSONResponse({"error": "too many open event streams: poll /api/me instead"},
                                    status_code=503, headers=retry)
            self.streams[person] = self.streams.get(person, 0) + 1
        chance = random.Random()
        held = {part: HELD.get(part, 0.0) * chance.uniform(1.0, 1.5) for part in parts}

        async def stream() -> AsyncIterator[str]:
            try:
                self.watch()
                ends = time.monotonic() + STREAM_SECONDS * chance.uniform(0.9, 1.0)  # the class's reconnections spread
                marks = self.marks if self.marks is not None else await anyio.to_thread.run_sync(self.views.current)
                sent, sent_urgent = marks.of(person, parts), marks.urgent(person, parts)
                # (retry: the browser's wait before it opens the stream again, drawn per stream)
                yield f"retry: {chance.randint(2000, 8000)}\ndata: {json.dumps({'id': person, 'parts': sent})}\n\n"
                passed = {part: time.monotonic() for part in parts}  # when each part's mark was last passed on
                quiet_since = time.monotonic()
                while time.monotonic() < ends and not await request.is_disconnected():
                    now = time.monotonic()
                    marks = self.marks if self.marks is not None else marks
                    now_marks, urgent = marks.of(person, parts), marks.urgent(person, parts)
                    moved = [part for part in parts if now_marks[part] != sent[part]]
                    due = [part for part in moved
                           if now >= passed[part] + held[part] or urgent.get(part) != sent_urgent.get(part)]
                    if not due:
                        wait = min([STREAM_KEEPALIVE - (now - quiet_since),
                                    *(passed[part] + held[part] - now for part in moved)])
                        if wait > 0:
                            changed = self.marks_changed
                            with contextlib.suppress(asyncio.TimeoutError):
                                await asyncio.wait_for(changed.wait(), wait)
                            continue
                        yield ": still here\n\n"
                    else:  # every part that moved goes with it: one fetch for all
                        for part in moved:
                            sent[part], passed[part] = now_marks[part], now
                        sent_urgent = urgent
                        yield f"data: {json.dumps({'parts': sent})}\n\n"
                    quiet_since = time.monotonic()
            finally:
                release()

        iterator = stream()
        # released when the stream ends, or when it is dropped unstarted (a client gone before its first byte)
        release = weakref.finalize(iterator, self.stream_closed, person)
        return StreamingResponse(iterator, media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    def watch(self) -> None:
        """Start the one watcher of the class for every open stream, unless it runs (it ends with the last stream)."""
        if self.watcher is None or self.watcher.done():
            self.watcher = asyncio.ensure_future(self.watching())

    async def watching(self) -> None:
        """Every :data:`STREAM_INTERVAL`, while a stream is open: the marks again, and the streams woken if they moved.

        One query of the change mark a round however many streams are open
        (each stream asked it every round before); a change costs one
        computation of the marks (:class:`.live.LiveMarks`).
        """
        while True:
            marks = await anyio.to_thread.run_sync(self.views.current)
            if marks is not self.marks:
                self.marks = marks
                woken, self.marks_changed = self.marks_changed, asyncio.Event()
                woken.set()
            await asyncio.sleep(STREAM_INTERVAL)
            with self.streams_lock:
                if not self.streams:
                    return


def as_json(data: Any) -> bytes:
    """``data`` as the API's JSON answers hold it (as Starlette's ``JSONResponse`` writes it)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


def encodes(text: str) -> bool:
    """Whether ``text`` can be written anywhere (a lone surrogate, ``\\ud800``, which JSON may send, cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def path_id(text: str) -> int:
    """A version's or game's id as a path gives it, or -1 (no row has it) for anything but digits that fit SQLite's
    64-bit integer: a longer number would overflow the query (a 500 once), not name a row."""
    if not (text.isascii() and text.isdigit()) or len(text) > 19:
        return -1
    number = int(text)
    return number if number <= MAX_ID else -1


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


async def read_capped(request: Request, limit: int) -> bytes:
    """The whole body, refused (:class:`TooLarge`) as soon as it passes ``limit`` bytes, before it is all read."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def parse_submission(content_type: str, body: bytes) -> tuple[dict[str, str], list[tuple[str, bytes]]]:
    """The fields (``command``, ``build``) and the files of a submission: multipart/form-data or JSON.

    Multipart: ``files`` parts with their file names (a folder's relative
    paths, or one .zip), or ``paste`` (the text) with ``paste_name``.  JSON:
    ``{"command", "build", "files": [{"name", "content"}]}`` (content as text).
    """
    kind = content_type.split(";")[0].strip().lower()
    fields: dict[str, str] = {}
    uploads: list[tuple[str, bytes]] = []
    if kind == "application/json":
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise UploadRefused(f"the body is not JSON: {exc}") from None
        except RecursionError:  # the decoder recurses once per level: Python's own limit bounds the depth
            raise UploadRefused("the JSON is nested too deeply: a submission is {\"files\": [{...}]}, three levels") from None
        if not isinstance(data, dict) or not isinstance(data.get("files", []), list):
            raise UploadRefused("expected {\"command\", \"build\", \"files\": [{\"name\", \"content\"}]}")
        for key in ("command", "build"):
            value = data.get(key, "")
            if not isinstance(value, str):
                raise UploadRefused(f"{key} must be a string")
            fields[key] = value
        for item in data.get("files", []):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("content"), str):
                raise UploadRefused("each file is {\"name\": TEXT, \"content\": TEXT}")
            try:
                content = item["content"].encode("utf-8")
            except UnicodeEncodeError as exc:
                raise UploadRefused(f"{ascii(item['name'])}: its content holds {item['content'][exc.start]!r} at "
                                    f"character {exc.start + 1}, which is not text (it does not encode as UTF-8); "
                                    "send a file that is not text as a file (multipart) or in a .zip") from None
            uploads.append((item["name"], content))
        return fields, uploads
    if kind != "multipart/form-data":
        raise UploadRefused("send multipart/form-data (files, command, build) or JSON")
    message = BytesParser(policy=email.policy.HTTP).parsebytes(
        b"MIME-Version: 1.0\r\nContent-Type: " + content_type.encode("latin-1", "replace") + b"\r\n\r\n" + body)
    if not message.is_multipart():
        raise UploadRefused("the multipart body cannot be read")
    paste_name = ""
    paste: Optional[bytes] = None
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if name == "files" and filename:
            uploads.append((str(filename), data))
        elif name in ("command", "build", "paste_name"):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UploadRefused(f"the {name} field is not UTF-8 text (byte {exc.start + 1})") from None
            if name == "paste_name":
                paste_name = text.strip()
            else:
                fields[str(name)] = text
        elif name == "paste":
            paste = data
    if paste is not None and paste.strip():
        if uploads:
            raise UploadRefused("send files or paste one file, not both")
        if not paste_name:
            raise UploadRefused("a pasted file needs its name (paste_name, e.g. agent.py)")
        uploads.append((paste_name, paste))
    return fields, uploads
