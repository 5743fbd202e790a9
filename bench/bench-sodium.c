// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit bench sodium [--json] [--quick] [--rounds N] [--cap N] [--shim PATH]:
 * libsodium's guarded heap beside the same calls on mmkit (libmmkit-sodium.so).
 *
 * The program runs itself as workers: one with the system's libsodium
 * alone, one with the shim preloaded, so that both measure the very same
 * code calling sodium_malloc()/sodium_free() as an unmodified program
 * does.  libsodium is opened with dlopen() and the functions looked up
 * in the global scope, where the preloaded shim comes first; each worker
 * reports which file its sodium_malloc came from, and the table refuses
 * a run where the shim was not the one measured.
 *
 * Speed: the two workers take turns for --rounds rounds; each times
 * sodium_malloc(32) + sodium_free() pairs in batches of at least 20 ms and
 * reports its median batch; the table shows the median over the rounds.
 * Space: one worker each allocates 32-byte secrets and keeps them live
 * until sodium_malloc() fails or --cap (100,000) are live; at 10,000 live
 * it reads /proc/self/maps (VMAs) and /proc/self/statm (address space and
 * resident pages), and the growth per allocation is shown.  Where the cap
 * is reached first the table says so: failure would come later.
 *
 * --json gives the mmkit-bench/1 report (mmkit-bench(7)): tables speed,
 * live, vmas_per_allocation and pages_per_allocation, a row each for
 * libsodium and mmkit-sodium, unavailable with the reason where libsodium
 * or the shim is missing.  --quick: one round, a cap of 10,001.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "options.h"
#include "report.h"

#define LIBSODIUM	"libsodium.so.23"
#define SHIM_NAME	"libmmkit-sodium.so"
#define MAX_ROUNDS	99
#define BATCH_NS	20000000LL
#define BATCHES		15
/* Live allocations at which VMAs and pages are sampled. */
#define SAMPLE_LIVE	10000
#define DEFAULT_CAP	100000
#define MAX_CAP		10000000
#define QUICK_CAP	(SAMPLE_LIVE + 1)

