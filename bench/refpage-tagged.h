/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * mmkit bench refpage --tagged [--json] [--quick] [--iterations N]
 *
 * The pre-tagged heap of the reference-page proposal (arm64 MTE): an
 * allocator must give a whole allocation one tag.  Rows, each N times:
 * map 4,096,000 bytes, write one byte per page through a pointer with the
 * allocation's tag over the first T bytes (T = 4096, 2,048,000, 4,096,000)
 * or a random 10 % of the pages, unmap:
 *
 *   ST2G up front    anonymous PROT_MTE memory tagged whole with ST2G (two
 *                    granules an instruction) before use: the usual way,
 *                    which populates every page
 *   memfd, kmod      a reference page tagged once (one object per tag, as
 *                    the proposal has 16), mapped by mmkit_refpage_map():
 *                    a touched page is copied with its tags, an untouched
 *                    one is the reference page
 *   syscall          the same with refpage_create(2) (the kernel series),
 *                    a row only where the kernel has the call
 *
 * in a random order each iteration.  Ratios: each reference-page row's
 * median time over ST2G's, per touch size.  Without MTE every row is
 * unavailable with the reason, and the program exits 0.  bench-refpage.c's
 * main() hands its arguments here when they hold --tagged.
 */
#ifndef MMKIT_BENCH_REFPAGE_TAGGED_H
#define MMKIT_BENCH_REFPAGE_TAGGED_H

#include <stdint.h>
#include <sys/auxv.h>
#include <sys/prctl.h>

/* The allocation's tag; any of 1-15 would do. */
#define TAGGED_TAG		9
#define TAGGED_GRANULE		16
#define TAGGED_ITERATIONS	200
#define TAGGED_ROWS		4	/* at most: syscall's only with the call */

struct tagged_row {
	const char *name;
	struct mmkit_refpage *rp;	/* NULL: ST2G up front */
	char why[MMKIT_REASON_MAX];	/* unavailable when non-empty */
	double *us[NTOUCH];
	double median[NTOUCH];
};

static void *with_tag(const void *p, unsigned int tag)
{
	return (void *)(((uintptr_t)p & ~((uintptr_t)0xf << 56)) | (uintptr_t)tag << 56);
}

#if defined(__aarch64__)
#include <asm/hwcap.h>

/* PROT_MTE of arm64's uapi. */
#define TAGGED_PROT_MTE		0x20

static int tagged_mte(char *why, size_t len)
{
	if (!(getauxval(AT_HWCAP2) & HWCAP2_MTE)) {
		snprintf(why, len, "no MTE: AT_HWCAP2 has no HWCAP2_MTE");
		return 0;
	}
	/* Checked accesses, as a tagged heap runs: synchronous faults. */
	if (prctl(PR_SET_TAGGED_ADDR_CTRL, PR_TAGGED_ADDR_ENABLE | PR_MTE_TCF_SYNC |
		  (0xfffeUL << PR_MTE_TAG_SHIFT), 0, 0, 0)) {
		snprintf(why, len, "PR_SET_TAGGED_ADDR_CTRL: %s", strerror(errno));
		return 0;
	}
	return 1;
}

/*
 * ST2G x0, [x1], #32 over [p, p + len): each pair of granules gets the tag
 * x0 carries.  Encoded: the benchmarks build for plain armv8-a.
 */
static void tag_range(unsigned char *p, size_t len)
{
	register unsigned char *x0 __asm__("x0") = with_tag(p, TAGGED_TAG);
	register unsigned char *x1 __asm__("x1") = p;
	unsigned char *end = p + len;

	while (x1 < end)
		__asm__ volatile(".inst 0xd9a02420" : "+r"(x1) : "r"(x0) : "memory");
}
#else
#define TAGGED_PROT_MTE		0

static int tagged_mte(char *why, size_t len)
{
	snprintf(why, len, "no MTE: memory tagging is an arm64 feature; this is not arm64");
	return 0;
}

static void tag_range(unsigned char *p, size_t len)
{
	(void)p;
	(void)len;
}
#endif

