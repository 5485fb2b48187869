"""The main screen and its parts: the panes and their fit at any size (layout), what the
keys and the workers do with them (screen), the loop's part (loop_controller), the
target's and the LLM's switches (targets, llm_switch), a resumed session's view
(resumed), and the protocols the parts are typed against instead of the screen (host).
"""
