/* probes: the PCI hierarchy read through libpci (pciutils): bridges and
 * non-transparent bridges, BARs and whether they could carry an smq window,
 * PCIe links and payload sizes.  Config space is decoded (decode.c) from
 * what libpci reads, the same registers lspci decodes, so a recorded dump
 * (the dump access method, lspci -F) and the live bus go through one path.
 *
 * libpci reports a fatal error through pacc->error, which must not return
 * and by default prints and exits.  A library must do neither: our handler
 * records the message and longjmps back to the guard around every libpci
 * call, which turns it into a negative errno.  The handler takes no context
 * argument, so the jump target and the message are thread-local: the one
 * piece of state outside the caller's objects.
 *
 * This file is the scan, its guard and the device tree; decode.c decodes
 * one device's config space, judge.c says what smq can make of it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pci/pci.h>
#include "probe_int.h"

static _Thread_local jmp_buf *fatal_jump;
static _Thread_local char last_error[256];

const char *probe_last_error(void)
{
	return last_error;
}

static void set_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

static void libpci_error(char *msg, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void libpci_error(char *msg, ...)
{
	va_list ap;
	va_start(ap, msg);
	vsnprintf(last_error, sizeof(last_error), msg, ap);
	va_end(ap);
	if (fatal_jump)
		longjmp(*fatal_jump, 1);
	abort();  /* every libpci call runs under a guard: cannot happen */
}

/* Warnings ("Bus 02 seen twice") and debugging: libpci carries on; so do
 * we, silently. */
static void libpci_quiet(char *msg, ...) __attribute__((format(printf, 1, 2)));
static void libpci_quiet(char *msg, ...)
{
	(void)msg;
}

/* ---- filters ---- */

static int parse_filters(const struct probe_filter *pf, struct filters *f)
{
	char buf[256];
	char *err;

	/* pci_filter_init ignores its access argument (pciutils 3.3 on) */
	pci_filter_init(NULL, &f->slot);
	pci_filter_init(NULL, &f->id);
	f->use_slot = f->use_id = false;
	if (!pf)
		return 0;
	if (pf->slot && *pf->slot) {
		snprintf(buf, sizeof(buf), "%s", pf->slot);
		if ((err = pci_filter_parse_slot(&f->slot, buf))) {
			set_error("-s %s: %s", pf->slot, err);
			return -EINVAL;
		}
		f->use_slot = true;
	}
	if (pf->id && *pf->id) {
		snprintf(buf, sizeof(buf), "%s", pf->id);
		if ((err = pci_filter_parse_id(&f->id, buf))) {
			set_error("-d %s: %s", pf->id, err);
			return -EINVAL;
		}
		f->use_id = true;
	}
	return 0;
}

int probe_filter_check(const struct probe_filter *filter)
{
	struct filters f;
	last_error[0] = 0;
	return parse_filters(filter, &f);
}

/* ---- scanning and the device tree ---- */

static int by_address(const void *a, const void *b)
{
	const struct probe_dev *x = a, *y = b;
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->func > y->func) - (x->func < y->func);
}

/* All libpci work; runs under the guard of probe_scan. */
static int scan_bus(struct scan *s, const char *dump)
{
	s->pacc = pci_alloc();
	if (!s->pacc) {
		set_error("out of memory");
		return -ENOMEM;
	}
	s->pacc->error = libpci_error;
	s->pacc->warning = libpci_quiet;
	s->pacc->debug = libpci_quiet;
	/* Without a hwdb file libpci (3.9) opens a udev context for every ID
	 * pci.ids lacks and never frees it; the hwdb has nothing to add then. */
	s->no_hwdb = access("/etc/udev/hwdb.bin", R_OK) &&
		     access("/usr/lib/udev/hwdb.bin", R_OK) &&
		     access("/lib/udev/hwdb.bin", R_OK);
	if (dump) {
		s->pacc->method = PCI_ACCESS_DUMP;
		if (pci_set_param(s->pacc, (char *)"dump.name", (char *)dump)) {
			set_error("this libpci has no dump access method");
			return -ENOTSUP;
		}
	} else
		s->pacc->method = PCI_ACCESS_SYS_BUS_PCI;
	/* the dump method parses the file in pci_init: its errors are the
	 * file's ("dump: Malformed line") */
	s->fail = dump ? -EINVAL : -EIO;
	pci_init(s->pacc);
	s->fail = -EIO;
	pci_scan_bus(s->pacc);

	for (struct pci_dev *d = s->pacc->devices; d; d = d->next) {
		if (s->n == s->cap) {
			int cap = s->cap ? 2 * s->cap : 64;
			struct probe_dev *nd = realloc(s->dev, (size_t)cap * sizeof(*nd));
			if (!nd) {
				set_error("out of memory");
				return -ENOMEM;
			}
			s->dev = nd;
			s->cap = cap;
		}
		probe_read_dev(s, d, &s->dev[s->n]);
		/* the match travels with the device through the sort */
		s->dev[s->n].parent =
			(!s->filt.use_slot || pci_filter_match(&s->filt.slot, d)) &&
			(!s->filt.use_id || pci_filter_match(&s->filt.id, d));
		s->n++;
	}
	return 0;
}

