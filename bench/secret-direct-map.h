/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * mmkit bench secret --direct-map [--secrets N] [--rounds R] [--quick] [--json]
 *
 * The concern that held memfd_secret back: each secret page leaves the
 * kernel's direct map, and the huge mappings (1 GiB, 2 MiB) it sat in are
 * split to make room; the kernel does not merge them again.  Measured
 * here: the DirectMap4k/2M/1G lines of /proc/meminfo before N live 32-byte
 * secrets, with them live, and after they are freed, for
 *
 *   mmkit pool        mmkit_secret_alloc() on the memfd_secret backend
 *   memfd_secret      one memfd_secret region of one page per secret,
 *   per secret        written (a secret page enters the map when faulted)
 *
 * each in a fresh process, R times (default 5), the order of the two
 * swapped every round; medians.  Also the pages each occupies (the pool's
 * from mmkit_secret_stats()) and, where /proc/self/pagemap gives frame
 * numbers (root), how many 2 MiB and 1 GiB ranges of physical memory they
 * lie in: the fewest huge mappings the kernel must split for them.
 *
 * The counters are the whole system's: another process mapping secret
 * memory, or the kernel changing its own mappings, moves them too (the
 * medians are for that), and a range split once stays split, so a later
 * round whose pages land in it splits nothing new.  Secret pages cannot
 * move, so they come from the pageblocks kept for unmovable memory, which
 * earlier secret pages (any process's) have split already: on a machine
 * that has run for a while the counters may not move at all, and the
 * ranges are then the figure (the most a fresh boot would split).
 * bench-secret.c's
 * main() hands its arguments here when they hold --direct-map.
 */
#ifndef MMKIT_BENCH_SECRET_DIRECT_MAP_H
#define MMKIT_BENCH_SECRET_DIRECT_MAP_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "mmkit.h"
#include "report.h"

#define DM_USAGE \
	"usage: mmkit bench secret --direct-map [--secrets N] [--rounds R] [--quick] [--json]\n" \
	"  The kernel's direct map (DirectMap4k/2M/1G of /proc/meminfo) before, with and\n" \
	"  after N live 32-byte secrets (default 1000, at most 60000): mmkit's pool and\n" \
	"  one memfd_secret page per secret, each in a fresh process; medians of R rounds\n" \
	"  (default 5, at most 51), the pages each occupies and the huge ranges they\n" \
	"  lie in.  --quick: 50 secrets, 2 rounds.\n"

/* Each memfd_secret region is a mapping: below vm.max_map_count's default, 65530. */
#define DM_MAX_SECRETS	60000
#define DM_MAX_ROUNDS	51
#define DM_SECRET_SIZE	32

enum dm_kind { DM_POOL, DM_PER_SECRET, DM_NKINDS };
enum dm_when { DM_BEFORE, DM_LIVE, DM_FREED, DM_NWHEN };
enum dm_line { DM_4K, DM_2M, DM_1G, DM_NLINES };

static const char *const dm_labels[DM_NKINDS] = {
	[DM_POOL] = "mmkit pool",
	[DM_PER_SECRET] = "memfd_secret per secret",
};
static const char *const dm_lines[DM_NLINES] = { "DirectMap4k", "DirectMap2M", "DirectMap1G" };

/* What a child sends back. */
struct dm_reply {
	int err;
	char reason[160];
	long long kib[DM_NWHEN][DM_NLINES];
	long long pages;		/* secret pages occupied */
	long long ranges_2m, ranges_1g;	/* -1: no frame numbers (not root) */
};

/* The DirectMap lines of /proc/meminfo, in KiB; -errno if there are none. */
static int dm_read(long long kib[DM_NLINES])
{
	char line[128];
	int k, found = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		for (k = 0; k < DM_NLINES; k++)
			if (!strncmp(line, dm_lines[k], strlen(dm_lines[k])) &&
			    sscanf(line + strlen(dm_lines[k]), ": %lld kB", &kib[k]) == 1)
				found |= 1 << k;
	fclose(f);
	/* A machine with no 1 GiB pages may leave that line out. */
	if (!(found & 1 << DM_1G))
		kib[DM_1G] = 0;
	return found & 1 << DM_4K ? 0 : -ENOENT;
}

static int dm_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Distinct values of @v[0..n) >> @shift (sorts @v). */
static long long dm_distinct(uint64_t *v, long long n, unsigned int shift)
{
	long long i, count = 0;

	qsort(v, (size_t)n, sizeof(*v), dm_cmp_u64);
	for (i = 0; i < n; i++)
		count += !i || v[i] >> shift != v[i - 1] >> shift;
	return count;
}

/*
 * The 2 MiB and 1 GiB physical ranges the pages of @secrets lie in, from
 * their frame numbers; -1 where pagemap hides them (frame 0: no CAP_SYS_ADMIN).
 */
static void dm_ranges(void *const *secrets, int n, struct dm_reply *rp)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t *pfn = calloc((size_t)n, sizeof(*pfn)), entry;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), i;
	long long pages = 0;

	rp->ranges_2m = rp->ranges_1g = -1;
	for (i = 0; pfn && fd >= 0 && i < n; i++) {
		off_t at = (off_t)((uintptr_t)secrets[i] / (uintptr_t)page * sizeof(entry));

		/* Bit 63: present; bits 0-54: the frame. */
		if (pread(fd, &entry, sizeof(entry), at) != sizeof(entry) || !(entry >> 63) ||
		    !(entry & ((1ULL << 55) - 1)))
			break;
		pfn[pages++] = (entry & ((1ULL << 55) - 1)) * (uint64_t)page;
	}
	if (pfn && i == n && n > 0) {
		rp->ranges_1g = dm_distinct(pfn, pages, 30);
		rp->ranges_2m = dm_distinct(pfn, pages, 21);
	}
	if (fd >= 0)
		close(fd);
	free(pfn);
}

