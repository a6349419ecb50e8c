/* smqctl probe --json: the devices, their BARs, links and what smq can
 * make of them, as JSON. */
#include "report.h"

static void json_hex(struct json *j, const char *key, unsigned v, int digits)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%0*x", digits, v);
	json_str(j, key, buf);
}

static void json_window(struct json *j, const char *key, uint64_t base,
			uint64_t limit)
{
	json_begin(j, key, '{');
	json_u64(j, "base", base);
	json_u64(j, "limit", limit);
	json_bool(j, "open", window_open(base, limit));
	json_end(j, '}');
}

/* A CardBus bridge's two memory or two I/O windows. */
static void json_cardbus(struct json *j, const char *key,
			 const struct probe_window *w, bool io)
{
	json_begin(j, key, '[');
	for (int i = 0; i < 2; i++) {
		json_begin(j, NULL, '{');
		json_u64(j, "base", w[i].base);
		json_u64(j, "limit", w[i].limit);
		json_bool(j, "open", window_open(w[i].base, w[i].limit));
		if (io)
			json_bool(j, "io32", w[i].io32);
		else
			json_bool(j, "prefetchable", w[i].prefetch);
		json_bool(j, "disabled", w[i].disabled);
		json_end(j, '}');
	}
	json_end(j, ']');
}

static void json_bridge(struct json *j, const struct probe_dev *d)
{
	json_begin(j, "bridge", '{');
	json_u64(j, "primary", (uint64_t)d->primary);
	json_u64(j, "secondary", (uint64_t)d->secondary);
	json_u64(j, "subordinate", (uint64_t)d->subordinate);
	if (is_cardbus(d)) {
		json_cardbus(j, "cardbus_memory", d->cb_mem, false);
		json_cardbus(j, "cardbus_io", d->cb_io, true);
	} else {
		json_window(j, "memory", d->mem_base, d->mem_limit);
		json_window(j, "prefetchable", d->pref_base, d->pref_limit);
		json_bool(j, "prefetchable_64bit", d->pref64);
	}
	json_end(j, '}');
}

static void json_bars(struct json *j, const struct probe_dev *d,
		      bool ntb_only)
{
	json_begin(j, "bars", '[');
	for (int i = 0; i < d->nbars; i++) {
		const struct probe_bar *b = &d->bars[i];
		if (!shown_bar(b, ntb_only))
			continue;
		json_begin(j, NULL, '{');
		json_u64(j, "index", (uint64_t)b->index);
		json_u64(j, "address", b->addr);
		json_u64(j, "size", b->size);
		json_bool(j, "size_known", b->size_known);
		json_bool(j, "io", b->io);
		json_bool(j, "is64", b->is64);
		json_bool(j, "prefetchable", b->prefetch);
		json_bool(j, "disabled", b->disabled);
		json_bool(j, "virtual", b->is_virtual);
		json_bool(j, "window_ok", b->window_ok);
		json_bool(j, "preferred", b->preferred);
		json_str(j, "why", b->why);
		json_str(j, "role", b->role);
		json_end(j, '}');
	}
	json_end(j, ']');
}

static void json_pcie(struct json *j, const struct probe_link *k)
{
	json_begin(j, "pcie", '{');
	json_u64(j, "port_type", (uint64_t)k->port_type);
	json_str(j, "port_type_name", probe_port_type_name(k->port_type));
	json_bool(j, "has_link", k->has_link);
	if (k->has_link) {
		json_u64(j, "cap_speed", (uint64_t)k->cap_speed);
		json_str(j, "cap_speed_name", probe_speed_name(k->cap_speed));
		json_u64(j, "cap_width", (uint64_t)k->cap_width);
		json_u64(j, "sta_speed", (uint64_t)k->sta_speed);
		json_str(j, "sta_speed_name", probe_speed_name(k->sta_speed));
		json_u64(j, "sta_width", (uint64_t)k->sta_width);
		json_bool(j, "downgraded", k->downgraded);
	}
	json_u64(j, "mps_supported", (uint64_t)k->mps_supported);
	json_u64(j, "mps", (uint64_t)k->mps);
	json_u64(j, "mrrs", (uint64_t)k->mrrs);
	json_end(j, '}');
}

/* The CXL DVSECs, as lspci -vv decodes them */
static void json_cxl(struct json *j, const struct probe_cxl *x)
{
	json_begin(j, "cxl", '{');
	json_bool(j, "device", x->device);
	if (x->device) {
		json_bool(j, "cap_cache", x->cap_cache);
		json_bool(j, "cap_io", x->cap_io);
		json_bool(j, "cap_mem", x->cap_mem);
		json_bool(j, "mem_hwinit", x->mem_hwinit);
		json_u64(j, "hdm_count", (uint64_t)x->hdm_count);
		json_bool(j, "ctl_cache", x->ctl_cache);
		json_bool(j, "ctl_io", x->ctl_io);
		json_bool(j, "ctl_mem", x->ctl_mem);
	}
	json_bool(j, "port", x->port);
	json_bool(j, "flexbus", x->flexbus);
	if (x->flexbus) {
		json_bool(j, "fb_cap_cache", x->fb_cap_cache);
		json_bool(j, "fb_cap_io", x->fb_cap_io);
		json_bool(j, "fb_cap_mem", x->fb_cap_mem);
		json_bool(j, "fb_cap_68b_flit", x->fb_cap_68b);
		json_bool(j, "fb_cap_mld", x->fb_cap_mld);
		json_bool(j, "fb_sta_cache", x->fb_sta_cache);
		json_bool(j, "fb_sta_io", x->fb_sta_io);
		json_bool(j, "fb_sta_mem", x->fb_sta_mem);
		json_bool(j, "fb_sta_68b_flit", x->fb_sta_68b);
		json_bool(j, "fb_sta_mld", x->fb_sta_mld);
	}
	json_bool(j, "memory", x->memory);
	if (x->memory) {
		json_str(j, "memdev", x->memdev);
		json_str(j, "root_decoder", x->decoder);
		json_u64(j, "root_decoders", (uint64_t)x->decoders);
	}
	json_end(j, '}');
}

