// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-peer ATTACK PID FD: attacks the registry of process PID, its
 * descriptor FD, with only what read access to the process gives: it
 * opens /proc/PID/fd/FD (read-write if it may, as the owner of the file
 * may).  Attacks:
 *   count  writes count = 200,000 into the header (the writer used to copy
 *          that many entries, past the end of the file: SIGBUS), tries to
 *          map the file writable and to shrink it; prints what it got to
 *          do and exits;
 *   pause  asks the writer for pauses, for as long as it lives: holds a
 *          read lock on the file (how readers ask for a snapshot) and
 *          writes the longest pause into the header, where version 2 of
 *          the registry kept the field readers asked pauses with.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "names.h"

/* Version 2's pause_us: the fifth 32-bit field of the header. */
#define V2_PAUSE_OFFSET	16

int main(int argc, char **argv)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	uint32_t count = 200000, pause_us = 500000;
	char path[64];
	void *map;
	int fd;

	if (argc != 4 || (strcmp(argv[1], "count") && strcmp(argv[1], "pause"))) {
		fprintf(stderr, "usage: hostile-peer count|pause PID FD\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%s/fd/%s", argv[2], argv[3]);
	fd = open(path, O_RDWR);
	if (fd < 0)
		fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	if (!strcmp(argv[1], "count")) {
		printf("write count: %s\n",
		       pwrite(fd, &count, sizeof(count),
			      offsetof(struct mmkit__registry_header, count)) == sizeof(count) ?
		       "done" : strerror(errno));
		map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		printf("map writable: %s\n", map != MAP_FAILED ? "done" : strerror(errno));
		printf("shrink: %s\n", !ftruncate(fd, 0) ? "done" : strerror(errno));
		return 0;
	}
	if (fcntl(fd, F_OFD_SETLK, &fl))
		perror("F_OFD_SETLK");
	printf("asking\n");
	fflush(stdout);
	for (;;) {
		/*
		 * The field an older writer honoured: set again at once, as
		 * each write the writer made cleared it.  A sealed registry
		 * refuses the write; the peer keeps trying all the same.
		 */
		if (pwrite(fd, &pause_us, sizeof(pause_us), V2_PAUSE_OFFSET) < 0)
			errno = 0;
		usleep(1000);
	}
}
