// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-dead: a registry whose writer died in the middle of an update:
 * 4 pages named "dead-named", then the header's seq made odd through the
 * memfd, as a writer leaves it when killed between write_begin and
 * write_end.  The entries themselves are intact.  Prints "ready".
 */
#include <stddef.h>
#include <sys/mman.h>

#include "hostile.h"
#include "../names-registry.h"

int main(void)
{
	size_t len = 4 * (size_t)sysconf(_SC_PAGESIZE);
	off_t at = offsetof(struct mmkit__registry_header, seq);
	uint32_t seq;
	void *p;
	int fd;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		hostile_fail("mmap", -errno);
	memset(p, 1, len);
	hostile_name(p, len, "dead-named");
	fd = registry_fd();
	if (fd < 0)
		hostile_fail("finding the registry", -ENOENT);
	if (pread(fd, &seq, sizeof(seq), at) != sizeof(seq))
		hostile_fail("reading seq", -EIO);
	seq |= 1;
	if (pwrite(fd, &seq, sizeof(seq), at) != sizeof(seq))
		hostile_fail("writing seq", -EIO);
	hostile_ready("seq=%u", seq);
}
