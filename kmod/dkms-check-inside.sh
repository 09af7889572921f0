# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# kmod/dkms-check.sh's checks, run by bash inside the throwaway overlay of
# the host's root (chroot), where /lib/modules is the pinned kernel's. From
# the environment: KVER (that kernel), KROOT (the kernel cache's unpacked
# root), DEB (the tcmud-dkms package).
log() { echo "dkms-check: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
apt_local() {
	apt-get -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/dev/null \
		-y -q --no-install-recommends "$@"
}
shopt -s extglob
name=tcmud-kmod
updates=/lib/modules/$KVER/updates/dkms

# The headers where linux-headers-* puts them (/lib/modules/$KVER/build
# names the first).
for d in "linux-headers-$KVER" "linux-headers-${KVER%-*}-common"; do
	ln -sfn "$KROOT/usr/src/$d" "/usr/src/$d"
done
[ -e "/lib/modules/$KVER/build/include" ] || fail "no headers at /lib/modules/$KVER/build"
# linux-source-6.12 of the same upload, as apt leaves it after a kernel
# update (the package depends on it; dkms-prepare.sh reads the tarball).
series=$(echo "$KVER" | cut -d. -f1,2)
ln -sfn "$KROOT/usr/src/linux-source-$series.tar.xz" "/usr/src/linux-source-$series.tar.xz"
# The package's postinst builds for the running kernel and the newest in
# /lib/modules; the host's running kernel is not the pinned one.
echo 'autoinstall_all_kernels="yes"' >> /etc/dkms/framework.conf
rm -f /var/lib/man-db/auto-update
[ -z "$(dkms status)" ] || fail "dkms status before the install: $(dkms status)"

t0=$(date +%s)
apt_local install "$DEB" > /tmp/apt-install.log 2>&1 ||
	{ cat /tmp/apt-install.log /var/lib/dkms/$name/*/build/make.log >&2 2>/dev/null; fail "apt install $DEB"; }
log "apt install: $(( $(date +%s) - t0 )) s"
status=$(dkms status)
version=$(dpkg-query -W -f '${Version}' tcmud-dkms)
# Exactly this (a glob, no regex: the kernel version holds '+' and '.').
[[ $status == "$name/"+([^,])", $KVER, x86_64: installed" ]] ||
	{ cat /tmp/apt-install.log >&2; fail "dkms status: '$status'"; }
log "dkms status: $status (package $version)"

built=$(ls -d /var/lib/dkms/$name/*/"$KVER"/x86_64/module)
mkdir -p /tmp/dkms-check-ko
m=target_core_user  # the one module DKMS builds
f=$(ls "$updates/$m.ko"* 2> /dev/null) || fail "no $updates/$m.ko*"
cmp -s "$f" "$built/${f##*/}" || fail "$f is not the built $built/${f##*/}"
magic=$(modinfo -F vermagic "$f")
[ "${magic%% *}" = "$KVER" ] || fail "$m vermagic '$magic' is not $KVER"
modprobe -S "$KVER" --show-depends "$m" | grep -q "updates/dkms/$m.ko" ||
	fail "modprobe would not load $updates/$m.ko* for $m"
case $f in
*.xz) xz -dc "$f" > "/tmp/dkms-check-ko/$m.ko" ;;
*) cp "$f" "/tmp/dkms-check-ko/$m.ko" ;;
esac
# The series leaves uio alone: no uio.ko of ours, the kernel's serves
# target_core_user and every stock uio driver.
[ -z "$(ls "$updates"/uio.ko* 2> /dev/null)" ] || fail "DKMS installed a uio.ko: $(ls "$updates"/uio.ko*)"
for m in target_core_user uio_pci_generic; do
	modprobe -S "$KVER" --show-depends $m | grep -q "kernel/drivers/uio/uio.ko" ||
		fail "modprobe does not resolve $m's uio to the kernel's own uio.ko"
done
log "installed to $updates as built; modprobe resolves target_core_user there, uio to the kernel's own"

other=6.1.0-0-amd64 mv=${status%%,*}
if dkms build -m $name -v "${mv#*/}" -k $other --kernelsourcedir "/lib/modules/$KVER/build" \
	> /tmp/other.log 2>&1; then
	fail "dkms built for $other despite BUILD_EXCLUSIVE_KERNEL"
fi
log "refused another kernel: $(grep -m1 -i 'exclusive\|not supported\|excluded' /tmp/other.log || tail -n1 /tmp/other.log)"
# A 6.12 kernel whose source is not the installed linux-source-6.12 (an
# update of the one without the other): refused by dkms-prepare.sh, saying
# which versions disagree.
other="6.12.999+deb12-amd64"
if dkms build -m $name -v "${mv#*/}" -k $other --kernelsourcedir "/lib/modules/$KVER/build" \
	> /tmp/other.log 2>&1; then
	fail "dkms built for $other with the source of $KVER"
fi
grep -q "is Linux ${KVER%%+*}, not 6.12.999" /tmp/other.log /var/lib/dkms/$name/*/build/make.log 2>/dev/null ||
	{ cat /tmp/other.log >&2; fail "the refusal for $other does not say which versions disagree"; }
log "refused $other: $(grep -h -m1 'is Linux' /tmp/other.log /var/lib/dkms/$name/*/build/make.log 2>/dev/null | head -n1)"

dpkg -L tcmud-dkms | sort > /tmp/dkms-files
apt_local remove tcmud-dkms > /tmp/apt-remove.log 2>&1 ||
	{ cat /tmp/apt-remove.log >&2; fail "apt remove tcmud-dkms"; }
[ -z "$(dkms status)" ] || fail "dkms status after remove: $(dkms status)"
left=$(ls "$updates"/uio.ko* "$updates"/target_core_user.ko* -d /var/lib/dkms/$name 2> /dev/null || true)
[ -z "$left" ] || fail "left after remove: $left"
modprobe -S "$KVER" --show-depends target_core_user | grep -q "kernel/drivers/uio/uio.ko" ||
	fail "modprobe does not resolve uio to the stock module after remove"
# With no conffile, remove leaves dpkg nothing to purge (apt purge: "Unable
# to locate package"); when it does keep something, purge must clear it.
state=$(dpkg-query -W -f '${db:Status-Status}' tcmud-dkms 2> /dev/null || echo not-installed)
if [ "$state" != not-installed ]; then
	apt_local purge tcmud-dkms > /tmp/apt-purge.log 2>&1 ||
		{ cat /tmp/apt-purge.log >&2; fail "apt purge tcmud-dkms (after remove: $state)"; }
fi
dpkg -s tcmud-dkms > /dev/null 2>&1 && fail "dpkg still knows tcmud-dkms after purge"
left=""
while read -r f; do
	[ -e "$f" ] && [ ! -d "$f" ] && left+=" $f"
done < /tmp/dkms-files
left+=$(find /usr/src /var/lib/dkms -maxdepth 1 -name "$name*" -printf ' %p')
[ -z "$left" ] || fail "left behind after purge:$left"
log "remove: dkms status empty, modules gone, stock ones resolved; purge (dpkg state after remove: $state) left nothing of $(grep -c . /tmp/dkms-files) paths"
