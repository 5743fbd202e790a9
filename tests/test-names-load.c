// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The registry reader under load: a registry of 60,000 names reached
 * through 10 descriptors, two large registries to merge (and the rule they
 * merge by: the later overrides the earlier where they overlap, checked
 * against mmkit__ranges_set(), which wrote that rule first), a writer
 * renaming in a loop, a writer that died mid-update, registries so large
 * that together they pass the reader's bound on entries (also when every
 * entry is invalid, or the file ends an entry short of what its header
 * claims: the bound counts the entries read, not those kept).  Each reader
 * runs under a CPU-time alarm (a reader spinning on a registry that never
 * settles uses CPU) and its times are printed; a read that uses more than
 * READ_LIMIT_MS of CPU fails (it was 6.8 s for 60,000 names through 10
 * descriptors when each descriptor was read again and merged entry by
 * entry).  CPU, not wall time: alone in its process, the reader's CPU time
 * is the work it did, whatever else the machine runs (a loaded machine
 * made a sound read of 150,000 entries take 8.3 s under TSan).  Where the
 * machine itself is slow (an emulated guest, whose CPU time is near its
 * wall time, on a loaded host: 2.4 s for the same read), a read over
 * READ_LIMIT_MS fails only if it also cost READ_LIMIT_SORTS times sorting
 * as many entries, measured on the spot (the sound read costs about 2 of
 * those, the one that merged entry by entry over 200).
 */
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <time.h>
#include <sys/time.h>
#include <sys/mman.h>

#include "harness.h"
#include "names-registry.h"
#include "mmkit.h"
#include "names.h"

#define BIG_NAMES	60000
#define DUP_FDS		10
#define MERGE_NAMES	100000
#define SMALL_NAMES	40
#define BUSY_NAMES	60000
#define BUSY_READS	100
/* Two of these pass the reader's bound of 2^20 entries in all; one does not. */
#define HUGE_NAMES	600000
#define READ_LIMIT_MS	2000
#define READ_LIMIT_SORTS	20
#define READ_SECONDS	60

static size_t page;

static int by_start(const void *a, const void *b)
{
	const struct mmkit__name_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The ms of CPU of sorting @n shuffled entries, the least of three: how fast this machine is. */
static double sort_ms(size_t n)
{
	struct mmkit__name_range *e = calloc(n, sizeof(*e));
	double t, best = 1e30;
	size_t i;
	int round;

	T_ASSERT(e);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < n; i++)
			e[i].start = (i * 2654435761u) % n;
		t = t_cpu();
		qsort(e, n, sizeof(*e), by_start);
		t = (t_cpu() - t) * 1e3;
		best = t < best ? t : best;
	}
	free(e);
	return best;
}

/* SIGPROF ends the calling process once it has used @seconds of CPU. */
static void cpu_alarm(int seconds)
{
	struct itimerval it = { .it_value = { .tv_sec = seconds } };

	T_EQ(setitimer(ITIMER_PROF, &it, NULL), 0);
}

/* What a target process sets up, and what its reader expects. */
struct setup {
	char *mem;
	size_t pages;		/* named one by one, two names alternating */
	int dup_fds;		/* descriptors of the registry, in all */
	int extra;		/* more registries (memfds written here) over the first */
	int busy;		/* a thread renames page 0 in a loop */
	int dead;		/* seq left odd, as by a writer that died mid-update */
	int huge;		/* more registries of HUGE_NAMES entries each, far from mem */
	int invalid;		/* the huge registries' entries are all zero: invalid */
	int cut;		/* and each file ends an entry short of its header's count */
	pid_t pid;
};

/*
 * Entry @i of extra registry @r (1 or 2).  The first: from the middle of
 * page 2i to the middle of page 2i + 1; the second: from a quarter into
 * page 5i to 2 pages on, over both the library's and the first's.
 */
static size_t extra_count(const struct setup *s, int r)
{
	return r == 1 ? s->pages / 2 : s->pages / 5;
}

static struct mmkit__name_range extra_entry(const struct setup *s, int r, size_t i)
{
	struct mmkit__name_range e;

