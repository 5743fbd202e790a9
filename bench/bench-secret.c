// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit bench secret [--json] [--quick] [--rounds N]: secret allocators side
 * by side.
 *
 *   mmkit/memfd_secret   mmkit_secret_alloc/free, memfd_secret backend
 *   mmkit/mlock          the same, MMKIT_SECRET_BACKEND=mlock
 *   libsodium            sodium_malloc/sodium_free
 *   openssl              CRYPTO_secure_malloc_init + OPENSSL_secure_malloc/free
 *
 * Speed: each allocator lives in its own worker process (an allocator's
 * backend is chosen once per process), and the workers take turns, round
 * after round, each timing allocation + free pairs of one size for a fixed
 * time, first with no other secret live, then with 100 others of the size
 * live (OpenSSL's buddy allocator splits and merges its whole arena when
 * alone); the median over the rounds is reported.  Then the scaling rows
 * (secret-scale.h): 1, 2, 4 and 8 threads, and bulk rounds of 10,000 and
 * 200,000 live secrets, warm and cold.  Space: in a fresh process
 * per allocator and size, 1000 secrets are allocated, written in full and
 * kept live; the growth of the resident set (pages) and of VmLck is what
 * 1000 live secrets cost -- for OpenSSL that includes its arena, sized to
 * twice the need, which it locks whole at start.
 *
 * --json gives the mmkit-bench/1 report (mmkit-bench(7)): tables speed_32
 * and speed_4096 (ns per pair, alone and with 100 live), space_32 and
 * space_4096 (pages and locked KiB per 1000 live), the sweep threads (ns per
 * pair per thread by thread count, a control series with no allocator),
 * bulk_10000 and bulk_200000 (ns per operation warm and cold, cold faults)
 * and memfd_secret_fault; the ratios compare with mmkit/memfd_secret (above
 * 1: mmkit is faster); the targets are the goals.  --quick is one round.
 *
 * A peer is built in only where pkg-config found it when mmkit was built
 * (the Makefile defines HAVE_LIBSODIUM, HAVE_OPENSSL); one left out has
 * no rows in the table, a line saying why instead, and in JSON its rows
 * say "available": false with a "reason".
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#ifdef HAVE_OPENSSL
#include <openssl/crypto.h>
#endif
#ifdef HAVE_LIBSODIUM
#include <sodium.h>
#endif

#include "mmkit.h"
#include "options.h"
#include "report.h"

enum allocator { MMKIT_SECRETMEM, MMKIT_MLOCK, SODIUM, OPENSSL, NALLOC };

static const char *const names[NALLOC] = {
	[MMKIT_SECRETMEM] = "mmkit/memfd_secret",
	[MMKIT_MLOCK] = "mmkit/mlock",
	[SODIUM] = "libsodium",
	[OPENSSL] = "openssl",
};

/* Why a peer is not in this binary; NULL for the allocators that are. */
static const char *const not_built[NALLOC] = {
#ifndef HAVE_LIBSODIUM
	[SODIUM] = "not built in (pkg-config found no libsodium when mmkit was built)",
#endif
#ifndef HAVE_OPENSSL
	[OPENSSL] = "not built in (pkg-config found no libcrypto when mmkit was built)",
#endif
};

static const size_t sizes[] = { 32, 4096 };
#define NSIZES		(sizeof(sizes) / sizeof(sizes[0]))
#define LIVE		1000
/* The speed is timed alone and with this many other secrets live. */
#define BACKGROUND	100
static const int backgrounds[] = { 0, BACKGROUND };
#define NBG		2
#define MAX_ROUNDS	51
#define TURN_SECONDS	0.08

enum request_kind { PAIRS, THREADS };

struct request {
	enum request_kind kind;
	size_t size;
	int live;		/* secrets held meanwhile */
	int threads;
	double seconds;
};

