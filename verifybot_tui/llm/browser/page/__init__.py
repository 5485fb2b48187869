"""One chat page driven in Chromium, in the parts `BrowserLLM` (../driver.py) is made of.

`session` holds the browser and its page, what the page pushes (`observed`) and
every failure with its evidence; on it stand `opening` (the page opened at the
new chat or a saved conversation, the model picked), `sending` (a prompt typed
exactly and proven sent), `reading` (the answer read back as markdown) and
`waiting` (the answer's end: seen quickly, never too early).
"""
