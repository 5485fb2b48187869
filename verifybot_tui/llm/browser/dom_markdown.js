// The DOM of a chat answer back to markdown: the fallback when the site's own
// "Copy response" button gives nothing. Handles ChatGPT's two code-block
// layouts (a CodeMirror viewer with <br> line breaks and a plain-text language
// header; the older code.language-xxx with hljs spans), Claude's code groups,
// and drops the screen-reader headings ("You said:", "ChatGPT said:") that
// leak into innerText. The app-shell page's markup too: every code block is a
// [data-markdown-copy="code-block"] in one of three renderings (<pre><code>, a
// bare code.whitespace-pre!, a CodeMirror viewer with .cm-line rows), its
// header marked [data-markdown-copy="exclude"], inline code as
// span[data-markdown-copy="inline-code"]. Defines one function,
// vbDomToMarkdown(root); vbDomToMarkdown.lines (a Map from a .cm-content to
// its lines, read by scrolling) fills CodeMirror blocks whose lines have gaps;
// vbDomToMarkdown.exclude (selectors) leaves out what matches them below root.
function vbDomToMarkdown(root) {
  const SKIP_TAGS = new Set(["BUTTON", "SVG", "svg", "STYLE", "SCRIPT", "NOSCRIPT", "TEMPLATE",
    "TEXTAREA", "INPUT", "SELECT", "OPTION", "IFRAME", "CANVAS"]);
  const BLOCK_TAGS = new Set(["P", "DIV", "SECTION", "ARTICLE", "MAIN", "HEADER", "FOOTER",
    "ASIDE", "NAV", "H1", "H2", "H3", "H4", "H5", "H6", "UL", "OL", "LI", "PRE", "BLOCKQUOTE",
    "TABLE", "THEAD", "TBODY", "TR", "HR", "FIGURE", "DETAILS", "SUMMARY", "DL", "DT", "DD"]);
  const LANG_NAMES = {"c++": "cpp", "c#": "csharp", "f#": "fsharp", "objective-c": "objectivec",
    "plain text": "text", "plaintext": "text", "shell": "sh", "javascript": "javascript",
    "typescript": "typescript"};

  function skipped(el) {
    if (SKIP_TAGS.has(el.tagName)) return true;
    const cls = el.classList;
    if (cls && (cls.contains("sr-only") || cls.contains("visually-hidden") ||
        cls.contains("group/activity-header"))) return true;
    if (el.getAttribute && el.getAttribute("data-markdown-copy") === "exclude") return true;
    // The profile's message_exclude (thinking rows...), matched below the block only.
    for (const s of vbDomToMarkdown.exclude || []) {
      try { if (el.matches(s)) return true; } catch (e) { /* unparsable: skip */ }
    }
    return el.hasAttribute && el.hasAttribute("hidden");
  }
  function isBlock(el) {
    return BLOCK_TAGS.has(el.tagName);
  }
  function hasBlockChild(el) {
    for (const c of el.children) if (isBlock(c) && !skipped(c)) return true;
    return false;
  }
  function codeTicks(s) {
    let fence = "`";
    while (s.includes(fence)) fence += "`";
    return fence.length > 1 || s.startsWith("`") || s.endsWith("`")
      ? fence + " " + s + " " + fence : fence + s + fence;
  }
  // Maths as its TeX source: a [data-math-source] (ChatGPT 2026-09 renders KaTeX as
  // HTML only, the source in that attribute), else a MathML TeX annotation. Display
  // maths ($$...$$): inside .katex-display, a <math display="block">, or alone in its
  // block (a paragraph holding nothing else).
  const ZWSP = /[\u200b\u2060\ufeff]/g;
  function isMath(el) {
    return el.hasAttribute("data-math-source") || el.classList.contains("katex") ||
      el.tagName.toLowerCase() === "math";
  }
  function katex(el) {
    let tex = el.getAttribute("data-math-source");
    if (tex === null) {
      const ann = el.querySelector('annotation[encoding="application/x-tex"]');
      if (!ann) return null;
      tex = ann.textContent;
    }
    tex = tex.trim();
    return displayMath(el) ? "$$" + tex + "$$" : "$" + tex + "$";
  }
  function displayMath(el) {
    if (el.closest(".katex-display, [data-math-display=block], math[display=block]")) {
      return true;
    }
    const m = el.querySelector("math");
    if (m && m.getAttribute("display") === "block") return true;
    let block = el.parentElement;
    while (block && !isBlock(block)) block = block.parentElement;
    if (!block || block.closest("li, td, th")) return false;  // an item's maths is inline
    const rest = (block.textContent || "").replace(el.textContent || "", "");
    return !rest.replace(ZWSP, "").trim();
  }
  function inline(node) {
    if (node.nodeType === Node.TEXT_NODE) return node.data.replace(ZWSP, "");
    if (node.nodeType !== Node.ELEMENT_NODE || skipped(node)) return "";
    const tag = node.tagName;
    if (isMath(node)) {
      const m = katex(node);
      if (m !== null) return m;
    }
    if (tag === "BR") return "\n";
    if (tag === "CODE" || node.getAttribute("data-markdown-copy") === "inline-code") {
      return codeTicks(node.textContent);
    }
    if (tag === "IMG") return "![" + (node.getAttribute("alt") || "") + "](" +
      (node.getAttribute("src") || "") + ")";
    const inner = inlineChildren(node);
    if (tag === "STRONG" || tag === "B") return inner.trim() ? "**" + inner + "**" : inner;
    if (tag === "EM" || tag === "I") return inner.trim() ? "*" + inner + "*" : inner;
    if (tag === "DEL" || tag === "S") return "~~" + inner + "~~";
    if (tag === "A") {
      const href = node.getAttribute("href") || "";
      return href && !href.startsWith("javascript:") ? "[" + inner + "](" + href + ")" : inner;
    }
    return inner;
  }
  function inlineChildren(el) {
    let s = "";
    for (const c of el.childNodes) s += inline(c);
    return s;
  }
  // Text of a code container: text nodes as they are, <br> as a line break.
  function codeText(node, brBreaks) {
    let s = "";
    const walk = (n) => {
      if (n.nodeType === Node.TEXT_NODE) { s += n.data; return; }
      if (n.nodeType !== Node.ELEMENT_NODE) return;
      if (n.tagName === "BR") { if (brBreaks) s += "\n"; return; }
      if (n.tagName === "BUTTON" || n.classList.contains("sr-only")) return;
      for (const c of n.childNodes) walk(c);
    };
    walk(node);
    return s;
  }
  function endsWithBr(node) {
    let last = null;
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.nodeType === Node.TEXT_NODE ? n.data.length > 0 : n.tagName === "BR") last = n;
    }
    return !!last && last.nodeType === Node.ELEMENT_NODE;
  }
  // The language label: the first text in the block before the code itself
  // (the header), buttons and icons left out.
  function headerLang(container, code) {
    let found = "";
    const walk = (n) => {
      if (found || n === code) return true;
      if (n.nodeType === Node.TEXT_NODE) {
        const t = n.data.trim();
        if (t) found = t;
        return false;
      }
      if (n.nodeType !== Node.ELEMENT_NODE || skipped(n)) return false;
      for (const c of n.childNodes) if (walk(c)) return true;
      return false;
    };
    walk(container);
    return found;
  }
  function normLang(s) {
    s = (s || "").trim().toLowerCase();
    if (s.length > 30) return "";
    return LANG_NAMES[s] || s.replace(/\s+/g, "-");
  }
  function codeBlock(pre, langHint) {
    let code;
    let lang = langHint || "";
    const cm = pre.querySelector(".cm-content");
    if (cm) {
      const lines = cm.querySelectorAll(":scope > .cm-line");
      const read = vbDomToMarkdown.lines && vbDomToMarkdown.lines.get(cm);
      code = read ? read.join("\n") : lines.length
        ? Array.from(lines, (l) => codeText(l, false)).join("\n") : codeText(cm, true);
      if (!lang) lang = cm.getAttribute("data-language") || "";
      // A last <br> ends the last line; it does not start an empty one (HTML shows none).
      if (!lines.length && endsWithBr(cm) && code.endsWith("\n")) code = code.slice(0, -1);
      if (!lang) lang = headerLang(pre, cm.closest(".cm-editor") || cm);
    } else {
      const c = pre.querySelector("code");
      code = codeText(c || pre, true);
      // react-markdown puts a line break after the last line of a code element.
      if (code.endsWith("\n")) code = code.slice(0, -1);
      const m = c && /(?:^|\s)language-([\w+#.-]+)/.exec(c.className);
      if (!lang) lang = m ? m[1] : (c ? headerLang(pre, c) : "");
    }
    lang = normLang(lang);
    let fence = "```";
    while (code.includes(fence)) fence += "`";
    return fence + lang + "\n" + code + "\n" + fence;
  }
  function listBlock(el, ordered) {
    const start = parseInt(el.getAttribute("start") || "1", 10) || 1;
    const items = Array.from(el.children).filter((c) => c.tagName === "LI");
    // Loose only when an item holds two paragraphs (or a paragraph and another block
    // that is not a nested list): ChatGPT (2026-09) wraps every item of a tight list
    // in one <p>, where the message's markdown has no blank line between items.
    const loose = items.some((li) => {
      const kids = Array.from(li.children).filter((c) => isBlock(c) && !skipped(c));
      return kids.filter((c) => c.tagName === "P").length > 1 ||
        (kids.some((c) => c.tagName === "P") &&
         kids.some((c) => c.tagName !== "P" && c.tagName !== "UL" && c.tagName !== "OL"));
    });
    const out = items.map((li, i) => {
      const marker = ordered ? (start + i) + ". " : "- ";
      const pad = " ".repeat(marker.length);
      const body = blocks(li).join(loose ? "\n\n" : "\n");
      return marker + body.split("\n").map((l, j) => (j === 0 || !l ? l : pad + l)).join("\n");
    });
    return out.join(loose ? "\n\n" : "\n");
  }
  function tableBlock(el) {
    const rows = Array.from(el.querySelectorAll("tr"));
    if (!rows.length) return "";
    const cells = (tr) => Array.from(tr.children, (c) =>
      inlineChildren(c).trim().replace(/\n/g, " ").replace(/\|/g, "\\|"));
    const head = cells(rows[0]);
    const lines = ["| " + head.join(" | ") + " |", "|" + head.map(() => " --- |").join("")];
    for (const tr of rows.slice(1)) lines.push("| " + cells(tr).join(" | ") + " |");
    return lines.join("\n");
  }
  // The app-shell page: the language is on the viewer, in the code's class, or in
  // the (excluded) header; the code in one of three renderings.
  function copyBlock(el) {
    const head = el.querySelector('[data-markdown-copy="exclude"]');
    const label = head ? (head.textContent || "").trim().split("\n")[0].trim() : "";
    if (el.querySelector(".cm-content") || el.querySelector("pre")) {
      return codeBlock(el, (el.querySelector(".cm-content") || {getAttribute: () => ""})
        .getAttribute("data-language") || langOfCode(el.querySelector("code")) || label);
    }
    const c = el.querySelector("code") || el;
    let code = codeText(c, true);
    if (code.endsWith("\n")) code = code.slice(0, -1);
    const lang = normLang(langOfCode(c) || label);
    let fence = "```";
    while (code.includes(fence)) fence += "`";
    return fence + lang + "\n" + code + "\n" + fence;
  }
  function langOfCode(c) {
    const m = c && /(?:^|\s)language-([\w+#.-]+)/.exec(c.className);
    return m ? m[1] : "";
  }
  // A code block under a header whose only text is its language label (Claude:
  // div > [copy button] + div "javascript" + div > pre): one fenced block, the
  // label its language, never a paragraph of its own before the fence.
  function labelledCode(el) {
    if (el.tagName !== "DIV") return null;
    const pres = el.querySelectorAll("pre");
    if (pres.length !== 1) return null;
    let outside = "";
    let prose = false;  // a paragraph, heading or list beside the code: not a header
    const walk = (n) => {
      if (n === pres[0]) return;
      if (n.nodeType === Node.TEXT_NODE) { outside += n.data; return; }
      if (n.nodeType !== Node.ELEMENT_NODE || skipped(n)) return;
      if (/^(P|H[1-6]|UL|OL|LI|TABLE|BLOCKQUOTE)$/.test(n.tagName)) { prose = true; return; }
      for (const c of n.childNodes) walk(c);
    };
    walk(el);
    const label = outside.trim();
    if (prose || !label || !/^[\w+#.\- ]{1,30}$/.test(label)) return null;
    return codeBlock(pres[0], label);
  }
  function blockOf(el) {
    const tag = el.tagName;
    if (el.getAttribute("data-markdown-copy") === "code-block") return [copyBlock(el)];
    const labelled = labelledCode(el);
    if (labelled) return [labelled];
    const group = el.getAttribute("role") === "group" &&
      /code$/i.test(el.getAttribute("aria-label") || "") && el.querySelector("pre");
    if (group) {
      const label = el.getAttribute("aria-label").replace(/\s*code$/i, "");
      return [codeBlock(el.querySelector("pre"), label)];
    }
    if (/^H[1-6]$/.test(tag)) {
      return ["#".repeat(+tag[1]) + " " + inlineChildren(el).trim()];
    }
    if (tag === "PRE") return [codeBlock(el, "")];
    if (tag === "UL" || tag === "OL") return [listBlock(el, tag === "OL")];
    if (tag === "HR") return ["---"];
    if (tag === "TABLE") return [tableBlock(el)];
    if (tag === "BLOCKQUOTE") {
      return [blocks(el).join("\n\n").split("\n").map((l) => (l ? "> " + l : ">")).join("\n")];
    }
    if (tag === "P" && !hasBlockChild(el)) return [inlineChildren(el).trim()];
    return blocks(el);
  }
  function blocks(el) {
    const out = [];
    let buf = "";
    const flush = () => {
      const t = buf.trim();
      if (t) out.push(t);
      buf = "";
    };
    for (const c of el.childNodes) {
      if (c.nodeType === Node.ELEMENT_NODE) {
        if (skipped(c)) continue;
        if (isMath(c) || !(isBlock(c) || hasBlockChild(c) ||
            c.getAttribute("data-markdown-copy") === "code-block")) {
          buf += inline(c);
          continue;
        }
        flush();
        for (const b of blockOf(c)) if (b) out.push(b);
      } else if (c.nodeType === Node.TEXT_NODE) {
        buf += c.data.replace(ZWSP, "");
      }
    }
    flush();
    return out;
  }
  if (!root) return "";
  if (root.tagName === "PRE" || (root.getAttribute && root.getAttribute("role") === "group")) {
    return blockOf(root).join("\n\n");
  }
  return blocks(root).join("\n\n");
}
