// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit bench lock: the experiment of the MLOCK_ONFAULT kernel patch.  A
 * file is mapped shared and read-only, and pages of it are read at random
 * (the same sequence, from --seed, for every strategy); each strategy keeps
 * the pages it reads locked in its own way:
 *
 *   mlock all        mlock() the whole mapping first (populates it all)
 *   mlock per page   mlock() each page just before reading it
 *   PROT_NONE/N      map PROT_NONE; a SIGSEGV handler makes the aligned
 *                    batch of N pages around the fault readable and mlocks
 *                    it (N = 1, 8, 16)
 *   MLOCK_ONFAULT    mmkit_lock(MMKIT_LOCK_ONFAULT): mlock2(MLOCK_ONFAULT)
 *
 * Setup is mmap plus the strategy's own preparation; processing is the
 * reads.  Each strategy runs in a forked child, so that no lock and no
 * mapping carries over; Rss and Locked of the mapping (smaps) are read in
 * the child after the reads.  Every read page holds its own index, and the
 * sum of what was read must match the sequence, so a strategy that read
 * wrong memory is an error, not a figure.  The page cache is made warm once
 * (the file is read), or with --cold dropped (fsync, POSIX_FADV_DONTNEED)
 * before every strategy.  The patch measured a 5 GB file with 15 million
 * accesses; the sizes here differ, so compare the ratios to MLOCK_ONFAULT.
 * (The default, 1 GiB and 3 million, reads each page as often as the patch
 * did.)  MLOCK_ONFAULT on a warm file locks more than the pages read: each
 * read fault maps the cached pages around it too (fault-around), locked.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "mmkit.h"
#include "options.h"
#include "report.h"
#include "lock-limits.h"

#define USAGE \
	"usage: mmkit bench lock [--json] [--size SIZE] [--accesses N] [--seed N] [--rounds N]\n" \
	"                        [--cold] [--quick]\n" \
	"  Reads N random pages (default 3,000,000) of a SIZE file (default 1G, at most\n" \
	"  1T; K, M, G, T: powers of 1024) in a temporary directory of $TMPDIR or\n" \
	"  /var/tmp, keeping the\n" \
	"  pages read locked with six strategies: mlock all first, mlock per page,\n" \
	"  PROT_NONE + SIGSEGV batches of 1, 8, 16 pages, mlock2(MLOCK_ONFAULT); median\n" \
	"  setup and processing ms over --rounds (default 3, at most 51), Rss and Locked\n" \
	"  of the mapping, the patch's figures and the ratios to MLOCK_ONFAULT beside.\n" \
	"  --seed N     the access sequence (default 1), the same for every strategy\n" \
	"  --cold       drop the file's page cache before every strategy (default: warm)\n" \
	"  --quick      a tiny run: 4M, 500 accesses, 1 round (fits the usual 8 MiB limit)\n" \
	"  Needs RLIMIT_MEMLOCK of SIZE and vm.max_map_count of half a VMA per page:\n" \
	"  root raises them for the run, anyone else is told what to set.\n"

#define MAX_ROUNDS	51
#define MAX_ACCESSES	1000000000ULL

enum strategy { MLOCK_ALL, MLOCK_PER_PAGE, PROT_NONE_1, PROT_NONE_8, PROT_NONE_16, ONFAULT, NSTRAT };

/* The patch's figures (5 GB file, 15 million accesses); setup < 0: not given. */
static const struct {
	const char *label;
	int batch;		/* PROT_NONE strategies: pages per fault */
	double seed_setup_ms, seed_processing_ms;
} strategies[NSTRAT] = {
	[MLOCK_ALL] = { "mlock all", 0, 8228, 8274 },
	[MLOCK_PER_PAGE] = { "mlock per page", 0, -1, 90993 },
	[PROT_NONE_1] = { "PROT_NONE batch 1", 1, -1, 69488 },
	[PROT_NONE_8] = { "PROT_NONE batch 8", 8, -1, 38204 },
	[PROT_NONE_16] = { "PROT_NONE batch 16", 16, -1, 29671 },
	[ONFAULT] = { "MLOCK_ONFAULT", 0, 0.189, 17904 },
};

