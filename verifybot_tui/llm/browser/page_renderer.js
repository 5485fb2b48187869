// The first part of the page script the observer is made of: the site's texts and
// renderers from VB_CONFIG, the renderer (page layout) in use, and what its
// selectors find on the page: the turns, the last answer and its parts, the
// composer, and the buttons. Buttons are found by structure (the answer's action
// row, the composer's slot, aria-haspopup, type) or icon first; texts, in every
// UI language the profile knows, are one hint among several. Runs after
// `const VB_CONFIG = {...}` and dom_markdown.js.
// A part of the page script (page_script.py puts the parts in order, in one
// block of one scope, in the top window only).

const T = VB_CONFIG.texts;
const LANGS = VB_CONFIG.languages || ["en"];
const RENDERERS = VB_CONFIG.renderers;
const now = () => performance.timeOrigin + performance.now();
const DOC = Math.random().toString(36).slice(2) + now().toString(36);
const lower = (s) => (s || "").toLowerCase();

// The renderer (page layout) in use: the first whose signature is on the page.
// Checked on every snapshot, so a navigation to the other page switches it.
let R = RENDERERS[0];
let S = R.selectors;
let rendererName = "";
function pickRenderer() {
  for (const r of RENDERERS) {
    for (const s of r.signature) {
      let hit = null;
      try { hit = document.querySelector(s); } catch (e) { /* unparsable: skip */ }
      if (hit) {
        R = r; S = r.selectors; rendererName = r.name;
        return r;
      }
    }
  }
  rendererName = "";
  return null;
}
// The part of the page the conversation queries run in (app-shell: the visible
// route page; hidden earlier routes keep their own threads and composers).
function scopeRoot() {
  for (const s of R.scope || []) {
    let r;
    try { r = document.querySelectorAll(s); } catch (e) { continue; }
    for (const el of r) if (visible(el)) return el;
    if (r.length) return r[r.length - 1];
  }
  return document;
}

