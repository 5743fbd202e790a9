// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Reference pages: memory whose never-written pages read as a pattern.
 *
 * The kernel proposal (refpage_create, 2021) was never merged: the syscall
 * backend calls it where a kernel carries the series (kernel/patches/),
 * and the others build it from stock parts (struct refpage_backend,
 * refpage.h), each described in its own file: refpage-syscall.c,
 * refpage-kmod.c, refpage-memfd.c, refpage-uffd.c.  The default is the
 * first backend of backends[] below that is available and keeps the whole
 * contract; uffd, which cannot serve faults taken by the kernel (contract
 * item 8), only when asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "names.h"
#include "refpage.h"

#define REFPAGE_ENV		"MMKIT_REFPAGE_BACKEND"

/* In order of preference for the default. */
static const struct refpage_backend *const backends[] = {
	&refpage__syscall,
	&refpage__kmod,
	&refpage__memfd,
	&refpage__uffd,
};

#define NBACKENDS	(sizeof(backends) / sizeof(backends[0]))

#define BACKEND_FLAGS	(MMKIT_REFPAGE_BACKEND_SYSCALL | MMKIT_REFPAGE_BACKEND_KMOD | \
			 MMKIT_REFPAGE_BACKEND_MEMFD | MMKIT_REFPAGE_BACKEND_UFFD)

static const struct refpage_backend *backend_by_flag(unsigned int flag)
{
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if (backends[i]->flag == flag)
			return backends[i];
	return NULL;
}

static const struct refpage_backend *backend_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

/* What an unknown backend name is told. */
#define NO_BACKEND	"no such backend (syscall, kmod, memfd, uffd)"

static int backend_flag(const char *name)
{
	const struct refpage_backend *be = name ? backend_by_name(name) : NULL;

	if (!be) {
		mmkit__error_detail(-EINVAL, "%.32s: " NO_BACKEND, name ? name : "NULL");
		return -EINVAL;
	}
	return (int)be->flag;
}

MMKIT_EXPORT int mmkit_refpage_backend_flag(const char *name)
{
	return MMKIT__CALL(backend_flag(name));
}

/*
 * The best fully correct backend, decided for the process once each
 * better one is refused for good (no refpage_create(2), no /dev/refpage):
 * a passing failure of one (EMFILE: mmkit__passing()) decides nothing,
 * neither that no backend works nor that a worse one is the best.
 */
static const struct refpage_backend *default_backend;

static int choose_default(const struct refpage_backend **out)
{
	char why[MMKIT_REASON_MAX] = "no backend keeps the whole contract";
	int ret = -ENOSYS, passing = 0;
	size_t i;

	*out = __atomic_load_n(&default_backend, __ATOMIC_ACQUIRE);
	if (*out)
		return 0;
	for (i = 0; i < NBACKENDS; i++) {
		if (backends[i]->contract != MMKIT_REFPAGE_FULL_CONTRACT)
			continue;
		ret = backends[i]->available(why, sizeof(why));
		if (!ret) {
			*out = backends[i];
			if (!passing)
				__atomic_store_n(&default_backend, *out, __ATOMIC_RELEASE);
			return 0;
		}
		passing |= mmkit__passing(ret);
	}
	mmkit__error_detail(ret, "no reference-page backend: %s", why);
	return ret;
}

/* 0 if @be serves tagged pages here (MTE available), else -errno and why. */
static int backend_tags(const struct refpage_backend *be, char *why, size_t len)
{
	int ret = be->available(why, len);

	return ret ? ret : be->can_tag ? be->can_tag(why, len) : 0;
}

/* The default for tagged pages: the first available one that can tag. */
static int tagged_default(const struct refpage_backend **out)
{
	char why[MMKIT_REASON_MAX] = "no backend keeps the whole contract";
	size_t i;
	int ret;

	for (i = 0; i < NBACKENDS; i++) {
		if (backends[i]->contract != MMKIT_REFPAGE_FULL_CONTRACT)
			continue;
		ret = backend_tags(backends[i], why, sizeof(why));
		if (!ret) {
			*out = backends[i];
			return 0;
		}
	}
	mmkit__error_detail(-EOPNOTSUPP, "no backend can serve tagged pages (the last: %s)", why);
	return -EOPNOTSUPP;
}

/*
 * The backend for @flags (a backend flag, MMKIT_REFPAGE_TAGGED) and the
 * environment; -errno if it cannot work here, -EOPNOTSUPP if it cannot
 * tag a tagged page.
 */
