#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Minimal QMP client (stdlib only).

  qmp.py SOCKET [--event NAME] [--timeout S] CMD [CMD...]

Each CMD is a QMP command as JSON, e.g. '{"execute": "system_reset"}'.
Prints each command's reply; exits 1 if one is an error.  With --event,
waits after the commands until QEMU emits the event NAME (e.g.
DEVICE_DELETED), at most --timeout seconds (60).
"""
import argparse
import json
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("--event")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("cmds", nargs="+")
    args = ap.parse_args()

    deadline = time.monotonic() + args.timeout
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(args.timeout)
    sock.connect(args.socket)
    stream = sock.makefile("rwb")
    seen = set()

    def message():
        line = stream.readline()
        if not line:
            raise SystemExit("qmp.py: QEMU closed the connection")
        msg = json.loads(line)
        if "event" in msg:
            seen.add(msg["event"])
        return msg

    message()                                   # the greeting
    rc = 0
    for cmd in ['{"execute": "qmp_capabilities"}'] + args.cmds:
        stream.write(cmd.encode() + b"\n")
        stream.flush()
        while True:
            msg = message()
            if "return" in msg or "error" in msg:
                break
        if "error" in msg:
            print(json.dumps(msg["error"]))
            rc = 1
        elif cmd in args.cmds:
            print(json.dumps(msg["return"]))
    while args.event and args.event not in seen:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            message()
        except socket.timeout:
            print(f"qmp.py: no {args.event} in {args.timeout:.0f} s")
            return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
