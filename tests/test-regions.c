// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_regions(): kinds and names as /proc/PID/smaps has them, mappings
 * split where names begin and end, with exact sizes and the Rss, Pss,
 * Private_Dirty and Locked of the touched pages; other processes, bad
 * arguments, and a registry written by a process that cannot be trusted;
 * a huge sparse mapping named in parts costs what is resident, not its size.
 */
#include <fcntl.h>
#include <stdint.h>
#include <time.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "harness.h"
#include "names-registry.h"
#include "mmkit.h"
#include "procfs.h"

static size_t page;
static int registry;	/* 1 when names go to the registry (no CONFIG_ANON_VMA_NAME) */

#define MAX_REGIONS	64

struct collect {
	uintptr_t lo, hi;		/* regions overlapping [lo, hi) are kept */
	int n;
	struct mmkit_region r[MAX_REGIONS];
};

static int collect_fn(const struct mmkit_region *r, void *arg)
{
	struct collect *c = arg;

	if (r->end <= c->lo || r->start >= c->hi)
		return 0;
	if (c->n == MAX_REGIONS)
		return -E2BIG;
	c->r[c->n++] = *r;
	return 0;
}

/* The regions of @pid overlapping [lo, lo + len). */
static struct collect *regions_in(pid_t pid, const void *lo, size_t len)
{
	static struct collect c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.lo = (uintptr_t)lo;
	c.hi = (uintptr_t)lo + len;
	ret = mmkit_regions(pid, collect_fn, &c);
	if (ret)
		T_FAIL("mmkit_regions(%d): %s", (int)pid, strerror(-ret));
	return &c;
}

static int is_named(const struct mmkit_region *r)
{
	return r->kind == MMKIT_REGION_REGISTRY || r->kind == MMKIT_REGION_ANON_NAMED;
}

/* Expects region @i of @c to be pages [from, to) of @base, named @want (NULL: unnamed). */
#define T_PART(c, i, base, from, to, want) do {				\
	const struct mmkit_region *r_ = &(c)->r[i];			\
	const char *n_ = (want);					\
	T_ASSERT((i) < (c)->n);						\
	T_EQ(r_->start, (uintptr_t)(base) + (from) * page);		\
	T_EQ(r_->end, (uintptr_t)(base) + (to) * page);		\
	T_EQ(r_->size, ((to) - (from)) * page);				\
	if (n_ ? !is_named(r_) || strcmp(r_->name, n_) :		\
		 r_->kind != MMKIT_REGION_ANON || r_->name[0])		\
		T_FAIL("region %d: kind %d name \"%s\", expected %s", i, r_->kind, \
		       r_->name, n_ ? n_ : "unnamed anonymous");	\
} while (0)