function all(list, root) {
  root = root || scopeRoot();
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
    try { r = (root || scopeRoot()).querySelectorAll(s); } catch (e) { continue; }
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
function matchesAny(el, list) {
  if (!el) return false;
  for (const s of list || []) {
    try { if (el.matches(s)) return true; } catch (e) { /* skip */ }
  }
  return false;
}
function closestAny(el, list) {
  for (const s of list || []) {
    try { const c = el.closest(s); if (c) return c; } catch (e) { /* skip */ }
  }
  return null;
}
function byDocOrder(els) {
  return els.sort((a, b) => a === b ? 0
    : (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
}
// A button whose label (aria-label, else its text) equals one of texts, in any
// language the profile knows: one hint among several, never the only one.
function labelled(root, texts, pred) {
  if (!root || !texts || !texts.length) return null;
  const wanted = texts.map(lower);
  for (const b of root.querySelectorAll("button, [role=button]")) {
    const label = lower((b.getAttribute("aria-label") || "").trim());
    const text = lower((b.textContent || "").trim());
    if ((wanted.includes(label) || wanted.includes(text)) && visible(b) &&
        (!pred || pred(b))) return b;
  }
  return null;
}
// The page's UI language is one the texts know (an unmarked page counts as known).
function knownLanguage() {
  const lang = lower(document.documentElement.lang || "").trim();
  return !lang || LANGS.includes(lang) || LANGS.includes(lang.split("-")[0]);
}
function plainText(el) {
  let s = "";
  const walk = (n) => {
    if (n.nodeType === Node.TEXT_NODE) { s += n.data; return; }
    if (n.nodeType !== Node.ELEMENT_NODE) return;
    if (n.tagName === "BUTTON" || n.tagName === "svg" || n.classList.contains("sr-only") ||
        n.getAttribute("data-markdown-copy") === "exclude") return;
    if (n.tagName === "BR") { s += "\n"; return; }
    for (const c of n.childNodes) walk(c);
    if (n.tagName === "P" || n.tagName === "DIV") s += "\n";
  };
  walk(el);
  return s;
}
function turnSelector() {
  return [...S.user_turn, ...S.assistant_turn].join(", ");
}
function inTurn(el) {
  try { return !!el.closest(turnSelector()); } catch (e) { return false; }
}

const ids = new WeakMap();
let nextId = 1;
function idOf(el) {
  if (!el) return 0;
  if (!ids.has(el)) ids.set(el, nextId++);
  return ids.get(el);
}
// A turn's identity: the site's own message id when it has one (the last of a
// unit's space-separated ids is the reply's), else the element itself. Never a
// count: the app-shell page keeps only about six turns mounted.
function keyOf(el) {
  if (!el) return "";
  for (const a of R.idAttrs || []) {
    const holder = el.hasAttribute(a) ? el : el.querySelector("[" + a + "]");
    const v = holder && (holder.getAttribute(a) || "").trim();
    if (v) return "m:" + v.split(/\s+/).pop();
  }
  return "e:" + idOf(el);
}

function turns() {
  const root = scopeRoot();
  const users = all(S.user_turn, root);
  const assts = all(S.assistant_turn, root);
  const lastUser = users.length ? users[users.length - 1] : null;
  let answer = assts.length ? assts[assts.length - 1] : null;
  if (answer && lastUser &&
      !(lastUser.compareDocumentPosition(answer) & Node.DOCUMENT_POSITION_FOLLOWING)) {
    answer = null;  // the last assistant turn is older than the last prompt
  }
  return {users, lastUser, answer};
}
// Excluded (thinking, tool rows...): the block or an element between it and the
// answer matches message_exclude. Never an ancestor of the answer: Claude's whole
// <body> carries .font-ui, which would exclude every block of every answer.
function excluded(el, answer) {
  for (let p = el; p && p !== answer; p = p.parentElement) {
    if (matchesAny(p, S.message_exclude)) return true;
  }
  return false;
}
// The answer's markdown blocks: the last one, or (join_messages) all, in order.
function messagesOf(answer) {
  const found = all(S.assistant_message, answer);
  const msgs = found.filter((m) => !excluded(m, answer));
  const top = msgs.filter((m) => !msgs.some((o) => o !== m && o.contains(m)));
  // Only excluded blocks (a thinking row before the text comes): no text yet.
  if (!top.length) return found.length ? [] : [answer];
  return R.joinMessages ? top : [top[top.length - 1]];
}
function answerText(answer) {
  vbDomToMarkdown.exclude = S.message_exclude;
  try {
    return messagesOf(answer).map((m) => vbDomToMarkdown(m)).filter((t) => t).join("\n\n");
  } finally {
    vbDomToMarkdown.exclude = null;
  }
}
function userTextOf(turn) {
  if (!turn) return {text: "", rich: false};
  const m = all(S.user_message, turn);
  const el = m.length ? m[m.length - 1] : turn;
  return {text: plainText(el), rich: has(el, S.user_markdown || [])};
}
function findBox() {
  return firstVisible(S.prompt_box) || all(S.prompt_box)[0] || null;
}
// Elements near an answer that belong to it: the answer itself, then the next
// sibling and the parent (Claude's action bar sits beside div[data-is-streaming]).
function near(answer) {
  const out = [answer];
  const row = actionRow(answer);
  if (row) out.push(row);
  if (answer.nextElementSibling) out.push(answer.nextElementSibling);
  if (answer.parentElement) out.push(answer.parentElement);
  return out;
}
// The assistant's action row (app-shell): the last action_row of the answer's
// exchange that is not inside the user unit, not a code block's header, and
// not before the answer. On the real page it is not inside the assistant unit
// but the next sibling of the unit's wrapper, inside the [data-turn-key].
function actionRow(answer) {
  if (!answer || !(S.action_row || []).length) return null;
  const root = closestAny(answer, S.exchange) || answer.parentElement || answer;
  const users = union(S.user_turn, root);
  const rows = union(S.action_row, root).filter((r) =>
    !users.some((u) => u.contains(r)) && !r.closest("[data-markdown-copy], pre") &&
    (answer.contains(r) ||
     !!(answer.compareDocumentPosition(r) & Node.DOCUMENT_POSITION_FOLLOWING)));
  return rows.length ? byDocOrder(rows)[rows.length - 1] : null;
}
// Finished: the finished markers in the action row when the page has one (never
// the user's row), else in the answer itself.
function isFinished(answer) {
  if (!answer) return false;
  if ((S.action_row || []).length) {
    const row = actionRow(answer);
    return !!row && has(row, S.finished_markers);
  }
  return has(answer, S.finished_markers);
}
// The assistant's own copy button: by selector (test id, icon, label), then by
// its label in any known language, then (app-shell) the row's first button:
// never the user's "Copy message", never a code block header's "Copy".
function copyButton(answer) {
  if (!answer) return null;
  const row = actionRow(answer);
  if (row) {
    return all(S.copy_button, row)[0] || labelled(row, T.copy) ||
      row.querySelector("button, [role=button]");
  }
  const inCode = (b) => !b.closest("pre, [data-markdown-copy], .cm-editor") &&
    !all(S.assistant_message, answer).some((m) => m.contains(b));
  return findNear(answer, S.copy_button) ||
    near(answer).map((r) => labelled(r, T.copy, inCode)).find((b) => b) || null;
}
function composerOf() {
  const box = findBox();
  return box ? box.closest("form, fieldset") : null;
}
function isStop(b) {
  for (const s of S.stop_button) {
    try { if (b.matches(s)) return true; } catch (e) { /* skip */ }
  }
  const label = lower((b.getAttribute("aria-label") || b.textContent || "").trim());
  return (T.stop || []).some((t) => lower(t) === label);
}
// The stop control: by selector (test id, icon, label), else a composer button
// labelled "stop" in any language the profile knows.
function stopButton() {
  return firstVisible(S.stop_button) || labelled(composerOf(), T.stop) || null;
}
// By selector: the answer, its row, its next sibling, its parent, then its
// grandparent (Claude's 2025-26 page: div[data-is-streaming] -> div.contents ->
// div.group, which also holds the action bar); never another turn's button.
function findNear(answer, list) {
  const roots = near(answer);
  const grand = answer.parentElement && answer.parentElement.parentElement;
  if (grand && grand !== document.body && !has(grand, S.user_turn)) roots.push(grand);
  for (const root of roots) {
    const hit = all(list, root).filter((b) => !b.closest || !excludedOwner(b, answer));
    if (hit.length) return hit[hit.length - 1];
  }
  return null;
}
// A copy button found through the parent must not be another turn's.
function excludedOwner(el, answer) {
  const owner = el.closest(turnSelector());
  return !!owner && owner !== answer && !owner.contains(answer) && !answer.contains(owner);
}
function buttonWithText(root, texts) {
  if (!texts || !texts.length) return null;
  const wanted = texts.map(lower);
  for (const b of root.querySelectorAll("button, [role=button]")) {
    const t = lower((b.textContent || "").trim());
    if (t && wanted.includes(t) && visible(b)) return b;
  }
  return null;
}
