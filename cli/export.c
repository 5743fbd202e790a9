// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit export: the figures of mmkit top as metrics, in the Prometheus text
 * format 0.0.4 or OpenMetrics 1.0, on standard output, into a file for
 * node_exporter's textfile collector (--textfile, written to a temporary
 * file and renamed over PATH: a reader sees the old file or the new one,
 * never half of one), or over HTTP (--listen, export-http.c).
 *
 * Metrics (see mmkit(1) for the whole list): per name, mmkit_name_*_bytes
 * {name, kind} for size, rss, pss, uss, swap and locked, mmkit_name_processes
 * and mmkit_name_mappings; at most --max-series names each, the largest PSS
 * first, the rest summed into name="[other]", kind="other" and counted in
 * mmkit_scrape_folded_names.  Per process for the --top-processes largest
 * PSS: mmkit_process_*_bytes {pid, command, user}.  Secret memory per
 * holding process (what mmkit secrets shows) and in all; the page cache of
 * reference pages; what the scrape read and skipped; the endpoint's
 * counters (*_total).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "export.h"

#define DEFAULT_MAX_SERIES	500
#define MAX_SERIES_LIMIT	1000000

static const struct {
	int v;
	const char *name, *help;
} byte_metrics[] = {
	{ V_SIZE, "size", "Virtual memory mapped" },
	{ V_RSS, "rss", "Resident memory (RSS)" },
	{ V_PSS, "pss", "Proportional set size (PSS): resident memory, shared pages divided among their mappers" },
	{ V_USS, "uss", "Unique set size (USS): resident memory mapped by one process only (Private_Clean + Private_Dirty)" },
	{ V_SWAP, "swap", "Memory swapped out" },
	{ V_LOCKED, "locked", "Locked memory (mlock)" },
};

#define NBYTE_METRICS	(sizeof(byte_metrics) / sizeof(byte_metrics[0]))

static const char *const reject_reasons[REJECT_COUNT] = {
	[REJECT_BAD_REQUEST] = "bad_request",
	[REJECT_TOO_LARGE] = "too_large",
	[REJECT_TIMEOUT] = "timeout",
	[REJECT_BUSY] = "busy",
	[REJECT_NOT_FOUND] = "not_found",
};

/*
 * The HELP, TYPE (and in OpenMetrics UNIT) lines of a family.  @name is the
 * family's: a counter's samples add _total, which the text format 0.0.4
 * puts in the family's name too.
 */
static void family(FILE *f, int om, const char *name, const char *type, const char *help)
{
	const char *total = !om && !strcmp(type, "counter") ? "_total" : "";
	size_t len = strlen(name);

	fprintf(f, "# HELP %s%s %s.\n# TYPE %s%s %s\n", name, total, help, name, total, type);
	if (om && len > 6 && !strcmp(name + len - 6, "_bytes"))
		fprintf(f, "# UNIT %s bytes\n", name);
	else if (om && len > 8 && !strcmp(name + len - 8, "_seconds"))
		fprintf(f, "# UNIT %s seconds\n", name);
}

static int by_pss_name(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->v[V_PSS] != y->v[V_PSS])
		return x->v[V_PSS] < y->v[V_PSS] ? 1 : -1;
	if (strcmp(x->name, y->name))
		return strcmp(x->name, y->name);
	return (int)x->kind - (int)y->kind;
}

