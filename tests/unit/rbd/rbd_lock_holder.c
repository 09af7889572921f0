// SPDX-License-Identifier: GPL-2.0-or-later
// A stand-in for a gateway that dies: opens CONF's POOL/IMAGE, takes its
// exclusive lock, writes one block, says "locked" on stdout and waits to
// be killed. rbd_lock_test SIGKILLs it to play a tcmud killed under I/O.
//   rbd_lock_holder CONF POOL IMAGE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

int main(int argc, char **argv)
{
	rados_t cluster;
	rados_ioctx_t io;
	rbd_image_t img;
	char block[512];
	int r;

	if (argc != 4)
		return 2;
	if (rados_create(&cluster, NULL) < 0 || rados_conf_read_file(cluster, argv[1]) < 0 ||
	    rados_connect(cluster) < 0 || rados_ioctx_create(cluster, argv[2], &io) < 0 ||
	    rbd_open(io, argv[3], &img, NULL) < 0)
		return 1;
	r = rbd_lock_acquire(img, RBD_LOCK_MODE_EXCLUSIVE);
	memset(block, 0x5a, sizeof(block));
	if (r < 0 || rbd_write(img, 0, sizeof(block), block) != sizeof(block)) {
		fprintf(stderr, "rbd_lock_holder: %s\n", strerror(r < 0 ? -r : 5));
		return 1;
	}
	printf("locked\n");
	fflush(stdout);
	for (;;)
		pause();
}
