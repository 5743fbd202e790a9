// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-names DIR: names built to attack a terminal and a JSON parser.
 * Maps a page of a file DIR/NAME and a memfd named MEMFD, both holding ESC
 * sequences, BEL, DEL, a tab, a newline (which the kernel writes as \012),
 * a backslash, a C1 control (U+009B, CSI on some terminals), valid UTF-8
 * and bytes that are not UTF-8; sets its comm to such bytes too and holds
 * memfd_secret memory (if the kernel has it) for mmkit secrets to find.
 * Prints "ready secret=1" (or 0).  tests/test-hostile.sh knows the names.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "hostile.h"

#define FILE_NAME	"f\x1b[31mred\x07\x7f\xff\xc3\xa9\xc2\x9b\\\tnl\nend"
#define MEMFD_NAME	"m\x1b]0;title\x07\xfe\xc2\x85"
#define COMM		"c\x1b[5m\xff\nx"

static void *map_page(int fd, const char *what)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (ftruncate(fd, page))
		hostile_fail(what, -errno);
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		hostile_fail(what, -errno);
	memset(p, 1, (size_t)page);
	return p;
}

int main(int argc, char **argv)
{
	char path[4096];
	int fd, secret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: hostile-names DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/%s", argv[1], FILE_NAME);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		hostile_fail("creating the file", -errno);
	map_page(fd, "the file");
	fd = memfd_create(MEMFD_NAME, MFD_CLOEXEC);
	if (fd < 0)
		hostile_fail("memfd_create", -errno);
	map_page(fd, "the memfd");
	fd = (int)syscall(SYS_memfd_secret, 0);
	if (fd >= 0) {
		map_page(fd, "the memfd_secret");
		secret = 1;
	}
	if (prctl(PR_SET_NAME, COMM))
		hostile_fail("PR_SET_NAME", -errno);
	hostile_ready("secret=%d", secret);
}
