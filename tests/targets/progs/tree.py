"""A process tree that tries to outlive its run: every way short of a double fork.

Each process writes "PID <n>" on stdout, then sleeps. The shapes:
M (the program) -> A -> A1 (plain grandchild), A2 (moves to its own group)
M -> B -> B1 (ignores SIGTERM), B2 (own group); B exits at once: both orphans
M -> C (calls setsid, its parent stays) -> C1 (in C's new session)
"""

import os
import signal
import time


def say() -> None:
    os.write(1, f"PID {os.getpid()}\n".encode())


def spawn(body) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(0)
    return pid


def sleep_forever() -> None:
    time.sleep(300)


def a2() -> None:
    os.setpgid(0, 0)
    say()
    sleep_forever()


def a() -> None:
    say()
    spawn(lambda: (say(), sleep_forever()))
    spawn(a2)
    sleep_forever()


def b1() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    say()
    sleep_forever()


def b() -> None:
    say()
    spawn(b1)
    spawn(a2)


def c() -> None:
    os.setsid()
    say()
    spawn(lambda: (say(), sleep_forever()))
    sleep_forever()


say()
for body in (a, b, c):
    spawn(body)
sleep_forever()
