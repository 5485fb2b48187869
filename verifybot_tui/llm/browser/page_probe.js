// For `verifybot doctor --site` and the repair: what each signal of a renderer
// matches, and redacted evidence of the page's markup. Last, the page's helpers
// put where the driver calls them (window.__vb) and the first push.
// A part of the page script (page_script.py puts the parts in order, in one
// block of one scope, in the top window only).

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