static int select_backend(unsigned int flags, const struct refpage_backend **out)
{
	const struct refpage_backend *be;
	char why[MMKIT_REASON_MAX];
	const char *env;
	int ret;

	if (flags & BACKEND_FLAGS) {
		be = backend_by_flag(flags & BACKEND_FLAGS);
		if (!be)
			return -EINVAL;
	} else {
		env = secure_getenv(REFPAGE_ENV);
		if ((!env || !*env) && (flags & MMKIT_REFPAGE_TAGGED))
			return tagged_default(out);
		if (!env || !*env)
			return choose_default(out);
		be = backend_by_name(env);
		if (!be) {
			mmkit__error_detail(-EINVAL, REFPAGE_ENV "=%.32s: " NO_BACKEND, env);
			return -EINVAL;
		}
	}
	ret = be->available(why, sizeof(why));
	if (!ret && (flags & MMKIT_REFPAGE_TAGGED) && be->can_tag)
		ret = be->can_tag(why, sizeof(why));
	if (ret) {
		mmkit__error_detail(ret, "backend %s: %s", be->name, why);
		return ret;
	}
	*out = be;
	return 0;
}

static int backend_available(unsigned int flag, char *why, size_t why_len)
{
	const struct refpage_backend *be = backend_by_flag(flag);
	char buf[MMKIT_REASON_MAX];
	int ret;

	if (!be || (why_len && !why))
		return -EINVAL;
	ret = be->available(buf, sizeof(buf));
	if (why && why_len)
		snprintf(why, why_len, "%s", ret ? buf : "available");
	if (ret)
		mmkit__error_detail(ret, "backend %s: %s", be->name, buf);
	return ret;
}

MMKIT_EXPORT int mmkit_refpage_backend_available(unsigned int flag, char *why, size_t why_len)
{
	return MMKIT__CALL(backend_available(flag, why, why_len));
}

/*
 * Copies the tagged pattern, granule by granule through pointers carrying
 * each granule's tag (the caller's memory may be checked), and its tags.
 */
static void copy_tagged_pattern(struct mmkit_refpage *rp, const unsigned char *pattern,
				size_t pattern_size)
{
	size_t g, n = pattern_size / MMKIT_MTE_GRANULE;
	unsigned int tag;

	for (g = 0; g < n; g++) {
		tag = mmkit__mte_get_tag(pattern + g * MMKIT_MTE_GRANULE);
		rp->tags[g] = (unsigned char)tag;
		memcpy(rp->page + g * MMKIT_MTE_GRANULE,
		       mmkit__mte_with_tag(pattern + g * MMKIT_MTE_GRANULE, tag),
		       MMKIT_MTE_GRANULE);
	}
	for (g = n; g < sys_page_size() / MMKIT_MTE_GRANULE; g++)
		rp->tags[g] = rp->tags[g % n];
}

static int refpage_create(struct mmkit_refpage **rpp, const void *pattern,
			  size_t pattern_size, unsigned int flags)
{
	const struct refpage_backend *be;
	size_t page = sys_page_size(), i;
	char why[MMKIT_REASON_MAX];
	struct mmkit_refpage *rp;
	int tagged = !!(flags & MMKIT_REFPAGE_TAGGED);
	void *mem;
	int ret;

	if (!rpp || !pattern || !pattern_size || pattern_size > page ||
	    (pattern_size & (pattern_size - 1)) ||
	    (flags & ~(BACKEND_FLAGS | MMKIT_REFPAGE_TAGGED))) {
		mmkit__error_detail(-EINVAL,
				    "pattern size %zu (a power of two up to %zu), flags %#x, or a NULL pointer",
				    pattern_size, page, flags);
		return -EINVAL;
	}
	/* Tags belong to whole granules of the caller's memory. */
	if (tagged && (pattern_size < MMKIT_MTE_GRANULE ||
		       (uintptr_t)pattern % MMKIT_MTE_GRANULE))
		return -EINVAL;
	if (tagged) {
		ret = mmkit__mte_available(why, sizeof(why));
		if (ret) {
			mmkit__error_detail(ret, "tagged page: %s", why);
			return ret;
		}
	}
	ret = select_backend(flags, &be);
	if (ret)
		return ret;
	/* The pattern page, then the object: no malloc, which may touch errno. */
	ret = sys_mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0, &mem);
	if (ret)
		return ret;
	rp = (struct mmkit_refpage *)((unsigned char *)mem + page);
	rp->page = mem;
	if (tagged)
		copy_tagged_pattern(rp, pattern, pattern_size);
	for (i = tagged ? pattern_size : 0; i < page; i += pattern_size)
		memcpy(rp->page + i, tagged ? rp->page : pattern, pattern_size);
	rp->flags = flags & MMKIT_REFPAGE_TAGGED;
	rp->backend = be;
	rp->fd = -1;
	ret = be->create(rp);
	if (ret) {
		sys_munmap(mem, 2 * page);
		return ret;
	}
	*rpp = rp;
	return 0;
}

