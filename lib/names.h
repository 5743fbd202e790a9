/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * Named anonymous memory, in four files that call one way:
 *   names.c           mmkit_name(): the kernel's rules, prctl where the
 *                     kernel names VMAs, else the registry;
 *   names-read.c      reading the registry of any process, for
 *                     mmkit_regions() (regions.c);
 *   names-registry.c  this process's registry: the names it keeps where
 *                     the kernel cannot, and what naming a range does;
 *   names-memfd.c     the memfd other processes read them from (the
 *                     format below), written under names-registry.c's lock.
 * Not installed.
 */
#ifndef MMKIT_NAMES_H
#define MMKIT_NAMES_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

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

/* An array of named ranges, sorted by start, not overlapping. */
struct mmkit__name_table {
	struct mmkit__name_range *e;
	size_t n;
};

/*
 * The registry memfd: this header, then two areas of `cap` entries each,
 * sorted by start: the live entries (`count`), changed in place under
 * `seq`, and a snapshot (`snap_count`), a copy of the live entries as
 * they were at live seq `snap_of`, written under `snap_seq` when a reader
 * asks for one (names-memfd.c).  Only the writer writes the file: it
 * is sealed against writes, shrinking and growing by anyone else.
 */
struct mmkit__registry_header {
	uint32_t magic;
	uint32_t version;
	uint32_t seq;		/* odd while the writer changes the live entries */
	uint32_t count;		/* live entries */
	uint32_t cap;		/* entries each area has room for */
	uint32_t snap_seq;	/* odd while the writer writes the snapshot */
	uint32_t snap_count;	/* entries in the snapshot */
	uint32_t snap_of;	/* the live seq the snapshot is a copy of */
};

#define MMKIT__REGISTRY_NAME	"mmkit-names"
/* How a registry descriptor reads in /proc/PID/fd. */
#define MMKIT__REGISTRY_LINK	"/memfd:" MMKIT__REGISTRY_NAME " (deleted)"
#define MMKIT__REGISTRY_MAGIC	0x4e4b4d4du	/* "MMKN" */
#define MMKIT__REGISTRY_VERSION	3u
/*
 * The writer spends on snapshots, in any stretch of time T, at most
 * MMKIT__REGISTRY_SNAP_BURST_NS + T / MMKIT__REGISTRY_SNAP_RATIO of its CPU
 * time (a budget that fills at that rate up to the burst; a snapshot
 * needs some left).  The burst covers one copy of the largest registry a
 * reader takes, also on a slow machine: the first copy faults in the
 * snapshot area, which under emulation made 60,000 entries dearer than
 * 0.1 s, and the debt that left outlasted a reader's deadline (EAGAIN in
 * test-names-load's busy case, in the arm64 guests).
 */
#define MMKIT__REGISTRY_SNAP_RATIO	32
#define MMKIT__REGISTRY_SNAP_BURST_NS	500000000ll
/* How long a reader keeps trying, in all, to read the registries of a process. */
#define MMKIT__REGISTRY_READ_DEADLINE_NS	2000000000ull
/*
 * What readers lock (F_OFD_SETLK, F_RDLCK), the byte at each offset: to
 * ask for a snapshot, and while reading one, which the writer then leaves
 * alone for up to MMKIT__REGISTRY_SNAP_HOLD_NS: as long as a reader may
 * try, so that only a peer that never lets go sees it replaced.
 */
#define MMKIT__REGISTRY_LOCK_ASK	0
#define MMKIT__REGISTRY_LOCK_READING	1
#define MMKIT__REGISTRY_SNAP_HOLD_NS	MMKIT__REGISTRY_READ_DEADLINE_NS