static void tagged_run_once(struct tagged_row *r, int t, int iter)
{
	unsigned char *p;
	void *mem;
	double t0;
	int ret;

	t0 = (1e6 * now_seconds());
	if (r->rp) {
		ret = mmkit_refpage_map(r->rp, MAP_BYTES, PROT_READ | PROT_WRITE, &mem);
		if (ret)
			die("mmkit_refpage_map", -ret);
	} else {
		mem = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE | TAGGED_PROT_MTE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			die("mmap(PROT_MTE)", errno);
		tag_range(mem, MAP_BYTES);
	}
	p = with_tag(mem, TAGGED_TAG);
	touch(p, t);
	if (r->rp)
		ret = mmkit_refpage_unmap(r->rp, mem, MAP_BYTES);
	else
		ret = munmap(mem, MAP_BYTES) ? -errno : 0;
	if (ret)
		die("unmap", -ret);
	r->us[t][iter] = (1e6 * now_seconds()) - t0;
}

/* A reference page of one tag for @backend, or why not into @r->why. */
static void tagged_add_backend(struct tagged_row *r, const char *name, unsigned int backend)
{
	unsigned char *pattern;
	int ret;

	r->name = name;
	if (mmkit_refpage_backend_available(backend, r->why, sizeof(r->why)))
		return;
	/* The pattern: one granule of tag TAGGED_TAG in PROT_MTE memory. */
	pattern = mmap(NULL, page, PROT_READ | PROT_WRITE | TAGGED_PROT_MTE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pattern == MAP_FAILED)
		die("mmap(PROT_MTE)", errno);
	tag_range(pattern, 2 * TAGGED_GRANULE);
	ret = mmkit_refpage_create(&r->rp, with_tag(pattern, TAGGED_TAG), TAGGED_GRANULE,
				   MMKIT_REFPAGE_TAGGED | backend);
	munmap(pattern, page);
	if (ret == -EOPNOTSUPP)
		snprintf(r->why, sizeof(r->why), "%s cannot tag here (mmkit probe says why)", name);
	else if (ret)
		die("mmkit_refpage_create(MMKIT_REFPAGE_TAGGED)", -ret);
	else
		r->why[0] = '\0';
}

#define TAGGED_USAGE \
	"usage: mmkit bench refpage --tagged [--json] [--quick] [--iterations N]\n" \
	"       (N from 1 to 1000000, default " BENCH_STR(TAGGED_ITERATIONS) ", --quick " \
	BENCH_STR(QUICK_ITERATIONS) ")\n"

/* The rows measured: syscall's only where the kernel has refpage_create(2). */
static int tagged_nrows;

static void tagged_print(struct tagged_row *rows, int iterations)
{
	int i, t;

	printf("mmkit bench refpage --tagged: %d iterations, %lu-byte map, one byte written per "
	       "page through the allocation's tag\n", iterations, MAP_BYTES);
	printf("time: median of one map+tag+touch+unmap; ratio: this row over ST2G up front\n\n");
	printf("%-16s %-10s %12s %8s\n", "row", "touch", "median_us", "ratio");
	for (i = 0; i < tagged_nrows; i++)
		for (t = 0; t < NTOUCH; t++) {
			if (rows[i].why[0]) {
				printf("%-16s %-10s unavailable: %s\n", rows[i].name,
				       touch_names[t], rows[i].why);
				continue;
			}
			printf("%-16s %-10s %12.1f %8.3f\n", rows[i].name, touch_names[t],
			       rows[i].median[t], rows[i].median[t] / rows[0].median[t]);
		}
}

