/* smqctl check: the checks between boards. */
#include "check.h"

int check_boards(struct check_run *cr)
{
	check_skip_group(cr, "cross", "not built yet: they need the scratch "
			 "area of smq(7)");
	return 0;
}
