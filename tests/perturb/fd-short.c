// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * For tests/test-perturb-fd-short.sh, run with the perturb shim: the first
 * large block is asked for with no descriptor left (RLIMIT_NOFILE lowered
 * to the lowest free one), so the shim cannot make its reference pages
 * (a memfd) and the block is glibc's; the second once the limit is back.
 * Both must read as the fill; MMKIT_STATS then says which the shim served.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#define LARGE	(1UL << 20)

/* Fresh memory is read on purpose: the compiler must not see where it came from. */
static unsigned char *fresh(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : "+r"(p));
	return p;
}

static int check(const char *what, const unsigned char *p, unsigned char fill)
{
	size_t i;

	for (i = 0; p && i < LARGE; i++)
		if (p[i] != fill)
			break;
	if (p && i == LARGE)
		return 0;
	fprintf(stderr, "fd-short: the %s block %s\n", what, p ? "is not the fill" : "is NULL");
	return 1;
}

int main(void)
{
	const char *env = getenv("MALLOC_PERTURB_");
	unsigned char fill, *first, *second;
	struct rlimit saved, rl;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (!env || fd < 0 || close(fd) || getrlimit(RLIMIT_NOFILE, &saved)) {
		fprintf(stderr, "fd-short: no MALLOC_PERTURB_, or no /dev/null or rlimit\n");
		return 2;
	}
	fill = (unsigned char)(strtoul(env, NULL, 0) ^ 0xff);
	rl = saved;
	rl.rlim_cur = (rlim_t)fd;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 2;
	first = fresh(LARGE);
	if (setrlimit(RLIMIT_NOFILE, &saved))
		return 2;
	second = fresh(LARGE);
	return check("first", first, fill) | check("second", second, fill);
}