struct reply {
	int err;
	double ns_per_pair;
	double ns_warm;		/* bulk: the second round's, the first's in ns_per_pair */
	double ns_cpu;		/* threads: CPU time per pair, wall time's in ns_per_pair */
	double running;		/* threads: how many ran at once, on average */
	long long pages;
	long long locked_kib;
};

struct worker {
	pid_t pid;
	int to, from;
	int available;
	int err;		/* why it stopped being available */
};

/* Prepares the allocator in this (fresh) process; -errno if it cannot work. */
static int setup(enum allocator a, size_t arena)
{
	switch (a) {
	case MMKIT_SECRETMEM:
		setenv("MMKIT_SECRET_BACKEND", "memfd_secret", 1);
		return 0;
	case MMKIT_MLOCK:
		setenv("MMKIT_SECRET_BACKEND", "mlock", 1);
		return 0;
#ifdef HAVE_LIBSODIUM
	case SODIUM:
		return sodium_init() < 0 ? -EIO : 0;
#endif
#ifdef HAVE_OPENSSL
	case OPENSSL:
		return CRYPTO_secure_malloc_init(arena, 16) == 1 ? 0 : -ENOMEM;
#endif
	default:
		(void)arena;
		return -ENOSYS;
	}
}

/* Why the last allocation failed: mmkit says, the peers only return NULL. */
/*
 * Per thread: one variable every thread writes on every allocation would
 * bounce its cache line between the cores of the thread rows, and make the
 * allocators look twice as slow with two threads as with one.
 */
static __thread int alloc_error;

static void *alloc(enum allocator a, size_t size)
{
	void *p = NULL;

	alloc_error = -ENOMEM;
	switch (a) {
	case MMKIT_SECRETMEM:
	case MMKIT_MLOCK:
		alloc_error = mmkit_secret_alloc(&p, size, MMKIT_SECRET_QUIET);
		return alloc_error ? NULL : p;
#ifdef HAVE_LIBSODIUM
	case SODIUM:
		return sodium_malloc(size);
#endif
#ifdef HAVE_OPENSSL
	case OPENSSL:
		return OPENSSL_secure_malloc(size);
#endif
	default:
		alloc_error = -ENOSYS;
		return NULL;
	}
}

static void release(enum allocator a, void *p)
{
	switch (a) {
	case MMKIT_SECRETMEM:
	case MMKIT_MLOCK:
		mmkit_secret_free(p);
		break;
#ifdef HAVE_LIBSODIUM
	case SODIUM:
		sodium_free(p);
		break;
#endif
#ifdef HAVE_OPENSSL
	case OPENSSL:
		OPENSSL_secure_free(p);
		break;
#endif
	default:
		break;
	}
}

/*
 * Times allocation + free pairs for about @seconds, with @live other
 * secrets of the same size held meanwhile; ns per pair, or -1.
 */
static double time_pairs(enum allocator a, size_t size, int live, double seconds)
{
	static void *held[BACKGROUND];
	double start, elapsed;
	long long pairs = 0;
	int batch = 16, i;

	for (i = 0; i < live; i++) {
		held[i] = alloc(a, size);
		if (!held[i])
			return -1;
	}
	start = now_seconds();
	do {
		for (i = 0; i < batch; i++) {
			volatile char *p = alloc(a, size);

			if (!p)
				return -1;
			p[0] = 1;
			release(a, (void *)p);
		}
		pairs += batch;
		if (batch < 4096)
			batch *= 2;
		elapsed = now_seconds() - start;
	} while (elapsed < seconds);
	for (i = 0; i < live; i++)
		release(a, held[i]);
	return elapsed * 1e9 / (double)pairs;
}

static int worker_run(struct worker *w, const struct request *rq, struct reply *rp);

/*
 * Runs @fn in a fresh process, where it fills *@rp, and waits for it: the
 * measurement starts from an allocator nobody has used.  -EPIPE when the
 * child died before it replied.
 */
static int in_fresh_process(void (*fn)(const void *arg, void *rp), const void *arg,
			    struct reply *rp)
{
	int status, err;

