// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-decoy: a descriptor that reads in /proc/PID/fd like a registry,
 * "/memfd:mmkit-names (deleted)", but is a FIFO without a writer: a reader
 * that opens it blocking waits forever.  The FIFO is made at
 * /memfd:mmkit-names (root only: "/" is root's) and unlinked once open.
 * Names 4 pages "decoy-real" through its real registry too.  Prints
 * "ready".
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "hostile.h"

#define DECOY		"/memfd:" MMKIT__REGISTRY_NAME

int main(void)
{
	size_t len = 4 * (size_t)sysconf(_SC_PAGESIZE);
	void *p;
	int fd;

	if (geteuid())
		hostile_skip("the decoy is made in /, which takes root");
	if (mkfifo(DECOY, 0600) && errno != EEXIST)
		hostile_fail("mkfifo " DECOY, -errno);
	/* Read-only and non-blocking: opened without a writer, and none ever comes. */
	fd = open(DECOY, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	unlink(DECOY);
	if (fd < 0)
		hostile_fail("opening " DECOY, -errno);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		hostile_fail("mmap", -errno);
	memset(p, 1, len);
	hostile_name(p, len, "decoy-real");
	hostile_ready("fd=%d", fd);
}
