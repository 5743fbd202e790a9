// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The JSON report and the progress line of every benchmark (report.h).
 *
 * The report is written as it goes, so a section can only follow the ones
 * before it; each call moves the writer forward to its section, opening and
 * closing the sections in between, so every report has every key.  A call
 * out of order is a mistake in the benchmark, not in its input: it aborts
 * rather than print JSON that does not parse.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

enum section { S_NONE, S_HEAD, S_PARAMS, S_ROWS, S_SEED, S_RATIOS, S_TARGETS, S_DONE };

/* What moving from the section before into each one prints. */
static const char *const section_open[] = {
	[S_PARAMS] = ",\n \"parameters\": {",
	[S_ROWS] = "},\n \"rows\": [",
	[S_SEED] = "\n ],\n \"seed\": [",
	[S_RATIOS] = "\n ],\n \"ratios\": [",
	[S_TARGETS] = "\n ],\n \"targets\": [",
	[S_DONE] = "\n ]\n}\n",
};

static struct {
	enum section at;
	int items;		/* in the current section: a comma before the next */
	int in_row;
	int metrics;		/* in the current row */
	int unavailable;
} W;

static void misuse(const char *what)
{
	fprintf(stderr, "report: %s (a bug in the benchmark)\n", what);
	abort();
}

static void enter(enum section s)
{
	if (W.at == S_NONE || W.at > s)
		misuse("a report section out of order");
	if (W.in_row)
		misuse("a section begun inside a row");
	while (W.at < s) {
		W.at++;
		fputs(section_open[W.at], stdout);
		W.items = 0;
	}
}

static void item(void)
{
	fputs(W.items++ ? (W.at == S_PARAMS ? ", " : ",\n  ") : (W.at == S_PARAMS ? "" : "\n  "),
	      stdout);
}

static void json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	putchar('"');
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			printf("\\u%04x", *p);	/* not UTF-8 checked: every byte escaped */
		else
			putchar(*p);
	}
	putchar('"');
}

/* JSON has no NaN or infinity: a figure that is not one is null. */
static void json_number(double v)
{
	if (isfinite(v))
		printf("%.10g", v);
	else
		fputs("null", stdout);
}

static void key(const char *name)
{
	json_string(name);
	fputs(": ", stdout);
}

/* @prefix's value in /proc/cpuinfo or /proc/meminfo, NULL if none. */
static char *proc_field(const char *file, const char *prefix, char *buf, size_t len)
{
	FILE *f = fopen(file, "re");
	char *v = NULL;

	if (!f)
		return NULL;
	while (!v && fgets(buf, (int)len, f)) {
		if (strncmp(buf, prefix, strlen(prefix)))
			continue;
		v = strchr(buf, ':');
		if (v) {
			v += strspn(v + 1, " \t") + 1;
			v[strcspn(v, "\n")] = '\0';
		}
	}
	fclose(f);
	return v;
}

void report_begin(const char *bench, int argc, char **argv)
{
	struct utsname u;
	char buf[512], *cpu, *mem;
	int i;

	if (W.at != S_NONE)
		misuse("report_begin() twice");
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	cpu = proc_field("/proc/cpuinfo", "model name", buf, sizeof(buf));
	printf("{\n \"schema\": \"mmkit-bench/1\",\n \"bench\": ");
	json_string(bench);
	fputs(",\n \"command\": [", stdout);
	for (i = 0; i < argc; i++) {
		fputs(i ? ", " : "", stdout);
		json_string(argv[i]);
	}
	fputs("],\n \"machine\": {\"arch\": ", stdout);
	json_string(u.machine);
	printf(", \"cpus\": %ld, \"cpu\": ", sysconf(_SC_NPROCESSORS_ONLN));
	json_string(cpu ? cpu : "unknown");
	mem = proc_field("/proc/meminfo", "MemTotal", buf, sizeof(buf));
	printf(", \"mem_kib\": %lld},\n \"kernel\": {\"release\": ", mem ? atoll(mem) : 0LL);
	json_string(u.release);
	fputs(", \"version\": ", stdout);
	json_string(u.version);
	putchar('}');
	W.at = S_HEAD;
}

static void param(const char *name)
{
	enter(S_PARAMS);
	item();
	key(name);
}

void report_param_int(const char *name, long long value)
{
	param(name);
	printf("%lld", value);
}

void report_param_double(const char *name, double value)
{
	param(name);
	json_number(value);
}

void report_param_str(const char *name, const char *value)
{
	param(name);
	json_string(value);
}

void report_param_bool(const char *name, int value)
{
	param(name);
	fputs(value ? "true" : "false", stdout);
}

