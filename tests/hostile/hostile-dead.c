// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-dead [N]: N registries (1 if not given) whose writer died in the
 * middle of an update: each a memfd named like the library's, naming 4
 * pages "dead-named", its seq odd, as a writer leaves it when killed
 * between the start and the end of a change.  The entries themselves are
 * intact.  A reader waits a while for such a writer, once per read of the
 * process, not once per registry.  Prints "ready".
 */
#include <sys/mman.h>

#include "hostile.h"
#include "../names-registry.h"

int main(int argc, char **argv)
{
	size_t len = 4 * (size_t)sysconf(_SC_PAGESIZE);
	struct mmkit__registry_header h = registry_forged_header(1, 3);
	struct mmkit__name_range e;
	int n = argc > 1 ? atoi(argv[1]) : 1, i, fd = 2;
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		hostile_fail("mmap", -errno);
	memset(p, 1, len);
	memset(&e, 0, sizeof(e));
	e.start = (uintptr_t)p;
	e.end = e.start + len;
	snprintf(e.name, sizeof(e.name), "dead-named");
	for (i = 0; i < n; i++) {
		fd = registry_forge(&h, &e, 1, fd);
		if (fd < 0)
			hostile_fail("writing a registry", -errno);
	}
	hostile_ready("registries=%d seq=%u", n, h.seq);
}
