/* bench --baseline: smq beside the baselines measured in the same run
 * (compare.c), and the comparisons' output (print.c). */
#ifndef SMQ_COMPARE_H
#define SMQ_COMPARE_H

#include <stdbool.h>
#include "measure.h"

/* One comparison: smq's figure against a baseline's. */
struct row {
	char what[48];
	const char *unit;       /* "ns", "msgs/s", "MB/s" */
	double smq, base;
	const char *base_name;
	bool lower_better;      /* latencies */
	double target;          /* the ratio smq/base to reach; NAN: none,
				   the row is for information */
};

/* The comparisons as JSON (with the measurements m behind them), CSV or a
 * text table.  a and b: the two CPUs, -1 when not pinned. */
void rows_json(int a, int b, bool interrupted,
	       const struct result *const *m, int nm,
	       const struct row *r, int n);
void rows_csv(const struct row *r, int n);
void rows_text(const struct row *r, int n);

#endif
