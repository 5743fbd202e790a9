// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * For tests/test-perturb-protect.sh: a 1 MiB posix_memalign() block,
 * written, then protected ("readonly": all of it PROT_READ; "mixed": its
 * first half PROT_READ, a page PROT_READ | PROT_EXEC, a page PROT_NONE,
 * the rest left read-write; "nofd": left read-write, and the call made
 * with no descriptor left to open), then given to mlock(2) ("mlock") or
 * madvise(2) (the advice named), which the perturb shim makes anonymous
 * memory first.  Prints what the call returned, the protection of the
 * block's pages as /proc/self/maps shows it, whether every byte is still
 * what was written (the PROT_NONE page made readable to see); then writes
 * to the first page, read-only (but with "nofd"):
 * SIGSEGV, as with glibc, or "written" if the write went through.  What
 * the block maps before the call goes to stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define SIZE	(1UL << 20)
#define HALF	(SIZE / 2)

/* Says on stderr what the page at @p maps (a path, or nothing for anonymous memory). */
static void print_backing(uintptr_t p)
{
	char line[512];
	uintptr_t start, end;
	int path = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f) {
		perror("/proc/self/maps");
		exit(2);
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %n", &start, &end,
			   &path) == 2 && start <= p && p < end)
			fprintf(stderr, "backing: %s", line + path);
	fclose(f);
}

/* Prints the protection of [p, p + SIZE), one line per run of pages alike. */
static void print_protection(uintptr_t p)
{
	char line[512], perms[5], last[4] = "";
	uintptr_t start, end, from = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f) {
		perror("/proc/self/maps");
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &start, &end, perms) != 3)
			continue;
		if (end <= p || start >= p + SIZE)
			continue;
		perms[3] = '\0';
		start = start < p ? 0 : start - p;
		if (*last && strcmp(last, perms)) {
			printf("%#zx-%#zx %s\n", (size_t)from, (size_t)start, last);
			from = start;
		}
		strcpy(last, perms);
	}
	fclose(f);
	printf("%#zx-%#zx %s\n", (size_t)from, (size_t)SIZE, last);
}

/* No descriptor left to open (RLIMIT_NOFILE's soft limit at the lowest free one); @on 0: back. */
static void no_fds(int on)
{
	static struct rlimit saved;
	struct rlimit rl;
	int fd;

	if (!on) {
		setrlimit(RLIMIT_NOFILE, &saved);
		return;
	}
	fd = dup(0);
	if (fd < 0 || close(fd) || getrlimit(RLIMIT_NOFILE, &saved))
		exit(2);
	rl = saved;
	rl.rlim_cur = (rlim_t)fd;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		exit(2);
}

static int advice_of(const char *name)
{
	if (!strcmp(name, "dontfork"))
		return MADV_DONTFORK;
	if (!strcmp(name, "wipeonfork"))
		return MADV_WIPEONFORK;
	if (!strcmp(name, "dontdump"))
		return MADV_DONTDUMP;
	return -1;
}

int main(int argc, char **argv)
{
	size_t page = (size_t)getpagesize(), i;
	unsigned char *p;
	void *mem;
	int ret, mixed, nofd;

	if (argc != 3 ||
	    (strcmp(argv[1], "readonly") && strcmp(argv[1], "mixed") && strcmp(argv[1], "nofd")) ||
	    (strcmp(argv[2], "mlock") && advice_of(argv[2]) < 0)) {
		fprintf(stderr, "usage: protect-lock readonly|mixed|nofd mlock|dontfork|wipeonfork|dontdump\n");
		return 2;
	}
	mixed = !strcmp(argv[1], "mixed");
	nofd = !strcmp(argv[1], "nofd");
	if (posix_memalign(&mem, page, SIZE))
		return 2;
	p = mem;
	for (i = 0; i < SIZE; i++)
		p[i] = (unsigned char)(i / page * 7 + 1);
	if ((!nofd && mprotect(p, mixed ? HALF : SIZE, PROT_READ)) ||
	    (mixed && (mprotect(p + HALF, page, PROT_READ | PROT_EXEC) ||
		       mprotect(p + HALF + page, page, PROT_NONE)))) {
		printf("mprotect: %s\n", strerror(errno));
		return 2;
	}
	print_backing((uintptr_t)p);
	if (nofd)
		no_fds(1);
	ret = !strcmp(argv[2], "mlock") ? mlock(p, SIZE) : madvise(p, SIZE, advice_of(argv[2]));
	if (nofd)
		no_fds(0);
	printf("%s: %s\n", argv[2], ret ? strerrorname_np(errno) : "0");
	print_protection((uintptr_t)p);
	/* The unreadable page is read once readable again. */
	if (mixed && mprotect(p + HALF + page, page, PROT_READ)) {
		printf("mprotect: %s\n", strerror(errno));
		return 2;
	}
	for (i = 0; i < SIZE; i++) {
		if (p[i] != (unsigned char)(i / page * 7 + 1)) {
			printf("byte %zu changed\n", i);
			return 1;
		}
	}
	printf("contents kept\n");
	fflush(stdout);
	p[0] = 0;
	printf("written\n");
	return 0;
}
