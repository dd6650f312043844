"""Geometry for the server-side SVG charts; the markup is in templates/sessions_admin/_chart.html.

Coordinates are computed here so the templates stay plain loops. A chart is
drawn in a fixed ``viewBox`` and scales to its box (legible from 900 px up),
every bar carries a ``<title>`` (its value on hover) and the same numbers
are in a table for screen readers. Skewed data keeps a visible bar for any
non-zero value; empty data draws the axes and says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

#: The plot's drawing box (viewBox units) and its margins for the axis labels.
WIDTH, HEIGHT = 440, 180
LEFT, RIGHT, TOP, BOTTOM = 46, 8, 22, 30
MIN_BAR = 1.5  # a non-zero value never vanishes next to a huge one


@dataclass(frozen=True)
class Point:
    label: str  # the x value as shown ("14:00", "28 Nov")
    value: int
    href: str | None = None


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    title: str
    href: str | None


@dataclass(frozen=True)
class Tick:
    pos: float
    label: str


@dataclass
class BarChart:
    title: str
    unit: str
    points: Sequence[Point]
    bars: list[Bar] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    top: int = TOP
    baseline: float = HEIGHT - BOTTOM
    right_edge: float = WIDTH - RIGHT

    @property
    def empty(self) -> bool:
        return not any(p.value for p in self.points)

    @property
    def total(self) -> int:
        return sum(p.value for p in self.points)


def compact(value: float) -> str:
    """1234 -> "1.2k", 3_400_000 -> "3.4M": axis labels that fit."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            text = f"{value / size:.1f}".rstrip("0").rstrip(".")
            return text + suffix
    return f"{value:g}"


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2 or 5 x 10^k at or above value (at least 1)."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power  # pragma: no cover (the loop always returns)


def bar_chart(title: str, unit: str, points: Sequence[Point], *, x_labels: int = 6) -> BarChart:
    chart = BarChart(title=title, unit=unit, points=points)
    plot_w = chart.right_edge - LEFT
    plot_h = chart.baseline - TOP
    top = nice_ceiling(max((p.value for p in points), default=0))
    chart.y_ticks = [Tick(chart.baseline - plot_h * f, compact(top * f)) for f in (0.0, 0.5, 1.0)]
    if not points:
        return chart
    slot = plot_w / len(points)
    gap = min(2.0, slot * 0.2)
    every = max(1, math.ceil(len(points) / x_labels))
    for i, p in enumerate(points):
        height = plot_h * p.value / top if p.value > 0 else 0.0
        if p.value > 0:
            height = max(height, MIN_BAR)
        x = LEFT + i * slot
        chart.bars.append(
            Bar(
                x=round(x + gap / 2, 2),
                y=round(chart.baseline - height, 2),
                width=round(max(slot - gap, 0.5), 2),
                height=round(height, 2),
                title=f"{p.label}: {p.value:,} {unit}",
                href=p.href,
            )
        )
        if i % every == 0:
            chart.x_ticks.append(Tick(round(x + slot / 2, 2), p.label))
    return chart


@dataclass(frozen=True)
class Sparkline:
    """Calls as a line, errors as red bars, in a 120 x 24 box."""

    calls_path: str
    error_bars: list[Bar]
    title: str
    width: int = 120
    height: int = 24


def sparkline(series: Sequence[tuple[str, int, int]]) -> Sparkline:
    """``series`` is (label, calls, errors) per bucket."""
    width, height = 120, 24
    top = max((calls for _, calls, _ in series), default=0) or 1
    n = len(series)
    step = width / max(n - 1, 1)
    coords = []
    bars = []
    for i, (label, calls, errors) in enumerate(series):
        x = round(i * step if n > 1 else width / 2, 2)
        coords.append(f"{x},{round(height - 1 - (height - 2) * calls / top, 2)}")
        if errors:
            h = max((height - 2) * errors / top, MIN_BAR)
            bars.append(
                Bar(
                    max(x - 1, 0),
                    round(height - h, 2),
                    2,
                    round(h, 2),
                    f"{label}: {errors:,} errors",
                    None,
                )
            )
    path = ("M" + " L".join(coords)) if coords else ""
    calls = sum(c for _, c, _ in series)
    errors = sum(e for _, _, e in series)
    return Sparkline(path, bars, f"{calls:,} calls, {errors:,} errors")


def failure_sparkline(series: Sequence[tuple[str, int]]) -> Sparkline:
    """``series`` is (label, failures) per bucket: bars alone, scaled to the busiest."""
    chart = sparkline([(label, n, n) for label, n in series])
    total = sum(n for _, n in series)
    return replace(chart, calls_path="", title=f"{total:,} failure{'s' if total != 1 else ''}")
