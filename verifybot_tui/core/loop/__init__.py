"""The verify loop itself.

The pipeline, the events it yields, the prompts it sends and the recorder of what happened.
"""
