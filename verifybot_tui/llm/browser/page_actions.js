// The helpers the driver calls: the prompt box read back and filled, the send,
// stop, continue and regenerate buttons clicked, and the copy capture (the
// site's own markdown of the answer, the OS clipboard untouched).
// A part of the page script (page_script.py puts the parts in order, in one
// block of one scope, in the top window only).

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

