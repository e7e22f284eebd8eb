"""The team's metrics helpers, installed into uv's .venv only (uv sync)."""

ALARM_PERIOD_SECONDS = 60