/* One secret in a memfd_secret region of its own, written; NULL and rp->err if not. */
static void *dm_region(struct dm_reply *rp)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
	void *p = MAP_FAILED;

	if (fd < 0) {
		rp->err = -errno;
		snprintf(rp->reason, sizeof(rp->reason), "memfd_secret: %s", strerror(errno));
		return NULL;
	}
	if (ftruncate(fd, page) || (p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
					      fd, 0)) == MAP_FAILED) {
		rp->err = -errno;
		snprintf(rp->reason, sizeof(rp->reason), "%s of a memfd_secret page: %s",
			 p == MAP_FAILED ? "mmap" : "ftruncate", strerror(errno));
	}
	/* The mapping keeps the file: n fds would run into RLIMIT_NOFILE. */
	close(fd);
	return rp->err ? NULL : p;
}

/*
 * N secrets of one kind live in this (fresh) process, the counters before
 * and with them; they are freed by the exit (the pool keeps emptied chunks
 * mapped for reuse: only the exit gives its pages back).
 */
struct dm_args {
	enum dm_kind kind;
	int n;
};

static void dm_child(const void *arg, void *out)
{
	const struct dm_args *a = arg;
	enum dm_kind kind = a->kind;
	struct dm_reply *rp = out;
	int n = a->n;
	void **secrets = calloc((size_t)n, sizeof(*secrets));
	struct mmkit_secret_stats st;
	int i, err;

	/* The pool must not fall back to mlock: that would measure nothing. */
	setenv("MMKIT_SECRET_BACKEND", "memfd_secret", 1);
	if (!secrets) {
		rp->err = -ENOMEM;
		return;
	}
	rp->err = dm_read(rp->kib[DM_BEFORE]);
	for (i = 0; !rp->err && i < n; i++) {
		if (kind == DM_PER_SECRET) {
			secrets[i] = dm_region(rp);
		} else {
			err = mmkit_secret_alloc(&secrets[i], DM_SECRET_SIZE, MMKIT_SECRET_QUIET);
			if (err) {
				rp->err = err;
				mmkit_secret_stats(&st);
				snprintf(rp->reason, sizeof(rp->reason), "mmkit_secret_alloc: %s (%.100s)",
					 strerror(-err), st.last_error[0] ? st.last_error : st.reason);
			}
		}
		if (!rp->err)
			memset(secrets[i], 0x5a, DM_SECRET_SIZE);
	}
	if (rp->err)
		return;
	dm_read(rp->kib[DM_LIVE]);
	if (kind == DM_POOL && !mmkit_secret_stats(&st))
		rp->pages = (long long)st.pages_mapped;
	else
		rp->pages = n;
	dm_ranges(secrets, n, rp);
}

