"""index.html as people read it: 20 tasks x 6 LLMs in real (headless) Chromium at 1280
and 800 pixels wide. No two labels of a chart overlap, every pass@k series can be seen
even where several are equal, count axes are whole numbers, and the grid reads without
colour (a letter in every cell). Screenshots are kept beside the test's files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verifybot_tui.core.verify.compare.matrix import Cell, Matrix
from verifybot_tui.core.verify.compare.report import index_html

CHROMIUM = "/usr/bin/chromium"
LLMS = ["gpt-5.1-thinking", "claude-sonnet-5", "gemini-3-pro", "deepseek-v4", "qwen-3-coder",
        "replay:benchmarks/embedded/*/wrong.md"]
TASKS = [f"task-{i:02d}-{name}" for i, name in enumerate(
    ["adler32-mps2", "bit-ops-mps2", "crc16-ccitt-stm32", "crc32-local", "crc8-maxim-avr",
     "debounce-state-machine-lm3s", "fixed-point-iir-lm3s", "fletcher16-avr",
     "intel-hex-local", "median-filter-stm32", "modbus-crc16-local", "moving-average-avr",
     "pow2-ring-buffer-local", "q15-saturate-local", "sensor-log-parser-pi",
     "slip-decoder-local", "systick-ring-buffer-stm32", "tick-wraparound-lm3s",
     "timer1-ctc-avr", "uart-frame-parser-stm32"])]


def _matrix() -> Matrix:
    """Every LLM verifies the same tasks at the same answers, except the last two: equal
    pass@k curves for four LLMs (the case that hid lines before), one LLM with an
    infrastructure failure, one never right."""
    cells = []
    for ti, task in enumerate(TASKS):
        for li, llm in enumerate(LLMS):
            at = None if li == 5 or ti % 4 == 3 else 1 + ti % 3
            infra = "HTTP 429: rate limit" if li == 4 and ti == 0 else None
            cells.append(Cell(recipe=task, llm=llm, run=1,
                              status="LLM_ERROR" if infra else "VERIFIED" if at else "FAILED",
                              attempts=at or 3, verified_at=None if infra else at,
                              seconds=5.0 + ti * 3 + li, first_answer_seconds=2.0,
                              max_attempts=3, infrastructure=infra,
                              failures=(["infrastructure"] if infra else
                                        [] if at else ["output", "timeout"][: 1 + ti % 2]),
                              workspace=f"cells/{task}/{li}-1",
                              transcript=f"/x/raw_md/20261129_{task}.md"))
    return Matrix(started="2026-11-29T10:00:00+00:00", recipes=TASKS, llms=LLMS, cells=cells,
                  version="0.1.0", dates={t: "2026-11-26" for t in TASKS})


OVERLAPS = """() => {
  const found = [];
  for (const svg of document.querySelectorAll('svg.chart')) {
    const boxes = [...svg.querySelectorAll('text')]
      .map(t => [t.textContent, t.getBoundingClientRect()]);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, r] = boxes[i], [b, s] = boxes[j];
      const w = Math.min(r.right, s.right) - Math.max(r.left, s.left);
      const h = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
      if (w > 0.5 && h > 0.5) found.push(svg.dataset.chart + ': ' + a + ' / ' + b);
    }
  }
  return found;
}"""

HIDDEN_SERIES = """() => {
  const hidden = [];
  const svg = document.querySelector('svg[data-chart="pass-at-k"]');
  svg.scrollIntoView();  // elementFromPoint sees the viewport only
  for (const line of svg.querySelectorAll('polyline.series')) {
    const llm = line.dataset.llm;
    const marks = [...svg.querySelectorAll('.mark')].filter(m => m.dataset.llm === llm);
    const seen = marks.filter(m => {
      const r = m.getBoundingClientRect();
      const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return top === m || m.contains(top);
    });
    if (marks.length === 0 || seen.length < marks.length)
      hidden.push(llm + ' ' + seen.length + '/' + marks.length);
  }
  return hidden;
}"""


@pytest.mark.parametrize("width", [1280, 800])
def test_the_page_at_20_tasks_by_6_llms_is_readable(width: int, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    page_file = tmp_path / "index.html"
    page_file.write_text(index_html(_matrix()), encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto(page_file.as_uri())
            page.screenshot(path=str(tmp_path / f"compare-{width}.png"), full_page=True)
            assert page.evaluate(OVERLAPS) == []
            assert page.evaluate(HIDDEN_SERIES) == []
            assert page.locator('svg[data-chart="pass-at-k"] polyline.series').count() == 6
            # count axes are whole numbers
            ticks = page.eval_on_selector_all('svg[data-chart="failure-kinds"] text.tick',
                                              "ts => ts.map(t => t.textContent)")
            assert ticks and all(re.fullmatch(r"\d+", t) for t in ticks), ticks
            # the infrastructure has its own bar, and its own letter in the grid
            assert page.locator('svg[data-chart="failure-kinds"] '
                                'rect[data-kind="infrastructure"]').count() == 1
            letters = page.locator("table.grid td").all_inner_texts()
            assert len(letters) == 20 * 6
            assert all(re.match(r"^(V\d|F|I|-)( out)?$", t.strip()) for t in letters), letters
            assert sum(t.startswith("I") for t in letters) == 1
            # each cell links to its transcript, inside the report's folder
            href = page.locator("table.grid td a").first.get_attribute("href")
            assert href is not None and href.startswith("./cells/") and "/raw_md/" in href
            # the page fits: no chart wider than the window
            widths = page.evaluate("() => [...document.querySelectorAll('svg.chart')]"
                                   ".map(s => s.getBoundingClientRect().right)")
            assert max(widths) <= width
        finally:
            browser.close()
    assert (tmp_path / f"compare-{width}.png").stat().st_size > 20_000


def test_a_workspace_named_like_a_url_scheme_links_inside_the_folder() -> None:
    """A compare.json from others (``compare --report DIR``) names each cell's workspace:
    "javascript:..." there must stay a relative file link, never a script."""
    m = _matrix()
    m.cells[0].workspace = "javascript:alert(document.domain)//"
    page = index_html(m)
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and all(h.startswith(("./", "#")) for h in hrefs), hrefs[:5]
    assert 'href="./javascript:alert' in page
