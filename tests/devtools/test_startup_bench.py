"""``plait bench startup``'s pieces that need no timing: what it runs and how it reports."""

from __future__ import annotations

from plait.cli import app
from plait.devtools.startup import Figure, help_commands, render, schema_bytes
from plait.state.base.settings import DEFAULT_TOOL_GROUPS


def test_every_command_help_is_measured() -> None:
    commands = help_commands(app)
    assert ["--help"] in commands
    for expected in (["mcp", "--help"], ["opencode", "uninstall", "--help"], ["status", "--help"]):
        assert expected in commands


def test_render_reports_ratios_and_the_opencode_difference() -> None:
    figure = Figure(name="x", samples=[0.1, 0.2, 0.3])
    result = {
        "bare": Figure(name="`python -c pass`", samples=[0.02, 0.02, 0.02]),
        "help": [Figure(name="`plait --help`", samples=[0.06, 0.07, 0.08])],
        "mcp": (figure, figure),
        "serve": figure,
        "memory": (figure, figure),
        "schema": {"default": schema_bytes(DEFAULT_TOOL_GROUPS), "all": schema_bytes()},
        "opencode": {
            "first": {"without": 6.0, "with": 9.0},
            "samples": {"without": [3.0, 4.0, 5.0], "with": [3.5, 4.5, 5.5]},
            "schema_bytes": 2653,
        },
    }
    text = render(result)
    assert "| `plait --help` | 3 | 70 | 80 | 3.5× |" in text
    assert "+0.50 s" in text and "2653 bytes" in text


def test_default_tool_groups_are_one_list_and_fit_three_kilobytes() -> None:
    from plait.adapters.hosts.mcp import catalog

    assert catalog.DEFAULT_GROUPS == DEFAULT_TOOL_GROUPS
    assert schema_bytes(DEFAULT_TOOL_GROUPS) <= 3072
