"""Reading the answer back as markdown: the site's own through its copy button, else
the DOM's (CodeMirror blocks scrolled through, never less than whole), with the
code Claude keeps in artifacts; and the conversation's address once saved.
"""

from __future__ import annotations

import time
from typing import Any

from playwright.async_api import Error as PlaywrightError

from verifybot_tui.llm.browser.page.session import ChatPage


class AnswerReading(ChatPage):
    """The finished answer read from the page (see ChatPage for the state)."""

    async def _read_answer(self) -> str:
        """The site's own markdown through its copy button, else the DOM, never less."""
        await self._close_dialogs()
        markdown = await self._eval("t => window.__vb.copyAnswer(t)", 2000)
        if not isinstance(markdown, str) or not markdown.strip():
            got = await self._eval("t => window.__vb.answerMarkdown(t)", self.page_timeout * 700,
                                   timeout=self.page_timeout)
            if got is None:
                raise await self._fail("The answer vanished from the page before it could be "
                                       "read. Try again.", "answer_vanished")
            if got["incomplete"]:
                blocks = ", ".join(f"block {b['block']}"
                                   + (f" ({b['language']})" if b["language"] else "")
                                   + f", {b['shown']} lines shown"
                                   for b in got["incomplete"])
                raise await self._fail(
                    f"The answer's copy button gave nothing and its code could not be read "
                    f"whole from the page: CodeMirror code {blocks} kept lines hidden while "
                    f"scrolled through. Nothing was extracted (a shorter program would be "
                    f"wrong). Try again, or open the conversation and copy the code.",
                    "incomplete_code")
            markdown = got["markdown"]
        if self._obs.artifacts:
            markdown = await self._with_artifacts(markdown)
        return markdown

    async def _with_artifacts(self, markdown: str) -> str:
        """Claude keeps code put in an artifact out of the copied text: read it from the
        conversation JSON the page itself fetches (the site's own session and cookies)."""
        await self._settle_url()  # the JSON is found by the saved chat's id
        url = self._obs.url or self._page.url
        cid = self.profile.conversation_id(url)
        found: list[dict[str, Any]] = []
        if cid:
            base = url[: url.index(cid)]
            conv_id = cid.rsplit("/", 1)[-1]
            try:
                orgs = await self._eval("u => window.__vb.fetchJson(u)",
                                        base + "/api/organizations")
                org_list = orgs.get("data") if isinstance(orgs, dict) else None
                if isinstance(org_list, list):
                    for org in org_list:
                        got = await self._eval(
                            "u => window.__vb.fetchJson(u)",
                            f"{base}/api/organizations/{org.get('uuid')}/chat_conversations/"
                            f"{conv_id}?tree=True&rendering_mode=messages&render_all_tools=true")
                        if isinstance(got, dict) and isinstance(got.get("data"), dict):
                            found = _artifacts_of(got["data"])
                            break
            except (PlaywrightError, TimeoutError, AttributeError):
                found = []
        if not found:
            raise await self._fail(
                f"The answer's code is in a {self.profile.name} artifact, which the copied "
                f"text leaves out, and the conversation data could not be read from the page. "
                f"Ask again for the code in the answer itself (not an artifact), or copy it "
                f"from the artifact panel.", "artifact")
        blocks = []
        for art in found:
            code = art["content"]
            fence = "```"
            while fence in code:
                fence += "`"
            title = f"**{art['title']}**\n\n" if art.get("title") else ""
            blocks.append(f"{title}{fence}{art.get('language', '')}\n{code.rstrip(chr(10))}\n"
                          f"{fence}")
        return markdown.rstrip("\n") + "\n\n" + "\n\n".join(blocks)

    def _note_url(self, url: str) -> None:
        if url and self.profile.conversation_id(url):
            self.conversation_url = url

    async def _settle_url(self) -> None:
        """Record the chat's URL once the site has saved it (/c/<uuid>, not /c/WEB:...)."""
        deadline = time.monotonic() + 3.0
        while True:
            self._note_url(self._obs.url or self._page.url)
            if self.profile.conversation_id(self._obs.url or ""):
                return
            if self._gone or not await self.wait_change(deadline - time.monotonic()):
                self._note_url(self._page.url if self._page else "")
                return


def _artifacts_of(conversation: dict[str, Any]) -> list[dict[str, str]]:
    """Code artifacts of the last assistant message in Claude's conversation JSON."""
    messages = [m for m in conversation.get("chat_messages", []) if isinstance(m, dict)
                and m.get("sender") == "assistant"]
    if not messages:
        return []
    out = []
    for item in messages[-1].get("content", []):
        inp = item.get("input") if isinstance(item, dict) else None
        if (item.get("type") == "tool_use" and isinstance(inp, dict)
                and isinstance(inp.get("content"), str)):
            out.append({"content": inp["content"], "language": str(inp.get("language") or ""),
                        "title": str(inp.get("title") or "")})
    return out

