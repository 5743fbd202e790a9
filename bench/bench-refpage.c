// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit bench refpage [--json] [--quick] [--iterations N]
 * mmkit bench refpage --tagged ...  (refpage-tagged.h: arm64 MTE)
 * mmkit bench refpage --threads ...  (refpage-threads.h: first stores from
 *                                     1, 2 and all CPUs' threads)
 *
 * The published experiment: N times, map 4,096,000 bytes, write one byte
 * per page over the first T bytes (T = 4096, 2,048,000, 4,096,000) or
 * over a random 10 % of the pages, unmap.  Rows: memset (what allocators
 * do today: mmap, memset(0xaa), the touches), each reference-page backend
 * available, and two floors: zero-filled touches with no pattern at all,
 * and MADV_POPULATE_WRITE + memset.  "memfd+populate" is the default
 * backend in the hands of a caller that knows what it will write: it
 * populates the first T bytes with MADV_POPULATE_WRITE before touching
 * them (the contract still holds; random touches get no hint).  The uffd
 * backend runs twice, pinned to one CPU and free to migrate.  Every row
 * and touch size runs once per iteration, the rows in a random order each
 * time, so that drift in the machine and cache effects hit all alike.
 *
 * Columns: median wall time of one map-touch-unmap, the largest resident
 * set seen right after the touches (statm, read outside the timed part),
 * the most the map and touches added to it, the page cache (Shmem) the
 * row's reference pages hold beside it (the memfd backend's pattern file,
 * from mmkit_refpage_stats(); no other row has one), and the time saved
 * against memset.  And, since a resident set read between iterations
 * misses what a row holds for a moment (the memfd backend filling its
 * pattern file through a mapping did), each row's peak (VmHWM) in a fresh
 * process doing PEAK_ITERATIONS of the 4 KiB touch: the series' max RSS
 * figure.  --json gives the mmkit-bench/1 report (mmkit-bench(7)): the
 * touch sizes as a sweep, the random touches and the savings as bars, with
 * the published targets beside the savings.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "mmkit.h"
#include "options.h"
#include "report.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

#define MAP_BYTES		4096000UL
#define DEFAULT_ITERATIONS	1000
#define QUICK_ITERATIONS	5
#define NTOUCH			4
#define RANDOM_TOUCH		3	/* index of the random-10 % column */
#define PEAK_ITERATIONS		100

enum row_kind { ROW_MEMSET, ROW_ZERO, ROW_POPULATE, ROW_REFPAGE };

struct row {
	const char *name;
	enum row_kind kind;
	struct mmkit_refpage *rp;
	unsigned int flag;		/* its backend; the object is made after the peaks */
	int pinned;
	/* The caller knows what it will write and populates it first (not for random). */
	int populate_hint;
	double *us[NTOUCH];		/* one sample per iteration */
	long max_rss_kib[NTOUCH];
	long max_added_kib[NTOUCH];	/* resident set the touches added */
	long max_shmem_kib[NTOUCH];	/* page cache of the row's pattern file */
	double median[NTOUCH];
	long peak_kib;			/* VmHWM of a fresh process, 4 KiB touches */
};

static const char *const touch_names[NTOUCH] = { "4096", "2048000", "4096000", "random10%" };
static const size_t touch_bytes[NTOUCH] = { 4096, 2048000, 4096000, 0 };

static size_t page;
static size_t *random_pages;	/* the random 10 %, in random order */
static size_t nrandom;
static cpu_set_t all_cpus;

static long rss_kib(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * (long)(page / 1024);
}

/* The page cache the memfd backend's pattern files hold; the other rows have none. */
static long shmem_kib(const struct row *r)
{
	struct mmkit_refpage_stats st;

	if (r->kind != ROW_REFPAGE || strcmp(mmkit_refpage_backend(r->rp), "memfd") ||
	    mmkit_refpage_stats(&st))
		return 0;
	return (long)(st.cache_bytes >> 10);
}

/* The "Key:   N kB" line of /proc/self/status, in KiB, or -1. */
static long status_kib(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			kib = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kib;
}