/* @pages usable pages between two PROT_NONE guard pages, so that no neighbour merges. */
static char *map_guarded(size_t pages)
{
	char *p = mmap(NULL, (pages + 2) * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		T_FAIL("mmap: %s", strerror(errno));
	if (mprotect(p + page, pages * page, PROT_READ | PROT_WRITE))
		T_FAIL("mprotect: %s", strerror(errno));
	return p + page;
}

/* Clears the names first, as mmkit_name(3) advises: the registry cannot see munmap(). */
static void unmap_guarded(char *p, size_t pages)
{
	T_EQ(mmkit_name(p - page, (pages + 2) * page, NULL), 0);
	munmap(p - page, (pages + 2) * page);
}

static int count_fn(const struct mmkit_region *r, void *arg)
{
	(void)r;
	return ++*(int *)arg == 1 ? 42 : 0;
}

struct check {
	unsigned long prev_end;
	uintptr_t stack, code, vdso, anon;
	int seen_stack, seen_code, seen_vdso, seen_anon, bad;
	unsigned long long rss, clean_dirty;
	char why[4096 + 200];
};

static int check_fn(const struct mmkit_region *r, void *arg)
{
	struct check *c = arg;

#define BAD(...) do { snprintf(c->why, sizeof(c->why), __VA_ARGS__); return 1; } while (0)
	if (r->start >= r->end || r->start < c->prev_end)
		BAD("%lx-%lx after %lx", r->start, r->end, c->prev_end);
	c->prev_end = r->end;
	if (r->size != r->end - r->start || r->rss > r->size || r->pss > r->rss ||
	    r->private_dirty > r->rss || r->locked > r->rss || r->anonymous > r->rss ||
	    r->referenced > r->rss)
		BAD("%lx-%lx: inconsistent sizes", r->start, r->end);
	/* smaps' Rss is its four Shared_/Private_ figures, per mapping: so in sum. */
	c->rss += r->rss;
	c->clean_dirty += r->shared_clean + r->shared_dirty + r->private_clean + r->private_dirty;
	if (strlen(r->perms) != 4)
		BAD("%lx-%lx: perms \"%s\"", r->start, r->end, r->perms);
	/* Every kernel mmkit runs on gives both (Pss since 2.6.25, Swap since 2.6.26). */
	if (r->have != (MMKIT_REGION_HAVE_PSS | MMKIT_REGION_HAVE_SWAP))
		BAD("%lx-%lx: have %#x, smaps gives Pss and Swap", r->start, r->end, r->have);
	switch (r->kind) {
	case MMKIT_REGION_ANON:
		if (r->name[0])
			BAD("anonymous region named \"%s\"", r->name);
		break;
	case MMKIT_REGION_HEAP:
		if (strcmp(r->name, "[heap]"))
			BAD("heap named \"%s\"", r->name);
		break;
	case MMKIT_REGION_STACK:
		if (strncmp(r->name, "[stack", 6))
			BAD("stack named \"%s\"", r->name);
		break;
	case MMKIT_REGION_SPECIAL:
		if (r->name[0] != '[')
			BAD("special region named \"%s\"", r->name);
		break;
	case MMKIT_REGION_FILE:
		if (!r->name[0] || r->name[0] == '[')
			BAD("file region named \"%s\"", r->name);
		break;
	case MMKIT_REGION_ANON_NAMED:
	case MMKIT_REGION_REGISTRY:
		if (mmkit_name_valid(r->name))
			BAD("invalid name \"%s\"", r->name);
		break;
	default:
		BAD("kind %d", r->kind);
	}
	if (c->stack >= r->start && c->stack < r->end) {
		c->seen_stack = 1;
		if (r->kind != MMKIT_REGION_STACK)
			BAD("the stack is in a region of kind %d", r->kind);
	}
	if (c->code >= r->start && c->code < r->end) {
		c->seen_code = 1;
		if (r->kind != MMKIT_REGION_FILE || !strstr(r->name, "test-regions"))
			BAD("the code is in \"%s\"", r->name);
	}
	if (c->vdso >= r->start && c->vdso < r->end) {
		c->seen_vdso = 1;
		if (r->kind != MMKIT_REGION_SPECIAL || strcmp(r->name, "[vdso]"))
			BAD("the vdso is in \"%s\"", r->name);
	}
	if (c->anon >= r->start && c->anon < r->end) {
		c->seen_anon = 1;
		if (r->kind != MMKIT_REGION_ANON)
			BAD("fresh anonymous memory is of kind %d", r->kind);
	}
	return 0;
#undef BAD
}

static void test_basics(void)
{
	struct check c;
	char *anon = map_guarded(1);
	int calls = 0, status;
	pid_t pid;

	T_CASE("bad arguments: EINVAL; a process that is gone: ESRCH");
	T_EQ(mmkit_regions(-1, check_fn, &c), -EINVAL);
	T_EQ(mmkit_regions(0, NULL, NULL), -EINVAL);
	fflush(NULL);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0)
		_exit(0);
	T_EQ(waitpid(pid, &status, 0), pid);
	T_EQ(mmkit_regions(pid, check_fn, &c), -ESRCH);

	T_CASE("a non-zero value from the callback stops the walk and is returned");
	T_EQ(mmkit_regions(0, count_fn, &calls), 42);
	T_EQ(calls, 1);

	T_CASE("regions in address order, sizes consistent, kinds as the kernel shows them");
	memset(&c, 0, sizeof(c));
	c.stack = (uintptr_t)&c;
	c.code = (uintptr_t)test_basics;
	c.vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	c.anon = (uintptr_t)anon;
	T_EQ(mmkit_regions(0, check_fn, &c), 0);
	if (c.why[0])
		T_FAIL("%s", c.why);
	T_ASSERT(c.seen_stack && c.seen_code && c.seen_anon);
	T_ASSERT(c.seen_vdso || !c.vdso);
	T_ASSERT(c.rss > 0);
	T_EQ(c.clean_dirty, c.rss);
	unmap_guarded(anon, 1);
}

