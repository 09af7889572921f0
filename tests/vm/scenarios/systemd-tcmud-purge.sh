# SPDX-License-Identifier: GPL-2.0-or-later
# apt remove, then purge, of the tcmud package (after the other systemd-*
# scenarios): the daemon is stopped and nothing of the package is left, not
# its files, its configuration, its log, its enablement links nor its
# runtime directory.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/systemd-lib.sh"
dpkg -s tcmud > /dev/null 2>&1 || fail "the tcmud package is not installed (run systemd-tcmud first)"
remove_all_targets
dpkg -L tcmud | sort > $STATE/files
apt_local remove tcmud > $STATE/apt-remove.log 2>&1 || { cat $STATE/apt-remove.log; fail "apt remove"; }
expect_eq "$(systemctl is-active tcmud 2>/dev/null)" inactive "tcmud after remove"
pgrep -x tcmud > /dev/null && fail "a tcmud process survived the remove"
[ -f /etc/tcmud/tcmud.conf ] || fail "remove (not purge) took the configuration"
apt_local purge tcmud > $STATE/apt-purge.log 2>&1 || { cat $STATE/apt-purge.log; fail "apt purge"; }
dpkg -s tcmud > /dev/null 2>&1 && fail "dpkg still knows tcmud after purge"
left=""
while read -r f; do
	# Directories shared with other packages (/usr/sbin, /etc, ...) stay.
	[ -e "$f" ] && [ ! -d "$f" ] && left+=" $f"
done < $STATE/files
for f in /etc/tcmud /var/log/tcmud.log /run/tcmud /var/lib/tcmud; do
	[ -e $f ] && left+=" $f"
done
left+=$(find /etc/systemd /run/systemd/system /var/lib/systemd -name 'tcmud.*' 2>/dev/null | tr '\n' ' ')
[ -z "${left// /}" ] || fail "left behind after purge:$left"
systemctl cat tcmud > /dev/null 2>&1 && fail "systemd still has a tcmud unit"
log "remove stopped tcmud and kept /etc/tcmud; purge left nothing of $(grep -c . $STATE/files) paths"
