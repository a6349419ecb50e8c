/* The PCIe cost model (probes/model.c) against values computed by hand,
 * then `smqctl model --json` against the library, and its usage errors. */
#include <math.h>
#include <stdbool.h>
#include <sys/wait.h>
#include "testlib.h"
#include "model.h"

/* the least count of checks a run makes (120 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(100);

static void near(double got, double want, double rel, const char *what)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		FAIL("%s: got %.12g, expected %.12g (relative %g)", what, got,
		     want, rel);
}

#define EQ64(call, want) do { uint64_t g_ = (call), w_ = (want); \
		if (g_ != w_) FAIL("%s = %llu, expected %llu", #call, \
				   (unsigned long long)g_, (unsigned long long)w_); \
	} while (0)

static const struct pcie_link_params gen3x8 = { 3, 8, 256, 512 };

static void rates(void)
{
	struct pcie_link_params p = gen3x8;

	/* 8 GT/s x 128/130 x 8 lanes */
	near(pcie_phy_bps(&p), 63.015384615384615e9, 1e-9, "Gen3 x8 phy");
	near(pcie_phy_bps(&p), 8e9 * 128 / 130 * 8, 1e-12, "Gen3 x8 phy");
	p.gen = 1, p.width = 1;
	near(pcie_phy_bps(&p), 2e9, 1e-12, "Gen1 x1 phy");     /* 2.5e9 * 8/10 */
	p.gen = 2, p.width = 4;
	near(pcie_phy_bps(&p), 16e9, 1e-12, "Gen2 x4 phy");    /* 5e9 * 0.8 * 4 */
	p.gen = 4, p.width = 16;
	near(pcie_phy_bps(&p), 16e9 * 128 / 130 * 16, 1e-12, "Gen4 x16 phy");
	p.gen = 5, p.width = 1;
	near(pcie_phy_bps(&p), 32e9 * 128 / 130, 1e-12, "Gen5 x1 phy");
	p.gen = 6, p.width = 2;
	near(pcie_phy_bps(&p), 64e9 * 242 / 256 * 2, 1e-12, "Gen6 x2 phy");

	/* the data-link factor is the pcie-bench study's ratio, 57.88 / 62.96 */
	near(PCIE_DLL_EFFICIENCY, 0.91931385006353240, 1e-12, "DLL factor");
	p = gen3x8;
	near(pcie_data_bps(&p), pcie_phy_bps(&p) * 57.88 / 62.96, 1e-12,
	     "Gen3 x8 data");
	/* the study's 57.88 Gb/s, from 62.96 (its rounded phy) ... */
	near(62.96e9 * PCIE_DLL_EFFICIENCY, 57.88e9, 1e-12, "the study's figure");
	/* ... and within 0.1% of it from the exact 63.015 Gb/s: 57.9309 */
	near(pcie_data_bps(&p), 57.88e9, 1e-3, "Gen3 x8 data vs the study");
	near(pcie_data_bps(&p), 57.930915844e9, 1e-9, "Gen3 x8 data");

	CHECK(pcie_gen_gts(1) == 2.5 && pcie_gen_gts(6) == 64);
	CHECK(pcie_gen_gts(0) == 0 && pcie_gen_gts(7) == 0);
	CHECK(!strcmp(pcie_gen_encoding(2), "8b/10b"));
	CHECK(!strcmp(pcie_gen_encoding(3), "128b/130b"));
}