/* What smq can make of the device, and the commands that would make it
 * usable (none for a device that is no candidate). */
static void json_use(struct json *j, const struct probe_dev *d,
		     const struct probe_opts *o)
{
	const struct probe_use *u = &d->use;
	struct probe_advice a;
	const struct probe_bar *b = NULL;

	for (int i = 0; i < d->nbars; i++)
		if (d->bars[i].index == u->bar)
			b = &d->bars[i];

	probe_advise(d, &a);
	json_begin(j, "smq", '{');
	json_bool(j, "candidate", u->candidate);
	json_str(j, "what", u->what);
	json_str(j, "why", u->why);
	if (u->candidate) {
		json_str(j, "access", probe_access_name(u->access));
		json_i64(j, "bar", u->bar);
		json_str(j, "spec", a.spec);
		json_bool(j, "fits", u->fits);
		json_bool(j, "usable", a.usable);
		json_bool(j, "doorbells", a.doorbells);
		json_bool(j, "doorbell_capable", u->doorbell_capable);
		/* the window the shape given needs: does the BAR hold it
		 * (null: its size is not known) */
		if (o->need && b && b->size_known && b->size)
			json_bool(j, "window_fits", o->need <= b->size);
		else if (o->need)
			json_null(j, "window_fits");
	}
	json_begin(j, "commands", '[');
	for (int i = 0; i < a.ncmds; i++)
		json_str(j, NULL, a.cmds[i]);
	json_end(j, ']');
	json_end(j, '}');
}

static void json_dev(struct json *j, const struct probe_list *l,
		     const struct probe_dev *d, const struct probe_opts *o)
{
	char slot[32];

	json_begin(j, NULL, '{');
	slot_str(d, true, slot);
	json_str(j, "slot", slot);
	json_u64(j, "domain", (uint64_t)d->domain);
	json_u64(j, "bus", (uint64_t)d->bus);
	json_u64(j, "dev", (uint64_t)d->dev);
	json_u64(j, "func", (uint64_t)d->func);
	json_hex(j, "vendor", d->vendor, 4);
	json_hex(j, "device", d->device, 4);
	json_hex(j, "subvendor", d->subvendor, 4);
	json_hex(j, "subdevice", d->subdevice, 4);
	json_hex(j, "class", d->class, 6);
	json_u64(j, "revision", d->revision);
	json_str(j, "vendor_name", d->vendor_name);
	json_str(j, "device_name", d->device_name);
	json_str(j, "class_name", d->class_name);
	json_u64(j, "header_type", (uint64_t)d->header_type);
	json_str(j, "kind", kind_key(d->kind));
	if (d->kind == PROBE_NTB)
		json_str(j, "ntb_kind", d->ntb_kind);
	if (d->parent >= 0) {
		slot_str(&l->dev[d->parent], true, slot);
		json_str(j, "parent", slot);
	}
	json_i64(j, "numa_node", d->numa_node);
	json_str(j, "driver", d->driver);
	json_str(j, "iommu_group", d->iommu_group);
	json_bool(j, "config_limited", d->config_limited);
	json_bool(j, "msix", d->msix);
	if (is_bridge(d))
		json_bridge(j, d);
	json_bars(j, d, o->ntb);
	if (d->link.present)
		json_pcie(j, &d->link);
	if (d->cxl.present)
		json_cxl(j, &d->cxl);
	json_use(j, d, o);
	json_end(j, '}');
}

/* --ntb: the devices left out, each with what it is and why. */
static void json_not_candidates(struct json *j, const struct probe_list *l)
{
	char slot[32];

	json_begin(j, "not_candidates", '[');
	for (int i = 0; i < l->n; i++) {
		const struct probe_dev *d = &l->dev[i];
		if (d->use.candidate)
			continue;
		json_begin(j, NULL, '{');
		slot_str(d, true, slot);
		json_str(j, "slot", slot);
		json_hex(j, "class", d->class, 6);
		json_str(j, "class_name", d->class_name);
		json_str(j, "driver", d->driver);
		json_str(j, "what", d->use.what);
		json_str(j, "why", d->use.why);
		json_end(j, '}');
	}
	json_end(j, ']');
}

void json_list(const struct probe_list *l, const struct probe_opts *o)
{
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "source", o->dump ? "dump" : "live");
	if (o->dump)
		json_str(&j, "dump", o->dump);
	json_u64(&j, "scanned", (uint64_t)l->scanned);
	if (o->need) {
		char words[160];
		json_begin(&j, "window", '{');
		json_str(&j, "shape", shape_words(o->shape, words,
						  sizeof(words)));
		json_u64(&j, "window_size", o->need);
		json_end(&j, '}');
	}
	json_begin(&j, "devices", '[');
	for (int i = 0; i < l->n; i++)
		if (shown_dev(&l->dev[i], o->ntb))
			json_dev(&j, l, &l->dev[i], o);
	json_end(&j, ']');
	if (o->ntb)
		json_not_candidates(&j, l);
	json_end(&j, '}');
	json_close(&j);
}