static void tagged_json(int argc, char **argv, struct tagged_row *rows, int iterations,
			int quick)
{
	char what[96];
	int i, t;

	report_begin("refpage", argc, argv);
	report_param_bool("tagged", 1);
	report_param_int("iterations", iterations);
	report_param_int("map_bytes", MAP_BYTES);
	report_param_int("random_pages", (long long)nrandom);
	report_param_bool("quick", quick);
	for (i = 0; i < tagged_nrows; i++)
		for (t = 0; t < RANDOM_TOUCH; t++) {
			report_row_begin("tagged_touch", rows[i].name, touch_names[t]);
			report_row_x((double)touch_bytes[t], "bytes");
			if (rows[i].why[0])
				report_row_unavailable(rows[i].why);
			else
				report_metric("time", "us", rows[i].us[t], iterations);
			report_row_end();
		}
	for (i = 0; i < tagged_nrows; i++) {
		report_row_begin("tagged_random10", NULL, rows[i].name);
		if (rows[i].why[0])
			report_row_unavailable(rows[i].why);
		else
			report_metric("time", "us", rows[i].us[RANDOM_TOUCH], iterations);
		report_row_end();
	}
	for (i = 1; i < tagged_nrows; i++)
		for (t = 0; t < NTOUCH && !rows[0].why[0] && !rows[i].why[0]; t++) {
			snprintf(what, sizeof(what), "%s / ST2G up front, touch %s", rows[i].name,
				 touch_names[t]);
			report_ratio(what, rows[i].median[t] / rows[0].median[t]);
		}
	report_end();
}

/* The options, parsed by bench-refpage.c's main(), which hands --tagged over here. */
static int tagged_main(int argc, char **argv, int json, int quick, int iterations)
{
	struct tagged_row rows[TAGGED_ROWS] = { { .name = "ST2G up front" } };
	int mte, i, t, it;
	size_t order[TAGGED_ROWS];

	if (!iterations)
		iterations = quick ? QUICK_ITERATIONS : TAGGED_ITERATIONS;
	page = (size_t)sysconf(_SC_PAGESIZE);
	nrandom = MAP_BYTES / page / 10;
	mte = tagged_mte(rows[0].why, sizeof(rows[0].why));
	rows[1].name = "kmod";
	rows[2].name = "memfd";
	rows[3].name = "syscall";
	tagged_nrows = mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_SYSCALL, rows[3].why,
							 sizeof(rows[3].why)) ? 3 : 4;
	if (!mte) {
		fprintf(stderr, "bench-refpage --tagged: %s\n", rows[0].why);
		for (i = 1; i < tagged_nrows; i++)
			memcpy(rows[i].why, rows[0].why, sizeof(rows[i].why));
	} else {
		tagged_add_backend(&rows[1], "kmod", MMKIT_REFPAGE_BACKEND_KMOD);
		tagged_add_backend(&rows[2], "memfd", MMKIT_REFPAGE_BACKEND_MEMFD);
		if (tagged_nrows > 3)
			tagged_add_backend(&rows[3], "syscall", MMKIT_REFPAGE_BACKEND_SYSCALL);
	}
	for (i = 0; i < tagged_nrows; i++) {
		if (rows[i].why[0] && mte)
			fprintf(stderr, "bench-refpage --tagged: %s: %s\n", rows[i].name,
				rows[i].why);
		for (t = 0; t < NTOUCH; t++) {
			rows[i].us[t] = calloc((size_t)iterations, sizeof(double));
			if (!rows[i].us[t])
				die("calloc", ENOMEM);
		}
	}
	random_pages = malloc(MAP_BYTES / page * sizeof(*random_pages));
	if (!random_pages)
		die("malloc", ENOMEM);
	srand(1);
	/* A round to warm up, then the measured ones, rows in a new order each time. */
	for (it = -1; mte && it < iterations; it++) {
		progress("iteration %d of %d", it + 1, iterations);
		shuffle_random_pages();
		for (t = 0; t < NTOUCH; t++) {
			shuffle(order, (size_t)tagged_nrows);
			for (i = 0; i < tagged_nrows; i++)
				if (!rows[order[i]].why[0])
					tagged_run_once(&rows[order[i]], t, it < 0 ? 0 : it);
		}
	}
	for (i = 0; i < tagged_nrows; i++)
		for (t = 0; t < NTOUCH && !rows[i].why[0]; t++)
			rows[i].median[t] = median_of(rows[i].us[t], iterations);
	progress_done();
	if (json)
		tagged_json(argc, argv, rows, iterations, quick);
	else
		tagged_print(rows, iterations);
	for (i = 0; i < tagged_nrows; i++) {
		for (t = 0; t < NTOUCH; t++)
			free(rows[i].us[t]);
		mmkit_refpage_destroy(rows[i].rp);
	}
	free(random_pages);
	return 0;
}

#endif /* MMKIT_BENCH_REFPAGE_TAGGED_H */