/* Runs one kind in a forked child; the counters after free are read once it has exited. */
static void dm_measure(enum dm_kind kind, int n, struct dm_reply *rp)
{
	const struct dm_args a = { kind, n };
	int status, err;

	memset(rp, 0, sizeof(*rp));
	err = in_child(dm_child, &a, rp, sizeof(*rp), &status);
	if (err && !rp->err) {
		rp->err = err;
		snprintf(rp->reason, sizeof(rp->reason), "the child died before it replied");
	}
	if (!rp->err)
		dm_read(rp->kib[DM_FREED]);
}

/* Samples of every round, per kind. */
struct dm_samples {
	double live[DM_NLINES][DM_MAX_ROUNDS], freed[DM_NLINES][DM_MAX_ROUNDS];
	double split_1g[DM_MAX_ROUNDS], split_2m[DM_MAX_ROUNDS];
	double pages[DM_MAX_ROUNDS], ranges_2m[DM_MAX_ROUNDS], ranges_1g[DM_MAX_ROUNDS];
	int ok, ranges_known;
	char reason[160];
};

static const char *const dm_first_names[DM_NLINES] = {
	"dm4k_kib_before", "dm2m_kib_before", "dm1g_kib_before"
};
static const char *const dm_live_names[DM_NLINES] = { "dm4k_kib", "dm2m_kib", "dm1g_kib" };
static const char *const dm_freed_names[DM_NLINES] = {
	"dm4k_after_free_kib", "dm2m_after_free_kib", "dm1g_after_free_kib"
};

static void dm_record(struct dm_samples *sm, const struct dm_reply *rp, int r)
{
	int k;

	if (rp->err) {
		sm->ok = 0;
		snprintf(sm->reason, sizeof(sm->reason), "%s",
			 rp->reason[0] ? rp->reason : strerror(-rp->err));
		return;
	}
	for (k = 0; k < DM_NLINES; k++) {
		sm->live[k][r] = (double)(rp->kib[DM_LIVE][k] - rp->kib[DM_BEFORE][k]);
		sm->freed[k][r] = (double)(rp->kib[DM_FREED][k] - rp->kib[DM_BEFORE][k]);
	}
	/* A 2 MiB mapping split gives DirectMap4k 2048 kB; a 1 GiB one takes 1 GiB from DirectMap1G. */
	sm->split_2m[r] = sm->live[DM_4K][r] / 2048;
	sm->split_1g[r] = (double)(rp->kib[DM_BEFORE][DM_1G] - rp->kib[DM_LIVE][DM_1G]) / 1048576;
	sm->pages[r] = (double)rp->pages;
	sm->ranges_2m[r] = (double)rp->ranges_2m;
	sm->ranges_1g[r] = (double)rp->ranges_1g;
	sm->ranges_known = rp->ranges_2m >= 0;
}

/* The pool kept contiguous: its pages in as few 2 MiB ranges as they fill, split no more. */
static int dm_target(struct dm_samples *sm, int rounds, char *figure, size_t len)
{
	struct dm_samples *pool = &sm[DM_POOL];
	double pages = median_of(pool->pages, rounds), split = median_of(pool->split_2m, rounds);
	long long bytes = (long long)pages * sysconf(_SC_PAGESIZE);
	double fill = (double)((bytes + (2 << 20) - 1) / (2 << 20));
	double ranges = pool->ranges_known ? median_of(pool->ranges_2m, rounds) : -1;

	snprintf(figure, len, "pool: %.0f pages in %.0f 2 MiB ranges (%.0f if contiguous, +1 across "
		 "a boundary), %.0f 2 MiB mappings split", pages, ranges, fill, split);
	if (!pool->ranges_known)
		snprintf(figure, len, "pool: %.0f pages (their frames need root), %.0f 2 MiB mappings "
			 "split (%.0f if contiguous, +1 across a boundary)", pages, split, fill);
	return split <= fill + 1 && (!pool->ranges_known || ranges <= fill + 1);
}