static void bytes(void)
{
	const struct pcie_link_params *p = &gen3x8;

	/* writes at MPS 256: ceil(sz/256) * 24 + sz */
	EQ64(pcie_write_bytes(p, 0), 0);
	EQ64(pcie_write_bytes(p, 1), 25);
	EQ64(pcie_write_bytes(p, 64), 88);
	EQ64(pcie_write_bytes(p, 256), 280);
	EQ64(pcie_write_bytes(p, 257), 257 + 2 * 24);
	EQ64(pcie_write_bytes(p, 1000), 1000 + 4 * 24);    /* 1096 */
	EQ64(pcie_write_bytes(p, 4096), 4096 + 16 * 24);   /* 4480 */
	/* read requests at MRRS 512: ceil(sz/512) * 24 + sz */
	EQ64(pcie_read_request_bytes(p, 0), 0);
	EQ64(pcie_read_request_bytes(p, 64), 88);
	EQ64(pcie_read_request_bytes(p, 256), 280);
	EQ64(pcie_read_request_bytes(p, 1000), 1000 + 2 * 24);   /* 1048 */
	EQ64(pcie_read_request_bytes(p, 4096), 4096 + 8 * 24);   /* 4288 */
	/* completions at MPS 256: ceil(sz/256) * 20 + sz */
	EQ64(pcie_read_completion_bytes(p, 0), 0);
	EQ64(pcie_read_completion_bytes(p, 64), 84);
	EQ64(pcie_read_completion_bytes(p, 256), 276);
	EQ64(pcie_read_completion_bytes(p, 1000), 1000 + 4 * 20);  /* 1080 */
	EQ64(pcie_read_completion_bytes(p, 4096), 4096 + 16 * 20); /* 4416 */
	/* the largest entry, 16 MiB: 65536 TLPs */
	EQ64(pcie_write_bytes(p, 16u << 20), (16u << 20) + 65536 * 24);

	/* write bandwidth: data bytes/s x payload / bytes */
	near(pcie_write_bandwidth(p, 64), 57.930915844e9 / 8 * 64 / 88, 1e-9,
	     "write bandwidth 64");
	near(pcie_write_bandwidth(p, 4096), 57.930915844e9 / 8 * 4096 / 4480,
	     1e-9, "write bandwidth 4096");
	CHECK(pcie_write_bandwidth(p, 0) == 0);
}

static void queue(void)
{
	const struct pcie_link_params *p = &gen3x8;

	/* Gen3 x8, MPS 256: data 57.930915844e9 b/s = 7.2413644805e9 B/s.
	 * 0 bytes: the entry is the 16-byte header, one 64-byte line: a write
	 * of 64 = 64 + 24 = 88; the top line, another 88: 176 bytes, and
	 * 7.2413644805e9 / 176 = 41,144,116.37 messages/s.
	 * 64 bytes: 16 + 64 = 80, two lines = 128: 128 + 24 = 152, plus 88 for
	 * the top: 240 bytes, 7.2413644805e9 / 240 = 30,172,352.00 /s.
	 * 1000 bytes: 1016 -> 1024 (16 lines): 1024 + 4*24 = 1120, + 88 = 1208.
	 * 4096 bytes: 4112 -> 4160: 4160 + 17*24 = 4568, + 88 = 4656. */
	EQ64(pcie_queue_msg_bytes(p, 0), 176);
	EQ64(pcie_queue_msg_bytes(p, 48), 176);
	EQ64(pcie_queue_msg_bytes(p, 49), 240);
	EQ64(pcie_queue_msg_bytes(p, 64), 240);
	EQ64(pcie_queue_msg_bytes(p, 1000), 1208);
	EQ64(pcie_queue_msg_bytes(p, 4096), 4656);
	near(pcie_queue_msgs_per_s(p, 0), 41144116.366, 1e-9, "queue 0 bytes");
	near(pcie_queue_msgs_per_s(p, 64), 30172352.002, 1e-9, "queue 64 bytes");
	near(pcie_queue_msgs_per_s(p, 4096), 7241364480.50044 / 4656, 1e-9,
	     "queue 4096 bytes");
}