static void test_split(void)
{
	char *p = map_guarded(16);
	int locked = !mmkit_lock(p, 16 * page, MMKIT_LOCK_ONFAULT);
	unsigned long long total = 0;
	struct collect *c;
	int i;

	T_CASE("a name over part of a mapping: three regions, exact Size, Rss of their pages");
	T_EQ(mmkit_name(p + 4 * page, 8 * page, "middle"), 0);
	p[0] = p[page] = 1;
	p[4 * page] = p[5 * page] = p[6 * page] = 1;
	c = regions_in(0, p, 16 * page);
	T_EQ(c->n, 3);
	T_PART(c, 0, p, 0, 4, NULL);
	T_PART(c, 1, p, 4, 12, "middle");
	T_PART(c, 2, p, 12, 16, NULL);
	T_EQ(c->r[0].rss, 2 * page);
	T_EQ(c->r[1].rss, 3 * page);
	T_EQ(c->r[2].rss, 0);

	T_CASE("Pss, Private_Dirty, Anonymous, Referenced and Locked follow each part's Rss");
	for (i = 0; i < 3; i++) {
		T_EQ(c->r[i].pss, c->r[i].rss);
		T_EQ(c->r[i].private_dirty, c->r[i].rss);
		T_EQ(c->r[i].anonymous, c->r[i].rss);
		T_EQ(c->r[i].referenced, c->r[i].rss);
		T_EQ(c->r[i].shared_clean + c->r[i].shared_dirty + c->r[i].private_clean, 0);
		T_EQ(c->r[i].swap, 0);
		T_EQ(c->r[i].locked, locked ? c->r[i].rss : 0);
		total += c->r[i].rss;
	}
	T_EQ(total, 5 * page);
	if (!locked)
		printf("    (mlock2(MLOCK_ONFAULT) refused: Locked checked as 0)\n");
	if (locked)
		mmkit_unlock(p, 16 * page);
	unmap_guarded(p, 16);
}

static void stay(void *arg)
{
	(void)arg;
}

static void test_split_mixed(void)
{
	char *p = map_guarded(8);
	unsigned long long shared = 0, private = 0;
	struct t_child ch;
	struct collect *c;
	size_t i;

	T_CASE("shared and private pages in a mapping: each part's four figures add up to its Rss, in pages");
	for (i = 0; i < 6; i++)
		p[i * page] = 1;
	/* The child keeps pages 0-5 shared; the two written again are the parent's own copies. */
	ch = t_spawn_paused(stay, NULL);
	p[0] = p[page] = 2;
	T_EQ(mmkit_name(p + page, 4 * page, "mixed"), 0);
	c = regions_in(0, p, 8 * page);
	T_EQ(c->n, 3);
	T_PART(c, 1, p, 1, 5, "mixed");
	for (i = 0; i < 3; i++) {
		const struct mmkit_region *r = &c->r[i];

		T_EQ(r->shared_clean + r->shared_dirty + r->private_clean + r->private_dirty, r->rss);
		T_EQ((r->shared_clean | r->shared_dirty | r->private_clean | r->private_dirty |
		      r->referenced | r->anonymous | r->rss) % page, 0);
		shared += r->shared_clean + r->shared_dirty;
		private += r->private_clean + r->private_dirty;
	}
	T_EQ(c->r[0].rss + c->r[1].rss + c->r[2].rss, 6 * page);
	T_EQ(shared, 4 * page);
	T_EQ(private, 2 * page);
	t_reap(ch);
	unmap_guarded(p, 8);
}

static void test_several(void)
{
	char *p = map_guarded(10);
	struct collect *c;

	T_CASE("several names in one mapping, one name across two mappings");
	T_EQ(mprotect(p + 5 * page, 5 * page, PROT_READ), 0);
	T_EQ(mmkit_name(p, 3 * page, "a"), 0);
	T_EQ(mmkit_name(p + 3 * page, 4 * page, "b"), 0);
	T_EQ(mmkit_name(p + 8 * page, 2 * page, "c"), 0);
	c = regions_in(0, p, 10 * page);
	T_EQ(c->n, 5);
	T_PART(c, 0, p, 0, 3, "a");
	T_PART(c, 1, p, 3, 5, "b");
	T_PART(c, 2, p, 5, 7, "b");
	T_PART(c, 3, p, 7, 8, NULL);
	T_PART(c, 4, p, 8, 10, "c");
	T_ASSERT(!strcmp(c->r[1].perms, "rw-p") && !strcmp(c->r[2].perms, "r--p"));
	unmap_guarded(p, 10);
}

static void child_names(void *arg)
{
	char *p = arg;
	size_t i;

	T_EQ(mmkit_name(p + 2 * page, 4 * page, "child-part"), 0);
	for (i = 0; i < 8; i++)
		p[i * page] = 1;
}

