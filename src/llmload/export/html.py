"""Building blocks of the self-contained HTML pages (report and comparison).

The pages must open from a laptop with no network, years later, and must never make a request:
styles and scripts are inline, images are ``data:`` URIs, and no text carries an ``http(s)://``
reference.
User strings (targets, model names, server flags, warnings) go through :func:`esc`, which also
writes the colon of any ``scheme://`` as an entity: the page still reads ``http://gpu-box:8000``,
but the file holds no URL a browser, a proxy or a checker could take for a reference.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence

from llmload.export.charts import csp_hashes
from llmload.results.summary import ErrorCount, Exit

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dce3;padding-bottom:4px}
.sub{color:#5b6474;margin:0 0 16px}
table{border-collapse:collapse;background:#fff;margin:6px 0 12px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #dde1e7;padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#eef1f5;font-weight:600}td.k,th.k{text-align:left}
tr.bad td{background:#fff1e6}tr.good td{background:#ebfbee}
p.big{font-size:16px}
table.wide th,table.wide td{padding:3px 5px;font-size:12px}table.wide th{white-space:normal}
.big td{font-size:16px}.big td.k{font-size:14px}
.warn{background:#fff4e5;border:2px solid #e8590c;border-radius:6px;padding:10px 14px;margin:12px 0}
.warn h2{border:0;margin:0 0 6px;color:#c2410c}.warn li{margin:2px 0}
.ok{background:#ebfbee;border:1px solid #2f9e44;border-radius:6px;padding:8px 14px;margin:12px 0}
.fail{background:#fff0f0;border:3px solid #c92a2a;border-radius:6px;padding:10px 14px;margin:12px 0}
.fail h2{border:0;margin:0 0 6px;color:#c92a2a}.fail p{font-weight:600;margin:4px 0}
.note{color:#5b6474;font-size:13px}
.diff td{background:#fff9db}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plots figure{margin:0;background:#fff;border:1px solid #dde1e7}
.plots img{display:block;width:560px;height:auto}figcaption{font-size:12px;color:#5b6474;padding:2px 8px}
.scroll{overflow-x:auto}
"""


def esc(value: object) -> str:
    """HTML-escape a user string and defuse any ``scheme://`` inside it."""
    return html.escape(str(value), quote=True).replace("://", "&#58;//")


def page(title: str, body: Iterable[str], *, scripts: Sequence[str] = (), css: str = "") -> str:
    """A whole page; ``scripts`` are inlined at the end of the body, and the page's policy lets
    exactly those run (by hash) while forbidding every fetch, so even a stray reference could
    not leave the file."""
    policy = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    if scripts:
        policy += f"; script-src {csp_hashes(scripts)}"
    tail = "".join(f"<script>{s}</script>" for s in scripts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f'<meta name="viewport" content="width=device-width"><title>{esc(title)}</title>'
        f"<style>{_CSS}{css}</style></head><body><main>\n"
        + "\n".join(body)
        + f"\n</main>{tail}</body></html>\n"
    )


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    left: int = 1,
    row_classes: Sequence[str] | None = None,
    css: str = "",
) -> str:
    """A table of already-formatted cells (escaped here); the first ``left`` columns align left."""
    head = "".join(
        f'<th class="k">{esc(h)}</th>' if i < left else f"<th>{esc(h)}</th>" for i, h in enumerate(headers)
    )
    body = []
    for n, row in enumerate(rows):
        cls = row_classes[n] if row_classes and n < len(row_classes) and row_classes[n] else ""
        cells = "".join(
            f'<td class="k">{esc(c)}</td>' if i < left else f"<td>{esc(c)}</td>" for i, c in enumerate(row)
        )
        body.append(f'<tr class="{cls}">{cells}</tr>' if cls else f"<tr>{cells}</tr>")
    attr = f' class="{css}"' if css else ""
    return (
        f'<div class="scroll"><table{attr}><thead><tr>{head}</tr></thead><tbody>'
        + "".join(body)
        + "</tbody></table></div>"
    )


def warnings_box(warnings: Sequence[str], *, title: str = "Warnings") -> str:
    if not warnings:
        return ""
    items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
    return (
        f'<section class="warn" id="warnings"><h2>⚠ {esc(title)} ({len(warnings)})</h2>'
        f"<ul>{items}</ul></section>"
    )


def png_figure(name: str, png: bytes, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure id="plot-{esc(name)}">'
        f'<img alt="{esc(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def heading(text: str, level: int = 2) -> str:
    return f"<h{level}>{esc(text)}</h{level}>"


def paragraph(text: str, css: str = "") -> str:
    return f'<p class="{css}">{esc(text)}</p>' if css else f"<p>{esc(text)}</p>"


def fmt(value: float | int | None, digits: int = 1) -> str:
    """A number for a table cell: thousands separators, ``-`` when absent."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def _error_item(e: ErrorCount) -> str:
    status = f" (HTTP {esc(e.status)})" if e.status else ""
    said = f": <code>{esc(e.message)}</code>" if e.message else ""
    return f"<li><b>{esc(e.kind)}</b>: {e.count:,} requests{status}{said}</li>"


def verdict_banner(exit_: Exit, *, warnings: int = 0) -> str:
    """The run's verdict, first on the page: green only when it passed with nothing to warn of."""
    line = exit_.line or exit_.name
    if exit_.code == 0:
        tail = (
            f" ({warnings} warnings below)"
            if warnings
            else "; the server settings and the client looked sound"
        )
        return f'<div class="ok" id="verdict">Verdict: {esc(line)}{esc(tail)}.</div>'
    reasons = "".join(f"<li>{esc(r)}</li>" for r in exit_.reasons)
    errors = "".join(_error_item(e) for e in exit_.errors)
    return (
        f'<section class="fail" id="verdict"><h2>✗ Run failed: exit '
        f"{esc(exit_.code)} · {esc(exit_.name)}</h2><p>{esc(line)}</p>"
        f"<ul>{reasons}</ul>" + (f"<p>Top errors</p><ul>{errors}</ul>" if errors else "") + "</section>"
    )
