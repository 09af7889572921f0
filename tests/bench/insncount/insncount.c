// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * insncount.c - QEMU 7.2 TCG plugin: count guest instructions executed,
 * split into kernel and user mode, and snapshot the counts whenever the
 * guest drops a mark file into a shared directory.
 *
 * Built against include/qemu/qemu-plugin.h of Debian's qemu 1:7.2+dfsg-7+deb12u18
 * (QEMU_PLUGIN_VERSION 1); see build.sh.  Modelled on tests/plugin/bb.c and
 * tests/plugin/insn.c of that source.
 *
 * Counting
 *   At translation time every TB is classified by its start vaddr:
 *   >= 0xffff800000000000 (x86_64 canonical upper half) is KERNEL, anything else USER.
 *   A TB never spans a privilege change, so the whole TB gets one class.
 *   An exec callback (QEMU_PLUGIN_CB_NO_REGS) adds the TB's instruction count to a
 *   per-vCPU counter of that class.  Each vCPU thread only writes its own
 *   (cache-line aligned) slot, so there are no lost updates under MTTCG
 *   (-accel tcg,thread=multi); readers sum the slots with relaxed atomic loads.
 *   (inline=on uses QEMU_PLUGIN_INLINE_ADD_U64 on ONE shared counter per class
 *   instead: cheaper, but the add is not atomic, so with >1 vCPU updates can
 *   be lost.  Only for overhead comparisons.)
 *
 *   A rep-prefixed string instruction (rep movs/stos/lods/ins/outs, repz/repnz
 *   cmps/scas) is executed by QEMU one iteration at a time: after each
 *   iteration it jumps back to the same instruction, i.e. a TB that starts with
 *   the rep instruction and holds only it.  Such TBs are counted in "insns" like
 *   any other (so "insns" counts every rep iteration as one instruction) AND
 *   separately in "rep" so that the architectural count (rep = 1 instruction)
 *   can be approximated as insns - rep.
 *
 *   Spin-wait loops (PAUSE = cpu_relax()) are counted separately as "spin"
 *   (included in insns): with MTTCG on a shared host a vCPU thread can be
 *   descheduled while its guest holds a spinlock, and the other vCPU then spins;
 *   those instructions depend on host scheduling, not on the guest's work.
 *
 * Marks
 *   A watcher thread started at install time polls DIR every poll_us (1000 us)
 *   for files named mark.<name>.  For each one it takes a snapshot of the
 *   summed counters, appends "<name> <user_insns> <kernel_insns> <host_ns>" to
 *   DIR/counts.txt (and a wider line to DIR/counts-ext.txt), then creates
 *   ack.<name>.  host_ns is CLOCK_MONOTONIC.  A mark is pending while its ack
 *   does not exist; the guest removes the mark, then the ack, once it has the
 *   ack (see handle_mark), so a name can be used again.
 *
 * Arguments (-plugin ./libinsncount.so,dir=/path,poll_us=1000,inline=off,kbase=0xffff800000000000)
 *   dir=PATH      mark directory (created if missing).  Without it: totals only.
 *   poll_us=N     watcher poll period in microseconds (default 1000)
 *   inline=on|off see above (default off); inline=check: both, and report at
 *                 exit how many updates the shared inline counters lost
 *   kbase=ADDR    first kernel address (default 0xffff800000000000)
 *   spin_gap=N    TBs allowed between two PAUSEs of one spin loop (default 32)
 *   profile=on    also count instructions per kernel TB start address and dump
 *                 them at every mark to DIR/prof.<name> (diagnostics; see prof.py)
 *
 * At exit the totals (and per-vCPU figures) are printed with qemu_plugin_outs
 * (QEMU's log, stderr unless -D is given) and written to DIR/totals.txt.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>

#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum { USER = 0, KERN = 1, NCLASS = 2 };

typedef struct {
    uint64_t insns[NCLASS];   /* guest instructions (rep iterations counted individually) */
    uint64_t rep[NCLASS];     /* executions of rep-string-only TBs (= extra rep iterations) */
    uint64_t tbs[NCLASS];     /* TB executions */
    uint64_t idle_entries;    /* times this vCPU went idle (halted, nothing to run) */
    uint64_t idle_ns;         /* host ns spent idle (closed intervals only) */
    uint64_t idle_since;      /* host ns of the last idle entry, 0 when running */
    uint64_t pauses[NCLASS];  /* PAUSE instructions executed (spin-wait iterations) */
    uint64_t spin[NCLASS];    /* instructions in spin-wait loops (see below) */
    uint64_t pend_insns, pend_tbs; /* since the last PAUSE on this vCPU */
} __attribute__((aligned(64))) VCPUCount;

static VCPUCount *vc;          /* [max_vcpus + 1]; the last slot catches out-of-range indexes */
static unsigned int nslots;
static VCPUCount shared;       /* inline=on target */
static int do_inline;
static uint64_t kbase = 0xffff800000000000ULL;
static char *markdir;
static unsigned int poll_us = 1000;
static pthread_t watcher;
static volatile int stop_watcher;
static int watcher_running;
static FILE *counts_f, *ext_f;
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * profile=on: per-TB-start-address instruction counters for kernel TBs (one
 * record per vaddr, QEMU_PLUGIN_INLINE_ADD_U64 on the record: cheap but racy
 * between vCPUs, so approximate).  At every mark the non-zero records are
 * written to DIR/prof.<name> ("<vaddr hex> <insns>"); prof.py diffs two such
 * dumps and symbolises them with the guest's /proc/kallsyms.
 */
typedef struct { uint64_t vaddr; uint64_t insns; } ProfRec;
static int do_profile;
static GHashTable *prof;          /* vaddr -> ProfRec* */
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline VCPUCount *slot(unsigned int i)
{
    return &vc[i < nslots - 1 ? i : nslots - 1];
}

/* single writer per slot (the vCPU's own thread): relaxed load+store, no lock */
#define BUMP(field, n) __atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (n), __ATOMIC_RELAXED)

/*
 * udata = number of instructions in the TB | flags.
 *
 * Spin-wait accounting: a TB that ends with PAUSE (cpu_relax(); QEMU ends the
 * TB there) is a spin-wait iteration.  All instructions executed on this vCPU
 * since the previous PAUSE are credited to "spin" too when that previous PAUSE
 * was at most spin_gap TBs ago (the rest of the loop body: e.g. qspinlock's
 * [load;test;je] [pause] [jmp] cycle).  The first entry into a loop and its
 * exit path are not counted; an interrupt taken inside a spin breaks the
 * chain, so its handler is not counted as spin either.
 */
#define F_KERN   (1UL << 24)
#define F_REP    (1UL << 25)
#define F_PAUSE  (1UL << 26)
#define N_MASK   ((1UL << 24) - 1)
static unsigned int spin_gap = 32;

static void exec_tb(unsigned int cpu, void *udata)
{
    uintptr_t u = (uintptr_t)udata;
    uint64_t n = u & N_MASK;
    int cls = (u & F_KERN) ? KERN : USER;
    VCPUCount *c = slot(cpu);

    BUMP(c->insns[cls], n);
    BUMP(c->tbs[cls], 1);
    if (u & F_REP) {
        BUMP(c->rep[cls], 1);
    }
    if (u & F_PAUSE) {
        uint64_t sp = n;
        if (c->pend_tbs <= spin_gap) {
            sp += c->pend_insns;
        }
        BUMP(c->pauses[cls], 1);
        BUMP(c->spin[cls], sp);
        c->pend_tbs = 0;
        c->pend_insns = 0;
    } else {
        c->pend_tbs++;
        c->pend_insns += n;
    }
}

/* Is this x86 instruction a rep/repz/repnz-prefixed string instruction? */
static int is_rep_string(const uint8_t *p, size_t n)
{
    int rep = 0;
    size_t i = 0;
    for (; i < n; i++) {
        uint8_t b = p[i];
        if (b == 0xf3 || b == 0xf2) { rep = 1; continue; }
        if (b == 0xf0 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 ||
            b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67) continue;
        break;
    }
    if (i < n && (p[i] & 0xf0) == 0x40) i++;      /* REX */
    if (!rep || i >= n) return 0;
    switch (p[i]) {
    case 0x6c: case 0x6d: case 0x6e: case 0x6f:   /* ins, outs */
    case 0xa4: case 0xa5: case 0xa6: case 0xa7:   /* movs, cmps */
    case 0xaa: case 0xab: case 0xac: case 0xad:   /* stos, lods */
    case 0xae: case 0xaf:                         /* scas */
        return 1;
    }
    return 0;
}

static int is_pause(const uint8_t *p, size_t n)
{
    return n == 2 && p[0] == 0xf3 && p[1] == 0x90;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    uint64_t va = qemu_plugin_tb_vaddr(tb);
    int cls = va >= kbase ? KERN : USER;
    int rep = 0, pause = 0;

    if (n >= 1) {
        struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
        struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
        rep = is_rep_string(qemu_plugin_insn_data(first), qemu_plugin_insn_size(first));
        pause = is_pause(qemu_plugin_insn_data(last), qemu_plugin_insn_size(last));
    }
    if (do_profile && cls == KERN) {
        ProfRec *r;
        pthread_mutex_lock(&prof_lock);
        r = g_hash_table_lookup(prof, &va);
        if (!r) {
            r = g_new0(ProfRec, 1);
            r->vaddr = va;
            g_hash_table_insert(prof, &r->vaddr, r);
        }
        pthread_mutex_unlock(&prof_lock);
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &r->insns, n);
    }
    if (do_inline) {
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                                 &shared.insns[cls], n);
        if (rep) {
            qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                                     &shared.rep[cls], 1);
        }
        if (do_inline == 1) {
            return;
        }
        /* inline=check: exact per-vCPU callbacks as well, to measure the loss */
    }
    qemu_plugin_register_vcpu_tb_exec_cb(tb, exec_tb, QEMU_PLUGIN_CB_NO_REGS,
        (void *)(uintptr_t)((n & N_MASK) | (cls == KERN ? F_KERN : 0) |
                            (rep ? F_REP : 0) | (pause ? F_PAUSE : 0)));
}

