// SPDX-License-Identifier: GPL-2.0-or-later
// ring_events.cpp: the names logged for a TMR entry's tmr_type, which come
// from TCMUD_TMR_* (checked against the kernel's TCMU_TMR_* at build time).
#include <catch2/catch.hpp>

#include "ring/ring_events.h"
#include "ring/tcmu_abi.h"

using tcmud::tmr_name;

TEST_CASE("tmr_name names each TCMU_TMR_* type as the kernel does", "[ring_events]")
{
	CHECK(tmr_name(TCMUD_TMR_ABORT_TASK) == "ABORT_TASK");
	CHECK(tmr_name(TCMUD_TMR_ABORT_TASK_SET) == "ABORT_TASK_SET");
	CHECK(tmr_name(TCMUD_TMR_CLEAR_ACA) == "CLEAR_ACA");
	CHECK(tmr_name(TCMUD_TMR_CLEAR_TASK_SET) == "CLEAR_TASK_SET");
	CHECK(tmr_name(TCMUD_TMR_LUN_RESET) == "LUN_RESET");
	CHECK(tmr_name(TCMUD_TMR_TARGET_WARM_RESET) == "TARGET_WARM_RESET");
	CHECK(tmr_name(TCMUD_TMR_TARGET_COLD_RESET) == "TARGET_COLD_RESET");
	CHECK(tmr_name(TCMUD_TMR_LUN_RESET_PRO) == "LUN_RESET_PRO");
}

TEST_CASE("tmr_name says UNKNOWN for a type the kernel does not define", "[ring_events]")
{
	CHECK(tmr_name(0) == "UNKNOWN");
	CHECK(tmr_name(8) == "UNKNOWN");
	CHECK(tmr_name(255) == "UNKNOWN");
}
