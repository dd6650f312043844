"""Responses several screens send: a banner into the page's flash area, and See Other."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django_htmx.http import reswap, retarget


class HttpResponseSeeOther(HttpResponseRedirect):
    """303 after a POST: the browser GETs the next page (a reload never re-posts)."""

    status_code = 303


def render_banner(
    request: HttpRequest, template: str, context: dict[str, Any], *, status: int
) -> HttpResponse:
    """For htmx: render ``template`` into the page's ``#flash`` area, not the region
    the request targeted (a table, a poll), so an error never lands inside a row."""
    response = render(request, template, context, status=status)
    return reswap(retarget(response, "#flash"), "innerHTML")