static int by_pss_pid(const void *a, const void *b)
{
	const struct fleet_proc *x = a, *y = b;

	if (x->v[V_PSS] != y->v[V_PSS])
		return x->v[V_PSS] < y->v[V_PSS] ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void name_labels(FILE *f, const struct group *g)
{
	fputs("{name=", f);
	cli_label_string(f, g->name);
	fprintf(f, ",kind=\"%s\"}", g->kind > MMKIT_REGION_SPECIAL ? "other" :
		mmkit_region_kind_name(g->kind));
}

/* The per-name families: @n groups of their own, then @other if @folded names are in it. */
static void write_names(FILE *f, int om, const struct group *g, size_t n, const struct group *other,
			unsigned long long folded)
{
	char metric[64];
	size_t i, j;

	for (j = 0; j < NBYTE_METRICS + 2; j++) {
		if (j < NBYTE_METRICS) {
			snprintf(metric, sizeof(metric), "mmkit_name_%s_bytes", byte_metrics[j].name);
			family(f, om, metric, "gauge", byte_metrics[j].help);
		} else {
			snprintf(metric, sizeof(metric), "mmkit_name_%s",
				 j == NBYTE_METRICS ? "processes" : "mappings");
			family(f, om, metric, "gauge", j == NBYTE_METRICS ?
			       "Processes mapping memory under the name; for [other], the sum over "
			       "its names (a process mapping two is counted twice)" :
			       "Mappings (or parts of one a registry name covers) under the name");
		}
		for (i = 0; i <= n; i++) {
			const struct group *s = i < n ? &g[i] : other;

			if (i == n && !folded)
				break;
			fputs(metric, f);
			name_labels(f, s);
			fprintf(f, " %llu\n", j < NBYTE_METRICS ? s->v[byte_metrics[j].v] :
				j == NBYTE_METRICS ? s->processes : s->mappings);
		}
	}
}

static void user_label(FILE *f, uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	char num[16];

	snprintf(num, sizeof(num), "%u", (unsigned int)uid);
	cli_label_string(f, pw ? pw->pw_name : num);
}

static void process_labels(FILE *f, const struct fleet_proc *p, int user)
{
	fprintf(f, "{pid=\"%d\",command=", (int)p->pid);
	cli_label_string(f, p->command);
	if (user) {
		fputs(",user=", f);
		user_label(f, p->uid);
	}
	fputc('}', f);
}

static void write_processes(FILE *f, int om, const struct fleet *fl, size_t k)
{
	char metric[64];
	size_t i, j;

	for (j = 0; j < NBYTE_METRICS; j++) {
		snprintf(metric, sizeof(metric), "mmkit_process_%s_bytes", byte_metrics[j].name);
		family(f, om, metric, "gauge", byte_metrics[j].help);
		for (i = 0; i < k && i < fl->nprocs; i++) {
			fputs(metric, f);
			process_labels(f, &fl->procs[i], 1);
			fprintf(f, " %llu\n", fl->procs[i].v[byte_metrics[j].v]);
		}
	}
}

/* Secret memory per holding process and in all, reference pages' page cache. */
static void write_special(FILE *f, int om, const struct fleet *fl)
{
	unsigned long long mapped = 0, fd_bytes = 0, refpage = 0;
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		family(f, om, pass ? "mmkit_process_secret_fd_bytes" : "mmkit_process_secret_mapped_bytes",
		       "gauge", pass ? "Size of the memfd_secret files a process holds open" :
		       "memfd_secret memory a process maps");
		for (i = 0; i < fl->nprocs; i++) {
			const struct fleet_proc *p = &fl->procs[i];

			if (!p->secret_mapped && !p->secret_fds)
				continue;
			fputs(pass ? "mmkit_process_secret_fd_bytes" : "mmkit_process_secret_mapped_bytes", f);
			process_labels(f, p, 0);
			fprintf(f, " %llu\n", pass ? p->secret_fd_bytes : p->secret_mapped);
		}
	}
	for (i = 0; i < fl->nprocs; i++) {
		mapped += fl->procs[i].secret_mapped;
		fd_bytes += fl->procs[i].secret_fd_bytes;
		refpage += fl->procs[i].refpage_cache;
	}
	family(f, om, "mmkit_secret_mapped_bytes", "gauge",
	       "memfd_secret memory mapped, summed over processes");
	fprintf(f, "mmkit_secret_mapped_bytes %llu\n", mapped);
	family(f, om, "mmkit_secret_fd_bytes", "gauge",
	       "Size of the memfd_secret files held open, summed over processes");
	fprintf(f, "mmkit_secret_fd_bytes %llu\n", fd_bytes);
	family(f, om, "mmkit_refpage_page_cache_bytes", "gauge",
	       "Page cache of reference-page files mapped (their PSS less the pages written, which are copies), summed over processes");
	fprintf(f, "mmkit_refpage_page_cache_bytes %llu\n", refpage);
}

static void write_scrape(FILE *f, int om, const struct fleet *fl, unsigned long long folded,
			 double seconds, const struct export_counters *c)
{
	int i;

	family(f, om, "mmkit_scrape_processes", "gauge",
	       "Processes of this scrape: read whole, or skipped as gone, denied or failed");
	fprintf(f, "mmkit_scrape_processes{result=\"read\"} %llu\n"
		"mmkit_scrape_processes{result=\"gone\"} %llu\n"
		"mmkit_scrape_processes{result=\"denied\"} %llu\n"
		"mmkit_scrape_processes{result=\"failed\"} %llu\n",
		fl->read, fl->gone, fl->denied, fl->failed);
	family(f, om, "mmkit_scrape_folded_names", "gauge",
	       "Names past --max-series, summed into the series of the name [other]");
	fprintf(f, "mmkit_scrape_folded_names %llu\n", folded);
	family(f, om, "mmkit_scrape_duration_seconds", "gauge", "Time this scrape took to read the processes");
	fprintf(f, "mmkit_scrape_duration_seconds %.6f\n", seconds);
	family(f, om, "mmkit_exporter_scrapes", "counter", "Scrapes served since the exporter started");
	fprintf(f, "mmkit_exporter_scrapes_total %llu\n", c->scrapes);
	family(f, om, "mmkit_exporter_rejected_requests", "counter",
	       "Requests refused or dropped since the exporter started, by reason");
	for (i = 0; i < REJECT_COUNT; i++)
		fprintf(f, "mmkit_exporter_rejected_requests_total{reason=\"%s\"} %llu\n",
			reject_reasons[i], c->rejected[i]);
}

