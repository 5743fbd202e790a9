// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/* See shim.h.  The Go pointers some calls take (stats, features, keys) live only for the call. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"
#include "_cgo_export.h"

static struct mmkit_go_result result(int ret)
{
	struct mmkit_go_result r = { .ret = ret };

	if (ret < 0)
		r.msg = strdup(mmkit_last_error());
	return r;
}

static struct mmkit_go_ptr ptr_result(void *p, int ret)
{
	struct mmkit_go_ptr r = { .p = p, .ret = ret };

	if (ret < 0)
		r.msg = strdup(mmkit_last_error());
	return r;
}

struct mmkit_go_ptr mmkit_go_secret_alloc(size_t size, unsigned int flags)
{
	void *p = NULL;
	int ret = mmkit_secret_alloc(&p, size, flags);

	return ptr_result(p, ret);
}

struct mmkit_go_result mmkit_go_secret_alloc_many(uintptr_t *p, size_t n, size_t size)
{
	return result(mmkit_secret_alloc_many((void **)p, n, size, 0));
}

void mmkit_go_secret_free(uintptr_t p)
{
	mmkit_secret_free((void *)p);
}

struct mmkit_go_result mmkit_go_secret_protect(void *p, int access)
{
	return result(mmkit_secret_protect(p, access));
}

struct mmkit_go_result mmkit_go_secret_stats(struct mmkit_secret_stats *st)
{
	return result(mmkit_secret_stats(st));
}

struct mmkit_go_ptr mmkit_go_refpage_create(const void *pattern, size_t size, unsigned int flags)
{
	struct mmkit_refpage *rp = NULL;
	int ret = mmkit_refpage_create(&rp, pattern, size, flags);

	return ptr_result(rp, ret);
}

struct mmkit_go_ptr mmkit_go_refpage_map(struct mmkit_refpage *rp, size_t len)
{
	void *addr = NULL;
	int ret = mmkit_refpage_map(rp, len, PROT_READ | PROT_WRITE, &addr);

	return ptr_result(addr, ret);
}

struct mmkit_go_result mmkit_go_refpage_unmap(struct mmkit_refpage *rp, void *addr, size_t len)
{
	return result(mmkit_refpage_unmap(rp, addr, len));
}

struct mmkit_go_result mmkit_go_name(uintptr_t addr, size_t len, const char *name)
{
	return result(mmkit_name((void *)addr, len, name));
}

struct mmkit_go_result mmkit_go_name_pages(uintptr_t addr, size_t len, const char *name)
{
	return result(mmkit_name_pages((void *)addr, len, name));
}

static int region_fn(const struct mmkit_region *region, void *arg)
{
	return goRegion((struct mmkit_region *)region, *(uintptr_t *)arg);
}

struct mmkit_go_result mmkit_go_regions(pid_t pid, uintptr_t handle)
{
	return result(mmkit_regions(pid, region_fn, &handle));
}

struct mmkit_go_result mmkit_go_probe(struct mmkit_features *f)
{
	return result(mmkit_probe(f));
}

struct mmkit_go_result mmkit_go_lock(uintptr_t addr, size_t len, unsigned int flags)
{
	return result(mmkit_lock((void *)addr, len, flags));
}

struct mmkit_go_result mmkit_go_unlock(uintptr_t addr, size_t len)
{
	return result(mmkit_unlock((void *)addr, len));
}

struct mmkit_go_result mmkit_go_lockall(unsigned int flags)
{
	return result(mmkit_lockall(flags));
}

struct mmkit_go_result mmkit_go_unlockall(void)
{
	return result(mmkit_unlockall());
}

struct mmkit_go_result mmkit_go_memlock_check(uintptr_t addr, size_t len, struct mmkit_memlock *m)
{
	return result(mmkit_memlock_check((const void *)addr, len, m));
}

struct mmkit_go_result mmkit_go_pac_get_enabled_keys(unsigned long *keys)
{
	return result(mmkit_pac_get_enabled_keys(keys));
}

struct mmkit_go_result mmkit_go_pac_set_enabled_keys(unsigned long mask, unsigned long enabled)
{
	return result(mmkit_pac_set_enabled_keys(mask, enabled));
}
