/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef __TARGET_CORE_USER_MQ_H
#define __TARGET_CORE_USER_MQ_H

/*
 * Multi-queue extension of the TCMU ring (see target_core_user.h).
 *
 * A TCMU device has attrib/nr_queues (default 1), writable only before
 * the device is enabled. With 1 queue nothing differs from the classic
 * device: one uio device, one ring, the same mailbox.
 *
 * With N queues each queue is a classic ring with its own uio device:
 *  - queue 0 is the device's uio device, named as always
 *    "tcm-user/<hba>/<dev>/<dev_config>";
 *  - queue q (1 <= q < N) is a uio device named "tcmu-queue/<hba>/<dev>/<q>".
 * Each queue's map0 holds its mailbox, command ring and data area in the
 * classic layout, and every offset in its entries is relative to its own
 * mailbox. read()/poll() on a queue's uio device wait for that queue's
 * entries only; a write() to it completes that queue only (the value is
 * ignored, as before). The kernel puts a command on the queue of the CPU
 * that submits it if that queue's uio device is open, and on queue 0
 * otherwise: a daemon that does not know queues, and so opens queue 0's
 * uio device only, gets every command there.
 *
 * Every queue's mailbox of such a device has TCMU_MAILBOX_FLAG_CAP_MQ in
 * its flags and a struct tcmu_mq_mailbox at TCMU_MQ_MAILBOX_OFF, in bytes
 * that the classic mailbox leaves unused.
 */

#include <linux/types.h>

#define TCMU_MQ_MAX_QUEUES	64

/* Set in every queue's mailbox->flags when the device has N > 1 queues. */
#define TCMU_MAILBOX_FLAG_CAP_MQ	(1 << 15)

/*
 * Set in every queue's mailbox->flags of a device with
 * attrib/data_area_fixed = 1 (any number of queues): every page of this
 * queue's data area is allocated before user space can see the device
 * and stays the same page until the device is released. The kernel never
 * reclaims it (global_max_data_area_mb), so user space may pin the data
 * area, e.g. register it as an io_uring fixed buffer. Without the flag a
 * data page may be freed and replaced at any time the queue is idle.
 */
#define TCMU_MAILBOX_FLAG_CAP_DATA_FIXED	(1 << 14)

/*
 * Set in every queue's mailbox->flags of a device with attrib/zero_copy = 1
 * (any number of queues). The queue's mapping then ends with a zero-copy
 * window after its data area, described by the struct tcmu_zc_mailbox at
 * TCMU_ZC_MAILBOX_OFF: the data area is [data_off, window_off), not
 * everything after the command ring. A large page-aligned READ may get an
 * iovec in the window instead of the data area; its pages are there only
 * while the command is on the ring (or kept with KEEP_BUF), are not
 * backed by struct page references (get_user_pages(), and so O_DIRECT or
 * io_uring buffer registration, fail on them with EFAULT), and an access
 * to a window page no command owns is SIGBUS. Read and write such a
 * buffer with the CPU (memcpy, buffered read()/write()).
 */
#define TCMU_MAILBOX_FLAG_CAP_ZERO_COPY	(1 << 13)

/* Offset of struct tcmu_zc_mailbox from the start of the mailbox */
#define TCMU_ZC_MAILBOX_OFF	24

/**
 * struct tcmu_zc_mailbox - the zero-copy window, valid with CAP_ZERO_COPY
 * @window_off:	offset of the window from the start of the mailbox; the
 *		data area ends there
 * @window_size: bytes of the window, up to the end of the mapping
 */
struct tcmu_zc_mailbox {
	__u64 window_off;
	__u64 window_size;
};

/* Offset of struct tcmu_mq_mailbox from the start of the mailbox */
#define TCMU_MQ_MAILBOX_OFF	16

/**
 * struct tcmu_mq_mailbox - where a queue belongs, valid with CAP_MQ
 * @nr_queues:	number of queues of the device (2 .. TCMU_MQ_MAX_QUEUES)
 * @queue:	index of this queue (0 .. nr_queues - 1)
 * @reserved:	zero
 */
struct tcmu_mq_mailbox {
	__u16 nr_queues;
	__u16 queue;
	__u32 reserved;
};

#endif
