"""A plugin process (the policy pack, a component package) is started, read for its port and ended the
same way by the analyzer and the engine (preview/plugin_process.py)."""

import os
import sys

import pytest

from integration_blueprint.preview import private_channel
from integration_blueprint.preview.plugin_process import PluginDidNotStart, PluginProcess

# A stand-in plugin: it reads the settings handed over on its pipe, says so on stderr, prints a port
# (or not) and then serves until it is ended.
PLUGIN = """
import json, os, sys, time
settings = json.loads(os.read(int(os.environ[{variable!r}]), 65536))
print("handed", settings["token"], file=sys.stderr, flush=True)
print({first_line!r}, flush=True)
time.sleep(60)
"""


def start(first_line: str) -> PluginProcess:
    code = PLUGIN.format(variable=private_channel.FD_VARIABLE, first_line=first_line)
    return PluginProcess([sys.executable, "-c", code], settings={"token": "t0k3n"}, start_timeout=30)


def test_a_plugin_gets_its_settings_on_a_pipe_prints_its_port_and_ends_with_its_group():
    plugin = start("40123")
    try:
        assert plugin.port == 40123
        assert "handed t0k3n" in plugin.stderr_text()
        assert private_channel.FD_VARIABLE not in os.environ  # handed to the child only
    finally:
        plugin.close()
    assert plugin.process.poll() is not None  # ended, not left serving


def test_a_plugin_that_prints_something_else_than_its_port_did_not_start_and_says_what_it_printed():
    with pytest.raises(PluginDidNotStart) as refused:
        start("Traceback: no module named pulumi")
    assert refused.value.printed.startswith(b"Traceback") and "handed t0k3n" in refused.value.stderr