int export_write(FILE *f, const struct export_opts *o, int om, const struct export_counters *c)
{
	struct group other = { .name = "[other]", .kind = MMKIT_REGION_SPECIAL + 1 };
	unsigned long long folded = 0;
	double start = cli_now();
	struct fleet fl;
	size_t own, i;
	int ret;

	ret = fleet_scan(&fl, &o->flt);
	if (ret)
		return ret;
	/* Nothing may have been read (another user's processes only): no NULL to qsort. */
	if (fl.names.n)
		qsort(fl.names.g, fl.names.n, sizeof(*fl.names.g), by_pss_name);
	own = fl.names.n;
	/* Past the cap, the last series of each metric is [other]. */
	if (own > o->max_series) {
		own = o->max_series - 1;
		for (i = own; i < fl.names.n; i++) {
			group_sum(&other, &fl.names.g[i]);
			other.processes += fl.names.g[i].processes;
		}
		folded = fl.names.n - own;
	}
	write_names(f, om, fl.names.g, own, &other, folded);
	if (o->top_processes) {
		if (fl.nprocs)
			qsort(fl.procs, fl.nprocs, sizeof(*fl.procs), by_pss_pid);
		write_processes(f, om, &fl, o->top_processes);
	}
	write_special(f, om, &fl);
	write_scrape(f, om, &fl, folded, cli_now() - start, c);
	if (om)
		fputs("# EOF\n", f);
	fleet_free(&fl);
	return 0;
}

/*
 * Writes the metrics (the text format 0.0.4, which node_exporter reads) to
 * a new file beside @path, then renames it over @path.
 */
static int write_textfile(const struct export_opts *o)
{
	static const struct export_counters none;
	char tmp[PATH_MAX];
	FILE *f = NULL;
	int fd, ret;

	/* Not .prom, which node_exporter would read half written; not guessable. */
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", o->textfile) >= (int)sizeof(tmp)) {
		cli_error("export: --textfile: the path is too long");
		return CLI_EXIT_USAGE;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	/* 0644 whatever the umask: node_exporter runs as a user of its own. */
	if (fd >= 0 && !fchmod(fd, 0644))
		f = fdopen(fd, "w");
	if (!f) {
		cli_error("export: --textfile: cannot create %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return CLI_EXIT_FAIL;
	}
	ret = export_write(f, o, 0, &none);
	if (!ret && (fflush(f) || fsync(fileno(f))))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, o->textfile))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		cli_error("export: --textfile %s: %s", o->textfile, strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

/* A positive count up to @max. */
static int parse_count(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct export_opts *o)
{
	const char *value;
	int i, missing = 0;

	o->max_series = DEFAULT_MAX_SERIES;
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--openmetrics")) {
			o->openmetrics = 1;
		} else if ((value = cli_option_value("--max-series", argc, argv, &i, &missing))) {
			if (parse_count(value, 2, MAX_SERIES_LIMIT, &o->max_series)) {
				cli_error("export: --max-series: '%s' is not a number from 2 to %d",
					  value, MAX_SERIES_LIMIT);
				return -1;
			}
		} else if ((value = cli_option_value("--top-processes", argc, argv, &i, &missing))) {
			if (parse_count(value, 0, MAX_SERIES_LIMIT, &o->top_processes)) {
				cli_error("export: --top-processes: '%s' is not a number from 0 to %d",
					  value, MAX_SERIES_LIMIT);
				return -1;
			}
		} else if ((value = cli_option_value("--listen", argc, argv, &i, &missing))) {
			o->listen = value;
		} else if ((value = cli_option_value("--textfile", argc, argv, &i, &missing))) {
			o->textfile = value;
		} else if (fleet_option("export", argc, argv, &i, &o->flt, missing)) {
			return -1;
		}
	}
	if (o->listen && o->textfile) {
		cli_error("export: --listen and --textfile: one or the other");
		return -1;
	}
	if (o->openmetrics && (o->listen || o->textfile)) {
		cli_error("export: --openmetrics is for standard output: over HTTP the scraper's "
			  "Accept header chooses, a textfile is in the text format node_exporter reads");
		return -1;
	}
	return 0;
}

int cmd_export(const struct cli_args *a)
{
	static const struct export_counters none;
	struct export_opts o = { 0 };

	if (parse_opts(a->n, a->operand, &o))
		return CLI_EXIT_USAGE;
	o.flt.secrets = 1;
	if (o.listen)
		return export_serve(&o);
	if (o.textfile)
		return write_textfile(&o);
	if (export_write(stdout, &o, o.openmetrics, &none))
		return CLI_EXIT_FAIL;
	return fflush(stdout) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
