"""``verifybot compare`` with a chat site in the browser beside a replay, ``--parallel 3``:
one browser profile serves one cell at a time (its cells' chats never interleave),
while the replay's cells run beside them. Against the test chat site in Chromium.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import site_config_file
from chatsite import SCENARIOS, ChatSite
from cli_runs import answers
from project import verifybot_cmd

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PROMPT = "Print whether the config says ok"


def test_browser_cells_take_turns_on_their_profile_beside_a_replay(chatsite: ChatSite,
                                                                   tmp_path: Path) -> None:
    chatsite.configure("fix_loop", renderer="legacy")
    before = len(chatsite.prompts)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    for name in ("first", "second"):
        (recipes / f"{name}.toml").write_text(
            f'name = "{name}"\nprompt = "{PROMPT}"\ntarget = "local"\n'
            'criteria = ["contains:True"]\njudge = "off"\nmax_retries = 2\n')
    replies = [r.markdown for r in SCENARIOS["fix_loop"].replies]
    (tmp_path / "team.md").write_text(answers(replies[1]))  # right at once
    config = site_config_file(tmp_path, chatsite.url)
    done = subprocess.run(
        [*verifybot_cmd(), "compare", str(recipes), "--llm", "site", "--llm",
         "replay:team.md", "--parallel", "3", "--json", "--out", str(tmp_path / "out"),
         "--workspace", str(tmp_path / "ws"), "--config", str(config)],
        cwd=tmp_path, capture_output=True, text=True, timeout=280, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-4000:]
    data = json.loads(done.stdout)
    cells = {(c["recipe"], c["llm"]): c for c in data["cells"]}
    for recipe in ("first", "second"):
        site = cells[(recipe, "site")]
        assert (site["status"], site["verified_at"], site["failures"]) == \
            ("VERIFIED", 2, ["fault"]), site  # the first answer's JSONDecodeError
        assert site["first_answer_seconds"] is not None
        replay = cells[(recipe, "replay:team.md")]
        assert (replay["status"], replay["verified_at"]) == ("VERIFIED", 1)
    summary = {s["llm"]: s["pass_at"] for s in data["summary"]}
    assert summary == {"site": {"1": 0.0, "2": 1.0, "3": 1.0},
                       "replay:team.md": {"1": 1.0, "2": 1.0, "3": 1.0}}
    # Each browser cell is its own chat, and the two never interleave on the profile.
    got = chatsite.prompts[before:]
    assert len(got) == 4
    order = [p.conversation_id for p in got]
    assert order[0] == order[1] and order[2] == order[3] and order[0] != order[2], order
