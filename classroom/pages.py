"""The class server's pages: a student's page, the instructor's dashboard, the standings, a game's replay.

Each page is rendered whole on the server (Jinja2), so it is useful without
JavaScript: the upload form posts to ``/submit``, the final's button to
``/final``.  A small script (``static/class.js``) only refreshes: the parts
of a page that change while it is open (``data-part``, each with its mark:
:mod:`.live`) are fetched again alone (``/parts?names=...``) when a message
of ``/api/events`` says their mark moved; each part is drawn once per mark
and person, kept (:class:`PartCache`), however many times it is asked.  The
dashboard is fetched whole at its stream's messages.  The script sends the
upload through ``/api/submissions`` and fills the form from a starter.  A game's replay is the web app's own
(``Arena.gamePage`` of ``web/static/app.js``), first drawn here.

What a page shows is what the JSON API gives the same person, under the
same rule (:meth:`.app.ClassApi.may_read_player`, and a version's code and
card for its owner and the instructor only): another student's stderr,
code or build log never reaches a student's HTML.
"""

from __future__ import annotations

import functools
import json
import urllib.parse
from importlib import resources
from typing import Any, AsyncIterator, Optional

import anyio
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .admission import space_line
from .app import VERDICT_BODY, ClassApi, Refusal, TooLarge, path_id, read_capped
from .arena import WEB_STATIC, GameRecord, NotServed, entries_from_record, game_view, page_templates, read_under
from .ladder import game_summary
from .copies import side_by_side
from .live import STANDINGS_PAGE, STUDENT_PAGE, Kept, Marks, parts_of
from .service import (MY_GAMES, ClassView, TimeRule, class_view, game_as_seen, listed, standings_view,
                      verdicts_by_version)
from .similarity import DEFAULT_THRESHOLD
from .starters import starters
from .store import INSTRUCTOR, Game, GameStatus

PACKAGE = resources.files("othello_arena.classroom")
CLASS_GAMES_SHOWN = 60  # the class's latest games on a student's page
DASHBOARD_GAMES_SHOWN = 300
PARTS_KEPT = 1500  # parts drawn and kept (a class of 300 with every page open: 5 a student), the least recently used go


