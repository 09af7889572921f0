/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The byte layout of the TCMU shared region, as plain offsets.
 *
 * <linux/target_core_user.h> cannot be included from C++ (its inline helpers
 * convert __u32 to an enum implicitly, which C++ rejects), and the daemon
 * should never overlay structs on memory the kernel writes anyway: every field
 * is copied out with memcpy at a known offset and checked before use. So the
 * layout lives here as numbers, and tcmu_abi_check.c, a C file that does include
 * the kernel header, fails the build if any number disagrees with it.
 *
 * This header must stay valid C: only #defines.
 */

/* Mailbox (struct tcmu_mailbox), at offset 0 of the mapping. */
#define TCMUD_MB_VERSION_OFF     0  /* __u16 */
#define TCMUD_MB_FLAGS_OFF       2  /* __u16 */
#define TCMUD_MB_CMDR_OFF_OFF    4  /* __u32 */
#define TCMUD_MB_CMDR_SIZE_OFF   8  /* __u32 */
#define TCMUD_MB_CMD_HEAD_OFF   12  /* __u32, written by the kernel */
#define TCMUD_MB_CMD_TAIL_OFF   64  /* __u32, written by us, own cache line */
#define TCMUD_MB_SIZE          128  /* sizeof(struct tcmu_mailbox) */

#define TCMUD_MAILBOX_VERSION        2
#define TCMUD_MB_FLAG_CAP_OOOC       (1 << 0)
#define TCMUD_MB_FLAG_CAP_READ_LEN   (1 << 1)
#define TCMUD_MB_FLAG_CAP_TMR        (1 << 2)
#define TCMUD_MB_FLAG_CAP_KEEP_BUF   (1 << 3)

/* kmod/'s multi-queue extension (kmod/include/uapi/linux/target_core_user_mq.h):
 * with CAP_MQ, struct tcmu_mq_mailbox sits in the mailbox's unused bytes. */
#define TCMUD_MB_FLAG_CAP_MQ         (1 << 15)
#define TCMUD_MQ_MAILBOX_OFF        16
#define TCMUD_MQ_NR_QUEUES_OFF      16  /* __u16 */
#define TCMUD_MQ_QUEUE_OFF          18  /* __u16 */
#define TCMUD_MQ_MAX_QUEUES         64
/* kmod/'s fixed data area (attrib/data_area_fixed=1, any nr_queues): every
 * page of this queue's data area is allocated before the daemon sees the
 * device and stays the same page until the device is released, so the
 * daemon may pin it (io_uring fixed buffers). Never without the bit. */
#define TCMUD_MB_FLAG_CAP_DATA_FIXED (1 << 14)
/* kmod/'s zero-copy window (attrib/zero_copy=1, patch 0013): the mapping
 * ends with a window after the data area, where large READs' iovecs may
 * point; struct tcmu_zc_mailbox says where it starts and how long it is.
 * Its pages have no struct page references: O_DIRECT on them fails. */
#define TCMUD_MB_FLAG_CAP_ZERO_COPY  (1 << 13)
#define TCMUD_ZC_WINDOW_OFF_OFF     24  /* __u64 */
#define TCMUD_ZC_WINDOW_SIZE_OFF    32  /* __u64 */

/* Entry header (struct tcmu_cmd_entry_hdr), first 8 bytes of every entry. */
#define TCMUD_HDR_LEN_OP_OFF     0  /* __u32: length | opcode in the low 3 bits */
#define TCMUD_HDR_CMD_ID_OFF     4  /* __u16 */
#define TCMUD_HDR_KFLAGS_OFF     6  /* __u8 */
#define TCMUD_HDR_UFLAGS_OFF     7  /* __u8 */
#define TCMUD_HDR_SIZE           8

#define TCMUD_OP_PAD             0
#define TCMUD_OP_CMD             1
#define TCMUD_OP_TMR             2
#define TCMUD_OP_MASK            7
#define TCMUD_OP_ALIGN_SIZE      8

#define TCMUD_UFLAG_UNKNOWN_OP   0x1
#define TCMUD_UFLAG_READ_LEN     0x2
#define TCMUD_UFLAG_KEEP_BUF     0x4

/* struct tcmu_cmd_entry: req and rsp overlay each other after the header. */
#define TCMUD_REQ_IOV_CNT_OFF       8   /* __u32 */
#define TCMUD_REQ_IOV_BIDI_CNT_OFF 12   /* __u32 */
#define TCMUD_REQ_IOV_DIF_CNT_OFF  16   /* __u32 */
#define TCMUD_REQ_CDB_OFF_OFF      24   /* __u64, offset from the mapping start */
#define TCMUD_REQ_IOV_OFF          48   /* struct iovec[], iov_base is an offset */
#define TCMUD_IOVEC_SIZE           16   /* struct iovec on LP64 */
#define TCMUD_RSP_SCSI_STATUS_OFF   8   /* __u8 */
#define TCMUD_RSP_READ_LEN_OFF     12   /* __u32 */
#define TCMUD_RSP_SENSE_OFF        16   /* char[TCMUD_SENSE_BUFFERSIZE] */
#define TCMUD_SENSE_BUFFERSIZE     96
#define TCMUD_CMD_ENTRY_SIZE      112   /* sizeof(struct tcmu_cmd_entry) */

/* struct tcmu_tmr_entry */
#define TCMUD_TMR_TYPE_OFF          8   /* __u8 */
#define TCMUD_TMR_CMD_CNT_OFF      12   /* __u32 */
#define TCMUD_TMR_CMD_IDS_OFF      32   /* __u16[] */
#define TCMUD_TMR_ENTRY_SIZE       32   /* sizeof(struct tcmu_tmr_entry) */

/* enum tcmu_tmr_type */
#define TCMUD_TMR_ABORT_TASK         1
#define TCMUD_TMR_ABORT_TASK_SET     2
#define TCMUD_TMR_CLEAR_ACA          3
#define TCMUD_TMR_CLEAR_TASK_SET     4
#define TCMUD_TMR_LUN_RESET          5
#define TCMUD_TMR_TARGET_WARM_RESET  6
#define TCMUD_TMR_TARGET_COLD_RESET  7
#define TCMUD_TMR_LUN_RESET_PRO    128
