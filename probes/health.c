/* probes: the health of a device's path to its root, from what decode.c
 * read: each PCI Express link on it against what both of its ends
 * support, and the payload sizes along it.  No libpci calls. */
#include <stdio.h>
#include <string.h>
#include <pci/pci.h>
#include "probe.h"

int probe_find(const struct probe_list *l, const char *bdf)
{
	unsigned dom = 0, bus, dev, fn;
	int n = 0;

	if (sscanf(bdf, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) != 4 ||
	    bdf[n]) {
		dom = 0;
		n = 0;
		if (sscanf(bdf, "%x:%x.%x%n", &bus, &dev, &fn, &n) != 3 ||
		    bdf[n])
			return -1;
	}
	for (int i = 0; i < l->n; i++) {
		const struct probe_dev *d = &l->dev[i];
		if ((unsigned)d->domain == dom && (unsigned)d->bus == bus &&
		    (unsigned)d->dev == dev && (unsigned)d->func == fn)
			return i;
	}
	return -1;
}

int probe_path(const struct probe_list *l, int dev, int path[PROBE_PATH_MAX])
{
	int n = 0;

	for (int i = dev; i >= 0 && n < PROBE_PATH_MAX; i = l->dev[i].parent)
		path[n++] = i;
	return n;
}

/* A port whose link status describes the link below it: its child's
 * status says the same, and is judged there. */
static bool downstream_port(const struct probe_link *k)
{
	return k->port_type == PCI_EXP_TYPE_ROOT_PORT ||
	       k->port_type == PCI_EXP_TYPE_DOWNSTREAM ||
	       k->port_type == PCI_EXP_TYPE_PCIE_BRIDGE;
}

static int min_known(int a, int b)
{
	return a && b ? (a < b ? a : b) : a ? a : b;
}

int probe_path_links(const struct probe_list *l, const int *path, int n,
		     struct probe_link_state *out, int max)
{
	int k = 0;

	for (int i = 0; i < n && k < max; i++) {
		const struct probe_dev *d = &l->dev[path[i]];
		const struct probe_link *e = &d->link;
		if (!e->present || !e->has_link || downstream_port(e))
			continue;
		struct probe_link_state *s = &out[k++];
		memset(s, 0, sizeof(*s));
		s->dev = path[i];
		s->port = i + 1 < n ? path[i + 1] : -1;
		s->speed = e->sta_speed;
		s->width = e->sta_width;
		s->can_speed = e->cap_speed;
		s->can_width = e->cap_width;
		if (s->port >= 0) {
			const struct probe_link *p = &l->dev[s->port].link;
			if (p->present && p->has_link) {
				s->can_speed = min_known(s->can_speed,
							 p->cap_speed);
				s->can_width = min_known(s->can_width,
							 p->cap_width);
				s->both_ends = true;
			}
		}
		s->down = !s->speed || !s->width;
		s->downgraded = !s->down && (s->speed < s->can_speed ||
					     s->width < s->can_width);
	}
	return k;
}

void probe_path_payload(const struct probe_list *l, const int *path, int n,
			struct probe_payload *out)
{
	memset(out, 0, sizeof(*out));
	out->over = out->receiver = -1;
	for (int i = 0; i < n; i++) {
		const struct probe_link *e = &l->dev[path[i]].link;
		if (!e->present)
			continue;
		out->known++;
		out->least_mps = out->least_mps ? min_known(out->least_mps,
							    e->mps) : e->mps;
		out->least_supported = out->least_supported
			? min_known(out->least_supported, e->mps_supported)
			: e->mps_supported;
		/* what a device sends up, every port above it receives */
		for (int j = i + 1; j < n && out->over < 0; j++) {
			const struct probe_link *p = &l->dev[path[j]].link;
			if (p->present && e->mps > p->mps) {
				out->over = path[i];
				out->receiver = path[j];
			}
		}
	}
	const struct probe_link *d = &l->dev[path[0]].link;
	out->mps = d->present ? d->mps : 0;
	out->mrrs = d->present ? d->mrrs : 0;
}
