"""Static files: hashed, compressed names once ``collectstatic`` has run, cached a year.

Before that (the development server, the tests) there is no manifest, and
the plain name is served by whitenoise from the finders instead of failing.
"""

from __future__ import annotations

from whitenoise.middleware import WhiteNoiseMiddleware
from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:
            # Not collected yet: no manifest entry and no file to hash.
            return name


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """whitenoise, with a year's ``Cache-Control`` on hashed (immutable) names.

    A hashed name changes whenever the file does, so browsers and proxies may
    keep it: a year, the longest lifetime HTTP/1.1 ever advised (RFC 2616
    §14.21), rather than whitenoise's ten.
    """

    FOREVER = 365 * 24 * 60 * 60
