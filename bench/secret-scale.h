/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The scaling workloads of bench-secret.c, which includes this after its
 * alloc() and release() (kept apart so that neither file grows past what
 * reads in one sitting):
 *
 *   threads  T threads at once, each with SCALE_LIVE secrets of 32 B live,
 *            timing alloc+free pairs; the figure is wall time x T / pairs,
 *            the time a thread spends per pair: with threads running side
 *            by side on cores of their own it stays the single thread's.
 *            A control row runs the same threads with no allocator (a few
 *            arithmetic steps and a 32-byte write per "pair", nothing
 *            shared): its own 2-thread over 1-thread ratio is what the
 *            machine gave during the run (other processes take cores).
 *            The wall figure is the product of two that are also given:
 *            the threads' CPU time per pair (what the allocator costs: a
 *            contended cache line shows here) and T over the threads
 *            running at once on average (their CPU time over wall time:
 *            below T when the machine lends fewer cores, or when threads
 *            sleep on a lock).
 *   bulk     N secrets of 32 B allocated, a tenth of them (every tenth)
 *            freed and allocated again ten times, then all freed: 4N
 *            operations, the figure time / 4N.  Cold: the first round of
 *            a fresh process, the allocator's set-up included; warm: the
 *            second round of that process.  OpenSSL's arena is sized for
 *            the biggest round there, 1 MiB for the other rows (its buddy
 *            allocator is slower the bigger its arena).  The page faults
 *            of the cold round are counted (all of the process's): with
 *            memfd_secret each secret page faulted is taken out of the
 *            kernel's direct map and every CPU's TLB flushed; mmkit's two
 *            backends run the same code with the same faults, so their
 *            difference is that work, and one such fault is also timed on
 *            a bare memfd_secret mapping.
 */
#ifndef MMKIT_BENCH_SECRET_SCALE_H
#define MMKIT_BENCH_SECRET_SCALE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define SCALE_SIZE	32
#define SCALE_LIVE	100
static const int thread_counts[] = { 1, 2, 4, 8 };
#define NTHREADS	(int)(sizeof(thread_counts) / sizeof(thread_counts[0]))
#define MAX_THREADS	8
static const int bulk_counts[] = { 10000, 200000 };
#define NBULK		(int)(sizeof(bulk_counts) / sizeof(bulk_counts[0]))
#define BULK_MAX	200000

struct thread_run {
	pthread_t thread;
	enum allocator a;
	int control;		/* no allocator: the machine's own scaling */
	pthread_barrier_t *start;
	int *stop;
	long long pairs;
	double cpu;		/* seconds of this thread's CPU time while timed */
	int failed;
};

/* What time_threads() measures; wall = cpu x threads / running. */
struct thread_figures {
	double wall;		/* ns per pair per thread: wall time x threads / pairs */
	double cpu;		/* ns of thread CPU time per pair */
	double running;		/* threads running at once, on average */
};

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *thread_pairs(void *arg)
{
	struct thread_run *t = arg;
	void *held[SCALE_LIVE] = { NULL };
	char control_buf[SCALE_SIZE];
	int i, j;

	for (i = 0; i < SCALE_LIVE && !t->control; i++) {
		held[i] = alloc(t->a, SCALE_SIZE);
		t->failed |= !held[i];
	}
	pthread_barrier_wait(t->start);
	t->cpu = -thread_cpu_seconds();
	while (!t->failed && !__atomic_load_n(t->stop, __ATOMIC_RELAXED)) {
		for (j = 0; j < 64 && t->control; j++) {
			uint64_t x = (uint64_t)j;
			int k;

			for (k = 0; k < 16; k++)
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			memset(control_buf, (int)x, sizeof(control_buf));
			__asm__ volatile("" : : "r"(control_buf) : "memory");
		}
		for (; j < 64; j++) {
			volatile char *p = alloc(t->a, SCALE_SIZE);

			if (!p) {
				t->failed = 1;
				break;
			}
			p[0] = 1;
			release(t->a, (void *)p);
		}
		t->pairs += j;
	}
	t->cpu += thread_cpu_seconds();
	for (i = 0; i < SCALE_LIVE; i++)
		if (held[i])
			release(t->a, held[i]);
	return NULL;
}

/* @threads threads timing pairs for about @seconds into @f: 0, or -1. */
static int time_threads(enum allocator a, int control, int threads, double seconds,
			struct thread_figures *f)
{
	struct thread_run t[MAX_THREADS];
	struct timespec nap = { 0, (long)(seconds * 1e9) };
	pthread_barrier_t start;
	double t0, t1, cpu = 0;
	long long pairs = 0;
	int stop = 0, failed = 0, i;

	pthread_barrier_init(&start, NULL, (unsigned int)threads + 1);
	for (i = 0; i < threads; i++) {
		t[i] = (struct thread_run){ .a = a, .control = control, .start = &start, .stop = &stop };
		if (pthread_create(&t[i].thread, NULL, thread_pairs, &t[i]))
			return -1;
	}
	pthread_barrier_wait(&start);
	t0 = now_seconds();
	nanosleep(&nap, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < threads; i++) {
		pthread_join(t[i].thread, NULL);
		pairs += t[i].pairs;
		cpu += t[i].cpu;
		failed |= t[i].failed;
	}
	t1 = now_seconds();
	pthread_barrier_destroy(&start);
	if (failed || !pairs)
		return -1;
	f->wall = (t1 - t0) * 1e9 * threads / (double)pairs;
	f->cpu = cpu * 1e9 / (double)pairs;
	f->running = cpu / (t1 - t0);
	return 0;
}

/* One bulk round of @n secrets: ns per operation, or -1. */
static double time_bulk(enum allocator a, int n, double t0)
{
	static void *p[BULK_MAX];
	int round, i;

	for (i = 0; i < n; i++)
		if (!(p[i] = alloc(a, SCALE_SIZE)))
			return -1;
	for (round = 0; round < 10; round++) {
		for (i = round; i < n; i += 10)
			release(a, p[i]);
		for (i = round; i < n; i += 10)
			if (!(p[i] = alloc(a, SCALE_SIZE)))
				return -1;
	}
	for (i = 0; i < n; i++)
		release(a, p[i]);
	return (now_seconds() - t0) * 1e9 / (4.0 * n);
}

/* The arena OpenSSL's secure heap needs for the largest bulk round. */
#define SCALE_ARENA	((size_t)8 << 20)

struct bulk_args {
	enum allocator a;
	int n;
};

/* The first bulk round, set-up included, then a second; in a fresh process. */
static void bulk_in_child(const void *arg, void *out)
{
	const struct bulk_args *ba = arg;
	struct reply *rp = out;
	struct rusage ru0, ru1;
	double t0 = now_seconds();

	getrusage(RUSAGE_SELF, &ru0);
	rp->err = setup(ba->a, SCALE_ARENA);
	if (rp->err)
		return;
	rp->ns_per_pair = time_bulk(ba->a, ba->n, t0);
	getrusage(RUSAGE_SELF, &ru1);
	rp->pages = ru1.ru_minflt - ru0.ru_minflt;
	rp->ns_warm = rp->ns_per_pair < 0 ? -1 : time_bulk(ba->a, ba->n, now_seconds());
	if (rp->ns_warm < 0)
		rp->err = alloc_error ? alloc_error : -ENOMEM;
}

static int measure_bulk(enum allocator a, int n, double *cold, double *warm, double *faults)
{
	const struct bulk_args ba = { a, n };
	struct reply rp;
	int err = in_fresh_process(bulk_in_child, &ba, &rp);

	*cold = rp.ns_per_pair;
	*warm = rp.ns_warm;
	*faults = (double)rp.pages;
	return err;
}

#define FLOOR_PAGES	256

/* ns to fault in one page of a bare memfd_secret mapping, or -1 without it. */
static double time_secret_fault(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = FLOOR_PAGES * page, off;
	int fd = (int)syscall(SYS_memfd_secret, 0);
	double t0, t1;
	char *p;

	if (fd < 0)
		return -1;
	p = ftruncate(fd, (off_t)len) ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	t0 = now_seconds();
	for (off = 0; off < len; off += page)
		p[off] = 1;
	t1 = now_seconds();
	munmap(p, len);
	return (t1 - t0) * 1e9 / FLOOR_PAGES;
}

static double thread_samples[NALLOC][NTHREADS][MAX_ROUNDS], thread_median[NALLOC][NTHREADS];
static double thread_cpu_samples[NALLOC][NTHREADS][MAX_ROUNDS], thread_cpu_median[NALLOC][NTHREADS];
static double running_samples[NALLOC][NTHREADS][MAX_ROUNDS], running_median[NALLOC][NTHREADS];
static double warm_samples[NALLOC][NBULK][MAX_ROUNDS], warm_median[NALLOC][NBULK];
static double cold_samples[NALLOC][NBULK][MAX_ROUNDS], cold_median[NALLOC][NBULK];
static int bulk_err[NALLOC][NBULK];
static double fault_samples[NALLOC][NBULK][MAX_ROUNDS], faults_median[NALLOC][NBULK];
static double floor_samples[MAX_ROUNDS], fault_ns;
static double control_samples[NTHREADS][MAX_ROUNDS], control_median[NTHREADS];
static double control_cpu_samples[NTHREADS][MAX_ROUNDS], control_running_samples[NTHREADS][MAX_ROUNDS];

/*
 * Why a bulk figure is not taken: libsodium maps pages for each secret
 * (about 20 us an operation: a 200,000 round would take 16 s).
 */
static const char *bulk_skipped(enum allocator a, int b)
{
	if (a == SODIUM && bulk_counts[b] > 10000)
		return "not run: libsodium maps pages per secret, a round would take 16 s";
	return NULL;
}

/* One round of the thread and bulk rows, each allocator in turn. */
static void run_scale_round(struct worker *w, int r)
{
	struct thread_figures f = { -1, -1, -1 };
	struct request rq;
	struct reply rp;
	int k, a, t, b;

	floor_samples[r] = time_secret_fault();
	for (t = 0; t < NTHREADS; t++) {
		progress("round %d: %d thread%s at once", r + 1, thread_counts[t], t ? "s" : "");
		time_threads(0, 1, thread_counts[t], TURN_SECONDS, &f);
		control_samples[t][r] = f.wall;
		control_cpu_samples[t][r] = f.cpu;
		control_running_samples[t][r] = f.running;
		for (k = 0; k < NALLOC; k++) {
			a = (k + r) % NALLOC;
			if (!w[a].available)
				continue;
			rq = (struct request){ THREADS, SCALE_SIZE, SCALE_LIVE, thread_counts[t], TURN_SECONDS };
			worker_run(&w[a], &rq, &rp);
			thread_samples[a][t][r] = rp.ns_per_pair;
			thread_cpu_samples[a][t][r] = rp.ns_cpu;
			running_samples[a][t][r] = rp.running;
		}
	}
	for (b = 0; b < NBULK; b++)
		for (k = 0; k < NALLOC; k++) {
			a = (k + r) % NALLOC;
			progress("round %d: bulk %d, %s", r + 1, bulk_counts[b], names[a]);
			if (!not_built[a] && !bulk_skipped(a, b) && !bulk_err[a][b])
				bulk_err[a][b] = measure_bulk(a, bulk_counts[b], &cold_samples[a][b][r],
							      &warm_samples[a][b][r], &fault_samples[a][b][r]);
		}
}

static void scale_medians(int rounds)
{
	int a, t, b;

	fault_ns = median_of(floor_samples, rounds);
	for (t = 0; t < NTHREADS; t++)
		control_median[t] = median_of(control_samples[t], rounds);
	for (a = 0; a < NALLOC; a++) {
		for (t = 0; t < NTHREADS; t++) {
			thread_median[a][t] = median_of(thread_samples[a][t], rounds);
			thread_cpu_median[a][t] = median_of(thread_cpu_samples[a][t], rounds);
			running_median[a][t] = median_of(running_samples[a][t], rounds);
		}
		for (b = 0; b < NBULK; b++) {
			warm_median[a][b] = median_of(warm_samples[a][b], rounds);
			cold_median[a][b] = median_of(cold_samples[a][b], rounds);
			faults_median[a][b] = median_of(fault_samples[a][b], rounds);
		}
	}
}

/* The goals, from the medians: met or not, and the figures. */
struct goal {
	const char *target;
	char figure[256];
	int met;
};

#define NGOALS	4

static void scale_goals(struct goal g[NGOALS])
{
	double mm2 = thread_median[MMKIT_SECRETMEM][1], mm1 = thread_median[MMKIT_SECRETMEM][0];
	int big = NBULK - 1;
	double warm = warm_median[MMKIT_SECRETMEM][big] / warm_median[OPENSSL][big];
	double cold = cold_median[MMKIT_SECRETMEM][big] / cold_median[OPENSSL][big];
	double single = thread_median[OPENSSL][0] / mm1;

	g[0] = (struct goal){ "2 threads: ns per pair at most 1.3x one thread's", "", mm2 <= 1.3 * mm1 };
	snprintf(g[0].figure, sizeof(g[0].figure), "%.1f ns vs %.1f ns: %.2fx (control, no allocator: %.2fx); "
		 "CPU time per pair %.1f vs %.1f ns: %.2fx, with %.2f of the 2 threads running at once",
		 mm2, mm1, mm2 / mm1, control_median[1] / control_median[0],
		 thread_cpu_median[MMKIT_SECRETMEM][1], thread_cpu_median[MMKIT_SECRETMEM][0],
		 thread_cpu_median[MMKIT_SECRETMEM][1] / thread_cpu_median[MMKIT_SECRETMEM][0],
		 running_median[MMKIT_SECRETMEM][1]);
	g[1] = (struct goal){ "bulk 200000 live, warm: at most 1.0x OpenSSL's time per op", "", warm <= 1.0 };
	snprintf(g[1].figure, sizeof(g[1].figure), "%.1f ns vs %.1f ns: %.2fx", warm_median[MMKIT_SECRETMEM][big],
		 warm_median[OPENSSL][big], warm);
	g[2] = (struct goal){ "bulk 200000 live, cold: at most 1.0x OpenSSL's time per op", "", cold <= 1.0 };
	snprintf(g[2].figure, sizeof(g[2].figure), "%.1f ns vs %.1f ns: %.2fx", cold_median[MMKIT_SECRETMEM][big],
		 cold_median[OPENSSL][big], cold);
	g[3] = (struct goal){ "one thread, 100 live: at least 2x faster than OpenSSL", "", single >= 2.0 };
	snprintf(g[3].figure, sizeof(g[3].figure), "%.1f ns vs %.1f ns: %.2fx", mm1,
		 thread_median[OPENSSL][0], single);
}

/* Why a bulk row has no figures, NULL when it has; @buf holds a failure's. */
static const char *bulk_why(enum allocator a, int b, char *buf, size_t len)
{
	char what[64];

	if (not_built[a])
		return not_built[a];
	if (bulk_skipped(a, b))
		return bulk_skipped(a, b);
	if (!bulk_err[a][b])
		return NULL;
	snprintf(what, sizeof(what), "keeping %d secrets live", bulk_counts[b]);
	return failure_why(what, bulk_err[a][b], buf, len);
}

static void print_scale_table(const struct worker *w)
{
	const char *why;
	char buf[192];
	int a, t, b;

	printf("\nthreads, each with %d secrets of %d B live: ns per alloc+free pair per thread\n"
	       "(wall time x threads / pairs), median\n\n%-20s", SCALE_LIVE, SCALE_SIZE, "ALLOCATOR");
	for (t = 0; t < NTHREADS; t++)
		printf(" %7d T", thread_counts[t]);
	printf("\n");
	for (a = 0; a < NALLOC; a++) {
		if (not_built[a])
			continue;
		printf("%-20s", names[a]);
		for (t = 0; t < NTHREADS; t++)
			if (w[a].available)
				printf(" %9.1f", thread_median[a][t]);
			else
				printf(" %9s", "-");
		printf("\n");
	}
	printf("%-20s", "control (none)");
	for (t = 0; t < NTHREADS; t++)
		printf(" %9.1f", control_median[t]);
	printf("\n\nthe same: ns of thread CPU time per pair / threads running at once (CPU time\n"
	       "over wall time); the wall figure above is CPU time x threads / running\n\n%-20s",
	       "ALLOCATOR");
	for (t = 0; t < NTHREADS; t++)
		printf(" %12d T", thread_counts[t]);
	printf("\n");
	for (a = 0; a < NALLOC; a++) {
		if (not_built[a] || !w[a].available)
			continue;
		printf("%-20s", names[a]);
		for (t = 0; t < NTHREADS; t++)
			printf(" %8.1f/%4.2f", thread_cpu_median[a][t], running_median[a][t]);
		printf("\n");
	}
	printf("\nbulk: N secrets of %d B, a tenth freed and allocated again 10 times, all freed;\n"
	       "ns per operation, median; cold = first round of a fresh process, set-up included\n\n"
	       "%-20s %8s %12s %12s %12s\n", SCALE_SIZE, "ALLOCATOR", "N", "WARM NS/OP", "COLD NS/OP",
	       "COLD FAULTS");
	for (b = 0; b < NBULK; b++)
		for (a = 0; a < NALLOC; a++) {
			if (not_built[a])
				continue;
			printf("%-20s %8d", names[a], bulk_counts[b]);
			why = bulk_why(a, b, buf, sizeof(buf));
			if (why)
				printf(" %12s %12s  %s\n", "-", "-", why);
			else
				printf(" %12.1f %12.1f %12.0f\n", warm_median[a][b], cold_median[a][b],
				       faults_median[a][b]);
		}
}

static void print_scale_ratios(void)
{
	struct goal g[NGOALS];
	int t, b, i;

	printf("\nOpenSSL's time over mmkit/memfd_secret's (above 1: mmkit is faster):\n");
	for (t = 0; t < NTHREADS; t++)
		printf("  %d threads: %.2fx;  mmkit's own %d-thread figure is %.2fx its 1-thread one"
		       " (control: %.2fx)\n",
		       thread_counts[t], thread_median[OPENSSL][t] / thread_median[MMKIT_SECRETMEM][t],
		       thread_counts[t], thread_median[MMKIT_SECRETMEM][t] / thread_median[MMKIT_SECRETMEM][0],
		       control_median[t] / control_median[0]);
	for (b = 0; b < NBULK; b++)
		printf("  bulk %d: warm %.2fx, cold %.2fx\n", bulk_counts[b],
		       warm_median[OPENSSL][b] / warm_median[MMKIT_SECRETMEM][b],
		       cold_median[OPENSSL][b] / cold_median[MMKIT_SECRETMEM][b]);
	/* Same code, same faults: what the two backends differ by is the kernel's work. */
	for (b = 0; b < NBULK; b++)
		printf("  bulk %d cold, against mmkit/mlock: %.2fx; mmkit/memfd_secret - mmkit/mlock =\n"
		       "    %.1f ns per op, the kernel's for memfd_secret pages (%.0f faults in all)\n",
		       bulk_counts[b], cold_median[OPENSSL][b] / cold_median[MMKIT_MLOCK][b],
		       cold_median[MMKIT_SECRETMEM][b] - cold_median[MMKIT_MLOCK][b],
		       faults_median[MMKIT_SECRETMEM][b]);
	if (fault_ns > 0)
		printf("  one memfd_secret page fault, timed on a bare mapping: %.1f us\n", fault_ns / 1000);
	scale_goals(g);
	printf("\ngoals:\n");
	for (i = 0; i < NGOALS; i++)
		printf("  %-4s %s: %s\n", g[i].met ? "met" : "MISS", g[i].target, g[i].figure);
}

/* The thread sweep, the bulk tables and the bare fault, as report rows. */
static void scale_rows_json(const struct worker *w, int rounds)
{
	char table[32], label[32], buf[192];
	const char *why;
	int a, t, b;

	for (a = 0; a < NALLOC; a++) {
		why = worker_why(w, a, buf, sizeof(buf));
		if (why) {
			report_row_begin("threads", names[a], names[a]);
			report_row_unavailable(why);
			report_row_end();
			continue;
		}
		for (t = 0; t < NTHREADS; t++) {
			snprintf(label, sizeof(label), "%d thread%s", thread_counts[t], t ? "s" : "");
			report_row_begin("threads", names[a], label);
			report_row_x(thread_counts[t], "threads");
			report_metric("pair_per_thread", "ns", thread_samples[a][t], rounds);
			report_metric("cpu_per_pair", "ns", thread_cpu_samples[a][t], rounds);
			report_metric("running", "threads", running_samples[a][t], rounds);
			report_row_end();
		}
	}
	for (t = 0; t < NTHREADS; t++) {
		snprintf(label, sizeof(label), "%d thread%s", thread_counts[t], t ? "s" : "");
		report_row_begin("threads", "control (no allocator)", label);
		report_row_x(thread_counts[t], "threads");
		report_metric("pair_per_thread", "ns", control_samples[t], rounds);
		report_metric("cpu_per_pair", "ns", control_cpu_samples[t], rounds);
		report_metric("running", "threads", control_running_samples[t], rounds);
		report_row_end();
	}
	for (b = 0; b < NBULK; b++)
		for (a = 0; a < NALLOC; a++) {
			snprintf(table, sizeof(table), "bulk_%d", bulk_counts[b]);
			report_row_begin(table, NULL, names[a]);
			why = bulk_why(a, b, buf, sizeof(buf));
			if (why) {
				report_row_unavailable(why);
			} else {
				report_metric("warm", "ns", warm_samples[a][b], rounds);
				report_metric("cold", "ns", cold_samples[a][b], rounds);
				report_metric("cold_faults", "faults", fault_samples[a][b], rounds);
			}
			report_row_end();
		}
	report_row_begin("memfd_secret_fault", NULL, "one page, bare mapping");
	if (fault_ns > 0)
		report_metric("fault", "ns", floor_samples, rounds);
	else
		report_row_unavailable("no memfd_secret here");
	report_row_end();
}

static void scale_ratios_json(const struct worker *w)
{
	int mm = w[MMKIT_SECRETMEM].available, t, b;
	char what[96], buf[192];

	for (t = 0; t < NTHREADS; t++) {
		if (mm && w[OPENSSL].available) {
			snprintf(what, sizeof(what), "openssl over mmkit/memfd_secret, %d threads",
				 thread_counts[t]);
			report_ratio(what, thread_median[OPENSSL][t] / thread_median[MMKIT_SECRETMEM][t]);
		}
		if (mm && t) {
			snprintf(what, sizeof(what), "mmkit/memfd_secret, %d threads over 1", thread_counts[t]);
			report_ratio(what, thread_median[MMKIT_SECRETMEM][t] / thread_median[MMKIT_SECRETMEM][0]);
		}
		if (t) {
			snprintf(what, sizeof(what), "control (no allocator), %d threads over 1", thread_counts[t]);
			report_ratio(what, control_median[t] / control_median[0]);
		}
	}
	for (b = 0; b < NBULK; b++) {
		if (bulk_why(OPENSSL, b, buf, sizeof(buf)))
			continue;
		if (!bulk_why(MMKIT_SECRETMEM, b, buf, sizeof(buf))) {
			snprintf(what, sizeof(what), "openssl over mmkit/memfd_secret, bulk %d warm", bulk_counts[b]);
			report_ratio(what, warm_median[OPENSSL][b] / warm_median[MMKIT_SECRETMEM][b]);
			snprintf(what, sizeof(what), "openssl over mmkit/memfd_secret, bulk %d cold", bulk_counts[b]);
			report_ratio(what, cold_median[OPENSSL][b] / cold_median[MMKIT_SECRETMEM][b]);
		}
		if (!bulk_why(MMKIT_MLOCK, b, buf, sizeof(buf))) {
			snprintf(what, sizeof(what), "openssl over mmkit/mlock, bulk %d cold", bulk_counts[b]);
			report_ratio(what, cold_median[OPENSSL][b] / cold_median[MMKIT_MLOCK][b]);
		}
	}
}

/* The goals, as report targets. */
static void scale_goals_json(void)
{
	struct goal g[NGOALS];
	int i;

	scale_goals(g);
	for (i = 0; i < NGOALS; i++)
		report_target(g[i].target, g[i].figure, g[i].met);
}

#endif /* MMKIT_BENCH_SECRET_SCALE_H */
