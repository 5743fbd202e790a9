// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-longline DIR: a mapped file whose line in /proc/PID/maps is
 * longer than 4096 bytes and holds a forged line from byte 4095 on:
 * DIR/PAD.../FORGED/secretmem (deleted), FORGED being "START-END rw-s
 * 00000000 00:00 0 ".  A reader that splits lines at 4096 bytes (fgets
 * into a 4096-byte buffer) takes the rest for a secretmem mapping of
 * 256 MiB.  The padding is sized by renaming its last directory once the
 * file is mapped, the kernel's part of the line being known then.  This
 * process holds no secret memory.  Prints "ready".
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>

#include "hostile.h"
#include "procfs.h"

#define FORGED		"7f0000000000-7f0010000000 rw-s 00000000 00:00 0 "
#define SPLIT		4095	/* where fgets(buf, 4096) ends its first piece */
#define PAD		150	/* bytes of each padding directory's name */
#define LAST		50	/* of the last one, before it is resized */

static char pad[PAD + 1], last[LAST + 1], resized[256];

/* Where FORGED begins in the maps line of the mapping at @addr, -1 if absent. */
static long forged_offset(void *addr)
{
	struct mmkit__lines maps;
	const char *line, *eol, *f;
	struct mmkit__vma v;
	long at = -1;

	if (mmkit__lines_open(&maps, AT_FDCWD, "/proc/self/maps"))
		hostile_fail("opening /proc/self/maps", -EIO);
	while (at < 0 && mmkit__lines_next(&maps, &line, &eol) == 1) {
		if (mmkit__vma_parse(line, eol, &v) || v.start != (uintptr_t)addr)
			continue;
		f = memmem(line, (size_t)(eol - line), FORGED, strlen(FORGED));
		if (f)
			at = f - line;
	}
	mmkit__lines_close(&maps);
	return at;
}

int main(int argc, char **argv)
{
	int dir, next, parent = -1, i, pads;
	long at;
	void *p;

	if (argc != 2) {
		fprintf(stderr, "usage: hostile-longline DIR\n");
		return 2;
	}
	memset(pad, 'p', PAD);
	memset(last, 'l', LAST);
	/* The kernel's part of a line is about 73 bytes: the rest is path. */
	pads = (int)((SPLIT - 73 - strlen(argv[1]) - 1 - LAST - 1) / (PAD + 1));
	dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; dir >= 0 && i <= pads + 1; i++) {
		const char *name = i < pads ? pad : i == pads ? last : FORGED;

		if (mkdirat(dir, name, 0700))
			hostile_fail("mkdir", -errno);
		next = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (i == pads)
			parent = dir;	/* kept to rename the last padding */
		else
			close(dir);
		dir = next;
	}
	if (dir < 0)
		hostile_fail("opening the directories", -errno);
	next = openat(dir, "secretmem (deleted)", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (next < 0 || ftruncate(next, sysconf(_SC_PAGESIZE)))
		hostile_fail("creating the file", -errno);
	p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, next, 0);
	if (p == MAP_FAILED)
		hostile_fail("mmap", -errno);
	at = forged_offset(p);
	if (at < 0 || LAST + SPLIT - at < 1 || LAST + SPLIT - at > 255)
		hostile_fail("sizing the padding", -ERANGE);
	memset(resized, 'l', (size_t)(LAST + SPLIT - at));
	if (renameat(parent, last, parent, resized))
		hostile_fail("renaming the padding", -errno);
	if (forged_offset(p) != SPLIT)
		hostile_fail("placing the forged line", -ERANGE);
	hostile_ready("at=%d", SPLIT);
}
