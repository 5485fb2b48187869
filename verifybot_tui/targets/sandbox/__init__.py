"""The bubblewrap sandbox everything an answer brings runs in (a program, its build,
QEMU), where bubblewrap works: any user, as long as the kernel lets unprivileged
users make namespaces, or root.

``view`` is what a sandbox shows (the mounts, the dropped powers, the environment),
``limits`` what one run may use and which limit it hit, ``init_script`` the init of
ours that runs the program in it (and a build first) and names what it left
running, ``bubblewrap`` the command line that puts them together (or says why no
sandbox can be made here). Below it all, ``targets.containment`` holds what keeps a
run's processes contained with or without a sandbox.
"""
