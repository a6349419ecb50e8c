/* The pci transport's words for a device: its address as a spec gives it
 * ("BDF[/BAR]") and what sysfs links it to (its driver, its IOMMU group),
 * below both its opening (pci.c) and its words for errors
 * (pci_explain.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pci.h"

/* "[dddd:]bb:ss.f" into a canonical "dddd:bb:ss.f"; -EINVAL if malformed. */
static int parse_bdf(const char *s, char out[16])
{
	unsigned dom = 0, bus, slot, func;
	int n = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &slot, &func, &n) == 4 &&
	    !s[n]) {
		/* domain given */
	} else if (dom = 0, n = 0,
		   sscanf(s, "%x:%x.%x%n", &bus, &slot, &func, &n) == 3 && !s[n]) {
		/* no domain */
	} else {
		return -EINVAL;
	}
	for (const char *p = s; *p; p++)  /* hex digits and separators only */
		if (!strchr("0123456789abcdefABCDEF:.", *p))
			return -EINVAL;
	if (dom > 0xffff || bus > 0xff || slot > 0x1f || func > 7)
		return -EINVAL;
	snprintf(out, 16, "%04x:%02x:%02x.%x", dom, bus, slot, func);
	return 0;
}

int smq_pci_parse_spec(const char *arg, char dev[16], int *bar)
{
	char spec[64];
	const char *slash = strchr(arg, '/');

	*bar = -1;
	if (strlen(arg) >= sizeof(spec))
		return -EINVAL;
	snprintf(spec, sizeof(spec), "%.*s",
		 (int)(slash ? (size_t)(slash - arg) : strlen(arg)), arg);
	if (parse_bdf(spec, dev))
		return -EINVAL;
	if (slash) {
		char *end;
		long v = strtol(slash + 1, &end, 10);
		if (end == slash + 1 || *end || v < 0 || v > 5)
			return -EINVAL;
		*bar = (int)v;
	}
	return 0;
}

void smq_pci_link_base(const char *dev, const char *name, char *out,
		       size_t n)
{
	char path[160], target[256];

	snprintf(path, sizeof(path), "%s/%s/%s", SYSFS_PCI, dev, name);
	ssize_t len = readlink(path, target, sizeof(target) - 1);
	target[len > 0 ? len : 0] = 0;
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	size_t l = strlen(base) < n ? strlen(base) : 0;
	memcpy(out, base, l);
	out[l] = 0;
}
