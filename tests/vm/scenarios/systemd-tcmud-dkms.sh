# SPDX-License-Identifier: GPL-2.0-or-later
# The tcmud-dkms package in the systemd guest; not in systemd.list (minutes
# of DKMS build under TCG), run by hand:
#   tests/vm/run --systemd --timeout 3600 systemd-tcmud-dkms
# (it installs the tcmud package itself when run alone):
# 1. apt installs it; DKMS builds the patched target_core_user against the
#    guest kernel's headers, from target_core_user.c of the installed
#    linux-source-6.12 (the host's, like every package of the guest:
#    scripts/install-deps.sh), and installs it to updates/dkms; uio, which
#    the series leaves unchanged, stays the kernel's own;
# 2. the stock modules are unloaded and modprobe loads the DKMS one: the
#    live module's GNU build-id is that of the installed file, and the live
#    uio is still the kernel's;
# 3. packaged tcmud serves a LUN with one queue (the stock ABI) and one with
#    nr_queues=2 (the multi-queue ABI: two workers, both serve commands),
#    fio write+verify on each;
# 4. apt remove: dkms status is empty, the modules' files are gone, and a
#    reload brings the stock modules back; apt purge leaves nothing of the
#    package.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/systemd-lib.sh"
kver=$(uname -r)
TCMUDCTL=$(command -v tcmudctl || echo /usr/sbin/tcmudctl)
dkms_deb=$(ls "$TCMUD_DEBS"/tcmud-dkms_*_all.deb 2>/dev/null) ||
	skip "no $TCMUD_DEBS/tcmud-dkms_*.deb (scripts/build-debs.sh)"
series=$(echo "$kver" | cut -d. -f1,2)
[ -f "/usr/src/linux-source-$series.tar.xz" ] ||
	skip "no linux-source-$series on the host (scripts/install-deps.sh)"
command -v dkms > /dev/null || skip "no dkms on the host (scripts/install-deps.sh)"
load_target_stack
if ! dpkg -s tcmud > /dev/null 2>&1; then
	rm -f /var/lib/man-db/auto-update
	apt_local install "$TCMUD_DEBS"/tcmud_*_amd64.deb > $STATE/apt-tcmud.log 2>&1 ||
		{ cat $STATE/apt-tcmud.log; fail "apt install of the tcmud package"; }
fi
wait_tcmud_active > /dev/null

# The guest's kernel is the pinned one, unpacked with its headers by
# scripts/kernel-cache.sh; its /lib/modules/$kver/build names where
# linux-headers-* puts them. (A link each: the cache's copy.)
headers_links=()
for d in "linux-headers-$kver" "linux-headers-${kver%-*}-common"; do
	if [ ! -e "/usr/src/$d" ]; then
		ln -s "$TCMUD_KERNEL_ROOT/usr/src/$d" "/usr/src/$d"
		headers_links+=("/usr/src/$d")
	fi
done
[ -e "/lib/modules/$kver/build/include" ] || fail "no headers at /lib/modules/$kver/build"
[ -z "$(dkms status)" ] || fail "dkms status before the install: $(dkms status)"

# module_build_id FILE: the GNU build-id of a (compressed) module file.
module_build_id() {
	case $1 in
	*.xz) xz -dc "$1" > /tmp/dkms-id.ko ;;
	*) cp "$1" /tmp/dkms-id.ko ;;
	esac
	readelf -n /tmp/dkms-id.ko | awk '/Build ID/ { print $3 }'
}
# live_is MODULE FILE: the loaded MODULE was loaded from FILE (its build-id
# is in the live module's notes).
live_is() {
	local id
	id=$(module_build_id "$2")
	[ -n "$id" ] || fail "no build-id in $2"
	[[ $(od -An -tx1 -v "/sys/module/$1/notes/.note.gnu.build-id" | tr -d ' \n') == *"$id"* ]]
}
stock_file() { find "/lib/modules/$kver/kernel" -name "$1.ko*"; }
# reload_modules: tcmud stopped and every target gone, target_core_user and
# uio unloaded, then loaded again the way modprobe resolves them now.
reload_modules() {
	systemctl stop tcmud
	remove_all_targets
	modprobe -r target_core_user uio
	lsmod | grep -qE '^(uio|target_core_user) ' && fail "uio or target_core_user still loaded"
	modprobe target_core_user
	systemctl start tcmud
	wait_tcmud_active > /dev/null
}

