"""Boards on a labgrid farm (``backend = "labgrid"``): places as targets, shared by many users.

A team's labgrid coordinator knows the places; exporters beside the boards publish
their serial ports. VerifyBot talks to the coordinator with labgrid's own client
session (session.py), holds a place for one run (claim.py) with a per-user lock
that tells a live VerifyBot from a killed one (locks.py), and flashes and reads
the UART through the place's resources (run.py, serial_tcp.py).
"""
