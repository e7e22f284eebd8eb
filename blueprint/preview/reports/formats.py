"""The formats `blueprint preview --format` offers, each a report of one PreviewResult."""

from __future__ import annotations

from typing import Callable

from integration_blueprint.preview.reports.markdown import render_markdown
from integration_blueprint.preview.reports.sarif import render_sarif
from integration_blueprint.preview.reports.text import render_json, render_text
from integration_blueprint.preview.run import PreviewResult

FORMATS: dict[str, Callable[[PreviewResult], str]] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "markdown": render_markdown,
}