	memset(&e, 0, sizeof(e));
	if (r == 1) {
		e.start = (uintptr_t)s->mem + 2 * i * page + page / 2;
		e.end = e.start + page;
	} else {
		e.start = (uintptr_t)s->mem + 5 * i * page + page / 4;
		e.end = e.start + 2 * page;
	}
	snprintf(e.name, sizeof(e.name), "extra%d-%zu", r, i % 3);
	return e;
}

/* Registry @r written by hand, after descriptor @after_fd; returns its descriptor. */
static int write_registry(const struct setup *s, int r, int after_fd)
{
	struct mmkit__registry_header h = registry_forged_header((uint32_t)extra_count(s, r), 0);
	struct mmkit__name_range *e = calloc(h.count, sizeof(*e));
	size_t i;
	int fd;

	T_ASSERT(e);
	for (i = 0; i < h.count; i++)
		e[i] = extra_entry(s, r, i);
	fd = registry_forge(&h, e, h.count, after_fd);
	T_ASSERT(fd > after_fd);
	free(e);
	return fd;
}

/*
 * A registry of HUGE_NAMES one-page ranges a page apart, from @base, or
 * (@invalid) of as many zero entries, a sparse file, which (@cut) ends an
 * entry short of them; after @after_fd.
 */
static int write_huge_registry(uint64_t base, int invalid, int cut, int after_fd)
{
	struct mmkit__registry_header h = registry_forged_header(HUGE_NAMES, 0);
	struct mmkit__name_range *e = calloc(HUGE_NAMES, sizeof(*e));
	size_t i;
	int fd;

	T_ASSERT(e);
	for (i = 0; i < HUGE_NAMES && !invalid; i++) {
		e[i].start = base + 2 * i * page;
		e[i].end = e[i].start + page;
		strcpy(e[i].name, "huge");
	}
	fd = registry_forge(&h, e, invalid ? 0 : HUGE_NAMES, after_fd);
	T_ASSERT(fd > after_fd);
	if (cut)
		T_EQ(ftruncate(fd, (off_t)(sizeof(h) + (HUGE_NAMES - 1) * sizeof(*e))), 0);
	free(e);
	return fd;
}

/* The registry of a writer that died mid-update: the names of s->pages, seq odd. */
static void write_dead_registry(const struct setup *s)
{
	struct mmkit__registry_header h = registry_forged_header((uint32_t)s->pages, 41);
	struct mmkit__name_range *e = calloc(s->pages, sizeof(*e));
	size_t i;

	T_ASSERT(e);
	for (i = 0; i < s->pages; i++) {
		e[i].start = (uintptr_t)s->mem + i * page;
		e[i].end = e[i].start + page;
		snprintf(e[i].name, sizeof(e[i].name), "name-%zu", i % 2);
	}
	T_ASSERT(registry_forge(&h, e, s->pages, 2) >= 0);
	free(e);
}

static void *renamer(void *arg)
{
	const struct setup *s = arg;
	unsigned long i;

	for (i = 0;; i++) {
		if (mmkit_name(s->mem, page, i % 2 ? "busy" : "name-0"))
			T_FAIL("renaming failed");
	}
	return NULL;
}

static void target(void *arg)
{
	const struct setup *s = arg;
	pthread_t thread;
	char name[16];
	size_t i;
	int fd, k;

	if (s->dead) {
		write_dead_registry(s);
		return;
	}
	for (i = 0; i < s->pages; i++) {
		snprintf(name, sizeof(name), "name-%zu", i % 2);
		T_EQ(mmkit_name(s->mem + i * page, page, name), 0);
	}
	fd = registry_fd();
	T_ASSERT(fd >= 0);
	for (k = 1; k < s->dup_fds; k++)
		T_ASSERT(dup(fd) >= 0);
	for (k = 1; k <= s->extra; k++)
		fd = write_registry(s, k, fd);
	for (k = 0; k < s->huge; k++)
		fd = write_huge_registry((uint64_t)(k + 1) << 44, s->invalid, s->cut, fd);
	if (s->busy)
		T_EQ(pthread_create(&thread, NULL, renamer, (void *)s), 0);
}

