#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Minimal QEMU guest agent client (stdlib only).

  qga.py SOCKET ping [--timeout S]          exit 0 once the agent answers
  qga.py SOCKET exec [-b] -- CMD [ARG...]   run CMD in the guest
  qga.py SOCKET push FILE PATH              copy FILE to PATH in the guest

exec copies the command's stdout/stderr to ours and exits with its status
(128+N if killed by signal N); with -b it starts CMD and returns at once.

Every request uses its own short connection: QEMU's chardev accepts one
client at a time, so holding the socket while a long command runs would
block every other client of the same guest.

SOCKET virsh:DOMAIN reaches the agent of a libvirt domain through `virsh
qemu-agent-command` instead: libvirt holds the agent's socket itself.
"""
import argparse
import base64
import json
import os
import socket
import sys
import time

DELIMITER = b"\xff"


class QgaError(Exception):
    pass


class Agent:
    def __init__(self, path, timeout):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self._sync()

    def close(self):
        self.sock.close()

    def _read_more(self):
        data = self.sock.recv(65536)
        if not data:
            raise QgaError("agent socket closed")
        self.buf += data

    def _read_message(self):
        """One JSON object from the stream."""
        decoder = json.JSONDecoder()
        while True:
            text = self.buf.lstrip(b" \r\n\t").decode("utf-8", "replace")
            if text:
                try:
                    obj, end = decoder.raw_decode(text)
                    self.buf = text[end:].encode()
                    return obj
                except json.JSONDecodeError:
                    pass
            self._read_more()

    def _sync(self):
        # A leading 0xff resets the agent's parser; its answer to
        # guest-sync-delimited starts with 0xff, so whatever a previous
        # client left unread in the channel is skipped up to it.
        token = int.from_bytes(os.urandom(4), "little") >> 1 | 1
        self.sock.sendall(DELIMITER + self._encode("guest-sync-delimited", {"id": token}))
        while True:
            while DELIMITER not in self.buf:
                self.buf = b""
                self._read_more()
            self.buf = self.buf[self.buf.index(DELIMITER) + 1:]
            if self._read_message().get("return") == token:
                return

    @staticmethod
    def _encode(command, arguments=None):
        msg = {"execute": command}
        if arguments is not None:
            msg["arguments"] = arguments
        return json.dumps(msg).encode()

    def call(self, command, arguments=None):
        self.sock.sendall(self._encode(command, arguments))
        reply = self._read_message()
        if "error" in reply:
            raise QgaError(reply["error"].get("desc", str(reply["error"])))
        return reply["return"]


class VirshAgent:
    """The agent of libvirt domain DOMAIN, one virsh call per request."""

    def __init__(self, domain, timeout):
        self.domain = domain
        self.timeout = max(1, int(timeout))

    def close(self):
        pass

    def call(self, command, arguments=None):
        import subprocess  # only here: kept out of every other call's start
        r = subprocess.run(["virsh", "qemu-agent-command", "--timeout", str(self.timeout),
                            self.domain, Agent._encode(command, arguments).decode()],
                           capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise QgaError(r.stderr.strip() or f"virsh exited with {r.returncode}")
        reply = json.loads(r.stdout)
        if "error" in reply:
            raise QgaError(reply["error"].get("desc", str(reply["error"])))
        return reply["return"]


def connect(path, timeout):
    if path.startswith("virsh:"):
        return VirshAgent(path[len("virsh:"):], timeout)
    return Agent(path, timeout)


def call(path, timeout, command, arguments=None):
    agent = connect(path, timeout)
    try:
        return agent.call(command, arguments)
    finally:
        agent.close()


def ping(path, timeout):
    deadline = time.monotonic() + timeout
    while True:
        try:
            call(path, 2, "guest-ping")
            return 0
        except (OSError, QgaError):
            if time.monotonic() > deadline:
                return 1
            time.sleep(0.5)


def poll_delay(delay, elapsed):
    """The wait before the next guest-exec-status, after waiting DELAY
    last, ELAPSED seconds into the command.  Most commands end within a
    second: up to then, 20 ms doubling to 0.1 s, since a slower poll would
    add its interval to each of the thousands a test run makes.  Then a
    tenth of the time the command has run, up to a second: under TCG each
    poll wakes the guest, about 8 ms of its CPU (a new connection, a sync
    and the status), so a long command polled every 0.1 s cost its guest
    7 % of a CPU, and is now seen done at most 10 % late."""
    quick = min(max(delay * 2, 0.02), 0.1)
    return min(1.0, max(quick, elapsed / 10))


def run(path, timeout, argv, background):
    pid = call(path, timeout, "guest-exec", {
        "path": argv[0], "arg": argv[1:], "capture-output": not background,
    })["pid"]
    if background:
        return 0
    start = time.monotonic()
    delay = 0
    while True:
        status = call(path, timeout, "guest-exec-status", {"pid": pid})
        if status["exited"]:
            break
        delay = poll_delay(delay, time.monotonic() - start)
        time.sleep(delay)
    for key, stream in (("out-data", sys.stdout), ("err-data", sys.stderr)):
        stream.flush()
        stream.buffer.write(base64.b64decode(status.get(key, "")))
        stream.flush()
    if status.get("out-truncated") or status.get("err-truncated"):
        print("qga: output truncated by the guest agent", file=sys.stderr)
    if "signal" in status:
        return 128 + status["signal"]
    return status.get("exitcode", 1)


# The agent takes a request of at most 48 MiB; 1 MiB chunks keep each
# reply quick.
PUSH_CHUNK = 1 << 20


def push(path, timeout, local, remote):
    agent = connect(path, timeout)
    try:
        handle = agent.call("guest-file-open", {"path": remote, "mode": "w"})
        with open(local, "rb") as f:
            while chunk := f.read(PUSH_CHUNK):
                agent.call("guest-file-write", {
                    "handle": handle,
                    "buf-b64": base64.b64encode(chunk).decode(),
                })
        agent.call("guest-file-close", {"handle": handle})
    finally:
        agent.close()
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("socket")
    parser.add_argument("--timeout", type=float, default=10,
                        help="seconds per agent request (ping: in total)")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("ping")
    ex = sub.add_parser("exec")
    ex.add_argument("-b", dest="background", action="store_true")
    ex.add_argument("argv", nargs=argparse.REMAINDER)
    pu = sub.add_parser("push")
    pu.add_argument("file")
    pu.add_argument("path")
    args = parser.parse_args()

    if args.action == "ping":
        return ping(args.socket, args.timeout)
    if args.action == "push":
        try:
            return push(args.socket, args.timeout, args.file, args.path)
        except (OSError, QgaError) as e:
            print(f"qga: {args.socket}: {e}", file=sys.stderr)
            return 125
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        parser.error("exec needs a command")
    try:
        return run(args.socket, args.timeout, argv, args.background)
    except (OSError, QgaError) as e:
        print(f"qga: {args.socket}: {e}", file=sys.stderr)
        return 125


if __name__ == "__main__":
    sys.exit(main())
