// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The procfs layer over a file made from the input, as mmkit maps reads
 * another process's smaps: the line reader, then each line through the
 * maps-line parser, the "Key: N kB" reader, the VmFlags reader and the
 * /proc/PID/stat reader.
 */
#include <fcntl.h>
#include <string.h>

#include "procfs.h"
#include "fuzz.h"

static void check_line(const char *line, const char *eol)
{
	enum mmkit__proc_kind kind;
	unsigned long long bytes;
	struct mmkit__vma v;

	F_CHECK(eol >= line && eol - line <= MMKIT__LINE_MAX);
	F_CHECK(!memchr(line, '\n', (size_t)(eol - line)));
	if (mmkit__vma_parse(line, eol, &v) == 0) {
		F_CHECK(v.path >= line && v.path + v.path_len <= eol);
		F_CHECK(strchr("r-", v.perms[0]) && strchr("w-", v.perms[1]) &&
			strchr("x-", v.perms[2]) && strchr("ps", v.perms[3]) &&
			v.perms[0] && v.perms[1] && v.perms[2] && v.perms[3] && !v.perms[4]);
		mmkit__vma_anon_shmem(&v);
	}
	if (mmkit__kb_line(line, eol, "Rss", &bytes))
		F_CHECK(bytes % 1024 == 0 || bytes == ~0ULL);
	mmkit__kb_line(line, eol, "VmLck", &bytes);
	mmkit__vmflags_has(line, eol, "lo");
	if (mmkit__stat_parse(line, eol, &kind) == 0)
		F_CHECK(kind == MMKIT__PROC_USER || kind == MMKIT__PROC_KTHREAD ||
			kind == MMKIT__PROC_ZOMBIE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmkit__lines l;
	const char *line, *eol;
	char path[64];
	size_t seen = 0;
	int fd = f_memfd("fuzz-smaps", data, size), ret;

	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	F_CHECK(mmkit__lines_open(&l, AT_FDCWD, path) == 0);
	while ((ret = mmkit__lines_next(&l, &line, &eol)) == 1) {
		check_line(line, eol);
		seen += (size_t)(eol - line) + 1;
	}
	/* The end, or a line too long: never an error that is not -EIO. */
	F_CHECK(ret == 0 || ret == -EIO);
	F_CHECK(ret != 0 || seen >= size);
	mmkit__lines_close(&l);
	close(fd);
	return 0;
}