/* What today's rule gives: the first registry as it is, each entry of the next ones set over it. */
static size_t expected(const struct setup *s, struct mmkit__name_range *e)
{
	struct mmkit__name_range x;
	size_t i, n = s->pages;
	int r;

	for (i = 0; i < s->pages; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].start = (uintptr_t)s->mem + i * page;
		e[i].end = e[i].start + page;
		snprintf(e[i].name, sizeof(e[i].name), "name-%zu", i % 2);
	}
	for (r = 1; r <= s->extra; r++) {
		for (i = 0; i < extra_count(s, r); i++) {
			x = extra_entry(s, r, i);
			mmkit__ranges_set(e, &n, x.start, x.end, x.name, NULL);
		}
	}
	return n;
}

static void reader(void *arg)
{
	const struct setup *s = arg;
	struct mmkit__name_range *e, want[3 * SMALL_NAMES];
	struct mmkit__names_stats stats;
	double t0, cpu0, ms, cpu_ms;
	size_t n_want, i;
	ssize_t n;

	cpu_alarm(READ_SECONDS);
	t0 = t_now() * 1e3;
	cpu0 = t_cpu() * 1e3;
	n = mmkit__names_read(s->pid, -1, &e, &stats);
	cpu_ms = t_cpu() * 1e3 - cpu0;
	ms = t_now() * 1e3 - t0;
	if (n < 0)
		T_FAIL("mmkit__names_read: %s", strerror((int)-n));
	printf("    %zu names through %d descriptors, %d more registries: %zd entries in %.0f ms"
	       " (%.0f ms of CPU)\n", s->pages, s->dup_fds, s->extra, n, ms, cpu_ms);
	fflush(stdout);
	/* The huge case is about the bound on memory; reading 1.8 M entries takes what it takes. */
	if (cpu_ms > READ_LIMIT_MS && !s->huge) {
		double sorting = sort_ms(n > 0 ? (size_t)n : 1);

		printf("    (slow machine: sorting %zd entries used %.0f ms of CPU)\n", n, sorting);
		fflush(stdout);
		if (cpu_ms > READ_LIMIT_SORTS * sorting)
			T_FAIL("reading used %.0f ms of CPU (limits %d ms, and %d sorts: %.0f ms)",
			       cpu_ms, READ_LIMIT_MS, READ_LIMIT_SORTS, READ_LIMIT_SORTS * sorting);
	}
	T_EQ(stats.duplicates, s->dup_fds - 1);
	if (s->huge) {
		/* The library's and the first huge one fit the bound; the others do not. */
		T_EQ(stats.registries, 2);
		T_EQ(stats.too_big, s->huge - 1);
		T_EQ(n, s->pages + (s->invalid ? 0 : HUGE_NAMES));
		free(e);
		return;
	}
	T_EQ(stats.registries, 1 + s->extra);
	T_EQ(stats.too_big, 0);
	if (!s->extra) {
		T_EQ(n, s->pages);
	} else if (s->pages <= SMALL_NAMES) {
		n_want = expected(s, want);
		T_EQ(n, n_want);
		for (i = 0; i < n_want; i++) {
			if (e[i].start != want[i].start || e[i].end != want[i].end ||
			    strcmp(e[i].name, want[i].name))
				T_FAIL("entry %zu: [%#llx, %#llx) %s, expected [%#llx, %#llx) %s",
				       i,
				       (unsigned long long)e[i].start, (unsigned long long)e[i].end,
				       e[i].name, (unsigned long long)want[i].start,
				       (unsigned long long)want[i].end, want[i].name);
		}
	} else {
		/* Per two pages: half a page of the library's, a page of the extra's, a half again. */
		T_EQ(n, 3 * s->pages / 2);
	}
	free(e);
}

/* Reads a registry a thread keeps renaming in: every read must succeed, and be whole. */
static void reader_busy(void *arg)
{
	const struct setup *s = arg;
	struct mmkit__names_stats stats;
	struct mmkit__name_range *e;
	double t0, ms, worst = 0;
	ssize_t n;
	int i;

	cpu_alarm(READ_SECONDS);
	for (i = 0; i < BUSY_READS; i++) {
		t0 = t_now() * 1e3;
		n = mmkit__names_read(s->pid, -1, &e, &stats);
		ms = t_now() * 1e3 - t0;
		worst = ms > worst ? ms : worst;
		if (n < 0)
			T_FAIL("read %d of %d: %s", i + 1, BUSY_READS, strerror((int)-n));
		T_EQ(n, s->pages);
		free(e);
	}
	printf("    %d reads while a thread renames: the slowest %.1f ms\n", BUSY_READS, worst);
	fflush(stdout);
}