class ClassPages:
    """The page handlers, over the API's handlers (who is asking, what they may read, the data)."""

    def __init__(self, api: ClassApi) -> None:
        self.api = api
        self.templates = page_templates(PACKAGE.joinpath("templates"))  # the web app's under the class's own
        self.templates.env.filters["short"] = lambda fingerprint: (fingerprint or "")[:12]
        self.templates.env.filters["when"] = _when
        self.starters = starters()  # the starters' lines and files: read once, they come with the package
        self.parts: Kept[Markup] = Kept(PARTS_KEPT)  # each part drawn once per mark and person
        self.latest: tuple[str, list[Game]] = ("", [])  # the class's latest finished games, by their mark

    async def render(self, request: Request, template: str, person: Optional[str], status: int = 200,
                     **context: Any) -> Response:
        """``template`` drawn in a worker thread: drawn in the event loop, the dashboard of a class of 300 (150 ms)
        held every other answer and stream of the class for as long."""
        context.update(class_name=self.api.settings.name, person=person, instructor=person == INSTRUCTOR)
        response = await anyio.to_thread.run_sync(
            functools.partial(self.templates.TemplateResponse, request, template, context, status_code=status))
        response.headers["Cache-Control"] = "no-store"  # a page holds the person's own logs: never kept by a proxy
        return response

    # -- the home page: a student's page, the dashboard, or how to sign in ------------

    async def home(self, request: Request) -> Response:
        given = request.query_params.get("token", "")
        if given and self.api.store.who(given) is None:
            return await self.render(request, "signin.html", None, status=401,
                               error="That token is not one of this class's: open the link your instructor sent.")
        if given:
            return await self.api.index(request)  # the cookie set there, the token out of the address bar
        person = self.api.person(request)
        if person is None:
            return await self.render(request, "signin.html", None, status=401)
        if person == INSTRUCTOR:
            return await self.dashboard(request)
        return await self.student_page(request, person)

    async def student_page(self, request: Request, person: str, error: str = "", status: int = 200) -> Response:
        data = await anyio.to_thread.run_sync(self.student_data, person)
        return await self.render(request, "student.html", person, status=status, error=error, **data)

    def student_data(self, person: str) -> dict[str, Any]:
        student = self.api.store.student(person)
        if student is None:
            raise LookupError(f"no student {person!r} in this class")
        settings = self.api.settings
        return {"student": student, "parts": self.drawn(person, STUDENT_PAGE),
                "starters": self.starters, "limits": {"bytes": settings.admission.max_upload_bytes, "files": settings.admission.max_files,
                                                   "per_hour": settings.admission.submissions_per_hour},
                # walked on the page alone (not in a part drawn again at each change)
                "space": space_line(settings, person)}

    # -- the parts that change while a page is open ----------------------------------------

    def drawn(self, person: str, names: tuple[str, ...]) -> dict[str, Markup]:
        """The parts ``names`` of ``person``'s page as they are now (call it from a worker thread)."""
        marks = self.api.views.current()
        drawn: dict[str, Markup] = {}
        for name in names:
            drawn[name] = self.parts.get((person, name), marks.of(person, (name,))[name],
                                         functools.partial(self.draw, person, name, marks))
        return drawn

    def draw(self, person: str, name: str, marks: Marks) -> Markup:
        """One part of ``person``'s page, drawn from the class as it is now (its mark ``marks`` says, or newer)."""
        settings, store = self.api.settings, self.api.store
        mark = marks.of(person, (name,))[name]
        module = self.templates.env.get_template("_parts.html").module
        if name == "standing":
            line = next((line for line in marks.ranked[0] if line.id == person), None)
            return Markup(module.standing(line, TimeRule.of(settings).text, mark))  # type: ignore[attr-defined]
        if name == "versions":
            return Markup(module.versions(list(reversed(store.versions(person))),  # type: ignore[attr-defined]
                                          verdicts_by_version(store, person), mark))
        if name == "games":
            rows = [listed(game, person, settings.folder)
                    for game in store.games_of_student(person, latest=MY_GAMES, records=False)]
            return Markup(module.games(person, rows, mark))  # type: ignore[attr-defined]
        if name == "class-games":
            rows = [listed(game, person, settings.folder) for game in self.class_games(marks)
                    if not _played_by(game, person)][:CLASS_GAMES_SHOWN]
            return Markup(module.class_games(rows, mark))  # type: ignore[attr-defined]
        if name == "standings":
            data = standings_view(settings, store, ranked=marks.ranked)
            return Markup(module.standings(data, person, mark))  # type: ignore[attr-defined]
        raise ValueError(f"no part {name!r}")

    def class_games(self, marks: Marks) -> list[Game]:
        """The class's latest finished games, newest first: enough for any student's page without their own (read
        once per finished game for every page)."""
        mark = marks.shared["class-games"]
        with self.parts.lock:
            if self.latest[0] == mark:
                return self.latest[1]
        found = self.api.store.games(GameStatus.FINISHED, latest=CLASS_GAMES_SHOWN + MY_GAMES, records=False)
        with self.parts.lock:
            self.latest = (mark, found)
        return found

    async def part(self, request: Request) -> Response:
        """``/parts?names=a,b``: the parts of the asker's page, drawn (``{"parts": {name: html}}``)."""
        person = self.api.person(request)
        if person is None:
            return self.api.unknown()
        try:
            names = parts_of(person, request.query_params.get("names", ""))
        except ValueError as exc:
            return self.api.refuse(400, str(exc))
        if person == INSTRUCTOR and set(names) - set(STANDINGS_PAGE):
            return self.api.refuse(400, "the dashboard is drawn whole: fetch / again")
        parts = await anyio.to_thread.run_sync(self.drawn, person, names)
        return JSONResponse({"parts": {name: str(html) for name, html in parts.items()}},
                            headers={"Cache-Control": "no-store"})

    async def dashboard(self, request: Request, verdict_error: str = "", status: int = 200) -> Response:
        def read() -> tuple[ClassView, Markup]:
            data = class_view(self.api.settings, self.api.store, DASHBOARD_GAMES_SHOWN, fresh=False)
            return data, self.versions_html(data)

        data, versions_html = await anyio.to_thread.run_sync(read)
        return await self.render(request, "dashboard.html", INSTRUCTOR, status=status, data=data, final=self.api.final.state(),
                           verdict_error=verdict_error, copy_threshold=DEFAULT_THRESHOLD, versions_html=versions_html)

    def versions_html(self, data: ClassView) -> Markup:
        """The dashboard's list of every student's versions with their cards, made once per change of the roster
        it shows (kept with it), of each student's part drawn again only when that student's rows changed
        (:meth:`.Roster.keep_from`): at 300 students it is most of the page (1 MB, 300 ms of a loaded core whole)."""
        people = data.roster
        assert people is not None  # (class_view reads one)
        found = people.made.get("versions_list_html")
        if found is None:
            drawn: dict[str, Markup] = people.made.setdefault("versions_html", {})
            one = self.templates.env.get_template("_dashboard_student.html")
            parts = []
            for student in people.students:
                part = drawn.get(student.id)
                if part is None:
                    part = drawn[student.id] = Markup(one.render(student=student, roster=people))
                parts.append(part)
            found = people.made["versions_list_html"] = Markup(
                self.templates.env.get_template("_dashboard_versions.html").render(students=parts))
        return found

    # -- the instructor's hand: a verdict on a version, copies side by side --------------

    async def verdict_form(self, request: Request) -> Response:
        """The dashboard's verdict form (action, reason): back to the version, or the dashboard saying why not."""
        try:
            body = await read_capped(request, VERDICT_BODY)
        except TooLarge:
            return self.api.refuse(413, f"a verdict is at most {VERDICT_BODY} bytes")
        fields = {name: values[-1] for name, values in
                  urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        given = await self.api.take_verdict(request, fields)
        if not isinstance(given, Refusal):
            _, version_id = given
            return RedirectResponse(f"/#version-{version_id}", status_code=303)
        if self.api.person(request) != INSTRUCTOR:
            return self.api.refuse(given.status, given.reason)
        return await self.dashboard(request, verdict_error=given.reason, status=given.status)

    async def copies_page(self, request: Request) -> Response:
        """Two versions side by side, the code they share marked: the instructor's alone (a student gets 403)."""
        person = self.api.person(request)
        if person is None:
            return await self.render(request, "signin.html", None, status=401)
        if person != INSTRUCTOR:
            return await self.render(request, "missing.html", person, status=403, what="this page is the instructor's")
        a, b = path_id(request.path_params["a"]), path_id(request.path_params["b"])
        versions = [self.api.store.version(a), self.api.store.version(b)]
        if versions[0] is None or versions[1] is None:
            return await self.render(request, "missing.html", person, status=404, what="no such version")
        files = await anyio.to_thread.run_sync(side_by_side, self.api.settings, self.api.store, a, b)
        return await self.render(request, "copies.html", person, a=versions[0], b=versions[1], files=files)

    # -- the upload and the final, as plain forms (the script sends the same through the API) --

    async def submit_form(self, request: Request) -> Response:
        person = self.api.person(request)
        if person is None:
            return await self.render(request, "signin.html", None, status=401)
        taken = await self.api.take_submission(request, person)
        if not isinstance(taken, Refusal):
            version, _ = taken
            return RedirectResponse(f"/#version-{version.id}", status_code=303)
        if person == INSTRUCTOR:
            return PlainTextResponse(taken.reason, status_code=taken.status)
        return await self.student_page(request, person, error=taken.reason, status=taken.status)

    async def final_form(self, request: Request) -> Response:
        answer = await self.api.final_run(request)
        if answer.status_code >= 400 and answer.status_code != 409:
            return answer
        return RedirectResponse("/#final", status_code=303)

    async def final_file(self, request: Request) -> Response:
        """The final's results (its report and game folders) for the instructor: never for a student."""
        person = self.api.person(request)
        if person != INSTRUCTOR:
            return self.api.unknown() if person is None else self.api.refuse(403, "the final's files are the instructor's")
        root = self.api.settings.folder / "final" / "results"
        try:
            data = await anyio.to_thread.run_sync(read_under, root, request.path_params["path"])
        except NotServed as exc:
            return self.api.refuse(exc.status, exc.reason)
        name = request.path_params["path"].rsplit("/", 1)[-1]
        kind = "text/html; charset=utf-8" if name.endswith(".html") else (
            "application/json" if name.endswith(".json") else "text/plain; charset=utf-8")
        # the report's own script may run, in an origin of its own (no cookie): an agent's file is never a page here
        return Response(data, media_type=kind, headers={"X-Content-Type-Options": "nosniff",
                                                        "Content-Security-Policy": "sandbox allow-scripts"})

    # -- the standings and a game ----------------------------------------------------------

    async def standings_page(self, request: Request) -> Response:
        person = self.api.person(request)
        if person is None:
            return await self.render(request, "signin.html", None, status=401)
        parts = await anyio.to_thread.run_sync(self.drawn, person, STANDINGS_PAGE)
        return await self.render(request, "standings.html", person, data={"class_name": self.api.settings.name}, parts=parts)

    async def game_page(self, request: Request) -> Response:
        person = self.api.person(request)
        if person is None:
            return await self.render(request, "signin.html", None, status=401)
        row = self.api.store.game(path_id(request.path_params["game"]))
        if row is None:
            return await self.render(request, "missing.html", person, status=404, what="no such game")
        row = game_as_seen(row, person, self.api.settings.folder)
        game = game_summary(row)
        logs = [player for player in (row.white, row.black) if self.api.may_read_player(person, row, player)]
        view = self.view_of(row)
        return await self.render(request, "game.html", person, game=game, logs=logs, view=view,
                           source=f"/games/{game['id']}/view")

    def view_of(self, row: Game) -> Optional[dict[str, Any]]:
        if not row.record:
            return None
        record = GameRecord.from_json(row.record)
        return game_view(entries_from_record(record), row.white, row.black)

    def seen_view(self, request: Request, person: str) -> Optional[dict[str, Any]]:
        """The replay of the game the path names, as ``person`` may see it; ``None``: no such game, or not finished."""
        row = self.api.store.game(path_id(request.path_params["game"]))
        return None if row is None else self.view_of(game_as_seen(row, person, self.api.settings.folder))

    async def game_view_events(self, request: Request) -> Response:
        """The replay's one message (a finished game does not change): sent once, the browser told not to ask again."""
        person = self.api.person(request)
        if person is None:
            return self.api.unknown()
        view = self.seen_view(request, person)
        if view is None:
            return self.api.refuse(404, "no such game, or it is not finished")
        text = f"retry: 86400000\ndata: {json.dumps(view)}\n\n"

        async def once() -> AsyncIterator[str]:
            yield text

        return StreamingResponse(once(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    async def game_view_json(self, request: Request) -> Response:
        person = self.api.person(request)
        if person is None:
            return self.api.unknown()
        view = self.seen_view(request, person)
        return self.api.refuse(404, "no such game, or it is not finished") if view is None else JSONResponse(view)


def _played_by(game: Game, student: str) -> bool:
    """Whether one of ``student``'s versions played ``game`` (it is in their own games: a reference of the same
    name is not them)."""
    return ((game.white == student and game.white_version is not None)
            or (game.black == student and game.black_version is not None))


def _when(text: Optional[str]) -> str:
    """An ISO time as a page shows it: date and time to the second, its zone kept."""
    return (text or "").replace("T", " ").replace("+00:00", " UTC")




def page_routes(api: ClassApi) -> list[BaseRoute]:
    """The pages' routes, placed before the API's by :func:`.site.create_app`."""
    pages = ClassPages(api)
    return [
        Route("/", pages.home),
        Route("/submit", pages.submit_form, methods=["POST"]),
        Route("/final", pages.final_form, methods=["POST"]),
        Route("/versions/{version}/verdict", pages.verdict_form, methods=["POST"]),
        Route("/copies/{a}/{b}", pages.copies_page),
        Route("/final/results/{path:path}", pages.final_file),
        Route("/standings", pages.standings_page),
        Route("/parts", pages.part),
        Route("/games/{game}", pages.game_page),
        Route("/games/{game}/view", pages.game_view_json),
        Route("/games/{game}/view/events", pages.game_view_events),
        Mount("/static", app=StaticFiles(directory=str(WEB_STATIC)), name="static"),
        Mount("/class-static", app=StaticFiles(directory=str(PACKAGE.joinpath("static"))), name="class-static"),
    ]