static void row_begin(enum section s, const char *table, const char *series, const char *label)
{
	enter(s);
	item();
	fputs("{\"table\": ", stdout);
	json_string(table);
	if (series) {
		fputs(", \"series\": ", stdout);
		json_string(series);
	}
	fputs(", \"label\": ", stdout);
	json_string(label);
	W.in_row = 1;
	W.metrics = 0;
	W.unavailable = 0;
}

void report_row_begin(const char *table, const char *series, const char *label)
{
	row_begin(S_ROWS, table, series, label);
}

void report_seed_begin(const char *table, const char *series, const char *label)
{
	row_begin(S_SEED, table, series, label);
}

static void in_row(const char *what, int before_metrics)
{
	if (!W.in_row)
		misuse(what);
	if (before_metrics && W.metrics)
		misuse("x or unavailable after a row's metrics");
}

void report_row_x(double x, const char *unit)
{
	in_row("report_row_x() outside a row", 1);
	fputs(", \"x\": ", stdout);
	json_number(x);
	fputs(", \"x_unit\": ", stdout);
	json_string(unit);
}

void report_row_unavailable(const char *reason)
{
	in_row("report_row_unavailable() outside a row", 1);
	fputs(", \"available\": false, \"reason\": ", stdout);
	json_string(reason);
	W.unavailable = 1;
}

static void metric(const char *name, const char *unit, double median, double min, double max, int n)
{
	in_row("a metric outside a row", 0);
	if (W.unavailable)
		misuse("a metric in a row marked unavailable");
	fputs(W.metrics++ ? ", " : ", \"metrics\": {", stdout);
	key(name);
	fputs("{\"unit\": ", stdout);
	json_string(unit);
	fputs(", \"median\": ", stdout);
	json_number(median);
	fputs(", \"min\": ", stdout);
	json_number(min);
	fputs(", \"max\": ", stdout);
	json_number(max);
	printf(", \"n\": %d}", n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median_of(double *samples, int n)
{
	if (n < 1)
		return NAN;
	qsort(samples, (size_t)n, sizeof(*samples), cmp_double);
	return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

void report_metric(const char *name, const char *unit, double *samples, int n)
{
	double median = median_of(samples, n);

	if (n < 1)
		misuse("a metric of no samples");
	metric(name, unit, median, samples[0], samples[n - 1], n);
}

void report_metric_value(const char *name, const char *unit, double value)
{
	metric(name, unit, value, value, value, 1);
}

void report_row_end(void)
{
	in_row("report_row_end() outside a row", 0);
	if (W.metrics)
		putchar('}');
	if (!W.unavailable)
		fputs(", \"available\": true", stdout);
	putchar('}');
	W.in_row = 0;
}

void report_ratio(const char *what, double value)
{
	enter(S_RATIOS);
	item();
	fputs("{\"what\": ", stdout);
	json_string(what);
	fputs(", \"value\": ", stdout);
	json_number(value);
	putchar('}');
}

void report_target(const char *target, const char *figure, int met)
{
	enter(S_TARGETS);
	item();
	fputs("{\"target\": ", stdout);
	json_string(target);
	fputs(", \"figure\": ", stdout);
	json_string(figure);
	printf(", \"met\": %s}", met ? "true" : "false");
}

void report_end(void)
{
	enter(S_DONE);
	fflush(stdout);
}

int in_child(void (*fn)(const void *arg, void *out), const void *arg, void *out, size_t len,
	     int *status)
{
	int up[2], err = 0;
	pid_t pid;

	*status = 0;
	if (pipe(up))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(up[0]);
		close(up[1]);
		return err;
	}
	if (pid == 0) {
		close(up[0]);
		fn(arg, out);
		_exit(write(up[1], out, len) != (ssize_t)len);
	}
	close(up[1]);
	if (read(up[0], out, len) != (ssize_t)len)
		err = -EPIPE;
	close(up[0]);
	waitpid(pid, status, 0);
	return err;
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct timespec started;
static int progress_shown;
/* Seconds before the first progress line: MMKIT_BENCH_PROGRESS_AFTER (1). */
static double progress_after = 1;

__attribute__((constructor)) static void progress_clock(void)
{
	const char *after = getenv("MMKIT_BENCH_PROGRESS_AFTER");

	clock_gettime(CLOCK_MONOTONIC, &started);
	if (after && *after)
		progress_after = atof(after);
}

void progress(const char *fmt, ...)
{
	struct timespec now;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - started.tv_sec + (now.tv_nsec - started.tv_nsec) / 1e9 < progress_after ||
	    !isatty(2))
		return;
	fprintf(stderr, "\r%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\033[K", stderr);
	progress_shown = 1;
}

void progress_done(void)
{
	if (progress_shown)
		fputs("\r\033[K", stderr);
	progress_shown = 0;
}
