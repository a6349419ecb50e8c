/* smqctl metrics --listen: GET /metrics over HTTP, served by libmicrohttpd.
 *
 * One thread of libmicrohttpd polls every connection (epoll) and calls
 * answer() for each request, one at a time: the window handle, kept
 * between scrapes, is only ever used by that thread.  A client costs the
 * boards nothing: it only makes us read the window.  A slow client, a
 * request too large, or more connections than the limit are libmicrohttpd's
 * to time out, refuse or close, without stopping the others. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "metrics.h"

/* Connections served at once (the others are closed at once), seconds a
 * connection may stay idle, bytes a request's header may take. */
#define MAX_CONNECTIONS 128
#define IDLE_TIMEOUT_S 10
#define REQUEST_MEMORY (32 * 1024)
#define DEFAULT_ADDR "127.0.0.1"

static int split_addr(const char *s, char *host, size_t n, const char **port)
{
	const char *colon = strrchr(s, ':');

	if (s[0] == '[') {        /* [ADDR6]:PORT */
		const char *end = strchr(s, ']');
		if (!end || end[1] != ':' || (size_t)(end - s - 1) >= n)
			return -1;
		snprintf(host, n, "%.*s", (int)(end - s - 1), s + 1);
		*port = end + 2;
	} else if (!colon || colon == s) {  /* PORT, :PORT */
		snprintf(host, n, "%s", DEFAULT_ADDR);
		*port = colon ? colon + 1 : s;
	} else {                  /* ADDR:PORT; an IPv6 address needs [] */
		size_t len = (size_t)(colon - s);
		if (len >= n || memchr(s, ':', len))
			return -1;
		snprintf(host, n, "%.*s", (int)(colon - s), s);
		*port = colon + 1;
	}
	return 0;
}

int listen_addr_parse(const char *s, struct listen_addr *a, char *err,
		      size_t n)
{
	struct addrinfo hints = { 0 }, *res;
	char host[64];
	const char *port;
	char *end;

	memset(a, 0, sizeof(*a));
	snprintf(a->text, sizeof(a->text), "%s", s);
	if (split_addr(s, host, sizeof(host), &port) < 0) {
		snprintf(err, n, "--listen needs ADDR:PORT, [ADDR]:PORT for an "
			 "IPv6 address, or PORT, not '%s'", s);
		return -1;
	}
	unsigned long p = strtoul(port, &end, 10);
	if (!*port || *end || port[0] == '-' || port[0] == '+' || p < 1 ||
	    p > 65535) {
		snprintf(err, n, "--listen: the port must be a number from 1 "
			 "to 65535, not '%s'", port);
		return -1;
	}
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, n, "--listen: no address '%s': %s", host,
			 gai_strerror(rc));
		return -1;
	}
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Our own socket, so that an address in use or not of this host is said
 * in words before anything starts.  Returns it, or -1 (said). */
static int open_socket(const struct listen_addr *a)
{
	int one = 1, e;
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
			SOCK_NONBLOCK, 0);

	if (fd < 0) {
		e = errno;
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, (const struct sockaddr *)&a->ss, a->len) &&
		    !listen(fd, SOMAXCONN))
			return fd;
		e = errno;
		close(fd);
	}
	say_error("cannot listen on %s: %s%s", a->text, strerror(e),
		  e == EADDRINUSE ? " (another process serves that port)"
		  : e == EADDRNOTAVAIL ? " (no interface of this host has "
		  "that address)" : "");
	return -1;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     char *body, size_t len, const char *type)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer_with_free_callback(len, body,
								   free);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status,
				  const char *text)
{
	char *body = strdup(text);

	return body ? reply(c, status, body, strlen(body),
			    "text/plain; charset=utf-8") : MHD_NO;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct metrics_src *m = cls;
	struct mbuf b = { 0 };

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "only GET and HEAD\n");
	if (!strcmp(url, "/"))
		return reply_text(c, MHD_HTTP_OK, "smqctl metrics: the "
				  "window's metrics are at /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: the "
				  "metrics are at /metrics\n");
	if (metrics_scrape(m, &b) == -ENOMEM) {
		mbuf_free(&b);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "out of memory\n");
	}
	metrics_tell(m);
	return reply(c, MHD_HTTP_OK, b.p, b.len, METRICS_CONTENT_TYPE);
}

static struct MHD_Daemon *start(struct metrics_src *m, int fd)
{
	return MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC,
				0, NULL, NULL, answer, m,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT,
				(unsigned)MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned)IDLE_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)REQUEST_MEMORY,
				MHD_OPTION_END);
}

int metrics_listen(struct metrics_src *m, const struct listen_addr *a)
{
	sigset_t set;
	int sig;

	/* the server's thread inherits the mask: SIGINT and SIGTERM come to
	 * sigwait below, and a client gone away is no SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	metrics_block_signals();
	int fd = open_socket(a);
	if (fd < 0)
		return 1;
	/* the first look: what the handle has seen of the heartbeats counts
	 * from here, and a window that cannot be read is said at once */
	metrics_read(m);
	metrics_tell(m);
	struct MHD_Daemon *d = start(m, fd);
	if (!d) {
		close(fd);
		return say_error("cannot serve HTTP on %s", a->text);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	while (sigwait(&set, &sig))
		;
	MHD_stop_daemon(d);  /* closes the listening socket too */
	return 0;
}
