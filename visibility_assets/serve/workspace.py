"""What every request of the workspace shares: the config, the warehouse reader, the
accounts, the guard and the templates; and the one path from a URL to a view's data, which
the page, its JSON and its CSV all take."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from visibility_assets.config import VisibilityConfig
from visibility_assets.measure.change_rule import change_rule
from visibility_assets.measure.metric_catalog import labels, shares
from visibility_assets.review.ledger import accuracy
from visibility_assets.review.store import RANDOM, ReviewStore
from visibility_assets.serve.accounts import Accounts, User
from visibility_assets.serve.answer_html import answer_html
from visibility_assets.serve.auth import Guard
from visibility_assets.serve.filters import DEFAULT_DAYS, FilterError, Filters, parse_filters
from visibility_assets.serve.masking import masked
from visibility_assets.serve.reader import SnapshotError, WorkspaceReader
from visibility_assets.serve.share_links import ShareLinks
from visibility_assets.serve.views.alerts import PAGE_ALERTS, alerts
from visibility_assets.serve.views.answers import NAMED, PAGE, answers
from visibility_assets.serve.views.competitors import MENTION_RATE, PAGE_ROWS, SEARCH_CHARS, competitors
from visibility_assets.serve.views.grid import as_xlsx, json_value
from visibility_assets.serve.views.overview import overview
from visibility_assets.serve.views.questions import questions
from visibility_assets.serve.views.review import accuracy_view, review
from visibility_assets.serve.views.sources import sources

MAX_OFFSET = 1_000_000
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
MAX_AS_OF_CHARS = 40
SCOPE = """
SELECT max(date) AS latest, list(DISTINCT platform ORDER BY platform) AS platforms FROM mention_metrics
"""


class ViewError(Exception):
    """The view cannot be shown for these parameters; `status` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ViewCall:
    """What a view reads of whoever asks: the parameters (a URL's query, or an MCP tool's
    arguments) and the user. A page, its JSON, an MCP tool and the warm-up all ask this way."""
    query: Mapping[str, str]
    user: User | None = None
    reviews: ReviewStore | None = None
    days: int = DEFAULT_DAYS  # the period shown when the query names none

    @classmethod
    def of(cls, request: Request) -> ViewCall:
        return cls(dict(request.query_params), getattr(request.state, "user", None),
                   request.app.state.workspace.reviews)

    @property
    def reads_answers(self) -> bool:
        """Whether the user may read answer text (the judge's claims quote it): an analyst's."""
        return self.user is not None and self.user.may("analyst")


@dataclass(frozen=True)
class View:
    name: str
    title: str
    role: str  # the least role that may see it
    build: Callable[[duckdb.DuckDBPyConnection, Filters, ViewCall, VisibilityConfig], dict]


def _offset(query: Mapping[str, str]) -> int:
    try:
        offset = int(query.get("offset", "0"))
    except ValueError:
        raise FilterError("offset: a whole number") from None
    if not 0 <= offset <= MAX_OFFSET:
        raise FilterError(f"offset: from 0 to {MAX_OFFSET}")
    return offset


def _answers(conn, filters, call: ViewCall, config) -> dict:
    query = call.query
    named = query.get("named", "all")
    if named not in NAMED:
        raise FilterError(f"named: one of {', '.join(NAMED)}")
    return answers(conn, filters, query.get("question") or None, named, _offset(query), PAGE)


def _competitors(conn, filters, call: ViewCall, config) -> dict:
    query = call.query
    search = query.get("search", "").strip()
    if len(search) > SEARCH_CHARS:
        raise FilterError(f"search: at most {SEARCH_CHARS} characters")
    metric = query.get("metric", MENTION_RATE)
    if metric not in {m.name for m in shares()}:
        raise FilterError(f"metric: one of {', '.join(m.name for m in shares())}")
    return competitors(conn, filters, query.get("sort"), search, _offset(query), PAGE_ROWS, metric)


def _review(conn, filters, call: ViewCall, config) -> dict:
    return review(conn, filters, call.reviews, call.user.name, call.query.get("queue", RANDOM))


def _accuracy(conn, filters, call: ViewCall, config) -> dict:
    return accuracy_view(conn, filters, call.reviews)


def _texts(config: VisibilityConfig) -> dict[str, str]:
    return {q.id: q.text for q in config.questions}


def _ledger(conn, filters, call: ViewCall) -> dict | None:
    """The brand's accuracy ledger; None when warming up (no reviews to read). Only the ledger: the
    Accuracy view's tables (the judge's calibrations among them) would cost the overview a query."""
    return None if call.reviews is None else accuracy(conn, call.reviews.reviews(filters.brand))


VIEWS = {view.name: view for view in (
    View("overview", "Overview", "viewer",
         lambda conn, f, call, config: overview(conn, f, quotes=call.reads_answers, accuracy=_ledger(conn, f, call),
                                                texts=_texts(config), weights=config.question_weights)),
    View("competitors", "Competitors", "viewer", _competitors),
    View("questions", "Questions", "viewer", lambda conn, f, call, config: questions(conn, f, _texts(config))),
    View("answers", "Answers", "analyst", _answers),
    View("sources", "Sources", "viewer", lambda conn, f, call, config: sources(conn, f)),
    View("alerts", "Alerts and quality", "viewer",
         lambda conn, f, call, config: alerts(conn, f, _offset(call.query), PAGE_ALERTS)),
    View("review", "Review", "analyst", _review),
    View("accuracy", "Accuracy", "viewer", _accuracy),
)}


