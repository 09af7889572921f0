# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud as an administrator runs it (systemd guest, two boots on one disk):
# boot 1: the .deb installed with apt (tcmu-runner goes: both own
# org.kernel.TCMUService1), enabled and started the Debian way; stopped,
# then started again by D-Bus activation when targetcli creates a user:file
# LUN; the per-device lines are in the journal; the configuration is saved
# and the guest reboots.
# boot 2: tcmud starts before rtslib-fb-targetctl, whose restore brings the
# LUN back with the same data (checksum) and the same VPD 0x83 identity.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/systemd-lib.sh"
wwn=naa.5001405000000d0e
save=/etc/rtslib-fb-target/saveconfig.json
load_target_stack
expect_eq "$(cat /proc/1/comm)" systemd "PID 1"
failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')
[ -z "$failed" ] || fail "failed units at boot $TCMUD_BOOT: $failed"

if [ "$TCMUD_BOOT" = 1 ] && [ ! -e $STATE/saved ]; then
	cat /proc/sys/kernel/random/boot_id > $STATE/boot-id
	# man-db's trigger would rebuild its index under TCG for a minute.
	rm -f /var/lib/man-db/auto-update
	log "apt install $(basename "$TCMUD_DEBS"/tcmud_*_amd64.deb)"
	t0=$(date +%s)
	apt_local install "$TCMUD_DEBS"/tcmud_*_amd64.deb > $STATE/apt.log 2>&1 ||
		{ cat $STATE/apt.log; fail "apt install of the tcmud package"; }
	log "installed in $(( $(date +%s) - t0 )) s"
	# Removed (its conffiles may stay): both own org.kernel.TCMUService1.
	[ "$(dpkg-query -W -f '${Status}' tcmu-runner 2>/dev/null)" != "install ok installed" ] ||
		fail "tcmu-runner is still installed"
	expect_eq "$(systemctl is-enabled tcmud)" enabled "tcmud enabled by the package"
	pid=$(wait_tcmud_active)
	systemctl enable --now tcmud
	expect_eq "$(tcmud_pid)" "$pid" "tcmud after enable --now (already running)"

	log "D-Bus activation: tcmud stopped, then targetcli creates a user:file LUN"
	systemctl stop tcmud
	expect_eq "$(systemctl is-active tcmud)" inactive "tcmud after stop"
	truncate -s 64M $STATE/disk0.img
	targetcli > $STATE/targetcli.log 2>&1 <<EOT