/* names-memfd.c's state of one registry memfd (only names-memfd.c uses the fields). */
struct mmkit__names_memfd {
	int fd;				/* -1 until the first name is stored */
	struct mmkit__registry_header *hdr;	/* the memfd, mapped MAP_SHARED: only written */
	size_t cap;			/* entries each area of the memfd holds */
	dev_t dev;			/* the file fd must still refer to */
	ino_t ino;
	uint32_t seq;			/* the live entries' seq, even */
	uint32_t snap_seq;		/* the snapshot's seq, even */
	uint32_t snap_of;		/* the live seq the snapshot is a copy of */
	size_t snap_from, snap_to;	/* entries changed since the snapshot */
	size_t snap_faulted;		/* entries of the snapshot area faulted in */
	uint64_t snap_made;		/* when the snapshot was made (ns) */
	int64_t snap_budget;		/* ns that snapshots may take now */
	uint64_t snap_budget_at;	/* when snap_budget was counted (ns), 0: never */
};

/*
 * A registry (names-registry.c): the names of one process's memory, and the
 * memfd showing them.  This process's own, for mmkit_name(); or, in a
 * supervisor (mmkit run --names, cli/names-supervise.c), one per process it
 * names for, whose VMAs it reads through /proc.
 */
struct mmkit__registry {
	pthread_mutex_t lock;		/* serialises the writers */
	struct mmkit__name_table t;	/* the names: what the memfd shows is a copy */
	size_t room;			/* entries t.e has room for */
	size_t prune_at;		/* entries that make registry_prune() look */
	struct mmkit__names_memfd memfd;
	int used;			/* a name was stored once: set under lock, read without */
};

/* Registry size below which unmapped ranges are not looked for (registry_prune()). */
#define MMKIT__REGISTRY_PRUNE_MIN	64
#define MMKIT__REGISTRY_INIT	{ .lock = PTHREAD_MUTEX_INITIALIZER, \
				  .prune_at = MMKIT__REGISTRY_PRUNE_MIN, .memfd = { .fd = -1 } }

/* names.c: 0 if the kernel names VMAs itself (CONFIG_ANON_VMA_NAME), else why not. */
int mmkit__kernel_names(void);

/*
 * names.c: the checks prctl(PR_SET_VMA_ANON_NAME) makes of its arguments,
 * in its order: @name (NULL: clear), then the range of @len bytes at @addr,
 * into [*@start, *@end) (empty: nothing to do).  0 or -EINVAL, with the
 * reason in mmkit_last_error().
 */
int mmkit__name_check(uint64_t addr, uint64_t len, const char *name, uint64_t *start,
		      uint64_t *end);

/* names-registry.c */
/* Names [start, end) @name (NULL: no name) in this process's registry, like madvise_walk_vmas(). */
int mmkit__registry_name(uint64_t start, uint64_t end, const char *name, int after_kernel);
/*
 * The same in registry @r of another process, whose VMAs are read from
 * /proc/@tid/maps (a thread of it, stopped in its naming call).
 */
int mmkit__registry_name_of(struct mmkit__registry *r, pid_t tid, uint64_t start, uint64_t end,
			    const char *name);
/* Makes @r hold the @n entries @e (sorted, not overlapping) and a memfd showing them. */
int mmkit__registry_fill(struct mmkit__registry *r, const struct mmkit__name_range *e, size_t n);
/* The descriptor of @r's memfd, made if there is none yet; or -errno. */
int mmkit__registry_memfd(struct mmkit__registry *r, struct stat *st);
/* Frees @r's names and closes its memfd. */
void mmkit__registry_release(struct mmkit__registry *r);
/*
 * [@from, @from + @len) is unmapped or moved by the library: its names go,
 * those of its first @keep bytes to [@to, @to + @keep).  0 or -errno (the
 * names are then as they were, or partly moved).
 */
int mmkit__registry_moved(uint64_t from, uint64_t len, uint64_t keep, uint64_t to);
/*
 * For a supervisor following a process's mremap() in registry @r, in two
 * steps around the call: take copies the names of [@from, @from + @keep)
 * into *@moved (offsets from @from: malloc'ed, NULL if none) and drops
 * those of [@from, @from + @len), making room for the names put back
 * (the memfd is not replaced by put); how many, or -errno.  put names
 * [@to, @to + @span) with nothing but the @n entries @moved at @to.
 */
