// The test site's page: a chatgpt.com look-alike (or claude.ai with
// variant "claude") with a ProseMirror-like prompt box, send/stop buttons,
// streamed scripted answers and the page states a driver must recognise.
(function () {
  const SITE = window.__SITE;
  const CLAUDE = SITE.variant === "claude";
  const PREFIX = CLAUDE ? "/claude" : "";
  const now = () => performance.timeOrigin + performance.now();
  const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));
  const el = (html) => {
    const t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  };
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

  let conversationId = SITE.conversation_id || "";
  let streaming = false;
  let turnCount = 0;
  let stopLabelOnSend = false;
  let stopped = null;  // {promise, done()} while an answer streams: the Stop button ends it
  window.__chatsite = {finishes: [], renders: []};

  // --- page skeleton --------------------------------------------------------
  const body = document.body;
  if (SITE.page === "login_buttons") {
    body.appendChild(el('<header><button data-testid="login-button">Log in</button>' +
      '<button data-testid="signup-button">Sign up for free</button></header>'));
  }
  if (!CLAUDE) {
    body.appendChild(el('<nav><a data-testid="create-new-chat-button" href="/">New chat</a></nav>'));
  }
  const thread = body.appendChild(el('<main id="thread"></main>'));
  if (SITE.page === "limit_banner") {
    body.appendChild(el('<div role="alert" class="limit">You\'ve reached our limit of messages ' +
      "per hour. Please wait a few minutes before trying again.</div>"));
  }
  const composer = body.appendChild(CLAUDE
    ? el('<fieldset id="composer"><div contenteditable="true" role="textbox" ' +
      'data-testid="chat-input" class="ProseMirror" aria-label="Write your prompt to Claude">' +
      '<p><br class="ProseMirror-trailingBreak"></p></div><div id="actions"></div></fieldset>')
    : el('<form id="composer"><textarea name="prompt-textarea" style="display:none"></textarea>' +
      '<div id="prompt-textarea" contenteditable="true" class="ProseMirror">' +
      '<p><br class="ProseMirror-trailingBreak"></p></div><div id="actions"></div></form>'));
  composer.addEventListener("submit", (e) => e.preventDefault());
  const box = composer.querySelector("[contenteditable]");
  const actions = composer.querySelector("#actions");
  const toasts = body.appendChild(el('<div id="toasts"></div>'));

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
  box.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      send();
    }
  });

  // --- composer buttons -------------------------------------------------------
  function updateButtons() {
    const hasText = boxText().trim().length > 0;
    let html = "";
    if (streaming) {
      if (CLAUDE) html = '<button aria-label="Stop response">Stop</button>';
      else if (stopLabelOnSend) {
        html = '<button data-testid="send-button" aria-label="Stop streaming">Stop</button>';
      } else html = '<button data-testid="stop-button" aria-label="Stop streaming">Stop</button>';
    } else if (CLAUDE) {
      html = '<button aria-label="Send message"' + (hasText ? "" : " disabled") + ">Send</button>";
    } else if (hasText) {
      html = '<button data-testid="send-button" id="composer-submit-button" ' +
        'aria-label="Send prompt">Send</button>';
    } else {
      html = '<button aria-label="Start voice mode">Voice</button>';
    }
    if (actions.innerHTML !== html) {
      actions.innerHTML = html;
      const b = actions.querySelector("button");
      const label = b.getAttribute("aria-label");
      if (label === "Send prompt" || label === "Send message") b.addEventListener("click", send);
      if (/^Stop/.test(label)) b.addEventListener("click", () => { if (stopped) stopped.done(); });
    }
  }

  // --- turns --------------------------------------------------------------------
  function addUserTurn(text) {
    turnCount++;
    let node;
    if (CLAUDE) {
      node = el('<div class="mb-1"><div data-testid="user-message"></div></div>');
      const m = node.firstElementChild;
      for (const line of text.split("\n")) {
        const p = document.createElement("p");
        p.className = "whitespace-pre-wrap break-words";
        p.textContent = line;
        m.appendChild(p);
      }
    } else {
      node = el(turnTag("user") + '<h5 class="sr-only">You said:</h5>' +
        '<div data-message-author-role="user" data-message-id="u' + turnCount + '">' +
        '<div class="whitespace-pre-wrap"></div></div>' + turnClose());
      node.querySelector(".whitespace-pre-wrap").textContent = text;
    }
    thread.appendChild(node);
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
    if (CLAUDE) {
      node = el('<div data-is-streaming="true" class="group"><div class="font-claude-response">' +
        '<div class="standard-markdown"></div></div>' +
        '<div role="group" aria-label="Message actions" class="turn-actions"></div></div>');
    } else {
      node = el(turnTag("assistant") + '<h6 class="sr-only">ChatGPT said:</h6>' +
        '<div data-message-author-role="assistant" data-message-id="a' + turnCount + '">' +
        '<div class="markdown prose' + (render.result_streaming ? " result-streaming" : "") +
        '"></div></div><div class="turn-actions"></div>' + turnClose());
    }
    thread.appendChild(node);
    return {node, md: node.querySelector(CLAUDE ? ".standard-markdown" : ".markdown"),
      actions: node.querySelector(".turn-actions")};
  }
  function finishTurn(turn, markdown, render) {
    if (CLAUDE) {
      turn.node.setAttribute("data-is-streaming", "false");
    } else {
      turn.md.classList.remove("result-streaming");
    }
    if (!turn.actions.children.length) addActions(turn, markdown, render);
  }
  function addActions(turn, markdown, render) {
    if (render.copy_button) {
      const copy = CLAUDE
        ? el('<button data-testid="action-bar-copy" aria-label="Copy">Copy</button>')
        : el('<button data-testid="copy-turn-action-button" aria-label="Copy">Copy</button>');
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
      turn.actions.appendChild(copy);
    }
    if (!CLAUDE) {
      turn.actions.appendChild(el('<button data-testid="good-response-turn-action-button" ' +
        'aria-label="Good response">+</button>'));
      turn.actions.appendChild(el('<button data-testid="bad-response-turn-action-button" ' +
        'aria-label="Bad response">-</button>'));
    } else {
      turn.actions.appendChild(el('<button aria-label="Retry">Retry</button>'));
    }
  }
  function codeLayout(render) {
    return CLAUDE ? "claude" : render.code_layout;
  }
  function toast(text, testid) {
    toasts.appendChild(el('<div class="toast" role="alert" data-testid="' + testid + '">' +
      esc(text) + "</div>"));
  }

  // --- sending and streaming ------------------------------------------------------
  async function send() {
    const text = boxText();
    if (!text.trim() || streaming) return;
    streaming = true;
    renderBox("", 0);
    let r;
    try {
      const resp = await fetch("/api/send", {method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({conversation_id: conversationId, prompt: text,
          variant: SITE.variant})});
      r = await resp.json();
    } catch (e) {
      streaming = false;
      toast("Network error: the message was not sent.", "toast-error");
      updateButtons();
      return;
    }
    layout = r.render.turn_layout;
    stopLabelOnSend = r.render.stop_label_on_send;
    addUserTurn(text);
    updateButtons();
    if (!conversationId) {
      conversationId = r.conversation_id;
      const final = PREFIX + (CLAUDE ? "/chat/" : "/c/") + conversationId;
      if (!CLAUDE) history.pushState({}, "", "/c/WEB:" + Math.random().toString(36).slice(2));
      setTimeout(() => history.replaceState({}, "", final), r.render.url_delay * 1000);
    }
    await stream(r.reply, r.render);
  }

  async function stream(reply, render) {
    const md = reply.markdown;
    if (reply.event === "downgrade") {
      body.appendChild(el('<div role="status">Responses will use another model until ' +
        "5:00 PM.</div>"));
    }
    const turn = ["limit", "error"].includes(reply.event) ? null : addAssistantTurn(render);
    let resolve;
    const st = {promise: new Promise((r) => { resolve = r; }), is: false};
    st.done = () => { st.is = true; resolve(); };
    stopped = st;
    const wait = (secs) => Promise.race([sleep(secs), st.promise]);
    await wait(reply.pause_before);
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
    const pauses = (reply.pauses || []).slice();
    const renders = [];
    let shown = 0;
    let last = now();
    const end = reply.event === "drop" ? Math.min(reply.drop_at, md.length) : md.length;
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
      turn.shown = md.slice(0, shown);
      turn.md.innerHTML = renderMarkdown(turn.shown, codeLayout(render));
      renders.push([now(), shown]);
      if (pauses.length && shown >= pauses[0][0]) {
        if (render.early_actions && !turn.actions.children.length) addActions(turn, md, render);
        await wait(pauses.shift()[1]);
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
    const final = partial ? turn.shown || "" : md;
    turn.shown = final;
    turn.md.innerHTML = renderMarkdown(final, codeLayout(render));
    streaming = false;
    updateButtons();
    finishTurn(turn, final, render);
    const finishT = now();
    window.__chatsite.finishes.push(finishT);
    window.__chatsite.renders = renders;
    fetch("/api/finished", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({conversation_id: conversationId, t: finishT, renders,
        length: final.length, stopped: partial})});
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
    for (const t of data.turns) {
      if (t.role === "user") addUserTurn(t.text);
      else {
        const turn = addAssistantTurn(data.render);
        turn.md.innerHTML = renderMarkdown(t.text, codeLayout(data.render));
        finishTurn(turn, t.text, data.render);
      }
    }
  }

  updateButtons();
  if (conversationId) loadConversation();
})();