static void dm_json(struct dm_samples *sm, int n, int rounds, int quick,
		    const long long first[DM_NLINES], int argc, char **argv)
{
	char figure[256] = "not measured: the pool is unavailable here";
	int kind, k, met = 0;

	report_begin("secret", argc, argv);
	report_param_int("secrets", n);
	report_param_int("secret_size", DM_SECRET_SIZE);
	report_param_int("rounds", rounds);
	report_param_bool("quick", quick);
	for (k = 0; k < DM_NLINES; k++)
		report_param_int(dm_first_names[k], first[k]);
	report_param_str("seed_experiment", "1,000 one-page memfd_secret regions");
	for (kind = 0; kind < DM_NKINDS; kind++) {
		report_row_begin("direct_map", NULL, dm_labels[kind]);
		if (!sm[kind].ok) {
			report_row_unavailable(sm[kind].reason);
			report_row_end();
			continue;
		}
		for (k = 0; k < DM_NLINES; k++)
			report_metric(dm_live_names[k], "KiB", sm[kind].live[k], rounds);
		for (k = 0; k < DM_NLINES; k++)
			report_metric(dm_freed_names[k], "KiB", sm[kind].freed[k], rounds);
		report_metric("split_1g", "mappings", sm[kind].split_1g, rounds);
		report_metric("split_2m", "mappings", sm[kind].split_2m, rounds);
		report_metric("pages", "pages", sm[kind].pages, rounds);
		if (sm[kind].ranges_known) {
			report_metric("ranges_2m", "ranges", sm[kind].ranges_2m, rounds);
			report_metric("ranges_1g", "ranges", sm[kind].ranges_1g, rounds);
		}
		report_row_end();
	}
	/* The measurement: a whole 1 GiB mapping split to 2 MiB ones, 2 MiB of those to 4 KiB. */
	report_seed_begin("direct_map", NULL, dm_labels[DM_PER_SECRET]);
	report_metric_value("split_1g", "mappings", 1);
	report_metric_value("split_2m", "mappings", 1);
	report_metric_value("pages", "pages", 1000);
	report_row_end();
	if (sm[DM_POOL].ok && sm[DM_PER_SECRET].ok) {
		report_ratio("pages: memfd_secret per secret / mmkit pool",
			     median_of(sm[DM_PER_SECRET].pages, rounds) / median_of(sm[DM_POOL].pages, rounds));
		if (sm[DM_POOL].ranges_known)
			report_ratio("2 MiB ranges: memfd_secret per secret / mmkit pool",
				     median_of(sm[DM_PER_SECRET].ranges_2m, rounds) /
				     median_of(sm[DM_POOL].ranges_2m, rounds));
	}
	if (sm[DM_POOL].ok)
		met = dm_target(sm, rounds, figure, sizeof(figure));
	report_target("mmkit's pool splits no more than the pages it occupies, kept contiguous",
		      figure, met);
	report_end();
}

