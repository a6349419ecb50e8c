# Shell shared by the /init scripts of the QEMU guests that drive
# ivshmem-doorbell through vfio-pci (tests/qemu/guest-init-vfio,
# tests/qemu/guest-init-doorbell).  The tests copy it into the initramfs as
# /bin/guest-lib.sh; an init sources it first.  The init's own lines on
# the serial console start "SMQ-GUEST: ".
export PATH=/bin

say() { echo "SMQ-GUEST: $*"; }

# bye STATUS: says "end STATUS" and powers off.
bye() {
	say "end $1"
	sync
	poweroff -f
	sleep 10        # poweroff -f returns before the machine is off
}

# until_asleep QUEUE SECONDS SMQCTL...: until SMQCTL's dump shows QUEUE's
# receiver asleep; 1 (said) if not within SECONDS, a give-up bound.  Only
# a dump shows that state: looked at every 0.1 s.
until_asleep() {
	ua_q=$1 ua_n=$(($2 * 10))
	shift 2
	while ! "$@" dump 2>/dev/null | grep -q "^$ua_q  *[0-9][0-9]* asleep"; do
		ua_n=$((ua_n - 1))
		[ $ua_n -gt 0 ] || { say "queue $ua_q's receiver not asleep"; return 1; }
		sleep 0.1
	done
}

# guest_setup: /proc, /sys, /dev, quiet kernel messages.
guest_setup() {
	busybox mount -t proc proc /proc
	busybox mount -t sysfs sysfs /sys
	busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
	dmesg -n 1 2>/dev/null
	hostname smq-guest
}

# cmdline_arg NAME DEFAULT: the value of NAME=VALUE on the kernel command
# line, or DEFAULT.
cmdline_arg() {
	v=$2
	for arg in $(cat /proc/cmdline); do
		case $arg in
		"$1"=*) v=${arg#*=} ;;
		esac
	done
	echo "$v"
}

# load_modules: the vfio modules, dependencies first (fetch-kernel.sh
# wrote the order); 1 after saying why not.
load_modules() {
	[ -s /lib/modules/load-order ] || { say "no modules in the initramfs"; return 1; }
	while read -r ko; do
		if ! out=$(insmod "/lib/modules/$ko" 2>&1); then
			say "insmod $ko failed: $out"
			dmesg | tail -n 5
			return 1
		fi
	done </lib/modules/load-order
	say "modules loaded: $(tr '\n' ' ' </lib/modules/load-order)"
	[ -c /dev/vfio/vfio ] || { say "no /dev/vfio/vfio"; return 1; }
}

# find_ivshmem: sets door (an ivshmem-doorbell: 1af4:1110 with BAR1, its
# MSI-X table) and plain (an ivshmem-plain), each a BDF or empty.
find_ivshmem() {
	door= plain=
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = 0x1af4 ] &&
			[ "$(cat "$d/device" 2>/dev/null)" = 0x1110 ] || continue
		set -- $(sed -n 2p "$d/resource")
		if [ "$(($2))" != 0 ]; then door=${d##*/}; else plain=${d##*/}; fi
	done
}

# bind_vfio BDF: the device to vfio-pci: override the driver, let go of
# any, then ask for a probe.
bind_vfio() {
	dev=/sys/bus/pci/devices/$1
	echo vfio-pci >"$dev/driver_override" || return 1
	[ -e "$dev/driver" ] && { echo "$1" >"$dev/driver/unbind" || return 1; }
	echo "$1" >/sys/bus/pci/drivers_probe
	drv=$(readlink "$dev/driver")
	[ "${drv##*/}" = vfio-pci ]
}
