// Watches a chat page and pushes what the driver needs to Python on every
// change, so the driver waits on events instead of polling: the last answer's
// text (as markdown, delta-encoded), whether the page is busy or shows the
// finished-action buttons, the user turns, and facts that tell page states
// apart (logged out, bot check, limit, error). Also holds the small helpers
// the driver calls (prompt box read-back and injection, copy capture).
// Runs inside an IIFE after `const VB_CONFIG = {...}` and dom_markdown.js.
if (window.top === window && !window.__vb) {
  const S = VB_CONFIG.selectors;
  const T = VB_CONFIG.texts;
  const now = () => performance.timeOrigin + performance.now();
  const DOC = Math.random().toString(36).slice(2) + now().toString(36);
  const lower = (s) => (s || "").toLowerCase();

  function all(list, root) {
    root = root || document;
    for (const s of list) {
      try {
        const r = root.querySelectorAll(s);
        if (r.length) return Array.from(r);
      } catch (e) { /* a selector this browser cannot parse: try the next */ }
    }
    return [];
  }
  function union(list, root) {
    const out = [];
    for (const s of list) {
      try { out.push(...(root || document).querySelectorAll(s)); } catch (e) { /* skip */ }
    }
    return out;
  }
  function visible(el) {
    if (!el || !el.isConnected) return false;
    if (el.checkVisibility) return el.checkVisibility({visibilityProperty: true});
    return el.getClientRects().length > 0;
  }
  function firstVisible(list, root) {
    for (const s of list) {
      let r;
      try { r = (root || document).querySelectorAll(s); } catch (e) { continue; }
      for (const el of r) if (visible(el)) return el;
    }
    return null;
  }
  function has(el, list) {
    for (const s of list) {
      try { if (el.matches(s) || el.querySelector(s)) return true; } catch (e) { /* skip */ }
    }
    return false;
  }
  function plainText(el) {
    let s = "";
    const walk = (n) => {
      if (n.nodeType === Node.TEXT_NODE) { s += n.data; return; }
      if (n.nodeType !== Node.ELEMENT_NODE) return;
      if (n.tagName === "BUTTON" || n.tagName === "svg" || n.classList.contains("sr-only")) return;
      if (n.tagName === "BR") { s += "\n"; return; }
      for (const c of n.childNodes) walk(c);
      if (n.tagName === "P" || n.tagName === "DIV") s += "\n";
    };
    walk(el);
    return s;
  }
  const turnSelector = [...S.user_turn, ...S.assistant_turn].join(", ");
  function inTurn(el) {
    try { return !!el.closest(turnSelector); } catch (e) { return false; }
  }

  const ids = new WeakMap();
  let nextId = 1;
  function idOf(el) {
    if (!el) return 0;
    if (!ids.has(el)) ids.set(el, nextId++);
    return ids.get(el);
  }

  function turns() {
    const users = all(S.user_turn);
    const assts = all(S.assistant_turn);
    const lastUser = users.length ? users[users.length - 1] : null;
    let answer = assts.length ? assts[assts.length - 1] : null;
    if (answer && lastUser &&
        !(lastUser.compareDocumentPosition(answer) & Node.DOCUMENT_POSITION_FOLLOWING)) {
      answer = null;  // the last assistant turn is older than the last prompt
    }
    return {users, lastUser, answer};
  }
  function messageOf(answer) {
    const msgs = all(S.assistant_message, answer);
    return msgs.length ? msgs[msgs.length - 1] : answer;
  }
  function userTextOf(turn) {
    if (!turn) return "";
    const m = all(S.user_message, turn);
    return plainText(m.length ? m[m.length - 1] : turn);
  }
  function findBox() {
    return firstVisible(S.prompt_box) || all(S.prompt_box)[0] || null;
  }

  function matchText(text, list) {
    const t = lower(text);
    return list.find((x) => t.includes(lower(x))) || "";
  }
  function facts(answer) {
    const f = {path: location.pathname, host: location.host, title: document.title,
      promptBox: !!firstVisible(S.prompt_box), login: "", botCheck: "", picker: "",
      pickerInDialog: false, limit: "", error: ""};
    const title = matchText(document.title, T.bot_check_titles);
    const bot = all(S.bot_check_markers);
    if (title || bot.length) f.botCheck = title || "challenge";
    const lm = firstVisible(S.login_markers);
    if (lm) f.login = (lm.textContent || "").trim() || "login";
    if (!f.login && T.login_buttons.length) {
      const wanted = T.login_buttons.map(lower);
      for (const b of document.querySelectorAll("button, a[href], [role=button]")) {
        const t = lower((b.textContent || "").trim());
        if (t.length < 40 && wanted.includes(t) && !inTurn(b) && visible(b)) {
          f.login = (b.textContent || "").trim();
          break;
        }
      }
    }
    const pm = firstVisible(S.account_picker_markers);
    if (pm) f.picker = (pm.textContent || "").trim().slice(0, 200) || "account picker";
    if (!f.picker && T.account_picker.length) {
      for (const h of document.querySelectorAll("h1, h2, h3, [role=dialog] p")) {
        if (!inTurn(h) && matchText(h.textContent, T.account_picker) && visible(h)) {
          f.picker = h.textContent.trim().slice(0, 200);
          f.pickerInDialog = !!h.closest("[role=dialog]");
          break;
        }
      }
    }
    for (const el of union(S.alert_containers)) {
      if (inTurn(el) || !visible(el)) continue;
      const text = (el.textContent || "").trim().slice(0, 400);
      if (!text || matchText(text, T.not_limit)) continue;
      if (!f.limit && matchText(text, T.limit)) f.limit = text;
      else if (!f.error && matchText(text, T.error)) f.error = text;
    }
    if (!f.error) {
      for (const el of union(S.error_toast)) {
        const turn = inTurn(el) ? el.closest(turnSelector) : null;
        if (turn && !(answer && (turn === answer || answer.contains(turn) ||
            turn.contains(answer)))) continue;  // an old turn's error, not this answer's
        if (!visible(el)) continue;
        const own = (el.textContent || "").trim();
        const around = el.parentElement ? (el.parentElement.textContent || "").trim() : "";
        f.error = (own.length > 12 ? own : around || own || "error").slice(0, 400);
        break;
      }
    }
    return f;
  }

  function snapshot() {
    const {users, lastUser, answer} = turns();
    const msg = answer ? messageOf(answer) : null;
    return {
      url: location.href,
      users: users.length,
      userText: userTextOf(lastUser),
      answerId: idOf(answer),
      text: msg ? vbDomToMarkdown(msg) : "",
      finished: !!answer && has(answer, S.finished_markers),
      busy: !!firstVisible(S.stop_button) || (!!answer && has(answer, S.busy_markers)),
      facts: facts(answer),
    };
  }

  // --- pushing changes to Python -------------------------------------------
  let seq = 0;
  let lastMutationT = now();
  let textT = now();
  let sentText = "";
  let sentAnswerId = -1;
  let sentUserText = null;
  let sentKey = "";
  let inflight = false;
  let dirty = false;

  function commonPrefix(a, b) {
    const n = Math.min(a.length, b.length);
    let i = 0;
    while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
    return i;
  }
  function nextState() {
    const s = snapshot();
    const sameAnswer = s.answerId === sentAnswerId;
    if (!sameAnswer || s.text !== sentText) textT = lastMutationT;
    const key = JSON.stringify([s.url, s.users, s.answerId, s.finished, s.busy, s.facts]);
    if (sameAnswer && s.text === sentText && s.userText === sentUserText && key === sentKey) {
      return null;
    }
    const keep = sameAnswer ? commonPrefix(sentText, s.text) : 0;
    const st = {doc: DOC, seq: ++seq, t: now(), textT, url: s.url, users: s.users,
      answerId: s.answerId, keep, add: s.text.slice(keep), finished: s.finished,
      busy: s.busy, facts: s.facts};
    if (s.userText !== sentUserText) st.userText = s.userText;
    sentText = s.text;
    sentAnswerId = s.answerId;
    sentUserText = s.userText;
    sentKey = key;
    return st;
  }
  async function pump() {
    inflight = true;
    try {
      while (dirty) {
        if (typeof window.__vbPush !== "function") {
          setTimeout(schedule, 20);  // the binding arrives right after us
          break;
        }
        dirty = false;
        const st = nextState();
        if (!st) continue;
        try { await window.__vbPush(st); } catch (e) { /* page closing */ }
      }
    } finally {
      inflight = false;
    }
  }
  function schedule() {
    dirty = true;
    if (!inflight) pump();
  }
  function resync() {
    // Python lost track (a new listener): send everything again.
    sentText = ""; sentAnswerId = -1; sentUserText = null; sentKey = "";
    schedule();
    return seq;
  }

  const observer = new MutationObserver(() => {
    lastMutationT = now();
    schedule();
  });
  observer.observe(document, {childList: true, subtree: true, characterData: true,
    attributes: true});
  for (const name of ["pushState", "replaceState"]) {
    const orig = history[name];
    history[name] = function (...args) {
      const r = orig.apply(this, args);
      lastMutationT = now();
      schedule();
      return r;
    };
  }
  for (const ev of ["popstate", "hashchange", "DOMContentLoaded", "load", "visibilitychange"]) {
    window.addEventListener(ev, schedule);
  }

  // --- helpers the driver calls --------------------------------------------
  function readBox() {
    const box = findBox();
    if (!box) return null;
    if (box.tagName === "TEXTAREA" || box.tagName === "INPUT") return box.value;
    const kids = Array.from(box.children);
    if (kids.length && !Array.from(box.childNodes).some(
        (n) => n.nodeType === Node.TEXT_NODE && n.data.trim())) {
      // One block (<p>) per line; an empty line is a <p> holding only a <br>.
      return kids.map((k) => k.textContent).join("\n");
    }
    return box.innerText;
  }
  function focusEnd(box) {
    box.focus();
    if (box.tagName === "TEXTAREA" || box.tagName === "INPUT") return;
    const sel = getSelection();
    const r = document.createRange();
    r.selectNodeContents(box);
    r.collapse(false);
    sel.removeAllRanges();
    sel.addRange(r);
  }
  function setBox(text) {
    const box = findBox();
    if (!box) return false;
    if (box.tagName === "TEXTAREA" || box.tagName === "INPUT") {
      const proto = box.tagName === "TEXTAREA" ? HTMLTextAreaElement : HTMLInputElement;
      Object.getOwnPropertyDescriptor(proto.prototype, "value").set.call(box, text);
    } else {
      box.replaceChildren(...text.split("\n").map((line) => {
        const p = document.createElement("p");
        if (line) p.textContent = line;
        else p.appendChild(document.createElement("br"));
        return p;
      }));
    }
    focusEnd(box);
    box.dispatchEvent(new InputEvent("input", {bubbles: true, inputType: "insertText",
      data: text}));
    return true;
  }
  function sendButton() {
    for (const s of S.send_button) {
      let r;
      try { r = document.querySelectorAll(s); } catch (e) { continue; }
      for (const b of r) {
        const label = lower(b.getAttribute("aria-label") + " " + b.textContent);
        if (visible(b) && !b.disabled && b.getAttribute("aria-disabled") !== "true" &&
            !label.includes("stop")) return b;
      }
    }
    return null;
  }
  function clickStop() {
    const b = firstVisible(S.stop_button);
    if (b) b.click();
    return !!b;
  }
  function clickSend() {
    const b = sendButton();
    if (!b) return false;
    b.click();
    return true;
  }
  // Click the answer's copy button with the page's clipboard replaced, so the
  // site hands us its own markdown without touching the OS clipboard.
  async function copyAnswer(timeoutMs) {
    const {answer} = turns();
    if (!answer) return null;
    const btn = all(S.copy_button, answer).pop();
    if (!btn) return null;
    const cb = navigator.clipboard;
    if (!cb) return null;
    const own = {writeText: Object.getOwnPropertyDescriptor(cb, "writeText"),
      write: Object.getOwnPropertyDescriptor(cb, "write")};
    let done;
    const got = new Promise((resolve) => { done = resolve; });
    cb.writeText = async (t) => { done(String(t)); };
    cb.write = async (items) => {
      for (const item of items || []) {
        if (item.types && item.types.includes("text/plain")) {
          const blob = await item.getType("text/plain");
          done(await blob.text());
          return;
        }
      }
      done(null);
    };
    try {
      btn.click();
      return await Promise.race([got, new Promise((r) => setTimeout(() => r(null), timeoutMs))]);
    } finally {
      for (const k of ["writeText", "write"]) {
        if (own[k]) Object.defineProperty(cb, k, own[k]);
        else delete cb[k];
      }
    }
  }
  function answerMarkdown() {
    const {answer} = turns();
    return answer ? vbDomToMarkdown(messageOf(answer)) : null;
  }

  window.__vb = {snapshot, resync, readBox, setBox, clickSend, clickStop,
    canSend: () => !!sendButton(), hasBox: () => !!findBox(),
    focusBox: () => { const b = findBox(); if (b) focusEnd(b); return !!b; },
    copyAnswer, answerMarkdown, toMarkdown: vbDomToMarkdown};
  schedule();
}