static void params(void)
{
	struct pcie_link_params p = gen3x8;
	const char *field;

	OK(pcie_params_check(&p));
	CHECK(pcie_params_why(&p, &field) == NULL && field == NULL);
	for (int g = 1; g <= 6; g++) {
		p.gen = g;
		OK(pcie_params_check(&p));
	}
	int widths[] = { 1, 2, 4, 8, 16, 32 };
	for (unsigned i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		p = gen3x8, p.width = widths[i];
		OK(pcie_params_check(&p));
	}
	for (int b = 128; b <= 4096; b *= 2) {
		p = gen3x8, p.mps = b, p.mrrs = b;
		OK(pcie_params_check(&p));
	}
	struct { int gen, width, mps, mrrs; const char *field; } bad[] = {
		{ 0, 8, 256, 512, "gen" }, { 7, 8, 256, 512, "gen" },
		{ -1, 8, 256, 512, "gen" },
		{ 3, 0, 256, 512, "width" }, { 3, 3, 256, 512, "width" },
		{ 3, 12, 256, 512, "width" }, { 3, 64, 256, 512, "width" },
		{ 3, 8, 100, 512, "mps" }, { 3, 8, 64, 512, "mps" },
		{ 3, 8, 8192, 512, "mps" }, { 3, 8, 384, 512, "mps" },
		{ 3, 8, 0, 512, "mps" },
		{ 3, 8, 256, 1000, "mrrs" }, { 3, 8, 256, 0, "mrrs" },
		{ 3, 8, 256, 8192, "mrrs" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pcie_link_params b = { bad[i].gen, bad[i].width,
					      bad[i].mps, bad[i].mrrs };
		EXPECT(pcie_params_check(&b), -EINVAL);
		CHECK(pcie_params_why(&b, &field) != NULL);
		if (!field || strcmp(field, bad[i].field))
			FAIL("case %u: bad field %s, expected %s", i,
			     field ? field : "(null)", bad[i].field);
		/* bad parameters give 0, never a division by zero */
		CHECK(pcie_queue_msgs_per_s(&b, 64) == 0);
		CHECK(pcie_write_bandwidth(&b, 64) == 0);
	}
	EXPECT(pcie_params_check(NULL), -EINVAL);
}

/* ---- the CLI ---- */

static char smqctl[4096];

static int find_smqctl(const char *argv0)
{
	const char *b = getenv("B");
	if (b && *b)
		snprintf(smqctl, sizeof(smqctl), "%s/smqctl", b);
	else {
		/* $B/tests/t_probe_model -> $B/smqctl */
		const char *slash = strrchr(argv0, '/');
		int n = slash ? (int)(slash - argv0) : 1;
		snprintf(smqctl, sizeof(smqctl), "%.*s/../smqctl", n,
			 slash ? argv0 : ".");
	}
	return access(smqctl, X_OK) == 0 && !strchr(smqctl, '\'');
}

/* Runs smqctl with args, output (stdout and, if err, stderr) into buf;
 * returns the exit status. */
static int run_cli(const char *args, bool err, char *buf, size_t n)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "'%s' %s %s", smqctl, args,
		 err ? "2>&1" : "2>/dev/null");
	FILE *f = popen(cmd, "r");
	if (!f)
		FAIL("popen %s: %s", cmd, strerror(errno));
	size_t len = fread(buf, 1, n - 1, f);
	buf[len] = 0;
	int st = pclose(f);
	if (st == -1 || !WIFEXITED(st))
		FAIL("%s did not exit", cmd);
	return WEXITSTATUS(st);
}

/* The number after "key": within [from, to). */
static double json_num(const char *from, const char *to, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	const char *s = strstr(from, pat);
	if (!s || (to && s >= to))
		FAIL("no \"%s\" in the JSON", key);
	char *end;
	double v = strtod(s + strlen(pat), &end);
	if (end == s + strlen(pat))
		FAIL("\"%s\" is not a number", key);
	return v;
}

