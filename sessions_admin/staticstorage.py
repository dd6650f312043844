"""Static files: hashed, compressed names once ``collectstatic`` has run.

Before that (the development server, the tests) there is no manifest, and
the plain name is served by whitenoise from the finders instead of failing.
"""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:
            # Not collected yet: no manifest entry and no file to hash.
            return name