static void dm_table(struct dm_samples *sm, int n, int rounds, const long long first[DM_NLINES])
{
	char figure[256];
	int kind, k, r;

	printf("direct map: %d live %d-byte secrets, each kind in a fresh process, median of %d\n"
	       "round%s; before the first: DirectMap4k %lld kB, DirectMap2M %lld kB, DirectMap1G %lld kB\n"
	       "(system-wide counters: other processes move them too)\n\n", n, DM_SECRET_SIZE, rounds,
	       rounds > 1 ? "s" : "", first[DM_4K], first[DM_2M], first[DM_1G]);
	/* Round by round first: median_of() sorts the samples. */
	for (kind = 0; kind < DM_NKINDS; kind++) {
		if (!sm[kind].ok)
			continue;
		printf("2 MiB mappings split, round by round, %-24s", dm_labels[kind]);
		for (r = 0; r < rounds; r++)
			printf(" %.0f", sm[kind].split_2m[r]);
		printf("\n");
	}
	printf("\n%-24s %6s %7s %7s | %-30s %8s %8s | %s\n", "", "", "2 MiB", "1 GiB",
	       "change with the secrets live", "2 MiB", "1 GiB", "change after free");
	printf("%-24s %6s %7s %7s | %9s %9s %10s %8s %8s | %9s %9s %10s\n", "KIND", "PAGES", "RANGES",
	       "RANGES", "4k kB", "2M kB", "1G kB", "SPLIT", "SPLIT", "4k kB", "2M kB", "1G kB");
	for (kind = 0; kind < DM_NKINDS; kind++) {
		if (!sm[kind].ok) {
			printf("%-24s unavailable: %s\n", dm_labels[kind], sm[kind].reason);
			continue;
		}
		printf("%-24s %6.0f", dm_labels[kind], median_of(sm[kind].pages, rounds));
		if (sm[kind].ranges_known)
			printf(" %7.0f %7.0f |", median_of(sm[kind].ranges_2m, rounds),
			       median_of(sm[kind].ranges_1g, rounds));
		else
			printf(" %7s %7s |", "-", "-");
		for (k = 0; k < DM_NLINES; k++)
			printf(" %*.0f", k == DM_1G ? 10 : 9, median_of(sm[kind].live[k], rounds));
		printf(" %8.0f %8.0f |", median_of(sm[kind].split_2m, rounds),
		       median_of(sm[kind].split_1g, rounds));
		for (k = 0; k < DM_NLINES; k++)
			printf(" %*.0f", k == DM_1G ? 10 : 9, median_of(sm[kind].freed[k], rounds));
		printf("\n");
	}
	printf("\nRANGES: the 2 MiB and 1 GiB ranges of physical memory the pages lie in (frame\n"
	       "numbers from pagemap: root only).  SPLIT: mappings of that size the kernel split.\n"
	       "The issue's measurement: 1,000 one-page memfd_secret regions split one 1 GiB\n"
	       "mapping into 2 MiB ones and one 2 MiB mapping into 4 KiB ones.\n");
	if (sm[DM_POOL].ok)
		printf("target: mmkit's pool splits no more than the pages it occupies, kept contiguous:\n"
		       "  %s\n", dm_target(sm, rounds, figure, sizeof(figure)) ? "met" : "not met");
	if (sm[DM_POOL].ok)
		printf("  %s\n", figure);
}

/* main() of bench-secret --direct-map: 0, 1 (could not measure) or 2 (bad usage). */
static int direct_map_main(int argc, char **argv)
{
	static struct dm_samples sm[DM_NKINDS];
	struct dm_reply rp;
	long long first[DM_NLINES];
	int n, rounds, json = 0, quick = 0, direct_map = 0, r, k, i, err, ret;
	long long secrets = 0, given_rounds = 0;
	const struct bench_option opts[] = {
		{ "--direct-map", BENCH_FLAG, .flag = &direct_map },
		{ "--json", BENCH_FLAG, .flag = &json },
		{ "--quick", BENCH_FLAG, .flag = &quick },
		{ "--secrets", BENCH_NUMBER, 1, DM_MAX_SECRETS, .number = &secrets },
		{ "--rounds", BENCH_NUMBER, 1, DM_MAX_ROUNDS, .number = &given_rounds },
		{ NULL },
	};

	ret = bench_options("secret", DM_USAGE, opts, argc, argv);
	if (ret >= 0)
		return ret;
	/* --quick sets what was not given. */
	n = secrets ? (int)secrets : quick ? 50 : 1000;
	rounds = given_rounds ? (int)given_rounds : quick ? 2 : 5;
	err = dm_read(first);
	if (err) {
		fprintf(stderr, "bench-secret: no DirectMap lines in /proc/meminfo (%s): this kernel does "
			"not report its direct map\n", strerror(-err));
		return 1;
	}
	for (k = 0; k < DM_NKINDS; k++)
		sm[k].ok = 1;
	for (r = 0; r < rounds; r++)
		for (i = 0; i < DM_NKINDS; i++) {
			/* Each kind goes first every other round: a range split by one stays split for the other. */
			k = (i + r) % DM_NKINDS;
			if (!sm[k].ok)
				continue;
			progress("secret --direct-map: round %d/%d: %s", r + 1, rounds, dm_labels[k]);
			dm_measure(k, n, &rp);
			dm_record(&sm[k], &rp, r);
		}
	progress_done();
	if (json)
		dm_json(sm, n, rounds, quick, first, argc, argv);
	else
		dm_table(sm, n, rounds, first);
	return 0;
}

#endif /* MMKIT_BENCH_SECRET_DIRECT_MAP_H */
