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
 * process.  Medians of the rounds are reported; with --json, the
 * mmkit-bench/1 report (mmkit-bench(7)) with the seed's figures beside.
 *
 * usage: mmkit bench names [--json] [--quick] [--vmas N] [--forks N]
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
#include "options.h"
#include "report.h"

#define USAGE	"usage: mmkit bench names [--json] [--quick] [--vmas N] [--forks N]  (N from 1 to\n" \
		"       1000000; defaults 65536 VMAs, 1000 forks; --quick: 1024 VMAs, 50 forks)\n"
#define VMA_PAGES	10
#define ROUNDS		5
#define NTOUCHES	3

static const int touches[NTOUCHES] = { 0, 1, 10 };

/* The seed's figures: fork with 64K VMAs, ms at 0 touched pages, named over unnamed in %. */
#define SEED_UNNAMED_MS	16.36
#define SEED_NAMED_MS	18.35
static const double seed_overhead_pct[NTOUCHES] = { 12.2, 6.5, 5.4 };

struct config {
	int json;
	int quick;
	long vmas;
	long forks;
};

/* Mean time of @forks fork() calls, in ms; each child exits at once. */
static double fork_ms(long forks)
{
	double total = 0;
	long i;

	for (i = 0; i < forks; i++) {
		double start = 1e3 * now_seconds();
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		total += 1e3 * now_seconds() - start;
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

/* 0, or the exit status main() returns (0 after --help, 2 after a bad option). */
static int parse_args(int argc, char **argv, struct config *c)
{
	long long vmas = 0, forks = 0;
	const struct bench_option opts[] = {
		{ "--json", BENCH_FLAG, .flag = &c->json },
		{ "--quick", BENCH_FLAG, .flag = &c->quick },
		{ "--vmas", BENCH_NUMBER, 1, 1000000, .number = &vmas },
		{ "--forks", BENCH_NUMBER, 1, 1000000, .number = &forks },
		{ NULL },
	};
	int ret;

	*c = (struct config){ 0 };
	ret = bench_options("names", USAGE, opts, argc, argv);
	if (ret >= 0)
		return ret ? ret : -1;
	/* Sizes given are kept, with or without --quick. */
	c->vmas = vmas ? (long)vmas : c->quick ? 1024 : 65536;
	c->forks = forks ? (long)forks : c->quick ? 50 : 1000;
	return 0;
}

static double overhead_pct(double unnamed_ms, double named_ms)
{
	return 100 * (named_ms - unnamed_ms) / unnamed_ms;
}

static void touch_label(char *buf, size_t len, int t)
{
	snprintf(buf, len, "%d touched page%s", touches[t], touches[t] == 1 ? "" : "s");
}

/* The report: fork times by touched pages (a sweep), the named overhead, the seed's beside. */
static void print_json(int argc, char **argv, const struct config *c, const char *backend,
		       long per_round, double unnamed[NTOUCHES][ROUNDS], double named[NTOUCHES][ROUNDS])
{
	double mu[NTOUCHES], mn[NTOUCHES];
	char label[32], what[96];
	int t, k;

	for (t = 0; t < NTOUCHES; t++) {
		mu[t] = median_of(unnamed[t], ROUNDS);
		mn[t] = median_of(named[t], ROUNDS);
	}
	report_begin("names", argc, argv);
	report_param_int("vmas", c->vmas);
	report_param_int("vma_pages", VMA_PAGES);
	report_param_int("forks", c->forks);
	report_param_int("rounds", ROUNDS);
	report_param_int("forks_per_round", per_round);
	report_param_str("names_backend", backend);
	report_param_bool("quick", c->quick);
	for (k = 0; k < 2; k++)
		for (t = 0; t < NTOUCHES; t++) {
			touch_label(label, sizeof(label), t);
			report_row_begin("fork", k ? "named" : "unnamed", label);
			report_row_x(touches[t], "pages");
			report_metric("fork", "ms", k ? named[t] : unnamed[t], ROUNDS);
			report_row_end();
		}
	for (t = 0; t < NTOUCHES; t++) {
		touch_label(label, sizeof(label), t);
		report_row_begin("named_overhead", NULL, label);
		report_metric_value("overhead", "%", overhead_pct(mu[t], mn[t]));
		report_row_end();
	}
	touch_label(label, sizeof(label), 0);
	report_seed_begin("fork", "unnamed", label);
	report_row_x(0, "pages");
	report_metric_value("fork", "ms", SEED_UNNAMED_MS);
	report_row_end();
	report_seed_begin("fork", "named", label);
	report_row_x(0, "pages");
	report_metric_value("fork", "ms", SEED_NAMED_MS);
	report_row_end();
	for (t = 0; t < NTOUCHES; t++) {
		touch_label(label, sizeof(label), t);
		report_seed_begin("named_overhead", NULL, label);
		report_metric_value("overhead", "%", seed_overhead_pct[t]);
		report_row_end();
	}
	for (t = 0; t < NTOUCHES; t++) {
		snprintf(what, sizeof(what), "named over unnamed fork time, %d touched pages", touches[t]);
		report_ratio(what, mn[t] / mu[t]);
	}
	report_end();
}

int main(int argc, char **argv)
{
	static double unnamed[NTOUCHES][ROUNDS], named[NTOUCHES][ROUNDS];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const char *backend;
	struct mmkit_features f;
	struct config c;
	long per_round;
	int t, r, ret;

	ret = parse_args(argc, argv, &c);
	if (ret)
		return ret < 0 ? 0 : ret;
	mmkit_probe(&f);
	backend = f.feature[MMKIT_FEATURE_NAMES].backend;
	per_round = c.forks / ROUNDS > 0 ? c.forks / ROUNDS : 1;
	if (!c.json)
		printf("fork() of a process with %ld anonymous VMAs of %d pages, %ld forks x %d rounds, "
		       "names through %s\n%-14s %12s %12s %10s\n", c.vmas, VMA_PAGES, per_round,
		       ROUNDS, backend, "touched pages", "unnamed ms", "named ms", "named +%");
	for (t = 0; t < NTOUCHES; t++) {
		double mu, mn;

		/*
		 * Only the set being timed is mapped (with fork's VMA tree
		 * duplication in 6.8+, even VMAs left out of fork cost it
		 * time, unevenly); which goes first alternates.
		 */
		for (r = 0; r < ROUNDS; r++) {
			int k;

			progress("%d touched pages, round %d of %d", touches[t], r + 1, ROUNDS);
			for (k = 0; k < 2; k++) {
				int named_now = k ^ (r & 1);

				ret = time_set(&c, touches[t], named_now, page,
					       named_now ? &named[t][r] : &unnamed[t][r], per_round);
				if (ret) {
					progress_done();
					fprintf(stderr, "bench-names: %s (%ld VMAs need vm.max_map_count above %ld)\n",
						strerror(-ret), c.vmas, c.vmas);
					return 1;
				}
			}
		}
		if (c.json)
			continue;
		mu = median_of(unnamed[t], ROUNDS);
		mn = median_of(named[t], ROUNDS);
		progress_done();
		printf("%-14d %12.3f %12.3f %+9.1f%%\n", touches[t], mu, mn, overhead_pct(mu, mn));
		fflush(stdout);
	}
	progress_done();
	if (c.json)
		print_json(argc, argv, &c, backend, per_round, unnamed, named);
	return 0;
}
