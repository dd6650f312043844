"""Server-side SVG charts: empty, one-point and skewed data all draw, with values on hover."""

from __future__ import annotations

from django.template.loader import render_to_string

from sessions_admin.charts import MIN_BAR, Point, bar_chart, compact, nice_ceiling, sparkline


def render(chart) -> str:
    return render_to_string("sessions_admin/_chart.html", {"chart": chart})


def test_an_empty_chart_draws_its_axes_and_says_there_is_no_data():
    html = render(bar_chart("Messages per hour", "messages per hour", []))
    assert "<svg" in html and "no data in this period" in html and "<rect" not in html
    assert "<caption>Messages per hour, messages per hour</caption>" in html


def test_a_chart_of_zeros_is_empty_too():
    chart = bar_chart("t", "u", [Point("a", 0), Point("b", 0)])
    assert chart.empty and all(bar.height == 0 for bar in chart.bars)


def test_a_single_point_fills_the_plot_and_keeps_its_label():
    chart = bar_chart("t", "calls", [Point("14:00", 7)])
    (bar,) = chart.bars
    assert bar.height == round((chart.baseline - chart.top) * 7 / 10, 2)
    assert [t.label for t in chart.x_ticks] == ["14:00"]
    assert "<title>14:00: 7 calls</title>" in render(chart)


def test_skewed_data_keeps_every_non_zero_bar_visible():
    points = [Point(str(i), v) for i, v in enumerate([1, 0, 3, 5_000_000])]
    chart = bar_chart("t", "messages", points)
    heights = [bar.height for bar in chart.bars]
    assert heights[0] >= MIN_BAR and heights[2] >= MIN_BAR and heights[1] == 0
    assert max(heights) <= chart.baseline - chart.top
    assert chart.y_ticks[-1].label == "5M"
    html = render(chart)
    assert "<title>3: 5,000,000 messages</title>" in html
    assert "<td>5000000</td>" in html  # the screen-reader table has every value


def test_a_bar_with_a_link_is_a_link():
    html = render(bar_chart("t", "u", [Point("a", 2, href="/sessions/?target=x")]))
    assert '<a href="/sessions/?target=x"><rect' in html


def test_axis_labels_are_compact_and_round():
    assert [compact(v) for v in (0, 950, 1200, 3_400_000)] == ["0", "950", "1.2k", "3.4M"]
    assert [nice_ceiling(v) for v in (0, 3, 11, 4500)] == [1, 5, 20, 5000]


def test_a_sparkline_handles_no_one_and_many_buckets():
    assert sparkline([]).calls_path == ""
    assert sparkline([("a", 3, 1)]).calls_path.startswith("M60")
    spark = sparkline([("a", 0, 0), ("b", 1000, 0), ("c", 1, 1)])
    assert len(spark.error_bars) == 1 and spark.error_bars[0].height >= MIN_BAR
    assert spark.title == "1,001 calls, 1 errors"