static void test_other_process(void)
{
	char *p = map_guarded(8);
	struct t_child ch = t_spawn_paused(child_names, p);
	struct collect *c;

	T_CASE("another process: the child's parts and their Rss");
	c = regions_in(ch.pid, p, 8 * page);
	T_EQ(c->n, 3);
	T_PART(c, 0, p, 0, 2, NULL);
	T_PART(c, 1, p, 2, 6, "child-part");
	T_PART(c, 2, p, 6, 8, NULL);
	T_EQ(c->r[0].rss, 2 * page);
	T_EQ(c->r[1].rss, 4 * page);
	T_EQ(c->r[2].rss, 2 * page);
	c = regions_in(0, p, 8 * page);
	T_EQ(c->n, 1);
	T_PART(c, 0, p, 0, 8, NULL);
	t_reap(ch);
	unmap_guarded(p, 8);
}

static int ignore_run(uint64_t start, uint64_t end, enum mmkit__page_state state, void *arg)
{
	(void)start, (void)end, (void)state, (void)arg;
	return 0;
}

/* 1 if the kernel has PAGEMAP_SCAN (6.7+), which skips what is not mapped. */
static int have_pagemap_scan(void)
{
	uintptr_t here = (uintptr_t)&page & ~(page - 1);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), ret;

	T_ASSERT(fd >= 0);
	ret = mmkit__pagemap_scan(fd, here, here + page, ignore_run, NULL);
	close(fd);
	return ret != -ENOTTY && ret != -EINVAL;
}

/* A MAP_NORESERVE reservation of 8 TiB, or 1 TiB where the address space is smaller. */
static char *map_sparse(size_t *len)
{
	static const size_t tib = (size_t)1 << 40;
	void *p;

	*len = 8 * tib;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED) {
		*len = tib;
		p = mmap(NULL, *len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	}
	if (p == MAP_FAILED)
		T_SKIP("cannot reserve 1 TiB of address space: %s", strerror(errno));
	/* With THP "always" (Debian's kernels) one write would fault in 2 MiB. */
	T_EQ(madvise(p, *len, MADV_NOHUGEPAGE), 0);
	return p;
}

/*
 * Names the two halves of a sparse mapping, writes to the pages at @offs,
 * and expects each half's Rss to be its own pages, read within @limit s.
 */
static void sparse_case(const char *what, const size_t *offs, size_t noffs, double limit)
{
	size_t len, half, i, want[2] = { 0, 0 };
	char *p = map_sparse(&len);
	struct collect *c;
	double t;

	half = len / 2;
	T_EQ(mmkit_name(p, half, "sparse-a"), 0);
	T_EQ(mmkit_name(p + half, half, "sparse-b"), 0);
	for (i = 0; i < noffs; i++) {
		p[offs[i] % len] = 1;
		want[offs[i] % len >= half] += page;
	}
	t = t_now();
	c = regions_in(0, p, len);
	t = t_now() - t;
	printf("    %s: %zu GiB in two parts read in %.3f s\n", what, len >> 30, t);
	T_EQ(c->n, 2);
	T_ASSERT(is_named(&c->r[0]) && !strcmp(c->r[0].name, "sparse-a"));
	T_ASSERT(is_named(&c->r[1]) && !strcmp(c->r[1].name, "sparse-b"));
	T_EQ(c->r[0].size, half);
	T_EQ(c->r[1].size, half);
	T_EQ(c->r[0].rss, want[0]);
	T_EQ(c->r[1].rss, want[1]);
	if (t >= limit)
		T_FAIL("%s: %.3f s, more than %.1f s", what, t, limit);
	T_EQ(mmkit_name(p, len, NULL), 0);
	munmap(p, len);
}

static void test_sparse(void)
{
	/* Offsets are taken modulo the mapping's length: -page is its last page. */
	const size_t start[] = { 0, 8 * page }, end[] = { (size_t)0 - page };

	T_CASE("a huge sparse mapping named in two parts: Rss exact, cost what is resident");
	sparse_case("2 pages at the start", start, 2, 1.0);
	sparse_case("nothing resident", NULL, 0, 1.0);
	/*
	 * The last page of the mapping: without PAGEMAP_SCAN every pagemap
	 * entry up to it must be read (8 bytes a page), so only the kernel's
	 * scan can bound this by what is resident.
	 */
	if (have_pagemap_scan())
		sparse_case("1 page at the very end", end, 1, 1.0);
	else
		printf("    (no PAGEMAP_SCAN: a page at the end of the mapping costs a full pagemap read; not timed)\n");
}

