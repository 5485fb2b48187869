// The test site's markdown renderer: the subset the scripted answers use
// (headings, paragraphs, lists, fenced code, inline code/bold/italic/links),
// rendered the way the real sites render it, in three code-block layouts:
// "cm" (ChatGPT 2025-26: CodeMirror viewer, <br> lines, a language header),
// "hljs" (ChatGPT before 2025: code.language-xxx with highlight spans), and
// "claude" (div[role=group][aria-label="<lang> code"] > pre > code), and the
// app-shell page's three ("appshell-pre", "appshell-bare", "appshell-cm": a
// CodeMirror viewer whose lines app.js mounts, with gaps, from
// window.__cmCodes), where inline code is a span[data-markdown-copy].
(function () {
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
  const KEYWORDS = /\b(def|return|import|from|for|in|if|else|print|int|void|include|echo)\b/g;
  const DISPLAY = {python: "Python", bash: "Bash", c: "C", cpp: "C++", javascript: "JavaScript",
    sh: "Shell", text: "Plain text"};

  function fmt(s) {
    return s.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/\*([^*\s][^*]*)\*/g, "<em>$1</em>")
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '<a href="$2">$1</a>');
  }
  let appshell = false;
  function inline(t) {
    return t.split(/(`[^`\n]+`)/).map((part, k) =>
      k % 2 ? (appshell ? '<span data-markdown-copy="inline-code" class="font-mono">' +
        esc(part.slice(1, -1)) + "</span>" : "<code>" + esc(part.slice(1, -1)) + "</code>")
        : fmt(esc(part))).join("");
  }
  function highlight(line, cls) {
    return esc(line).replace(KEYWORDS, '<span class="' + cls + '">$1</span>');
  }
  function codeBlock(code, lang, layout) {
    if (layout.startsWith("appshell-")) {
      const label = lang ? (DISPLAY[lang] || lang) : "";
      const head = '<div data-markdown-copy="exclude" class="code-header">' + esc(label) +
        '<button aria-label="Copy">Copy</button></div>';
      let inner;
      if (layout === "appshell-bare") {
        inner = '<code class="whitespace-pre! language-' + esc(lang) + '">' + esc(code) +
          "\n</code>";  // react-markdown ends a code element with a line break
      } else if (layout === "appshell-cm") {
        window.__cmCodes = window.__cmCodes || [];
        window.__cmCodes.push(code);
        inner = '<div class="cm-editor"><div class="cm-scroller"><div class="cm-content" ' +
          'data-language="' + esc(lang) + '" data-cm="' + (window.__cmCodes.length - 1) +
          '"></div></div></div>';
      } else {
        inner = "<pre><code" + (lang ? ' class="language-' + esc(lang) + '"' : "") + ">" +
          esc(code) + "\n</code></pre>";
      }
      return '<div data-markdown-copy="code-block" class="code-block">' + head + inner +
        "</div>";
    }
    if (layout === "claude") {
      const body = code.split("\n").map((l) => highlight(l, "token keyword")).join("\n") + "\n";
      if (!lang) return "<pre><code>" + body + "</code></pre>";
      // The real page (2025-26): the copy button, then the header's label as text
      // ("javascript"), then the code; no role, no aria-label naming the language.
      return '<div class="relative group/copy">' +
        '<div class="sticky"><div><button aria-label="Copy to clipboard"><svg></svg></button>' +
        '</div></div><div class="text-text-500 font-small p-3.5 pb-0">' + esc(lang) +
        '</div><div><pre class="code-block__code"><code class="language-' + esc(lang) + '">' +
        body + "</code></pre></div></div>";
    }
    const name = lang ? (DISPLAY[lang] || lang[0].toUpperCase() + lang.slice(1)) : "";
    if (layout === "hljs") {
      const body = code.split("\n").map((l) => highlight(l, "hljs-keyword")).join("\n") + "\n";
      return '<pre class="!overflow-visible"><div class="contain-inline-size rounded-md">' +
        '<div class="code-header flex items-center"><span>' + esc(lang) + "</span>" +
        '<div class="flex"><button class="copy-code"><svg></svg>Copy code</button></div></div>' +
        '<div class="overflow-y-auto p-4" dir="ltr"><code class="!whitespace-pre hljs' +
        (lang ? " language-" + esc(lang) : "") + '">' + body + "</code></div></div></pre>";
    }
    // A last <br> shows no empty line in HTML: an empty last line needs one more.
    const lines = code.split("\n").map((l) => highlight(l, "ͼt")).join("<br>") +
      (code.endsWith("\n") ? "<br>" : "");
    return '<pre class="overflow-visible!"><div class="contain-inline-size rounded-2xl relative">' +
      '<div class="code-header flex items-center">' + esc(name) + "</div>" +
      '<div class="sticky top-9"><div class="absolute end-0"><button aria-label="Copy" ' +
      'class="copy-code"><svg></svg>Copy</button></div></div>' +
      '<div class="overflow-y-auto p-4" dir="ltr"><div class="cm-editor"><div class="cm-scroller">' +
      '<div class="cm-content" contenteditable="false">' + lines + "</div></div></div></div>" +
      "</div></pre>";
  }
  const BLOCK_START = /^(`{3,}|#{1,6} |[-*] |\d+\. |---+$)/;

  window.renderMarkdown = function (src, layout) {
    appshell = layout.startsWith("appshell-");
    const lines = src.split("\n");
    const out = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if ((m = /^(`{3,})([\w+#.-]*)\s*$/.exec(line))) {
        const fence = m[1];
        const code = [];
        i++;
        while (i < lines.length && lines[i] !== fence) code.push(lines[i++]);
        i++;
        out.push(codeBlock(code.join("\n"), m[2], layout));
      } else if (!line.trim()) {
        i++;
      } else if ((m = /^(#{1,6}) (.*)$/.exec(line))) {
        out.push("<h" + m[1].length + ">" + inline(m[2]) + "</h" + m[1].length + ">");
        i++;
      } else if (/^---+$/.test(line)) {
        out.push("<hr>");
        i++;
      } else if (/^[-*] /.test(line)) {
        const items = [];
        while (i < lines.length && /^[-*] /.test(lines[i])) items.push(lines[i++].slice(2));
        out.push("<ul>" + items.map((t) => "<li>" + inline(t) + "</li>").join("") + "</ul>");
      } else if ((m = /^(\d+)\. /.exec(line))) {
        const start = +m[1];
        const items = [];
        while (i < lines.length && /^\d+\. /.test(lines[i])) {
          items.push(lines[i++].replace(/^\d+\. /, ""));
        }
        out.push("<ol" + (start !== 1 ? ' start="' + start + '"' : "") + ">" +
          items.map((t) => "<li>" + inline(t) + "</li>").join("") + "</ol>");
      } else {
        const para = [];
        while (i < lines.length && lines[i].trim() && !BLOCK_START.test(lines[i])) {
          para.push(lines[i++]);
        }
        out.push("<p>" + inline(para.join("\n")) + "</p>");
      }
    }
    return out.join("");
  };
})();
