/* The PCIe cost model of the pcie-bench study ("Understanding PCIe
 * performance for end host networking", SIGCOMM 2018), as arithmetic.
 *
 * Physical rate of a link: lanes x transfer rate x line-encoding efficiency.
 *   Gen1 2.5 GT/s, Gen2 5 GT/s: 8b/10b (0.8).
 *   Gen3 8, Gen4 16, Gen5 32 GT/s: 128b/130b.
 *   Gen6 64 GT/s (PAM4) in FLIT mode: a 256-byte flit carries 236 bytes of
 *   TLPs and 6 of data-link payload (DLP) beside 8 of CRC and 6 of FEC; we
 *   take 242/256 as its "encoding", the share the TLP and data-link layers
 *   get, and then apply the same data-link factor and the same per-TLP
 *   bytes as for the older generations.  That is an assumption: in flit
 *   mode there are no framing tokens and part of the data-link traffic
 *   rides in the DLP bytes, so for Gen6 the model somewhat overstates the
 *   overhead (it is a lower bound on what the link can move).
 *
 * Data rate: the physical rate times PCIE_DLL_EFFICIENCY = 57.88 / 62.96,
 * the ratio of the two figures the study gives for PCIe 3.0 x8 (62.96 Gb/s
 * physical, 57.88 Gb/s after flow control and acknowledgements, "8.07%").
 * The study rounds the lane rate to 7.87 Gb/s first; we keep the exact
 * physical rate (63.015 Gb/s for Gen3 x8) and the study's ratio, which gives
 * 57.93 Gb/s there, 0.09% above the study's 57.88.
 *
 * Bytes on the link (the study's equations 1-3):
 *   write of sz:  ceil(sz/MPS) * 24 + sz
 *   read of sz:   ceil(sz/MRRS) * 24 + sz upstream (the requests, as the
 *                 study writes it) and ceil(sz/MPS) * 20 + sz of completions
 *                 downstream.
 * 24 = 2 framing + 6 DLL + 4 TLP + 12 MWr/MRd header (64-bit addresses);
 * 20 per completion (CplD) is the study's figure: its header carries no
 * 64-bit address.
 * A transfer of 0 bytes sends no TLP: 0 bytes. */
#include <errno.h>
#include <stddef.h>
#include "model.h"

static const struct {
	double gts;
	double enc;
	const char *name;
} gens[] = {
	[1] = { 2.5, 8.0 / 10.0, "8b/10b" },
	[2] = { 5.0, 8.0 / 10.0, "8b/10b" },
	[3] = { 8.0, 128.0 / 130.0, "128b/130b" },
	[4] = { 16.0, 128.0 / 130.0, "128b/130b" },
	[5] = { 32.0, 128.0 / 130.0, "128b/130b" },
	[6] = { 64.0, 242.0 / 256.0, "FLIT 242/256" },
};

static int gen_ok(int gen)
{
	return gen >= 1 && gen <= 6;
}

static int width_ok(int w)
{
	return w == 1 || w == 2 || w == 4 || w == 8 || w == 16 || w == 32;
}

static int size_ok(int b)
{
	return b >= 128 && b <= 4096 && !(b & (b - 1));
}

const char *pcie_params_why(const struct pcie_link_params *p,
			    const char **field)
{
	const char *f = NULL, *why = NULL;

	if (!p)
		f = "params", why = "no parameters";
	else if (!gen_ok(p->gen))
		f = "gen", why = "the generation must be 1 to 6";
	else if (!width_ok(p->width))
		f = "width", why = "the width must be 1, 2, 4, 8, 16 or 32 lanes";
	else if (!size_ok(p->mps))
		f = "mps", why = "the maximum payload size must be a power of "
			"two from 128 to 4096 bytes";
	else if (!size_ok(p->mrrs))
		f = "mrrs", why = "the maximum read request size must be a "
			"power of two from 128 to 4096 bytes";
	if (field)
		*field = f;
	return why;
}

int pcie_params_check(const struct pcie_link_params *p)
{
	return pcie_params_why(p, NULL) ? -EINVAL : 0;
}

double pcie_gen_gts(int gen)
{
	return gen_ok(gen) ? gens[gen].gts : 0;
}

const char *pcie_gen_encoding(int gen)
{
	return gen_ok(gen) ? gens[gen].name : "?";
}

double pcie_gen_encoding_efficiency(int gen)
{
	return gen_ok(gen) ? gens[gen].enc : 0;
}

double pcie_phy_bps(const struct pcie_link_params *p)
{
	if (!p || !gen_ok(p->gen) || !width_ok(p->width))
		return 0;
	return gens[p->gen].gts * 1e9 * gens[p->gen].enc * p->width;
}

double pcie_data_bps(const struct pcie_link_params *p)
{
	return pcie_phy_bps(p) * PCIE_DLL_EFFICIENCY;
}

/* ceil(sz / unit) * per + sz, without overflow in the rounding */
static uint64_t tlp_bytes(uint64_t sz, int unit, unsigned per)
{
	if (unit <= 0)
		return 0;
	uint64_t u = (uint64_t)unit;
	return (sz / u + (sz % u != 0)) * per + sz;
}

uint64_t pcie_write_bytes(const struct pcie_link_params *p, uint64_t sz)
{
	return p ? tlp_bytes(sz, p->mps, PCIE_MWR_OVERHEAD) : 0;
}

uint64_t pcie_read_request_bytes(const struct pcie_link_params *p, uint64_t sz)
{
	return p ? tlp_bytes(sz, p->mrrs, PCIE_MWR_OVERHEAD) : 0;
}

uint64_t pcie_read_completion_bytes(const struct pcie_link_params *p,
				    uint64_t sz)
{
	return p ? tlp_bytes(sz, p->mps, PCIE_CPLD_OVERHEAD) : 0;
}

double pcie_write_bandwidth(const struct pcie_link_params *p, uint64_t sz)
{
	uint64_t bytes = pcie_write_bytes(p, sz);
	if (!sz || !bytes || pcie_params_check(p))
		return 0;
	return pcie_data_bps(p) / 8 * (double)sz / (double)bytes;
}

/* What smq_send writes into the receiver's region per message (see
 * libsmq/send.c and smq(7)): the entry, header and payload, which a
 * write-combining mapping moves as whole 64-byte lines, and then the top of
 * the sender's lane_in line; both are posted writes.  Each is counted as one
 * write of its bytes, split at MPS: the best case, as a DMA engine or a
 * burst of write-combined lines merged by the bridge would send them (a CPU
 * whose write-combining buffers emit one TLP per line pays 24 bytes a line
 * instead).  The receiver's bottom (its lane_fc line) crosses the other way
 * at every message; on a full-duplex link it takes nothing from this
 * direction, so it is not counted. */
uint64_t pcie_queue_msg_bytes(const struct pcie_link_params *p, uint64_t sz)
{
	const uint64_t line = PCIE_QUEUE_LINE;
	if (!p || sz > UINT64_MAX / 2)
		return 0;
	uint64_t entry = (PCIE_QUEUE_HEADER + sz + line - 1) / line * line;
	return pcie_write_bytes(p, entry) + pcie_write_bytes(p, line);
}

double pcie_queue_msgs_per_s(const struct pcie_link_params *p, uint64_t sz)
{
	uint64_t bytes = pcie_queue_msg_bytes(p, sz);
	if (!bytes || pcie_params_check(p))
		return 0;
	return pcie_data_bps(p) / 8 / (double)bytes;
}
