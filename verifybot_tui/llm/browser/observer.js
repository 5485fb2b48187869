// Watches the chat page and pushes what the driver needs to Python on every
// change, so the driver waits on events instead of polling: the page's
// snapshot (the last answer's text as markdown, delta-encoded, whether the page
// is busy or shows the finished-action buttons, the user turns, the facts).
// A part of the page script (page_script.py puts the parts in order, in one
// block of one scope, in the top window only).

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

