#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Minimal QMP client (stdlib only).

  qmp.py SOCKET [--event NAME] [--migration] [--timeout S] [CMD...]

Each CMD is a QMP command as JSON, e.g. '{"execute": "system_reset"}'.
Prints each command's reply; exits 1 if one is an error.  With --event,
waits after the commands until QEMU emits the event NAME (e.g.
DEVICE_DELETED), at most --timeout seconds (60).  With --migration,
polls query-migrate after them until the migration has ended, prints its
last reply and exits 1 unless it completed.
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
    ap.add_argument("--migration", action="store_true")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("cmds", nargs="*")
    # the commands may follow --event or --migration
    args = ap.parse_intermixed_args()

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
    while args.migration:
        stream.write(b'{"execute": "query-migrate"}\n')
        stream.flush()
        msg = message()
        while "return" not in msg and "error" not in msg:
            msg = message()
        # {} until the incoming side has started
        status = msg["return"].get("status", "none") if "return" in msg \
            else "error"
        if status in ("completed", "failed", "cancelled", "error"):
            print(json.dumps(msg.get("return", msg.get("error"))))
            rc = rc or int(status != "completed")
            break
        if time.monotonic() > deadline:
            print(f"qmp.py: migration still {status} after "
                  f"{args.timeout:.0f} s")
            return 1
        time.sleep(0.05)
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