static void shuffle(size_t *v, size_t n)
{
	size_t i, j, t;

	for (i = 0; i < n; i++)
		v[i] = i;
	for (i = n - 1; i > 0; i--) {
		j = (size_t)rand() % (i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

static void shuffle_random_pages(void)
{
	shuffle(random_pages, MAP_BYTES / page);
}

static void touch(volatile unsigned char *p, int t)
{
	size_t off, i;

	if (t == RANDOM_TOUCH) {
		for (i = 0; i < nrandom; i++)
			p[random_pages[i] * page] = 1;
		return;
	}
	for (off = 0; off < touch_bytes[t]; off += page)
		p[off] = 1;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-refpage: %s: %s\n", what, strerror(err));
	exit(1);
}

static unsigned char *map_row(struct row *r)
{
	void *p;
	int ret;

	if (r->kind == ROW_REFPAGE) {
		ret = mmkit_refpage_map(r->rp, MAP_BYTES, PROT_READ | PROT_WRITE, &p);
		if (ret)
			die("mmkit_refpage_map", -ret);
		return p;
	}
	p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap", errno);
	if (r->kind == ROW_POPULATE && madvise(p, MAP_BYTES, MADV_POPULATE_WRITE))
		die("MADV_POPULATE_WRITE", errno);
	if (r->kind == ROW_MEMSET || r->kind == ROW_POPULATE)
		memset(p, 0xaa, MAP_BYTES);
	return p;
}

static void unmap_row(struct row *r, unsigned char *p)
{
	int ret;

	if (r->kind == ROW_REFPAGE) {
		ret = mmkit_refpage_unmap(r->rp, p, MAP_BYTES);
		if (ret)
			die("mmkit_refpage_unmap", -ret);
	} else if (munmap(p, MAP_BYTES)) {
		die("munmap", errno);
	}
}

static void pin(int on)
{
	cpu_set_t one;

	if (!on) {
		sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
		return;
	}
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static void run_once(struct row *r, int t, int iter)
{
	unsigned char *p;
	double t0, t1, t2;
	long before, rss, shmem;

	/* Unpinned rows make the same call, so that only the CPU mask differs. */
	pin(r->pinned);
	before = rss_kib();
	t0 = 1e6 * now_seconds();
	p = map_row(r);
	if (r->populate_hint && touch_bytes[t] &&
	    madvise(p, touch_bytes[t], MADV_POPULATE_WRITE))
		die("MADV_POPULATE_WRITE", errno);
	touch(p, t);
	t1 = 1e6 * now_seconds();
	rss = rss_kib();
	shmem = shmem_kib(r);
	t2 = 1e6 * now_seconds();
	unmap_row(r, p);
	r->us[t][iter] = (t1 - t0) + (1e6 * now_seconds() - t2);
	if (rss > r->max_rss_kib[t])
		r->max_rss_kib[t] = rss;
	if (rss - before > r->max_added_kib[t])
		r->max_added_kib[t] = rss - before;
	if (shmem > r->max_shmem_kib[t])
		r->max_shmem_kib[t] = shmem;
}

static const unsigned char row_pattern = 0xaa;

/*
 * In a fresh process (forked before the bench made any object, so that
 * the row's object starts as a program's first does): the peak resident
 * set of PEAK_ITERATIONS map + 4 KiB touch + unmap, from the resident set
 * at the start, which clear_refs makes the peak.
 */
static void peak_child(const void *arg, void *out)
{
	struct row r = *(const struct row *)arg;
	long *kib = out;
	unsigned char *p;
	FILE *f;
	int i;

	*kib = -1;
	f = fopen("/proc/self/clear_refs", "w");
	if (!f || fputs("5", f) == EOF || fclose(f))
		return;
	if (r.kind == ROW_REFPAGE && mmkit_refpage_create(&r.rp, &row_pattern, 1, r.flag))
		return;
	for (i = 0; i < PEAK_ITERATIONS; i++) {
		p = map_row(&r);
		if (r.populate_hint && madvise(p, touch_bytes[0], MADV_POPULATE_WRITE))
			return;
		touch(p, 0);
		unmap_row(&r, p);
	}
	*kib = status_kib("VmHWM");
}

static void measure_peak(struct row *r)
{
	int status, ret = in_child(peak_child, r, &r->peak_kib, sizeof(r->peak_kib), &status);

	if (ret || r->peak_kib < 0)
		die("peak RSS in a fresh process", ret ? -ret : EIO);
}

static double saved_pct(const struct row *memset_row, const struct row *r, int t)
{
	return (memset_row->median[t] - r->median[t]) / memset_row->median[t] * 100;
}

struct target {
	char what[96];
	char figure[96];
	int met;
};

static struct target targets[16];
static int ntargets;

static void target(int met, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void target(int met, const char *what, const char *fmt, ...)
{
	struct target *tg = &targets[ntargets++];
	va_list ap;

	snprintf(tg->what, sizeof(tg->what), "%s", what);
	va_start(ap, fmt);
	vsnprintf(tg->figure, sizeof(tg->figure), fmt, ap);
	va_end(ap);
	tg->met = met;
}

static void check_targets(struct row *rows, int nrows, long idle_kib)
{
	struct row *ms = &rows[0], *def = NULL, *fast = NULL, *pinned = NULL, *r;
	double s, worst = 0;
	int i, t;

	for (i = 0; i < nrows; i++) {
		r = &rows[i];
		if (r->kind != ROW_REFPAGE || r->populate_hint)
			continue;
		if (r->pinned)
			pinned = r;
		else if (mmkit_refpage_contract(r->rp) == MMKIT_REFPAGE_FULL_CONTRACT && !def)
			def = r;
		if (!r->pinned && (!fast || r->median[2] < fast->median[2]))
			fast = r;
	}
	if (def) {
		s = saved_pct(ms, def, 0);
		target(s >= 99, "default: 4 KiB touch >= 99 % less time than memset",
		       "%.1f %% less", s);
		target(def->max_rss_kib[0] <= idle_kib * 1.1,
		       "default: 4 KiB touch max RSS within 10 % of mapping untouched",
		       "%.0f KiB vs %.0f KiB", (double)def->max_rss_kib[0], (double)idle_kib);
		s = 100.0 * (double)(ms->peak_kib - def->peak_kib) / (double)ms->peak_kib;
		target(s >= 45, "default: 4 KiB fresh-process peak RSS >= 45 % below memset's",
		       "%.1f %% below (%ld vs %ld KiB)", s, def->peak_kib, ms->peak_kib);
		target(def->max_shmem_kib[0] <= 4096,
		       "default: page cache of its pattern file <= 4 MiB",
		       "%ld KiB", def->max_shmem_kib[0]);
		s = saved_pct(ms, def, 1);
		target(s >= 50, "default: 2 MB touch >= 50 % less time", "%.1f %% less", s);
		s = saved_pct(ms, def, 2);
		target(s >= 0, "default: 4 MB touch no slower than memset", "%.1f %% less", s);
	}
	if (fast) {
		s = saved_pct(ms, fast, 0);
		target(s >= 99, "fastest: 4 KiB touch >= 99 % less", "%.1f %% less", s);
		s = saved_pct(ms, fast, 1);
		target(s >= 75, "fastest: 2 MB touch >= 75 % less", "%.1f %% less", s);
		s = saved_pct(ms, fast, 2);
		target(s >= 50, "fastest: 4 MB touch >= 50 % less", "%.1f %% less", s);
		s = saved_pct(ms, fast, 3);
		target(s >= 70, "fastest: random 10 % >= 70 % less", "%.1f %% less", s);
		s = (double)fast->max_added_kib[3] / (double)(nrandom * page / 1024);
		target(s <= 1.2, "fastest: random 10 % RSS <= 1.2x the touched pages",
		       "%.2fx (%.0f KiB touched)", s, (double)(nrandom * page / 1024));
	}
	if (fast && pinned) {
		for (t = 0; t < NTOUCH; t++)
			if (fast->median[t] / pinned->median[t] > worst)
				worst = fast->median[t] / pinned->median[t];
		target(worst <= 1.3, "uffd unpinned within 1.3x of pinned (worst touch size)",
		       "%.2fx", worst);
	}
}

#include "refpage-threads.h"

static void print_text(struct row *rows, int nrows, int iterations, long idle_kib)
{
	char ioa[64], thp[32];
	int i, t;

	init_on_alloc(ioa, sizeof(ioa));
	thp_mode(thp, sizeof(thp));
	printf("mmkit bench refpage: %d iterations, %lu-byte map, one byte written per page\n",
	       iterations, MAP_BYTES);
	printf("init_on_alloc: %s; transparent hugepages: %s\n", ioa, thp);
	printf("time: median of one map+touch+unmap; max RSS: largest right after the touches "
	       "(%ld KiB with the mapping untouched); +RSS: most the map and touches added; "
	       "shmem: page cache of the row's pattern file (memfd)\n\n", idle_kib);
	printf("%-16s %-10s %12s %12s %10s %10s %10s\n", "row", "touch", "median_us",
	       "max_rss_kib", "+rss_kib", "shmem_kib", "vs_memset");
	for (i = 0; i < nrows; i++)
		for (t = 0; t < NTOUCH; t++)
			printf("%-16s %-10s %12.1f %12ld %10ld %10ld %9.1f%%\n", rows[i].name,
			       touch_names[t], rows[i].median[t], rows[i].max_rss_kib[t],
			       rows[i].max_added_kib[t], rows[i].max_shmem_kib[t],
			       saved_pct(&rows[0], &rows[i], t));
	printf("\npeak RSS (VmHWM) of a fresh process, %d x map + 4 KiB touch + unmap:\n",
	       PEAK_ITERATIONS);
	for (i = 0; i < nrows; i++)
		printf("  %-16s %8ld KiB\n", rows[i].name, rows[i].peak_kib);
	printf("\ntargets (vs memset, this run):\n");
	for (i = 0; i < ntargets; i++)
		printf("  %-6s %-62s %s\n", targets[i].met ? "met" : "MISSED", targets[i].what,
		       targets[i].figure);
}

/* A backend that cannot work here: its rows say why. */
struct skipped {
	const char *name;
	char why[MMKIT_REASON_MAX];
};

/* The published targets, as check_targets() states them: % less time than memset. */
static const struct {
	const char *label;
	double pct[NTOUCH];
	int ntouch;
} published[] = {
	{ "default backend (target)", { 99, 50, 0 }, 3 },
	{ "fastest backend (target)", { 99, 75, 50, 70 }, 4 },
};

static void metrics(const struct row *r, int t, int iterations)
{
	report_metric("time", "us", r->us[t], iterations);
	report_metric_value("max_rss", "KiB", (double)r->max_rss_kib[t]);
	report_metric_value("added_rss", "KiB", (double)r->max_added_kib[t]);
	report_metric_value("shmem", "KiB", (double)r->max_shmem_kib[t]);
}

static void print_json(int argc, char **argv, struct row *rows, int nrows, int iterations,
		       long idle_kib, const struct skipped *skipped, int nskipped, int quick)
{
	static const char *const tables[] = { "touch", "random10", "saved_vs_memset",
					      "fresh_process" };
	char ioa[64], thp[32];
	size_t k;
	int i, t;

	init_on_alloc(ioa, sizeof(ioa));
	thp_mode(thp, sizeof(thp));
	report_begin("refpage", argc, argv);
	report_param_int("iterations", iterations);
	report_param_str("init_on_alloc", ioa);
	report_param_str("transparent_hugepage", thp);
	report_param_int("map_bytes", MAP_BYTES);
	report_param_int("random_pages", (long long)nrandom);
	report_param_bool("quick", quick);
	for (i = 0; i < nrows; i++)
		for (t = 0; t < RANDOM_TOUCH; t++) {
			report_row_begin("touch", rows[i].name, touch_names[t]);
			report_row_x((double)touch_bytes[t], "bytes");
			metrics(&rows[i], t, iterations);
			report_row_end();
		}
	for (i = 0; i < nrows; i++) {
		report_row_begin("random10", NULL, rows[i].name);
		metrics(&rows[i], RANDOM_TOUCH, iterations);
		report_row_end();
	}
	for (i = 0; i < nrows; i++) {
		report_row_begin("fresh_process", NULL, rows[i].name);
		report_metric_value("peak_rss", "KiB", (double)rows[i].peak_kib);
		report_row_end();
	}
	for (i = 0; i < nrows; i++) {
		report_row_begin("saved_vs_memset", NULL, rows[i].name);
		for (t = 0; t < NTOUCH; t++)
			report_metric_value(touch_names[t], "%", saved_pct(&rows[0], &rows[i], t));
		report_row_end();
	}
	for (i = 0; i < nskipped; i++)
		for (k = 0; k < sizeof(tables) / sizeof(tables[0]); k++) {
			report_row_begin(tables[k], k ? NULL : skipped[i].name, skipped[i].name);
			report_row_unavailable(skipped[i].why);
			report_row_end();
		}
	report_row_begin("untouched", NULL, "mapped, not touched");
	report_metric_value("rss", "KiB", (double)idle_kib);
	report_row_end();
	for (k = 0; k < sizeof(published) / sizeof(published[0]); k++) {
		report_seed_begin("saved_vs_memset", NULL, published[k].label);
		for (t = 0; t < published[k].ntouch; t++)
			report_metric_value(touch_names[t], "%", published[k].pct[t]);
		report_row_end();
	}
	for (i = 0; i < ntargets; i++)
		report_target(targets[i].what, targets[i].figure, targets[i].met);
	report_end();
}

#define USAGE	"usage: mmkit bench refpage [--json] [--quick] [--iterations N]  (N from 1 to\n" \
		"       1000000, default " BENCH_STR(DEFAULT_ITERATIONS) ", --quick " \
		BENCH_STR(QUICK_ITERATIONS) ")\n" \
		"       mmkit bench refpage --tagged ...  (MTE: tagging up front against tagged\n" \
		"       reference pages)\n" \
		"       mmkit bench refpage --threads ...  (first stores from 1, 2 and all CPUs'\n" \
		"       threads, each to its own range)\n"

static void add_backend(struct row *rows, int *nrows, unsigned int flag, const char *name,
			int pinned, struct skipped *skipped, int *nskipped)
{
	char why[MMKIT_REASON_MAX];

	if (mmkit_refpage_backend_available(flag, why, sizeof(why))) {
		fprintf(stderr, "bench-refpage: backend %s skipped: %s\n", name, why);
		skipped[*nskipped].name = pinned ? "uffd (pinned)" : name;
		snprintf(skipped[(*nskipped)++].why, sizeof(skipped->why), "%s", why);
		return;
	}
	rows[*nrows] = (struct row){ .kind = ROW_REFPAGE, .flag = flag, .pinned = pinned };
	rows[(*nrows)++].name = pinned ? "uffd (pinned)" : name;
}

#include "refpage-tagged.h"

int main(int argc, char **argv)
{
	struct row rows[10] = {
		{ .name = "memset", .kind = ROW_MEMSET },
		{ .name = "zero floor", .kind = ROW_ZERO },
		{ .name = "populate+memset", .kind = ROW_POPULATE },
	};
	int nrows = 3, iterations, json = 0, quick = 0, tagged = 0, threads = 0, nskipped = 0;
	int i, t, it, ret;
	long long given_iterations = 0;
	const struct bench_option opts[] = {
		{ "--tagged", BENCH_FLAG, .flag = &tagged },
		{ "--threads", BENCH_FLAG, .flag = &threads },
		{ "--json", BENCH_FLAG, .flag = &json },
		{ "--quick", BENCH_FLAG, .flag = &quick },
		{ "--iterations", BENCH_NUMBER, 1, 1000000, .number = &given_iterations },
		{ NULL },
	};
	struct skipped skipped[5];
	size_t order[10];
	long idle_kib;
	unsigned char *p;

	/* --help's usage is --tagged's after --tagged, --threads' after --threads. */
	for (i = 1; i < argc; i++) {
		tagged |= !strcmp(argv[i], "--tagged");
		threads |= !strcmp(argv[i], "--threads");
	}
	ret = bench_options("refpage", tagged ? TAGGED_USAGE : threads ? THREADS_USAGE : USAGE,
			    opts, argc, argv);
	if (ret >= 0)
		return ret;
	if (tagged && threads) {
		fprintf(stderr, "mmkit bench refpage: --tagged and --threads are two "
			"experiments: one at a time\n");
		return 2;
	}
	iterations = (int)given_iterations;
	if (tagged)
		return tagged_main(argc, argv, json, quick, iterations);
	if (threads)
		return threads_main(argc, argv, json, quick, iterations);
	/* An --iterations given is kept, with or without --quick. */
	if (!iterations)
		iterations = quick ? QUICK_ITERATIONS : DEFAULT_ITERATIONS;
	page = (size_t)sysconf(_SC_PAGESIZE);
	sched_getaffinity(0, sizeof(all_cpus), &all_cpus);
	add_backend(rows, &nrows, MMKIT_REFPAGE_BACKEND_SYSCALL, "syscall", 0, skipped, &nskipped);
	add_backend(rows, &nrows, MMKIT_REFPAGE_BACKEND_KMOD, "kmod", 0, skipped, &nskipped);
	add_backend(rows, &nrows, MMKIT_REFPAGE_BACKEND_MEMFD, "memfd", 0, skipped, &nskipped);
	if (!strcmp(rows[nrows - 1].name, "memfd")) {
		rows[nrows] = rows[nrows - 1];
		rows[nrows].name = "memfd+populate";
		rows[nrows++].populate_hint = 1;
	}
	add_backend(rows, &nrows, MMKIT_REFPAGE_BACKEND_UFFD, "uffd", 0, skipped, &nskipped);
	add_backend(rows, &nrows, MMKIT_REFPAGE_BACKEND_UFFD, "uffd", 1, skipped, &nskipped);
	for (i = 0; i < nrows; i++)
		measure_peak(&rows[i]);
	for (i = 0; i < nrows; i++) {
		if (rows[i].kind != ROW_REFPAGE)
			continue;
		/* The populate row shares the memfd row's object, just before it. */
		if (rows[i].populate_hint) {
			rows[i].rp = rows[i - 1].rp;
			continue;
		}
		ret = mmkit_refpage_create(&rows[i].rp, &row_pattern, 1, rows[i].flag);
		if (ret)
			die("mmkit_refpage_create", -ret);
	}
	random_pages = malloc(MAP_BYTES / page * sizeof(*random_pages));
	if (!random_pages)
		die("malloc", ENOMEM);
	nrandom = MAP_BYTES / page / 10;
	for (i = 0; i < nrows; i++)
		for (t = 0; t < NTOUCH; t++) {
			rows[i].us[t] = malloc((size_t)iterations * sizeof(double));
			if (!rows[i].us[t])
				die("malloc", ENOMEM);
			/* Resident now, so that filling it does not count as a row's RSS. */
			memset(rows[i].us[t], 0, (size_t)iterations * sizeof(double));
		}
	srand(1);
	shuffle_random_pages();
	/* A round to warm up, then what mapping without touching leaves resident. */
	for (t = 0; t < NTOUCH; t++)
		for (i = 0; i < nrows; i++)
			run_once(&rows[i], t, 0);
	for (i = 0; i < nrows; i++)
		for (t = 0; t < NTOUCH; t++)
			rows[i].max_rss_kib[t] = rows[i].max_added_kib[t] =
				rows[i].max_shmem_kib[t] = 0;
	p = map_row(&rows[1]);
	idle_kib = rss_kib();
	unmap_row(&rows[1], p);
	for (it = 0; it < iterations; it++) {
		progress("iteration %d of %d", it + 1, iterations);
		shuffle_random_pages();
		/*
		 * Rows in a new random order each time: a row run right after
		 * its twin (uffd pinned after uffd) would find the same code
		 * paths warm, which at 4 KiB is a third of the time.
		 */
		for (t = 0; t < NTOUCH; t++) {
			shuffle(order, (size_t)nrows);
			for (i = 0; i < nrows; i++)
				run_once(&rows[order[i]], t, it);
		}
	}
	for (i = 0; i < nrows; i++)
		for (t = 0; t < NTOUCH; t++)
			rows[i].median[t] = median_of(rows[i].us[t], iterations);
	check_targets(rows, nrows, idle_kib);
	progress_done();
	if (json)
		print_json(argc, argv, rows, nrows, iterations, idle_kib, skipped, nskipped, quick);
	else
		print_text(rows, nrows, iterations, idle_kib);
	for (i = 0; i < nrows; i++) {
		for (t = 0; t < NTOUCH; t++)
			free(rows[i].us[t]);
		/* The populate row shares the memfd row's object. */
		if (!rows[i].populate_hint)
			mmkit_refpage_destroy(rows[i].rp);
	}
	free(random_pages);
	return 0;
}
