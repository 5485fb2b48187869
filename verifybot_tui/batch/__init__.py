"""Loops run headless and many at once, for both front ends: ``headless`` (the answers
nobody is there to give, one recipe to its end), ``cells`` (a compare's cells),
``compare`` (the matrix run and its report files), ``race`` (one prompt to several LLMs,
the first VERIFIED wins). cli/ prints them; the app's compare table and race view show
them as they go.
"""
