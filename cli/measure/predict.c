/* What the PCIe cost model predicts for a session's window (see
 * session.h). */
#include <stdio.h>
#include <string.h>
#include "model.h"
#include "probe.h"
#include "session.h"

void session_predict(const struct session *s, struct result *r, int n,
		     char *note, size_t len)
{
	char slot[32];
	struct probe_list list = { 0 };
	unsigned dom, bus, dev, fn;

	if (strcmp(s->wi.transport, "pci") ||
	    sscanf(s->wi.name, "pci:%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) {
		snprintf(note, len, "none: the window is not on a PCI device");
		return;
	}
	snprintf(slot, sizeof(slot), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	struct probe_filter f = { slot, NULL };
	if (probe_scan(&list, &f, NULL) || list.n != 1) {
		snprintf(note, len, "none: %s not found by the probe", slot);
		probe_free(&list);
		return;
	}
	const struct probe_link *k = &list.dev[0].link;
	struct pcie_link_params p = { k->sta_speed, k->sta_width, k->mps,
				      k->mrrs };
	if (!k->present || pcie_params_check(&p)) {
		snprintf(note, len, "none: %s has no PCIe link to model", slot);
		probe_free(&list);
		return;
	}
	for (int i = 0; i < n; i++)
		r[i].predicted = pcie_queue_msgs_per_s(&p, r[i].size);
	snprintf(note, len, "the PCIe model for Gen%d x%d, MPS %d, MRRS %d "
		 "(smqctl model)", p.gen, p.width, p.mps, p.mrrs);
	probe_free(&list);
}

