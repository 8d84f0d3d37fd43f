"""Everything the class server takes from the floors below: the one module that imports tournaments/ and web/.

The rest of classroom/ imports these names from here, so a module moved in
tournaments/ or web/ is fixed in this file alone.
"""

from __future__ import annotations

from importlib import resources

from ..agents.check import FAIL, ReportCard, check_agent
from ..referee.hints import HOME_ON_SERVER
from ..agents.registry import names as builtin_names
from ..agents.registry import prepare as prepare_builtins
from ..protocol import Colour, GameRecord, Move, Result, Termination
from ..protocol.record import result_from_dict
from ..protocol.openings import read_openings, suite_path
from ..referee import GameConfig
from ..referee.cores import usable_cores
from ..referee.clock import FILE_SECONDS, TimeControl, TimeRule, format_clock, parse_clock, time_rule
from ..referee.fingerprint import fingerprint
from ..referee.game_pair import nth_opening
from ..referee.sandbox import SandboxUnavailable, is_system_path
from ..referee.sandbox import require as require_sandbox
from ..referee.spec import AgentSpec, check_file_name
from ..tournaments.run.build import run_build
from ..tournaments.schedule.config import (AgentEntry, TournamentFileError, key, parse_referee, read_table,
                                           table_template)
from ..tournaments.run.jobs import GameJob, PlayedGame, flagged_timeout, play_job
from ..tournaments.run.pools import DaskPool, LocalPool, Pool, cpu_line, default_concurrency, kill_orphans
from ..tournaments.results.ratings import Rating, fit
from ..tournaments.results.store import FinishedGame
from ..tournaments.results.store import StoreError as TournamentStoreError
from ..tournaments.results.export import tables as tournament_tables
from ..tournaments.schedule.config import load as load_tournament
from ..web.app import events
from ..web.cli import is_loopback, listen
from ..web.files import NotServed, read_under
from ..web.gameview import entries_from_record, game_view
from ..web.templating import page_templates

# The starters' tournament file (each starter's command and build line) and their source files.
STARTERS_FILE = resources.files("othello_arena.agents").joinpath("starters.toml")
EXAMPLES = resources.files("othello_arena.agents").joinpath("examples")
# The web app's stylesheet, script and board drawing, which the class pages reuse.
WEB_STATIC = resources.files("othello_arena.web").joinpath("static")

__all__ = [
    "FAIL", "HOME_ON_SERVER", "ReportCard", "check_agent", "builtin_names", "prepare_builtins", "Colour", "GameRecord",
    "Move", "Result", "Termination",
    "read_openings", "suite_path", "GameConfig", "TimeControl", "format_clock", "parse_clock", "fingerprint", "nth_opening", "AgentSpec", "check_file_name",
    "FILE_SECONDS", "TimeRule", "time_rule", "TournamentFileError", "key", "parse_referee", "read_table", "table_template",
    "run_build", "AgentEntry", "GameJob", "PlayedGame", "flagged_timeout", "play_job", "DaskPool", "LocalPool", "Pool",
    "cpu_line", "default_concurrency", "kill_orphans", "Rating", "fit", "FinishedGame", "events", "is_loopback", "listen",
    "usable_cores", "result_from_dict", "TournamentStoreError", "tournament_tables", "load_tournament",
    "STARTERS_FILE", "EXAMPLES", "SandboxUnavailable", "is_system_path", "require_sandbox",
    "NotServed", "read_under", "entries_from_record", "game_view", "page_templates", "WEB_STATIC",
]
