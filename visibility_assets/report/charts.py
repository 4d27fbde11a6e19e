"""Small SVG charts for the static report: no script, no network, readable at a glance."""

from __future__ import annotations

from visibility_assets.core.visible_text import html_text as escape

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777",
           "#4b5563", "#65a30d")
REASON_COLOURS = {"refusal": "#dc2626", "error": "#ea580c", "empty": "#9ca3af", "irrelevant": "#ca8a04",
                  "truncated": "#7c3aed", "moderated": "#0f766e"}


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">' + "".join(body) + "</svg>")


TICKS = (0, 0.25, 0.5, 0.75, 1.0)  # every chart shows shares, 0-100%


def _axis(x0: int, x1: int, y: int) -> list[str]:
    parts = [f'<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#9ca3af"/>']
    for t in TICKS:
        x = x0 + (x1 - x0) * t
        parts.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" stroke="#9ca3af"/>'
                     f'<text x="{x:.1f}" y="{y + 16}" font-size="11" text-anchor="middle" fill="#4b5563">{t:.0%}</text>')
    return parts


def interval_chart(rows: list[dict], series: list[str], label: str) -> str:
    """Rows of {"label", "points": {series: (rate, low, high)}}: a dot and its 95% interval per series."""
    left, width, row_h = 150, 420, 14
    height = 30 + len(rows) * (row_h * len(series) + 8) + 30
    body, y = [], 20
    for row in rows:
        body.append(f'<text x="{left - 8}" y="{y + row_h * len(series) / 2 + 4:.1f}" font-size="12" '
                    f'text-anchor="end">{escape(row["label"])}</text>')
        for index, name in enumerate(series):
            point = row["points"].get(name)
            cy = y + row_h * index + row_h / 2
            if point and point[0] is not None:
                rate, low, high = point
                x = left + width * rate
                body.append(f'<line x1="{left + width * low:.1f}" y1="{cy:.1f}" x2="{left + width * high:.1f}" '
                            f'y2="{cy:.1f}" stroke="{colour(index)}" stroke-width="2" opacity="0.6"/>'
                            f'<circle cx="{x:.1f}" cy="{cy:.1f}" r="4" fill="{colour(index)}">'
                            f'<title>{escape(name)}: {rate:.0%} (95% CI {low:.0%}-{high:.0%})</title></circle>')
        y += row_h * len(series) + 8
    body += _axis(left, left + width, y + 4)
    body += _legend(series, left + width + 20, 24)
    return _svg(left + width + 140, max(height, 40 + 18 * len(series)), body, label)


def stacked_bars(rows: list[dict], parts: list[str], label: str, colours: dict[str, str] | None = None) -> str:
    """Rows of {"label", "values": {part: share}}: one horizontal bar per row, shares stacked."""
    left, width, bar_h = 110, 420, 18
    body, y = [], 16
    for row in rows:
        body.append(f'<text x="{left - 8}" y="{y + 13}" font-size="12" text-anchor="end">{escape(row["label"])}</text>')
        x = left
        for index, part in enumerate(parts):
            share = row["values"].get(part) or 0.0
            if share <= 0:
                continue
            fill = (colours or {}).get(part, colour(index))
            body.append(f'<rect x="{x:.1f}" y="{y}" width="{width * share:.1f}" height="{bar_h}" fill="{fill}">'
                        f'<title>{escape(part)}: {share:.1%}</title></rect>')
            x += width * share
        y += bar_h + 6
    body += _axis(left, left + width, y + 2)
    body += _legend(parts, left + width + 20, 20, colours)
    return _svg(left + width + 160, max(y + 30, 30 + 18 * len(parts)), body, label)


def line_chart(dates: list[str], lines: dict[str, list[float | None]], label: str,
               marks: dict[str, str] | None = None) -> str:
    """One line per series over the dates (values 0..1; None leaves a gap); `marks` draws a
    dashed line at each of its dates with its note (a platform's model change)."""
    left, width, top, height = 50, 520, 14, 180
    body = []
    step = width / max(1, len(dates) - 1)
    for day, note in (marks or {}).items():
        if day in dates:
            x = left + step * dates.index(day)
            body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + height}" stroke="#6b7280" '
                        f'stroke-dasharray="4 3"><title>{escape(note)}</title></line>'
                        f'<text x="{x - 3:.1f}" y="{top + 10}" font-size="10" fill="#6b7280" text-anchor="end">'
                        f'{escape(note)}</text>')
    for t in TICKS:
        y = top + height * (1 - t)
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + width}" y2="{y:.1f}" stroke="#e5e7eb"/>'
                    f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" fill="#4b5563">{t:.0%}</text>')
    for index, (name, values) in enumerate(lines.items()):
        path, pen_down = [], False
        for i, value in enumerate(values):
            if value is None:
                pen_down = False
                continue
            x, y = left + step * i, top + height * (1 - value)
            path.append(f"{'L' if pen_down else 'M'}{x:.1f},{y:.1f}")
            pen_down = True
        if path:
            body.append(f'<path d="{" ".join(path)}" fill="none" stroke="{colour(index)}" stroke-width="2">'
                        f'<title>{escape(name)}</title></path>')
    for i in sorted({0, len(dates) - 1, len(dates) // 2}):
        if 0 <= i < len(dates):
            body.append(f'<text x="{left + step * i:.1f}" y="{top + height + 16}" font-size="11" '
                        f'text-anchor="middle" fill="#4b5563">{dates[i][5:]}</text>')
    body += _legend(list(lines), left + width + 20, 20)
    return _svg(left + width + 160, max(top + height + 30, 30 + 18 * len(lines)), body, label)


def _legend(names: list[str], x: int, y: int, colours: dict[str, str] | None = None) -> list[str]:
    parts = []
    for index, name in enumerate(names):
        fill = (colours or {}).get(name, colour(index))
        parts.append(f'<rect x="{x}" y="{y + 18 * index - 9}" width="10" height="10" fill="{fill}"/>'
                     f'<text x="{x + 16}" y="{y + 18 * index}" font-size="12">{escape(name)}</text>')
    return parts
