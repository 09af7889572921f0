/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef __TARGET_CORE_USER_MQ_H
#define __TARGET_CORE_USER_MQ_H

/*
 * Multi-queue extension of the TCMU ring (see target_core_user.h).
 *
 * A TCMU device has attrib/nr_queues (default 1), writable only before
 * the device is enabled. With 1 queue the mmap()ed area is exactly the
 * classic layout. With N queues it holds N classic rings one after the
 * other, @queue_stride bytes apart: queue q's struct tcmu_mailbox is at
 * q * queue_stride, its command ring at cmdr_off from that mailbox, and
 * its data area at ring_size from that mailbox. Every offset the kernel
 * writes into a queue's ring (cdb_off, iov_base) is relative to that
 * queue's mailbox, so each queue is served like a single-queue device.
 *
 * The kernel puts a command on the queue of the CPU that submits it.
 * User space completes queue q by writing the 32-bit value q to the uio
 * device; with 1 queue the value is ignored, as before.
 *
 * Wakeups: by default a new command or TMR on any queue wakes every
 * reader/poller of the uio device. After TCMU_MQ_IOC_SET_EVENTFD for
 * queue q, entries on queue q signal that eventfd instead, so one
 * queue's thread is not woken for another queue's commands.
 *
 * Detection: TCMU_MQ_IOC_GET_INFO on the uio fd fails with ENOTTY on a
 * kernel without this extension; there, use the classic ring only.
 */

#include <linux/types.h>
#include <linux/ioctl.h>

#define TCMU_MQ_MAX_QUEUES	64

/* Set in every queue's mailbox->flags when the device has N > 1 queues. */
#define TCMU_MAILBOX_FLAG_CAP_MQ	(1 << 15)

/**
 * struct tcmu_mq_info - layout of a TCMU device's mmap()ed area
 * @nr_queues:		number of queues (1 .. TCMU_MQ_MAX_QUEUES)
 * @flags:		zero; reserved
 * @ring_size:		bytes of mailbox plus command ring per queue; a
 *			queue's data area starts this far from its mailbox
 * @data_size:		bytes of data area per queue
 * @queue_stride:	bytes from one queue's mailbox to the next
 * @mmap_size:		bytes to mmap() (nr_queues * queue_stride)
 */
struct tcmu_mq_info {
	__u32 nr_queues;
	__u32 flags;
	__u64 ring_size;
	__u64 data_size;
	__u64 queue_stride;
	__u64 mmap_size;
};

/**
 * struct tcmu_mq_eventfd - per-queue wakeup
 * @queue:	queue index
 * @fd:		an eventfd signalled for each batch of new entries on
 *		@queue, or -1 to go back to waking the uio device
 */
struct tcmu_mq_eventfd {
	__u32 queue;
	__s32 fd;
};

#define TCMU_MQ_IOC_MAGIC	0xE9
#define TCMU_MQ_IOC_GET_INFO \
	_IOR(TCMU_MQ_IOC_MAGIC, 0x01, struct tcmu_mq_info)
#define TCMU_MQ_IOC_SET_EVENTFD \
	_IOW(TCMU_MQ_IOC_MAGIC, 0x02, struct tcmu_mq_eventfd)

#endif