/*
 * What a process with read access to this one can try through
 * /proc/PID/fd: open the registry read-write and write a count that
 * made the writer copy past the end of the file (SIGBUS), map it
 * writable, shrink it.  Each must fail.
 */
static void peer_attacks(void)
{
	uint32_t count = 200000;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", registry_fd());
	fd = open(path, O_RDWR);
	T_ASSERT(fd >= 0);
	if (pwrite(fd, &count, sizeof(count), offsetof(struct mmkit__registry_header, count)) >= 0)
		T_FAIL("a peer wrote the registry's count");
	if (mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) != MAP_FAILED)
		T_FAIL("a peer mapped the registry writable");
	if (!ftruncate(fd, 0))
		T_FAIL("a peer shrank the registry");
	close(fd);
}

static void read_target(struct setup *s)
{
	struct t_child ch;
	int status;

	s->mem = mmap(NULL, s->pages * page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(s->mem != MAP_FAILED);
	ch = t_spawn_paused(target, s);
	s->pid = ch.pid;
	status = t_in_child(s->busy ? reader_busy : reader, s);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPROF)
		T_FAIL("reading the registry used over %d s of CPU", READ_SECONDS);
	T_CHILD_OK(status);
	t_reap(ch);
	munmap(s->mem, s->pages * page);
}

int main(void)
{
	struct setup big = { .pages = BIG_NAMES, .dup_fds = DUP_FDS };
	struct setup small = { .pages = SMALL_NAMES, .dup_fds = 1, .extra = 2 };
	struct setup merge = { .pages = MERGE_NAMES, .dup_fds = 1, .extra = 1 };
	struct setup busy = { .pages = BUSY_NAMES, .dup_fds = 1, .busy = 1 };
	struct setup dead = { .pages = BUSY_NAMES, .dup_fds = 1, .dead = 1 };
	struct setup huge = { .pages = SMALL_NAMES, .dup_fds = 1, .huge = 3 };
	struct setup invalid = { .pages = SMALL_NAMES, .dup_fds = 1, .huge = 3, .invalid = 1 };
	struct setup cut = { .pages = SMALL_NAMES, .dup_fds = 1, .huge = 3, .invalid = 1, .cut = 1 };
	struct mmkit__name_range *e;
	struct mmkit_features f;
	char *p;

	T_EQ(mmkit_probe(&f), 0);
	if (f.feature[MMKIT_FEATURE_NAMES].status != MMKIT_STATUS_FALLBACK)
		T_SKIP("the kernel names VMAs itself: no registry to read");
	page = (size_t)sysconf(_SC_PAGESIZE);

	T_CASE("one registry through 10 descriptors is read once, in time");
	read_target(&big);
	T_CASE("three registries: the later overrides the earlier where they overlap");
	read_target(&small);
	T_CASE("two large registries merge in time");
	read_target(&merge);
	T_CASE("a thread renaming in a loop: every read succeeds");
	read_target(&busy);
	T_CASE("seq left odd by a writer that died: read anyway, in time");
	read_target(&dead);

	T_CASE("three more registries of 600,000 names: the reader keeps 2^20 entries at most");
	read_target(&huge);
	T_CASE("three registries of 600,000 invalid entries: those read count toward 2^20");
	read_target(&invalid);
	T_CASE("three files an entry short of their headers' 600,000: what was read counts");
	read_target(&cut);

	T_CASE("a peer that opens the registry read-write can change nothing in it");
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(p != MAP_FAILED);
	T_EQ(mmkit_name(p, page, "before"), 0);
	peer_attacks();
	T_EQ(mmkit_name(p, page, "after"), 0);
	T_EQ(mmkit__names_get(0, -1, &e), 1);
	T_ASSERT(!strcmp(e[0].name, "after"));
	free(e);
	return T_EXIT_PASS;
}
