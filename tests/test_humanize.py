"""Sizes read as people say them, in pages and in the messages after a delete."""

import pytest

from sessions_admin.deletion import FramesReport
from sessions_admin.humanize import file_size, signed_duration


@pytest.mark.parametrize(
    "value, text",
    [
        (None, "—"),
        (0, "0 B"),
        (1023, "1023 B"),
        (7081, "6.9 KB"),
        (1_300_000, "1.2 MB"),
        (5 * 1024**3, "5.0 GB"),
        (3 * 1024**4, "3072.0 GB"),
    ],
)
def test_file_sizes_read_as_people_say_them(value, text):
    assert file_size(value) == text


def test_the_message_after_a_delete_gives_the_frames_size_readably():
    report = FramesReport(dirs_removed=1, bytes_removed=7081, files_removed=2)
    assert report.describe() == "frames removed (1 directory, 6.9 KB)"


def test_timeline_offsets_read_as_hours_and_minutes_not_thousands_of_minutes():
    assert signed_duration(450) == "450 ms"
    assert signed_duration(2_500) == "2.5 s"
    assert signed_duration(26_596.7 * 60_000) == "443 h 16 min"
    assert signed_duration(-2_500) == "-2.5 s"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("sess_0000083266005d2c4477868f", "sess_000…7868f"),
        ("sess_short", "sess_short"),
        ("", "(empty id)"),  # the store allows it; a link to it still needs a name
        (" ", "(blank id: 1 character)"),  # a frames directory named so (axe: link-name)
        ("\t\n ", "(blank id: 3 characters)"),
        (None, ""),
    ],
)
def test_ids_are_shortened_to_their_start_and_end(value, shown):
    from sessions_admin.templatetags.sessions_admin import short_id

    assert short_id(value) == shown