struct config {
	unsigned long long size, accesses, seed;
	int rounds, cold, json, quick;
};

/* What a child sends back. */
struct result {
	int ok;
	char reason[160];
	double setup_ms, processing_ms;
	unsigned long long rss_kib, locked_kib, sum;
};

static size_t page;
static int file_fd;

/* splitmix64: a sequence that depends on the seed alone, the same everywhere. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t random_page(uint64_t *state, size_t npages)
{
	return (size_t)(((unsigned __int128)next_random(state) * npages) >> 64);
}

/* The SIGSEGV strategies' state: the handler has nothing else to go on. */
static char *map_base;
static size_t map_bytes, batch_bytes;
static sigjmp_buf fault_failed;
static volatile sig_atomic_t fault_errno;
static const char *volatile fault_call;

static void on_segv(int sig, siginfo_t *si, void *ucontext)
{
	char *addr = si->si_addr, *start;
	size_t left;
	int saved = errno;

	(void)ucontext;
	if (addr < map_base || addr >= map_base + map_bytes) {
		/* Not ours: the default action on the repeated fault. */
		signal(sig, SIG_DFL);
		return;
	}
	start = map_base + (size_t)(addr - map_base) / batch_bytes * batch_bytes;
	left = (size_t)(map_base + map_bytes - start);
	if (left > batch_bytes)
		left = batch_bytes;
	fault_call = "mprotect";
	if (!mprotect(start, left, PROT_READ)) {
		fault_call = "mlock";
		if (!mlock(start, left)) {
			errno = saved;
			return;
		}
	}
	/* Returning would fault again for ever. */
	fault_errno = errno;
	siglongjmp(fault_failed, 1);
}

static void fail_reason(struct result *res, const char *call, int err)
{
	/* Locking single pages splits the mapping into up to one VMA per page. */
	if (err == ENOMEM)
		snprintf(res->reason, sizeof(res->reason),
			 "%s: %s (vm.max_map_count is %ld: raise it or use a smaller --size)", call,
			 strerror(err), max_map_count());
	else
		snprintf(res->reason, sizeof(res->reason), "%s: %s", call, strerror(err));
}

/* Rss and Locked, in KiB, of the VMAs of [base, base + len) (smaps). */
static int mapping_footprint(const char *base, size_t len, struct result *res)
{
	uintptr_t start, end, lo = (uintptr_t)base, hi = lo + len;
	unsigned long long kib;
	int inside = 0;
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -errno;
	res->rss_kib = res->locked_kib = 0;
	while (getline(&line, &cap, f) > 0) {
		/* No "Key:" line starts with hex digits and a dash: a VMA's header. */
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2)
			inside = start < hi && end > lo;
		else if (inside && sscanf(line, "Rss: %llu kB", &kib) == 1)
			res->rss_kib += kib;
		else if (inside && sscanf(line, "Locked: %llu kB", &kib) == 1)
			res->locked_kib += kib;
	}
	free(line);
	fclose(f);
	return 0;
}

/*
 * The timed reads; mlock per page locks each page first.  -errno if an
 * mlock fails.  A SIGSEGV handler that fails jumps out of here.
 */
static int read_pages(char *p, enum strategy s, const struct config *c, unsigned long long *sum)
{
	size_t npages = c->size / page;
	uint64_t state = c->seed;
	unsigned long long i;

	for (i = 0; i < c->accesses; i++) {
		char *at = p + random_page(&state, npages) * page;

		if (s == MLOCK_PER_PAGE && mlock(at, page))
			return -errno;
		*sum += *(volatile uint64_t *)at;
	}
	return 0;
}

