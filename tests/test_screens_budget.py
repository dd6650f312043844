"""docs/screens/ stays small: pictures compressed losslessly, and no more of them than screens."""

from __future__ import annotations

from pathlib import Path

SCREENS = Path(__file__).resolve().parent.parent / "docs" / "screens"
#: What a picture may weigh on average: 54 pictures compressed by scripts/screens.py
#: weigh 6.6 MB (122 KB each); an uncompressed one is 3 to 10 times that.
BUDGET_PER_PICTURE = 135_000
PNG = b"\x89PNG\r\n\x1a\n"


def test_the_screen_pictures_stay_under_their_budget():
    pictures = sorted(SCREENS.glob("*.png"))
    assert pictures
    assert sum(p.stat().st_size for p in pictures) <= BUDGET_PER_PICTURE * len(pictures)


def test_every_picture_is_a_png_drawn_at_one_of_the_two_widths():
    for picture in SCREENS.iterdir():
        assert picture.suffix == ".png", picture.name
        assert picture.read_bytes()[:8] == PNG, picture.name
        assert picture.stem.rsplit("-", 1)[1] in {"1440", "390"}, picture.name
