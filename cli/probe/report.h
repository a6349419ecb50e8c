/* smqctl probe, in parts: the text report (text.c), the advice on how
 * to make a device usable (advice.c), the tree (tree.c) and JSON
 * (json.c).  cmd_probe.c holds the options and the command. */
#ifndef SMQCTL_PROBE_REPORT_H
#define SMQCTL_PROBE_REPORT_H

#include <inttypes.h>
#include "../smqctl.h"
#include "../shape/shape.h"
#include "probe.h"

struct probe_opts {
	struct probe_filter filter;
	const char *dump;
	const char *sysfs;      /* --sysfs: where sysfs is ("/sys" if NULL) */
	bool tree, ntb;
	/* a window's shape given (--boards, --from ...): the bytes it needs,
	 * said beside each candidate's BAR; need 0: none given */
	struct shape_opts *shape;
	uint64_t need;
};

/* ---- words ---- */

static inline const char *kind_key(enum probe_kind k)
{
	switch (k) {
	case PROBE_HOST_BRIDGE: return "host_bridge";
	case PROBE_PCI_BRIDGE:  return "pci_bridge";
	case PROBE_NTB:         return "ntb";
	default:                return "device";
	}
}

static inline bool is_bridge(const struct probe_dev *d)
{
	return d->header_type == 1 || d->header_type == 2;
}

/* Sizes as lspci writes them: 512K, 16M, 2G, 4096 is 4K, 1536 stays. */
static inline const char *size_str(uint64_t x, char buf[32])
{
	static const char *const suffix[] = { "", "K", "M", "G", "T" };
	unsigned i = 0;

	while (i < 4 && x && !(x % 1024)) {
		x /= 1024;
		i++;
	}
	snprintf(buf, 32, "%" PRIu64 "%s", x, suffix[i]);
	return buf;
}

/* "0000:00:01.0", or "00:01.0" when every device is in domain 0 (lspci). */
static inline void slot_str(const struct probe_dev *d, bool domains,
			    char buf[32])
{
	if (domains)
		snprintf(buf, 32, "%04x:%02x:%02x.%d", d->domain, d->bus, d->dev,
			 d->func);
	else
		snprintf(buf, 32, "%02x:%02x.%d", d->bus, d->dev, d->func);
}

static inline bool window_open(uint64_t base, uint64_t limit)
{
	return base <= limit;
}

static inline bool shown_bar(const struct probe_bar *b, bool ntb_only)
{
	return !ntb_only || b->window_ok;
}

static inline bool shown_dev(const struct probe_dev *d, bool ntb_only)
{
	return !ntb_only || d->kind == PROBE_NTB || d->cxl.memory;
}

static inline bool is_cardbus(const struct probe_dev *d)
{
	return d->header_type == 2;
}

void json_list(const struct probe_list *l, const struct probe_opts *o);
void print_list(const struct probe_list *l, const struct probe_opts *o,
		int verbose);
void print_use(const struct probe_dev *d, const struct probe_opts *o);
void print_tree(const struct probe_list *l, const struct probe_opts *o);
struct probe_list ntb_tree_list(const struct probe_list *l);

#endif