static void cli_json(void)
{
	const struct pcie_link_params *p = &gen3x8;
	static char out[65536];
	int rc = run_cli("model --gen 3 --width 8 --mps 256 --mrrs 512 "
			 "--size 64,4096 --json", false, out, sizeof(out));
	if (rc)
		FAIL("smqctl model --json exited %d:\n%s", rc, out);
	CHECK(json_num(out, NULL, "gen") == 3);
	CHECK(json_num(out, NULL, "width") == 8);
	CHECK(json_num(out, NULL, "mps") == 256);
	CHECK(json_num(out, NULL, "mrrs") == 512);
	near(json_num(out, NULL, "phy_gbps"), pcie_phy_bps(p) / 1e9, 1e-9,
	     "json phy_gbps");
	near(json_num(out, NULL, "data_gbps"), pcie_data_bps(p) / 1e9, 1e-9,
	     "json data_gbps");
	uint64_t sizes[] = { 64, 4096 };
	const char *at = strstr(out, "\"sizes\"");
	CHECK(at);
	for (int i = 0; i < 2; i++) {
		uint64_t sz = sizes[i];
		at = strstr(at, "\"size\": ");
		CHECK(at);
		const char *end = strchr(at, '}');
		CHECK(end);
		CHECK(json_num(at, end, "size") == (double)sz);
		CHECK(json_num(at, end, "write_bytes") ==
		      (double)pcie_write_bytes(p, sz));
		CHECK(json_num(at, end, "read_request_bytes") ==
		      (double)pcie_read_request_bytes(p, sz));
		CHECK(json_num(at, end, "read_completion_bytes") ==
		      (double)pcie_read_completion_bytes(p, sz));
		CHECK(json_num(at, end, "read_bytes") ==
		      (double)(pcie_read_request_bytes(p, sz) +
			       pcie_read_completion_bytes(p, sz)));
		CHECK(json_num(at, end, "queue_bytes") ==
		      (double)pcie_queue_msg_bytes(p, sz));
		near(json_num(at, end, "write_efficiency"),
		     (double)sz / (double)pcie_write_bytes(p, sz), 1e-5,
		     "json write_efficiency");
		near(json_num(at, end, "write_mb_per_s"),
		     pcie_write_bandwidth(p, sz) / 1e6, 1e-9,
		     "json write_mb_per_s");
		near(json_num(at, end, "write_gbps"),
		     pcie_write_bandwidth(p, sz) * 8 / 1e9, 1e-9,
		     "json write_gbps");
		near(json_num(at, end, "queue_msgs_per_s"),
		     pcie_queue_msgs_per_s(p, sz), 1e-9, "json queue_msgs_per_s");
		at = end;
	}
	/* the hand-computed figure too: 7241364480.50044 / 240 */
	CHECK(strstr(out, "\"queue_msgs_per_s\": 30172352.002"));
}

static void cli_usage(void)
{
	static const struct { const char *args, *opt; } bad[] = {
		{ "--gen 7", "--gen" }, { "--gen 0", "--gen" },
		{ "--width 3", "--width" }, { "--width x", "--width" },
		{ "--mps 100", "--mps" }, { "--mps 8192", "--mps" },
		{ "--mrrs 1000", "--mrrs" }, { "--size 1,x", "--size" },
		{ "--dump /nonexistent", "--dump" }, { "-s zz:zz.9", "-s" },
	};
	char out[8192], args[256];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "model %s", bad[i].args);
		int rc = run_cli(args, true, out, sizeof(out));
		if (rc != 2 || !strstr(out, bad[i].opt))
			FAIL("smqctl %s: exit %d (expected 2) and a message "
			     "naming %s:\n%s", args, rc, bad[i].opt, out);
	}
	/* the defaults are the pcie-bench study's example, and the output says
	 * so, naming the study, never our own notes */
	int rc = run_cli("model", true, out, sizeof(out));
	if (rc || !strstr(out, "PCIe Gen3 x8") || !strstr(out, "MPS 256") ||
	    !strstr(out, "MRRS 512") || !strstr(out, "pcie-bench") ||
	    strstr(out, "seed") ||
	    !strstr(out, "full-duplex"))
		FAIL("smqctl model: exit %d:\n%s", rc, out);
	rc = run_cli("model --size 0 --json", true, out, sizeof(out));
	if (rc || !strstr(out, "\"source\": \"default\"") ||
	    !strstr(out, "\"write_bytes\": 0") ||
	    !strstr(out, "\"queue_bytes\": 176"))
		FAIL("smqctl model --size 0 --json: exit %d:\n%s", rc, out);
}

