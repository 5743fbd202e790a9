/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* mmkit export: its options, the metrics (export.c) and the HTTP endpoint (export-http.c). */
#ifndef MMKIT_CLI_EXPORT_H
#define MMKIT_CLI_EXPORT_H

#include <stdio.h>

#include "fleet.h"

/* Why the endpoint refused a request, each counted in a metric. */
enum export_reject {
	REJECT_BAD_REQUEST,	/* not an HTTP/1.x request line, or a method other than GET/HEAD */
	REJECT_TOO_LARGE,	/* headers past EXPORT_HEADER_MAX */
	REJECT_TIMEOUT,		/* no whole request within EXPORT_READ_SECONDS, or a stalled reader */
	REJECT_BUSY,		/* dropped for a newer connection: EXPORT_CONNECTIONS were open */
	REJECT_NOT_FOUND,	/* a path other than /metrics */
	REJECT_COUNT,
};

/* What the endpoint counts over its life (all 0 for one write). */
struct export_counters {
	unsigned long long scrapes;
	unsigned long long rejected[REJECT_COUNT];
};

struct export_opts {
	struct fleet_filter flt;
	unsigned long max_series;	/* series per metric of the per-name families */
	unsigned long top_processes;	/* processes with series of their own, largest PSS first */
	int openmetrics;		/* OpenMetrics 1.0 instead of the text format 0.0.4 (stdout) */
	const char *listen;		/* ADDR:PORT, "systemd", or NULL */
	const char *textfile;		/* PATH, or NULL */
};

/* The HTTP endpoint's bounds. */
#define EXPORT_HEADER_MAX	8192	/* bytes of request line and headers */
#define EXPORT_READ_SECONDS	5	/* to send the whole request, from the connection */
#define EXPORT_WRITE_SECONDS	10	/* to take the whole response */
#define EXPORT_CONNECTIONS	16	/* open at once; the oldest idle is dropped for a new one */
#define EXPORT_DEFER_SECONDS	2	/* a connection waits for its request in the kernel */

/* The media types of the two formats. */
#define EXPORT_TYPE_TEXT	"text/plain; version=0.0.4; charset=utf-8"
#define EXPORT_TYPE_OPENMETRICS	"application/openmetrics-text; version=1.0.0; charset=utf-8"

/*
 * Scans the processes and writes the metrics to @f, OpenMetrics if
 * @openmetrics; @c: the endpoint's counters.  -errno (after a message).
 */
int export_write(FILE *f, const struct export_opts *o, int openmetrics,
		 const struct export_counters *c);
/* Serves /metrics on o->listen until SIGTERM or SIGINT; the exit code. */
int export_serve(const struct export_opts *o);

#endif /* MMKIT_CLI_EXPORT_H */
