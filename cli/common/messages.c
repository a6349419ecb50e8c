/* Messages: "smqctl: ..." on stderr, after what stdout holds so far. */
#include <stdarg.h>
#include "../smqctl.h"

static void vmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("smqctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int say_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	return 1;
}

void say_warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

int say_no_group(const struct ctx *ctx, const char *name)
{
	return say_error("no group %s in %s (smqctl dump shows its groups; "
			 "smqctl init --group makes them)", name,
			 window_spec(ctx));
}