struct sodium {
	int (*init)(void);
	void *(*malloc)(size_t);
	void (*free)(void *);
	char from[PATH_MAX];	/* the file sodium_malloc was found in */
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sodium_open(struct sodium *s)
{
	Dl_info info;

	if (!dlopen(LIBSODIUM, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "bench-sodium: %s (Debian package libsodium23)\n", dlerror());
		exit(1);
	}
	/* The global scope: a preloaded shim's definitions come before libsodium's. */
	*(void **)&s->init = dlsym(RTLD_DEFAULT, "sodium_init");
	*(void **)&s->malloc = dlsym(RTLD_DEFAULT, "sodium_malloc");
	*(void **)&s->free = dlsym(RTLD_DEFAULT, "sodium_free");
	if (!s->init || !s->malloc || !s->free || s->init() < 0) {
		fprintf(stderr, "bench-sodium: libsodium's functions not found or sodium_init failed\n");
		exit(1);
	}
	snprintf(s->from, sizeof(s->from), "%s",
		 dladdr(*(void **)&s->malloc, &info) && info.dli_fname ? info.dli_fname : "?");
}

static double speed(const struct sodium *s)
{
	double batch[BATCHES];
	long long start, t;
	long pairs;
	int b;

	for (pairs = 0; pairs < 200; pairs++)
		s->free(s->malloc(32));
	for (b = 0; b < BATCHES; b++) {
		start = now_ns();
		pairs = 0;
		do {
			void *p = s->malloc(32);

			if (!p) {
				fprintf(stderr, "bench-sodium: sodium_malloc(32): %s\n", strerror(errno));
				exit(1);
			}
			s->free(p);
			pairs++;
		} while ((t = now_ns()) - start < BATCH_NS);
		batch[b] = (double)(t - start) / (double)pairs;
	}
	return median_of(batch, BATCHES);
}

static long maps_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Address space and resident pages, from /proc/self/statm. */
static int statm(long *size, long *resident)
{
	FILE *f = fopen("/proc/self/statm", "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%ld %ld", size, resident) == 2;
	fclose(f);
	return ok ? 0 : -1;
}

static void live(const struct sodium *s, long cap)
{
	void **p = calloc((size_t)cap, sizeof(*p));
	long n, vmas0, vmas1 = -1, size0, size1 = 0, res0, res1 = 0;
	int err = 0;

	if (!p || statm(&size0, &res0) || (vmas0 = maps_count()) < 0) {
		fprintf(stderr, "bench-sodium: cannot read /proc/self or allocate the table\n");
		exit(1);
	}
	for (n = 0; n < cap; n++) {
		if (n == SAMPLE_LIVE && (statm(&size1, &res1) || (vmas1 = maps_count()) < 0)) {
			fprintf(stderr, "bench-sodium: cannot read /proc/self\n");
			exit(1);
		}
		p[n] = s->malloc(32);
		if (!p[n]) {
			err = errno;
			break;
		}
	}
	printf("live %ld\ncapped %d\nerrno %d\n", n, n == cap, err);
	if (vmas1 >= 0)
		printf("vmas %.3f\nspace %.3f\nresident %.3f\n", (double)(vmas1 - vmas0) / SAMPLE_LIVE,
		       (double)(size1 - size0) / SAMPLE_LIVE, (double)(res1 - res0) / SAMPLE_LIVE);
	while (n-- > 0)
		s->free(p[n]);
	free(p);
}

static int worker(const char *what, long cap)
{
	struct sodium s;

	sodium_open(&s);
	printf("from %s\n", s.from);
	if (!strcmp(what, "speed"))
		printf("ns %.1f\n", speed(&s));
	else
		live(&s, cap);
	return 0;
}

struct result {
	const char *why;	/* not measured, and why; NULL when measured */
	char from[PATH_MAX];
	double ns[MAX_ROUNDS], median_ns;
	long live;
	int capped, err;
	double vmas, space, resident;	/* per live allocation; -1: not sampled */
};

/* Runs this program as a worker, @shim preloaded or none, and reads its report into @r. */
static void run_worker(const char *shim, const char *what, long cap, struct result *r, int round)
{
	char cap_arg[32], line[PATH_MAX + 32], self[PATH_MAX];
	int fd[2], status;
	ssize_t len;
	FILE *f;
	pid_t pid;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0 || pipe(fd)) {
		perror("bench-sodium");
		exit(1);
	}
	self[len] = '\0';
	snprintf(cap_arg, sizeof(cap_arg), "%ld", cap);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("bench-sodium: fork");
		exit(1);
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		if (shim)
			setenv("LD_PRELOAD", shim, 1);
		else
			unsetenv("LD_PRELOAD");
		unsetenv("MMKIT_STATS");
		execl(self, self, "--worker", what, cap_arg, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "from ", 5))
			snprintf(r->from, sizeof(r->from), "%.*s", (int)sizeof(r->from) - 1, line + 5);
		sscanf(line, "ns %lf", &r->ns[round]);
		sscanf(line, "live %ld", &r->live);
		sscanf(line, "capped %d", &r->capped);
		sscanf(line, "errno %d", &r->err);
		sscanf(line, "vmas %lf", &r->vmas);
		sscanf(line, "space %lf", &r->space);
		sscanf(line, "resident %lf", &r->resident);
	}
	if (f)
		fclose(f);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench-sodium: the %s worker (%s) failed\n", what,
			shim ? "with the shim" : "plain libsodium");
		exit(1);
	}
}

/*
 * The shim beside this program's directory in a build tree (bench/..), or
 * where make install put it (PRELOADDIR, as mmkit run looks for it).
 */
static const char *find_shim(void)
{
	static char path[PATH_MAX];
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(path, sizeof(path), "%s/../%s", self, SHIM_NAME) < (int)sizeof(path) &&
			    !access(path, R_OK))
				return realpath(path, NULL);
		}
	}
	if (snprintf(path, sizeof(path), "%s/%s", MMKIT_PRELOADDIR, SHIM_NAME) < (int)sizeof(path) &&
	    !access(path, R_OK))
		return path;
	return NULL;
}

static long parse_num(const char *s, long lo, long hi, const char *opt)
{
	char *end;
	long v;

	errno = 0;
	v = s ? strtol(s, &end, 10) : 0;
	if (!s || errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "bench-sodium: %s from %ld to %ld\n", opt, lo, hi);
		exit(2);
	}
	return v;
}

