// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit export --listen ADDR:PORT: GET /metrics over HTTP/1.1, one scrape
 * at a time, in one thread.  The peer may be hostile: a request must
 * arrive whole within EXPORT_READ_SECONDS of the connection and within
 * EXPORT_HEADER_MAX bytes, a response be taken within
 * EXPORT_WRITE_SECONDS, and at most EXPORT_CONNECTIONS are open.  A
 * connection's request is read as soon as it is accepted; when the table is
 * full the oldest connection that has sent nothing is dropped for a new one
 * (the oldest of all if every one has sent something), after reading what
 * it may have sent meanwhile: slow senders (slowloris), huge headers and
 * floods of idle connections cost bounded memory and time, and a scraper
 * that sends its request at once is served.  Out of descriptors (EMFILE),
 * the listening socket is left unpolled until a connection closes.  Every refusal is counted in
 * mmkit_exporter_rejected_requests_total.  Each response closes its
 * connection.
 *
 * "--listen systemd" takes the listening socket from systemd's socket
 * activation (LISTEN_PID, LISTEN_FDS: descriptor 3).  Port 0 takes a free
 * port; the address served is printed on standard output either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "cli.h"
#include "export.h"

struct conn {
	int fd;
	size_t len;
	double deadline;		/* of the request, CLOCK_MONOTONIC */
	char buf[EXPORT_HEADER_MAX + 1];
};

struct server {
	const struct export_opts *o;
	int listen_fd;
	struct conn *conns[EXPORT_CONNECTIONS];
	size_t n;
	int paused;			/* out of descriptors: the listener not polled */
	double paused_until;
	struct export_counters c;
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	stopping = sig;
}

/*
 * Connections are accepted once their request's first bytes arrived, or
 * after EXPORT_DEFER_SECONDS (TCP_DEFER_ACCEPT): a flood of connections
 * that send nothing waits in the kernel's queue of half-open connections,
 * not in the table where it would push out a scraper's whose request is on
 * its way.  Best effort: without it, make_room() still drops the idle first.
 */
static void defer_accept(int fd)
{
	int seconds = EXPORT_DEFER_SECONDS;

	setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &seconds, sizeof(seconds));
}

/* The socket systemd passed (LISTEN_FDS=1 for this PID), or -1 after a message. */
static int systemd_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int yes = 0;
	socklen_t len = sizeof(yes);

	if (!pid || !fds || atoi(pid) != (int)getpid() || atoi(fds) != 1) {
		cli_error("export: --listen systemd: no socket from systemd (LISTEN_PID, "
			  "LISTEN_FDS=1): run it from mmkit-exporter.socket");
		return -1;
	}
	if (getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &yes, &len) || !yes) {
		cli_error("export: --listen systemd: descriptor 3 is not a listening socket");
		return -1;
	}
	/* accept_some() takes connections until there are none left. */
	fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
	fcntl(3, F_SETFD, FD_CLOEXEC);
	defer_accept(3);
	return 3;
}

/* Splits "HOST:PORT", "[V6]:PORT" or ":PORT" (every address); -EINVAL. */
static int split_address(const char *spec, char *host, size_t hlen, const char **port)
{
	const char *colon = strrchr(spec, ':'), *h = spec;
	size_t len;

	if (!colon || !colon[1])
		return -EINVAL;
	len = (size_t)(colon - spec);
	if (len && spec[0] == '[') {
		if (spec[len - 1] != ']')
			return -EINVAL;
		h++;
		len -= 2;
	}
	if (len >= hlen)
		return -EINVAL;
	memcpy(host, h, len);
	host[len] = '\0';
	*port = colon + 1;
	return strspn(*port, "0123456789") == strlen(*port) && strlen(*port) <= 5 &&
	       atoi(*port) <= 65535 ? 0 : -EINVAL;
}

/* Prints the address served, "listening on ADDR:PORT", so that port 0 is usable. */
static void say_address(int fd)
{
	char host[INET6_ADDRSTRLEN] = "?";
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int port = 0;

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return;
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		printf("listening on %s:%d\n", host, port);
	} else if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		printf("listening on [%s]:%d\n", host, port);
	}
	fflush(stdout);
}

