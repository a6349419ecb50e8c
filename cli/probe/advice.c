/* smqctl probe: whether smq can use a device, and the commands that
 * would make it usable. */
#include <string.h>
#include "report.h"

/* "smq: ivshmem-doorbell: BAR0 registers (...), BAR2 shared memory" */
static void print_roles(const struct probe_dev *d)
{
	const char *sep = ": ";
	bool ivshmem = !strncmp(d->use.what, "ivshmem", 7), roles = false;

	for (int i = 0; i < d->nbars; i++)
		roles |= d->bars[i].role[0] != 0;
	if (!roles && !ivshmem)
		return;  /* "Non-transparent bridge:" has said what it is */
	printf("\tsmq: %s", d->use.what);
	for (int i = 0; i < d->nbars; i++)
		if (d->bars[i].role[0]) {
			printf("%sBAR%d %s", sep, d->bars[i].index,
			       d->bars[i].role);
			sep = ", ";
		}
	if (d->use.doorbell_capable)
		printf("; MSI-X: doorbells through vfio-pci");
	else if (ivshmem)
		printf("; no MSI-X: no doorbell, receivers poll");
	putchar('\n');
}

static void print_commands(const struct probe_dev *d, const struct probe_advice *a)
{
	if (!a->ncmds)
		return;
	if (a->to_vfio && d->use.access == PROBE_ACCESS_SYSFS)
		printf("\tsmq: for doorbells, bind it to vfio-pci");
	else if (a->to_vfio)
		printf("\tsmq: to use it with doorbells, bind it to vfio-pci");
	else
		printf("\tsmq: to map it through sysfs, unbind its driver");
	if (d->use.access == PROBE_ACCESS_UNKNOWN && a->to_vfio)
		printf(" (on the machine the dump is from; skip the unbind if "
		       "no driver holds it)");
	else if (d->use.access == PROBE_ACCESS_UNKNOWN)
		printf(" (on the machine the dump is from, if a driver holds "
		       "it)");
	printf(":\n");
	for (int i = 0; i < a->ncmds; i++)
		printf("\t\t%s\n", a->cmds[i]);
	if (!a->to_vfio)
		return;
	printf("\tsmq: vfio-pci needs the device in an IOMMU group "
	       "(/sys/bus/pci/devices/%s/iommu_group)", a->bdf);
	if (d->iommu_group[0])
		printf(": it is in group %s\n", d->iommu_group);
	else if (d->use.access == PROBE_ACCESS_UNKNOWN)
		printf("\n");
	else
		printf(": it is in none; turn the IOMMU on (intel_iommu=on or "
		       "amd_iommu=on on the kernel's command line)\n");
}

/* The window the shape given needs, against the BAR smq would map. */
static void print_need(const struct probe_bar *b, const struct probe_opts *o)
{
	char words[160], need[32], has[32];

	printf("\tsmq: window for %s: %s (%" PRIu64 " bytes); ",
	       shape_words(o->shape, words, sizeof(words)),
	       human_bytes(o->need, need), o->need);
	if (!b->size_known || !b->size) {
		printf("BAR%d's size is not known%s\n", b->index,
		       o->dump ? " (a dump has none)" : "");
		return;
	}
	printf("BAR%d has %s: %s\n", b->index, human_bytes(b->size, has),
	       o->need <= b->size ? "fits" : "does not fit");
	if (o->need > b->size) {
		struct shape_fit f;
		shape_fit(o->shape, b->size, &f);
		print_fit(stdout, "\t\t", o->shape, &f);
	}
}

/* CXL memory: the commands that make a device-DAX device of it, on every
 * host that shares it. */
static void print_cxl_use(const struct probe_dev *d,
			  const struct probe_advice *a)
{
	const struct probe_cxl *x = &d->cxl;

	printf("\tsmq: CXL memory: a window on it is %s, a device-DAX "
	       "device made of it on every host that shares it, the same way "
	       "on each: one device, no interleave (-w 1); --map=mem "
	       "(--map=dev would put each host's page structures into the "
	       "shared memory); the same alignment everywhere (-a 2M):\n",
	       a->spec);
	for (int i = 0; i < a->ncmds; i++)
		printf("\t\t%s\n", a->cmds[i]);
	if (x->memdev[0] && x->decoder[0])
		printf("\tsmq: (%s is this device on Linux's CXL bus, %s the "
		       "root decoder of persistent memory; ", x->memdev,
		       x->decoder);
	else if (x->decoders > 1)
		printf("\tsmq: (%d root decoders map persistent memory: "
		       "DECODER is the one whose targets reach this device, "
		       "as cxl list -D names them; ", x->decoders);
	else
		printf("\tsmq: (MEMDEV and DECODER as cxl list names them: "
		       "the memory device and its root decoder; ");
	printf("-t ram for volatile capacity, then daxctl makes the device; "
	       "the hosts must be coherent with the memory: smq writes no "
	       "cache back)\n");
}

/* Whether smq can use a candidate as it stands, and how it could. */
void print_use(const struct probe_dev *d, const struct probe_opts *o)
{
	const struct probe_use *u = &d->use;
	const struct probe_bar *b = NULL;
	struct probe_advice a;

	probe_advise(d, &a);
	if (a.cxl) {
		print_cxl_use(d, &a);
		return;
	}
	print_roles(d);
	for (int i = 0; i < d->nbars; i++)
		if (d->bars[i].index == u->bar)
			b = &d->bars[i];
	if (!b)
		printf("\tsmq: no memory BAR to map\n");
	else if (u->access == PROBE_ACCESS_UNKNOWN)
		printf("\tsmq: driver unknown (from a dump); smq would map %s "
		       "when no driver holds it (receivers poll)%s\n", a.spec,
		       a.to_vfio ? ", or with doorbells once it is bound to "
		       "vfio-pci" : "");
	else if (!u->fits)
		printf("\tsmq: %s cannot carry a window: %s\n", a.spec, b->why);
	else if (a.usable)
		printf("\tsmq: usable as it is: %s, %s; %s\n", a.spec,
		       u->access == PROBE_ACCESS_VFIO ? "through VFIO (vfio-pci)"
		       : "mapped through sysfs (no driver)", a.doorbells
		       ? "with doorbells (MSI-X)" : "receivers poll");
	else
		printf("\tsmq: not usable as it is: driver %s holds it\n",
		       d->driver);
	if (b && o->need)
		print_need(b, o);
	print_commands(d, &a);
}
