/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * mmkit bench refpage --threads [--json] [--quick] [--iterations N]
 *
 * First stores from several threads at once: 1, 2 and one thread per CPU,
 * each writing to 4,096,000 bytes of its own in one mapping made for the
 * run.  Rows: memset (anonymous memory, each thread filling its range with
 * the pattern) and each reference-page backend of the kernel (syscall,
 * kmod) and memfd, each thread writing one byte per page.  A row's scaling
 * is N threads' throughput over one thread's (each thread does as much);
 * the ratio a row's scaling over memset's, both from the same run: below 1
 * where first stores to one pattern wait on each other (a page lock every
 * copy takes, as do_cow_fault() took on the reference page).
 *
 * Also here, for every mode's report: the kernel's init_on_alloc (every
 * new page zeroed before it is copied or filled, CONFIG_INIT_ON_ALLOC_
 * DEFAULT_ON in Debian's kernels) and the transparent hugepage mode, which
 * both move the figures.
 */
#ifndef MMKIT_BENCH_REFPAGE_THREADS_H
#define MMKIT_BENCH_REFPAGE_THREADS_H

#include <pthread.h>
#include <sys/klog.h>

#define THREADS_ITERATIONS	50
#define THREADS_ROWS		4
#define THREADS_COUNTS		3

/*
 * init_on_alloc as the kernel logged it at boot ("mem auto-init: ...,
 * heap alloc:on"), or as the command line sets it; "unknown" where neither
 * can be read (the log needs CAP_SYSLOG where dmesg_restrict is set).
 */
static void init_on_alloc(char *buf, size_t len)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char cmdline[4096], *log, *at;
	FILE *f;
	int n;

	snprintf(buf, len, "unknown");
	f = fopen("/proc/cmdline", "r");
	if (f) {
		if (fgets(cmdline, sizeof(cmdline), f) &&
		    (at = strstr(cmdline, "init_on_alloc=")))
			snprintf(buf, len, "%.*s (command line)",
				 (int)strcspn(at + 14, " \n"), at + 14);
		fclose(f);
		if (strcmp(buf, "unknown"))
			return;
	}
	log = size > 0 ? malloc((size_t)size + 1) : NULL;
	if (!log)
		return;
	n = klogctl(3, log, size);		/* SYSLOG_ACTION_READ_ALL */
	if (n > 0) {
		log[n] = '\0';
		at = strstr(log, "heap alloc:");
		if (at)
			snprintf(buf, len, "%.*s", (int)strcspn(at + 11, ",\n"), at + 11);
	}
	free(log);
}

/* The [selected] transparent hugepage mode, or "unknown". */
static void thp_mode(char *buf, size_t len)
{
	char line[128], *open_at, *close_at;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		open_at = strchr(line, '[');
		close_at = open_at ? strchr(open_at, ']') : NULL;
		if (close_at)
			snprintf(buf, len, "%.*s", (int)(close_at - open_at - 1), open_at + 1);
	}
	fclose(f);
}

struct threads_row {
	const char *name;
	struct mmkit_refpage *rp;	/* NULL: memset */
	char why[MMKIT_REASON_MAX];	/* unavailable when non-empty */
	double *us[THREADS_COUNTS];
	double median[THREADS_COUNTS];
};

struct toucher {
	pthread_t tid;
	pthread_barrier_t *start;
	unsigned char *p;
	int fill;			/* memset the range, else one byte a page */
	struct timespec began, ended;
};

static void *threads_touch(void *arg)
{
	struct toucher *w = arg;
	size_t i;

	pthread_barrier_wait(w->start);
	clock_gettime(CLOCK_MONOTONIC, &w->began);
	if (w->fill) {
		memset(w->p, 0xaa, MAP_BYTES);
	} else {
		for (i = 0; i < MAP_BYTES; i += page)
			w->p[i] = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &w->ended);
	return NULL;
}

static double timespec_us(const struct timespec *t)
{
	return (double)t->tv_sec * 1e6 + (double)t->tv_nsec / 1e3;
}

/*
 * @n threads' first stores, each to its range of one mapping: microseconds
 * from the first thread's start to the last one's end, as the threads took
 * them (the main thread may wake up late from the barrier).
 */
