// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit bench names: the fork experiment of the anonymous-VMA-name kernel
 * series.  A process with many anonymous VMAs forks repeatedly; the time
 * of fork() is compared with the VMAs unnamed and named, for VMAs with 0,
 * 1 and 10 touched pages (published: 16.36 ms unnamed vs 18.35 ms named,
 * +12.2 %; +6.5 % and +5.4 % with 1 and 10 touched pages).
 *
 * Each VMA is 10 pages with a one-page hole after it, so that unnamed
 * neighbours cannot merge.  Names go through mmkit_name(): the kernel's
 * prctl where it has CONFIG_ANON_VMA_NAME, else mmkit's registry, whose
 * cost at fork is then what is measured.  Each round builds, times and
 * unmaps one set of each kind, alternating which goes first, in one
 * process.  Medians of the rounds are reported.
 *
 * usage: mmkit bench names [--json] [--vmas N] [--forks N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "mmkit.h"

#define USAGE	"usage: mmkit bench names [--json] [--vmas N] [--forks N]  (N from 1 to 1000000;\n" \
		"       defaults 65536 VMAs, 1000 forks)\n"
#define VMA_PAGES	10
#define ROUNDS		5

struct config {
	int json;
	long vmas;
	long forks;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Mean time of @forks fork() calls, in ms; each child exits at once. */
static double fork_ms(long forks)
{
	double total = 0;
	long i;

	for (i = 0; i < forks; i++) {
		double start = now_ms();
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		total += now_ms() - start;
		if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
			perror("bench-names: fork");
			exit(1);
		}
	}
	return total / forks;
}

/* Maps @vmas VMAs of VMA_PAGES pages with holes between; touches @touch pages of each. */
static char *make_vmas(long vmas, int touch, size_t page)
{
	size_t stride = (VMA_PAGES + 1) * page;
	char *base;
	long i;
	int t;

	base = mmap(NULL, stride * vmas, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	for (i = 0; i < vmas; i++) {
		char *vma = base + i * stride;

		/* Fails with ENOMEM at vm.max_map_count. */
		if (munmap(vma + VMA_PAGES * page, page)) {
			munmap(base, stride * vmas);
			return NULL;
		}
		for (t = 0; t < touch; t++)
			vma[t * page] = 1;
	}
	return base;
}

static int name_vmas(char *base, long vmas, size_t page)
{
	size_t stride = (VMA_PAGES + 1) * page;
	long i;
	int ret;

	for (i = 0; i < vmas; i++) {
		ret = mmkit_name(base + i * stride, VMA_PAGES * page, "bench-names");
		if (ret)
			return ret;
	}
	return 0;
}

/* Maps a set of VMAs, names it if @named, times @forks forks into *@ms, unmaps it. */
static int time_set(const struct config *c, int touch, int named, size_t page,
		    double *ms, long forks)
{
	char *base = make_vmas(c->vmas, touch, page);
	int ret = 0;

	if (!base)
		return -ENOMEM;
	if (named)
		ret = name_vmas(base, c->vmas, page);
	if (!ret)
		*ms = fork_ms(forks);
	munmap(base, (VMA_PAGES + 1) * page * c->vmas);
	return ret;
}

static int parse_args(int argc, char **argv, struct config *c)
{
	int i;

	c->json = 0;
	c->vmas = 65536;
	c->forks = 1000;
	for (i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--json")) {
			c->json = 1;
		} else if ((!strcmp(argv[i], "--vmas") || !strcmp(argv[i], "--forks")) && i + 1 < argc) {
			long v = strtol(argv[i + 1], &end, 10);

			if (*end || v <= 0 || v > 1000000)
				return -EINVAL;
			*(argv[i][2] == 'v' ? &c->vmas : &c->forks) = v;
			i++;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const int touches[] = { 0, 1, 10 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct mmkit_features f;
	struct config c;
	unsigned int row;
	int r, ret;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		printf(USAGE);
		return 0;
	}
	if (parse_args(argc, argv, &c)) {
		fputs(USAGE, stderr);
		return 2;
	}
	mmkit_probe(&f);
	if (c.json)
		printf("{\"names_backend\": \"%s\", \"vmas\": %ld, \"forks\": %ld, \"rows\": [",
		       f.feature[MMKIT_FEATURE_NAMES].backend, c.vmas, c.forks);
	else
		printf("fork() of a process with %ld anonymous VMAs of %d pages, %ld forks x %d rounds, "
		       "names through %s\n%-14s %12s %12s %10s\n", c.vmas, VMA_PAGES, c.forks / ROUNDS,
		       ROUNDS, f.feature[MMKIT_FEATURE_NAMES].backend,
		       "touched pages", "unnamed ms", "named ms", "named +%");
	for (row = 0; row < sizeof(touches) / sizeof(touches[0]); row++) {
		double unnamed[ROUNDS], named[ROUNDS], mu, mn;
		long per_round = c.forks / ROUNDS > 0 ? c.forks / ROUNDS : 1;

		/*
		 * Only the set being timed is mapped (with fork's VMA tree
		 * duplication in 6.8+, even VMAs left out of fork cost it
		 * time, unevenly); which goes first alternates.
		 */
		for (r = 0; r < ROUNDS; r++) {
			int k;

			for (k = 0; k < 2; k++) {
				int named_now = k ^ (r & 1);

				ret = time_set(&c, touches[row], named_now, page,
					       named_now ? &named[r] : &unnamed[r], per_round);
				if (ret) {
					fprintf(stderr, "bench-names: %s (%ld VMAs need vm.max_map_count above %ld)\n",
						strerror(-ret), c.vmas, c.vmas);
					return 1;
				}
			}
		}
		qsort(unnamed, ROUNDS, sizeof(double), cmp_double);
		qsort(named, ROUNDS, sizeof(double), cmp_double);
		mu = unnamed[ROUNDS / 2];
		mn = named[ROUNDS / 2];
		if (c.json)
			printf("%s{\"touched_pages\": %d, \"unnamed_ms\": %.3f, \"named_ms\": %.3f, "
			       "\"named_overhead_pct\": %.1f}", row ? ", " : "", touches[row], mu, mn,
			       100 * (mn - mu) / mu);
		else
			printf("%-14d %12.3f %12.3f %+9.1f%%\n", touches[row], mu, mn, 100 * (mn - mu) / mu);
	}
	if (c.json)
		printf("]}\n");
	return 0;
}
