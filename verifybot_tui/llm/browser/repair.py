"""`verifybot doctor --page FILE.html --repair`: an LLM proposes selectors, the page decides.

When a site changes its markup, a signal the driver needs (the answer, its copy
button...) MISSes and users wait for a release. Here the saved page itself is the
judge: for each signal that MISSes, an LLM (any configured backend: API, browser or
replay) gets a pruned outline of the DOM around where the element should be, with
no more of the conversation's text than the first words of a node, and proposes
CSS selectors. Each proposal is tried on the saved page: it must match exactly what
the signal needs (the last answer, not the user's message, not the whole thread;
the answer's copy button, not the user's), and then, put first in the renderer's
list, make `doctor --page` read HIT. A rejected proposal goes back to the LLM with
its reason. The working ones are shown as a diff of the user's site profile
override and, once accepted, written there: never into a built-in profile.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from verifybot_tui.core.base.ansi import one_line, visible
from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.base.ports import LLMBackend
from verifybot_tui.core.base.toml_file import TomlFileError, read_toml
from verifybot_tui.llm.browser.saved_page import (
    FINISHED_SIGNALS,
    SavedPage,
    read_report,
    saved_page,
)
from verifybot_tui.llm.browser.site_profile import (
    SiteProfile,
    builtin_sites,
    load_site_profile,
    user_site_file,
)

Say = Callable[[str], None]
Confirm = Callable[[str], Awaitable[bool]]

ROUNDS = 3  # asks per signal: a rejected proposal goes back with its reason
MAX_PROPOSALS = 5  # tried per answer
# What each signal is, in the words the LLM gets.
MEANING = {
    "prompt_box": "the box the user types the prompt into (contenteditable or textarea)",
    "user_turn": "each message the user sent (one element per user message)",
    "user_message": "the text of a user message, inside the user's turn",
    "assistant_turn": "each answer of the assistant, one element per answer; the last one "
                      "is the answer being read",
    "assistant_message": "the answer's text blocks (markdown) inside the assistant's answer, "
                         "without its thinking or tool rows",
    "action_row": "the row of action buttons (copy, retry...) of the assistant's answer",
    "finished_markers": "a marker that is on the assistant's answer (or inside it) only once "
                        "the answer is complete",
    "copy_button": "the button that copies the assistant's answer (NOT the user's message's "
                   "copy button, NOT a code block's copy button)",
}

# A pruned outline of the DOM around where the signal's element should be: tags,
# classes, data-/aria- attributes, and at most the first words of a text node.
_OUTLINE_JS = r"""(args) => {
  const S = args.sel;
  const q = (list) => {
    for (const s of list || []) {
      try { const r = document.querySelectorAll(s); if (r.length) return Array.from(r); }
      catch (e) { /* skip */ }
    }
    return [];
  };
  const users = q(S.user_turn), assts = q(S.assistant_turn);
  const answer = assts.length ? assts[assts.length - 1] : null;
  const lastUser = users.length ? users[users.length - 1] : null;
  const up = {assistant_message: 0, finished_markers: 0, user_message: 1};
  let root = answer || lastUser || document.body;
  if (args.key === "prompt_box" || (!answer && !lastUser)) root = document.body;
  else {
    const n = args.key in up ? up[args.key] : 3;
    for (let i = 0; i < n && root.parentElement && root.parentElement !== document.body; i++) {
      root = root.parentElement;
    }
  }
  const lines = [];
  const MAX = args.maxLines;
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    for (const c of Array.from(el.classList).slice(0, 8)) s += "." + CSS.escape(c);
    for (const a of el.attributes) {
      if (a.name.startsWith("data-") || a.name.startsWith("aria-") ||
          ["role", "type", "contenteditable"].includes(a.name)) {
        s += "[" + a.name + '="' + a.value.slice(0, 40).replace(/"/g, "'") + '"]';
      }
    }
    return s;
  };
  const words = (el) => {
    let t = "";
    for (const c of el.childNodes) if (c.nodeType === Node.TEXT_NODE) t += c.data;
    t = t.trim().replace(/\s+/g, " ");
    if (!t) return "";
    return t.length <= args.words ? ' "' + t + '"'
      : ' "' + t.slice(0, args.words) + '…" (' + t.length + " chars)";
  };
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "svg", "SVG", "PATH", "path"]);
  const walk = (el, depth) => {
    if (lines.length >= MAX || SKIP.has(el.tagName)) return;
    const pad = "  ".repeat(depth);
    if (el.tagName === "PRE") {
      lines.push(pad + describe(el) + " (a code block, " +
        (el.textContent || "").split("\n").length + " lines)");
      return;
    }
    lines.push(pad + describe(el) + words(el));
    let prev = "", same = 0;
    for (const c of el.children) {
      const sig = c.tagName + "|" + c.className;
      same = sig === prev ? same + 1 : 0;
      prev = sig;
      if (same === 4) lines.push(pad + "  … more " + c.tagName.toLowerCase());
      if (same >= 4) continue;
      walk(c, depth + 1);
    }
  };
  const chain = [];
  for (let p = root.parentElement; p && p !== document.documentElement; p = p.parentElement) {
    chain.unshift(describe(p));
  }
  walk(root, 0);
  return {outline: lines.join("\n"), inside: chain.slice(-4).join(" > "),
          truncated: lines.length >= MAX};
}"""

# Whether a proposal matches exactly the element the signal needs; a reason if not.
_TRY_JS = r"""(args) => {
  const S = args.sel, key = args.key;
  let els;
  try { els = Array.from(document.querySelectorAll(args.selector)); }
  catch (e) { return {ok: false, count: 0, reason: "not a valid CSS selector"}; }
  const n = els.length;
  if (!n) return {ok: false, count: 0, reason: "matches nothing on the page"};
  const q = (list) => {
    for (const s of list || []) {
      try { const r = document.querySelectorAll(s); if (r.length) return Array.from(r); }
      catch (e) { /* skip */ }
    }
    return [];
  };
  const users = key === "user_turn" ? [] : q(S.user_turn);
  const assts = key === "assistant_turn" ? els : q(S.assistant_turn);
  const answer = assts.length ? assts[assts.length - 1] : null;
  const inUser = (el) => users.some((u) => u === el || u.contains(el));
  const holdsUser = (el) => users.some((u) => u !== el && el.contains(u));
  const body = (el) => el === document.body || el === document.documentElement;
  if (els.some(body)) return {ok: false, count: n, reason: "matches too much: the whole page"};
  if (key === "user_turn" || key === "user_message") {
    const a = q(S.assistant_turn);
    if (els.some((e) => a.some((x) => e.contains(x) || x.contains(e)))) {
      return {ok: false, count: n,
              reason: "matches the assistant's answer, not the user's message"};
    }
    return {ok: true, count: n, reason: ""};
  }
  if (key === "prompt_box") {
    const e = els[0];
    return e.isContentEditable || ["TEXTAREA", "INPUT"].includes(e.tagName)
      ? {ok: true, count: n, reason: ""}
      : {ok: false, count: n, reason: "matches something one cannot type into"};
  }
  if (els.every(inUser)) {
    return {ok: false, count: n, reason: key === "copy_button"
      ? "matches a button of the user's message, not the answer's" : "matches the user's message"};
  }
  if (els.some(holdsUser)) {
    return {ok: false, count: n,
            reason: "matches too much: an element it matches holds the user's message too"};
  }
  if (key === "assistant_turn") return {ok: true, count: n, reason: ""};
  if (!answer) {
    return {ok: false, count: n, reason: "no assistant answer on the page to test it in"};
  }
  const grand = answer.parentElement && answer.parentElement.parentElement;
  const near = [answer, answer.parentElement, grand].filter((r) => r && !body(r) &&
    !users.some((u) => r.contains(u)));
  const own = els.filter((e) => !inUser(e) && near.some((r) => r === e || r.contains(e)));
  if (key === "assistant_message") {
    return own.some((e) => answer === e || answer.contains(e))
      ? {ok: true, count: n, reason: ""}
      : {ok: false, count: n, reason: "matches nothing inside the last answer"};
  }
  if (key === "finished_markers") {
    return els.some((e) => e === answer || answer.contains(e))
      ? {ok: true, count: n, reason: ""}
      : {ok: false, count: n, reason: "matches nothing on or inside the last answer"};
  }
  if (key === "copy_button") {
    if (!own.length) {
      return {ok: false, count: n, reason: "matches no button of the last answer (the user's " +
        "copy button or another turn's)"};
    }
    if (own.some((e) => e.closest("pre, [data-markdown-copy], .cm-editor"))) {
      return {ok: false, count: n, reason: "matches a code block's copy button"};
    }
    if (own.length > 1) {
      return {ok: false, count: n,
              reason: "matches too much: " + own.length + " buttons of the last answer"};
    }
    const b = own[0];
    if (!(b.tagName === "BUTTON" || b.getAttribute("role") === "button")) {
      return {ok: false, count: n, reason: "matches something that is not a button"};
    }
    // Its accessible name (label, labelled-by, title, text, icon title), and a mark
    // for the click that proves what it copies.
    const byId = (b.getAttribute("aria-labelledby") || "").split(/\s+/)
      .map((i) => document.getElementById(i)).filter((e) => e)
      .map((e) => e.textContent).join(" ");
    const icon = b.querySelector("svg title");
    const name = (b.getAttribute("aria-label") || byId || b.getAttribute("title") ||
      b.textContent || (icon && icon.textContent) || "").trim().replace(/\s+/g, " ");
    document.querySelectorAll("[data-vb-proposed]").forEach((e) =>
      e.removeAttribute("data-vb-proposed"));
    b.setAttribute("data-vb-proposed", "");
    return {ok: true, count: n, reason: "", name: name.slice(0, 80)};
  }
  return own.length ? {ok: true, count: n, reason: ""}
    : {ok: false, count: n, reason: "matches nothing near the last answer"};
}"""


# "Copy" in the UI languages a chat site is seen in: a proposed copy button whose
# accessible name holds none of these (nor a [texts] copy label of the profile) must
# prove itself by putting the answer on the clipboard when clicked. Any other button
# of the answer's row (a thumbs-up "Good response") would act on the user's account
# at every answer.
COPY_WORDS = ("copy", "kopier", "kopiera", "copier", "copiar", "copia", "kopiuj", "kopír",
              "kopio", "kopyala", "másol", "копир", "копію", "αντιγρ", "העתק", "نسخ",
              "복사", "コピー", "复制", "複製", "sao chép", "salin", "คัดลอก", "प्रतिलिपि",
              "कॉपी")


def says_copy(name: str, labels: list[str]) -> bool:
    """The button's accessible name says copy, in any language."""
    low = name.casefold()
    return bool(low) and any(w.casefold() in low for w in (*COPY_WORDS, *labels) if w)


