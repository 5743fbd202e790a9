// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit secrets [PID] [--json]: the processes on this machine (or process
 * PID alone) that hold memfd_secret memory, as open descriptors or as
 * mappings -- what to look for when hibernation is refused because secret
 * memory exists.  A
 * secretmem file shows up as "/secretmem (deleted)" in /proc/PID/fd links
 * and in /proc/PID/maps.  Processes whose /proc entries cannot be read
 * (another user's, without root) are counted and listed, never skipped
 * silently; processes that exit during the scan are not.
 *
 * JSON keys (stable): {"processes": [{"pid": N, "command": "...",
 * "fds": N, "fd_bytes": N, "mappings": N, "mapped_bytes": N}],
 * "total_fds": N, "total_mapped_bytes": N, "scanned": N,
 * "unreadable": N, "unreadable_pids": [N, ...]}.  fd_bytes is the size of
 * the files behind the descriptors, mapped_bytes the size of the mappings.
 * The command (comm) may hold any byte but NUL: it is escaped, in the table
 * like ls -b, in JSON as valid UTF-8 (see cli_text_string() and
 * cli_json_string() in cli.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "procfs.h"

struct holder {
	pid_t pid;
	char command[64];
	unsigned long long fds, fd_bytes, mappings, mapped_bytes;
};

struct scan {
	struct holder *holders;
	size_t nholders;
	pid_t *unreadable;
	size_t nunreadable;
	unsigned long long scanned;
};

struct fd_count {
	unsigned long long *fds, *bytes;
};

static int count_fd(int fd_dir, const char *name, void *arg)
{
	struct fd_count *c = arg;
	struct stat st;

	(*c->fds)++;
	if (!fstatat(fd_dir, name, &st, 0))
		*c->bytes += (unsigned long long)st.st_size;
	return 0;
}

int cli_secret_fds(int procfd, unsigned long long *fds, unsigned long long *bytes)
{
	int fd = openat(procfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;
	struct fd_count c = { fds, bytes };

	if (fd < 0)
		return -errno;
	ret = mmkit__fds_linked_to(fd, CLI_SECRETMEM_NAME, count_fd, &c);
	close(fd);
	return ret;
}

/* Sums the secretmem mappings of /proc/PID/maps; -errno if unreadable. */
static int scan_maps(int procfd, struct holder *h)
{
	struct mmkit__lines maps;
	const char *line, *eol;
	struct mmkit__vma v;
	int ret;

	ret = mmkit__lines_open(&maps, procfd, "maps");
	if (ret)
		return ret;
	while ((ret = mmkit__lines_next(&maps, &line, &eol)) == 1) {
		if (mmkit__vma_parse(line, eol, &v) || !mmkit__vma_path_is(&v, CLI_SECRETMEM_NAME))
			continue;
		h->mappings++;
		h->mapped_bytes += v.end - v.start;
	}
	mmkit__lines_close(&maps);
	/* An unreadable maps opens but fails on the first read. */
	return ret;
}

static int add(void **array, size_t *n, size_t size, const void *item)
{
	void *bigger = realloc(*array, (*n + 1) * size);

	if (!bigger)
		return -ENOMEM;
	*array = bigger;
	memcpy((char *)bigger + *n * size, item, size);
	(*n)++;
	return 0;
}

static int scan_pid(struct scan *s, int proc, const char *name)
{
	struct holder h = { 0 };
	int procfd, fds, maps;

	h.pid = (pid_t)atoi(name);
	procfd = openat(proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return 0;
	fds = cli_secret_fds(procfd, &h.fds, &h.fd_bytes);
	maps = scan_maps(procfd, &h);
	if (fds == -ENOENT || maps == -ENOENT || fds == -ESRCH || maps == -ESRCH) {
		close(procfd);
		return 0;
	}
	s->scanned++;
	if (fds || maps) {
		close(procfd);
		return add((void **)&s->unreadable, &s->nunreadable, sizeof(pid_t), &h.pid);
	}
	cli_read_command(procfd, h.command, sizeof(h.command));
	close(procfd);
	if (!h.fds && !h.mappings)
		return 0;
	return add((void **)&s->holders, &s->nholders, sizeof(h), &h);
}

static void print_json(const struct scan *s)
{
	unsigned long long fds = 0, bytes = 0;
	size_t i;

	printf("{\"processes\": [");
	for (i = 0; i < s->nholders; i++) {
		const struct holder *h = &s->holders[i];

		printf("%s\n  {\"pid\": %d, \"command\": ", i ? "," : "", (int)h->pid);
		cli_json_string(stdout, h->command);
		printf(", \"fds\": %llu, \"fd_bytes\": %llu, \"mappings\": %llu, \"mapped_bytes\": %llu}",
		       h->fds, h->fd_bytes, h->mappings, h->mapped_bytes);
		fds += h->fds;
		bytes += h->mapped_bytes;
	}
	printf("%s],\n \"total_fds\": %llu, \"total_mapped_bytes\": %llu, \"scanned\": %llu,"
	       " \"unreadable\": %zu, \"unreadable_pids\": [", s->nholders ? "\n" : "", fds, bytes,
	       s->scanned, s->nunreadable);
	for (i = 0; i < s->nunreadable; i++)
		printf("%s%d", i ? ", " : "", (int)s->unreadable[i]);
	printf("]}\n");
}

/* @pid: the one process asked about, or 0. */
static void print_table(const struct scan *s, pid_t pid)
{
	unsigned long long bytes = 0;
	size_t i;
	int width;

	if (!s->nholders && pid)
		printf("process %d holds no memfd_secret memory\n", (int)pid);
	else if (!s->nholders)
		printf("no process holds memfd_secret memory (%llu processes scanned)\n", s->scanned);
	else
		printf("%7s %-16s %5s %12s %8s %14s\n", "PID", "COMMAND", "FDS", "FD_BYTES",
		       "MAPPINGS", "MAPPED_BYTES");
	for (i = 0; i < s->nholders; i++) {
		const struct holder *h = &s->holders[i];

		printf("%7d ", (int)h->pid);
		width = cli_text_string(stdout, h->command);
		printf("%*s %5llu %12llu %8llu %14llu\n", width < 16 ? 16 - width : 0, "", h->fds,
		       h->fd_bytes, h->mappings, h->mapped_bytes);
		bytes += h->mapped_bytes;
	}
	if (s->nholders)
		printf("%llu bytes mapped by %zu process%s (%llu scanned)\n", bytes, s->nholders,
		       s->nholders == 1 ? "" : "es", s->scanned);
	if (s->nunreadable) {
		printf("%zu process%s could not be read (permission denied):", s->nunreadable,
		       s->nunreadable == 1 ? "" : "es");
		for (i = 0; i < s->nunreadable; i++)
			printf(" %d", (int)s->unreadable[i]);
		printf("\n");
	}
}

int cmd_secrets(const struct cli_args *a)
{
	struct scan s = { 0 };
	struct dirent *de;
	char name[16];
	pid_t pid = 0;
	DIR *proc;
	int ret = 0;

	if (a->n && cli_parse_pid(a->operand[0], &pid)) {
		cli_error("secrets: '%s' is not a PID (a positive number)", a->operand[0]);
		return CLI_EXIT_USAGE;
	}
	proc = opendir("/proc");
	if (!proc) {
		cli_error("secrets: /proc: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (pid) {
		snprintf(name, sizeof(name), "%d", (int)pid);
		ret = scan_pid(&s, dirfd(proc), name);
		if (!ret && !s.scanned)
			ret = -ESRCH;
		else if (!ret && s.nunreadable)
			ret = -EACCES;
	} else {
		while (!ret && (de = readdir(proc)))
			if (isdigit((unsigned char)de->d_name[0]))
				ret = scan_pid(&s, dirfd(proc), de->d_name);
	}
	closedir(proc);
	if (ret) {
		if (ret == -ESRCH)
			cli_error("secrets: no process %d", (int)pid);
		else if (pid)
			cli_error("secrets: process %d: %s", (int)pid, strerror(-ret));
		else
			cli_error("secrets: %s", strerror(-ret));
		free(s.holders);
		free(s.unreadable);
		return CLI_EXIT_FAIL;
	}
	if (a->json)
		print_json(&s);
	else
		print_table(&s, pid);
	free(s.holders);
	free(s.unreadable);
	return CLI_EXIT_OK;
}