static void vcpu_idle(qemu_plugin_id_t id, unsigned int cpu)
{
    VCPUCount *c = slot(cpu);
    BUMP(c->idle_entries, 1);
    __atomic_store_n(&c->idle_since, now_ns(), __ATOMIC_RELAXED);
}

static void vcpu_resume(qemu_plugin_id_t id, unsigned int cpu)
{
    VCPUCount *c = slot(cpu);
    uint64_t s = __atomic_load_n(&c->idle_since, __ATOMIC_RELAXED);
    if (s) {
        BUMP(c->idle_ns, now_ns() - s);
        __atomic_store_n(&c->idle_since, 0, __ATOMIC_RELAXED);
    }
}

typedef struct {
    uint64_t insns[NCLASS], rep[NCLASS], tbs[NCLASS], idle_entries, idle_ns;
    uint64_t pauses[NCLASS], spin[NCLASS];
} Totals;

static void snapshot(Totals *t)
{
    memset(t, 0, sizeof(*t));
    if (do_inline == 1) {
        for (int k = 0; k < NCLASS; k++) {
            t->insns[k] = __atomic_load_n(&shared.insns[k], __ATOMIC_RELAXED);
            t->rep[k] = __atomic_load_n(&shared.rep[k], __ATOMIC_RELAXED);
        }
    }
    for (unsigned int i = 0; i < nslots; i++) {
        for (int k = 0; k < NCLASS; k++) {
            t->insns[k] += __atomic_load_n(&vc[i].insns[k], __ATOMIC_RELAXED);
            t->rep[k] += __atomic_load_n(&vc[i].rep[k], __ATOMIC_RELAXED);
            t->tbs[k] += __atomic_load_n(&vc[i].tbs[k], __ATOMIC_RELAXED);
            t->pauses[k] += __atomic_load_n(&vc[i].pauses[k], __ATOMIC_RELAXED);
            t->spin[k] += __atomic_load_n(&vc[i].spin[k], __ATOMIC_RELAXED);
        }
        t->idle_entries += __atomic_load_n(&vc[i].idle_entries, __ATOMIC_RELAXED);
        t->idle_ns += __atomic_load_n(&vc[i].idle_ns, __ATOMIC_RELAXED);
    }
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        close(fd);
    }
}