	memset(rp, 0, sizeof(*rp));
	err = in_child(fn, arg, rp, sizeof(*rp), &status);
	if (err)
		rp->err = err;
	return rp->err;
}

/*
 * What failed with @err, said into @buf: a secret allocator fails with
 * ENOMEM under a small RLIMIT_MEMLOCK, so that limit is named with it.
 */
static const char *failure_why(const char *what, int err, char *buf, size_t len)
{
	struct mmkit_memlock m;

	if (err == -ENOMEM && !mmkit_memlock_check(NULL, 0, &m) && !m.exempt &&
	    m.limit != MMKIT_MEMLOCK_UNLIMITED)
		snprintf(buf, len, "%s failed: %s, under RLIMIT_MEMLOCK %llu KiB (ulimit -l)", what,
			 strerror(-err), m.limit / 1024);
	else
		snprintf(buf, len, "%s failed: %s", what, strerror(-err));
	return buf;
}

/* Why allocator @a has no speed figures, NULL when it has; @buf holds a failure's. */
static const char *worker_why(const struct worker *w, enum allocator a, char *buf, size_t len)
{
	if (not_built[a])
		return not_built[a];
	if (w[a].available)
		return NULL;
	return failure_why("timing allocations", w[a].err, buf, len);
}

/* Why allocator @a has no space figures for secrets of size @size; as worker_why(). */
static const char *space_why(const struct reply *space, enum allocator a, size_t size, char *buf,
			     size_t len)
{
	char what[64];

	if (not_built[a])
		return not_built[a];
	if (!space->err)
		return NULL;
	snprintf(what, sizeof(what), "keeping %d %zu-byte secrets live", LIVE, size);
	return failure_why(what, space->err, buf, len);
}

#include "secret-scale.h"
#include "secret-direct-map.h"

static void worker_main(enum allocator a, int in, int out)
{
	struct request rq;
	struct reply rp = { 0 };
	void *probe;

	rp.err = setup(a, 1 << 20);
	if (!rp.err) {
		probe = alloc(a, 32);
		if (!probe)
			rp.err = alloc_error;
		else
			release(a, probe);
	}
	while (read(in, &rq, sizeof(rq)) == sizeof(rq)) {
		if (!rp.err && rq.kind == PAIRS)
			rp.ns_per_pair = time_pairs(a, rq.size, rq.live, rq.seconds);
		if (!rp.err && rq.kind == THREADS) {
			struct thread_figures f = { -1, -1, -1 };

			time_threads(a, 0, rq.threads, rq.seconds, &f);
			rp.ns_per_pair = f.wall;
			rp.ns_cpu = f.cpu;
			rp.running = f.running;
		}
		if (!rp.err && rp.ns_per_pair < 0)
			rp.err = -ENOMEM;
		if (write(out, &rp, sizeof(rp)) != sizeof(rp))
			break;
	}
	_exit(0);
}

