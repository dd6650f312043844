"""WSGI entry point for gunicorn: ``gunicorn sessions_admin.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessions_admin.settings")
application = get_wsgi_application()
