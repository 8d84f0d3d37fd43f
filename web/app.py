"""The web app (Starlette): pages, a JSON API, and live updates by server-sent events.

Who may do what:

- everybody who can connect may watch; starting a game or moving in one
  needs the token printed at start (``?token=`` once in the address sets a
  cookie), on loopback too: every user of a shared machine can reach
  127.0.0.1, and a game runs a command of the starter's choosing (only
  ``--no-token``, on loopback, lets anyone who connects play);
- a request that changes anything must be JSON from this app's own pages (a
  form posted by another web site cannot start a program here), and on
  loopback the ``Host`` header must name this machine (no DNS rebinding);
- files are served from the tournament's results only (:mod:`.files`), and
  of those only the published report and the game records to everybody:
  the database, the build logs, the agents' stderr logs and their folders
  need the token (401 without one, 403 with a wrong one), on loopback too;
  so do the stderr tails of the agent pages' API.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Optional

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..protocol import GameRecord
from .files import NotServed, is_public, read_under
from .games import GameHall, GameRequest, GameRequestError
from .templating import page_templates
from .tournament import TournamentView

TOKEN_COOKIE = "othello_token"
GAME_INTERVAL = 0.1  # seconds between looks at a game for its page
TOURNAMENT_INTERVAL = 0.5  # between looks at the tournament's database and live logs
KEEPALIVE_SECONDS = 15.0
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass
class Settings:
    """How the app was started: its games folder, the tournament it shows, who may play."""

    games_dir: Path
    tournament: Any = None  # a loaded Tournament, or None
    token: Optional[str] = None  # None: no token needed (loopback)
    sandbox: str = "bwrap"
    allowed_hosts: tuple[str, ...] = ("*",)
    base: Optional[Path] = None  # where NAME=COMMAND's relative paths are found (the directory serve ran in)
    config_overrides: Optional[dict[str, Any]] = None


class _Handlers:
    """The app's pages and API for one :class:`Settings`: who may play, the games, the tournament shown."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.package = resources.files("othello_arena.web")
        self.templates = page_templates()
        self.hall = GameHall(settings.games_dir, sandbox=settings.sandbox, base=settings.base,
                             config_overrides=settings.config_overrides)
        self.view = TournamentView(settings.tournament) if settings.tournament is not None else None

    def may_play(self, request: Request) -> bool:
        """Whether the request carries the token (its cookie or header), or none is needed: to play, to read logs."""
        if self.settings.token is None:
            return True
        given = request.cookies.get(TOKEN_COOKIE) or request.headers.get("x-othello-token") or ""
        return hmac.compare_digest(given.encode(), self.settings.token.encode())

    def may_read_logs(self, request: Request) -> bool:
        """Whether the request may read the raw results and logs: the token (cookie, header or ``?token=``)."""
        if self.may_play(request):
            return True
        given = request.query_params.get("token", "")
        return bool(given) and hmac.compare_digest(given.encode(), (self.settings.token or "").encode())

    def refuse_logs(self, request: Request, what: str) -> JSONResponse:
        """401 without a token, 403 with a wrong one: the reason says which, and what the token opens."""
        given = request.cookies.get(TOKEN_COOKIE) or request.headers.get("x-othello-token") or \
            request.query_params.get("token", "")
        reason = (f"{what} is only for the instructor: the database, build logs, agents' stderr logs and "
                  "folders need the token printed when the server started (open the address it printed, "
                  "with ?token=...)")
        return self.refuse(403 if given else 401, ("wrong token: " if given else "") + reason)

    def page(self, request: Request, template: str, **context: Any) -> Response:
        given = request.query_params.get("token", "")
        token = self.settings.token
        token_given = bool(token and given and hmac.compare_digest(given.encode(), token.encode()))
        context.update(tournament=self.settings.tournament, may_play=self.may_play(request) or token_given,
                       token_needed=self.settings.token is not None)
        response = self.templates.TemplateResponse(request, template, context)
        if token_given:  # the address printed at start: remembered, so the pages need not carry it
            response.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="strict")
        return response

    @staticmethod
    def refuse(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    async def checked_json(self, request: Request) -> dict[str, Any] | JSONResponse:
        """The JSON body of a request that changes something, or the refusal."""
        if not self.may_play(request):
            return self.refuse(403, "starting or playing games needs the token printed when the server started "
                               "(open the address it printed, with ?token=...)")
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return self.refuse(415, "send JSON (Content-Type: application/json)")
        origin = request.headers.get("origin")
        if origin and origin.split("://", 1)[-1] != request.headers.get("host", ""):
            return self.refuse(403, f"a request from {origin} is not from this app's pages")
        try:
            body = await request.json()
        except ValueError:
            return self.refuse(400, "the body is not JSON")
        if not isinstance(body, dict):
            return self.refuse(400, "the body must be a JSON object")
        return body

    # -- pages -----------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        return self.page(request, "index.html", games=self.hall.summaries())

    async def play_page(self, request: Request) -> Response:
        from ..agents import registry

        sized = [name for name in registry.names() if len(registry.sizes_of(name)) > 1]
        return self.page(request, "play.html", builtins=registry.names(), sized=sized)

    async def game_page(self, request: Request) -> Response:
        game = self.hall.get(request.path_params["game_id"])
        if game is None:
            return HTMLResponse("no such game", status_code=404)
        return self.page(request, "game.html", source=f"/api/games/{game.id}", title=f"Game {game.id}", web_game=True)

    async def tournament_page(self, request: Request) -> Response:
        if self.view is None:
            return HTMLResponse("this server shows no tournament (othello serve FILE.toml)", status_code=404)
        overview = await anyio.to_thread.run_sync(self.view.overview)  # the first paint, without JavaScript
        return self.page(request, "tournament.html", overview=overview)

    async def tournament_game_page(self, request: Request) -> Response:
        key = request.path_params["key"]
        if self.view is None or await anyio.to_thread.run_sync(self.view.game, key) is None:
            return HTMLResponse("no such game", status_code=404)
        return self.page(request, "game.html", source=f"/api/tournament/games/{key}", title=f"Game {key}",
                         web_game=False)

    async def agent_page(self, request: Request) -> Response:
        name = request.path_params["name"]
        if self.view is None or name not in self.view.tournament.agent_names:
            return HTMLResponse("no such agent", status_code=404)
        return self.page(request, "agent.html", name=name)

    async def results_file(self, request: Request) -> Response:
        if self.view is None:
            return self.refuse(404, "this server shows no tournament")
        path = request.path_params["path"]
        if not is_public(path) and not self.may_read_logs(request):
            return self.refuse_logs(request, f"/results/{path}")
        try:
            data = await anyio.to_thread.run_sync(read_under, self.view.results_dir, path)
        except NotServed as exc:
            return self.refuse(exc.status, exc.reason)
        name = request.path_params["path"].rsplit("/", 1)[-1]
        kind = "application/json" if name.endswith(".json") else (
            "text/html; charset=utf-8" if name.endswith(".html") else "text/plain; charset=utf-8")
        # An agent's file must not run as a page of this app: a sandboxed page has an origin of its own
        # (no cookie, no token, refused by the API), so the report's own script may run.
        headers = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox allow-scripts"}
        return Response(data, media_type=kind, headers=headers)

    # -- the API ---------------------------------------------------------------

    async def new_game(self, request: Request) -> Response:
        body = await self.checked_json(request)
        if isinstance(body, JSONResponse):
            return body
        try:
            game = self.hall.start(GameRequest.from_form(body))
        except GameRequestError as exc:
            return self.refuse(400, str(exc))
        return JSONResponse({"id": game.id, "url": f"/games/{game.id}"}, status_code=201)

    async def move(self, request: Request) -> Response:
        game = self.hall.get(request.path_params["game_id"])
        if game is None:
            return self.refuse(404, "no such game")
        body = await self.checked_json(request)
        if isinstance(body, JSONResponse):
            return body
        try:
            game.play(str(body.get("colour", "")), body.get("square"))
        except GameRequestError as exc:
            return self.refuse(409, str(exc))
        return JSONResponse({"written": game.view()["written"]})

    def web_game_view(self, request: Request) -> Optional[Callable[[], Any]]:
        game = self.hall.get(request.path_params["game_id"])
        return None if game is None else game.view

    async def game_json(self, request: Request) -> Response:
        produce = self.web_game_view(request)
        return self.refuse(404, "no such game") if produce is None else JSONResponse(produce())

    async def game_events(self, request: Request) -> Response:
        produce = self.web_game_view(request)
        return self.refuse(404, "no such game") if produce is None else events(request, produce, GAME_INTERVAL)

    async def game_download(self, request: Request) -> Response:
        game = self.hall.get(request.path_params["game_id"])
        if game is None or request.path_params["format"] not in ("json", "ggf"):
            return self.refuse(404, "no such game record (game.json or game.ggf)")
        try:
            data = await anyio.to_thread.run_sync(game.record_json)
        except OSError:
            return self.refuse(404, "the game is not over: its record is written at the end")
        name = f"othello-{game.directory.name}"
        if request.path_params["format"] == "ggf":
            text = GameRecord.from_json(data.decode("utf-8")).to_ggf()
            return Response(text, media_type="text/plain; charset=utf-8",
                            headers={"Content-Disposition": f'attachment; filename="{name}.ggf"'})
        return Response(data, media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{name}.json"'})

    async def game_stderr(self, request: Request) -> Response:
        """A program's standard output and error in a game of this server: for whoever may play here (its owner)."""
        if not self.may_play(request):
            return self.refuse(403, "an agent's output is shown to whoever started the game (the server's token)")
        game = self.hall.get(request.path_params["game_id"])
        if game is None:
            return self.refuse(404, "no such game")
        try:
            data = await anyio.to_thread.run_sync(game.stderr_log, request.path_params["colour"])
        except OSError:
            return self.refuse(404, "no output kept for that side (a person, or the game is not over)")
        return Response(data, media_type="text/plain; charset=utf-8")

    async def agents_list(self, request: Request) -> Response:
        from ..agents import registry

        return JSONResponse({"builtins": registry.names(), "games": self.hall.summaries()})

    def tournament_producer(self, request: Request) -> Optional[Callable[[], Any]]:
        view = self.view
        if view is None:
            return None
        with_logs = self.may_read_logs(request)  # the stderr of agents, and links to it: the instructor only
        if "key" in request.path_params:
            key = request.path_params["key"]
            return lambda: view.game(key, with_logs=with_logs)
        if "name" in request.path_params:
            name = request.path_params["name"]
            return lambda: view.agent(name, with_logs=with_logs)
        return view.overview

    async def tournament_json(self, request: Request) -> Response:
        produce = self.tournament_producer(request)
        data = None if produce is None else await anyio.to_thread.run_sync(produce)
        return self.refuse(404, "not found") if data is None else JSONResponse(data)

    async def tournament_events(self, request: Request) -> Response:
        produce = self.tournament_producer(request)
        return self.refuse(404, "not found") if produce is None else events(request, produce, TOURNAMENT_INTERVAL)


def create_app(settings: Settings) -> Starlette:
    """The Starlette application for ``settings``."""
    handlers = _Handlers(settings)
    package = handlers.package
    routes = [
        Route("/", handlers.index),
        Route("/play", handlers.play_page),
        Route("/games/{game_id}", handlers.game_page),
        Route("/tournament", handlers.tournament_page),
        Route("/tournament/games/{key}", handlers.tournament_game_page),
        Route("/tournament/agents/{name}", handlers.agent_page),
        Route("/results/{path:path}", handlers.results_file),
        Route("/api/agents", handlers.agents_list),
        Route("/api/games", handlers.new_game, methods=["POST"]),
        Route("/api/games/{game_id}", handlers.game_json),
        Route("/api/games/{game_id}/events", handlers.game_events),
        Route("/api/games/{game_id}/move", handlers.move, methods=["POST"]),
        Route("/api/games/{game_id}/game.{format:str}", handlers.game_download),
        Route("/api/games/{game_id}/stderr/{colour}", handlers.game_stderr),
        Route("/api/tournament", handlers.tournament_json),
        Route("/api/tournament/events", handlers.tournament_events),
        Route("/api/tournament/games/{key}", handlers.tournament_json),
        Route("/api/tournament/games/{key}/events", handlers.tournament_events),
        Route("/api/tournament/agents/{name}", handlers.tournament_json),
        Route("/api/tournament/agents/{name}/events", handlers.tournament_events),
        Mount("/static", app=StaticFiles(directory=str(package.joinpath("static"))), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(settings.allowed_hosts))]
    app = Starlette(routes=routes, middleware=middleware)
    app.state.hall = handlers.hall
    app.state.settings = settings
    return app


def events(request: Request, produce: Callable[[], Any], interval: float) -> StreamingResponse:
    """Server-sent events: ``produce()``'s data each time it changes (checked every ``interval`` seconds).

    The data's ``now`` (the server's clock, for the page's running clocks) is
    left out of the comparison, so an unchanged game sends nothing but a
    comment line now and then to keep the connection open.
    """

    async def stream() -> AsyncIterator[str]:
        last = None
        quiet = 0.0
        while not await request.is_disconnected():
            data = await anyio.to_thread.run_sync(produce)
            if isinstance(data, dict):
                compared = json.dumps({k: v for k, v in data.items() if k != "now"}, sort_keys=True)
            else:
                compared = json.dumps(data)
            if compared != last:
                last = compared
                quiet = 0.0
                yield f"data: {json.dumps(data)}\n\n"
            elif quiet >= KEEPALIVE_SECONDS:
                quiet = 0.0
                yield ": still here\n\n"
            await asyncio.sleep(interval)
            quiet += interval

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