static void print_row(const char *what, double plain, double shim, const char *unit, int lower_better)
{
	printf("%-44s %12.2f %12.2f", what, plain, shim);
	if (plain > 0 && shim > 0)
		printf("   %8.2fx %s", lower_better ? plain / shim : shim / plain, unit);
	printf("\n");
}

#define USAGE	"usage: mmkit bench sodium [--json] [--quick] [--rounds N] [--cap N] [--shim PATH]\n" \
		"  (defaults: 3 rounds, cap 100000; --quick: 1 round, cap 10001)\n"

static void print_text(const struct result *plain, const struct result *shimmed, int rounds)
{
	int i;

	printf("sodium_malloc/sodium_free: libsodium (%s) and the mmkit shim (%s),\n"
	       "one run, the two taking turns; time: median of %d rounds\n\n", plain->from,
	       shimmed->from, rounds);
	printf("%-44s %12s %12s   %s\n", "", "LIBSODIUM", "MMKIT-SODIUM", "RATIO");
	print_row("ns per sodium_malloc(32)+sodium_free", plain->median_ns, shimmed->median_ns,
		  "faster", 1);
	print_row("live 32 B allocations before failure", (double)plain->live, (double)shimmed->live,
		  "more", 0);
	if (plain->vmas >= 0 && shimmed->vmas >= 0) {
		print_row("VMAs per live allocation", plain->vmas, shimmed->vmas, "fewer", 1);
		print_row("address-space pages per live allocation", plain->space, shimmed->space,
			  "fewer", 1);
		print_row("resident pages per live allocation", plain->resident, shimmed->resident,
			  "fewer", 1);
	}
	for (i = 0; i < 2; i++) {
		const struct result *r = i ? shimmed : plain;

		printf("%s: %s\n", i ? "mmkit-sodium" : "libsodium",
		       r->capped ? "the cap was reached before any failure (--cap)" :
		       r->err ? strerror(r->err) : "failed without errno");
	}
	printf("(VMAs and pages sampled at %d live; vm.max_map_count bounds the live count)\n",
	       SAMPLE_LIVE);
}

static void print_json(int argc, char **argv, struct result *const res[2], int rounds, long cap,
		       int quick)
{
	static const char *const label[2] = { "libsodium", "mmkit-sodium" };
	const struct result *plain = res[0], *shimmed = res[1];
	int i;

	report_begin("sodium", argc, argv);
	report_param_int("rounds", rounds);
	report_param_int("cap", cap);
	report_param_int("sample_live", SAMPLE_LIVE);
	report_param_int("batches_per_round", BATCHES);
	report_param_double("batch_ms", BATCH_NS / 1e6);
	report_param_bool("quick", quick);
	for (i = 0; i < 2; i++)
		if (!res[i]->why) {
			report_param_str(i ? "mmkit_sodium_from" : "libsodium_from", res[i]->from);
			report_param_bool(i ? "mmkit_sodium_reached_cap" : "libsodium_reached_cap",
					  res[i]->capped);
		}
	for (i = 0; i < 2; i++) {
		report_row_begin("speed", NULL, label[i]);
		if (res[i]->why)
			report_row_unavailable(res[i]->why);
		else
			report_metric("alloc_free", "ns", res[i]->ns, rounds);
		report_row_end();
	}
	for (i = 0; i < 2; i++) {
		report_row_begin("live", NULL, label[i]);
		if (res[i]->why)
			report_row_unavailable(res[i]->why);
		else
			report_metric_value("allocations", "allocations", (double)res[i]->live);
		report_row_end();
	}
	for (i = 0; i < 2; i++) {
		const char *why = res[i]->why ? res[i]->why :
				  res[i]->vmas < 0 ? "fewer live allocations than the sample point" : NULL;

		report_row_begin("vmas_per_allocation", NULL, label[i]);
		if (why)
			report_row_unavailable(why);
		else
			report_metric_value("vmas", "VMAs", res[i]->vmas);
		report_row_end();
		report_row_begin("pages_per_allocation", NULL, label[i]);
		if (why) {
			report_row_unavailable(why);
		} else {
			report_metric_value("address_space", "pages", res[i]->space);
			report_metric_value("resident", "pages", res[i]->resident);
		}
		report_row_end();
	}
	if (!plain->why && !shimmed->why) {
		report_ratio("libsodium over mmkit-sodium, time per pair", plain->median_ns / shimmed->median_ns);
		report_ratio("mmkit-sodium over libsodium, live allocations",
			     (double)shimmed->live / (double)plain->live);
		if (plain->vmas >= 0 && shimmed->vmas > 0)
			report_ratio("libsodium over mmkit-sodium, VMAs per allocation",
				     plain->vmas / shimmed->vmas);
	}
	report_end();
}

