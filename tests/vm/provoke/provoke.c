// SPDX-License-Identifier: GPL-2.0
/*
 * Makes the debug kernel's checkers report, one kind per load, so that the
 * test bed can prove each of them is on and that tests/vm/verdict fails a
 * scenario on its report. Never loaded outside tests/vm/debug-selfcheck.sh.
 *
 *   insmod tcmud_provoke.ko kind=kasan|lockdep|sleep|list|ubsan
 *
 * The module refuses to stay loaded (-EAGAIN) once it has provoked.
 */
#include <linux/compiler.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

static char *kind = "";
module_param(kind, charp, 0444);
MODULE_PARM_DESC(kind, "kasan, lockdep, sleep, list or ubsan");

static DEFINE_MUTEX(provoke_a);
static DEFINE_MUTEX(provoke_b);
static DEFINE_SPINLOCK(provoke_spin);

/* A read of a freed object: "BUG: KASAN: slab-use-after-free". */
static void provoke_kasan(void)
{
	char *p = kmalloc(64, GFP_KERNEL);
	char c;

	if (!p)
		return;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	c = READ_ONCE(p[8]);
	pr_info("tcmud_provoke: read %d after free\n", c);
}

/*
 * a then b, later b then a, on one thread: lockdep reports the inversion
 * ("possible circular locking dependency") without a real deadlock.
 */
static void provoke_lockdep(void)
{
	mutex_lock(&provoke_a);
	mutex_lock(&provoke_b);
	mutex_unlock(&provoke_b);
	mutex_unlock(&provoke_a);

	mutex_lock(&provoke_b);
	mutex_lock(&provoke_a);
	mutex_unlock(&provoke_a);
	mutex_unlock(&provoke_b);
}

/* "BUG: sleeping function called from invalid context". */
static void provoke_sleep(void)
{
	spin_lock(&provoke_spin);
	might_sleep();
	spin_unlock(&provoke_spin);
}

/* Adding an entry that is already the list's only one: "list_add double add". */
static void provoke_list(void)
{
	LIST_HEAD(head);
	struct list_head entry;

	list_add(&entry, &head);
	list_add(&entry, &head);
}

/* A shift by more than the width, hidden from the compiler: "UBSAN: shift-out-of-bounds". */
static void provoke_ubsan(void)
{
	int shift = 40;
	u32 one = 1;

	OPTIMIZER_HIDE_VAR(shift);
	OPTIMIZER_HIDE_VAR(one);
	pr_info("tcmud_provoke: shifted %u\n", one << shift);
}

static int __init provoke_init(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} kinds[] = {
		{ "kasan", provoke_kasan },
		{ "lockdep", provoke_lockdep },
		{ "sleep", provoke_sleep },
		{ "list", provoke_list },
		{ "ubsan", provoke_ubsan },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (!strcmp(kind, kinds[i].name)) {
			pr_info("tcmud_provoke: provoking %s\n", kind);
			kinds[i].fn();
			return -EAGAIN;
		}
	}
	pr_err("tcmud_provoke: unknown kind '%s'\n", kind);
	return -EINVAL;
}
module_init(provoke_init);

MODULE_DESCRIPTION("Provokes one debug-kernel checker report (tcmud test bed)");
MODULE_LICENSE("GPL");