def _letters(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


@dataclass
class Tried:
    selector: str
    ok: bool
    reason: str


@dataclass
class Fix:
    key: str
    selector: str
    tried: list[Tried] = field(default_factory=list)


def parse_proposals(answer: str) -> list[str]:
    """The selectors of an answer: the lines of its fenced blocks, else `inline` ones."""
    out: list[str] = []
    blocks = re.findall(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", answer, re.M | re.S)
    lines = [ln for _, body in blocks for ln in body.splitlines()]
    if not lines:
        lines = re.findall(r"`([^`\n]+)`", answer)
    for line in lines:
        sel = re.sub(r"^\s*(?:[-*]|\d+[.)])\s+", "", line).strip().rstrip(",;")
        if len(sel) >= 2 and sel[0] == sel[-1] and sel[0] in "'\"":
            sel = sel[1:-1]
        if sel and not sel.startswith(("/*", "//", "#!")) and sel not in out and len(sel) < 300:
            out.append(sel)
    return out[:MAX_PROPOSALS]


def override_path(site: str) -> Path:
    """Where the user's own version of the site profile is written: the file --site
    names, or the user's sites/NAME.toml for a built-in site (read before the
    built-in profile by the driver and `doctor --page` from then on)."""
    if site in builtin_sites():
        return user_site_file(site)
    return Path(site).expanduser()


def _override_data(path: Path, base: str) -> dict[str, Any]:
    if not path.is_file():
        return {"extends": base}
    try:
        return read_toml(path)
    except TomlFileError as e:
        raise LLMError(f"{path}: site profile: {e}") from None


def updated_override(path: Path, base: str, renderer: str, fixes: dict[str, list[str]]
                     ) -> tuple[str, str]:
    """(the file's text now, its text with the fixes): the fixed lists go under
    [renderers.RENDERER.selectors] (a file of a single page: its [selectors])."""
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    data = _override_data(path, base)
    top = data.setdefault("selectors", {}) if "selectors" in data else {}
    for key, selectors in fixes.items():
        if key in top or not ("renderers" in data or "extends" in data):
            # a list the file already sets for every page (it wins over the page's)
            data.setdefault("selectors", {})[key] = selectors
        else:
            table = data.setdefault("renderers", {}).setdefault(renderer, {})
            table.setdefault("selectors", {})[key] = selectors
    return old, tomli_w.dumps(data)


def diff(old: str, new: str, path: Path) -> list[str]:
    return [ln.rstrip("\n") for ln in difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True),
        fromfile=f"{path} (now)", tofile=f"{path} (repaired)")]


