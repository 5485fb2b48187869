// The test site's page: a chatgpt.com look-alike in either of its two
// renderers ("legacy", or "app_shell" with its hidden earlier route, turn-key
// units, id-less composer, activity header, windowed thread and gapped
// CodeMirror blocks), or claude.ai's 2026 page (variant "claude"), with a
// ProseMirror-like prompt box, send/stop buttons, streamed scripted answers
// and the page states a driver must recognise.
(function () {
  const SITE = window.__SITE;
  const CLAUDE = SITE.variant === "claude";
  const APPSHELL = !CLAUDE && SITE.renderer === "app_shell";
  // Claude's two pages: the 2025-26 one (answer in div[data-is-streaming], its action
  // bar under the answer's grandparent) and the 2026-10 "hub" layout (transcript rows
  // in a feed; the answer ONE element holding thinking rows, prose and its toolbar).
  // "renamed": the hub page after a markup change that breaks three of the profile's
  // signals at once (the user's message, the answer's prose, its toolbar, where a
  // thumbs-up comes before the copy button): what `doctor --repair` mends.
  const RENAMED = CLAUDE && SITE.claude_layout === "renamed";
  const HUB = CLAUDE && (SITE.claude_layout === "hub" || RENAMED);
  const PROSE = RENAMED ? ['<div data-cds="Markdown"><div class="markdown-body">', "</div></div>"]
    : ['<div data-cds="Prose"><div class="standard-markdown">', "</div></div>"];
  const TOOLBAR = RENAMED ? "ResponseActions" : "MessageActions";
  const PREFIX = CLAUDE ? "/claude" : "";
  const now = () => performance.timeOrigin + performance.now();
  const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));
  const el = (html) => {
    const t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  };
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const uuid = () => crypto.randomUUID ? crypto.randomUUID()
    : "10000000-1000-4000-8000-100000000000".replace(/[018]/g, (c) =>
      (c ^ (Math.random() * 16 >> (c / 4))).toString(16));

  let conversationId = SITE.conversation_id || "";
  let streaming = false;
  let thinking = false;  // the model thinks (activity header says so)
  let hideStop = false;  // no_stop_while_thinking
  let turnCount = 0;
  let stopLabelOnSend = false;
  let stopped = null;  // {promise, done()} while an answer streams: the Stop button ends it
  let currentModel = SITE.models && SITE.models[0] || "";
  let answerModel = "";  // the model of the answer being written
  let windowSize = 6;
  window.__chatsite = {finishes: [], renders: []};

  // The UI language of the account: every label and visible text is translated,
  // as on the real pages ("it" stands for a language VerifyBot has no texts for).
  const LABELS = {
    en: {copy: "Copy", copyMsg: "Copy message", edit: "Edit message", share: "Share",
      rate: "Rate response", read: "Read aloud", regen: "Regenerate response",
      more: "More actions", sources: "Sources", send: "Send", stop: "Stop",
      voice: "Start voice mode", you: "You said:", bot: "ChatGPT said:", thinking: "Thinking",
      thought: (n) => "Thought for " + n + "s", answerNow: "Answer now", close: "Close",
      gotIt: "Got it", whatsNew: "What's new in ChatGPT", copyResp: "Copy response",
      good: "Good response", bad: "Bad response", stopStreaming: "Stop streaming",
      sendPrompt: "Send prompt", model: "Select ChatGPT model", newChat: "New chat",
      actions: "Response actions", mine: "Your message actions"},
    ko: {copy: "복사", copyMsg: "메시지 복사", edit: "메시지 편집", share: "공유",
      rate: "응답 평가", read: "소리 내어 읽기", regen: "응답 다시 생성", more: "추가 액션",
      sources: "소스", send: "프롬프트 보내기", stop: "스트리밍 중지", voice: "음성 대화 시작",
      you: "내가 한 말:", bot: "ChatGPT 답변:", thinking: "생각 중",
      thought: (n) => n + "초 동안 생각함", answerNow: "지금 답변", close: "닫기",
      gotIt: "알겠습니다", whatsNew: "ChatGPT의 새로운 기능", copyResp: "응답 복사",
      good: "좋은 응답", bad: "별로인 응답", stopStreaming: "스트리밍 중지",
      sendPrompt: "프롬프트 보내기", model: "ChatGPT 모델 선택", newChat: "새 채팅",
      actions: "응답 작업", mine: "내 메시지 작업"},
    de: {copy: "Kopieren", copyMsg: "Nachricht kopieren", edit: "Nachricht bearbeiten",
      share: "Teilen", rate: "Antwort bewerten", read: "Vorlesen",
      regen: "Antwort neu generieren", more: "Weitere Aktionen", sources: "Quellen",
      send: "Prompt senden", stop: "Streaming stoppen", voice: "Sprachmodus starten",
      you: "Du hast gesagt:", bot: "ChatGPT hat gesagt:", thinking: "Denkt nach",
      thought: (n) => "Nachgedacht für " + n + " s", answerNow: "Jetzt antworten",
      close: "Schließen", gotIt: "Verstanden", whatsNew: "Neu in ChatGPT",
      copyResp: "Antwort kopieren", good: "Gute Antwort", bad: "Schlechte Antwort",
      stopStreaming: "Streaming stoppen", sendPrompt: "Prompt senden",
      model: "ChatGPT-Modell auswählen", newChat: "Neuer Chat", actions: "Antwortaktionen",
      mine: "Aktionen für deine Nachricht"},
    it: {copy: "Copia", copyMsg: "Copia messaggio", edit: "Modifica messaggio",
      share: "Condividi", rate: "Valuta la risposta", read: "Leggi ad alta voce",
      regen: "Rigenera risposta", more: "Altre azioni", sources: "Fonti", send: "Invia",
      stop: "Interrompi", voice: "Avvia la modalità vocale", you: "Hai detto:",
      bot: "ChatGPT ha detto:", thinking: "Sto ragionando",
      thought: (n) => "Ragionato per " + n + " s", answerNow: "Rispondi ora", close: "Chiudi",
      gotIt: "Ho capito", whatsNew: "Novità di ChatGPT", copyResp: "Copia risposta",
      good: "Risposta buona", bad: "Risposta scarsa", stopStreaming: "Interrompi lo streaming",
      sendPrompt: "Invia prompt", model: "Seleziona il modello", newChat: "Nuova chat",
      actions: "Azioni della risposta", mine: "Azioni del tuo messaggio"},
  };
  const L = LABELS[SITE.lang] || LABELS.en;
  document.documentElement.lang = SITE.lang_tag || SITE.lang || "en";
  // The icons real drivers key on (2026): copy and stop.
  const ICON_COPY = '<svg viewBox="0 0 20 20"><path d="M13.468 11.1216 L4 4"></path></svg>';
  const ICON_STOP = '<svg viewBox="0 0 20 20"><path d="M4.5 5.75C4.5 5.05964 5 5 5 5"></path>' +
    "</svg>";
  const ICON_X = '<svg viewBox="0 0 20 20"><path d="M5 5 L15 15 M15 5 L5 15"></path></svg>';

  // --- page skeleton --------------------------------------------------------
  const body = document.body;
  if (SITE.page === "login_buttons") {
    body.appendChild(el('<header><button data-testid="login-button">Log in</button>' +
      '<button data-testid="signup-button">Sign up for free</button></header>'));
  }
  if (SITE.bot_scripts) {
    // Bot-management scripts leave their markers on normal pages too.
    body.appendChild(el('<div id="cf-challenge-running" style="display:none"></div>'));
  }
  if (!CLAUDE) {
    body.appendChild(el('<nav><a data-testid="create-new-chat-button" href="/">New chat</a>' +
      "</nav>"));
  }
  let route = body;
  if (APPSHELL) {
    // The frame a page opened directly has; the active-page marker only once
    // earlier routes stay mounted (after in-app navigations): 4 hidden + 1 active.
    const frame = body.appendChild(el('<div data-app-shell-frame="true" class="frame"></div>'));
    const routes = frame.appendChild(el('<div id="routes"></div>'));
    const hidden = SITE.hidden && SITE.hidden.length;
    if (hidden) for (let i = 0; i < 2; i++) routes.appendChild(hiddenRoute(SITE.hidden));
    route = routes.appendChild(el(hidden
      ? '<div data-app-shell-active-page="true" class="route"></div>'
      : '<div class="route"></div>'));
    if (hidden) for (let i = 0; i < 2; i++) routes.appendChild(hiddenRoute(SITE.hidden));
  }
  // The older page's picker is the composer pill (2026; its test id is gone).
  // Claude's 2026-09 picker (claude_picker "cds"): the name in span.text-end, the effort
  // word (in the account's language) in a grey span.text-muted inside it.
  const CDS_PICKER = CLAUDE && SITE.claude_picker === "cds";
  const picker = el(CDS_PICKER
    ? '<button type="button" data-cds="ModelSelector" aria-haspopup="menu"></button>'
    : CLAUDE ? '<button data-testid="model-selector-dropdown" aria-haspopup="menu"></button>'
    : APPSHELL
      ? '<button type="button" data-codex-intelligence-trigger aria-haspopup="menu" ' +
        'aria-label="' + L.model + '"></button>'
      : '<button type="button" class="__composer-pill __composer-pill--neutral" ' +
        'aria-haspopup="menu" aria-expanded="false"></button>');
  if (CLAUDE || APPSHELL) route.appendChild(picker);
  // Claude's picker as on its real pages: the name, a grey mode beside it, an icon.
  function showModel(name) {
    if (!CLAUDE) { picker.textContent = name; return; }
    if (CDS_PICKER) {
      picker.innerHTML = '<span class="text-end"><span class="name"></span> ' +
        '<span class="text-muted">' + esc(SITE.effort || "Moyen") + "</span></span>" +
        '<svg aria-hidden="true" viewBox="0 0 8 8"><path d="M0 2 L4 6 L8 2"></path></svg>';
      picker.querySelector(".name").textContent = name;
      return;
    }
    picker.setAttribute("aria-label", "Model: " + name + " Extended");
    picker.innerHTML = '<div class="whitespace-nowrap select-none"></div>' +
      '<span class="text-text-500">Extended</span><span aria-hidden="true">\ue027</span>';
    picker.firstChild.textContent = name;
  }
  showModel(currentModel);
  picker.addEventListener("click", openModelMenu);
  const thread = APPSHELL
    ? route.appendChild(el('<div data-app-action-timeline-scroll class="timeline">' +
      '<div id="thread"></div></div>')).firstElementChild
    : route.appendChild(el(HUB ? '<main id="thread" role="feed" aria-label="Chat messages">' +
      "</main>" : '<main id="thread"></main>'));
  if (SITE.page === "limit_banner") {
    body.appendChild(el('<div role="alert" class="limit">You\'ve reached our limit of messages ' +
      "per hour. Please wait a few minutes before trying again.</div>"));
  }
  if (SITE.banner) {
    const b = body.appendChild(el('<div role="status" class="banner"></div>'));
    b.textContent = SITE.banner;
  }
  if (SITE.alert) {
    const b = body.appendChild(el('<div role="alert" class="banner"></div>'));
    b.textContent = SITE.alert;
  }
  const composer = route.appendChild(CLAUDE
    ? el('<fieldset id="composer"><div contenteditable="true" role="textbox" ' +
      'data-testid="chat-input" class="ProseMirror" aria-label="Write your prompt to Claude">' +
      '<p><br class="ProseMirror-trailingBreak"></p></div><div id="actions"></div></fieldset>')
    : APPSHELL
      ? el('<form data-chatgpt-composer class="composer"><div contenteditable="true" ' +
        'role="textbox" class="ProseMirror"><p><br class="ProseMirror-trailingBreak"></p></div>' +
        '<div class="slot"></div></form>')
      : el('<form id="composer"><textarea name="prompt-textarea" style="display:none">' +
        '</textarea><div id="prompt-textarea" contenteditable="true" class="ProseMirror">' +
        '<p><br class="ProseMirror-trailingBreak"></p></div><div id="actions"></div></form>'));
  composer.addEventListener("submit", (e) => { e.preventDefault(); send(); });
  if (!CLAUDE && !APPSHELL) composer.appendChild(picker);
  const box = composer.querySelector("[contenteditable]");
  const actions = composer.querySelector("#actions, .slot");
  const toasts = body.appendChild(el('<div id="toasts"></div>'));

  function hiddenRoute(turns) {
    // An earlier chat, still mounted but hidden: its own finished answer with its
    // action row, and a composer holding a draft with its send button.
    const r = el('<div data-app-shell-active-page="false" class="route" style="display:none">' +
      '<div data-app-action-timeline-scroll><div class="old-thread"></div></div>' +
      '<form data-chatgpt-composer><div contenteditable="true" role="textbox" ' +
      'class="ProseMirror"><p>a stale draft</p></div><button type="submit" aria-label="' +
      L.send + '">' + L.send + "</button></form></div>");
    const t = r.querySelector(".old-thread");
    const key = "old-" + uuid();
    const wrap = t.appendChild(el('<div data-turn-key="' + key + '"></div>'));
    wrap.appendChild(userUnit(turns[0].text, key));
    const a = assistantUnit(key, {copy_button: true});
    a.md.innerHTML = renderMarkdown(turns[1].text, "appshell-pre");
    wrap.appendChild(a.node);
    wrap.appendChild(a.rowWrap);
    addActions(a, turns[1].text, {copy_button: true});
    return r;
  }

  // An announcement ("what's new") open at load: it covers the page, traps the
  // focus, takes keystrokes and clicks, and is closed by its own buttons.
  let dialog = null;
  function openDialog(kind) {
    const login = kind === "login";
    dialog = body.appendChild(el('<div class="overlay"><div role="dialog" aria-modal="true" ' +
      'class="dialog" tabindex="-1"><h2></h2><p></p><div class="dialog-buttons"></div>' +
      "</div></div>"));
    const d = dialog.querySelector("[role=dialog]");
    d.querySelector("h2").textContent = login ? "ChatGPT" : L.whatsNew;
    d.querySelector("p").textContent = login ? "" : "Projects, memory and more.";
    const buttons = d.querySelector(".dialog-buttons");
    if (login) {
      buttons.appendChild(el('<button data-testid="login-button">Log in</button>'));
    } else if (kind !== "no_close") {
      const x = el('<button type="button" aria-label="' + L.close + '">' + ICON_X +
        "</button>");
      d.insertBefore(x, d.firstChild);
      const ok = buttons.appendChild(el("<button type=\"button\"></button>"));
      ok.textContent = L.gotIt;
      for (const b of [x, ok]) b.addEventListener("click", closeDialog);
    }
    d.focus();
  }
  function closeDialog() {
    if (dialog) dialog.remove();
    dialog = null;
  }
  document.addEventListener("focusin", (e) => {
    if (dialog && !dialog.contains(e.target)) dialog.querySelector("[role=dialog]").focus();
  });
  document.addEventListener("keydown", (e) => {
    if (dialog && !dialog.contains(e.target)) {
      e.preventDefault();
      e.stopPropagation();
    }
  }, true);

  function openModelMenu() {
    const old = document.querySelector('[role="menu"]');
    if (old) { old.remove(); return; }
    const menu = body.appendChild(el('<div role="menu" class="menu"></div>'));
    for (const name of SITE.models) {
      const item = menu.appendChild(el('<div role="menuitemradio" tabindex="0"></div>'));
      item.appendChild(document.createTextNode(name));
      item.appendChild(el('<div class="desc">A model of the test site</div>'));
      item.setAttribute("aria-checked", String(name === currentModel));
      item.addEventListener("click", () => {
        currentModel = name;
        showModel(name);
        menu.remove();
      });
    }
  }

  // --- the prompt box: one <p> per line, edits through beforeinput ------------
  const boxText = () => Array.from(box.children, (p) => p.textContent).join("\n");
  function clip(text) {
    return SITE.max_prompt > 0 && text.length > SITE.max_prompt
      ? text.slice(0, SITE.max_prompt) : text;
  }
  function setCaret(pos) {
    const ps = Array.from(box.children);
    for (const p of ps) {
      const len = p.textContent.length;
      if (pos <= len || p === ps[ps.length - 1]) {
        const node = p.firstChild && p.firstChild.nodeType === Node.TEXT_NODE ? p.firstChild : p;
        const r = document.createRange();
        r.setStart(node, node === p ? 0 : Math.min(pos, len));
        r.collapse(true);
        const sel = getSelection();
        sel.removeAllRanges();
        sel.addRange(r);
        return;
      }
      pos -= len + 1;
    }
  }
  function renderBox(text, caret) {
    box.replaceChildren(...text.split("\n").map((line) => {
      const p = document.createElement("p");
      if (line) p.textContent = line;
      else p.appendChild(el('<br class="ProseMirror-trailingBreak">'));
      return p;
    }));
    if (document.activeElement === box) setCaret(caret);
    updateButtons();
    if (SITE.limit_on_type && text.trim() && !document.querySelector(".typed-limit")) {
      // The chosen model's limit, shown under the composer once there is text to send.
      const n = body.appendChild(el('<div role="alert" class="typed-limit"></div>'));
      n.textContent = SITE.limit_on_type;
    }
  }
  function offsetOf(node, off) {
    const ps = Array.from(box.children);
    if (node === box) {
      let t = 0;
      for (let i = 0; i < Math.min(off, ps.length); i++) t += ps[i].textContent.length + 1;
      return Math.max(0, Math.min(t, boxText().length));
    }
    let total = 0;
    for (const p of ps) {
      if (p === node || p.contains(node)) {
        const r = document.createRange();
        r.setStart(p, 0);
        r.setEnd(node, off);
        return total + r.toString().length;
      }
      total += p.textContent.length + 1;
    }
    return boxText().length;
  }
  box.addEventListener("beforeinput", (e) => {
    e.preventDefault();
    const text = boxText();
    let a = text.length;
    let b = text.length;
    const sel = getSelection();
    if (sel.rangeCount && box.contains(sel.anchorNode)) {
      const r = sel.getRangeAt(0);
      a = offsetOf(r.startContainer, r.startOffset);
      b = offsetOf(r.endContainer, r.endOffset);
    }
    let ins = "";
    const t = e.inputType;
    if (t.startsWith("insert") && t !== "insertParagraph" && t !== "insertLineBreak") {
      ins = e.data ?? (e.dataTransfer ? e.dataTransfer.getData("text/plain") : "") ?? "";
      if (SITE.lossy_insert) ins = ins.replace(/\n+/g, " ");
    } else if (t === "insertParagraph" || t === "insertLineBreak") {
      ins = "\n";
    } else if (t === "deleteContentBackward" && a === b) {
      a = Math.max(0, a - 1);
    } else if (t === "deleteContentForward" && a === b) {
      b = Math.min(text.length, b + 1);
    } else if (!t.startsWith("delete")) {
      return;
    }
    const next = clip(text.slice(0, a) + ins + text.slice(b));
    renderBox(next, Math.min(a + ins.length, next.length));
  });
  // Someone changed the DOM directly (the driver's fallback): read it back as paragraphs.
  box.addEventListener("input", () => {
    const text = clip(boxText());
    renderBox(text, text.length);
  });
  // Enter sends; on some accounts Enter inserts a newline and Ctrl+Enter sends.
  box.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.shiftKey) return;
    if (SITE.enter_newline && !(e.ctrlKey || e.metaKey)) return;  // beforeinput adds "\n"
    e.preventDefault();
    send();
  });

  // --- composer buttons -------------------------------------------------------
  function updateButtons() {
    const hasText = boxText().trim().length > 0;
    const showStop = streaming && !(hideStop && thinking);
    let html = "";
    if (APPSHELL) {
      // One slot: voice (empty box), send (text), stop (answering); no ids, no test ids.
      if (showStop) {
        html = '<button type="button" class="size-token-button-composer" data-role="stop" ' +
          'aria-label="' + L.stop + '">' + ICON_STOP + "</button>";
      } else if (hasText && !streaming) {
        html = '<button type="submit" data-role="send" aria-label="' + L.send + '">' +
          L.send + "</button>";
      } else {
        html = '<button type="button" class="size-token-button-composer" ' +
          'aria-label="' + L.voice + '">Voice</button>';
      }
    } else if (showStop) {
      if (CLAUDE) html = '<button data-role="stop" aria-label="Stop response">Stop</button>';
      else if (stopLabelOnSend) {
        html = '<button type="button" data-role="stop" data-testid="send-button" ' +
          'aria-label="' + L.stopStreaming + '">' + ICON_STOP + "</button>";
      } else {
        html = '<button type="button" data-role="stop" data-testid="stop-button" ' +
          'aria-label="' + L.stopStreaming + '">' + ICON_STOP + "</button>";
      }
    } else if (CLAUDE) {
      html = '<button data-role="send" aria-label="Send message"' +
        (hasText && !streaming ? "" : " disabled") + ">Send</button>";
    } else if (hasText && !streaming) {
      html = '<button type="button" data-role="send" data-testid="send-button" ' +
        'id="composer-submit-button" aria-label="' + L.sendPrompt + '">' + L.send + "</button>";
    } else {
      html = '<button type="button" aria-label="' + L.voice + '">Voice</button>';
    }
    if (actions.innerHTML !== html) {
      actions.innerHTML = html;
      const b = actions.querySelector("button");
      const role = b.getAttribute("data-role");
      if (role === "send" && b.getAttribute("type") !== "submit") {
        b.addEventListener("click", (e) => { e.preventDefault(); send(); });
      }
      if (role === "stop") {
        b.addEventListener("click", (e) => {
          e.preventDefault();
          if (stopped) stopped.done();
        });
      }
    }
  }

  // --- turns --------------------------------------------------------------------
  function userBubble(text) {
    if (text.includes("```")) {
      // A prompt holding a fenced block is shown rendered as markdown.
      return '<div data-markdown-text-tone="user-message">' +
        renderMarkdown(text, "appshell-pre") + "</div>";
    }
    // Backtick-quoted spans show as <code>, the backticks dropped.
    const html = text.split(/(`[^`\n]+`)/).map((part, k) =>
      k % 2 ? "<code>" + esc(part.slice(1, -1)) + "</code>" : esc(part)).join("");
    return '<div data-user-message-bubble><div class="whitespace-pre-wrap">' + html +
      "</div></div>";
  }
  // The real page's exchange: [data-turn-key] > (wrapper > user unit, holding its
  // own action row) + (wrapper > assistant unit) + (wrapper > the assistant's action
  // row): that row is NOT inside the assistant unit.
  function userUnit(text, key) {
    const w = el('<div><h4 class="sr-only">' + L.you + "</h4>" +
      '<div data-chatgpt-search-unit-key="' + key + ':user" ' +
      'data-chatgpt-search-message-ids="' + uuid() + '" class="group/user-message">' +
      userBubble(text) + '<div class="flex turn-action-controls">' +
      '<span><button type="button" aria-label="' + L.copyMsg + '">' + ICON_COPY +
      '</button></span><span><button type="button" aria-label="' + L.share + '"></button>' +
      '</span><span><button type="button" aria-label="' + L.edit + '"></button></span>' +
      "</div></div></div>");
    return w;
  }
  function assistantUnit(key) {
    const id = uuid();
    const node = el('<div><div data-chatgpt-search-unit-key="' + key + ':assistant" ' +
      'data-chatgpt-search-message-ids="' + uuid() + " " + id + '">' +
      '<h4 class="sr-only" data-conversation-role="assistant">' + L.bot + "</h4>" +
      '<div data-chatgpt-selection-message-id="' + id + '">' +
      '<div data-markdown-text-style="assistant-message" class="markdown"></div></div>' +
      "</div></div>");
    const rowWrap = el('<div><div class="mt-1.5 flex turn-action-controls"></div></div>');
    return {node, rowWrap, md: node.querySelector("[data-markdown-text-style]"),
      actions: rowWrap.querySelector(".turn-action-controls")};
  }
  function windowTurns() {
    // Only the last few exchanges stay mounted.
    const turns = thread.querySelectorAll(":scope > [data-turn-key]");
    for (let i = 0; i < turns.length - windowSize; i++) turns[i].remove();
  }
  let lastWrap = null;
  function addUserTurn(text) {
    turnCount++;
    let node;
    if (HUB) {
      // The user's row has its own toolbar with a Copy button: never the answer's.
      node = el(RENAMED ? '<div data-testid="transcript-row"><div data-cds="UserMessage">' +
        '<div data-testid="human-message"></div></div><div data-cds="ResponseActions" ' +
        'role="toolbar"><button aria-label="Copy">Copy</button><button aria-label="Edit">' +
        "Edit</button></div></div>"
        : '<div data-testid="transcript-row"><div data-cds="UserMessage">' +
        '<div data-testid="user-message"></div><div data-cds="MessageActions" ' +
        'role="toolbar"><button aria-label="Copy">Copy</button><button aria-label="Edit">' +
        "Edit</button></div></div></div>");
    } else if (CLAUDE) {
      node = el('<div data-test-render-count="1"><div class="mb-1 mt-6 group">' +
        '<div class="group relative inline-flex"><div data-testid="user-message" ' +
        'class="font-large !font-user-message"></div></div><div role="group" ' +
        'aria-label="Message actions"><button aria-label="Retry">Retry</button>' +
        '<button data-testid="action-bar-edit" aria-label="Edit">Edit</button>' +
        '<button data-testid="action-bar-copy" aria-label="Copy">Copy</button></div></div></div>');
    }
    if (CLAUDE) {
      const m = node.querySelector('[data-testid="user-message"], [data-testid="human-message"]');
      for (const line of text.split("\n")) {
        const p = document.createElement("p");
        p.className = "whitespace-pre-wrap break-words";
        p.textContent = line;
        m.appendChild(p);
      }
    } else if (APPSHELL) {
      const key = "t" + uuid();
      node = el('<div data-turn-key="' + key + '"></div>');
      node.appendChild(userUnit(text, key));
      lastWrap = node;
    } else {
      // The user's own action group carries the same copy test id as the answer's.
      node = el(turnTag("user") + '<h4 class="sr-only">' + L.you + "</h4>" +
        '<div data-message-author-role="user" data-message-id="u' + turnCount + '">' +
        '<div class="whitespace-pre-wrap"></div></div><div role="group" aria-label="' +
        L.mine + '"><button type="button" data-testid="copy-turn-action-button" ' +
        'aria-label="' + L.copyMsg + '">' + ICON_COPY + '</button><button type="button" ' +
        'aria-label="' + L.edit + '"></button></div>' + turnClose());
      node.querySelector(".whitespace-pre-wrap").textContent = text;
    }
    thread.appendChild(node);
    if (APPSHELL) windowTurns();
  }
  let layout = "section";
  function turnTag(role) {
    return layout === "article"
      ? '<article data-testid="conversation-turn-' + turnCount + '" class="w-full">'
      : '<section data-turn="' + role + '" data-testid="conversation-turn-' + turnCount + '">';
  }
  function turnClose() {
    return layout === "article" ? "</article>" : "</section>";
  }
  function addAssistantTurn(render) {
    turnCount++;
    let node;
    let turn;
    if (HUB) {
      node = el('<div data-testid="transcript-row"><div data-testid="assistant-message" ' +
        'data-cds="AssistantMessage" data-is-streaming="true"><h2 class="sr-only">Claude ' +
        'responded: </h2><div class="hub-body"></div><div data-cds="' + TOOLBAR + '" ' +
        'role="toolbar" class="action-bar"></div></div></div>');
      turn = {node, md: node.querySelector(".hub-body"),
        actions: node.querySelector('[data-cds="' + TOOLBAR + '"]'),
        streamingEl: node.querySelector("[data-is-streaming]")};
      thread.appendChild(node);
    } else if (CLAUDE) {
      // The real page: div.group > div.contents > div[data-is-streaming], and the
      // action bar under div.group (the answer's grandparent), not beside the answer.
      node = el('<div data-test-render-count="1"><div class="group"><div class="contents">' +
        '<div data-is-streaming="true" class="group relative pb-3">' +
        '<div class="font-claude-response"></div></div></div>' +
        '<div role="group" aria-label="Message actions" class="action-bar"></div></div></div>');
      turn = {node, md: node.querySelector(".font-claude-response"),
        actions: node.querySelector(".action-bar"),
        streamingEl: node.querySelector("[data-is-streaming]")};
      thread.appendChild(node);
    } else if (APPSHELL) {
      turn = assistantUnit(lastWrap.getAttribute("data-turn-key"));
      lastWrap.appendChild(turn.node);
      lastWrap.appendChild(turn.rowWrap);
    } else {
      // multi_node: one section, several assistant nodes (intro, "Thought for Ns", body).
      const streamingCls = render.result_streaming ? " result-streaming" : "";
      const slug = (render.model || answerModel || "").toLowerCase().replace(/[^a-z0-9]+/g, "-")
        .replace(/^-|-$/g, "");
      const mdNode = (n) => '<div data-message-author-role="assistant" data-message-id="a' +
        turnCount + "-" + n + '"' + (slug ? ' data-message-model-slug="' + slug + '"' : "") +
        '><div class="markdown prose' + streamingCls + '"></div></div>';
      node = el(turnTag("assistant") + '<h4 class="sr-only">' + L.bot + "</h4>" +
        mdNode(1) + (render.multi_node ? '<div data-message-author-role="assistant" ' +
        'data-message-id="a' + turnCount + '-t"><button type="button" class="thought">' +
        L.thought(3) + "</button></div>" + mdNode(2) : "") +
        '<div role="group" aria-label="' + L.actions + '" class="turn-actions"></div>' +
        turnClose());
      const mds = node.querySelectorAll(".markdown");
      turn = {node, md: mds[0], md2: mds.length > 1 ? mds[1] : null,
        actions: node.querySelector(".turn-actions")};
      thread.appendChild(node);
    }
    return turn;
  }
  function setActivity(turn, text, busy) {
    if (CLAUDE) return;
    let h = turn.node.querySelector('[class~="group/activity-header"]');
    if (!h) {
      h = el('<div class="group/activity-header"></div>');
      turn.md.parentElement.before(h);
    }
    h.textContent = text;
    // The real header shimmers while the model works (a class, in any language).
    h.classList.toggle("cadencedShimmer_x1", !!busy);
  }
  function renderInto(turn, text, render, extra) {
    if (CLAUDE) {
      // A thinking row first (its words are never the answer), then several
      // .standard-markdown blocks with tool rows between them; artifact cards are
      // not part of the copied answer either.
      const thought = esc(turn.thought || THOUGHT);
      let html = HUB
        ? '<div data-cds="TurnStatus"><span>Thought for 2s</span><button aria-label=' +
          '"Show thinking">&gt;</button>' + PROSE[0] + "<p>" + thought + "</p>" + PROSE[1] +
          "</div>"
        : '<div class="grid grid-rows-[auto_auto] min-w-0"><div class="row-start-1 ' +
          'col-start-1 min-w-0"><div class="min-w-0 pl-2"><button class="group/status">' +
          '<span>Thought for 2s</span></button><div class="grid"><div class="overflow-hidden">' +
          '<div class="font-ui"><div class="standard-markdown"><p>' + thought +
          "</p></div></div></div></div></div></div></div>";
      html += claudeChunks(text).map((c) => HUB
        ? PROSE[0] + renderMarkdown(c, "claude") + PROSE[1]
        : '<div class="standard-markdown">' + renderMarkdown(c, "claude") + "</div>").join(
        HUB ? '<div data-cds="TurnStatus"><span>Ran a tool</span></div>'
          : '<button class="group/status">Ran a tool</button>');
      if (turn.artifact) {
        html += '<div class="artifact-block-cell">' + esc(turn.artifact.title) +
          "<div>Code</div></div>";
      }
      turn.md.innerHTML = html;
      return;
    }
    window.__cmCodes = [];
    if (turn.md2) {
      // Split at the first paragraph break: the intro node, then the body node.
      const at = text.indexOf("\n\n");
      const intro = at < 0 ? text : text.slice(0, at);
      const rest = at < 0 ? "" : text.slice(at + 2);
      turn.md.innerHTML = renderMarkdown(intro, codeLayout(render));
      turn.md2.innerHTML = rest ? renderMarkdown(rest, codeLayout(render)) : "";
      mountCodeMirror(turn.node, render);
      return;
    }
    turn.md.innerHTML = renderMarkdown(text, codeLayout(render));
    mountCodeMirror(turn.md, render);
  }
  const THOUGHT = "THINKING: the user wants a program; I must not say this in the answer.";
  function claudeChunks(text) {
    // Split before each fenced block or heading outside a fence, at "\n\n".
    const lines = text.split("\n");
    const chunks = [];
    let cur = [];
    let inFence = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = /^`{3,}/.test(line);
      if (!inFence && (fence || /^#{1,6} /.test(line)) && cur.length >= 2 &&
          cur[cur.length - 1] === "") {
        cur.pop();
        chunks.push(cur.join("\n"));
        cur = [];
      }
      if (fence) inFence = !inFence;
      cur.push(line);
    }
    chunks.push(cur.join("\n"));
    return chunks.filter((c) => c.length);
  }
  // CodeMirror 6 as ChatGPT shows it: one .cm-line per line, lines outside the
  // viewer's viewport replaced by .cm-gap spacers, filled in when scrolled to.
  const LINE = 18;
  function mountCodeMirror(root, render) {
    for (const content of root.querySelectorAll(".cm-content[data-cm]")) {
      const lines = window.__cmCodes[+content.getAttribute("data-cm")].split("\n");
      const sc = content.closest(".cm-scroller");
      const draw = () => {
        const top = sc.scrollTop;
        const first = Math.max(0, Math.floor(top / LINE) - 16);
        const last = Math.min(lines.length,
          Math.ceil((top + (sc.clientHeight || 360)) / LINE) + 16);
        let html = first ? '<div class="cm-gap" style="height:' + first * LINE + 'px"></div>' : "";
        for (let i = first; i < last; i++) {
          html += '<div class="cm-line">' + (lines[i] ? esc(lines[i]) : "<br>") + "</div>";
        }
        if (last < lines.length) {
          html += '<div class="cm-gap" style="height:' + (lines.length - last) * LINE +
            'px"></div>';
        }
        content.innerHTML = html;
      };
      draw();
      if (!render.cm_stuck) sc.addEventListener("scroll", draw);
    }
  }
  function finishTurn(turn, markdown, render) {
    if (CLAUDE) {
      turn.streamingEl.setAttribute("data-is-streaming", "false");
    } else {
      turn.md.classList.remove("result-streaming");
      if (turn.md2) turn.md2.classList.remove("result-streaming");
    }
    if (!turn.actions.children.length) addActions(turn, markdown, render);
  }
  function addActions(turn, markdown, render) {
    if (render.copy_button) {
      const copy = RENAMED ? el('<button aria-label="Copy response">Copy</button>')
        : HUB ? el('<button aria-label="Copy">Copy</button>')
        : CLAUDE ? el('<button data-testid="action-bar-copy" aria-label="Copy">Copy</button>')
        : APPSHELL ? el('<button type="button" aria-label="' + L.copy + '">' + ICON_COPY +
          "</button>")
          : el('<button type="button" data-testid="copy-turn-action-button" aria-label="' +
            L.copyResp + '">' + ICON_COPY + "</button>");
      copy.addEventListener("click", () => {
        // What the turn shows now, as the real sites copy it.
        if (turn.shown !== undefined) markdown = turn.shown;
        if (CLAUDE) {
          navigator.clipboard.write([new ClipboardItem(
            {"text/plain": new Blob([markdown], {type: "text/plain"})})]);
        } else {
          navigator.clipboard.writeText(markdown);
        }
      });
      turn.actions.appendChild(APPSHELL ? el("<span></span>") : copy);
      if (APPSHELL) turn.actions.lastChild.appendChild(copy);
    }
    if (RENAMED) {
      // The thumbs-up comes first in this row: it rates the answer on the account.
      turn.actions.prepend(el('<button aria-label="Good response">+</button>'));
      turn.actions.appendChild(el('<button aria-label="Retry">Retry</button>'));
    } else if (HUB) {
      turn.actions.appendChild(el('<button aria-label="Retry">Retry</button>'));
    } else if (CLAUDE) {
      turn.actions.appendChild(el('<button data-testid="action-bar-retry" ' +
        'aria-label="Retry">Retry</button>'));
    } else if (APPSHELL) {
      // The real row's order: copy, rate (a menu on its span), share, read aloud,
      // regenerate (a menu), more (a menu), sources.
      turn.actions.appendChild(el('<span aria-haspopup="menu"><button type="button" ' +
        'aria-label="' + L.rate + '"></button></span>'));
      turn.actions.appendChild(el('<span><button type="button" aria-label="' + L.share +
        '"></button></span>'));
      turn.actions.appendChild(el('<span><button type="button" aria-label="' + L.read +
        '"></button></span>'));
      turn.actions.appendChild(el('<button type="button" aria-haspopup="menu" aria-label="' +
        L.regen + '"></button>'));
      turn.actions.appendChild(el('<button type="button" aria-haspopup="menu" aria-label="' +
        L.more + '">...</button>'));
      turn.actions.appendChild(el('<button type="button" aria-label="' + L.sources +
        '"></button>'));
    } else {
      turn.actions.appendChild(el('<button type="button" ' +
        'data-testid="good-response-turn-action-button" aria-label="' + L.good + '">+</button>'));
      turn.actions.appendChild(el('<button type="button" ' +
        'data-testid="bad-response-turn-action-button" aria-label="' + L.bad + '">-</button>'));
      turn.actions.appendChild(el('<span><button type="button" aria-haspopup="menu" ' +
        'aria-label="' + L.regen + '"></button></span>'));
      turn.actions.appendChild(el('<button type="button" aria-haspopup="menu" aria-label="' +
        L.more + '">...</button>'));
    }
  }
  function codeLayout(render) {
    if (CLAUDE) return "claude";
    if (APPSHELL) {
      return {cm: "appshell-cm", hljs: "appshell-pre", bare: "appshell-bare"}[
        render.code_layout] || "appshell-cm";
    }
    return render.code_layout;
  }
  function toast(text, testid) {
    toasts.appendChild(el('<div class="toast" role="alert" data-testid="' + testid + '">' +
      esc(text) + "</div>"));
  }

  // --- sending and streaming ------------------------------------------------------
  let swallowed = 0;
  async function send() {
    const text = boxText();
    if (!text.trim() || streaming || dialog) return;  // a dialog takes the clicks
    if (swallowed < (SITE.swallow_send || 0)) {
      swallowed++;  // the click does nothing: no message, the composer keeps the text
      return;
    }
    streaming = true;
    renderBox(SITE.keep_box ? text : "", 0);  // keep_box: a composer that never empties
    const temporary = location.search.includes("temporary-chat=true");
    let r;
    try {
      const resp = await fetch("/api/send", {method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({conversation_id: conversationId, prompt: text,
          variant: SITE.variant, model: currentModel, temporary})});
      r = await resp.json();
    } catch (e) {
      streaming = false;
      toast("Network error: the message was not sent.", "toast-error");
      updateButtons();
      return;
    }
    layout = r.render.turn_layout;
    windowSize = r.render.window || 6;
    stopLabelOnSend = r.render.stop_label_on_send;
    hideStop = r.render.no_stop_while_thinking;
    addUserTurn(text);
    updateButtons();
    if (r.model && r.model !== currentModel) {
      // The site answered with another model than the one picked, and says so.
      currentModel = r.model;
      showModel(r.model);
    }
    answerModel = r.model || currentModel;
    if (!conversationId) {
      conversationId = r.conversation_id;
      const query = location.search;
      const final = PREFIX + (CLAUDE ? "/chat/" : "/c/") + conversationId + query;
      if (APPSHELL) {
        history.pushState({}, "", "/c/local-chatgpt%3A" + uuid() + query);
      } else if (!CLAUDE) {
        history.pushState({}, "", "/c/WEB:" + Math.random().toString(36).slice(2));
      }
      setTimeout(() => history.replaceState({}, "", final), r.render.url_delay * 1000);
    }
    await stream(r.reply, r.render, null);
  }

  function stopper() {
    let resolve;
    const st = {promise: new Promise((r) => { resolve = r; }), is: false};
    st.done = () => { st.is = true; resolve(); };
    stopped = st;
    return st;
  }

  // Thinking: the activity header says so; Pro shows "Answer now"; the action row
  // may flash; with no_stop_while_thinking only the header says "busy".
  async function think(turn, secs, render, wait) {
    thinking = true;
    updateButtons();
    setActivity(turn, L.thinking, true);
    const started = now();
    let answerNow = null;
    if (render.answer_now) {
      answerNow = el("<button></button>");
      answerNow.textContent = L.answerNow;
      turn.md.parentElement.after(answerNow);
    }
    let flash = null;
    if (render.flash_actions) {
      flash = setInterval(() => {
        if (turn.actions.children.length) turn.actions.replaceChildren();
        else addActions(turn, "", render);
      }, 90);
    }
    await wait(secs);
    while (render.hold_thinking && !stopped?.is
           && (await (await fetch("/api/thinking")).json()).held) await wait(0.05);
    if (flash) clearInterval(flash);
    turn.actions.replaceChildren();
    if (answerNow) answerNow.remove();
    setActivity(turn, L.thought(Math.max(1, Math.round((now() - started) / 1000))), false);
    thinking = false;
    updateButtons();
  }

  async function stream(reply, render, into, from) {
    const md = reply.markdown;
    if (reply.event === "downgrade") {
      body.appendChild(el('<div role="status">Responses will use another model until ' +
        "5:00 PM.</div>"));
    }
    const turn = ["limit", "error"].includes(reply.event) ? null
      : into || addAssistantTurn(render);
    if (turn && reply.artifact) turn.artifact = reply.artifact;
    const st = stopper();
    const wait = (secs) => Promise.race([sleep(secs), st.promise]);
    if (turn && reply.pause_before > 0 && !from) {
      if (CLAUDE) turn.thought = "Let me think about how to do this.";
      await think(turn, reply.pause_before, render, wait);
    } else {
      await wait(reply.pause_before);
    }
    if (reply.event === "limit" || reply.event === "error") stopped = null;
    if (reply.event === "limit") {
      streaming = false;
      updateButtons();
      body.appendChild(el('<div role="alert" class="limit">' + (CLAUDE
        ? "You are out of free messages until 4 PM."
        : "You've reached our limit of messages per hour. Please try again later.") +
        "</div>"));
      return;
    }
    if (reply.event === "error") {
      streaming = false;
      updateButtons();
      toast("Something went wrong while generating the response.", "toast-error");
      return;
    }
    if (reply.event === "retry") {
      // The answer failed: a line of error text and a Retry button in the turn, no toast
      // (legacy: the error button's test id; app-shell: no test id, its label only).
      stopped = null;
      streaming = false;
      updateButtons();
      turn.md.classList.remove("result-streaming");
      const err = el('<div class="retry-row"><span>There was an error generating a ' +
        "response</span> " + (APPSHELL ? '<button type="button" aria-label="Retry">Retry' +
        "</button>" : '<button data-testid="regenerate-thread-error-button">Retry</button>') +
        "</div>");
      (CLAUDE || APPSHELL ? turn.node : turn.actions.parentElement).appendChild(err);
      err.querySelector("button").addEventListener("click", () => regenerate(turn, render, err));
      return;
    }
    if (reply.event === "delivery") {
      stopped = null;
      streaming = false;
      updateButtons();
      turn.md.classList.remove("result-streaming");
      if (APPSHELL) {
        deliveryFailed(turn, render);
        return;
      }
      const err = el('<div class="delivery"><div class="text-token-text-error">Message ' +
        "delivery timed out</div><button data-testid=\"regenerate-thread-error-button\">" +
        "Regenerate</button></div>");
      (CLAUDE ? turn.node : turn.actions.parentElement).appendChild(err);
      err.querySelector("button").addEventListener("click", () => regenerate(turn, render, err));
      return;
    }
    const pauses = (reply.pauses || []).slice();
    const renders = [];
    let shown = from || 0;
    let last = now();
    const cut = reply.event === "cut" && !from;
    const end = reply.event === "drop" || cut ? Math.min(reply.drop_at, md.length) : md.length;
    while (shown < end && !st.is) {
      await wait(0.016);
      if (st.is) break;
      const t = now();
      let next = Math.min(end, shown + Math.max(1, Math.round((t - last) / 1000 * reply.rate)));
      last = t;
      if (pauses.length && next >= pauses[0][0]) {
        next = Math.max(shown, Math.min(next, pauses[0][0]));
      }
      shown = next;
      turn.shown = md.slice(CLAUDE && from ? from : 0, shown);
      renderInto(turn, turn.shown, render);
      renders.push([now(), shown]);
      if (pauses.length && shown >= pauses[0][0]) {
        if (render.early_actions && !turn.actions.children.length) addActions(turn, md, render);
        if (hideStop || render.flash_actions) {
          await think(turn, pauses.shift()[1], render, wait);  // a preamble, then more thinking
        } else {
          await wait(pauses.shift()[1]);
        }
        last = now();
      }
    }
    if (reply.event === "never" && !st.is) {
      await st.promise;  // the stop button stays until someone presses it
    }
    const partial = st.is;
    stopped = null;
    if (reply.event === "drop") {
      streaming = false;
      updateButtons();
      turn.md.classList.remove("result-streaming");
      turn.actions.appendChild(el('<div>Network connection lost. <button ' +
        'data-testid="regenerate-thread-error-button">Retry</button></div>'));
      toast("Network connection lost. Attempting to reconnect...", "toast-error");
      return;
    }
    const final = partial ? turn.shown || "" : md.slice(CLAUDE && from ? from : 0, end);
    turn.shown = final;
    renderInto(turn, final, render);
    streaming = false;
    updateButtons();
    finishTurn(turn, final, render);
    if (cut && !partial) {
      showContinue(turn, reply, render);
      return;
    }
    const finishT = now();
    window.__chatsite.finishes.push(finishT);
    window.__chatsite.renders = renders;
    fetch("/api/finished", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({conversation_id: conversationId, t: finishT, renders,
        length: final.length, stopped: partial})});
  }

  // The app-shell page has no test ids: the error in the unit, and the action row
  // whose regenerate button opens a menu; its first item regenerates.
  function deliveryFailed(turn, render) {
    const err = turn.node.appendChild(el('<div class="delivery"><div ' +
      'class="text-token-text-error">Message delivery timed out</div></div>'));
    addActions(turn, "", render);
    const regen = turn.actions.querySelector('button[aria-label="' + L.regen + '"]');
    regen.addEventListener("click", () => {
      const menu = body.appendChild(el('<div role="menu" class="menu"></div>'));
      const item = menu.appendChild(el('<div role="menuitem" tabindex="0"></div>'));
      item.textContent = L.regen;
      item.addEventListener("click", () => {
        menu.remove();
        regenerate(turn, render, err);
      });
    });
  }

  // An answer cut at a length limit (ChatGPT: "Continue generating", the rest
  // grows in the same message) or Claude's tool-use limit ("Continue": the rest
  // comes as a new message).
  function showContinue(turn, reply, render) {
    const row = CLAUDE
      ? el('<div class="tool-limit">Claude reached its tool use limit for this turn. ' +
        "<button>Continue</button></div>")
      : el('<div class="continue-row"><button data-testid="continue-generating-button">' +
        "Continue generating</button></div>");
    thread.appendChild(row);
    row.querySelector("button").addEventListener("click", async () => {
      row.remove();
      streaming = true;
      updateButtons();
      if (CLAUDE) {
        await stream(reply, render, null, reply.drop_at + 2);
      } else {
        turn.actions.replaceChildren();
        await stream(reply, render, turn, reply.drop_at);
      }
    });
  }

  async function regenerate(turn, render, err) {
    err.remove();
    streaming = true;
    updateButtons();
    const resp = await fetch("/api/regenerate", {method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({conversation_id: conversationId})});
    const r = await resp.json();
    turn.md.innerHTML = "";
    turn.actions.replaceChildren();
    await stream(r.reply, render, turn);
  }

  // --- a saved conversation -----------------------------------------------------
  async function loadConversation() {
    const resp = await fetch("/api/conversation/" + conversationId);
    if (!resp.ok) {
      toast("Unable to load conversation " + conversationId, "toast-error");
      return;
    }
    const data = await resp.json();
    layout = data.render.turn_layout;
    windowSize = data.render.window || 6;
    for (const t of data.turns) {
      if (t.role === "user") addUserTurn(t.text);
      else {
        answerModel = t.model || "";
        const turn = addAssistantTurn(data.render);
        if (t.artifact) turn.artifact = t.artifact;
        if (t.live) {
          // Still being written on the server: go on from where it got to.
          streaming = true;
          updateButtons();
          const from = t.live.from;
          if (from) renderInto(turn, t.text.slice(0, from), data.render);
          stream(t.live.reply, {...data.render, result_streaming: true}, turn, from);
          continue;
        }
        renderInto(turn, t.text, data.render);
        finishTurn(turn, t.text, data.render);
      }
    }
  }

  // The other copy buttons a driver must not take for the answer's: a code
  // block header's "Copy" (the code only) and the user's "Copy message".
  document.addEventListener("click", (e) => {
    const head = e.target.closest('[data-markdown-copy="exclude"] button');
    const user = e.target.closest('button[aria-label="' + L.copyMsg + '"]');
    if (head) {
      const block = head.closest('[data-markdown-copy="code-block"]');
      navigator.clipboard.writeText(block.querySelector("code, .cm-content").textContent);
    } else if (user) {
      navigator.clipboard.writeText(user.closest('[class~="group/user-message"], section')
        .textContent);
    }
  });

  updateButtons();
  if (SITE.dialog) openDialog(SITE.dialog);
  if (conversationId) loadConversation();
})();
