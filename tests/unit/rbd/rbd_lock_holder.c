// SPDX-License-Identifier: GPL-2.0-or-later
// A stand-in for another gateway: opens CONF's POOL/IMAGE, takes its
// exclusive lock, writes BYTES (default 512) of 0x5a from offset 0, says
// "locked" on stdout and holds the lock. SIGKILL plays a gateway that dies
// (rbd_lock_test); SIGTERM a gateway that hands the image back: it closes
// the image, which releases the lock (the VM race scenario, through
// tests/vm/ceph-agent.py's hold/release).
//   rbd_lock_holder CONF POOL IMAGE [BYTES]
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

int main(int argc, char **argv)
{
	rados_t cluster;
	rados_ioctx_t io;
	rbd_image_t img;
	size_t bytes = argc == 5 ? strtoul(argv[4], NULL, 0) : 512;
	char *data;
	sigset_t term;
	int r, sig;

	if (argc != 4 && argc != 5)
		return 2;
	// Blocked before librados starts its threads, so sigwait gets it.
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (rados_create(&cluster, NULL) < 0 || rados_conf_read_file(cluster, argv[1]) < 0 ||
	    rados_connect(cluster) < 0 || rados_ioctx_create(cluster, argv[2], &io) < 0 ||
	    rbd_open(io, argv[3], &img, NULL) < 0)
		return 1;
	r = rbd_lock_acquire(img, RBD_LOCK_MODE_EXCLUSIVE);
	data = malloc(bytes);
	if (!data)
		return 1;
	memset(data, 0x5a, bytes);
	if (r < 0 || rbd_write(img, 0, bytes, data) != (ssize_t)bytes) {
		fprintf(stderr, "rbd_lock_holder: %s\n", strerror(r < 0 ? -r : 5));
		return 1;
	}
	printf("locked\n");
	fflush(stdout);
	sigwait(&term, &sig);
	rbd_close(img);
	rados_ioctx_destroy(io);
	rados_shutdown(cluster);
	free(data);
	return 0;
}
