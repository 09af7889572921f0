// SPDX-License-Identifier: GPL-2.0-or-later
// Build-time proof that tcmu_abi.h matches the kernel's uapi header. Nothing
// here runs; a mismatch stops the build.
#include <stddef.h>
#include <linux/target_core_user.h>

#include "tcmu_abi.h"

#define SAME(ours, theirs) _Static_assert((ours) == (theirs), #ours " disagrees with the kernel")

SAME(TCMUD_MB_VERSION_OFF, offsetof(struct tcmu_mailbox, version));
SAME(TCMUD_MB_FLAGS_OFF, offsetof(struct tcmu_mailbox, flags));
SAME(TCMUD_MB_CMDR_OFF_OFF, offsetof(struct tcmu_mailbox, cmdr_off));
SAME(TCMUD_MB_CMDR_SIZE_OFF, offsetof(struct tcmu_mailbox, cmdr_size));
SAME(TCMUD_MB_CMD_HEAD_OFF, offsetof(struct tcmu_mailbox, cmd_head));
SAME(TCMUD_MB_CMD_TAIL_OFF, offsetof(struct tcmu_mailbox, cmd_tail));
SAME(TCMUD_MB_SIZE, sizeof(struct tcmu_mailbox));
SAME(TCMUD_MAILBOX_VERSION, TCMU_MAILBOX_VERSION);
SAME(TCMUD_MB_FLAG_CAP_OOOC, TCMU_MAILBOX_FLAG_CAP_OOOC);
SAME(TCMUD_MB_FLAG_CAP_READ_LEN, TCMU_MAILBOX_FLAG_CAP_READ_LEN);
SAME(TCMUD_MB_FLAG_CAP_TMR, TCMU_MAILBOX_FLAG_CAP_TMR);
SAME(TCMUD_MB_FLAG_CAP_KEEP_BUF, TCMU_MAILBOX_FLAG_CAP_KEEP_BUF);

SAME(TCMUD_HDR_LEN_OP_OFF, offsetof(struct tcmu_cmd_entry_hdr, len_op));
SAME(TCMUD_HDR_CMD_ID_OFF, offsetof(struct tcmu_cmd_entry_hdr, cmd_id));
SAME(TCMUD_HDR_KFLAGS_OFF, offsetof(struct tcmu_cmd_entry_hdr, kflags));
SAME(TCMUD_HDR_UFLAGS_OFF, offsetof(struct tcmu_cmd_entry_hdr, uflags));
SAME(TCMUD_HDR_SIZE, sizeof(struct tcmu_cmd_entry_hdr));
SAME(TCMUD_OP_PAD, TCMU_OP_PAD);
SAME(TCMUD_OP_CMD, TCMU_OP_CMD);
SAME(TCMUD_OP_TMR, TCMU_OP_TMR);
SAME(TCMUD_OP_MASK, TCMU_OP_MASK);
SAME(TCMUD_OP_ALIGN_SIZE, TCMU_OP_ALIGN_SIZE);
SAME(TCMUD_UFLAG_UNKNOWN_OP, TCMU_UFLAG_UNKNOWN_OP);
SAME(TCMUD_UFLAG_READ_LEN, TCMU_UFLAG_READ_LEN);
SAME(TCMUD_UFLAG_KEEP_BUF, TCMU_UFLAG_KEEP_BUF);

SAME(TCMUD_REQ_IOV_CNT_OFF, offsetof(struct tcmu_cmd_entry, req.iov_cnt));
SAME(TCMUD_REQ_IOV_BIDI_CNT_OFF, offsetof(struct tcmu_cmd_entry, req.iov_bidi_cnt));
SAME(TCMUD_REQ_IOV_DIF_CNT_OFF, offsetof(struct tcmu_cmd_entry, req.iov_dif_cnt));
SAME(TCMUD_REQ_CDB_OFF_OFF, offsetof(struct tcmu_cmd_entry, req.cdb_off));
SAME(TCMUD_REQ_IOV_OFF, offsetof(struct tcmu_cmd_entry, req.iov));
SAME(TCMUD_IOVEC_SIZE, sizeof(struct iovec));
SAME(TCMUD_RSP_SCSI_STATUS_OFF, offsetof(struct tcmu_cmd_entry, rsp.scsi_status));
SAME(TCMUD_RSP_READ_LEN_OFF, offsetof(struct tcmu_cmd_entry, rsp.read_len));
SAME(TCMUD_RSP_SENSE_OFF, offsetof(struct tcmu_cmd_entry, rsp.sense_buffer));
SAME(TCMUD_SENSE_BUFFERSIZE, TCMU_SENSE_BUFFERSIZE);
SAME(TCMUD_CMD_ENTRY_SIZE, sizeof(struct tcmu_cmd_entry));

SAME(TCMUD_TMR_TYPE_OFF, offsetof(struct tcmu_tmr_entry, tmr_type));
SAME(TCMUD_TMR_CMD_CNT_OFF, offsetof(struct tcmu_tmr_entry, cmd_cnt));
SAME(TCMUD_TMR_CMD_IDS_OFF, offsetof(struct tcmu_tmr_entry, cmd_ids));
SAME(TCMUD_TMR_ENTRY_SIZE, sizeof(struct tcmu_tmr_entry));
SAME(TCMUD_TMR_ABORT_TASK, TCMU_TMR_ABORT_TASK);
SAME(TCMUD_TMR_ABORT_TASK_SET, TCMU_TMR_ABORT_TASK_SET);
SAME(TCMUD_TMR_CLEAR_ACA, TCMU_TMR_CLEAR_ACA);
SAME(TCMUD_TMR_CLEAR_TASK_SET, TCMU_TMR_CLEAR_TASK_SET);
SAME(TCMUD_TMR_LUN_RESET, TCMU_TMR_LUN_RESET);
SAME(TCMUD_TMR_TARGET_WARM_RESET, TCMU_TMR_TARGET_WARM_RESET);
SAME(TCMUD_TMR_TARGET_COLD_RESET, TCMU_TMR_TARGET_COLD_RESET);
SAME(TCMUD_TMR_LUN_RESET_PRO, TCMU_TMR_LUN_RESET_PRO);

// ISO C forbids an empty translation unit.
extern int tcmud_abi_checked;