/* One strategy, in this (fresh) process. */
static void run_strategy(enum strategy s, const struct config *c, struct result *res)
{
	struct sigaction sa;
	double t0, t1, t2;
	char *p;
	int err;

	t0 = 1e3 * now_seconds();
	p = mmap(NULL, c->size, strategies[s].batch ? PROT_NONE : PROT_READ, MAP_SHARED, file_fd, 0);
	if (p == MAP_FAILED) {
		fail_reason(res, "mmap", errno);
		return;
	}
	err = 0;
	switch (s) {
	case MLOCK_ALL:
		if (mlock(p, c->size))
			err = errno;
		break;
	case ONFAULT:
		err = -mmkit_lock(p, c->size, MMKIT_LOCK_ONFAULT);
		break;
	case PROT_NONE_1:
	case PROT_NONE_8:
	case PROT_NONE_16:
		map_base = p;
		map_bytes = c->size;
		batch_bytes = strategies[s].batch * page;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_segv;
		sa.sa_flags = SA_SIGINFO;
		if (sigaction(SIGSEGV, &sa, NULL))
			err = errno;
		break;
	default:
		break;
	}
	t1 = 1e3 * now_seconds();
	if (err) {
		fail_reason(res, s == ONFAULT ? "mmkit_lock" : s == MLOCK_ALL ? "mlock" : "sigaction", err);
		return;
	}
	if (sigsetjmp(fault_failed, 1)) {
		fail_reason(res, fault_call, fault_errno);
		return;
	}
	err = read_pages(p, s, c, &res->sum);
	t2 = 1e3 * now_seconds();
	if (err) {
		fail_reason(res, "mlock", -err);
		return;
	}
	res->setup_ms = t1 - t0;
	res->processing_ms = t2 - t1;
	err = mapping_footprint(p, c->size, res);
	if (err) {
		fail_reason(res, "/proc/self/smaps", -err);
		return;
	}
	res->ok = 1;
}

struct strategy_args {
	enum strategy s;
	const struct config *c;
};

static void strategy_in_child(const void *arg, void *out)
{
	const struct strategy_args *a = arg;

	run_strategy(a->s, a->c, out);
}