log "apt install $(basename "$dkms_deb") (DKMS builds the modules)"
t0=$(date +%s)
apt_local install "$dkms_deb" > $STATE/apt-dkms.log 2>&1 ||
	{ cat $STATE/apt-dkms.log; cat /var/lib/dkms/tcmud-kmod/*/build/make.log 2>/dev/null; fail "apt install of tcmud-dkms"; }
log "installed in $(( $(date +%s) - t0 )) s"
# Exactly "installed", no warning (a string, not a regex: $kver holds '+').
kmod_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$TCMUD_SRC/kmod/dkms.conf")
expect_eq "$(dkms status)" "tcmud-kmod/$kmod_version, $kver, $(uname -m): installed" "dkms status"
updates=/lib/modules/$kver/updates/dkms
tcmu_file=$(ls "$updates/target_core_user.ko"* 2>/dev/null) || fail "no $updates/target_core_user.ko*"
expect_eq "$(modinfo -n target_core_user)" "$tcmu_file" "the file modprobe resolves target_core_user to"
[ -z "$(ls "$updates"/uio.ko* 2>/dev/null)" ] || fail "DKMS installed a uio.ko"
expect_eq "$(modinfo -n uio)" "$(stock_file uio)" "the file modprobe resolves uio to"
live_is target_core_user "$(stock_file target_core_user)" ||
	fail "the live target_core_user is not the stock one before the reload"

reload_modules
live_is target_core_user "$tcmu_file" || fail "the live target_core_user is not $updates's"
expect_match "$(cat /sys/module/target_core_user/taint)" O "taint of the out-of-tree target_core_user"
live_is uio "$(stock_file uio)" || fail "the live uio is not the kernel's own"
log "target_core_user loaded from $updates (build-ids match), uio the kernel's own"

# One queue: the stock ABI on the patched modules.
truncate -s 64M /tmp/dkms1.img /tmp/dkms2.img
bs1=$(create_user_backstore dkms1 file /tmp/dkms1.img $((64 << 20)))
dev1=$(export_via_loop "$bs1")
wait_listed dkms1 nr_queues 1
fio_write_verify "$dev1" 16M
# Two queues: tcmud finds the multi-queue mailbox and runs a worker per
# queue; the kernel steers CPU c to queue c % 2.
bs2=$(USER_BACKSTORE_ATTRS="nr_queues=2" create_user_backstore dkms2 file /tmp/dkms2.img $((64 << 20)))
dev2=$(export_via_loop "$bs2")
wait_listed dkms2 nr_queues 2
[ "$(nproc)" -ge 2 ] || fail "needs 2 vCPUs for both queues"
fio_checked "write+verify on the 2-queue LUN" 16M --name=mq --filename="$dev2" \
	--direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bs=4k --numjobs=2 \
	--cpus_allowed=0,1 --cpus_allowed_policy=split --offset_increment=16M --size=8M \
	--verify=crc32c --do_verify=1 --verify_fatal=1
for q in 0 1; do
	n=$(queue_metric dkms2 $q tcmud_commands_total)
	[ "$n" -gt 0 ] || fail "queue $q of dkms2 served no command"
	log "dkms2 queue $q: $n commands"
done
remove_all_targets
rm -f /tmp/dkms1.img /tmp/dkms2.img /tmp/dkms-id.ko

dpkg -L tcmud-dkms | sort > $STATE/dkms-files
apt_local remove tcmud-dkms > $STATE/apt-dkms-remove.log 2>&1 ||
	{ cat $STATE/apt-dkms-remove.log; fail "apt remove tcmud-dkms"; }
expect_eq "$(dkms status)" "" "dkms status after remove"
left=$(ls "$updates"/uio.ko* "$updates"/target_core_user.ko* /var/lib/dkms/tcmud-kmod 2>/dev/null || true)
[ -z "$left" ] || fail "left after remove: $left"
reload_modules
for m in uio target_core_user; do
	live_is $m "$(stock_file $m)" || fail "the live $m is not the stock one"
	expect_eq "$(cat /sys/module/$m/taint)" "" "taint of the stock $m"
done
log "after remove: dkms status empty, modules gone, the stock ones back after a reload"
# With no conffile, remove leaves dpkg nothing to purge (apt purge would
# say "Unable to locate package"); when it keeps something, purge clears it.
state=$(dpkg-query -W -f '${db:Status-Status}' tcmud-dkms 2> /dev/null || echo not-installed)
if [ "$state" != not-installed ]; then
	apt_local purge tcmud-dkms > $STATE/apt-dkms-purge.log 2>&1 ||
		{ cat $STATE/apt-dkms-purge.log; fail "apt purge tcmud-dkms (after remove: $state)"; }
fi
dpkg -s tcmud-dkms > /dev/null 2>&1 && fail "dpkg still knows tcmud-dkms after purge"
left=""
while read -r f; do
	[ -e "$f" ] && [ ! -d "$f" ] && left+=" $f"
done < $STATE/dkms-files
left+=$(find /usr/src /var/lib/dkms -maxdepth 1 -name 'tcmud-kmod*' -printf ' %p')
[ -z "$left" ] || fail "left behind after purge:$left"
rm -f "${headers_links[@]}"
log "purge (dpkg state after remove: $state) left nothing of $(grep -c . $STATE/dkms-files) paths"