/*
 * The address of @host (numeric IPv4 or IPv6, "" for every IPv6 and IPv4
 * address) and @port into @ss; -EINVAL.  Numeric only: a name would need
 * the resolver, which a static mmkit cannot load.
 */
static int parse_address(const char *host, const char *port, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	uint16_t p = htons((uint16_t)atoi(port));

	memset(ss, 0, sizeof(*ss));
	if (!*host || inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = p;
		if (!*host)
			in6->sin6_addr = in6addr_any;
		*len = sizeof(*in6);
		return 0;
	}
	if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
		return -EINVAL;
	in->sin_family = AF_INET;
	in->sin_port = p;
	*len = sizeof(*in);
	return 0;
}

/* The listening socket, -1 (a failure) or -2 (a malformed @spec) after a message. */
static int open_listener(const char *spec)
{
	struct sockaddr_storage ss;
	const char *port;
	char host[INET6_ADDRSTRLEN];
	socklen_t len;
	int fd, err, one = 1;

	if (!strcmp(spec, "systemd"))
		return systemd_socket();
	if (split_address(spec, host, sizeof(host), &port) ||
	    parse_address(host, port, &ss, &len)) {
		cli_error("export: --listen '%s': not ADDR:PORT with a numeric address "
			  "(127.0.0.1:9977, [::1]:9977, :9977 for every address, or systemd)", spec);
		return -2;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		defer_accept(fd);
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		err = errno;
		if (err == EADDRINUSE)
			cli_error("export: --listen %s: the address is in use: another program "
				  "listens on port %s (choose another port)", spec, port);
		else if (err == EACCES)
			cli_error("export: --listen %s: %s (a port below 1024 takes privilege)",
				  spec, strerror(err));
		else
			cli_error("export: --listen %s: %s", spec, strerror(err));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void drop(struct server *s, size_t i)
{
	close(s->conns[i]->fd);
	free(s->conns[i]);
	s->conns[i] = s->conns[--s->n];
	s->paused = 0;
}

/* Sends all of [p, p + len) by @deadline; -ETIMEDOUT or -errno. */
static int send_all(int fd, const char *p, size_t len, double deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	ssize_t n;
	double left;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		left = deadline - cli_now();
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static void respond(struct server *s, int fd, const char *status, const char *type,
		    const char *body, size_t len, int head)
{
	double deadline = cli_now() + EXPORT_WRITE_SECONDS;
	char header[256];
	int n;

	n = snprintf(header, sizeof(header), "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, type, len);
	if (send_all(fd, header, (size_t)n, deadline) == -ETIMEDOUT ||
	    (!head && send_all(fd, body, len, deadline) == -ETIMEDOUT))
		s->c.rejected[REJECT_TIMEOUT]++;
}

static void refuse(struct server *s, int fd, enum export_reject why, const char *status)
{
	char body[128];
	int n = snprintf(body, sizeof(body), "%s\n", status);

	s->c.rejected[why]++;
	respond(s, fd, status, "text/plain; charset=utf-8", body, (size_t)n, 0);
}

/*
 * The quality (0 to 1) the media range [p, end) of an Accept header gives
 * OpenMetrics 1.0.0 (*om) and the text format 0.0.4 (*text), raised only:
 * "application/openmetrics-text" with no version or version=1.0.0, and
 * "text/plain" with no version or version=0.0.4, "text/ *" and "* / *" for the
 * text format; q=0 refuses (RFC 9110 12.4.2).
 */
static void media_range(const char *p, const char *end, double *om, double *text)
{
	const char *semi, *type_end, *version = NULL, *pend;
	size_t vlen = 0, tlen;
	double q = 1;
	int is_om, is_text;

	if (end <= p)
		return;
	semi = memchr(p, ';', (size_t)(end - p));
	type_end = semi ? semi : end;
	while (type_end > p && (type_end[-1] == ' ' || type_end[-1] == '\t'))
		type_end--;
	tlen = (size_t)(type_end - p);
	for (p = semi; p && p < end; p = pend) {
		const char *param = p + 1;

		pend = memchr(param, ';', (size_t)(end - param));
		if (!pend)
			pend = end;
		param += strspn(param, " \t");
		if (!strncasecmp(param, "q=", 2))
			q = strtod(param + 2, NULL);
		else if (!strncasecmp(param, "version=", 8)) {
			version = param + 8;
			for (vlen = 0; version + vlen < pend && !strchr(" \t", version[vlen]); vlen++)
				;
		}
	}
#define IS(str) (tlen == sizeof(str) - 1 && !strncasecmp(type_end - tlen, str, tlen))
#define VERSION(str) (!version || (vlen == sizeof(str) - 1 && !strncmp(version, str, vlen)))
	is_om = IS("application/openmetrics-text") && VERSION("1.0.0");
	is_text = (IS("text/plain") && VERSION("0.0.4")) || IS("text/*") || IS("*/*");
#undef IS
#undef VERSION
	if (is_om && q > *om)
		*om = q;
	if (is_text && q > *text)
		*text = q;
}

/*
 * 1 if the request's Accept headers prefer OpenMetrics 1.0.0 to the text
 * format 0.0.4 (or accept only it); the text format otherwise, and when
 * there is no Accept header.
 */
static int wants_openmetrics(const char *req)
{
	const char *line = strchr(req, '\n'), *eol, *p, *comma;
	double om = 0, text = 0;

	for (; line && line[1]; line = eol) {
		line++;
		eol = strchr(line, '\n');
		if (!eol)
			break;
		if (strncasecmp(line, "Accept:", 7))
			continue;
		for (p = line + 7; p < eol; p = comma + 1) {
			comma = memchr(p, ',', (size_t)(eol - p));
			if (!comma)
				comma = eol;
			p += strspn(p, " \t");
			media_range(p, comma > p && comma[-1] == '\r' ? comma - 1 : comma, &om, &text);
		}
	}
	return om > 0 && om >= text;
}

/* A whole request is in @c: answers it. */
static void serve(struct server *s, struct conn *c)
{
	char *body = NULL, *target, *version, *q;
	size_t len = 0;
	int head, om, ret;
	FILE *f;

	c->buf[c->len] = '\0';
	target = strchr(c->buf, ' ');
	version = target ? strchr(target + 1, ' ') : NULL;
	/* HTTP/1.0 and HTTP/1.1 only (RFC 9112 2.3): not HTTP/1.9 nor HTTP/1.10. */
	if (!version || (strncmp(version + 1, "HTTP/1.0", 8) && strncmp(version + 1, "HTTP/1.1", 8)) ||
	    !strchr("\r\n", version[9])) {
		refuse(s, c->fd, REJECT_BAD_REQUEST, "400 Bad Request");
		return;
	}
	head = !strncmp(c->buf, "HEAD ", 5);
	if (!head && strncmp(c->buf, "GET ", 4)) {
		refuse(s, c->fd, REJECT_BAD_REQUEST, "405 Method Not Allowed");
		return;
	}
	*version = '\0';
	q = strchr(target + 1, '?');
	if (q)
		*q = '\0';
	if (strcmp(target + 1, "/metrics")) {
		refuse(s, c->fd, REJECT_NOT_FOUND, "404 Not Found");
		return;
	}
	*version = ' ';
	om = wants_openmetrics(c->buf);
	s->c.scrapes++;
	f = open_memstream(&body, &len);
	ret = f ? export_write(f, s->o, om, &s->c) : -ENOMEM;
	if (f && fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		s->c.scrapes--;
		respond(s, c->fd, "500 Internal Server Error", "text/plain; charset=utf-8",
			"the scrape failed\n", 18, head);
	} else {
		respond(s, c->fd, "200 OK", om ? EXPORT_TYPE_OPENMETRICS : EXPORT_TYPE_TEXT, body,
			len, head);
	}
	free(body);
}

/* Reads what @c sent; 1 when it is to be closed. */
static int receive(struct server *s, struct conn *c)
{
	ssize_t n = recv(c->fd, c->buf + c->len, EXPORT_HEADER_MAX - c->len, 0);
	/* Where the end of the headers may be: from the last 3 bytes read before. */
	const char *from = c->buf + (c->len > 3 ? c->len - 3 : 0);

	if (n < 0)
		return errno != EAGAIN && errno != EINTR;
	if (!n)
		return 1;
	/* A NUL is in no request (RFC 9112 2.2): refused at once, not read past. */
	if (memchr(c->buf + c->len, '\0', (size_t)n)) {
		refuse(s, c->fd, REJECT_BAD_REQUEST, "400 Bad Request");
		return 1;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (strstr(from, "\r\n\r\n") || strstr(from, "\n\n")) {
		serve(s, c);
		return 1;
	}
	if (c->len == EXPORT_HEADER_MAX) {
		refuse(s, c->fd, REJECT_TOO_LARGE, "431 Request Header Fields Too Large");
		return 1;
	}
	return 0;
}

/*
 * The table is full: frees a place.  The victim is the oldest connection
 * that has sent nothing (an idle flood's), the oldest of all if each has
 * sent something; what it sent since the last poll is read first, so that
 * a request that arrived is served, not dropped.
 */
static void make_room(struct server *s)
{
	size_t i, victim;

	while (s->n == EXPORT_CONNECTIONS) {
		for (i = 0, victim = s->n; i < s->n; i++)
			if (!s->conns[i]->len &&
			    (victim == s->n || s->conns[i]->deadline < s->conns[victim]->deadline))
				victim = i;
		if (victim < s->n) {
			if (receive(s, s->conns[victim])) {
				drop(s, victim);
				continue;
			}
			if (s->conns[victim]->len)
				continue;	/* it sent something: another victim */
		} else {
			for (i = 1, victim = 0; i < s->n; i++)
				if (s->conns[i]->deadline < s->conns[victim]->deadline)
					victim = i;
		}
		s->c.rejected[REJECT_BUSY]++;
		drop(s, victim);
	}
}

/*
 * Takes the waiting connections, EXPORT_CONNECTIONS at most (then the
 * others' requests are polled), each read at once.  Out of descriptors, the
 * listener is left unpolled (the backlog holds the connections) until a
 * connection closes, or 1 s: it stays readable, and polling it would spin.
 */
static void accept_some(struct server *s)
{
	struct conn *c;
	int fd, k;

	for (k = 0; k < EXPORT_CONNECTIONS; k++) {
		fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				s->paused = 1;
				s->paused_until = cli_now() + 1;
			}
			return;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		make_room(s);
		c->fd = fd;
		c->len = 0;
		c->deadline = cli_now() + EXPORT_READ_SECONDS;
		s->conns[s->n++] = c;
		if (receive(s, c))
			drop(s, s->n - 1);
	}
}

static void loop(struct server *s)
{
	struct pollfd pfd[EXPORT_CONNECTIONS + 1];
	double t, next;
	size_t i, n;

	while (!stopping) {
		t = cli_now();
		next = t + 60;
		for (i = s->n; i-- > 0;) {
			if (s->conns[i]->deadline > t)
				continue;
			refuse(s, s->conns[i]->fd, REJECT_TIMEOUT, "408 Request Timeout");
			drop(s, i);
		}
		if (s->paused && s->paused_until <= t)
			s->paused = 0;
		if (s->paused && s->paused_until < next)
			next = s->paused_until;
		/* A negative descriptor is not polled (poll(2)). */
		pfd[0].fd = s->paused ? -1 : s->listen_fd;
		pfd[0].events = POLLIN;
		for (i = 0; i < s->n; i++) {
			pfd[i + 1].fd = s->conns[i]->fd;
			pfd[i + 1].events = POLLIN;
			if (s->conns[i]->deadline < next)
				next = s->conns[i]->deadline;
		}
		n = s->n;
		if (poll(pfd, n + 1, (int)((next - t) * 1000) + 1) <= 0)
			continue;
		/* Backwards: drop() moves the last connection into the place it empties. */
		for (i = n; i-- > 0;)
			if (pfd[i + 1].revents && receive(s, s->conns[i]))
				drop(s, i);
		if (pfd[0].revents & POLLIN)
			accept_some(s);
	}
}

int export_serve(const struct export_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct server s = { .o = o };

	s.listen_fd = open_listener(o->listen);
	if (s.listen_fd < 0)
		return s.listen_fd == -2 ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	say_address(s.listen_fd);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	loop(&s);
	while (s.n)
		drop(&s, 0);
	close(s.listen_fd);
	return CLI_EXIT_OK;
}
