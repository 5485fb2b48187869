// The answer as markdown from the DOM, the copy button's fallback: dom_markdown.js
// with every gapped CodeMirror block scrolled through; and Claude's artifacts
// through the conversation JSON the page itself fetches.
// A part of the page script (page_script.py puts the parts in order, in one
// block of one scope, in the top window only).

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
