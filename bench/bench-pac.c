// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit bench pac: the enabled-keys experiment of the arm64 series that
 * added PR_PAC_SET_ENABLED_KEYS.  For a task with the IA key disabled,
 * each kernel entry has to enable it again (the kernel signs its own
 * return addresses with IA) and each exit disable it; the other keys are
 * switched only with the task.  Hence two disabled configurations: IA
 * alone, and all four keys.  The series timed 10 million invalid system
 * calls: 316.7 ns each with all keys enabled, 319.6 ns with keys disabled.
 *
 * Here each key configuration makes N invalid system calls (ENOSYS: the
 * shortest round trip through entry and exit) per round; the
 * configurations take turns within a round, starting one later each round,
 * so that a machine slowing down or speeding up during the run weighs on
 * all of them alike.  Keys go through mmkit_pac_set_enabled_keys(); the
 * keys found at the start are put back at the end.  Where the library says
 * PAC is unsupported (not arm64, a CPU or kernel without address
 * authentication) nothing is measured: the text says "unsupported:" and
 * why, the JSON has every row unavailable with that reason, and the exit
 * status is 0, as for any benchmark whose feature is missing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "mmkit.h"
#include "options.h"
#include "report.h"

#define USAGE	"usage: mmkit bench pac [--json] [--calls N] [--rounds N] [--quick]\n" \
		"  --calls N    invalid system calls per key configuration and round\n" \
		"               (default 10000000, as published; 1 to 1000000000)\n" \
		"  --rounds N   rounds, the configurations interleaved (default 5, 1 to 101)\n" \
		"  --quick      10000 calls, 3 rounds unless given: checks that it runs\n" \
		"  --json       the mmkit-bench/1 report, table \"keys\"\n"

/* Far above any system call number of any architecture: ENOSYS at once. */
#define INVALID_SYSCALL	100000L
#define TABLE		"keys"
#define METRIC		"ns_per_call"

#define SEED_ALL_ENABLED_NS	316.7
#define SEED_DISABLED_NS	319.6

static const struct key_config {
	const char *label;
	unsigned long enabled;
} configs[] = {
	{ "all keys enabled", MMKIT_PAC_ALL_KEYS },
	{ "APIA disabled", MMKIT_PAC_ALL_KEYS & ~MMKIT_PAC_APIAKEY },
	{ "APIA, APIB, APDA, APDB disabled", 0 },
};
#define CONFIGS		(int)(sizeof(configs) / sizeof(configs[0]))
#define MAX_ROUNDS	101

struct options {
	int json, quick;
	long calls;
	int rounds;
};

/* Mean time of @calls invalid system calls, in ns; -1 when one did not fail with ENOSYS. */
static double ns_per_call(long calls)
{
	double start = (1e9 * now_seconds());
	long i;

	for (i = 0; i < calls; i++)
		if (syscall(INVALID_SYSCALL) != -1 || errno != ENOSYS)
			return -1;
	return ((1e9 * now_seconds()) - start) / calls;
}

/* 0, or the exit status main() returns (0 after --help, 2 after a bad option). */
static int parse_args(int argc, char **argv, struct options *o)
{
	long long calls = 0, rounds = 0;
	const struct bench_option opts[] = {
		{ "--json", BENCH_FLAG, .flag = &o->json },
		{ "--quick", BENCH_FLAG, .flag = &o->quick },
		{ "--calls", BENCH_NUMBER, 1, 1000000000, .number = &calls },
		{ "--rounds", BENCH_NUMBER, 1, MAX_ROUNDS, .number = &rounds },
		{ NULL },
	};
	int ret;

	o->json = o->quick = 0;
	ret = bench_options("pac", USAGE, opts, argc, argv);
	if (ret >= 0)
		return ret ? ret : -1;
	o->calls = calls ? (long)calls : o->quick ? 10000 : 10000000;
	o->rounds = rounds ? (int)rounds : o->quick ? 3 : 5;
	return 0;
}

static void report_seed(void)
{
	report_seed_begin(TABLE, NULL, "all keys enabled");
	report_metric_value(METRIC, "ns", SEED_ALL_ENABLED_NS);
	report_row_end();
	report_seed_begin(TABLE, NULL, "keys disabled");
	report_metric_value(METRIC, "ns", SEED_DISABLED_NS);
	report_row_end();
}

static void print_seed(void)
{
	printf("published: %.1f ns all keys enabled, %.1f ns keys disabled (%.3fx)\n",
	       SEED_ALL_ENABLED_NS, SEED_DISABLED_NS, SEED_DISABLED_NS / SEED_ALL_ENABLED_NS);
}

/* No address authentication here: every row unavailable, with the library's reason. */
static int unsupported(const struct options *o, const char *reason)
{
	int c;

	if (!o->json) {
		printf("unsupported: %s\n", reason);
		print_seed();
		return 0;
	}
	fprintf(stderr, "unsupported: %s\n", reason);
	for (c = 0; c < CONFIGS; c++) {
		report_row_begin(TABLE, NULL, configs[c].label);
		report_row_unavailable(reason);
		report_row_end();
	}
	report_seed();
	report_end();
	return 0;
}