/* Runs strategy @s in a forked child and waits for its result. */
static void run_in_child(enum strategy s, const struct config *c, struct result *res)
{
	const struct strategy_args a = { s, c };
	int status, err;

	memset(res, 0, sizeof(*res));
	err = in_child(strategy_in_child, &a, res, sizeof(*res), &status);
	if (err && err != -EPIPE) {
		fail_reason(res, "pipe or fork", -err);
		return;
	}
	if (err)
		res->ok = 0;
	if (WIFSIGNALED(status))
		snprintf(res->reason, sizeof(res->reason), "the child died of signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (!res->ok && !res->reason[0])
		snprintf(res->reason, sizeof(res->reason), "the child sent no result");
}

/* What the access sequence gives, worked out without running it. */
struct sequence {
	unsigned long long touched;	/* pages read at least once */
	unsigned long long sum;		/* of the page indices read: what the reads must sum to */
	unsigned long long peak_vmas;	/* most runs of locked and unlocked pages at once */
};

static int page_seen(const unsigned char *seen, size_t k)
{
	return seen[k / 8] >> (k % 8) & 1;
}

/*
 * Locking page k, unlocked so far, joins it to each neighbour that is
 * locked (one boundary fewer) and parts it from each that is not (one
 * more); the mapping has one VMA more than it has boundaries.
 */
static int sequence_facts(const struct config *c, struct sequence *q)
{
	size_t npages = c->size / page, k;
	uint64_t state = c->seed;
	unsigned long long i, boundaries = 0;
	unsigned char *seen = calloc(npages / 8 + 1, 1);

	if (!seen)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	for (i = 0; i < c->accesses; i++) {
		k = random_page(&state, npages);
		q->sum += k;
		if (page_seen(seen, k))
			continue;
		q->touched++;
		if (k > 0)
			boundaries = page_seen(seen, k - 1) ? boundaries - 1 : boundaries + 1;
		if (k + 1 < npages)
			boundaries = page_seen(seen, k + 1) ? boundaries - 1 : boundaries + 1;
		seen[k / 8] |= 1u << (k % 8);
		if (boundaries + 1 > q->peak_vmas)
			q->peak_vmas = boundaries + 1;
	}
	free(seen);
	return 0;
}

/*
 * The data file, already unlinked (with its directory): nothing is left
 * behind however the benchmark ends.  Each page holds its index.
 */
static int create_file(unsigned long long size, char *dir, size_t dirlen)
{
	const char *tmp = getenv("TMPDIR");
	size_t chunk = 1 << 20, off, k;
	unsigned long long done;
	char path[PATH_MAX + 8];
	uint64_t *buf;
	int fd, err = 0;

	if (snprintf(dir, dirlen, "%s/mmkit-bench-lock.XXXXXX", tmp && *tmp ? tmp : "/var/tmp") >=
	    (int)dirlen)
		return -ENAMETOOLONG;
	if (!mkdtemp(dir))
		return -errno;
	snprintf(path, sizeof(path), "%s/data", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		err = -errno;
	unlink(path);
	rmdir(dir);
	if (err)
		return err;
	buf = calloc(1, chunk);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (done = 0; !err && done < size; done += k) {
		k = size - done < chunk ? size - done : chunk;
		for (off = 0; off < k; off += page)
			buf[off / sizeof(*buf)] = (done + off) / page;
		if (write(fd, buf, k) != (ssize_t)k)
			err = errno ? -errno : -ENOSPC;
	}
	free(buf);
	/* Writeback during the measurements would time the disk. */
	if (!err && fsync(fd))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The page cache of the file: read once (warm) or dropped (cold). */
static int prepare_cache(const struct config *c)
{
	static char buf[1 << 20];
	unsigned long long off;
	ssize_t n;

	if (c->cold)
		return -posix_fadvise(file_fd, 0, 0, POSIX_FADV_DONTNEED);
	for (off = 0; off < c->size; off += (unsigned long long)n) {
		n = pread(file_fd, buf, sizeof(buf), (off_t)off);
		if (n <= 0)
			return n ? -errno : -EIO;
	}
	return 0;
}

/* 0, or the exit status main() returns (0 after --help, 2 after a bad option). */
static int parse_args(int argc, char **argv, struct config *c)
{
	long long accesses = 0, seed = 1, rounds = 0;
	unsigned long long size = 0;
	int quick = 0, ret;
	const struct bench_option opts[] = {
		{ "--json", BENCH_FLAG, .flag = &c->json },
		{ "--cold", BENCH_FLAG, .flag = &c->cold },
		{ "--quick", BENCH_FLAG, .flag = &quick },
		{ "--size", BENCH_SIZE, (long long)page, 1LL << 40, .size = &size },
		{ "--accesses", BENCH_NUMBER, 1, MAX_ACCESSES, .number = &accesses },
		{ "--seed", BENCH_NUMBER, 0, LLONG_MAX, .number = &seed },
		{ "--rounds", BENCH_NUMBER, 1, MAX_ROUNDS, .number = &rounds },
		{ NULL },
	};

	*c = (struct config){ 0 };
	ret = bench_options("lock", USAGE, opts, argc, argv);
	if (ret >= 0)
		return ret ? ret : -1;
	c->seed = (unsigned long long)seed;
	/* --quick sets what was not given. */
	c->size = size ? size : quick ? 4ULL << 20 : 1ULL << 30;
	c->accesses = accesses ? (unsigned long long)accesses : quick ? 500 : 3000000;
	c->rounds = rounds ? (int)rounds : quick ? 1 : 3;
	c->quick = quick;
	c->size = (c->size + page - 1) / page * page;
	return 0;
}

struct samples {
	double setup[MAX_ROUNDS], processing[MAX_ROUNDS], rss[MAX_ROUNDS], locked[MAX_ROUNDS];
	int ok;
	char reason[160];
};

/* Milliseconds with about three significant digits, never in exponent form. */
static int print_ms(char *buf, size_t len, double ms)
{
	return snprintf(buf, len, ms < 1 ? "%.3f" : ms < 100 ? "%.1f" : "%.0f", ms);
}

/* "median (min-max)", or the median alone for one round. */
static const char *spread(char *buf, size_t len, double *v, int n)
{
	/* median_of() sorts: the ends are the minimum and the maximum. */
	int k = print_ms(buf, len, median_of(v, n));

	if (n > 1) {
		k += snprintf(buf + k, len - k, " (");
		k += print_ms(buf + k, len - k, v[0]);
		k += snprintf(buf + k, len - k, "-");
		k += print_ms(buf + k, len - k, v[n - 1]);
		snprintf(buf + k, len - k, ")");
	}
	return buf;
}

static void print_json(const struct config *c, struct samples *sm, const struct sequence *q,
		       int argc, char **argv)
{
	double onfault, seed_onfault = strategies[ONFAULT].seed_processing_ms;
	char what[160];
	int s, met = 1;

	report_begin("lock", argc, argv);
	report_param_int("size_bytes", (long long)c->size);
	report_param_int("accesses", (long long)c->accesses);
	report_param_int("seed", (long long)c->seed);
	report_param_int("rounds", c->rounds);
	report_param_bool("cold", c->cold);
	report_param_bool("quick", c->quick);
	report_param_int("page_size", (long long)page);
	report_param_int("pages_touched", (long long)q->touched);
	report_param_int("peak_vmas", (long long)q->peak_vmas);
	report_param_str("seed_experiment", "5 GB file, 15,000,000 random page accesses");
	for (s = 0; s < NSTRAT; s++) {
		report_row_begin("strategies", NULL, strategies[s].label);
		if (!sm[s].ok) {
			report_row_unavailable(sm[s].reason);
		} else {
			report_metric("setup_ms", "ms", sm[s].setup, c->rounds);
			report_metric("processing_ms", "ms", sm[s].processing, c->rounds);
			report_metric("rss_kib", "KiB", sm[s].rss, c->rounds);
			report_metric("locked_kib", "KiB", sm[s].locked, c->rounds);
		}
		report_row_end();
	}
	for (s = 0; s < NSTRAT; s++) {
		report_seed_begin("strategies", NULL, strategies[s].label);
		if (strategies[s].seed_setup_ms >= 0)
			report_metric_value("setup_ms", "ms", strategies[s].seed_setup_ms);
		report_metric_value("processing_ms", "ms", strategies[s].seed_processing_ms);
		report_row_end();
	}
	onfault = sm[ONFAULT].ok ? median_of(sm[ONFAULT].processing, c->rounds) : 0;
	for (s = 0; s < NSTRAT; s++) {
		if (s == ONFAULT)
			continue;
		if (onfault > 0 && sm[s].ok) {
			snprintf(what, sizeof(what), "processing_ms %s / MLOCK_ONFAULT", strategies[s].label);
			report_ratio(what, median_of(sm[s].processing, c->rounds) / onfault);
		}
		snprintf(what, sizeof(what), "processing_ms %s / MLOCK_ONFAULT (seed)", strategies[s].label);
		report_ratio(what, strategies[s].seed_processing_ms / seed_onfault);
		if (s != MLOCK_ALL && (!sm[s].ok || !(onfault < median_of(sm[s].processing, c->rounds))))
			met = 0;
	}
	report_target("MLOCK_ONFAULT keeps the pages read locked faster than locking each page "
		      "or PROT_NONE batches (the patch's finding)",
		      onfault > 0 ? "see the processing_ms ratios" : "MLOCK_ONFAULT unavailable",
		      onfault > 0 && met);
	report_end();
}

static void print_table(const struct config *c, struct samples *sm, const struct sequence *q)
{
	double onfault = sm[ONFAULT].ok ? median_of(sm[ONFAULT].processing, c->rounds) : 0;
	double seed_onfault = strategies[ONFAULT].seed_processing_ms;
	char setup[48], proc[48], ratio[16], seed_setup[16];
	int s;

	printf("lock-on-fault: a %llu KiB file (%llu pages) mapped shared, %llu random page reads\n"
	       "(seed %llu, %llu distinct pages), page cache %s; median (min-max) of %d round%s,\n"
	       "each strategy in a fresh process.  The patch: 5 GB file, 15,000,000 reads.\n\n",
	       c->size / 1024, c->size / page, c->accesses, c->seed, q->touched,
	       c->cold ? "dropped before each strategy" : "warm", c->rounds, c->rounds > 1 ? "s" : "");
	printf("%-19s %-24s %-27s %8s %10s %10s | %9s %10s %8s\n", "STRATEGY", "SETUP ms",
	       "PROCESSING ms", "x ONFLT", "RSS KiB", "LOCKED KiB", "PATCH set", "PATCH proc", "x ONFLT");
	for (s = 0; s < NSTRAT; s++) {
		if (strategies[s].seed_setup_ms >= 0)
			snprintf(seed_setup, sizeof(seed_setup), "%g", strategies[s].seed_setup_ms);
		else
			snprintf(seed_setup, sizeof(seed_setup), "-");
		if (!sm[s].ok) {
			printf("%-19s unavailable: %-77s | %9s %10.0f %8.2f\n", strategies[s].label,
			       sm[s].reason, seed_setup, strategies[s].seed_processing_ms,
			       strategies[s].seed_processing_ms / seed_onfault);
			continue;
		}
		if (onfault > 0)
			snprintf(ratio, sizeof(ratio), "%.2f", median_of(sm[s].processing, c->rounds) / onfault);
		else
			snprintf(ratio, sizeof(ratio), "-");
		printf("%-19s %-24s %-27s %8s %10.0f %10.0f | %9s %10.0f %8.2f\n", strategies[s].label,
		       spread(setup, sizeof(setup), sm[s].setup, c->rounds),
		       spread(proc, sizeof(proc), sm[s].processing, c->rounds), ratio,
		       median_of(sm[s].rss, c->rounds), median_of(sm[s].locked, c->rounds), seed_setup,
		       strategies[s].seed_processing_ms, strategies[s].seed_processing_ms / seed_onfault);
	}
	printf("\nx ONFLT: processing time over MLOCK_ONFAULT's, here and in the patch (compare these:\n"
	       "the sizes differ).  RSS and LOCKED: of the mapping at the end (smaps).\n");
}

int main(int argc, char **argv)
{
	static struct samples sm[NSTRAT];
	struct sequence q;
	struct result res;
	struct config c;
	char dir[PATH_MAX];
	int ret, r, k, s;

	page = (size_t)sysconf(_SC_PAGESIZE);
	ret = parse_args(argc, argv, &c);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (sequence_facts(&c, &q)) {
		fprintf(stderr, "bench-lock: no memory for the page bitmap\n");
		return 1;
	}
	if (check_memlock(c.size) || check_map_count(q.peak_vmas))
		return 1;
	progress("lock: writing the %llu KiB file", c.size / 1024);
	file_fd = create_file(c.size, dir, sizeof(dir));
	if (file_fd < 0) {
		progress_done();
		fprintf(stderr, "bench-lock: the data file in %s: %s\n", dir, strerror(-file_fd));
		return 1;
	}
	for (s = 0; s < NSTRAT; s++)
		sm[s].ok = 1;
	if (!c.cold)
		ret = prepare_cache(&c);
	for (r = 0; !ret && r < c.rounds; r++)
		for (k = 0; !ret && k < NSTRAT; k++) {
			/* A different strategy goes first each round. */
			s = (k + r) % NSTRAT;
			if (!sm[s].ok)
				continue;
			progress("lock: round %d/%d: %s", r + 1, c.rounds, strategies[s].label);
			if (c.cold)
				ret = prepare_cache(&c);
			run_in_child(s, &c, &res);
			if (res.ok && res.sum != q.sum) {
				res.ok = 0;
				snprintf(res.reason, sizeof(res.reason),
					 "the reads summed to %llu, the sequence gives %llu", res.sum, q.sum);
			}
			sm[s].ok = res.ok;
			memcpy(sm[s].reason, res.reason, sizeof(res.reason));
			sm[s].setup[r] = res.setup_ms;
			sm[s].processing[r] = res.processing_ms;
			sm[s].rss[r] = (double)res.rss_kib;
			sm[s].locked[r] = (double)res.locked_kib;
		}
	progress_done();
	close(file_fd);
	if (ret) {
		fprintf(stderr, "bench-lock: the page cache of the file: %s\n", strerror(-ret));
		return 1;
	}
	if (c.json)
		print_json(&c, sm, &q, argc, argv);
	else
		print_table(&c, sm, &q);
	return 0;
}
