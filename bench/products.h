/* The smq project's benchmark (smq-bench): smq beside other products that
 * move messages between processes of one host, measured in the same run
 * on the same two CPUs: UCX (baseline_ucx.c), POSIX message queues, pipes
 * and Unix sockets (baseline_stream.c).  Above smqctl's measurement module
 * (cli/measure/), whose sessions, baselines and output it uses; never
 * installed: what judges a board is smqctl bench --baseline's. */
#ifndef SMQ_BENCH_PRODUCTS_H
#define SMQ_BENCH_PRODUCTS_H

#include "../cli/measure/measure.h"

/* UCX's tag-matching bandwidth test (ucx_perftest -t tag_bw) streaming
 * count messages of size bytes from cpu_a to cpu_b over the transports of
 * ucx_transports(): $UCX_TLS, else its POSIX shared memory ("posix,self").
 * -ENOENT when ucx_perftest is not installed.  ucx_parse() reads the
 * client's final figures (-f -v) into r: 0 or -EIO. */
int baseline_ucx(size_t size, uint64_t count, int cpu_a, int cpu_b,
		 struct result *r, const char **why);
const char *ucx_transports(void);
int ucx_parse(const char *out, struct result *r);
/* A stream of count messages of size bytes from cpu_a to cpu_b through a
 * pipe, a Unix SEQPACKET socket or a POSIX message queue; as the other
 * baselines: 0, or a negative errno with *why set. */
enum stream_kind { STREAM_PIPE, STREAM_UNIX, STREAM_MQUEUE };
int baseline_stream(enum stream_kind kind, size_t size, uint64_t count,
		    int cpu_a, int cpu_b, struct result *r, const char **why);

#endif