static int worker_start(struct worker *w, enum allocator a)
{
	int down[2], up[2];

	if (pipe(down) || pipe(up))
		return -errno;
	fflush(NULL);
	w->pid = fork();
	if (w->pid < 0)
		return -errno;
	if (w->pid == 0) {
		close(down[1]);
		close(up[0]);
		worker_main(a, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	w->to = down[1];
	w->from = up[0];
	w->available = 1;
	return 0;
}

/* A request answered; a worker that fails is unavailable from then on. */
static int worker_run(struct worker *w, const struct request *rq, struct reply *rp)
{
	if (write(w->to, rq, sizeof(*rq)) != sizeof(*rq) || read(w->from, rp, sizeof(*rp)) != sizeof(*rp))
		w->err = -EPIPE;
	else
		w->err = rp->err;
	if (w->err)
		w->available = 0;
	return w->err;
}

/* Resident pages (statm) and VmLck in KiB of this process. */
static void footprint(long long *pages, long long *locked_kib)
{
	char line[256];
	FILE *f;

	*pages = *locked_kib = 0;
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%*s %lld", pages) != 1)
			*pages = 0;
		fclose(f);
	}
	f = fopen("/proc/self/status", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %lld", locked_kib) == 1)
			break;
	fclose(f);
}

static size_t pow2_at_least(size_t n)
{
	size_t p = 1;

	while (p < n)
		p *= 2;
	return p;
}

struct space_args {
	enum allocator a;
	size_t size;
};

/* What 1000 live secrets of a size cost, measured in a fresh process. */
static void space_in_child(const void *arg, void *out)
{
	const struct space_args *sa = arg;
	struct reply *rp = out;
	static void *p[LIVE];
	long long pages0, locked0;
	int i;

	/* Twice: the first call pays for stdio's and malloc's own start. */
	footprint(&pages0, &locked0);
	footprint(&pages0, &locked0);
	rp->err = setup(sa->a, 2 * pow2_at_least(LIVE * pow2_at_least(sa->size)));
	for (i = 0; !rp->err && i < LIVE; i++) {
		p[i] = alloc(sa->a, sa->size);
		if (!p[i])
			rp->err = alloc_error;
		else
			memset(p[i], 0x5a, sa->size);
	}
	footprint(&rp->pages, &rp->locked_kib);
	rp->pages -= pages0;
	rp->locked_kib -= locked0;
}

static int measure_space(enum allocator a, size_t size, struct reply *rp)
{
	const struct space_args sa = { a, size };

	return in_fresh_process(space_in_child, &sa, rp);
}

static double ratio(double median[NALLOC][NSIZES][NBG], enum allocator a, size_t s, int b)
{
	return median[a][s][b] / median[MMKIT_SECRETMEM][s][b];
}

static void speed_space_rows(const struct worker *w, struct reply space[NALLOC][NSIZES],
			     double samples[NALLOC][NSIZES][NBG][MAX_ROUNDS], int rounds)
{
	char table[32], buf[192];
	const char *why;
	size_t s;
	int a;

	for (s = 0; s < NSIZES; s++)
		for (a = 0; a < NALLOC; a++) {
			snprintf(table, sizeof(table), "speed_%zu", sizes[s]);
			report_row_begin(table, NULL, names[a]);
			why = worker_why(w, a, buf, sizeof(buf));
			if (why) {
				report_row_unavailable(why);
			} else {
				report_metric("alone", "ns", samples[a][s][0], rounds);
				report_metric("with_100_live", "ns", samples[a][s][1], rounds);
			}
			report_row_end();
		}
	for (s = 0; s < NSIZES; s++)
		for (a = 0; a < NALLOC; a++) {
			snprintf(table, sizeof(table), "space_%zu", sizes[s]);
			report_row_begin(table, NULL, names[a]);
			why = space_why(&space[a][s], a, sizes[s], buf, sizeof(buf));
			if (why) {
				report_row_unavailable(why);
			} else {
				report_metric_value("pages_per_1000", "pages", (double)space[a][s].pages);
				report_metric_value("locked_per_1000", "KiB", (double)space[a][s].locked_kib);
			}
			report_row_end();
		}
}

static void print_json(int argc, char **argv, const struct worker *w, struct reply space[NALLOC][NSIZES],
		       double samples[NALLOC][NSIZES][NBG][MAX_ROUNDS], double median[NALLOC][NSIZES][NBG],
		       int rounds, int quick)
{
	static const enum allocator peers[] = { OPENSSL, SODIUM };
	char what[96], figure[96];
	size_t s, p;
	int b;

	report_begin("secret", argc, argv);
	report_param_int("rounds", rounds);
	report_param_double("seconds_per_turn", TURN_SECONDS);
	report_param_int("background_live", BACKGROUND);
	report_param_int("space_live", LIVE);
	report_param_int("threads_live_per_thread", SCALE_LIVE);
	report_param_int("scale_size", SCALE_SIZE);
	report_param_bool("quick", quick);
	speed_space_rows(w, space, samples, rounds);
	scale_rows_json(w, rounds);
	for (s = 0; s < NSIZES; s++)
		for (p = 0; p < sizeof(peers) / sizeof(peers[0]); p++)
			for (b = 0; b < NBG && w[peers[p]].available && w[MMKIT_SECRETMEM].available; b++) {
				snprintf(what, sizeof(what), "%s over mmkit/memfd_secret, %zu B %s",
					 names[peers[p]], sizes[s], b ? "with 100 live" : "alone");
				report_ratio(what, ratio(median, peers[p], s, b));
			}
	scale_ratios_json(w);
	if (!w[MMKIT_SECRETMEM].available || !w[OPENSSL].available || !w[SODIUM].available) {
		report_target("32 B alloc+free at least as fast as OpenSSL's secure heap and 100x faster "
			      "than libsodium", "not measured: an allocator is unavailable here", 0);
		report_end();
		return;
	}
	snprintf(figure, sizeof(figure), "%.0f ns vs %.0f ns alone, %.0f ns vs %.0f ns with %d live",
		 median[MMKIT_SECRETMEM][0][0], median[OPENSSL][0][0], median[MMKIT_SECRETMEM][0][1],
		 median[OPENSSL][0][1], BACKGROUND);
	report_target("32 B alloc+free at least as fast as OpenSSL's secure heap", figure,
		      ratio(median, OPENSSL, 0, 0) >= 1 && ratio(median, OPENSSL, 0, 1) >= 1);
	snprintf(figure, sizeof(figure), "%.0fx alone, %.0fx with %d live", ratio(median, SODIUM, 0, 0),
		 ratio(median, SODIUM, 0, 1), BACKGROUND);
	report_target("32 B alloc+free 100x faster than libsodium", figure,
		      ratio(median, SODIUM, 0, 0) >= 100 && ratio(median, SODIUM, 0, 1) >= 100);
	scale_goals_json();
	report_end();
}

#define USAGE \
	"usage: mmkit bench secret [--json] [--quick] [--rounds N]\n" \
	"  32 B and 4 KiB secrets: alloc+free speed (median of N rounds, default 9,\n" \
	"  --quick 1), alone and with " BENCH_STR(BACKGROUND) " others live, and pages per 1000 live secrets;\n" \
	"  1, 2, 4, 8 threads with " BENCH_STR(SCALE_LIVE) " live each; bulk rounds of 10,000 and\n" \
	"  200,000 live, warm and cold:\n" \
	"  mmkit (both backends) vs libsodium vs OpenSSL's secure heap\n" \
	"       mmkit bench secret --direct-map [--secrets N] [--rounds N] [--quick] [--json]\n" \
	"  the kernel's direct map split by N live secrets (--direct-map --help)\n"

int main(int argc, char **argv)
{
	static double samples[NALLOC][NSIZES][NBG][MAX_ROUNDS];
	static double median[NALLOC][NSIZES][NBG];
	struct reply space[NALLOC][NSIZES], rp;
	struct request rq;
	struct worker w[NALLOC];
	int json = 0, quick = 0, rounds, comparable, r, i, k, a, b, ret;
	long long given_rounds = 0;
	const char *why;
	char buf[192];
	const struct bench_option opts[] = {
		{ "--json", BENCH_FLAG, .flag = &json },
		{ "--quick", BENCH_FLAG, .flag = &quick },
		{ "--rounds", BENCH_NUMBER, 1, MAX_ROUNDS, .number = &given_rounds },
		{ NULL },
	};
	size_t s;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--direct-map"))
			return direct_map_main(argc, argv);
	ret = bench_options("secret", USAGE, opts, argc, argv);
	if (ret >= 0)
		return ret;
	rounds = (int)given_rounds;
	if (!rounds)
		rounds = quick ? 1 : 9;
	/* Workers are forked before anything here touches an allocator. */
	for (a = 0; a < NALLOC; a++) {
		w[a].available = 0;
		if (!not_built[a] && worker_start(&w[a], a)) {
			perror("bench-secret: worker");
			return 1;
		}
	}
	progress("space");
	for (a = 0; a < NALLOC; a++)
		for (s = 0; s < NSIZES; s++)
			if (!not_built[a])
				measure_space(a, sizes[s], &space[a][s]);
	for (r = 0; r < rounds; r++) {
		for (s = 0; s < NSIZES; s++)
			for (b = 0; b < NBG; b++)
				for (k = 0; k < NALLOC; k++) {
					progress("round %d of %d: %zu B pairs", r + 1, rounds, sizes[s]);
					/* A different allocator goes first each round. */
					a = (k + r) % NALLOC;
					if (!w[a].available)
						continue;
					rq = (struct request){ PAIRS, sizes[s], backgrounds[b], 1, TURN_SECONDS };
					worker_run(&w[a], &rq, &rp);
					samples[a][s][b][r] = rp.ns_per_pair;
				}
		run_scale_round(w, r);
	}
	/* All pipes first: each worker holds copies of the earlier workers' ends. */
	for (a = 0; a < NALLOC; a++) {
		if (not_built[a])
			continue;
		close(w[a].to);
		close(w[a].from);
	}
	for (a = 0; a < NALLOC; a++) {
		if (!not_built[a])
			waitpid(w[a].pid, NULL, 0);
		for (s = 0; s < NSIZES; s++)
			for (b = 0; b < NBG; b++)
				median[a][s][b] = median_of(samples[a][s][b], rounds);
	}
	scale_medians(rounds);
	progress_done();

	comparable = w[MMKIT_SECRETMEM].available && w[OPENSSL].available && w[SODIUM].available;
	if (json) {
		print_json(argc, argv, w, space, samples, median, rounds, quick);
		return 0;
	}
	printf("secret allocators: one alloc+free pair, median of %d rounds of %.2f s each,\n"
	       "alone and with %d other secrets of the size live; space: growth of resident\n"
	       "pages and of VmLck with 1000 live secrets\n\n", rounds, TURN_SECONDS, BACKGROUND);
	printf("%-20s %6s %10s %12s %12s %11s %11s\n", "ALLOCATOR", "SIZE", "NS/PAIR", "PAIRS/S",
	       "NS/PAIR+100", "PAGES/1000", "LOCKED KiB");
	for (s = 0; s < NSIZES; s++)
		for (a = 0; a < NALLOC; a++) {
			if (not_built[a])
				continue;
			why = worker_why(w, a, buf, sizeof(buf));
			if (!why)
				why = space_why(&space[a][s], a, sizes[s], buf, sizeof(buf));
			if (why) {
				printf("%-20s %6zu  unavailable: %s\n", names[a], sizes[s], why);
				continue;
			}
			printf("%-20s %6zu %10.1f %12.0f %12.1f %11lld %11lld\n", names[a], sizes[s],
			       median[a][s][0], 1e9 / median[a][s][0], median[a][s][1],
			       space[a][s].pages, space[a][s].locked_kib);
		}
	print_scale_table(w);
	for (a = 0; a < NALLOC; a++)
		if (not_built[a])
			printf("%s: %s\n", names[a], not_built[a]);
	if (!comparable) {
		printf("\nno comparison: mmkit/memfd_secret or a peer is unavailable here\n");
		return 0;
	}
	printf("\nspeed of mmkit/memfd_secret against the peers (alone / with %d live):\n", BACKGROUND);
	for (s = 0; s < NSIZES; s++)
		printf("%5zu B: %.2fx / %.2fx OpenSSL's (target >= 1), %.0fx / %.0fx libsodium's (target >= 100)\n",
		       sizes[s], ratio(median, OPENSSL, s, 0), ratio(median, OPENSSL, s, 1),
		       ratio(median, SODIUM, s, 0), ratio(median, SODIUM, s, 1));
	print_scale_ratios();
	return 0;
}
