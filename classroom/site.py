"""The class server's web application: the pages (:mod:`.pages`) and the JSON API (:mod:`.app`) on one Starlette app.

Its own module so that the pages can use the API's handlers (the one rule of
who reads what, :meth:`.app.ClassApi.may_read_player`) without the API
importing the pages back.
"""

from __future__ import annotations

from typing import Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import Route

from .app import LOOPBACK_HOSTS, ClassApi
from .pages import page_routes
from .settings import ClassSettings
from .store import ClassStore


def create_app(settings: ClassSettings, store: ClassStore, on_submitted: Callable[[], None],
               loopback: bool, log: Callable[[str], None] = lambda line: None) -> Starlette:
    """The class server's Starlette application; ``log``: the server's log (a line per submission or refusal)."""
    api = ClassApi(settings, store, on_submitted, log)
    routes = [
        *page_routes(api),  # the pages (pages.py): "/", /standings, /games/ID, the forms, the static files
        Route("/api/submissions", api.submissions, methods=["POST"]),
        Route("/api/me", api.me),
        Route("/api/events", api.events),
        Route("/api/versions/{version}", api.version),
        Route("/api/versions/{version}/files/{path:path}", api.version_file),
        Route("/api/versions/{version}/verdict", api.verdict, methods=["POST"]),
        Route("/api/games/{game}", api.game),
        Route("/api/games/{game}/log/{player}", api.game_log),
        Route("/api/standings", api.standings),
        Route("/api/export.csv", api.export),
        Route("/api/class", api.class_view),
        Route("/api/starters", api.starters),
        Route("/api/final", api.final_run, methods=["GET", "POST"]),
    ]
    # On loopback the Host header must name this machine: no DNS rebinding from a web page.
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(LOOPBACK_HOSTS) if loopback else ["*"])]
    app = Starlette(routes=routes, middleware=middleware)
    app.state.api = api
    return app
