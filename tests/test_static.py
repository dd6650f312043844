"""Static files come from our own server: hashed once collected, never from a CDN."""

import re

from django.core.management import call_command

from tests.conftest import STORE_DB


@STORE_DB
def test_pages_load_htmx_and_our_assets_from_our_own_static_url(store, staff_client):
    html = staff_client.get("/sessions/").content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+\.(?:js|css|svg))"', html)
    assert any("htmx-2" in src for src in sources)
    assert all(src.startswith("/static/") for src in sources), sources


@STORE_DB
def test_after_collectstatic_pages_use_hashed_cacheable_names(
    store, staff_client, settings, tmp_path
):
    settings.STATIC_ROOT = tmp_path / "static"
    call_command("collectstatic", interactive=False, verbosity=0)
    assert (tmp_path / "static" / "staticfiles.json").exists()
    html = staff_client.get("/sessions/").content.decode()
    assert re.search(r'src="/static/django_htmx/htmx-2\.min\.[0-9a-f]{12}\.js"', html)
    assert re.search(r'href="/static/sessions_admin/app\.[0-9a-f]{12}\.css"', html)
