/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * Memory by name, of one process (mmkit maps) or of every process the
 * caller may read (mmkit top, mmkit export): mmkit_regions() per process,
 * its regions summed per name in one table.
 */
#ifndef MMKIT_CLI_FLEET_H
#define MMKIT_CLI_FLEET_H

#include <stddef.h>
#include <sys/types.h>

#include "mmkit.h"

/* The values summed, in bytes.  USS: Private_Clean + Private_Dirty. */
enum { V_SIZE, V_RSS, V_PSS, V_PRIVATE_DIRTY, V_USS, V_SWAP, V_LOCKED, V_NVALUES };

/* A name, and the sums of the regions reported under it. */
struct group {
	char *name;			/* as mmkit maps shows it: [anon:NAME], a path, [heap]... */
	enum mmkit_region_kind kind;
	unsigned long long mappings;
	unsigned long long processes;	/* how many processes map it (fleet tables) */
	pid_t last_pid;			/* the last process counted in processes */
	unsigned long long v[V_NVALUES];
};

/*
 * The groups, and an index of them by (kind, name): open addressing, each
 * slot a group's number + 1 (0: empty), at most half full, so that 60,000
 * names are grouped in linear time.
 */
struct groups {
	struct group *g;
	size_t n, cap;
	size_t *index;
	size_t index_cap;	/* a power of two */
};

/* The name @r is reported under (malloc'd), NULL without memory. */
char *group_name(const struct mmkit_region *r);
/* The group of (@kind, @name), made (with a copy of @name) if new; NULL without memory. */
struct group *groups_get(struct groups *gs, enum mmkit_region_kind kind, const char *name);
/* Adds @r's values to @g. */
void group_add(struct group *g, const struct mmkit_region *r);
/* Adds @from's values and mappings to @to. */
void group_sum(struct group *to, const struct group *from);
void groups_free(struct groups *gs);
/* "kernel" or "registry": who named a group's memory. */
const char *group_source(enum mmkit_region_kind kind);

/* Which processes a fleet scan reads, and which of their regions. */
#define FLEET_MAX_PIDS	1024
struct fleet_filter {
	pid_t pids[FLEET_MAX_PIDS];	/* only these (npids of them), or all if npids is 0 */
	size_t npids;
	int by_user;
	uid_t uid;			/* with by_user: only processes of this user */
	const char *name_glob;		/* only regions whose name matches (fnmatch), or NULL */
	int secrets;			/* also count each process's memfd_secret descriptors */
};

/* One process read whole. */
struct fleet_proc {
	pid_t pid;
	uid_t uid;
	char command[64];		/* comm, as the kernel has it */
	unsigned long long mappings;
	unsigned long long v[V_NVALUES];
	unsigned long long refpage_cache;	/* PSS of reference pages less their copies: page cache */
	unsigned long long secret_mapped;	/* bytes of memfd_secret mappings */
	unsigned long long secret_fds, secret_fd_bytes;	/* with filter.secrets */
};

/*
 * The result of a scan.  A process that cannot be read is skipped and
 * counted, never a failure of the whole scan: gone (exited before or while
 * it was read), denied (another user's, or not dumpable, without
 * privilege) or failed (anything else: a line longer than mmkit reads).
 */
struct fleet {
	struct groups names;
	struct fleet_proc *procs;
	size_t nprocs, procs_cap;	/* the processes with memory the filter let through */
	unsigned long long read;	/* processes read whole, kernel threads included */
	unsigned long long gone, denied, failed;
};

/*
 * The last option parser of top and export: takes the filter's option at
 * argv[*i] into @flt: --name GLOB, --user USER (a name or a number), --pid
 * PID[,PID...] (the value after = or as the next word), and returns 0 (*i
 * moved past it).  -1 after a message naming @cmd for a bad value, an
 * option without its value (@missing: the command's own), an unknown
 * option or an operand.
 */
int fleet_option(const char *cmd, int argc, char **argv, int *i, struct fleet_filter *flt,
		 int missing);
/* The help lines of those options. */
#define FLEET_OPTIONS_HELP \
	"  --name GLOB   only memory whose name matches GLOB (fnmatch(3), quoted:\n" \
	"                '[[]heap]' for [heap], '[[]anon:*' for named anonymous memory)\n" \
	"  --user USER   only processes of USER (a name or a number: the owner of\n" \
	"                /proc/PID)\n" \
	"  --pid PID[,PID...]\n" \
	"                only these processes (up to 1024)\n"

/* The most threads a scan reads processes with. */
#define FLEET_THREADS	8

/*
 * Reads every process of /proc that @flt lets through; -errno only when
 * /proc cannot be listed or memory runs out (after a message).
 */
int fleet_scan(struct fleet *f, const struct fleet_filter *flt);
void fleet_free(struct fleet *f);

#endif /* MMKIT_CLI_FLEET_H */
