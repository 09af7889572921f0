/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The TCM-USER generic netlink numbers from <linux/target_core_user.h>,
 * restated because that header does not compile as C++ (an implicit
 * integer-to-enum conversion, and <linux/uio.h> redefining struct iovec).
 * tcmu_genl_abi_check.c proves at build time that they match the kernel's.
 */
#pragma once

#define TCMUD_GENL_FAMILY "TCM-USER"
#define TCMUD_GENL_GROUP "config"

enum {
	TCMUD_CMD_ADDED_DEVICE = 1,
	TCMUD_CMD_REMOVED_DEVICE = 2,
	TCMUD_CMD_RECONFIG_DEVICE = 3,
	TCMUD_CMD_ADDED_DEVICE_DONE = 4,
	TCMUD_CMD_REMOVED_DEVICE_DONE = 5,
	TCMUD_CMD_RECONFIG_DEVICE_DONE = 6,
	TCMUD_CMD_SET_FEATURES = 7,
};

enum {
	TCMUD_ATTR_DEVICE = 1,
	TCMUD_ATTR_MINOR = 2,
	TCMUD_ATTR_DEV_CFG = 4,
	TCMUD_ATTR_DEV_SIZE = 5,
	TCMUD_ATTR_WRITECACHE = 6,
	TCMUD_ATTR_CMD_STATUS = 7,
	TCMUD_ATTR_DEVICE_ID = 8,
	TCMUD_ATTR_SUPP_KERN_CMD_REPLY = 9,
	TCMUD_ATTR_MAX = 9,
};
