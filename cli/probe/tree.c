/* smqctl probe --tree: the PCI hierarchy as a tree. */
#include <stdlib.h>
#include <string.h>
#include "report.h"

/* What a tree line says after the name: a bridge's buses and windows, a
 * device's memory BARs, marked where a window fits. */
static void tree_info(const struct probe_dev *d, bool ntb_only)
{
	char a[32], b[32];

	if (d->kind == PROBE_NTB)
		printf("  {NTB: %s}", d->ntb_kind);
	else if (d->kind == PROBE_HOST_BRIDGE)
		printf("  {host bridge}");
	if (is_bridge(d))
		printf("  [bus %02x-%02x]", d->secondary, d->subordinate);
	for (int i = 0; is_cardbus(d) && i < 2; i++) {
		const struct probe_window *w = &d->cb_mem[i];
		if (window_open(w->base, w->limit))
			printf(" mem%d %" PRIx64 "-%" PRIx64 " (%s%s)", i, w->base,
			       w->limit, size_str(w->limit - w->base + 1, a),
			       w->prefetch ? ", pref" : "");
	}
	if (is_bridge(d) && !is_cardbus(d)) {
		if (window_open(d->mem_base, d->mem_limit))
			printf(" mem %" PRIx64 "-%" PRIx64 " (%s)", d->mem_base,
			       d->mem_limit, size_str(d->mem_limit - d->mem_base + 1, a));
		if (window_open(d->pref_base, d->pref_limit))
			printf(" pref %" PRIx64 "-%" PRIx64 " (%s%s)", d->pref_base,
			       d->pref_limit,
			       size_str(d->pref_limit - d->pref_base + 1, b),
			       d->pref64 ? ", 64-bit" : "");
	}
	for (int i = 0; i < d->nbars; i++) {
		const struct probe_bar *bar = &d->bars[i];
		if (bar->io || !shown_bar(bar, ntb_only))
			continue;
		printf("  BAR%d %s%s%s%s", bar->index,
		       bar->size_known && bar->size ? size_str(bar->size, a) : "?",
		       bar->is64 ? " 64-bit" : "", bar->prefetch ? " pref" : "",
		       bar->window_ok ? " [window]" : "");
	}
	if (d->link.present && d->link.has_link)
		printf("  %s x%d%s", probe_speed_name(d->link.sta_speed),
		       d->link.sta_width, d->link.downgraded ? " (downgraded)" : "");
}

static void tree_node(const struct probe_list *l, int idx, const char *prefix,
		      bool last, const struct probe_opts *o)
{
	const struct probe_dev *d = &l->dev[idx];
	char child_prefix[256];
	int kids = 0, seen = 0;

	printf("%s%s%02x.%d  %s %s", prefix, last ? "\\-" : "+-", d->dev,
	       d->func, d->vendor_name, d->device_name);
	tree_info(d, o->ntb);
	putchar('\n');
	for (int i = 0; i < l->n; i++)
		kids += l->dev[i].parent == idx;
	if (!kids)
		return;
	snprintf(child_prefix, sizeof(child_prefix), "%s%s", prefix,
		 last ? "    " : "|   ");
	printf("%s\\-[%04x:%02x]\n", child_prefix, d->domain, d->secondary);
	snprintf(child_prefix, sizeof(child_prefix), "%s%s      ", prefix,
		 last ? "    " : "|   ");
	for (int i = 0; i < l->n; i++)
		if (l->dev[i].parent == idx)
			tree_node(l, i, child_prefix, ++seen == kids, o);
}

void print_tree(const struct probe_list *l, const struct probe_opts *o)
{
	/* roots: the devices no listed bridge is above, by their bus */
	for (int i = 0; i < l->n; i++) {
		const struct probe_dev *d = &l->dev[i];
		if (d->parent >= 0)
			continue;
		bool first = true;
		for (int k = 0; k < i; k++)
			if (l->dev[k].parent < 0 && l->dev[k].domain == d->domain &&
			    l->dev[k].bus == d->bus)
				first = false;
		if (!first)
			continue;
		int n = 0, seen = 0;
		const struct probe_dev *host = NULL;
		for (int k = i; k < l->n; k++) {
			const struct probe_dev *e = &l->dev[k];
			if (e->parent < 0 && e->domain == d->domain &&
			    e->bus == d->bus) {
				n++;
				if (e->kind == PROBE_HOST_BRIDGE && !host)
					host = e;
			}
		}
		printf("[%04x:%02x]", d->domain, d->bus);
		if (host)
			printf(" below host bridge %02x.%d %s %s", host->dev,
			       host->func, host->vendor_name, host->device_name);
		putchar('\n');
		for (int k = i; k < l->n; k++) {
			const struct probe_dev *e = &l->dev[k];
			if (e->parent < 0 && e->domain == d->domain &&
			    e->bus == d->bus)
				tree_node(l, k, " ", ++seen == n, o);
		}
	}
}

/* --ntb keeps only the NTBs: the tree needs the bridges above them too,
 * so the list it draws marks the rest as context. */
struct probe_list ntb_tree_list(const struct probe_list *l)
{
	struct probe_list t = *l;
	bool *keep = calloc((size_t)l->n + 1, sizeof(*keep));
	int *idx = malloc(((size_t)l->n + 1) * sizeof(*idx));

	t.dev = malloc(((size_t)l->n + 1) * sizeof(*t.dev));
	t.n = 0;
	if (!keep || !idx || !t.dev) {
		free(keep);
		free(idx);
		free(t.dev);
		t.dev = NULL;
		return t;
	}
	for (int i = 0; i < l->n; i++)
		if (l->dev[i].kind == PROBE_NTB)
			for (int p = i; p >= 0 && !keep[p]; p = l->dev[p].parent)
				keep[p] = true;
	for (int i = 0; i < l->n; i++) {
		idx[i] = keep[i] ? t.n : -1;
		if (keep[i]) {
			t.dev[t.n] = l->dev[i];
			t.dev[t.n].parent = l->dev[i].parent >= 0
				? idx[l->dev[i].parent] : -1;
			t.n++;
		}
	}
	free(keep);
	free(idx);
	return t;
}