/backstores/user:file create name=disk0 size=64M cfgstring=$STATE/disk0.img
/loopback create $wwn
/loopback/$wwn/luns create /backstores/user:file/disk0
saveconfig
EOT
	[ -d "$TARGET/core/user_0/disk0" ] || { cat $STATE/targetcli.log; fail "targetcli did not create user:file/disk0"; }
	pid=$(wait_tcmud_active)
	journalctl -b -u dbus -o cat --no-pager | grep -q "Activating via systemd: service name='org.kernel.TCMUService1'" ||
		fail "dbus-daemon did not activate tcmud.service"
	expect_eq "$(grep -c '"plugin": "user"' "$save")" 1 "user backstores in $save"
	dev=$(sd_of_loopback $wwn)
	log "targetcli's disk is $dev, served by tcmud $pid (D-Bus activated)"
	# tcmu-runner was removed, not purged: its D-Bus policy stays in
	# /etc/dbus-1/system.d and lets anyone send anything to the service.
	# CheckConfig (a root-credential probe of a path) must stay root's.
	leftover=/etc/dbus-1/system.d/tcmu-runner.conf
	if [ -f $leftover ]; then
		out=$(setpriv --reuid=65534 --regid=65534 --clear-groups gdbus call --system \
			--dest org.kernel.TCMUService1 --object-path /org/kernel/TCMUService1/file \
			--method org.kernel.TCMUService1.CheckConfig file//etc/shadow 2>&1) &&
			fail "nobody's CheckConfig was answered: $out"
		expect_match "$out" "AccessDenied" "nobody's CheckConfig with $leftover in place"
		wait_journal 'CheckConfig from .* refused: only root may call it' 1
		out=$(gdbus call --system --dest org.kernel.TCMUService1 \
			--object-path /org/kernel/TCMUService1/file \
			--method org.kernel.TCMUService1.CheckConfig "file/$STATE/disk0.img")
		expect_match "$out" "true" "root's CheckConfig"
		log "with tcmu-runner's leftover $leftover, nobody's CheckConfig is AccessDenied, root's answered"
	else
		log "no leftover tcmu-runner D-Bus policy to check (tcmu-runner was not installed)"
	fi
	# Prometheus over HTTP: off after install; once the socket is enabled,
	# a scrape of localhost gets the daemon's metrics, the file LUN
	# serving, and anything but GET/HEAD its 405.
	expect_eq "$(systemctl is-enabled tcmud-metrics.socket)" disabled "tcmud-metrics.socket after install"
	curl -s --max-time 10 http://127.0.0.1:9574/metrics > /dev/null &&
		fail "something answers on 127.0.0.1:9574 before tcmud-metrics.socket is enabled"
	systemctl enable --now tcmud-metrics.socket
	ver=$(/usr/sbin/tcmud --version | awk '{print $2}')
	out=$(curl -fsS --max-time 60 http://127.0.0.1:9574/metrics) || fail "curl http://127.0.0.1:9574/metrics"
	expect_match "$out" "tcmud_build_info\\{version=\"$ver\"\\} 1" "build_info over HTTP"
	expect_match "$out" 'tcmud_device_state\{device="disk0",hba="[^"]*",state="serving"\} 1' \
		"disk0's state over HTTP"
	expect_match "$out" 'tcmud_commands_total\{device="disk0",hba="[^"]*",queue="0"\} [1-9]' \
		"disk0's commands over HTTP"
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 -X POST http://127.0.0.1:9574/metrics)
	expect_eq "$code" 405 "POST /metrics"
	list=$(/usr/sbin/tcmudctl list)
	expect_match "$list" "disk0 +user_[0-9]+ .* serving +- " "tcmudctl list: disk0 serving, no lock"
	log "HTTP metrics: $(grep -c '^tcmud_' <<<"$out") samples from tcmud $ver; tcmudctl list: $(grep disk0 <<<"$list" | tr -s ' ')"
	systemctl disable --now tcmud-metrics.socket
	# A second daemon is refused before it touches anything, naming the first.
	out=$(timeout 60 /usr/sbin/tcmud 2>&1) && fail "a second tcmud started: $out"
	expect_match "$out" "already running as pid $pid" "a second tcmud"
	expect_eq "$(tcmud_pid)" "$pid" "the running tcmud after a second one was refused"
	log "second instance: $out"
	/usr/sbin/tcmud --check-config > $STATE/check.out 2>&1 || { cat $STATE/check.out; fail "tcmud --check-config"; }
	printf 'max_in_flight = 0\n' > $STATE/bad.conf
	/usr/sbin/tcmud --check-config $STATE/bad.conf > $STATE/check.out 2>&1 && fail "--check-config passed a bad file"
	expect_match "$(cat $STATE/check.out)" "bad.conf:1: max_in_flight" "--check-config on a bad file"
	# A refused reload fails `systemctl reload`, with the reason in the
	# journal, and the daemon runs on; a good one succeeds.
	conf=/etc/tcmud/tcmud.conf
	cp $conf $STATE/tcmud.conf.saved
	echo "max_in_flight = 0" >> $conf
	reload_rc=0
	systemctl reload tcmud > $STATE/reload.out 2>&1 || reload_rc=$?
	# Put the file back first: a failure here must not leave the later
	# scenarios a daemon that refuses to start.
	cp $STATE/tcmud.conf.saved $conf
	[ $reload_rc != 0 ] || fail "systemctl reload passed with a refused $conf"
	wait_journal "tcmudctl: configuration not reloaded \\(the running one stays\\): $conf:[0-9]+: max_in_flight" 1
	expect_eq "$(tcmud_pid)" "$pid" "tcmud after a refused reload"
	expect_eq "$(systemctl is-active tcmud)" active "tcmud after a refused reload"
	systemctl reload tcmud || fail "systemctl reload with the original $conf"
	log "refused reload: $(journalctl -b -u tcmud -o cat --no-pager | grep -m1 'tcmudctl: configuration not reloaded')"
	# journald has the per-device lines (the device's own prefix).
	wait_journal 'file/disk0: ' 1
	log "journal: $(journalctl -b -u tcmud -o cat --no-pager | grep -m1 'file/disk0: ')"

	head -c 4M /dev/urandom > $STATE/pattern
	dd if=$STATE/pattern of="$dev" bs=1M seek=8 oflag=direct conv=fsync status=none
	sg_vpd -p 0x83 "$dev" > $STATE/vpd83
	expect_match "$(cat $STATE/vpd83)" "designator type: NAA" "VPD 0x83 before the reboot"
	md5sum < $STATE/pattern > $STATE/sum
	touch $STATE/saved
	log "saved; rebooting"
	exit 100
fi

[ -e $STATE/saved ] || fail "boot $TCMUD_BOOT without the first boot's state"
[ "$(cat $STATE/boot-id)" != "$(cat /proc/sys/kernel/random/boot_id)" ] || fail "same boot id: no reboot"
log "boot $TCMUD_BOOT: tcmud $(systemctl is-active tcmud), rtslib-fb-targetctl $(systemctl is-active rtslib-fb-targetctl)"
wait_tcmud_active > /dev/null
end=$(( $(date +%s) + 120 ))
while [ "$(date +%s)" -lt $end ]; do
	[ "$(systemctl is-active rtslib-fb-targetctl)" = active ] && break
	sleep 0.2
done
expect_eq "$(systemctl is-active rtslib-fb-targetctl)" active "rtslib-fb-targetctl after the reboot"
# Before=rtslib-fb-targetctl.service: tcmud was ready when the restore ran.
t_tcmud=$(systemctl show -p ActiveEnterTimestampMonotonic --value tcmud)
t_restore=$(systemctl show -p ExecMainStartTimestampMonotonic --value rtslib-fb-targetctl)
[ "$t_tcmud" -le "$t_restore" ] || fail "the restore started ($t_restore) before tcmud was ready ($t_tcmud)"
dev=$(sd_of_loopback $wwn)
sum=$(dd if="$dev" bs=1M skip=8 count=4 iflag=direct status=none | md5sum)
expect_eq "$sum" "$(cat $STATE/sum)" "data of the restored LUN"
expect_eq "$(sg_vpd -p 0x83 "$dev")" "$(cat $STATE/vpd83)" "VPD 0x83 of the restored LUN"
wait_journal 'file/disk0: ' 1
log "after the reboot: $dev restored by rtslib-fb-targetctl, same checksum and VPD 0x83"
