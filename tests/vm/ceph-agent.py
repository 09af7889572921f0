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
# the guest), "hold POOL/IMAGE BYTES" (a host-side gateway: $TCMUD_RBD_HOLDER,
# tests/unit/rbd/rbd_lock_holder, takes the image's exclusive lock, writes
# BYTES of 0x5a from offset 0 and keeps the lock; answers once it holds it)
# "release POOL/IMAGE" (that gateway closes the image, releasing the
# lock) and "loadavg" (the host's 1, 5 and 15 min load averages, which a
# benchmark records beside its figures). The reply is the command's output, then "@rc=N".
#
#   ceph-agent.py PORT_FILE TESTBED_ARGS...
# writes the port it listens on to PORT_FILE and serves until killed.
import hashlib
import os
import select
import signal
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


HOLDERS = {}


def hold(spec, nbytes):
    """A host-side gateway holding spec's exclusive lock (rbd_lock_holder)."""
    holder = os.environ.get("TCMUD_RBD_HOLDER", "")
    pool, _, image = spec.partition("/")
    if not os.access(holder, os.X_OK) or not image or spec in HOLDERS:
        return f"hold: no holder binary ({holder!r}), bad spec or already held\n", 2
    proc = subprocess.Popen([holder, os.environ["CEPH_CONF"], pool, image, nbytes],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    line = proc.stdout.readline().decode(errors="replace") if ready else "no answer in 60 s\n"
    if line.strip() != "locked":
        proc.kill()
        return "hold: " + line + proc.stdout.read().decode(errors="replace"), 1
    HOLDERS[spec] = proc
    return "locked\n", 0


def release(spec):
    proc = HOLDERS.pop(spec, None)
    if proc is None:
        return "release: not held\n", 2
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        return "release: the holder did not close the image in 60 s\n", 1
    return f"released (holder exit {rc})\n", rc


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode(errors="replace").strip()
        try:
            words = shlex.split(line)
        except ValueError:
            words = []
        if words == ["loadavg"]:
            # The host's load, for benchmarks that record it beside a figure.
            with open("/proc/loadavg") as f:
                self.wfile.write(f"{' '.join(f.read().split()[:3])}\n@rc=0\n".encode())
            return
        if len(words) == 4 and words[0] == "md5":
            text, rc = image_md5(words[1], int(words[2]), int(words[3]))
            self.wfile.write(f"{text}@rc={rc}\n".encode())
            return
        if (len(words) == 3 and words[0] == "hold") or (len(words) == 2 and words[0] == "release"):
            print(f"ceph-agent: {line}", file=sys.stderr, flush=True)
            text, rc = hold(words[1], words[2]) if words[0] == "hold" else release(words[1])
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
    # Killed at the end of the run: no holder may outlive it.
    def stop(signum, frame):
        for proc in HOLDERS.values():
            proc.kill()
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    server.serve_forever()


if __name__ == "__main__":
    socket.setdefaulttimeout(None)
    main()
