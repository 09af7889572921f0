#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The host's hand in the guest's Ceph scenarios (tests/vm/run --ceph): the
# cluster's daemons run on the host, so a scenario that stops the OSD under
# I/O, or plays a second gateway with a host-side librbd client, asks this
# agent. It listens on host loopback, which the guest reaches through
# QEMU's user networking as 10.0.2.2:PORT. One command per connection, one
# line of shell words: "rbd ARGS...", "ceph ARGS..." (the cluster's conf),
# "testbed stop|start|status [osd|mon|all]" (scripts/ceph-testbed.sh with
# this run's options), "md5 POOL/IMAGE OFFSET LENGTH" (md5 of that range of
# the image as librbd reads it on the host, without shipping the image to
# the guest). The reply is the command's output, then "@rc=N".
#
#   ceph-agent.py PORT_FILE TESTBED_ARGS...
# writes the port it listens on to PORT_FILE and serves until killed.
import hashlib
import os
import shlex
import socket
import socketserver
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTBED = os.path.join(HERE, "..", "..", "scripts", "ceph-testbed.sh")
COMMAND_LIMIT_S = 180


def command_line(words, testbed_args):
    if not words:
        return None
    # The conf's client mount timeout bounds rbd's connection; the ceph CLI
    # needs its own.
    if words[0] == "rbd":
        return ["timeout", str(COMMAND_LIMIT_S), "rbd"] + words[1:]
    if words[0] == "ceph":
        return ["timeout", str(COMMAND_LIMIT_S), "ceph", "--connect-timeout", "30"] + words[1:]
    if words[0] == "testbed" and len(words) >= 2 and words[1] in ("stop", "start", "status"):
        return [TESTBED] + testbed_args + words[1:]
    return None


def image_md5(spec, offset, length):
    """md5 of bytes [offset, offset+length) of an image, read through librbd."""
    export = subprocess.Popen(["timeout", str(COMMAND_LIMIT_S), "rbd", "export", "--no-progress", spec, "-"],
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    digest, pos = hashlib.md5(), 0
    while True:
        chunk = export.stdout.read(1 << 20)
        if not chunk:
            break
        lo, hi = max(offset - pos, 0), min(offset + length - pos, len(chunk))
        if lo < hi:
            digest.update(chunk[lo:hi])
        pos += len(chunk)
    rc = export.wait()
    return (f"{digest.hexdigest()}  -\n" if rc == 0 else "rbd export failed\n"), rc


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode(errors="replace").strip()
        try:
            words = shlex.split(line)
        except ValueError:
            words = []
        if len(words) == 4 and words[0] == "md5":
            text, rc = image_md5(words[1], int(words[2]), int(words[3]))
            self.wfile.write(f"{text}@rc={rc}\n".encode())
            return
        argv = command_line(words, self.server.testbed_args)
        if argv is None:
            self.wfile.write(f"ceph-agent: refused: {line}\n@rc=2\n".encode())
            return
        print(f"ceph-agent: {line}", file=sys.stderr, flush=True)
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL)
        self.wfile.write(done.stdout)
        if done.stdout and not done.stdout.endswith(b"\n"):
            self.wfile.write(b"\n")
        self.wfile.write(f"@rc={done.returncode}\n".encode())


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    port_file, testbed_args = sys.argv[1], sys.argv[2:]
    # rbd and ceph find the cluster through CEPH_CONF, as the test bed says.
    env = subprocess.run([TESTBED] + testbed_args + ["env"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    for line in env.splitlines():
        key, _, value = line.partition("=")
        os.environ[key] = value.strip('"')
    server = Server(("127.0.0.1", 0), Handler)
    server.testbed_args = testbed_args
    with open(port_file + ".tmp", "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    socket.setdefaulttimeout(None)
    main()
