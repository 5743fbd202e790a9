/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What lib/names.c (mmkit_name() and its registry) and lib/regions.c
 * (mmkit_regions(), which reads registries) share; not installed.
 */
#ifndef MMKIT_NAMES_H
#define MMKIT_NAMES_H

#include <stdint.h>

#include "internal.h"

/*
 * One named range [start, end).  Also the layout of a registry entry in the
 * memfd, so fixed-size fields: a 64-bit reader can read a 32-bit process.
 */
struct mmkit__name_range {
	uint64_t start;
	uint64_t end;
	char name[MMKIT_NAME_MAX];
};

/*
 * The registry of process @pid (0: this one): a malloc'ed array in *@out,
 * sorted by start and not overlapping (NULL when empty).  Returns how many
 * entries, or -errno.  Entries of another process that do not obey the
 * naming rules are left out: that process's memory is not trusted.
 */
ssize_t mmkit__names_get(pid_t pid, struct mmkit__name_range **out);

/* A line of /proc/PID/maps, or the first line of a VMA in /proc/PID/smaps. */
struct mmkit__vma {
	uint64_t start;
	uint64_t end;
	char perms[5];
	const char *path;	/* path_len bytes, not NUL-terminated; "" for none */
	size_t path_len;
};

/* Parses [line, eol); -EINVAL if it is not a VMA line. */
int mmkit__vma_parse(const char *line, const char *eol, struct mmkit__vma *v);
/* 1 if @v is MAP_SHARED | MAP_ANONYMOUS memory: shmem shown as "/dev/zero (deleted)". */
int mmkit__vma_anon_shmem(const struct mmkit__vma *v);
/*
 * 1 if the kernel would name @v: madvise_vma_anon_name() refuses a VMA with
 * a file (EBADF) unless it is anonymous shared memory.
 */
int mmkit__vma_nameable(const struct mmkit__vma *v);

#endif /* MMKIT_NAMES_H */
