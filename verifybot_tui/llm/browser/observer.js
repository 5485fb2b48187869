// Watches a chat page and pushes what the driver needs to Python on every
// change, so the driver waits on events instead of polling: the last answer's
// text (as markdown, delta-encoded), whether the page is busy or shows the
// finished-action buttons, the user turns, and facts that tell page states
// apart (logged out, bot check, limit, error, a message it cannot read). Also
// holds the small helpers the driver calls (prompt box read-back and injection,
// copy capture, closing dialogs). Buttons are found by structure (the answer's
// action row, the composer's slot, aria-haspopup, type) or icon first; texts, in
// every UI language the profile knows, are one hint among several.
// Runs inside an IIFE after `const VB_CONFIG = {...}` and dom_markdown.js.
if (window.top === window && !window.__vb) {
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
  // What the model is doing: "Thinking" (busy) or "Thought for 12s" (done).
  function activity(answer, stopNow) {
    const root = answer ? answer.closest("[data-turn-key]") || answer : null;
    if (!root) return {text: "", thinking: false};
    let text = "";
    for (const h of union(S.activity_header || [], root)) {
      if (visible(h)) text = (h.textContent || "").trim().slice(0, 80);
    }
    // Structure first: a past-tense header ("Thought for 12s", "12초 동안 생각함")
    // carries a duration; a present one has none and comes with the stop control
    // or a busy marker; its text in a known language is one more hint.
    let thinking = !!text && !/\d/.test(text) &&
      (stopNow || has(root, S.busy_markers || []) || !!matchText(text, T.thinking));
    const now = buttonWithText(root, T.answer_now) || buttonWithText(root, T.thinking);
    if (!thinking && now) {
      thinking = true;
      text = text || (now.textContent || "").trim();
    }
    return {text, thinking};
  }
  function continueButton(answer) {
    const root = scopeRoot();
    const b = (answer && findNear(answer, S.continue_button || [])) ||
      firstVisible(S.continue_button || [], root);
    if (b && visible(b)) return b;
    if (!answer || !T.continue || !T.continue.length) return null;
    // By its text ("Continue generating"; Claude's "Continue" after its tool-use
    // limit), in or after the last answer, never before it.
    const wanted = T.continue.map(lower);
    for (const c of root.querySelectorAll("button, [role=button]")) {
      const t = lower((c.textContent || "").trim());
      if (!t || !wanted.includes(t) || !visible(c)) continue;
      if (answer.contains(c) ||
          (answer.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING)) return c;
    }
    return null;
  }
  function turnError(answer) {
    if (!answer) return "";
    const root = answer.closest("[data-turn-key]") || answer;
    for (const el of union(S.turn_error || [], root)) {
      const t = (el.textContent || "").trim();
      if (t && visible(el)) return t.slice(0, 300);
    }
    return "";
  }

  // A failed answer's Retry button (an error state, not an answer): by selector
  // (regenerate_button), else a button labelled "Retry" in a known language, in the
  // answer's exchange but not in its finished action row nor in a code block. With the
  // words around it, the site's own description of the error.
  function retryOf(answer) {
    if (!answer || isFinished(answer)) return null;
    const root = closestAny(answer, S.exchange) || answer.closest(turnSelector()) || answer;
    const row = actionRow(answer);
    const ok = (b) => visible(b) && !(row && row.contains(b)) &&
      !b.closest("pre, [data-markdown-copy], .cm-editor") &&
      (root.contains(b) || answer.contains(b));
    let b = union(S.regenerate_button || [], root).find(ok) || null;
    if (!b) b = labelled(root, T.regenerate, ok);
    if (!b) return null;
    const label = ((b.getAttribute("aria-label") || b.textContent || "").trim() || "Retry")
      .slice(0, 40);
    let text = "";
    for (let p = b.parentElement; p && !text && p !== root.parentElement; p = p.parentElement) {
      text = (p.textContent || "").replace(b.textContent || "", "").trim();
    }
    return {label, text: (text || label).slice(0, 300), button: b};
  }
  // The model that answered, as the page names it: the answer's own metadata (an
  // attribute of the renderer's model_attributes on the answer or inside it), else the
  // text of a model_label element (a picker that names the model, not an effort level),
  // without its parts in model_label_exclude (claude's grey "Extended" / "Max" beside the name).
  function answerModel(answer) {
    if (!answer) return "";
    for (const a of R.modelAttrs || []) {
      const holders = [answer, ...answer.querySelectorAll("[" + a + "]")]
        .filter((e) => e.hasAttribute(a));
      const v = holders.length ? (holders[holders.length - 1].getAttribute(a) || "").trim() : "";
      if (v) return v.slice(0, 80);
    }
    const label = firstVisible(S.model_label || []);
    if (!label) return "";
    const name = label.cloneNode(true);
    for (const e of union(S.model_label_exclude || [], name)) e.remove();
    return (name.textContent || "").trim().replace(/\s+/g, " ").slice(0, 80);
  }

  // The effort or mode word a picker shows beside the model's name ("Moyen", "Extended"):
  // recorded apart from the model, never taken for part of its name.
  function firstText(list) {
    const e = firstVisible(list || []);
    return e ? (e.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40) : "";
  }
  function matchText(text, list) {
    const t = lower(text);
    return (list || []).find((x) => t.includes(lower(x))) || "";
  }
  function facts(answer) {
    const f = {path: location.pathname, host: location.host, title: document.title,
      renderer: rendererName, promptBox: !!rendererName && !!firstVisible(S.prompt_box),
      login: "", botCheck: "", picker: "", pickerInDialog: false, limit: "", error: "",
      lang: document.documentElement.lang || "", langKnown: knownLanguage(), unreadable: ""};
    const title = matchText(document.title, T.bot_check_titles);
    const bot = union(S.bot_check_markers, document);
    if (title || bot.length) f.botCheck = title || "challenge";
    const lm = firstVisible(S.login_markers, document);
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
    const pm = firstVisible(S.account_picker_markers, document);
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
    alertFacts(f);
    if (!f.error) {
      for (const el of union(S.error_toast)) {
        const turn = inTurn(el) ? el.closest(turnSelector()) : null;
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

  // Limit and error texts in alerts, status lines, dialogs and toasts. What only
  // text could tell, on a page whose language the texts do not know, or a dialog
  // with no button to close it, is "a message VerifyBot cannot read": never a guess.
  function alertFacts(f) {
    for (const el of union(S.alert_containers)) {
      if (inTurn(el) || !visible(el)) continue;
      const text = (el.textContent || "").trim().slice(0, 400);
      if (!text || matchText(text, T.not_limit)) continue;
      if (!f.limit && matchText(text, T.limit)) f.limit = text;
      else if (!f.error && matchText(text, T.error)) f.error = text;
      else if (!f.unreadable && !f.langKnown && !closable(el) && !liveRegion(el)) {
        f.unreadable = text;
      }
    }
    for (const d of openDialogs()) {
      const text = (d.textContent || "").trim().slice(0, 400);
      if (!f.unreadable && !keepDialog(d) && !closeButtonOf(d) && !matchText(text, T.limit) &&
          !matchText(text, T.error)) f.unreadable = text || "a dialog";
    }
  }

  // A status line or live region announces what happens (often the answer itself,
  // for screen readers): not a message that asks anything.
  function liveRegion(el) {
    return el.getAttribute("role") === "status" || el.hasAttribute("aria-live");
  }

  // --- dialogs over the page --------------------------------------------------
  function openDialogs() {
    const sel = (S.dialog || []).join(", ");
    return union(S.dialog || [], document).filter((d, i, a) => a.indexOf(d) === i &&
      visible(d) && !(d.parentElement && sel && d.parentElement.closest(sel)));
  }
  // A dialog VerifyBot must not answer: a login or an account picker (page states).
  function keepDialog(d) {
    if (union(S.login_markers, d).length || union(S.account_picker_markers, d).length) {
      return true;
    }
    if (labelled(d, T.login_buttons)) return true;
    return !!matchText(d.textContent, T.account_picker);
  }
  // Its own close button: by selector, by label in a known language, else its
  // icon-only button (the "x" in the corner).
  function closeButtonOf(d) {
    for (const s of S.dialog_close || []) {
      let r;
      try { r = d.querySelectorAll(s); } catch (e) { continue; }
      for (const b of r) if (visible(b)) return b;
    }
    const b = labelled(d, T.dialog_close);
    if (b) return b;
    for (const c of d.querySelectorAll("button")) {
      if (!(c.textContent || "").trim() && c.querySelector("svg") && visible(c)) return c;
    }
    return null;
  }
  function closable(el) {
    const d = el.closest((S.dialog || []).join(", ") || "dialog[open]");
    return !!d && !keepDialog(d) && !!closeButtonOf(d);
  }
  // Close every dialog covering the page by its own button; a login, an account
  // picker, a limit or error message stays (a page state). What was closed, for
  // the transcript.
  function closeDialogs() {
    pickRenderer();
    const closed = [];
    for (const d of openDialogs()) {
      const text = d.textContent || "";
      if (keepDialog(d) || matchText(text, T.limit) || matchText(text, T.error)) continue;
      const b = closeButtonOf(d);
      if (!b) continue;
      const head = d.querySelector("h1, h2, h3, h4, [id*=title]");
      const title = ((head && head.textContent) || d.getAttribute("aria-label") || text)
        .trim().replace(/\s+/g, " ").slice(0, 80);
      const label = (b.getAttribute("aria-label") || b.textContent || "").trim() ||
        "its close icon";
      b.click();
      closed.push({title, button: label.slice(0, 40)});
    }
    return closed;
  }

  function snapshot() {
    pickRenderer();
    const {users, lastUser, answer} = turns();
    const stop = !!stopButton();
    const act = activity(answer, stop);
    const user = userTextOf(lastUser);
    const finished = isFinished(answer);
    const retry = stop ? null : retryOf(answer);
    return {
      url: location.href,
      renderer: rendererName,
      users: users.length,
      userKey: keyOf(lastUser),
      userText: user.text,
      userRich: user.rich,
      answerId: idOf(answer),
      answerKey: keyOf(answer),
      text: answer ? answerText(answer) : "",
      finished,
      busy: stop || act.thinking || (!!answer && has(answer, S.busy_markers)) ||
        (!!answer && matchesAny(closestAny(answer, S.exchange), S.busy_markers)),
      stop,
      activity: act.text,
      thinking: act.thinking,
      // Only a finished answer can be continued (and the button scan is not free).
      canContinue: finished && !stop && !!continueButton(answer),
      turnError: turnError(answer) || (retry ? retry.text : ""),
      artifacts: answer ? near(answer).slice(0, 1).concat([answer.parentElement])
        .filter((x) => x).some((r) => union(S.artifact_markers || [], r).length) : false,
      boxLen: boxLength(),
      model: answerModel(answer),
      effort: answer ? firstText(S.model_effort) : "",
      retry: retry ? retry.label : "",
      facts: facts(answer),
    };
  }
  function boxLength() {
    const box = findBox();
    if (!box) return 0;
    const t = box.tagName === "TEXTAREA" || box.tagName === "INPUT" ? box.value
      : box.textContent;
    return (t || "").trim().length;
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
    const key = JSON.stringify([s.url, s.renderer, s.users, s.userKey, s.userRich, s.answerId,
      s.answerKey, s.finished, s.busy, s.stop, s.activity, s.thinking, s.canContinue,
      s.turnError, s.artifacts, s.boxLen, s.model, s.retry, s.facts]);
    if (sameAnswer && s.text === sentText && s.userText === sentUserText && key === sentKey) {
      return null;
    }
    const keep = sameAnswer ? commonPrefix(sentText, s.text) : 0;
    const st = {doc: DOC, seq: ++seq, t: now(), textT, url: s.url, renderer: s.renderer,
      users: s.users, userKey: s.userKey, userRich: s.userRich, answerId: s.answerId,
      answerKey: s.answerKey, keep, add: s.text.slice(keep), finished: s.finished,
      busy: s.busy, stop: s.stop, activity: s.activity, thinking: s.thinking,
      canContinue: s.canContinue, turnError: s.turnError, artifacts: s.artifacts,
      boxLen: s.boxLen, model: s.model, effort: s.effort, retry: s.retry, facts: s.facts};
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
    pickRenderer();
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
    pickRenderer();
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
    pickRenderer();
    const root = scopeRoot();
    for (const s of S.send_button) {
      let r;
      try { r = root.querySelectorAll(s); } catch (e) { continue; }
      for (const b of r) {
        // The site has kept the send button's test id on its Stop form.
        if (visible(b) && !b.disabled && b.getAttribute("aria-disabled") !== "true" &&
            !isStop(b)) return b;
      }
    }
    // Structure: the composer's own submit button.
    const form = composerOf();
    for (const b of form ? form.querySelectorAll('button[type="submit"]') : []) {
      if (visible(b) && !b.disabled && !isStop(b)) return b;
    }
    return null;
  }
  function clickStop() {
    pickRenderer();
    const b = stopButton();
    if (b) b.click();
    return !!b;
  }
  function clickSend() {
    const b = sendButton();
    if (!b) return false;
    b.click();
    return true;
  }
  function clickContinue() {
    pickRenderer();
    const b = continueButton(turns().answer);
    if (b) b.click();
    return !!b;
  }
  // An in-turn error's retry button; else the action row's regenerate (its label
  // in a known language, else the row's first menu button), whose menu's first
  // item regenerates.
  async function clickRegenerate() {
    pickRenderer();
    const {answer} = turns();
    const failed = retryOf(answer);
    const b = (failed && failed.button) ||
      (answer && findNear(answer, S.regenerate_button || [])) ||
      firstVisible(S.regenerate_button || []);
    if (b) {
      b.click();
      return true;
    }
    const row = actionRow(answer);
    const r = row && (labelled(row, T.regenerate) ||
      row.querySelector('button[aria-haspopup="menu"]'));
    if (!r) return false;
    r.click();
    if (r.getAttribute("aria-haspopup") !== "menu") return true;
    for (let i = 0; i < 50; i++) {
      const item = firstVisible(['[role="menu"] [role="menuitem"]'], document);
      if (item) {
        item.click();
        return true;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
    return false;
  }
  // Click the answer's copy button with the page's clipboard replaced, so the
  // site hands us its own markdown without touching the OS clipboard.
  async function copyAnswer(timeoutMs) {
    pickRenderer();
    const {answer} = turns();
    if (!answer) return null;
    const btn = copyButton(answer);
    return btn ? captureClick(btn, timeoutMs) : null;
  }
  // What clicking this element puts on the clipboard (the page's clipboard replaced
  // for the click), or null: the copy capture, and `doctor --repair`'s proof that a
  // proposed copy button copies (a rating button puts nothing there).
  async function captureClick(btn, timeoutMs) {
    const cb = navigator.clipboard;
    if (!btn || !cb) return null;
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

  // --- CodeMirror blocks with gaps -----------------------------------------
  // CodeMirror 6 replaces lines outside its viewport with .cm-gap spacers. The
  // lines are read by scrolling the block through its scroll container, each
  // line placed by its position (all lines of a code viewer are one height);
  // a block that cannot be read whole is reported, never shortened.
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  function scroller(el) {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const st = getComputedStyle(p);
      if (/(auto|scroll)/.test(st.overflowY) && p.scrollHeight > p.clientHeight + 1) return p;
    }
    return document.scrollingElement;
  }
  async function readCodeMirror(content, deadline) {
    const st = getComputedStyle(content);
    const padTop = parseFloat(st.paddingTop) || 0;
    const padBottom = parseFloat(st.paddingBottom) || 0;
    const got = new Map();
    let h = 0;
    const top = () => content.getBoundingClientRect().top + padTop;
    const collect = () => {
      for (const line of content.querySelectorAll(":scope > .cm-line")) {
        const r = line.getBoundingClientRect();
        if (!h) h = r.height;
        if (!h || Math.abs(r.height - h) > 1) return false;  // wrapped lines: cannot place
        got.set(Math.round((r.top - top()) / h), line.textContent);
      }
      return true;
    };
    const sc = scroller(content);
    const start = sc.scrollTop;
    try {
      for (;;) {
        if (!collect() || !h) return null;
        const total = Math.round((content.getBoundingClientRect().height - padTop - padBottom) / h);
        let missing = -1;
        for (let i = 0; i < total; i++) if (!got.has(i)) { missing = i; break; }
        if (missing < 0) {
          return Array.from({length: total}, (_, i) => got.get(i));
        }
        if (now() > deadline) return null;
        const view = sc === document.scrollingElement ? 0 : sc.getBoundingClientRect().top;
        const before = sc.scrollTop;
        sc.scrollTop += top() + missing * h - view;
        await frame(); await frame();
        if (sc.scrollTop === before) {
          await new Promise((r) => setTimeout(r, 50));
          collect();
          if (!got.has(missing)) return null;  // scrolling shows nothing new
        }
      }
    } finally {
      sc.scrollTop = start;
    }
  }
  // The answer as markdown from the DOM (the copy button's fallback), with every
  // gapped CodeMirror block scrolled through. {markdown, incomplete: [...]}.
  async function answerMarkdown(timeoutMs) {
    pickRenderer();
    const {answer} = turns();
    if (!answer) return null;
    const deadline = now() + (timeoutMs || 15000);
    const lines = new Map();
    const incomplete = [];
    const msgs = messagesOf(answer);
    let n = 0;
    for (const m of msgs) {
      for (const content of m.querySelectorAll(".cm-content")) {
        n++;
        if (!content.querySelector(":scope > .cm-gap")) continue;
        const got = await readCodeMirror(content, deadline);
        if (got) lines.set(content, got);
        else {
          incomplete.push({block: n, language: content.getAttribute("data-language") || "",
            shown: content.querySelectorAll(":scope > .cm-line").length});
        }
      }
    }
    vbDomToMarkdown.lines = lines;
    vbDomToMarkdown.exclude = S.message_exclude;
    try {
      const markdown = msgs.map((m) => vbDomToMarkdown(m)).filter((t) => t).join("\n\n");
      return {markdown, incomplete};
    } finally {
      vbDomToMarkdown.lines = null;
      vbDomToMarkdown.exclude = null;
    }
  }
  // Artifact code (Claude): the conversation JSON, fetched by the page itself.
  async function fetchJson(url) {
    const resp = await fetch(url, {credentials: "include"});
    if (!resp.ok) return {status: resp.status};
    return {status: resp.status, data: await resp.json()};
  }

  // --- for `verifybot doctor --site`: what each signal of a renderer matches --
  function probe() {
    const r = pickRenderer();
    const {users, lastUser, answer} = turns();
    const root = scopeRoot();
    const count = (list, where) => {
      for (const s of list || []) {
        try {
          const n = (where || root).querySelectorAll(s).length;
          if (n) return {selector: s, count: n};
        } catch (e) { /* skip */ }
      }
      return {selector: "", count: 0};
    };
    const sig = {};
    for (const key of Object.keys(S)) {
      const where = ["finished_markers", "copy_button", "assistant_message", "activity_header",
        "busy_markers", "turn_error", "continue_button", "regenerate_button"].includes(key) &&
        answer ? answer.closest("[data-turn-key]") || answer.parentElement || answer : null;
      const hit = count(S[key], where);
      if (!hit.count && where) Object.assign(hit, count(S[key]));
      sig[key] = hit;
    }
    // The signals the driver decides by are found the way the driver finds them
    // (the action row, structure, labels in any known language), not by selector alone.
    const found = (el, how) => el ? {selector: how, count: 1} : {selector: "", count: 0};
    const row = actionRow(answer);
    if ((S.action_row || []).length) sig.action_row = found(row, S.action_row.join(", "));
    if (answer) {
      const copy = copyButton(answer);
      sig.copy_button = found(copy, copy ? describeButton(copy, row) : "");
      const fin = isFinished(answer);
      // A marker on the answer element itself counts (Claude: data-is-streaming="false").
      const own = (S.finished_markers || []).find((s) => matchesAny(row || answer, [s]));
      const inside = count(S.finished_markers, row || answer);
      sig.finished_markers = !fin ? {selector: "", count: 0}
        : inside.count ? inside : {selector: own || "", count: own ? 1 : 0};
    }
    const stop = stopButton();
    return {renderer: r ? r.name : "", scoped: root !== document, signals: sig,
      users: users.length, answer: !!answer, lastUser: !!lastUser,
      boxText: readBox() || "", busy: !!stop, finished: isFinished(answer),
      copy: !!copyButton(answer), lang: document.documentElement.lang || "",
      langKnown: knownLanguage()};
  }
  function describeButton(b, row) {
    let how = b.tagName.toLowerCase();
    for (const a of ["data-testid", "type", "aria-haspopup", "aria-label"]) {
      if (b.hasAttribute(a)) how += "[" + a + '="' + b.getAttribute(a).slice(0, 40) + '"]';
    }
    return (row && row.contains(b) ? "action row > " : "") + how;
  }
  // Redacted evidence: enough to write a new selector, no conversation text.
  function evidence() {
    pickRenderer();
    const hist = {};
    for (const el of document.querySelectorAll("*")) {
      for (const a of el.attributes) {
        if (!a.name.startsWith("data-")) continue;
        const v = a.value.length <= 40 && !/\s/.test(a.value) ? a.value : "…";
        const k = a.name + (/^[\w:.\/-]*$/.test(v) && !/[0-9a-f]{8}-/.test(v) ? "=" + v : "");
        hist[k] = (hist[k] || 0) + 1;
      }
    }
    const describe = (el) => {
      if (!el || el.nodeType !== Node.ELEMENT_NODE) return "";
      let s = el.tagName.toLowerCase();
      for (const a of el.attributes) {
        if (a.name === "style") continue;
        const v = a.name === "class" || a.name.startsWith("data-") || a.name.startsWith("aria-") ||
          ["type", "role", "id", "name", "contenteditable"].includes(a.name) ? a.value : "…";
        s += "[" + a.name + '="' + v.slice(0, 80) + '"]';
      }
      return s;
    };
    const redact = (el) => {
      const c = el.cloneNode(true);
      const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        t.data = t.data.replace(/[^\s]/g, "x");
      }
      return c.outerHTML.slice(0, 20000);
    };
    const forms = Array.from(document.querySelectorAll("form"));
    const buttons = [];
    for (const f of forms) {
      for (const b of f.querySelectorAll("button")) buttons.push(describe(b));
    }
    const turnsAll = document.querySelectorAll(
      "[data-turn-key], [data-message-author-role], [data-is-streaming], article, section");
    const last = turnsAll.length ? turnsAll[turnsAll.length - 1] : null;
    const chain = [];
    for (let p = last; p && p !== document.documentElement; p = p.parentElement) {
      chain.push(describe(p));
    }
    return {url: location.origin + location.pathname.replace(/[0-9a-f-]{36}/g, "<id>"),
      title: document.title, renderer: rendererName, dataAttributes: hist,
      composerButtons: buttons, lastTurnAncestors: chain,
      lastTurnMarkup: last ? redact(last) : ""};
  }

  window.__vb = {snapshot, resync, readBox, setBox, clickSend, clickStop, clickContinue,
    clickRegenerate, canSend: () => !!sendButton(), hasBox: () => { pickRenderer(); return !!findBox(); },
    focusBox: () => { pickRenderer(); const b = findBox(); if (b) focusEnd(b); return !!b; },
    copyAnswer, captureClick, answerMarkdown, fetchJson, probe, evidence, closeDialogs,
    toMarkdown: vbDomToMarkdown};
  schedule();
}