/*
 * Fills @ns[c][r] for every configuration c and round r; the calling
 * thread's keys are those of the last configuration afterwards.
 */
static int measure(const struct options *o, double ns[CONFIGS][MAX_ROUNDS])
{
	int r, k, ret;

	/* A short warm-up, so that the first measurement is not the one paying for a cold CPU. */
	if (ns_per_call(o->calls / 10 + 1) < 0)
		return -ENOSYS;
	for (r = 0; r < o->rounds; r++) {
		for (k = 0; k < CONFIGS; k++) {
			int c = (k + r) % CONFIGS;

			progress("round %d of %d: %s", r + 1, o->rounds, configs[c].label);
			ret = mmkit_pac_set_enabled_keys(MMKIT_PAC_ALL_KEYS, configs[c].enabled);
			if (ret)
				return ret;
			ns[c][r] = ns_per_call(o->calls);
			if (ns[c][r] < 0)
				return -ENOSYS;
		}
	}
	progress_done();
	return 0;
}

static void print_results(const struct options *o, double ns[CONFIGS][MAX_ROUNDS],
			  const double *ratio)
{
	double sorted[MAX_ROUNDS];
	int c;

	printf("kernel entry and exit: %ld invalid system calls (ENOSYS) per key configuration, "
	       "%d rounds interleaved\n%-34s %10s %10s %10s %10s\n", o->calls, o->rounds,
	       "keys", "median ns", "min ns", "max ns", "ratio");
	for (c = 0; c < CONFIGS; c++) {
		memcpy(sorted, ns[c], o->rounds * sizeof(double));
		printf("%-34s %10.1f %10.1f %10.1f %9.3fx\n", configs[c].label,
		       median_of(sorted, o->rounds), sorted[0], sorted[o->rounds - 1], ratio[c]);
	}
	print_seed();
	printf("ratio: median over the rounds of each configuration's time over all keys enabled's\n");
}

static void report_results(const struct options *o, double ns[CONFIGS][MAX_ROUNDS],
			   const double *ratio)
{
	char what[96];
	int c;

	for (c = 0; c < CONFIGS; c++) {
		report_row_begin(TABLE, NULL, configs[c].label);
		report_metric(METRIC, "ns", ns[c], o->rounds);
		report_row_end();
	}
	report_seed();
	for (c = 1; c < CONFIGS; c++) {
		snprintf(what, sizeof(what), "%s / all keys enabled", configs[c].label);
		report_ratio(what, ratio[c]);
	}
	report_ratio("published: keys disabled / all keys enabled",
		     SEED_DISABLED_NS / SEED_ALL_ENABLED_NS);
	report_end();
}

int main(int argc, char **argv)
{
	static double ns[CONFIGS][MAX_ROUNDS];
	double ratio[CONFIGS], per_round[MAX_ROUNDS];
	struct mmkit_features f;
	unsigned long keys_at_start;
	struct options o;
	int c, r, ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	mmkit_probe(&f);
	if (o.json) {
		report_begin("pac", argc, argv);
		report_param_int("calls", o.calls);
		report_param_int("rounds", o.rounds);
		report_param_bool("quick", o.quick);
		report_param_int("syscall", INVALID_SYSCALL);
		report_param_str("pac_probe", f.feature[MMKIT_FEATURE_PAC].reason);
	}
	ret = mmkit_pac_get_enabled_keys(&keys_at_start);
	if (ret == -EOPNOTSUPP)
		return unsupported(&o, f.feature[MMKIT_FEATURE_PAC].reason);
	if (ret) {
		fprintf(stderr, "bench-pac: PR_PAC_GET_ENABLED_KEYS: %s\n", strerror(-ret));
		return 1;
	}
	ret = measure(&o, ns);
	/* The keys this thread started with, whatever the measurement left. */
	if (mmkit_pac_set_enabled_keys(MMKIT_PAC_ALL_KEYS, keys_at_start) && !ret)
		ret = -EIO;
	if (ret == -ENOSYS)
		fprintf(stderr, "bench-pac: system call %ld did not fail with ENOSYS (seccomp?)\n",
			INVALID_SYSCALL);
	else if (ret == -EIO)
		fprintf(stderr, "bench-pac: cannot restore the keys it started with\n");
	else if (ret)
		fprintf(stderr, "bench-pac: PR_PAC_SET_ENABLED_KEYS: %s\n", strerror(-ret));
	if (ret)
		return 1;
	for (c = 0; c < CONFIGS; c++) {
		for (r = 0; r < o.rounds; r++)
			per_round[r] = ns[c][r] / ns[0][r];
		ratio[c] = median_of(per_round, o.rounds);
	}
	if (o.json)
		report_results(&o, ns, ratio);
	else
		print_results(&o, ns, ratio);
	return 0;
}
