"""dom_markdown.js on markup shaped like the real sites' (the copy button's fallback).

The snippets follow the layouts in the chat-sites reference: ChatGPT's
CodeMirror viewer (spans and <br> lines, or .cm-line divs) under a language
header, the older hljs `code.language-xxx` with its trailing newline, Claude's
code groups, the hidden "You said:" / "ChatGPT said:" headings, and the
markdown around them (lists, tables, quotes, math, links).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from browser_fixtures import CHROMIUM
from playwright.async_api import async_playwright

from verifybot_tui.llm.browser.chromium import launch_args
from verifybot_tui.llm.browser.page_script import script_part

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.timeout(60)]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def to_markdown() -> AsyncIterator:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=launch_args())
        page = await browser.new_page()
        await page.add_script_tag(content=script_part("dom_markdown.js"))

        async def convert(html: str, selector: str = "#root") -> str:
            await page.set_content(f'<div id="root">{html}</div>')
            await page.add_script_tag(content=script_part("dom_markdown.js"))
            return await page.evaluate("s => vbDomToMarkdown(document.querySelector(s))",
                                       selector)

        yield convert
        await browser.close()


CM_TURN = """
<article data-testid="conversation-turn-2" data-turn="assistant">
<h6 class="sr-only">ChatGPT said:</h6>
<div data-message-author-role="assistant"><div class="markdown prose">
<p>Run this:</p>
<pre class="overflow-visible!"><div class="contain-inline-size rounded-2xl">
<div class="flex items-center text-xs">Python</div>
<div class="sticky top-9"><div><button aria-label="Copy"><svg></svg>Copy</button></div></div>
<div class="overflow-y-auto p-4"><div class="cm-editor"><div class="cm-scroller">
<div class="cm-content"><span class="x">import</span> sys<br><br><span>if</span> x &lt; 1:<br>\
\tprint("a &amp; b")  <br></div>
</div></div></div></div></pre>
</div></div>
<div><button data-testid="copy-turn-action-button">c</button></div>
</article>"""


async def test_codemirror_block_with_header_and_hidden_heading(to_markdown) -> None:  # noqa: ANN001
    md = await to_markdown(CM_TURN)
    assert md == ('Run this:\n\n```python\nimport sys\n\nif x < 1:\n\tprint("a & b")  \n'
                  "```")
    assert "ChatGPT said" not in md and "Copy" not in md


CODE_BLOCKS = {
    "codemirror_lines_as_divs": (
        '<pre><div>C++</div><div class="cm-editor"><div class="cm-content">'
        '<div class="cm-line">int main() {</div><div class="cm-line"><br></div>'
        '<div class="cm-line">  return 0;</div><div class="cm-line">}</div>'
        "</div></div></pre>",
        "```cpp\nint main() {\n\n  return 0;\n}\n```"),
    "old_hljs_block_takes_its_language_from_the_class": (
        '<p>Old layout:</p><pre><div><div><span>bash</span><button>Copy code</button></div>'
        '<div><code class="!whitespace-pre hljs language-bash"><span class="hljs-built_in">'
        'echo</span> "x"\nls -l\n</code></div></div></pre>',
        'Old layout:\n\n```bash\necho "x"\nls -l\n```'),
    "claude_code_group": (
        '<div class="standard-markdown"><p>Here:</p><div role="group" aria-label="python code">'
        '<div>python</div><button aria-label="Copy to clipboard">c</button>'
        '<pre class="code-block__code"><code class="language-python">x = 1\n</code></pre>'
        "</div></div>",
        "Here:\n\n```python\nx = 1\n```"),
    "a_fence_inside_the_code_gets_a_longer_fence": (
        '<pre><code class="language-markdown">```js\nx\n```\n</code></pre>',
        "````markdown\n```js\nx\n```\n````"),
}


@pytest.mark.parametrize("case", list(CODE_BLOCKS))
async def test_code_block_layouts(to_markdown, case: str) -> None:  # noqa: ANN001
    html, markdown = CODE_BLOCKS[case]
    assert await to_markdown(html) == markdown


async def test_markdown_around_the_code(to_markdown) -> None:  # noqa: ANN001
    html = """<h2>Title <code>x</code></h2>
<p>Some <strong>bold</strong>, <em>italic</em>, <a href="https://e.x/a">a link</a>,
and a soft break.</p>
<ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul>
<ol start="3"><li>three</li><li>four</li></ol>
<blockquote><p>quoted</p></blockquote>
<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>x|y</td></tr></tbody></table>
<p>Math <span class="katex"><span class="katex-mathml"><math><semantics>\
<annotation encoding="application/x-tex">x^2</annotation></semantics></math></span>\
<span class="katex-html" aria-hidden="true">x2</span></span> inline.</p>
<hr>"""
    assert await to_markdown(html) == (
        "## Title `x`\n\n"
        "Some **bold**, *italic*, [a link](https://e.x/a),\nand a soft break.\n\n"
        "- one\n  - nested\n- two\n\n"
        "3. three\n4. four\n\n"
        "> quoted\n\n"
        "| a | b |\n| --- | --- |\n| 1 | x\\|y |\n\n"
        "Math $x^2$ inline.\n\n"
        "---")


async def test_maths_from_its_source_and_mathml(to_markdown) -> None:  # noqa: ANN001
    # KaTeX as HTML only (chatgpt.com 2026-09): the TeX in data-math-source; plain MathML
    # with a TeX annotation; display maths alone in its block or in .katex-display; an
    # item holding only maths stays inline.
    html = """<p><span role="math" data-math-source="E=mc^2"><span class="katex-html" \
aria-hidden="true">E=mc2</span></span>&#8203;</p>
<p>With <math><semantics><mi>x</mi><annotation encoding="application/x-tex">x_1</annotation>\
</semantics></math> and <span role="math" data-math-source="\\alpha">α</span>.</p>
<div class="katex-display"><span class="katex"><span class="katex-mathml"><math display="block">\
<semantics><annotation encoding="application/x-tex">\\sum_i i</annotation></semantics></math>\
</span><span class="katex-html" aria-hidden="true">∑i</span></span></div>
<ul><li><p><span role="math" data-math-source="n">n</span></p></li></ul>"""
    assert await to_markdown(html) == (
        "$$E=mc^2$$\n\nWith $x_1$ and $\\alpha$.\n\n$$\\sum_i i$$\n\n- $n$")


async def test_a_list_of_one_paragraph_items_is_tight(to_markdown) -> None:  # noqa: ANN001
    tight = "<ol><li><p>one</p></li><li><p>two</p><ul><li><p>sub</p></li></ul></li></ol>"
    assert await to_markdown(tight) == "1. one\n2. two\n   - sub"
    loose = "<ul><li><p>one</p><p>more</p></li><li><p>two</p></li></ul>"
    assert await to_markdown(loose) == "- one\n\n  more\n\n- two"
