"""The [mcp] table: what the user's own config lets MCP clients reach, checked key by key.

Offering a target without a sandbox or allowing installs weakens protection, so a
shared config that sets them is named as risky by `config import`.
"""

from __future__ import annotations

import tomllib

import pytest

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.core.settings.config_review import config_changes
from verifybot_tui.core.settings.config_transfer import export_document

PI = '[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\n'


def test_the_mcp_table_is_read_and_defaults_offer_nothing_more() -> None:
    assert (parse_config({}).mcp.targets, parse_config({}).mcp.install) == ([], False)
    cfg = parse_config(tomllib.loads(PI + '[mcp]\ntargets = ["pi"]\ninstall = true\n'))
    assert (cfg.mcp.targets, cfg.mcp.install) == (["pi"], True)


@pytest.mark.parametrize(("text", "says"), [
    ('[mcp]\ntargets = ["pi"]\n', ["mcp.targets", "'pi'", "[targets.pi]", "local"]),
    ('[mcp]\ntargets = "pi"\n', ["mcp.targets", "a list of strings"]),
    ("[mcp]\ninstall = 1\n", ["mcp.install", "true or false"]),
    ("[mcp]\nhttp = \"0.0.0.0:80\"\n", ["unknown key 'mcp.http'", "install, targets"]),
])
def test_a_bad_mcp_table_says_which_key_and_what_is_expected(text: str,
                                                             says: list[str]) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(tomllib.loads(text), "config.toml")
    for part in says:
        assert part in str(e.value)


def test_config_import_names_offering_and_installing_as_risky() -> None:
    old = parse_config(tomllib.loads(PI))
    new = parse_config(tomllib.loads(PI + '[mcp]\ntargets = ["pi"]\ninstall = true\n'))
    risks = {c.key: c.risk for c in config_changes(old, new)}
    assert "without a sandbox to MCP clients" in risks["mcp.targets"]
    assert "installs packages" in risks["mcp.install"]
    assert not any(c.risk for c in config_changes(new, old))  # taking them back is safe


def test_export_keeps_the_mcp_table() -> None:
    cfg = parse_config(tomllib.loads(PI + '[mcp]\ntargets = ["pi"]\n'))
    assert export_document(cfg)["mcp"] == {"targets": ["pi"], "install": False}
    again = parse_config(export_document(cfg))
    assert again.mcp.targets == ["pi"]


def test_the_example_config_documents_the_mcp_table() -> None:
    from project import ROOT

    lines = (ROOT / "config.toml.example").read_text().splitlines()
    table = lines.index("[mcp]")
    for key in ("targets", "install"):
        line = next(i for i in range(table, len(lines)) if lines[i].startswith(f"{key} ="))
        assert lines[line - 1].startswith("#"), f"mcp.{key} has no comment above it"
    cfg = parse_config(tomllib.loads("\n".join(lines)), "config.toml.example")
    assert (cfg.mcp.targets, cfg.mcp.install) == ([], False)
