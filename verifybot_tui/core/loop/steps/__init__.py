"""The steps of one attempt, each a module of its own: ask, extract, approve, install, run,
verify, feed back.

The verify loop (core/loop/verify_loop) is the short driver that calls them in order;
the steps take the loop's shared state (``state.LoopState``) and import nothing of the
driver, so the loop for files given whole (files_run) reuses them as they are.
"""