/* The bridge whose secondary bus a device sits on. */
static int find_parent(const struct probe_dev *dev, int n, int i)
{
	for (int j = 0; j < n; j++) {
		const struct probe_dev *b = &dev[j];
		if (j != i && (b->header_type == PCI_HEADER_TYPE_BRIDGE ||
			       b->header_type == PCI_HEADER_TYPE_CARDBUS) &&
		    b->domain == dev[i].domain && b->secondary == dev[i].bus &&
		    b->secondary > b->bus)
			return j;
	}
	return -1;
}

/* Sorts the devices as lspci does, finds each one's bridge among all of
 * them, and hands the matching ones to list with parents among those. */
static int keep_matches(struct scan *s, struct probe_list *list)
{
	int *newidx = malloc(((size_t)s->n + 1) * sizeof(*newidx));
	int *parent = malloc(((size_t)s->n + 1) * sizeof(*parent));
	int m = 0;

	if (!newidx || !parent) {
		free(newidx);
		free(parent);
		set_error("out of memory");
		return -ENOMEM;
	}
	if (s->n)
		qsort(s->dev, (size_t)s->n, sizeof(*s->dev), by_address);
	for (int i = 0; i < s->n; i++) {
		newidx[i] = s->dev[i].parent ? m++ : -1;  /* the match flag */
		parent[i] = find_parent(s->dev, s->n, i);
	}
	for (int i = 0, k = 0; i < s->n; i++) {
		if (newidx[i] < 0)
			continue;
		s->dev[k] = s->dev[i];
		s->dev[k].parent = parent[i] >= 0 ? newidx[parent[i]] : -1;
		k++;
	}
	free(newidx);
	free(parent);
	list->scanned = s->n;
	list->n = m;
	if (m) {
		list->dev = s->dev;
		s->dev = NULL;
	}
	return 0;
}

static void cleanup_pacc(struct pci_access *pacc)
{
	jmp_buf jb;
	jmp_buf *outer = fatal_jump;

	if (!setjmp(jb)) {
		fatal_jump = &jb;
		pci_cleanup(pacc);
	}
	fatal_jump = outer;
}

int probe_scan(struct probe_list *list, const struct probe_filter *filter,
	       const char *dump)
{
	struct scan *s;
	jmp_buf jb;
	jmp_buf *outer = fatal_jump;
	int err;

	memset(list, 0, sizeof(*list));
	list->from_dump = dump != NULL;
	last_error[0] = 0;
	s = calloc(1, sizeof(*s));
	if (!s) {
		set_error("out of memory");
		return -ENOMEM;
	}
	s->dump = dump != NULL;
	err = parse_filters(filter, &s->filt);
	if (err)
		goto out;
	if (dump) {
		/* say why the file cannot be read with errno, not libpci */
		FILE *f = fopen(dump, "r");
		if (!f) {
			err = -errno;
			set_error("%s", strerror(errno));
			goto out;
		}
		fclose(f);
	} else if (access(SYSFS_PCI, F_OK)) {
		set_error("%s is missing", SYSFS_PCI);
		err = -ENODEV;
		goto out;
	}

	if (setjmp(jb)) {
		err = s->fail;
		/* "dump: Malformed line": the caller names the file */
		if (dump && !strncmp(last_error, "dump: ", 6))
			memmove(last_error, last_error + 6,
				strlen(last_error + 6) + 1);
		goto out;
	}
	fatal_jump = &jb;
	err = scan_bus(s, dump);
out:
	fatal_jump = outer;
	if (s->pacc)
		cleanup_pacc(s->pacc);
	if (!err)
		err = keep_matches(s, list);
	if (err)
		list->n = list->scanned = 0;
	free(s->dev);
	free(s);
	return err;
}

void probe_free(struct probe_list *list)
{
	if (!list)
		return;
	free(list->dev);
	list->dev = NULL;
	list->n = 0;
}