/* Writes a registry no mmkit would write: only the one sound entry may be used. */
static void child_lies(void *arg)
{
	struct mmkit__registry_header h = registry_forged_header(6, 0);
	struct mmkit__name_range e[6];
	char *p = arg;
	int i;

	T_EQ(mmkit_name(p, page, "honest"), 0);
	T_ASSERT(registry_fd() >= 0);
	memset(e, 0, sizeof(e));
	for (i = 0; i < 6; i++) {
		e[i].start = (uintptr_t)p + (uint64_t)i * page;
		e[i].end = e[i].start + page;
		snprintf(e[i].name, sizeof(e[i].name), "sound");
	}
	e[1].start = e[0].start;			/* overlaps its neighbour */
	snprintf(e[2].name, sizeof(e[2].name), "\033[31mred");	/* a terminal escape */
	e[3].end = e[3].start;				/* empty */
	memset(e[4].name, 'x', sizeof(e[4].name));	/* no NUL */
	snprintf(e[5].name, sizeof(e[5].name), "back$ticks`");	/* forbidden characters */
	/* After the library's registry, so that it overrides "honest". */
	T_ASSERT(registry_forge(&h, e, 6, registry_fd()) >= 0);
}

/* A writer that stopped in the middle of an update, forever (seq odd). */
static void child_stuck(void *arg)
{
	struct mmkit__registry_header h = registry_forged_header(1, 7);
	struct mmkit__name_range e;
	char *p = arg;

	memset(&e, 0, sizeof(e));
	e.start = (uintptr_t)p;
	e.end = e.start + page;
	snprintf(e.name, sizeof(e.name), "stuck");
	T_ASSERT(registry_forge(&h, &e, 1, 2) >= 0);
}

static void test_hostile(void)
{
	char *p = map_guarded(8);
	struct t_child ch;
	struct collect *c;
	int i, sound = 0;

	T_CASE("registry: entries another process could not have made are ignored");
	ch = t_spawn_paused(child_lies, p);
	c = regions_in(ch.pid, p, 8 * page);
	for (i = 0; i < c->n; i++) {
		if (!is_named(&c->r[i]))
			continue;
		if (c->r[i].start != (uintptr_t)p || strcmp(c->r[i].name, "sound"))
			T_FAIL("a lie was believed: %lx-%lx \"%s\"", c->r[i].start, c->r[i].end,
			       c->r[i].name);
		sound++;
	}
	T_EQ(sound, 1);
	t_reap(ch);

	T_CASE("registry: a writer that died in an update: read anyway (after a second), entries checked");
	ch = t_spawn_paused(child_stuck, p);
	c = regions_in(ch.pid, p, page);
	T_EQ(c->n, 1);
	T_PART(c, 0, p, 0, 1, "stuck");
	t_reap(ch);
	unmap_guarded(p, 8);
}

static void test_kind_names(void)
{
	static const char *const expected[] = {
		[MMKIT_REGION_ANON] = "anon", [MMKIT_REGION_ANON_NAMED] = "anon_named",
		[MMKIT_REGION_REGISTRY] = "registry", [MMKIT_REGION_FILE] = "file",
		[MMKIT_REGION_HEAP] = "heap", [MMKIT_REGION_STACK] = "stack",
		[MMKIT_REGION_SPECIAL] = "special",
	};
	size_t i;

	T_CASE("mmkit_region_kind_name: each kind's stable word, NULL beyond");
	for (i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		T_ASSERT(mmkit_region_kind_name((enum mmkit_region_kind)i) &&
			 !strcmp(mmkit_region_kind_name((enum mmkit_region_kind)i), expected[i]));
	T_ASSERT(!mmkit_region_kind_name((enum mmkit_region_kind)i));
	T_ASSERT(!mmkit_region_kind_name((enum mmkit_region_kind)-1));
}

int main(void)
{
	struct mmkit_features f;

	page = (size_t)sysconf(_SC_PAGESIZE);
	T_EQ(mmkit_probe(&f), 0);
	registry = f.feature[MMKIT_FEATURE_NAMES].status == MMKIT_STATUS_FALLBACK;
	test_kind_names();
	test_basics();
	test_split();
	test_split_mixed();
	test_several();
	test_other_process();
	test_sparse();
	if (registry)
		test_hostile();
	return T_EXIT_PASS;
}