def _with(profile: SiteProfile, renderer: str, key: str, selectors: list[str]) -> SiteProfile:
    out = copy.deepcopy(profile)
    rend = out.renderer(renderer)
    assert rend is not None
    rend.selectors[key] = selectors
    return out


def _prompt(site: str, renderer: str, key: str, outline: dict[str, Any],
            rejected: list[Tried]) -> str:
    lines = [
        f"VerifyBot reads a chat page saved from the site \"{site}\" (its page layout "
        f"\"{renderer}\"). Its CSS selectors for \"{key}\" ({MEANING.get(key, key)}) match "
        f"nothing on this page: the site changed its markup.",
        "",
        "A pruned outline of the page's DOM where that element should be follows (tags, "
        "classes, data- and aria- attributes; conversation text cut to its first words)."
        + (f" It sits inside: {outline['inside']}" if outline.get("inside") else ""),
        "",
        "```text", outline["outline"], "```", "",
        f"Propose up to 3 CSS selectors for \"{key}\", best first, one per line, inside one "
        "fenced block, like:",
        "```css", "div.example[data-role=\"x\"]", "```",
        "Prefer stable attributes (data-testid, data-*, role, aria-label) over layout classes.",
    ]
    if rejected:
        lines += ["", "These were tried on the page and did not work:"]
        lines += [f"- {t.selector}: {t.reason}" for t in rejected]
    return "\n".join(lines)


