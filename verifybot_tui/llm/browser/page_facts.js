// What the page shows beside the answer's text: what the model is doing, the
// continue and retry buttons, an in-turn error, the model that answered, and the
// facts that tell page states apart (logged out, bot check, limit, error, a
// message VerifyBot cannot read); the dialogs over the page, closed by their own
// buttons.
// A part of the page script (page_script.py puts the parts in order, in one
// block of one scope, in the top window only).

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

