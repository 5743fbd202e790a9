/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* What the subcommands of the mmkit command share. */
#ifndef MMKIT_CLI_H
#define MMKIT_CLI_H

#include <stdio.h>
#include <sys/types.h>

/* Exit codes: success, a failure while working, bad usage or input. */
#define CLI_EXIT_OK	0
#define CLI_EXIT_FAIL	1
#define CLI_EXIT_USAGE	2

/* What a subcommand is given: its operands, the options taken out. */
struct cli_args {
	int n;			/* how many operands */
	char **operand;		/* operand[0] .. operand[n - 1], then NULL */
	int json;		/* --json was given */
};

/* The subcommands; each returns the exit code. */
int cmd_probe(const struct cli_args *a);
int cmd_maps(const struct cli_args *a);
int cmd_secrets(const struct cli_args *a);
int cmd_memlock(const struct cli_args *a);
int cmd_bench(const struct cli_args *a);
int cmd_run(const struct cli_args *a);
int cmd_top(const struct cli_args *a);
int cmd_export(const struct cli_args *a);

/*
 * The value of option @name at argv[*i]: "--name=VALUE", or "--name VALUE"
 * (the next word, *i moved past it), as getopt_long takes them.  NULL if
 * argv[*i] is not @name; *@missing is set when @name came without a value.
 */
const char *cli_option_value(const char *name, int argc, char **argv, int *i, int *missing);
/* The comm of the process whose /proc directory is @procfd, "?" if unreadable. */
void cli_read_command(int procfd, char *command, size_t len);
/* What a memfd_secret file shows in /proc/PID/fd links and maps. */
#define CLI_SECRETMEM_NAME	"/secretmem (deleted)"
/*
 * Counts the memfd_secret descriptors of the process whose /proc directory
 * is @procfd into *@fds, the size of their files into *@bytes; -errno if
 * they cannot be listed (cli/secrets.c).
 */
int cli_secret_fds(int procfd, unsigned long long *fds, unsigned long long *bytes);

/*
 * mmkit run --names (names-supervise.c): runs the program @argv as a child,
 * answering its prctl(PR_SET_VMA_ANON_NAME) calls, and returns the exit
 * code (the program's); -1 if the kernel names VMAs itself, and the
 * program is to run as without --names.
 */
int cli_names_run(char **argv);
/*
 * names-supervise.c, for names-run.c: makes ready to answer the program's
 * calls sent to @listener (0, or -errno), and answers @req in @resp.
 */
struct seccomp_notif;
struct seccomp_notif_resp;
int cli_names_supervisor(int listener);
void cli_names_answer(struct seccomp_notif *req, struct seccomp_notif_resp *resp);
/*
 * Looks at the mremap() calls followed whose time has come (or at that of
 * thread @tid if not 0); the ms until the next look, or -1 if none.
 */
int cli_names_followups(pid_t tid);

/* Prints "mmkit: " and the formatted message to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The escapers of names read from other processes (file paths in
 * /proc/PID/maps may hold any byte but '/' and NUL, comm any but NUL):
 * nothing they write can move a terminal's cursor or break a JSON parser.
 *
 * Text, like ls -b: a control byte (below 0x20, and DEL), a C1 control
 * (U+0080 to U+009F, each of its two bytes) and a byte that is not part of
 * valid UTF-8 become \xNN, a backslash becomes \\; valid UTF-8 passes.
 * Returns the width written, counting a character as one column.
 */
int cli_text_string(FILE *f, const char *s);
/*
 * A JSON string literal, quotes included, always valid UTF-8: control
 * bytes and C1 controls as \u00XX, valid UTF-8 as it is, and a byte that
 * is not valid UTF-8 as the four characters \xNN (written \\xNN), which
 * a name's own backslash-x-hex would also decode to.
 */
void cli_json_string(FILE *f, const char *s);
/*
 * A label value of the Prometheus and OpenMetrics text formats, quotes
 * included: a double quote and a newline escaped as the formats say (\",
 * \n); the value always valid UTF-8 without control characters: another
 * control byte, a C1 control's bytes and a byte that is not valid UTF-8
 * become the four characters \xNN (written \\xNN).  A backslash of the
 * name becomes two in the value (written \\\\), so that distinct names
 * stay distinct series: a name's own text \xff is \\xff, a byte 0xff \xff.
 */
void cli_label_string(FILE *f, const char *s);
/*
 * Parses a size in bytes, the one parser of every size the command and the
 * benchmarks take: decimal digits, a fraction of up to 6 digits, then K, M,
 * G or T (either case, powers of 1024), alone or as KiB, MiB, GiB, TiB:
 * 4096, 64K, 64KiB, 1.5G, 1T.  A fraction must come to whole bytes.
 * -ERANGE past 2^64 - 1, -EINVAL for anything else that is not a size.
 */
int cli_parse_size(const char *s, unsigned long long *out);
/* The help text's words for what cli_parse_size() takes. */
#define CLI_SIZE_FORMS	"bytes, with an optional K, M, G or T (powers of 1024), KiB to TiB " \
			"too: 4096, 64K, 64MiB, 1.5G"
/* Parses a PID: a positive decimal number. */
int cli_parse_pid(const char *s, pid_t *out);

/* The directory this program's binary is in (/proc/self/exe), into @dir. */
int cli_self_dir(char *dir, size_t len);
/* CLOCK_MONOTONIC in seconds: deadlines and durations. */
double cli_now(void);

#endif /* MMKIT_CLI_H */