MMKIT_EXPORT int mmkit_refpage_create(struct mmkit_refpage **rpp, const void *pattern,
				      size_t pattern_size, unsigned int flags)
{
	return MMKIT__CALL(refpage_create(rpp, pattern, pattern_size, flags));
}

MMKIT_EXPORT void mmkit_refpage_destroy(struct mmkit_refpage *rp)
{
	if (!rp)
		return;
	rp->backend->destroy(rp);
	sys_munmap(rp->page, 2 * sys_page_size());
}

static int refpage_map(struct mmkit_refpage *rp, size_t len, int prot, void **addr)
{
	size_t rounded = mmkit__page_round_up(len);
	int ret;

	if (!rp || !addr)
		return -EINVAL;
	if (!len || rounded < len) {
		mmkit__error_detail(-EINVAL, "length %zu: %s", len,
				    len ? "rounded up to pages it exceeds the address space" :
				    "a range holds at least one byte");
		return -EINVAL;
	}
	/* Pattern memory is data: PROT_EXEC is refused (the memfd is sealed against it). */
	if (prot & ~(PROT_READ | PROT_WRITE)) {
		mmkit__error_detail(-EINVAL, "prot %#x: only PROT_READ and PROT_WRITE", prot);
		return -EINVAL;
	}
	ret = rp->backend->map(rp, rounded, prot, addr);
	if (ret == -ENOMEM && !mmkit__error_has_detail(ret))
		mmkit__error_detail(ret, "mmap(2) of %zu KiB refused: no free range of the address space that large, or RLIMIT_AS, vm.max_map_count or the overcommit limit reached",
				    rounded / 1024);
	return ret;
}

MMKIT_EXPORT int mmkit_refpage_map(struct mmkit_refpage *rp, size_t len, int prot, void **addr)
{
	return MMKIT__CALL(refpage_map(rp, len, prot, addr));
}

static int check_piece(struct mmkit_refpage *rp, const struct refpage_piece *piece, void *arg)
{
	(void)rp;
	(void)piece;
	(void)arg;
	return 0;
}

/* Checks the arguments of attach and unmap; the page-rounded length into *@rounded. */
static int check_user_range(const struct mmkit_refpage *rp, void *addr, size_t len,
			    size_t *rounded)
{
	*rounded = mmkit__page_round_up(len);
	if (!rp || !addr || *rounded < len)
		return -EINVAL;
	return mmkit__check_range(addr, *rounded, 1);
}

static int refpage_attach(struct mmkit_refpage *rp, void *addr, size_t len)
{
	size_t rounded;
	int ret = check_user_range(rp, addr, len, &rounded);

	if (ret)
		return ret;
	/* The range's own pages would keep no tags, and would not be PROT_MTE. */
	if (rp->flags & MMKIT_REFPAGE_TAGGED)
		return -EOPNOTSUPP;
	/* Validate the whole range before changing any of it. */
	ret = refpage__for_each_piece(rp, addr, rounded, 1, check_piece, NULL);
	if (ret)
		return ret;
	return rp->backend->attach(rp, addr, rounded);
}

MMKIT_EXPORT int mmkit_refpage_attach(struct mmkit_refpage *rp, void *addr, size_t len)
{
	return MMKIT__CALL(refpage_attach(rp, addr, len));
}

/*
 * The names of the range go first: the registry cannot see an unmap, and
 * the next mapping at these addresses would show them.  If they cannot
 * go (no memory), the range stays mapped.
 */
static int refpage_unmap(struct mmkit_refpage *rp, void *addr, size_t len)
{
	size_t rounded;
	int ret = check_user_range(rp, addr, len, &rounded);

	if (!ret)
		ret = mmkit__registry_moved((uintptr_t)addr, rounded, 0, 0);
	return ret ? ret : rp->backend->unmap(rp, addr, rounded);
}