class Repair:
    """One repair of a saved page's profile with one LLM."""

    def __init__(self, shown: SavedPage, profile: SiteProfile, renderer: str, llm: LLMBackend,
                 say: Say) -> None:
        self.shown = shown
        self.profile = profile
        self.renderer = renderer
        self.llm = llm
        self.say = say

    async def fix(self, key: str) -> Fix | None:
        page = self.shown.page
        rend = self.profile.renderer(self.renderer)
        assert rend is not None
        outline = await page.evaluate(_OUTLINE_JS, {"key": key, "sel": rend.selectors,
                                                    "maxLines": 250, "words": 24})
        # A backend that takes images has ask_with_images(prompt, [png]): it also gets a
        # screenshot of the page (the answer scrolled into view).
        with_images = getattr(self.llm, "ask_with_images", None)
        shots: list[bytes] = []
        if callable(with_images):
            await page.evaluate("() => { const a = document.querySelectorAll("
                                "'[data-is-streaming], [data-message-author-role], "
                                "[data-turn-key]'); if (a.length) a[a.length - 1]"
                                ".scrollIntoView({block: 'end'}); }")
            shots.append(await page.screenshot(type="png"))
        image = (f"a {len(shots[0]) // 1024} KB screenshot" if shots else
                 "no screenshot (this LLM takes text only)")
        rejected: list[Tried] = []
        fix = Fix(key, "")
        for round_ in range(ROUNDS):
            prompt = _prompt(self.profile.name, self.renderer, key, outline, rejected)
            self.say(f"  asking {self.llm.name} for {key} ({len(outline['outline'])} chars of "
                     f"outline; {image})" if round_ == 0 else
                     f"  asking again, with the {len(rejected)} reason(s)")
            answer = await (with_images(prompt, shots) if shots and callable(with_images)
                            else self.llm.ask(prompt))
            proposals = parse_proposals(answer.markdown)
            if not proposals:
                self.say("  the answer held no selector")
            for sel in proposals:
                if any(t.selector == sel for t in rejected):
                    continue
                tried = await self._try(key, sel)
                fix.tried.append(tried)
                if tried.ok:
                    self.say(one_line(f"  OK     {sel}: {tried.reason}"))
                    fix.selector = sel
                    return fix
                self.say(one_line(f"  REJECT {sel}: {tried.reason}"))
                rejected.append(tried)
        return None

    async def _try(self, key: str, sel: str) -> Tried:
        rend = self.profile.renderer(self.renderer)
        assert rend is not None
        got = await self.shown.page.evaluate(_TRY_JS, {"key": key, "sel": rend.selectors,
                                                       "selector": sel})
        if not got["ok"]:
            return Tried(sel, False, got["reason"])
        if key == "copy_button" and (why := await self._not_copying(got.get("name", ""))):
            return Tried(sel, False, why)
        # Put first in the renderer's list, does the driver read the page with it?
        trial = _with(self.profile, self.renderer, key, [sel, *rend.sel(key)])
        page = await self.shown.open(trial, keep=False)
        report = await read_report(page, trial, self.shown.url)
        await page.close()
        if report.renderer != self.renderer or report.signals.get(key) != "HIT":
            return Tried(sel, False, f"matches {got['count']} element(s), but the driver "
                                     f"still reads {key} as {report.signals.get(key)}")
        if key in ("assistant_turn", "assistant_message") and not report.answer:
            return Tried(sel, False, "the driver reads no answer with it")
        self.profile = trial
        what = (f"HIT, the answer reads {len(report.answer)} chars" if report.answer
                else "HIT")
        return Tried(sel, True, what)


    async def _not_copying(self, name: str) -> str:
        """Why the proposed copy button is not one ("" when it is): its name says copy,
        or clicking it on the page puts the answer's text on the clipboard."""
        if says_copy(name, self.profile.texts.get("copy", [])):
            return ""
        page = self.shown.page
        clip = await page.evaluate("() => window.__vb.captureClick("
                                   "document.querySelector('[data-vb-proposed]'), 1500)")
        read = await page.evaluate("t => window.__vb.answerMarkdown(t)", 15000)
        answer = (read or {}).get("markdown") or ""
        if clip and answer and _letters(clip) == _letters(answer):
            return ""
        what = "put something else on the clipboard" if clip else "put nothing on the clipboard"
        return (f"its name \"{name}\" does not say copy, and clicking it on the page {what}: "
                f"not the answer's copy button (a rating button must never be clicked for "
                f"every answer)")


