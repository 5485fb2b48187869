"""The local target: programs run on this machine, streamed, their whole tree stopped.

``target`` is the ``LocalTarget`` the loop drives; it runs each program in its own
``run_folder`` through ``processes``, which starts it with ``launch`` (its output read
by ``reader``), runs a compiled program's build first in the same sandbox
(``build_step``) and makes an ``outcome`` of what came of it. The modules in their
order, each importing only those below it: ``target``, ``processes``, ``build_step``,
``launch``, ``outcome``, ``run_folder``, ``reader``.
"""