/*
 * Protocol state lives in the directory, not in the plugin: mark.<name> is
 * pending exactly when ack.<name> does not exist.  The plugin never deletes a
 * mark (deleting it while the guest's 9p client is between its create and
 * its walk/getattr makes the guest's open(O_CREAT) fail with ENOENT); the
 * guest (insnmark) removes the mark FIRST and the ack SECOND once it has the
 * ack, so "ack absent, then mark present" can only be a new mark.  (An
 * earlier version remembered handled marks by inode+ctime; QEMU's own 9p
 * server changes a new file's ctime right after creating it (chmod/chown of
 * security_model=none), so a few marks were taken twice.)
 */
static void handle_mark(const char *name)
{
    char path[4096], ack[4096];
    struct stat st;
    Totals t;
    uint64_t ns;

    snprintf(ack, sizeof(ack), "%s/ack.%s", markdir, name);
    if (stat(ack, &st) == 0) {
        return;                     /* already acknowledged */
    }
    snprintf(path, sizeof(path), "%s/mark.%s", markdir, name);
    if (stat(path, &st) != 0) {
        return;                     /* gone meanwhile */
    }
    pthread_mutex_lock(&snap_lock);
    snapshot(&t);
    ns = now_ns();
    if (counts_f) {
        fprintf(counts_f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                name, t.insns[USER], t.insns[KERN], ns);
        fflush(counts_f);
    }
    if (ext_f) {
        fprintf(ext_f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                " %" PRIu64 " %" PRIu64 "\n",
                name, t.insns[USER], t.insns[KERN], ns, t.rep[USER], t.rep[KERN],
                t.tbs[USER], t.tbs[KERN], t.idle_entries, t.idle_ns,
                t.spin[USER], t.spin[KERN], t.pauses[USER], t.pauses[KERN]);
        fflush(ext_f);
    }
    pthread_mutex_unlock(&snap_lock);
    /* ack first: the guest is waiting; the (slow) profile dump comes after */
    touch(ack);
    if (do_profile) {
        snprintf(path, sizeof(path), "%s/prof.%s", markdir, name);
        FILE *pf = fopen(path, "w");
        if (pf) {
            GHashTableIter it;
            gpointer k, v;
            pthread_mutex_lock(&prof_lock);
            g_hash_table_iter_init(&it, prof);
            while (g_hash_table_iter_next(&it, &k, &v)) {
                ProfRec *r = v;
                uint64_t c = __atomic_load_n(&r->insns, __ATOMIC_RELAXED);
                if (c) fprintf(pf, "%" PRIx64 " %" PRIu64 "\n", r->vaddr, c);
            }
            pthread_mutex_unlock(&prof_lock);
            fclose(pf);
        }
    }
}

