"""llmload's tabs and links in Locust's web UI, through the extension points Locust supports:
template arguments for extra tabs, tables and download links, an ``after_request`` hook that
adds the tables' rows to the ``/stats/requests`` answer the page polls, and routes of our own
for the latest finished run's report and summary and for the live charts (export/webtab.py has
the tables and the charts' data).

Locust's page draws an extra tab as a table and nothing else, so the charts come in by the one
door left: the same ``after_request`` hook appends report.html's chart scripts and
``static/live.js`` to the index page, and that script mounts the charts above the LLM tab's
table while the tab is open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from llmload.export.charts import live_scripts, styles
from llmload.export.webtab import (
    CHARTS_PATH,
    REPORT_PATH,
    SUMMARY_PATH,
    Live,
    extended_stats,
    live_charts,
    template_args,
)
from llmload.run.live import LiveView

if TYPE_CHECKING:
    from locust.web import WebUI


def install_tabs(
    web_ui: WebUI, live: Callable[[], LiveView | None], finished: Callable[[], Path | None]
) -> None:
    """``live``: the latest run's view (None before the first swarm); ``finished``: the
    results directory of the latest run that ended."""
    from flask import Response, request  # Locust's own web server; imported only with a web UI

    web_ui.template_args.update(template_args())
    app = web_ui.app
    assert app is not None, "Locust creates its web UI's app before it fires init"

    tail = f"<style>{styles()}</style>" + "".join(f"<script>{s}</script>" for s in live_scripts())

    @app.after_request
    def add_llm_tables(response: Response) -> Response:
        if request.path == "/" and response.status_code == 200 and response.mimetype == "text/html":
            page = response.get_data(as_text=True)
            response.set_data(page.replace("</body>", tail + "</body>", 1))
            return response
        if request.path != "/stats/requests" or response.status_code != 200 or not response.is_json:
            return response
        view = live()
        now: Live | None = None if view is None else view.now()
        body = {**response.get_json(), "extended_stats": extended_stats(now)}
        response.set_data(orjson.dumps(body))
        return response

    def latest(name: str, mimetype: str) -> Response:
        path = finished()
        target = None if path is None else path / name
        if target is None or not target.is_file():
            return Response(
                "no llmload run has finished yet in this process: stop a running test first",
                status=404,
                mimetype="text/plain",
            )
        return Response(target.read_bytes(), mimetype=mimetype)

    def report() -> Response:
        return latest("report.html", "text/html")

    def summary() -> Response:
        return latest("summary.json", "application/json")

    def charts() -> Response:
        view = live()
        return Response(
            orjson.dumps(live_charts(None if view is None else view.now())), mimetype="application/json"
        )

    # behind Locust's --web-login when it is on, like Locust's own pages (an untyped decorator)
    guard = web_ui.auth_required_if_enabled
    app.add_url_rule(REPORT_PATH, "llmload_report", guard(report))  # type: ignore[no-untyped-call]
    app.add_url_rule(SUMMARY_PATH, "llmload_summary", guard(summary))  # type: ignore[no-untyped-call]
    app.add_url_rule(CHARTS_PATH, "llmload_charts", guard(charts))  # type: ignore[no-untyped-call]
