"""Keeping a local program's processes contained: its tree, and what escapes it.

The process group and the walk over parent links (``tree``) find everything a
program starts unless a process both leaves the session (``setsid``) and loses
its parent (a double fork). More guards, each in its module:

- a parent-death signal on the direct child (``targets.local.launch``), so the
  program dies with VerifyBot even when VerifyBot is SIGKILLed;
- a cgroup per run (``cgroups``), where the machine lets us make one (a writable
  cgroup v2 folder, as under a root container or a delegated user slice): every
  process the program starts stays in it whatever it does, and ``cgroup.kill``
  ends them all; what is still there after the tree was stopped had escaped, and
  is named in the verdict;
- a marker variable ``VERIFYBOT_RUN=<token>`` in each run's environment
  (``markers``), which every process the program starts inherits (a setsid double
  fork too): after the run, /proc/*/environ of our user is searched for the token,
  so what escaped is found, named and killed even where no cgroup can be made (a
  process that wipes its environment or execs with ``env -i`` is not found);
- the cgroup and marker of each run are recorded (``targets.live_runs``), so the
  next start can kill what a SIGKILLed VerifyBot left behind.

Where bubblewrap works, a run goes into a sandbox with its own PID namespace
(``targets.sandbox``): the program sees and signals only its own processes, and
the kernel kills everything in it when its first process ends. The guards above
stay on as a second line wherever the sandbox was not seen to end as a whole
(``leftovers``). Where there is no sandbox, three more keep up with what the
namespace would have stopped:

- VerifyBot makes itself a child subreaper (``subreaper``), so a double-forked
  process that wiped its environment and left the cgroup is reparented to
  VerifyBot rather than to init, and is found as an adopted child;
- the marker check reads every user's processes when VerifyBot runs as root,
  so a child that changed its uid is still found;
- leftovers are frozen (SIGSTOP) until no new one appears, then KILLed
  (``markers.freeze_and_kill``), so a daemon that keeps re-forking cannot outrun it.

The modules in their order, each importing only those below it: ``leftovers``,
``subreaper``, then ``tree``, ``markers`` and ``cgroups``, all on ``proctable``.
"""
