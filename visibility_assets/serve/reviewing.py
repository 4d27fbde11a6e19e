"""Storing a review: the Review page's form (the page again, with the next item) and its JSON
twin `POST /api/reviews`. The machine's labels are read again from the lake, never taken from
the form: a review records what the machine said, and the reviewer's values beside it. Every
review and skip is in the audit trail."""

from __future__ import annotations

import json
from datetime import date
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from visibility_assets.review.queue import machine_labels
from visibility_assets.review.store import ReviewError, corrected_values
from visibility_assets.serve.access import protected
from visibility_assets.serve.login import client_address
from visibility_assets.serve.workspace import Workspace

# The Review page's filters, carried through the form (as `next`, a query string) so that the
# next item comes from the same queue.
CARRIED = ("brand", "category", "from", "to", "platform", "queue")


def _store(request: Request) -> dict:
    """The review the form describes, stored; raises ReviewError."""
    workspace: Workspace = request.app.state.workspace
    form, user = request.state.form, request.state.user
    key, brand, platform = (str(form.get(name, "")).strip() for name in ("request_key", "brand", "platform"))
    if not key or not platform or brand not in {b.name for b in workspace.config.catalog.brands}:
        raise ReviewError("request_key, brand (one of the catalog's) and platform are required")
    try:
        day = date.fromisoformat(str(form.get("date", "")))
    except ValueError:
        raise ReviewError("date: a day such as 2026-11-30") from None
    with workspace.reader.cursor() as conn:
        machine = machine_labels(conn, key, brand, day, platform)
    if machine is None:
        raise ReviewError(f"no answer {key} of {platform} on {day} with labels for {brand} in the warehouse")
    skipped = str(form.get("skip", "")) == "true"
    values = None if skipped else corrected_values(dict(form), machine)
    queue = str(form.get("queue", ""))
    review = workspace.reviews.record(user.name, queue, machine, values, str(form.get("note", "")))
    corrected = [field for field, (_, _, verdict, _) in review.labels.items() if verdict == "corrected"]
    workspace.accounts.audit(user.name, "review_skipped" if skipped else "review", f"{brand} · {key}",
                             client_address(request), json.dumps({"queue": queue, "corrected": corrected}))
    return {"review_id": review.review_id, "queue": queue, "skipped": skipped,
            "labels": {field: {"machine": m, "source": source, "verdict": verdict, "value": value}
                       for field, (m, source, verdict, value) in review.labels.items()}}


@protected("analyst", api=True)
def post_review_api(request: Request) -> Response:
    try:
        return JSONResponse(_store(request))
    except ReviewError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)


@protected("analyst")
def post_review_page(request: Request) -> Response:
    workspace: Workspace = request.app.state.workspace
    carried = {name: value for name, value in parse_qsl(str(request.state.form.get("next", ""))) if name in CARRIED}
    try:
        _store(request)
    except ReviewError as exc:
        return workspace.page(request, "error.html", {"message": str(exc), "view": "review"}, 400)
    return RedirectResponse(workspace.url("/review") + "?" + urlencode(carried), status_code=303)


def routes() -> list:
    return [Route("/review", post_review_page, methods=["POST"]),
            Route("/api/reviews", post_review_api, methods=["POST"])]