/* Why libsodium cannot be measured here, NULL if it can. */
static const char *libsodium_missing(void)
{
	static char why[256];
	void *h = dlopen(LIBSODIUM, RTLD_LAZY | RTLD_LOCAL);

	if (h) {
		dlclose(h);
		return NULL;
	}
	snprintf(why, sizeof(why), "%s (Debian package libsodium23)", dlerror());
	return why;
}

int main(int argc, char **argv)
{
	static struct result plain, shimmed;
	struct result *const res[2] = { &plain, &shimmed };
	const char *shim = NULL;
	long long given_rounds = 0, given_cap = 0;
	long cap;
	int rounds, json = 0, quick = 0, i, ret;
	const struct bench_option opts[] = {
		{ "--json", BENCH_FLAG, .flag = &json },
		{ "--quick", BENCH_FLAG, .flag = &quick },
		{ "--rounds", BENCH_NUMBER, 1, MAX_ROUNDS, .number = &given_rounds },
		{ "--cap", BENCH_NUMBER, SAMPLE_LIVE + 1, MAX_CAP, .number = &given_cap },
		{ "--shim", BENCH_STRING, .string = &shim },
		{ NULL },
	};

	if (argc == 4 && !strcmp(argv[1], "--worker"))
		return worker(argv[2], parse_num(argv[3], SAMPLE_LIVE + 1, MAX_CAP, "--cap"));
	ret = bench_options("sodium", USAGE, opts, argc, argv);
	if (ret >= 0)
		return ret;
	rounds = (int)given_rounds;
	cap = (long)given_cap;
	/* What was given is kept, with or without --quick. */
	if (!rounds)
		rounds = quick ? 1 : 3;
	if (!cap)
		cap = quick ? QUICK_CAP : DEFAULT_CAP;
	if (shim && access(shim, R_OK)) {
		fprintf(stderr, "bench-sodium: --shim %s: %s\n", shim, strerror(errno));
		return 1;
	}
	if (!shim)
		shim = find_shim();
	plain.why = shimmed.why = libsodium_missing();
	if (!shimmed.why && !shim)
		shimmed.why = "no " SHIM_NAME " beside the build tree or in " MMKIT_PRELOADDIR
			      " (give --shim PATH)";
	for (i = 0; i < rounds && !plain.why; i++) {
		progress("round %d of %d", i + 1, rounds);
		run_worker(NULL, "speed", cap, &plain, i);
		if (!shimmed.why)
			run_worker(shim, "speed", cap, &shimmed, i);
	}
	plain.vmas = shimmed.vmas = -1;
	progress("live allocations, up to %ld", cap);
	if (!plain.why)
		run_worker(NULL, "live", cap, &plain, 0);
	if (!shimmed.why)
		run_worker(shim, "live", cap, &shimmed, 0);
	progress_done();
	if ((!shimmed.why && !strstr(shimmed.from, SHIM_NAME)) || (!plain.why && strstr(plain.from, SHIM_NAME))) {
		fprintf(stderr, "bench-sodium: sodium_malloc came from %s and %s: not libsodium and the shim\n",
			plain.from, shimmed.from);
		return 1;
	}
	for (i = 0; i < 2; i++)
		if (!res[i]->why)
			res[i]->median_ns = median_of(res[i]->ns, rounds);
	if (json) {
		print_json(argc, argv, res, rounds, cap, quick);
		return 0;
	}
	if (plain.why || shimmed.why) {
		for (i = 0; i < 2; i++)
			if (res[i]->why)
				printf("%s: unavailable: %s\n", i ? "mmkit-sodium" : "libsodium", res[i]->why);
		printf("no comparison: one side is unavailable here\n");
		return 0;
	}
	print_text(&plain, &shimmed, rounds);
	return 0;
}
