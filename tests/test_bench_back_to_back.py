"""bench/back_to_back.py reads each bench's printed table into one comparison."""

from __future__ import annotations

from bench.back_to_back import table

LOG = """\
=== round 1 base 12:00:00
--- bench_review
  session page, no notes                                                  5.00     5.84
--- bench_frames_views
  live-tail poll, nothing new (htmx)    20       2.00    2.07    2.49
--- bench_search
  list filter by principal (index) | 4.0 / 5.3 ms | 34 ms | < 10 ms | ok
  list filter by principal (index)          4.0 / 5.3 ms            34 ms  < 10 ms        ok
--- bench_transcript
  ------  --------  ------  -------
  md         50000  771.19   60,000  18.6           90          ok
=== round 1 head 12:01:00
--- bench_review
  session page, no notes                                                  6.00     6.26
--- bench_frames_views
  live-tail poll, nothing new (htmx)    20       1.00    2.26    2.85
--- bench_search
  list filter by principal (index)          5.0 / 6.0 ms            37 ms  < 10 ms        ok
--- bench_transcript
  md         50000  1015.70   48,000  18.6           93          ok
=== round 2 base 12:02:00
--- bench_review
  session page, no notes                                                  5.50     5.84
=== round 2 head 12:03:00
--- bench_review
  session page, no notes                                                  6.60     6.26
"""


def test_each_row_is_compared_by_the_median_of_its_rounds():
    rows = {line.split(" | ")[1]: line for line in table(LOG)[2:]}
    assert rows["session page, no notes"].endswith("| 5 / 5.5 | 6 / 6.6 | +20.0% |")
    # frames_views prints a count before the median; search its median before the p95.
    assert rows["live-tail poll, nothing new (htmx)"].endswith("| 2 | 1 | -50.0% |")
    assert rows["list filter by principal (index)"].endswith("| 4 | 5 | +25.0% |")
    assert rows["export md, messages/s"].endswith("| 60000 | 48000 | -20.0% |")
    assert len(rows) == 4  # the separator line is no row
