// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * named-memory: names anonymous memory with mmkit_name() and waits, so that
 * `mmkit maps PID` (or any reader of mmkit_regions()) can show it.
 *
 *   named-memory [NAME [PAGES [TOUCH]]]      defaults: example-cache 64 16
 *
 * Maps 2 * PAGES pages of anonymous memory in one mapping and names the
 * second half NAME, so that the report splits the mapping: [anon] for the
 * first half, [anon:NAME] for the second.  Writes to TOUCH pages of each
 * half, prints "ready PID" and waits for a signal (or 10 minutes).  Try:
 *
 *   build/examples/named-memory & build/mmkit maps $!
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "mmkit.h"

static unsigned long arg_number(const char *s, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s < '0' || *s > '9' || *end || !v) {
		fprintf(stderr, "named-memory: %s must be a positive number, not '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "example-cache";
	unsigned long pages = argc > 2 ? arg_number(argv[2], "PAGES") : 64;
	unsigned long touch = argc > 3 ? arg_number(argv[3], "TOUCH") : 16;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long i;
	char *mem;
	int ret;

	if (argc > 4 || touch > pages) {
		fprintf(stderr, "usage: named-memory [NAME [PAGES [TOUCH]]]  (TOUCH <= PAGES)\n");
		return 2;
	}
	mem = mmap(NULL, 2 * pages * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("named-memory: mmap");
		return 1;
	}
	ret = mmkit_name(mem + pages * page, pages * page, name);
	if (ret) {
		fprintf(stderr, "named-memory: mmkit_name(\"%s\"): %s\n", name, strerror(-ret));
		return 1;
	}
	for (i = 0; i < touch; i++) {
		mem[i * page] = 1;
		mem[(pages + i) * page] = 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	alarm(600);
	for (;;)
		pause();
}