ssize_t mmkit__registry_take(struct mmkit__registry *r, uint64_t from, uint64_t len,
			     uint64_t keep, struct mmkit__name_range **moved);
int mmkit__registry_put(struct mmkit__registry *r, uint64_t to, uint64_t span,
			const struct mmkit__name_range *moved, size_t n);
/* A VMA: whether the kernel would name it. */
struct mmkit__span {
	uint64_t start;
	uint64_t end;
	int nameable;
};
/* All the VMAs of process @tid (0: this one) into *@out (malloc'ed); how many, or -errno. */
ssize_t mmkit__vma_spans(pid_t tid, struct mmkit__span **out);
/* 1 if this process ever stored a name in the registry: only then can there be one to clear. */
int mmkit__registry_named(void);
/* A malloc'ed copy of this process's registry entries; how many, or -errno. */
ssize_t mmkit__registry_copy(struct mmkit__name_range **out);
/*
 * Names [start, end) @name (NULL: no name) in the sorted array @e of *@n
 * entries, which has room for 2 more.  Returns the first entry changed;
 * *@last (if not NULL) gets the end of the entries changed.
 */
size_t mmkit__ranges_set(struct mmkit__name_range *e, size_t *n, uint64_t start, uint64_t end,
			 const char *name, size_t *last);

/*
 * names-memfd.c: showing this process's names @t to other processes.  Each
 * with names-registry.c's lock held.
 */
/* Makes sure there is a usable memfd showing @t, with room for @need entries. */
int mmkit__names_memfd_ready(struct mmkit__names_memfd *m, const struct mmkit__name_table *t,
			     size_t need);
/* Shows entries [@first, @last) of @t, and its count, if there is a memfd. */
void mmkit__names_memfd_publish(struct mmkit__names_memfd *m, const struct mmkit__name_table *t,
				size_t first, size_t last);
/* Brings the snapshot up to date with @t if a reader asks and the ration allows. */
void mmkit__names_memfd_snapshot(struct mmkit__names_memfd *m, const struct mmkit__name_table *t);
/* In a child after fork: a memfd of its own showing @t, or none. */
void mmkit__names_memfd_fork(struct mmkit__names_memfd *m, const struct mmkit__name_table *t);
/* Unmaps and closes the memfd. */
void mmkit__names_memfd_release(struct mmkit__names_memfd *m);

/*
 * names-read.c: the registry of process @pid (0: this one), a malloc'ed
 * array in *@out, sorted by start and not overlapping (NULL when empty).
 * @procfd: /proc/@pid already open (-1: opened here by number), so that a
 * caller reading other /proc files of the process reads one process even
 * if the number is reused meanwhile; given, it is read through /proc even
 * for this process (else this process's is copied under its lock).  Returns how many entries, or -errno.
 * Entries of another process that do not obey the naming rules are left
 * out: that process's memory is not trusted.
 */
ssize_t mmkit__names_get(pid_t pid, int procfd, struct mmkit__name_range **out);

/*
 * The entries of the registry open at @fd (another process's: checked like
 * any), a malloc'ed array in *@out; how many, -E2BIG past @max, or -errno.
 */
ssize_t mmkit__names_read_fd(int fd, size_t max, struct mmkit__name_range **out);

/* What mmkit__names_read() met in another process's descriptors. */
struct mmkit__names_stats {
	size_t registries;	/* distinct registry files read */
	size_t duplicates;	/* more descriptors of a file read already: skipped */
	size_t decoys;		/* links that read like a registry's, not a memfd: skipped */
	size_t too_big;		/* registries past the bound on entries read in all: skipped */
};

/* mmkit__names_get(), telling in *@stats what it met. */
ssize_t mmkit__names_read(pid_t pid, int procfd, struct mmkit__name_range **out,
			  struct mmkit__names_stats *stats);

#endif /* MMKIT_NAMES_H */
