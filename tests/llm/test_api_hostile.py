"""Hostile API servers (issue 21, point 7): bounded memory, and a message for each odd body.

The loopback server misbehaves at the HTTP level: one SSE line that never ends, a
reasoning stream that never ends, a whole JSON body where a stream was asked for, an
HTML page, a redirect loop. Each ends with its own LLMError, long before the answer
timeout, with memory bounded by [run] max_answer_mb (peak RSS: bench/stops.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from api_fixtures import KEY, KEY_ENV, llm_table, write_config
from apiserver import ApiServer

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.settings.config import load_config
from verifybot_tui.llm import make_llm

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def server() -> ApiServer:
    s = ApiServer(key=KEY).start()
    yield s
    s.stop()


async def _ask(server: ApiServer, tmp_path: Path, model: str,
               monkeypatch: pytest.MonkeyPatch) -> LLMError:
    monkeypatch.setenv(KEY_ENV, KEY)
    path = write_config(tmp_path, llm_table("api", "openai", server.url, model,
                                            answer_timeout=600), default_llm="api")
    path.write_text(path.read_text().replace("[run]\n", "[run]\nmax_answer_mb = 1\n"))
    llm = make_llm(load_config(path), "api", tmp_path)
    try:
        with pytest.raises(LLMError) as e:
            await llm.ask("hello")
    finally:
        await llm.close()
    return e.value


@pytest.mark.parametrize("model, says", [
    ("endless-line", "max_answer_mb"),
    ("endless-thinking", "max_answer_mb"),
    ("json-body", "not a stream"),
    ("html", "HTML page"),
    ("redirect-loop", "redirects in a loop"),
])
async def test_each_odd_server_gets_its_own_message(server: ApiServer, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     model: str, says: str) -> None:
    error = await _ask(server, tmp_path, model, monkeypatch)
    assert says in str(error), str(error)