static double threads_once(struct threads_row *r, int n)
{
	struct toucher *w = calloc((size_t)n, sizeof(*w));
	pthread_barrier_t start;
	double first = 0, last = 0;
	void *p;
	int i, ret;

	if (!w)
		die("calloc", ENOMEM);
	if (r->rp) {
		ret = mmkit_refpage_map(r->rp, (size_t)n * MAP_BYTES, PROT_READ | PROT_WRITE, &p);
		if (ret)
			die("mmkit_refpage_map", -ret);
	} else {
		p = mmap(NULL, (size_t)n * MAP_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap", errno);
	}
	pthread_barrier_init(&start, NULL, (unsigned int)n + 1);
	for (i = 0; i < n; i++) {
		w[i] = (struct toucher){ .start = &start, .fill = !r->rp,
					 .p = (unsigned char *)p + (size_t)i * MAP_BYTES };
		ret = pthread_create(&w[i].tid, NULL, threads_touch, &w[i]);
		if (ret)
			die("pthread_create", ret);
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < n; i++)
		pthread_join(w[i].tid, NULL);
	pthread_barrier_destroy(&start);
	for (i = 0; i < n; i++) {
		if (w[i].p[1] != 0xaa || w[i].p[MAP_BYTES - 1] != 0xaa)
			die("a thread's range does not read as the pattern", EIO);
		if (!i || timespec_us(&w[i].began) < first)
			first = timespec_us(&w[i].began);
		if (!i || timespec_us(&w[i].ended) > last)
			last = timespec_us(&w[i].ended);
	}
	if (r->rp)
		ret = mmkit_refpage_unmap(r->rp, p, (size_t)n * MAP_BYTES);
	else
		ret = munmap(p, (size_t)n * MAP_BYTES) ? -errno : 0;
	if (ret)
		die("unmap", -ret);
	free(w);
	return last - first;
}

/* N threads' throughput over one thread's, each thread writing as much. */
static double threads_scaling(const struct threads_row *r, const int *counts, int c)
{
	return counts[c] * r->median[0] / r->median[c];
}

#define THREADS_USAGE \
	"usage: mmkit bench refpage --threads [--json] [--quick] [--iterations N]\n" \
	"       (N from 1 to 1000000, default " BENCH_STR(THREADS_ITERATIONS) ", --quick " \
	BENCH_STR(QUICK_ITERATIONS) ")\n"

static void threads_print(struct threads_row *rows, const int *counts, int ncounts,
			  int iterations, const char *ioa, const char *thp)
{
	int i, c;

	printf("mmkit bench refpage --threads: %d iterations; each thread writes to %lu bytes "
	       "of its own, first stores\n", iterations, MAP_BYTES);
	printf("init_on_alloc: %s; transparent hugepages: %s\n", ioa, thp);
	printf("time: median, first thread's start to last one's end; scaling: N threads' throughput over "
	       "one's; vs memset: this row's scaling over memset's\n\n");
	printf("%-10s %8s %12s %8s %10s\n", "row", "threads", "median_us", "scaling",
	       "vs_memset");
	for (i = 0; i < THREADS_ROWS; i++)
		for (c = 0; c < ncounts; c++) {
			if (rows[i].why[0]) {
				printf("%-10s %8d unavailable: %s\n", rows[i].name, counts[c],
				       rows[i].why);
				continue;
			}
			printf("%-10s %8d %12.1f %8.2f %10.3f\n", rows[i].name, counts[c],
			       rows[i].median[c], threads_scaling(&rows[i], counts, c),
			       threads_scaling(&rows[i], counts, c) /
			       threads_scaling(&rows[0], counts, c));
		}
}

static void threads_json(int argc, char **argv, struct threads_row *rows, const int *counts,
			 int ncounts, int iterations, int quick, const char *ioa,
			 const char *thp)
{
	char label[32], what[96];
	int i, c;

	report_begin("refpage", argc, argv);
	report_param_bool("threads", 1);
	report_param_int("iterations", iterations);
	report_param_int("map_bytes_per_thread", MAP_BYTES);
	report_param_bool("quick", quick);
	report_param_str("init_on_alloc", ioa);
	report_param_str("transparent_hugepage", thp);
	for (i = 0; i < THREADS_ROWS; i++)
		for (c = 0; c < ncounts; c++) {
			snprintf(label, sizeof(label), "%d", counts[c]);
			report_row_begin("first_touch_threads", rows[i].name, label);
			report_row_x(counts[c], "threads");
			if (rows[i].why[0])
				report_row_unavailable(rows[i].why);
			else
				report_metric("time", "us", rows[i].us[c], iterations);
			report_row_end();
		}
	for (i = 1; i < THREADS_ROWS; i++)
		for (c = 1; c < ncounts && !rows[i].why[0]; c++) {
			snprintf(what, sizeof(what), "%s scaling 1 to %d threads / memset's",
				 rows[i].name, counts[c]);
			report_ratio(what, threads_scaling(&rows[i], counts, c) /
				     threads_scaling(&rows[0], counts, c));
		}
	report_end();
}

/* The options, parsed by bench-refpage.c's main(), which hands --threads over here. */
static int threads_main(int argc, char **argv, int json, int quick, int iterations)
{
	static const unsigned int backends[THREADS_ROWS] = {
		0, MMKIT_REFPAGE_BACKEND_SYSCALL, MMKIT_REFPAGE_BACKEND_KMOD,
		MMKIT_REFPAGE_BACKEND_MEMFD,
	};
	static const char *const names[THREADS_ROWS] = { "memset", "syscall", "kmod", "memfd" };
	struct threads_row rows[THREADS_ROWS] = { { 0 } };
	int counts[THREADS_COUNTS] = { 1 }, ncounts = 1, cpus, i, c, it, ret;
	char ioa[64], thp[32];

	if (!iterations)
		iterations = quick ? QUICK_ITERATIONS : THREADS_ITERATIONS;
	page = (size_t)sysconf(_SC_PAGESIZE);
	cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus >= 2)
		counts[ncounts++] = 2;
	if (cpus > 2)
		counts[ncounts++] = cpus;
	init_on_alloc(ioa, sizeof(ioa));
	thp_mode(thp, sizeof(thp));
	for (i = 0; i < THREADS_ROWS; i++) {
		rows[i].name = names[i];
		if (i && mmkit_refpage_backend_available(backends[i], rows[i].why,
							 sizeof(rows[i].why))) {
			fprintf(stderr, "bench-refpage --threads: %s: %s\n", names[i], rows[i].why);
			continue;
		}
		rows[i].why[0] = '\0';
		ret = i ? mmkit_refpage_create(&rows[i].rp, &row_pattern, 1, backends[i]) : 0;
		if (ret)
			die("mmkit_refpage_create", -ret);
		for (c = 0; c < ncounts; c++) {
			rows[i].us[c] = calloc((size_t)iterations, sizeof(double));
			if (!rows[i].us[c])
				die("calloc", ENOMEM);
		}
	}
	/* A round to warm up, then the measured ones, each row in turn first. */
	for (it = -1; it < iterations; it++) {
		progress("iteration %d of %d", it + 1, iterations);
		for (c = 0; c < ncounts; c++)
			for (i = 0; i < THREADS_ROWS; i++) {
				struct threads_row *r = &rows[(i + it + 1) % THREADS_ROWS];
				double us;

				if (r->why[0])
					continue;
				us = threads_once(r, counts[c]);
				if (it >= 0)
					r->us[c][it] = us;
			}
	}
	progress_done();
	for (i = 0; i < THREADS_ROWS; i++)
		for (c = 0; c < ncounts && !rows[i].why[0]; c++)
			rows[i].median[c] = median_of(rows[i].us[c], iterations);
	if (json)
		threads_json(argc, argv, rows, counts, ncounts, iterations, quick, ioa, thp);
	else
		threads_print(rows, counts, ncounts, iterations, ioa, thp);
	for (i = 0; i < THREADS_ROWS; i++) {
		for (c = 0; c < ncounts; c++)
			free(rows[i].us[c]);
		if (rows[i].rp)
			mmkit_refpage_destroy(rows[i].rp);
	}
	return 0;
}

#endif /* MMKIT_BENCH_REFPAGE_THREADS_H */
