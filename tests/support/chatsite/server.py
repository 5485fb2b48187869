"""A local stand-in for chatgpt.com and claude.ai, served on 127.0.0.1.

It reproduces the parts of the real pages a driver depends on (see
/work/shared/reference/chat-sites.md, and the real captures beside it, which
win where the two disagree): chatgpt.com's two pages (`renderer`: the legacy
page with its composer-pill model picker and multi-node answers, and the
"app-shell" page: claimed by its frame, no active-page marker on a direct load,
hidden earlier routes after in-app navigations, per-exchange [data-turn-key]
units with the assistant's action row outside its unit, id-less composer,
activity header, windowed thread, three code renderings and gapped CodeMirror
blocks), every label in the account's UI language (`lang`), a dialog open at
load, an account where Enter inserts a newline, and
Claude's 2026 page (answers in several blocks, the action bar beside the
streaming wrapper, artifacts kept out of the copied text); the ProseMirror-like
prompt box, the send/stop buttons, the copy buttons, the URL that changes from
a placeholder to /c/<uuid>, and the page states a driver must tell apart.
Answers come from scripted scenarios; every prompt received is recorded so
tests compare it byte for byte with what was sent.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http import cookies
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from loopback_http import serve

from .scenarios import SCENARIOS, Scenario

STATIC = Path(__file__).with_name("static")
SESSION_COOKIE = "chatsite_session"
ORG = "0f0e0d0c-0b0a-4909-8807-060504030201"


@dataclass
class Options:
    scenario: str = "answer"
    code_layout: str = "cm"  # "cm" (CodeMirror, 2025-26) or "hljs" (before 2025)
    turn_layout: str = "section"  # "section" (section[data-turn]) or "article" (old)
    copy_button: bool = True  # False: only the DOM fallback can read the answer
    stop_label_on_send: bool = False  # the stop button keeps data-testid="send-button"
    lossy_insert: bool = False  # the editor drops the newlines of inserted text
    max_prompt: int = 0  # > 0: the editor cuts longer prompts
    url_delay: float = 0.25  # seconds before /c/WEB:... becomes /c/<uuid>
    require_login: bool = False  # no session cookie: redirect to the login page
    auto_login_after: float = -1.0  # >= 0: the login page "logs in" by itself (tests)
    result_streaming: bool = True  # the .result-streaming class while streaming
    early_actions: bool = False  # the turn's action buttons show before the answer ends
    renderer: str = "legacy"  # chatgpt's page: "legacy" or "app_shell"
    # app_shell: after in-app navigations, earlier routes stay mounted, hidden (4 around
    # ours) and ours carries [data-app-shell-active-page]; a page opened directly has
    # neither (the real capture).
    hidden_route: bool = False
    window: int = 6  # app_shell: turns kept mounted (older ones are unmounted)
    cm_stuck: bool = False  # app_shell CodeMirror: gaps never fill when scrolled
    flash_actions: bool = False  # the action row flashes while the model thinks
    answer_now: bool = False  # Pro's "Answer now" placeholder while the model thinks
    no_stop_while_thinking: bool = False  # only the activity header says "busy"
    # the model thinks until the test calls release_thinking() (not for a time: a test
    # that watches the thinking state waits for what it saw, on a loaded machine too)
    hold_thinking: bool = False
    bot_scripts: bool = False  # bot-management markers on a normal page
    artifact_api: bool = True  # claude: the conversation JSON (with artifacts) answers
    models: tuple[str, ...] = ("GPT-5 Instant", "GPT-5 Thinking", "GPT-5 Pro")
    banner: str = ""  # a status banner's text on the page (a limit, or a mere notice)
    alert: str = ""  # an alert's text on the page (role=alert)
    lang: str = "en"  # the account's UI language: en, ko, de, or it (no texts in our tables)
    dialog: str = ""  # open at load: "whats_new", "login" (must not be answered), "no_close"
    enter_newline: bool = False  # Enter inserts a newline, Ctrl+Enter sends (some accounts)
    multi_node: bool = False  # legacy: an answer in several assistant nodes of one section
    # claude's page: "2025" (2025-26), "hub" (2026-10), or "renamed" (the hub with three
    # signals broken by a markup change: what doctor --repair mends)
    claude_layout: str = "2025"
    claude_picker: str = ""  # "cds": claude's 2026-09 picker (button[data-cds=ModelSelector])
    effort: str = "Moyen"  # the effort word that picker shows beside the model's name
    swallow_send: int = 0  # clicks on send the page ignores (the composer keeps the text)
    answered_by: str = ""  # the model that answers, whatever the picker says ("": the picked)
    limit_on_type: str = ""  # an alert with this text once the prompt box holds text
    keep_box: bool = False  # the composer keeps the prompt after sending it


@dataclass
class Received:
    conversation_id: str
    text: str
    variant: str
    at: float
    model: str = ""
    temporary: bool = False


@dataclass
class Conversation:
    id: str
    scenario: str
    variant: str
    turns: list[dict[str, str]] = field(default_factory=list)
    replies: int = 0


class ChatSite:
    """The server and its state; tests set options with configure()."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.options = Options()
        self.renderer = "legacy"  # chatgpt's page when configure() names none (tests' param)
        self.prompts: list[Received] = []
        self.finishes: list[dict[str, Any]] = []
        self.conversations: dict[str, Conversation] = {}
        self.thinking_released = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    # --- control -----------------------------------------------------------------

    def start(self) -> ChatSite:
        self._httpd = serve(_Handler, "chatsite", chatsite=self)
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() the site first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/"

    @property
    def claude_url(self) -> str:
        return self.url + "claude/new"

    def configure(self, scenario: str = "answer", **options: Any) -> None:
        """Options for the next page loads and prompts (the rest back to defaults)."""
        if scenario not in SCENARIOS:
            raise KeyError(f"no scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
        options.setdefault("renderer", self.renderer)
        with self.lock:
            self.options = Options(scenario=scenario, **options)
            self.thinking_released.clear()

    def release_thinking(self) -> None:
        """hold_thinking: the model stops thinking and answers."""
        self.thinking_released.set()

    def reset(self) -> None:
        with self.lock:
            self.options = Options()
            self.prompts.clear()
            self.finishes.clear()
            self.conversations.clear()

    def received(self) -> list[str]:
        with self.lock:
            return [p.text for p in self.prompts]

    # --- what the handler calls --------------------------------------------------

    def scenario(self) -> Scenario:
        return SCENARIOS[self.options.scenario]

    def page_config(self, variant: str, conversation_id: str) -> dict[str, Any]:
        o = self.options
        hidden = []
        if o.hidden_route and o.renderer == "app_shell":
            hidden = [{"role": "user", "text": "an earlier question"},
                      {"role": "assistant", "text": "OLD ANSWER from a hidden route"}]
        return {"variant": variant, "conversation_id": conversation_id,
                "lossy_insert": o.lossy_insert, "max_prompt": o.max_prompt,
                "page": self.scenario().page, "renderer": o.renderer, "hidden": hidden,
                "bot_scripts": o.bot_scripts, "models": list(o.models), "banner": o.banner,
                "alert": o.alert, "lang": o.lang, "dialog": o.dialog,
                "enter_newline": o.enter_newline, "claude_layout": o.claude_layout,
                "claude_picker": o.claude_picker, "effort": o.effort,
                "swallow_send": o.swallow_send, "limit_on_type": o.limit_on_type,
                "keep_box": o.keep_box}

    def send(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            o = self.options
            cid = body.get("conversation_id") or ""
            conv = self.conversations.get(cid)
            if conv is None:
                cid = str(uuid.uuid4())
                conv = self.conversations[cid] = Conversation(cid, o.scenario,
                                                              body.get("variant", "chatgpt"))
            text = body.get("prompt", "")
            self.prompts.append(Received(cid, text, conv.variant, time.time(),
                                         body.get("model", ""), bool(body.get("temporary"))))
            reply = SCENARIOS[conv.scenario].reply(conv.replies)
            conv.replies += 1
            conv.turns.append({"role": "user", "text": text})
            model = o.answered_by or body.get("model", "")
            if reply.event not in ("limit", "error"):
                # The reply goes on on the server: a page opened later shows it as far
                # as it got by then, and streams the rest (a long answer outlives a tab).
                conv.turns.append({"role": "assistant", "text": reply.markdown,
                                   "artifact": reply.artifact, "model": model,
                                   "reply": reply.as_json(), "t0": time.time()})
            return {"conversation_id": cid, "reply": reply.as_json(), "model": model,
                    "render": self._render(o, live=True)}

    @staticmethod
    def _render(o: Options, live: bool) -> dict[str, Any]:
        return {"code_layout": o.code_layout, "turn_layout": o.turn_layout,
                "copy_button": o.copy_button,
                "stop_label_on_send": o.stop_label_on_send and live,
                "url_delay": o.url_delay if live else 0,
                "result_streaming": o.result_streaming and live,
                "early_actions": o.early_actions and live, "window": o.window,
                "cm_stuck": o.cm_stuck, "flash_actions": o.flash_actions and live,
                "answer_now": o.answer_now and live,
                "no_stop_while_thinking": o.no_stop_while_thinking and live,
                "hold_thinking": o.hold_thinking and live,
                "multi_node": o.multi_node}

    def regenerate(self, body: dict[str, Any]) -> dict[str, Any]:
        """The regenerate button: the scenario's next reply, no new prompt."""
        with self.lock:
            conv = self.conversations.get(body.get("conversation_id") or "")
            if conv is None:
                return {"error": "no such conversation"}
            reply = SCENARIOS[conv.scenario].reply(conv.replies)
            conv.replies += 1
            conv.turns.append({"role": "assistant", "text": reply.markdown,
                               "artifact": reply.artifact})
            return {"reply": reply.as_json(), "render": self._render(self.options, live=True)}

    def conversation_json(self, cid: str) -> dict[str, Any] | None:
        with self.lock:
            conv = self.conversations.get(cid)
            if conv is None:
                return None
            turns = [_as_loaded(t) for t in conv.turns]
            return {"conversation_id": cid, "turns": turns,
                    "render": self._render(self.options, live=False)}

    def claude_conversation(self, cid: str) -> dict[str, Any] | None:
        """Claude's conversation JSON: messages with their artifacts as tool_use items."""
        with self.lock:
            conv = self.conversations.get(cid)
            if conv is None or not self.options.artifact_api:
                return None
            messages = []
            for t in conv.turns:
                content: list[dict[str, Any]] = [{"type": "text", "text": t["text"]}]
                if t.get("artifact"):
                    content.append({"type": "tool_use", "name": "artifacts",
                                    "input": {"command": "create", **t["artifact"]}})
                messages.append({"sender": "human" if t["role"] == "user" else "assistant",
                                 "content": content})
            return {"uuid": cid, "chat_messages": messages}

    def finished(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.finishes.append(body)


def _as_loaded(turn: dict[str, Any]) -> dict[str, Any]:
    """A turn as a page opened now shows it: an answer still being written comes with
    what is left of it (thinking time, then text from where it got to)."""
    out = {k: v for k, v in turn.items() if k not in ("reply", "t0")}
    reply = turn.get("reply")
    if not reply or reply["event"] not in ("", "never"):
        return out
    elapsed = time.time() - turn["t0"]
    md = reply["markdown"]
    if elapsed < reply["pause_before"]:
        out["live"] = {"reply": {**reply, "pause_before": reply["pause_before"] - elapsed},
                       "from": 0}
    else:
        shown = int((elapsed - reply["pause_before"]) * reply["rate"])
        if shown < len(md) or reply["event"] == "never":
            out["live"] = {"reply": {**reply, "pause_before": 0}, "from": max(1, shown)}
    return out


class _Handler(BaseHTTPRequestHandler):
    chatsite: ChatSite
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    # --- helpers -----------------------------------------------------------------

    def _reply(self, status: int, body: bytes, ctype: str,
               headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        headers = {"Cache-Control": "no-store", **(headers or {})}
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page went away (a test closed the browser): nothing to answer

    def _json(self, data: Any, status: int = 200) -> None:
        self._reply(status, json.dumps(data).encode(), "application/json")

    def _html(self, html: str, status: int = 200) -> None:
        self._reply(status, html.encode(), "text/html; charset=utf-8")

    def _redirect(self, where: str, headers: dict[str, str] | None = None) -> None:
        self._reply(302, b"", "text/plain", {"Location": where, **(headers or {})})

    def _logged_in(self) -> bool:
        jar = cookies.SimpleCookie(self.headers.get("Cookie", ""))
        return SESSION_COOKIE in jar

    # --- routes ------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        site = self.chatsite
        path = urlsplit(self.path).path
        if path.startswith("/static/"):
            f = STATIC / path.removeprefix("/static/")
            if f.is_file() and f.parent == STATIC:
                ctype = {"js": "text/javascript", "css": "text/css"}.get(
                    f.suffix.lstrip("."), "text/plain")
                # As the real sites serve their bundles: cached, so a new chat does not
                # fetch and compile its scripts again.
                self._reply(200, f.read_bytes(), ctype + "; charset=utf-8",
                            {"Cache-Control": "public, max-age=3600"})
            else:
                self._reply(404, b"not found", "text/plain")
            return
        if path == "/claude/api/organizations":
            self._json([{"uuid": ORG}] if self._logged_in() or not site.options.require_login
                       else {"error": "unauthorized"})
            return
        if path.startswith(f"/claude/api/organizations/{ORG}/chat_conversations/"):
            data = site.claude_conversation(path.rsplit("/", 1)[-1])
            self._json(data or {"error": "not found"}, 200 if data else 404)
            return
        if path.startswith("/api/conversation/"):
            data = site.conversation_json(path.rsplit("/", 1)[-1])
            self._json(data or {"error": "not found"}, 200 if data else 404)
            return
        if path == "/api/thinking":
            held = site.options.hold_thinking and not site.thinking_released.is_set()
            self._json({"held": held})
            return
        if path == "/api/auth/session":
            self._json({"user": {"name": "Test"}} if self._logged_in() else {})
            return
        if path == "/favicon.ico":
            self._reply(404, b"", "text/plain")
            return
        variant = "claude" if path.startswith("/claude") else "chatgpt"
        if path in ("/auth/login", "/claude/login"):
            self._html(_login_page(variant, site.options.auto_login_after))
            return
        if path in ("/auth/do-login", "/claude/do-login"):
            home = "/claude/new" if variant == "claude" else "/"
            self._redirect(home, {"Set-Cookie": f"{SESSION_COOKIE}=ok; Max-Age=86400; Path=/"})
            return
        with site.lock:
            opts = site.options
            scenario = site.scenario()
        if opts.require_login and not self._logged_in():
            self._redirect("/claude/login" if variant == "claude" else "/auth/login")
            return
        if scenario.page == "account_picker":
            self._html(_ACCOUNT_PICKER)
            return
        if scenario.page == "bot_check":
            self._html(_bot_check(opts.lang))
            return
        cid = ""
        for marker in ("/c/", "/chat/"):
            if marker in path:
                cid = path.rsplit(marker, 1)[-1]
        self._html(_app_page(site.page_config(variant, cid)))

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        site = self.chatsite
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._json({"error": "bad json"}, 400)
            return
        path = urlsplit(self.path).path
        if path == "/api/send":
            self._json(site.send(body))
        elif path == "/api/regenerate":
            self._json(site.regenerate(body))
        elif path == "/api/finished":
            site.finished(body)
            self._json({"ok": True})
        else:
            self._json({"error": "not found"}, 404)


def _app_page(config: dict[str, Any]) -> str:
    title = "Claude" if config["variant"] == "claude" else "ChatGPT"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="/static/app.css">
<script>window.__SITE = {json.dumps(config)};</script>
<script src="/static/markdown.js"></script>
<script src="/static/app.js" defer></script>
</head><body class="{config['variant']}{' font-ui' if config['variant'] == 'claude' else ''}">
</body></html>"""


def _login_page(variant: str, auto_after: float) -> str:
    action = "/claude/do-login" if variant == "claude" else "/auth/do-login"
    auto = ""
    if auto_after >= 0:
        auto = (f"<script>setTimeout(() => document.getElementById('login').click(), "
                f"{int(auto_after * 1000)});</script>")
    if variant == "claude":  # Claude's 2026 login page: Google, or an e-mailed code
        buttons = (f'<button id="login" data-testid="login-with-google" '
                   f"onclick=\"location.href='{action}'\">Continue with Google</button>\n"
                   f'<input data-testid="code" placeholder="Enter verification code">')
    else:
        buttons = (f'<button id="login" data-testid="login-button" '
                   f"onclick=\"location.href='{action}'\">Log in</button>\n"
                   f'<button data-testid="signup-button">Sign up for free</button>')
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Log in</title></head><body>
<h1>Get smarter responses, upload files and images, and more.</h1>
{buttons}
{auto}</body></html>"""


_ACCOUNT_PICKER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ChatGPT</title></head><body>
<main><h1>Welcome back</h1><p>Choose an account to continue to ChatGPT</p>
<button>Continue as test@example.com</button><button>Use another account</button></main>
</body></html>"""

# The 2026 Cloudflare gate: no #challenge-form any more; its title is localized.
_BOT_TITLES = {"en": "Just a moment...", "ko": "잠시만 기다리십시오…", "de": "Nur einen Moment…",
               "it": "Solo un momento..."}


def _bot_check(lang: str) -> str:
    return f"""<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{_BOT_TITLES.get(lang, "")}</title>
</head><body><h1>chatgpt.com</h1><div id="challenge-running">
<h2>Performing security verification</h2>
<input type="hidden" name="cf-turnstile-response" value="">
<div id="challenge-error-text" style="display:none"></div></div>
</body></html>"""


def serve_forever() -> None:
    """`cd tests && python -m chatsite.server [SCENARIO]`: try the site in a browser by hand."""
    import sys

    site = ChatSite().start()
    if len(sys.argv) > 1:
        site.configure(sys.argv[1])
    print(f"chat site on {site.url} (claude variant: {site.claude_url})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        site.stop()


if __name__ == "__main__":
    serve_forever()