static void *watch(void *arg)
{
    struct timespec ts = { .tv_sec = poll_us / 1000000, .tv_nsec = (poll_us % 1000000) * 1000L };
    while (!stop_watcher) {
        DIR *d = opendir(markdir);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strncmp(e->d_name, "mark.", 5) == 0 && e->d_name[5]) {
                    handle_mark(e->d_name + 5);
                }
            }
            closedir(d);
        }
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
    Totals t;
    char buf[8192];
    size_t off = 0;

    if (watcher_running) {
        stop_watcher = 1;
        pthread_join(watcher, NULL);
        watcher_running = 0;
    }
    snapshot(&t);
    off += snprintf(buf + off, sizeof(buf) - off,
        "insncount: total user_insns %" PRIu64 " kernel_insns %" PRIu64
        " (rep iterations: user %" PRIu64 " kernel %" PRIu64 "; spin-wait insns: user %" PRIu64
        " kernel %" PRIu64 "; TBs user %" PRIu64
        " kernel %" PRIu64 "; idle entries %" PRIu64 ", idle s %.3f)%s\n",
        t.insns[USER], t.insns[KERN], t.rep[USER], t.rep[KERN], t.spin[USER], t.spin[KERN],
        t.tbs[USER], t.tbs[KERN],
        t.idle_entries, t.idle_ns / 1e9, do_inline == 1 ? " [inline: racy under MTTCG]" : "");
    if (do_inline == 2) {
        uint64_t iu = __atomic_load_n(&shared.insns[USER], __ATOMIC_RELAXED);
        uint64_t ik = __atomic_load_n(&shared.insns[KERN], __ATOMIC_RELAXED);
        off += snprintf(buf + off, sizeof(buf) - off,
            "insncount: inline=check: shared inline counters user %" PRIu64 " kernel %" PRIu64
            " vs exact per-vCPU user %" PRIu64 " kernel %" PRIu64 ": lost %.4f%% / %.4f%%\n",
            iu, ik, t.insns[USER], t.insns[KERN],
            t.insns[USER] ? 100.0 * ((double)t.insns[USER] - iu) / t.insns[USER] : 0.0,
            t.insns[KERN] ? 100.0 * ((double)t.insns[KERN] - ik) / t.insns[KERN] : 0.0);
    }
    for (unsigned int i = 0; i < nslots && do_inline != 1; i++) {
        if (vc[i].tbs[USER] + vc[i].tbs[KERN] == 0) continue;
        off += snprintf(buf + off, sizeof(buf) - off,
            "insncount: %s%u user %" PRIu64 " kernel %" PRIu64 " rep_user %" PRIu64
            " rep_kernel %" PRIu64 " idle_entries %" PRIu64 " idle_s %.3f\n",
            i == nslots - 1 ? "overflow-slot " : "vcpu", i,
            vc[i].insns[USER], vc[i].insns[KERN], vc[i].rep[USER], vc[i].rep[KERN],
            vc[i].idle_entries, vc[i].idle_ns / 1e9);
        if (off >= sizeof(buf)) { off = sizeof(buf) - 1; break; }
    }
    qemu_plugin_outs(buf);
    if (markdir) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/totals.txt", markdir);
        FILE *f = fopen(path, "w");
        if (f) { fputs(buf, f); fclose(f); }
    }
    if (counts_f) { fclose(counts_f); counts_f = NULL; }
    if (ext_f) { fclose(ext_f); ext_f = NULL; }
}

