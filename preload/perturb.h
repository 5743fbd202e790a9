/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What the two files of libmmkit-perturb.so share: the allocator
 * (perturb.c), which owns the table of large ranges and its lock, and the
 * wrappers of madvise(2) and the mlock family (perturb-lock.c), which make
 * large blocks anonymous memory before the kernel sees them.  All of it is
 * hidden (-fvisibility=hidden): the shim exports only what perturb.map
 * lists.
 */
#ifndef MMKIT_PRELOAD_PERTURB_H
#define MMKIT_PRELOAD_PERTURB_H

#include <stddef.h>
#include <stdint.h>

/*
 * A large range: [addr, addr + cap) mapped, all of it usable; anon when
 * anonymous memory; protected once mprotect(2) or pkey_mprotect(2) was
 * called on part of it (until then all of it is read-write).
 */
struct large {
	uintptr_t addr;
	size_t cap;
	int anon;
	int protected;
};

struct mmkit_refpage;

/* perturb.c: the allocator. */
/* Set while this thread is inside libmmkit, whose allocations then go straight to glibc. */
extern __thread int in_library __attribute__((tls_model("initial-exec")));
void set_up(void);
int perturb_on(void);
struct mmkit_refpage *get_refpage(void);
void large_each_overlapping(uintptr_t start, uintptr_t end, void (*fn)(struct large *l));
void large_protected(uintptr_t addr);

/* perturb-lock.c: the wrappers. */
extern int locking_future;
void kernel_setup(void);

#endif /* MMKIT_PRELOAD_PERTURB_H */
