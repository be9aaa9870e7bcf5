"""Tiny inline-SVG charts for the HTML report: lines, CDFs, histograms, bars (no dependencies)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

W, H = 560, 260
LEFT, RIGHT, TOP, BOTTOM = 60, 20, 30, 40
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")

Point = tuple[float, float]


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def _fmt(value: float) -> str:
    if value == int(value) and abs(value) < 1e6:
        return f"{int(value)}"
    return f"{value:.3g}"


def _log_ticks(low: float, high: float) -> list[float]:
    out = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for m in (1, 2, 5):
            value = m * 10.0**exponent
            if low <= value <= high:
                out.append(value)
    return out


class _Frame:
    """Maps data to pixels and draws the axes (``log_x``: a log10 x axis, positive xs)."""

    def __init__(
        self,
        xs: Sequence[float],
        ys: Sequence[float],
        y_from_zero: bool = True,
        log_x: bool = False,
    ) -> None:
        self.log_x = log_x
        if log_x:
            xs = [x for x in xs if x > 0]
        self.x0, self.x1 = (min(xs), max(xs)) if xs else (1.0, 10.0)
        if log_x:
            self.x0, self.x1 = self.x0 / 1.25, self.x1 * 1.25
        self.y0 = 0.0 if y_from_zero else (min(ys) if ys else 0.0)
        self.y1 = max(ys) if ys else 1.0
        if self.x1 <= self.x0:
            self.x1 = self.x0 + 1
        if self.y1 <= self.y0:
            self.y1 = self.y0 + 1
        pad = (self.y1 - self.y0) * 0.05
        self.y1 += pad
        if not y_from_zero:
            self.y0 -= pad

    def x(self, value: float) -> float:
        if self.log_x:
            low, high = math.log10(self.x0), math.log10(self.x1)
            share = (math.log10(max(value, self.x0)) - low) / (high - low)
        else:
            share = (value - self.x0) / (self.x1 - self.x0)
        return LEFT + share * (W - LEFT - RIGHT)

    def y(self, value: float) -> float:
        return H - BOTTOM - (value - self.y0) / (self.y1 - self.y0) * (H - TOP - BOTTOM)

    def axes(self, title: str, xlabel: str, ylabel: str, x_ticks: bool = True) -> list[str]:
        out = [
            f'<text x="{W / 2}" y="18" text-anchor="middle" font-weight="bold">'
            f"{escape(title)}</text>",
            f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}" '
            'stroke="#333"/>',
            f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" stroke="#333"/>',
            f'<text x="{W / 2}" y="{H - 6}" text-anchor="middle">{escape(xlabel)}</text>',
            f'<text x="14" y="{H / 2}" text-anchor="middle" '
            f'transform="rotate(-90 14 {H / 2})">{escape(ylabel)}</text>',
        ]
        xt = _log_ticks(self.x0, self.x1) if self.log_x else _ticks(self.x0, self.x1)
        for t in xt if x_ticks else []:
            px = self.x(t)
            out.append(
                f'<text x="{px:.1f}" y="{H - BOTTOM + 14}" text-anchor="middle" '
                f'font-size="10">{_fmt(t)}</text>'
            )
        for t in _ticks(self.y0, self.y1):
            py = self.y(t)
            out.append(
                f'<line x1="{LEFT}" y1="{py:.1f}" x2="{W - RIGHT}" y2="{py:.1f}" '
                'stroke="#eee"/>'
                f'<text x="{LEFT - 4}" y="{py + 3:.1f}" text-anchor="end" '
                f'font-size="10">{_fmt(t)}</text>'
            )
        return out


def _svg(body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">' + "".join(body) + "</svg>"
    )


def _legend(names: Sequence[str]) -> list[str]:
    """Top left, where rising curves (CDFs, growth) leave room."""
    out = []
    for i, name in enumerate(names):
        y = TOP + 4 + 14 * i
        color = COLORS[i % len(COLORS)]
        out.append(
            f'<rect x="{LEFT + 8}" y="{y}" width="10" height="10" fill="{color}"/>'
            f'<text x="{LEFT + 22}" y="{y + 9}" font-size="11">{escape(name)}</text>'
        )
    return out


def lines(
    series: Mapping[str, Sequence[Point]],
    title: str,
    xlabel: str,
    ylabel: str,
    zero: bool = True,
    log_x: bool = False,
) -> str:
    """One polyline per series."""
    xs = [p[0] for pts in series.values() for p in pts]
    ys = [p[1] for pts in series.values() for p in pts]
    frame = _Frame(xs, ys, zero, log_x)
    body = frame.axes(title, xlabel, ylabel)
    for i, pts in enumerate(series.values()):
        if not pts:
            continue
        path = " ".join(f"{frame.x(x):.1f},{frame.y(y):.1f}" for x, y in pts)
        color = COLORS[i % len(COLORS)]
        body.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>')
    if len(series) > 1:
        body += _legend(list(series))
    return _svg(body)


def cdf(series: dict[str, Sequence[float]], title: str, xlabel: str, log_x: bool = False) -> str:
    """Empirical CDFs (steps): the share of samples at or below each value."""
    curves: dict[str, list[Point]] = {}
    for name, values in series.items():
        ordered = sorted(values)
        n = len(ordered)
        steps: list[Point] = []
        for i, v in enumerate(ordered):
            steps += [(v, i / n), (v, (i + 1) / n)]
        curves[f"{name} (n={n})"] = steps
    return lines(curves, title, xlabel, "share of samples <= x", log_x=log_x)


def histogram(values: Sequence[float], title: str, xlabel: str, bins: int = 30) -> str:
    """Counts per equal-width bin."""
    if not values:
        return _svg(_Frame([], []).axes(title + " (no samples)", xlabel, "count"))
    low, high = min(values), max(values)
    width = (high - low) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - low) / width))] += 1
    frame = _Frame([low, low + width * bins], [float(c) for c in counts])
    body = frame.axes(title, xlabel, "count")
    for i, c in enumerate(counts):
        x0, x1 = frame.x(low + i * width), frame.x(low + (i + 1) * width)
        y = frame.y(c)
        body.append(
            f'<rect x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0 - 1, 1):.1f}" '
            f'height="{frame.y(0) - y:.1f}" fill="{COLORS[0]}"/>'
        )
    return _svg(body)


def bars(values: dict[str, float], title: str, ylabel: str) -> str:
    """One bar per key."""
    names = list(values)
    frame = _Frame([0.0, float(max(len(names), 1))], [float(v) for v in values.values()])
    body = frame.axes(title, "", ylabel, x_ticks=False)
    slot = (W - LEFT - RIGHT) / max(len(names), 1)
    for i, name in enumerate(names):
        x = LEFT + i * slot + slot * 0.15
        y = frame.y(values[name])
        body.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" '
            f'height="{frame.y(0) - y:.1f}" fill="{COLORS[i % len(COLORS)]}"/>'
            f'<text x="{x + slot * 0.35:.1f}" y="{H - BOTTOM + 28}" text-anchor="middle" '
            f'font-size="11">{escape(name)}</text>'
        )
    return _svg(body)
