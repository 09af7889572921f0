#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# under-valgrind.sh PROGRAM [ARGS...]: runs a unit-test program under
# valgrind --tool=none and fails if it does not finish within 60 s.
#
# Why: valgrind (3.19, Debian 12) runs a process's threads one at a time
# and does not know that io_uring_enter can block, so a thread waiting in
# it keeps valgrind's lock, with every signal blocked, and no other thread
# runs until the wait ends by itself. A cross-thread wake-up then never
# comes: that is why tcmud "never answered" under callgrind (issue 16).
# uring_engine waits differently under valgrind (a poll() of at most 1 ms,
# which valgrind releases its lock for); the [wake] tests fail here, by
# hanging until the kill below, when it does not. SIGKILL, because valgrind
# keeps SIGTERM blocked in that state.
set -u
command -v valgrind >/dev/null || { echo "under-valgrind: SKIP: no valgrind (scripts/install-deps.sh)"; exit 77; }
timeout -s KILL 60 valgrind -q --tool=none --error-exitcode=99 "$@"
rc=$?
[ $rc -eq 137 ] && echo "under-valgrind: killed after 60 s: a thread waited in io_uring_enter holding valgrind's lock"
exit $rc