static int parse_bool(const char *v, int *out)
{
    if (!strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1")) { *out = 1; return 0; }
    if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0")) { *out = 0; return 0; }
    return -1;
}

static int mkdir_p(const char *dir)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') { *p = 0; mkdir(tmp, 0755); *p = '/'; }
    }
    if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
    return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info,
                                           int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) { fprintf(stderr, "insncount: bad argument %s\n", argv[i]); return -1; }
        *eq = 0;
        const char *k = argv[i], *v = eq + 1;
        if (!strcmp(k, "dir")) {
            markdir = strdup(v);
        } else if (!strcmp(k, "poll_us")) {
            poll_us = strtoul(v, NULL, 0);
            if (!poll_us) poll_us = 1000;
        } else if (!strcmp(k, "inline")) {
            if (!strcmp(v, "check")) {
                do_inline = 2;
            } else if (parse_bool(v, &do_inline)) {
                fprintf(stderr, "insncount: bad inline=%s\n", v); return -1;
            }
        } else if (!strcmp(k, "spin_gap")) {
            spin_gap = strtoul(v, NULL, 0);
        } else if (!strcmp(k, "profile")) {
            if (parse_bool(v, &do_profile)) { fprintf(stderr, "insncount: bad profile=%s\n", v); return -1; }
        } else if (!strcmp(k, "kbase")) {
            kbase = strtoull(v, NULL, 0);
        } else {
            fprintf(stderr, "insncount: unknown argument %s\n", k);
            return -1;
        }
    }
    if (!info->system_emulation) {
        nslots = 2;      /* linux-user: vcpu index = thread; fold into slot 0 via overflow */
    } else {
        nslots = info->system.max_vcpus + 1;
    }
    if (posix_memalign((void **)&vc, 64, nslots * sizeof(VCPUCount))) return -1;
    memset(vc, 0, nslots * sizeof(VCPUCount));

    if (markdir) {
        char path[4096];
        if (mkdir_p(markdir)) { fprintf(stderr, "insncount: cannot create %s\n", markdir); return -1; }
        snprintf(path, sizeof(path), "%s/counts.txt", markdir);
        counts_f = fopen(path, "a");
        snprintf(path, sizeof(path), "%s/counts-ext.txt", markdir);
        ext_f = fopen(path, "a");
        if (!counts_f || !ext_f) { fprintf(stderr, "insncount: cannot write in %s\n", markdir); return -1; }
        fprintf(ext_f, "# name user_insns kernel_insns host_ns user_rep kernel_rep user_tbs kernel_tbs idle_entries idle_ns user_spin kernel_spin user_pauses kernel_pauses\n");
        fflush(ext_f);
        if (pthread_create(&watcher, NULL, watch, NULL)) { fprintf(stderr, "insncount: no thread\n"); return -1; }
        watcher_running = 1;
    }
    if (do_profile) {
        prof = g_hash_table_new(g_int64_hash, g_int64_equal);
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
    qemu_plugin_register_vcpu_idle_cb(id, vcpu_idle);
    qemu_plugin_register_vcpu_resume_cb(id, vcpu_resume);
    qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
    return 0;
}
