/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * One report for every benchmark: the text tables stay each program's own,
 * the JSON (--json) has one schema, "mmkit-bench/1", documented in
 * mmkit-bench(7), so that tools/plot and a user's scripts read any of them:
 *
 *   { "schema": "mmkit-bench/1", "bench": NAME, "command": [ARGV...],
 *     "machine": { "arch", "cpus", "cpu", "mem_kib" },
 *     "kernel": { "release", "version" },
 *     "parameters": { NAME: number | string | bool, ... },
 *     "rows": [ ROW, ... ],      measured here
 *     "seed": [ ROW, ... ],      the published figures, where there are some
 *     "ratios": [ { "what", "value" }, ... ],
 *     "targets": [ { "target", "figure", "met" }, ... ] }
 *
 *   ROW: { "table": T, "series": S, "label": L, "x": X, "x_unit": U,
 *          "available": bool, "reason": WHY,
 *          "metrics": { NAME: { "unit", "median", "min", "max", "n" }, ... } }
 *
 * A table whose rows have "x" is a sweep (a line per series); one without is
 * a set of strategies (a bar per label).  "series", "x" and "reason" are
 * left out when they do not apply.  The writer goes to stdout in order:
 * begin, parameters, rows, seed rows, ratios, targets, end.
 */
#ifndef MMKIT_BENCH_REPORT_H
#define MMKIT_BENCH_REPORT_H

#include <stddef.h>

/* Starts the JSON report of benchmark @bench run as @argv. */
void report_begin(const char *bench, int argc, char **argv);

void report_param_int(const char *name, long long value);
void report_param_double(const char *name, double value);
void report_param_str(const char *name, const char *value);
void report_param_bool(const char *name, int value);

/* A row of @table; @series may be NULL (a bar chart's rows have none). */
void report_row_begin(const char *table, const char *series, const char *label);
/* The seed's published figure, same shape as a row; ends with report_row_end(). */
void report_seed_begin(const char *table, const char *series, const char *label);
/* A sweep's x value. */
void report_row_x(double x, const char *unit);
/* @n samples, in any order: median, min and max are computed (the array is sorted). */
void report_metric(const char *name, const char *unit, double *samples, int n);
/* One figure: median, min and max are all @value, n is 1. */
void report_metric_value(const char *name, const char *unit, double value);
/* Measured nothing: "available": false with @reason. */
void report_row_unavailable(const char *reason);
void report_row_end(void);

void report_ratio(const char *what, double value);
void report_target(const char *target, const char *figure, int met);
void report_end(void);

/*
 * Progress on stderr, one line rewritten in place, only when stderr is a
 * terminal and the benchmark has run longer than a second (or
 * MMKIT_BENCH_PROGRESS_AFTER seconds); cleared by progress_done().
 */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void progress_done(void);

/*
 * Runs @fn(@arg, @out) in a forked child, a measurement in a fresh
 * process, which sends the @len bytes at @out back: 0, or -errno when it
 * could not run or sent nothing (-EPIPE; @out is then as @fn left it in
 * the child, unknown here).  *@status: the child's wait status.
 */
int in_child(void (*fn)(const void *arg, void *out), const void *arg, void *out, size_t len,
	     int *status);

/* Seconds of CLOCK_MONOTONIC. */
double now_seconds(void);

/* The median of @n samples (sorts them). */
double median_of(double *samples, int n);

#endif /* MMKIT_BENCH_REPORT_H */