MMKIT_EXPORT int mmkit_refpage_unmap(struct mmkit_refpage *rp, void *addr, size_t len)
{
	return MMKIT__CALL(refpage_unmap(rp, addr, len));
}

static int first_prot(struct mmkit_refpage *rp, const struct refpage_piece *piece, void *arg)
{
	(void)rp;
	*(int *)arg = piece->prot;
	/* Stop at the first piece. */
	return 1;
}

/*
 * A range is several mappings (memfd chunks, pieces split by mprotect or
 * attach) and mremap(2) moves one at a time; a userfaultfd registration
 * does not follow a move either.  So: map a fresh range of the new size,
 * move each piece of the old one to its place in it, then let the backend
 * serve the moved pieces.  If a move fails, the moved pieces go back.
 */
static int refpage_remap(struct mmkit_refpage *rp, void *old_addr, size_t old_len,
			 size_t new_len, void **new_addr)
{
	size_t old_rounded = mmkit__page_round_up(old_len);
	size_t new_rounded = mmkit__page_round_up(new_len);
	size_t keep = old_rounded < new_rounded ? old_rounded : new_rounded;
	int prot = PROT_NONE, ret;
	uintptr_t done;
	void *dst;

	if (!rp || !old_addr || !new_addr || !new_len || old_rounded < old_len ||
	    new_rounded < new_len)
		return -EINVAL;
	ret = mmkit__check_range(old_addr, old_rounded, 1);
	if (ret)
		return ret;
	ret = refpage__for_each_piece(rp, old_addr, old_rounded, 0, check_piece, NULL);
	if (ret)
		return ret;
	/* Its failure would leave prot PROT_NONE: a new range nobody can touch. */
	ret = refpage__for_each_piece(rp, old_addr, old_rounded, 0, first_prot, &prot);
	if (ret)
		return ret;
	ret = rp->backend->map(rp, new_rounded, prot, &dst);
	if (ret)
		return ret;
	ret = refpage__move(rp, old_addr, keep, dst, &done);
	if (!ret && rp->backend->rebind)
		ret = rp->backend->rebind(rp, old_addr, dst, keep);
	if (ret) {
		if (done > (uintptr_t)old_addr)
			refpage__move(rp, dst, done - (uintptr_t)old_addr, old_addr, &done);
		rp->backend->unmap(rp, dst, new_rounded);
		return ret;
	}
	/* Only the tail that was not moved: the rest of the old range is free for others now. */
	if (old_rounded > keep)
		rp->backend->unmap(rp, (unsigned char *)old_addr + keep, old_rounded - keep);
	*new_addr = dst;
	/*
	 * The registry's names move with the memory, as the kernel's do with
	 * mremap(2).  Best effort: the memory has moved, which a failure must
	 * not hide; only a lack of memory for the table fails it.
	 */
	mmkit__registry_moved((uintptr_t)old_addr, old_rounded, keep, (uintptr_t)dst);
	return 0;
}

MMKIT_EXPORT int mmkit_refpage_remap(struct mmkit_refpage *rp, void *old_addr, size_t old_len,
				     size_t new_len, void **new_addr)
{
	return MMKIT__CALL(refpage_remap(rp, old_addr, old_len, new_len, new_addr));
}

MMKIT_EXPORT const char *mmkit_refpage_backend(const struct mmkit_refpage *rp)
{
	return rp ? rp->backend->name : NULL;
}

MMKIT_EXPORT unsigned int mmkit_refpage_contract(const struct mmkit_refpage *rp)
{
	return rp ? rp->backend->contract : 0;
}

static int refpage_stats(struct mmkit_refpage_stats *st)
{
	if (!st)
		return -EINVAL;
	refpage__memfd_stats(&st->pattern_files, &st->cache_bytes);
	return 0;
}

MMKIT_EXPORT int mmkit_refpage_stats(struct mmkit_refpage_stats *st)
{
	return MMKIT__CALL(refpage_stats(st));
}