class Workspace:
    def __init__(self, config: VisibilityConfig, reader: WorkspaceReader, accounts: Accounts, guard: Guard,
                 reviews: ReviewStore, root_path: str = ""):
        self.config, self.reader, self.accounts, self.guard = config, reader, accounts, guard
        self.reviews = reviews
        self.shares = ShareLinks(accounts)
        self.root_path = root_path.rstrip("/")
        self.templates = Environment(loader=PackageLoader("visibility_assets.serve", "templates"),
                                     autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
        self.templates.globals.update(views=VIEWS, labels=labels(), rule=change_rule(), url=self.url)
        self.templates.filters.update(pct=_pct, number=_number, answer_html=answer_html, timestamp=_timestamp)

    def url(self, path: str) -> str:
        return self.root_path + path

    def view_data(self, name: str, call: ViewCall) -> dict:
        """The view's data for the call's filters (raises ViewError)."""
        view = VIEWS[name]
        query = call.query
        as_of = query.get("as_of", "").strip() or None
        if as_of is not None and len(as_of) > MAX_AS_OF_CHARS:
            raise ViewError("as_of is a snapshot id or a time such as 2026-11-30 08:00:00+08")
        try:
            snapshot = self.reader.resolve(as_of) if as_of else None
            with self.reader.cursor(snapshot) as conn:
                try:
                    latest, platforms = conn.execute(SCOPE).fetchone()
                except duckdb.CatalogException:
                    raise ViewError("the warehouse has no metrics yet: run `visibility demo`, or materialize"
                                    " the metrics", 503) from None
                filters = parse_filters(query, self.config.catalog, latest, platforms or [], call.days)
                try:
                    data = view.build(conn, filters, call, self.config)
                    if not call.reads_answers:  # a viewer: personal data an answer quoted, masked
                        data = masked(data)
                except duckdb.CatalogException as exc:  # a table this view reads was never built
                    raise ViewError(f"this view needs a table the warehouse does not hold yet"
                                    f" ({str(exc).splitlines()[0]}): materialize every asset once", 503) from None
                snapshot = self.reader.snapshot(conn)
        except (FilterError, SnapshotError) as exc:
            raise ViewError(str(exc)) from None
        return {"view": name, "filters": filters, "platforms": platforms or [], "snapshot": snapshot, **data}

    def warm_up(self) -> None:
        """The copy of the marts made, then each view once with the default filters, so that the
        first user does not pay for the lake's extensions and file metadata (a few hundred ms).
        A warehouse not built yet is no error here: the views say so when asked."""
        try:
            self.reader.marts.copy_now()
        except duckdb.Error:
            pass  # the pages read the lake, and try the copy again
        with self.reader.cursor() as conn:
            try:
                latest, platforms = conn.execute(SCOPE).fetchone()
                filters = parse_filters({}, self.config.catalog, latest, platforms or [])
                for name in ("overview", "competitors", "questions", "sources", "alerts"):
                    VIEWS[name].build(conn, filters, ViewCall({}), self.config)
            except (duckdb.CatalogException, FilterError):
                pass

    def settle(self) -> None:
        """Wait for the copy of the marts a view started, if any: a command that read the views
        exits after it, not in the middle of it (DuckDB aborts a process that leaves mid-query)."""
        self.reader.marts.wait()

    def page(self, request: Request, template: str, context: dict, status_code: int = 200) -> HTMLResponse:
        user = getattr(request.state, "user", None)
        session = self.guard.current_session(request)
        html = self.templates.get_template(template).render(
            request=request, user=user, csrf=session.csrf if session else "", catalog=self.config.catalog,
            **context)
        return HTMLResponse(html, status_code=status_code)


def api_response(name: str, request: Request, data: dict) -> Response:
    """A view's answer under /api/: its JSON, one of its tables as CSV (`format=csv&table=T`), or all
    of them as a workbook (`format=xlsx`)."""
    tables = data["tables"]
    if request.query_params.get("format") == "xlsx":  # every table of the view, a sheet each
        return Response(as_xlsx(tables), media_type=XLSX, headers={
            "content-disposition": f'attachment; filename="{name}.xlsx"'})
    if request.query_params.get("format") == "csv":
        table = request.query_params.get("table") or next(iter(tables))
        if table not in tables:
            return JSONResponse({"error": f"table: one of {', '.join(tables)}"}, status_code=400)
        return Response(tables[table].as_csv(), media_type="text/csv; charset=utf-8", headers={
            "content-disposition": f'attachment; filename="{name}-{table}.csv"'})
    return JSONResponse(api_body(name, data))


def api_body(name: str, data: dict) -> dict:
    """A view's JSON: its filters, snapshot and tables, as /api/NAME and the MCP tools give it."""
    body = {"view": name, "filters": data["filters"].as_json(), "snapshot": data["snapshot"],
            **{key: table.as_json() for key, table in data["tables"].items()}}
    body.update(json_value(data.get("api", {})))  # what a view's JSON tells beside its tables (paging)
    return body


def static_dir() -> Path:
    return Path(__file__).parent / "static"


def _pct(value, digits: int = 1) -> str:
    return "–" if value is None else f"{value * 100:.{digits}f}%"


def _number(value, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"



def _timestamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
