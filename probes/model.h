/* The PCIe cost model of the pcie-bench study: bytes on the link for writes and reads,
 * and what a writes-only queue can move.  Pure arithmetic, no I/O. */
#ifndef SMQ_MODEL_H
#define SMQ_MODEL_H

#include <stdint.h>

struct pcie_link_params {
	int gen;                /* 1..6 */
	int width;              /* lanes: 1, 2, 4, 8, 16, 32 */
	int mps, mrrs;          /* bytes: 128..4096, powers of two */
};

/* What is left of the physical rate after the data-link layer's flow
 * control and acknowledgements: the pcie-bench study takes 62.96 Gb/s to 57.88 Gb/s
 * ("about 8%", 8.07%), and this is exactly the ratio of its two figures. */
#define PCIE_DLL_EFFICIENCY (57.88 / 62.96)

/* Bytes a TLP adds on the link: a posted write (MWr) or a read request
 * (MRd), 2 framing + 6 DLL + 4 TLP + 12 header with 64-bit addresses; a
 * completion with data (CplD), 20. */
#define PCIE_MWR_OVERHEAD 24
#define PCIE_CPLD_OVERHEAD 20

/* An smq entry: a 16-byte header before the payload, written as whole
 * 64-byte lines; the top of the sender's lane_in line is one more line. */
#define PCIE_QUEUE_HEADER 16
#define PCIE_QUEUE_LINE 64

/* Bits per second on the physical layer after line encoding (8b/10b for
 * Gen1-2, 128b/130b from Gen3; Gen6's FLIT mode taken as 242/256), and
 * after the data-link overhead the pcie-bench study gives (about 8%). */
double pcie_phy_bps(const struct pcie_link_params *p);
double pcie_data_bps(const struct pcie_link_params *p);

/* Bytes on the link for a write of sz bytes: ceil(sz/MPS)*24 + sz. */
uint64_t pcie_write_bytes(const struct pcie_link_params *p, uint64_t sz);
/* A read of sz bytes: ceil(sz/MRRS)*24 + sz upstream (requests) plus
 * ceil(sz/MPS)*20 + sz of completions downstream. */
uint64_t pcie_read_request_bytes(const struct pcie_link_params *p, uint64_t sz);
uint64_t pcie_read_completion_bytes(const struct pcie_link_params *p,
				    uint64_t sz);
/* Effective payload bandwidth (bytes/s) of back-to-back writes of sz. */
double pcie_write_bandwidth(const struct pcie_link_params *p, uint64_t sz);
/* Highest messages/s of a writes-only smq queue for messages of sz bytes:
 * the entry (16-byte header + payload, in whole 64-byte lines) plus the
 * top line, written across the link per message. */
double pcie_queue_msgs_per_s(const struct pcie_link_params *p, uint64_t sz);
/* Checks a parameter set: 0 or -EINVAL. */
int pcie_params_check(const struct pcie_link_params *p);

/* Added for smqctl model: */
/* Transfer rate of one lane in GT/s (2.5, 5, 8, 16, 32, 64), 0 if gen is
 * not 1..6; the line encoding ("8b/10b", "128b/130b", "FLIT 242/256") and
 * its efficiency (0.8, 128/130, 242/256; 0 if gen is not 1..6). */
double pcie_gen_gts(int gen);
const char *pcie_gen_encoding(int gen);
double pcie_gen_encoding_efficiency(int gen);
/* Bytes on the link per message of sz bytes through a writes-only queue:
 * pcie_write_bytes of the entry's lines plus pcie_write_bytes of the top
 * line. */
uint64_t pcie_queue_msg_bytes(const struct pcie_link_params *p, uint64_t sz);
/* Why a parameter set is bad: the first bad field ("gen", "width", "mps"
 * or "mrrs") in *field and what it may be, or NULL if it is good. */
const char *pcie_params_why(const struct pcie_link_params *p,
			    const char **field);

#endif