/* printf() at @buf + *@used, advancing *@used; output beyond @len is cut. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	*used = n < 0 || (size_t)n >= len - *used ? len - 1 : *used + (size_t)n;
}

/* "1-10", "1-7,9,10": the items of @mask, for people. */
static void format_items(unsigned int mask, char *buf, size_t len)
{
	size_t used = 0;
	int n, first;

	buf[0] = '\0';
	for (n = 1; n <= 10; n++) {
		if (!(mask & MMKIT_REFPAGE_ITEM(n)))
			continue;
		first = n;
		while (n < 10 && (mask & MMKIT_REFPAGE_ITEM(n + 1)))
			n++;
		append(buf, len, &used, "%s%d", used ? "," : "", first);
		if (n > first)
			append(buf, len, &used, "%s%d", n - first >= 2 ? "-" : ",", n);
	}
}

/*
 * "opt-in uffd keeps items 1-7,9,10, not 8: ...": what @be keeps, and
 * the page cache memfd costs (mmkit_refpage_stats() has the figure now).
 */
static void describe(const struct refpage_backend *be, char *buf, size_t len, size_t *used)
{
	char items[32];

	format_items(be->contract, items, sizeof(items));
	append(buf, len, used, "%s%s keeps items %s%s",
	       be->contract == MMKIT_REFPAGE_FULL_CONTRACT ? "" : "opt-in ", be->name, items,
	       be->contract & MMKIT_REFPAGE_ITEM(8) ? "" : ", not 8 (syscalls EFAULT)");
	if (be == &refpage__memfd)
		append(buf, len, used, ", %lu MiB page cache a pattern at most",
		       REFPAGE_MEMFD_WINDOW_MAX >> 20);
}

/*
 * "; tagged (MTE): kmod memfd (uffd: why not)": the backends that tag
 * here in order of preference, then why each other one that works here
 * does not (why the others do not work was said before); or why there is
 * no MTE, "none" where that would not fit MMKIT_REASON_MAX: a reason cut
 * short reads as a mistake.
 */
static void describe_tagged(char *buf, size_t len, size_t *used)
{
	char why[128];
	size_t i, none = 1;

	append(buf, len, used, "; tagged (MTE): ");
	if (mmkit__mte_available(why, sizeof(why))) {
		append(buf, len, used, "%s", *used + strlen(why) < len ? why : "none");
		return;
	}
	for (i = 0; i < NBACKENDS; i++) {
		if (backend_tags(backends[i], why, sizeof(why)))
			continue;
		append(buf, len, used, "%s%s", none ? "" : " ", backends[i]->name);
		none = 0;
	}
	if (none)
		append(buf, len, used, "none");
	for (i = 0, none = 1; i < NBACKENDS; i++) {
		if (backends[i]->available(why, sizeof(why)) || !backend_tags(backends[i], why, sizeof(why)))
			continue;
		append(buf, len, used, "%s%s: %s", none ? " (" : "; ", backends[i]->name, why);
		none = 0;
	}
	if (!none)
		append(buf, len, used, ")");
}

/*
 * The reason names the backend in use and what it keeps (or why there is
 * none), then each other backend in order of preference: what it keeps if
 * it is available, why not if it is not; then which backend tagged pages
 * (MTE) use, or why there are none.
 */
int mmkit__probe_refpage(struct mmkit_feature *f)
{
	const char *env = secure_getenv(REFPAGE_ENV);
	const struct refpage_backend *chosen = NULL;
	char reason[MMKIT_REASON_MAX], why[128];
	size_t used = 0, i;
	int ret, other, keep;

	reason[0] = '\0';
	ret = select_backend(0, &chosen);
	if (env && *env)
		append(reason, sizeof(reason), &used, "%s=%.32s: ", REFPAGE_ENV, env);
	if (ret)
		append(reason, sizeof(reason), &used, "no backend: %s", strerror(-ret));
	else
		describe(chosen, reason, sizeof(reason), &used);
	keep = !mmkit__passing(ret);
	for (i = 0; i < NBACKENDS; i++) {
		if (backends[i] == chosen)
			continue;
		append(reason, sizeof(reason), &used, "; ");
		other = backends[i]->available(why, sizeof(why));
		keep &= !mmkit__passing(other);
		if (other)
			append(reason, sizeof(reason), &used, "%s: %s", backends[i]->name, why);
		else
			describe(backends[i], reason, sizeof(reason), &used);
	}
	describe_tagged(reason, sizeof(reason), &used);
	if (ret)
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none", "%s", reason);
	else
		mmkit__feature_set(f, chosen == &refpage__syscall || chosen == &refpage__kmod ?
				   MMKIT_STATUS_NATIVE : MMKIT_STATUS_FALLBACK, chosen->name, "%s", reason);
	return keep;
}