async def repair_page(path: Path, site: str, llm: LLMBackend, override: Path, *, say: Say,
                      confirm: Confirm | None, accept: bool = False,
                      browser_path: str = "") -> int:
    """Repair every MISS of the saved page; 0 when all were fixed and written (or none
    missed), 1 when some stay, 2 when nothing could be tried."""
    profile = load_site_profile(str(override) if override.is_file() else site)
    base = site if site in builtin_sites() else str(_override_data(override, "").get(
        "extends") or profile.name)
    async with saved_page(path, profile, browser_path=browser_path) as shown:
        report = await read_report(shown.page, profile, shown.url)
        if not report.renderer:
            say(f"FAIL no renderer of {profile.name} claims the page: a repair needs one "
                f"(its signature: {profile.signatures()})")
            return 1
        misses = [k for k in FINISHED_SIGNALS if report.signals.get(k) == "MISS"]
        if not misses:
            say(f"OK   every signal of {report.renderer} is HIT on {path}: nothing to repair")
            return 0
        say(f"repair {len(misses)} MISS on {path} ({report.renderer}): {', '.join(misses)}")
        await llm.start()
        await llm.new_chat()
        work = Repair(shown, profile, report.renderer, llm, say)
        fixes: dict[str, list[str]] = {}
        for key in misses:
            found = await work.fix(key)
            if found is None:
                say(f"  no working selector for {key}")
                continue
            rend = profile.renderer(report.renderer)
            assert rend is not None
            fixes[key] = [found.selector, *[s for s in rend.sel(key) if s != found.selector]]
    if not fixes:
        say("FAIL no proposal worked: the profile is unchanged")
        return 1
    old, new = updated_override(override, base, report.renderer, fixes)
    for line in diff(old, new, override):
        say(visible(line, newlines=False))
    question = f"Write this to {override} (your own profile; the built-in one is not changed)?"
    if not accept and (confirm is None or not await confirm(question)):
        say("Not written.")
        return 1
    override.parent.mkdir(parents=True, exist_ok=True)
    override.write_text(new, encoding="utf-8")
    say(f"wrote {override}")
    if site in builtin_sites():
        say(f"the driver and `doctor --page --site {site}` read it from now on, before the "
            f"built-in profile (every [llm] with site = \"{site}\"); delete it to go back")
    else:
        say(f"read the page with it: verifybot doctor --page {path} --site {override}; an "
            f"[llm] uses it with site = \"{override}\"")
    return 0 if len(fixes) == len(misses) else 1