/* -s from a dump (tests/data/pci-dumps/, kept by the probe tests): the link of
 * the device, and the same numbers as the library for it. */
static void cli_slot(void)
{
	static const char dump[] = "tests/data/pci-dumps/ntb-bridges.txt";
	static char out[65536];
	char args[512];

	if (access(dump, R_OK)) {
		printf("note: no %s: -s is not tested\n", dump);
		return;
	}
	/* 01:00.0, a PLX NT port: LnkCap 8GT/s x8, LnkSta 2.5GT/s x4, MPS 256,
	 * MRRS 512 */
	snprintf(args, sizeof(args), "model -s 01:00.0 --dump %s --size 64 "
		 "--json", dump);
	int rc = run_cli(args, true, out, sizeof(out));
	if (rc)
		FAIL("smqctl %s: exit %d:\n%s", args, rc, out);
	const struct pcie_link_params p = { 1, 4, 256, 512 };
	CHECK(strstr(out, "\"source\": \"device\""));
	CHECK(strstr(out, "\"device\": \"0000:01:00.0\""));
	CHECK(strstr(out, "\"downgraded\": true"));
	CHECK(json_num(out, NULL, "cap_gen") == 3);
	CHECK(json_num(out, NULL, "cap_width") == 8);
	CHECK(json_num(out, NULL, "gen") == p.gen);
	CHECK(json_num(out, NULL, "width") == p.width);
	CHECK(json_num(out, NULL, "mps") == p.mps);
	CHECK(json_num(out, NULL, "mrrs") == p.mrrs);
	near(json_num(out, NULL, "data_gbps"), pcie_data_bps(&p) / 1e9, 1e-9,
	     "-s data_gbps");     /* 2.5 x 0.8 x 4 = 8 Gb/s x 57.88/62.96 */
	near(json_num(out, NULL, "queue_msgs_per_s"),
	     pcie_queue_msgs_per_s(&p, 64), 1e-9, "-s queue_msgs_per_s");

	/* the command line overrides what was read */
	snprintf(args, sizeof(args), "model -s 01:00.0 --dump %s --gen 3 "
		 "--mrrs 1024 --size 64 --json", dump);
	if ((rc = run_cli(args, true, out, sizeof(out))))
		FAIL("smqctl %s: exit %d:\n%s", args, rc, out);
	CHECK(json_num(out, NULL, "gen") == 3);
	CHECK(json_num(out, NULL, "width") == 4);
	CHECK(json_num(out, NULL, "mrrs") == 1024);

	/* a host bridge has no PCIe link; no device at 07:00.0: exit 1 */
	const char *fails[] = { "00:00.0", "07:00.0" };
	for (int i = 0; i < 2; i++) {
		snprintf(args, sizeof(args), "model -s %s --dump %s", fails[i],
			 dump);
		rc = run_cli(args, true, out, sizeof(out));
		if (rc != 1 || !strstr(out, "smqctl: "))
			FAIL("smqctl %s: exit %d (expected 1):\n%s", args, rc,
			     out);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	rates();
	bytes();
	queue();
	params();
	if (find_smqctl(argv[0])) {
		cli_json();
		cli_usage();
		cli_slot();
	} else {
		printf("note: no %s (build smqctl first): the CLI part is "
		       "skipped\n", smqctl);
	}
	return 0;
}
