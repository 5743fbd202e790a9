// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Naming reference-page memory (mmkit_name(3), "Reference pages"), on the
 * backend named on the command line: a range mapped, one tiled over
 * several mappings and an arena attached keep the name mmkit_name() gave
 * them, in mmkit_regions() and in `mmkit maps`; clearing works;
 * unmapping through the library takes the names along (an anonymous
 * mapping made at those addresses next shows none), and remapping moves
 * them; ordinary files and other memfds are still refused with EBADF.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "mmkit.h"
#include "harness.h"
#include "names-registry.h"

#define NPAGES		16

static size_t page;
static char mmkit_path[4096];
static const unsigned char pattern = 0x5a;

/* What mmkit_regions() says about [start, end): the bytes named @name, and by whom. */
struct named {
	uintptr_t start;
	uintptr_t end;
	const char *name;
	size_t bytes;
	int kinds;		/* bit per enum mmkit_region_kind seen named */
};

static int named_fn(const struct mmkit_region *r, void *arg)
{
	struct named *n = arg;
	uintptr_t s = r->start > n->start ? r->start : n->start;
	uintptr_t e = r->end < n->end ? r->end : n->end;

	if (s < e && !strcmp(r->name, n->name) &&
	    (r->kind == MMKIT_REGION_REGISTRY || r->kind == MMKIT_REGION_ANON_NAMED)) {
		n->bytes += e - s;
		n->kinds |= 1 << r->kind;
	}
	return 0;
}

static size_t named_bytes(const void *p, size_t len, const char *name)
{
	struct named n = { (uintptr_t)p, (uintptr_t)p + len, name, 0, 0 };

	T_EQ(mmkit_regions(0, named_fn, &n), 0);
	printf("    %zu of %zu bytes named %s%s%s\n", n.bytes, len, name,
	       n.kinds & (1 << MMKIT_REGION_REGISTRY) ? " (registry)" : "",
	       n.kinds & (1 << MMKIT_REGION_ANON_NAMED) ? " (kernel)" : "");
	return n.bytes;
}

/* `mmkit maps` of this process: the Size in KiB of the line of @name, or -1. */
static long maps_size_kib(const char *name)
{
	char cmd[4200], line[1024], want[128];
	long size = -1, kib;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s maps %d", mmkit_path, (int)getpid());
	snprintf(want, sizeof(want), "[anon:%s]\n", name);
	fflush(NULL);
	f = popen(cmd, "r");
	T_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (strlen(line) > strlen(want) &&
		    !strcmp(line + strlen(line) - strlen(want), want) &&
		    sscanf(line, "%ld", &kib) == 1)
			size = kib;
	T_EQ(pclose(f), 0);
	printf("    mmkit maps: [anon:%s] %ld KiB\n", name, size);
	return size;
}

static void named_range(struct mmkit_refpage *rp, size_t len, const char *name)
{
	void *v;
	unsigned char *p;

	T_EQ(mmkit_refpage_map(rp, len, PROT_READ | PROT_WRITE, &v), 0);
	p = v;
	p[0] = 1;
	T_EQ(mmkit_name(p, len, name), 0);
	T_EQ(named_bytes(p, len, name), len);
	T_EQ(maps_size_kib(name), (long)(len >> 10));
	T_EQ(p[0], 1);
	T_EQ(p[page], pattern);
	T_EQ(mmkit_name(p, len, NULL), 0);
	T_EQ(named_bytes(p, len, name), 0);
	T_EQ(mmkit_refpage_unmap(rp, p, len), 0);
}

static void attach_keeps_name(struct mmkit_refpage *rp)
{
	size_t len = NPAGES * page;
	unsigned char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(p != MAP_FAILED);
	p[0] = 7;
	T_EQ(mmkit_name(p, len, "refpage-arena"), 0);
	T_EQ(named_bytes(p, len, "refpage-arena"), len);
	T_EQ(mmkit_refpage_attach(rp, p, len), 0);
	T_EQ(p[0], 7);
	T_EQ(p[page], pattern);
	T_EQ(named_bytes(p, len, "refpage-arena"), len);
	T_EQ(maps_size_kib("refpage-arena"), (long)(len >> 10));
	T_EQ(mmkit_name(p, len, NULL), 0);
	T_EQ(mmkit_refpage_unmap(rp, p, len), 0);
}

/* Anonymous memory at exactly @p, which must be free: whatever name it shows is stale. */
static void map_at(void *p, size_t len)
{
	void *q = mmap(p, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	T_ASSERT(q == p);
}

/*
 * mmkit_refpage_unmap() of a named range, in part and whole: the next
 * mapping at those addresses is not reported under the old name.
 */
static void unmap_forgets(struct mmkit_refpage *rp)
{
	size_t len = NPAGES * page;
	unsigned char *p;
	void *v;

	T_EQ(mmkit_refpage_map(rp, len, PROT_READ | PROT_WRITE, &v), 0);
	p = v;
	T_EQ(mmkit_name(p, len, "refpage-unmapped"), 0);
	T_EQ(named_bytes(p, len, "refpage-unmapped"), len);
	/* The middle four pages, then the rest. */
	T_EQ(mmkit_refpage_unmap(rp, p + 4 * page, 4 * page), 0);
	map_at(p + 4 * page, 4 * page);
	T_EQ(named_bytes(p, len, "refpage-unmapped"), len - 4 * page);
	T_EQ(munmap(p + 4 * page, 4 * page), 0);
	T_EQ(mmkit_refpage_unmap(rp, p, len), 0);
	map_at(p, len);
	T_EQ(named_bytes(p, len, "refpage-unmapped"), 0);
	T_EQ(munmap(p, len), 0);
}

/* mmkit_refpage_remap() moves the names with the memory, as mremap(2) moves the kernel's. */
static void remap_moves_name(struct mmkit_refpage *rp)
{
	size_t len = NPAGES * page;
	unsigned char *p, *q;
	void *v;

	T_EQ(mmkit_refpage_map(rp, len, PROT_READ | PROT_WRITE, &v), 0);
	p = v;
	p[0] = 3;
	T_EQ(mmkit_name(p + page, len - page, "refpage-moved"), 0);
	T_EQ(mmkit_refpage_remap(rp, p, len, 2 * len, &v), 0);
	q = v;
	T_EQ(q[0], 3);
	T_EQ(named_bytes(q + page, len - page, "refpage-moved"), len - page);
	T_EQ(named_bytes(q, 2 * len, "refpage-moved"), len - page);
	map_at(p, len);
	T_EQ(named_bytes(p, len, "refpage-moved"), 0);
	T_EQ(munmap(p, len), 0);
	T_EQ(mmkit_refpage_unmap(rp, q, 2 * len), 0);
}

/*
 * Files that are not reference pages: a temporary file, a memfd of another
 * name.  Since 6.2 the kernel maps a tmpfs file that has no link at mmap()
 * time, a memfd's always, as anonymous shared memory and names it itself
 * (shmem_mmap()): mmkit_name() then names it through the kernel, or, where
 * the kernel cannot name, in the registry (a memfd only: procfs.c
 * mmkit__vma_memfd()), and refuses it with EBADF where the kernel does.  The temporary file is
 * unlinked after mmap(), so that no kernel names it.
 */
static void files_refused(void)
{
	char path[] = "/tmp/mmkit-test-refpage-names-XXXXXX";
	int fds[2], i, kernel, named;
	void *p;

	fds[0] = mkstemp(path);
	T_ASSERT(fds[0] >= 0);
	fds[1] = memfd_create("mmkit-refpage-not", MFD_CLOEXEC);
	T_ASSERT(fds[1] >= 0);
	for (i = 0; i < 2; i++) {
		T_EQ(ftruncate(fds[i], (off_t)page), 0);
		p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fds[i], 0);
		T_ASSERT(p != MAP_FAILED);
		if (!i)
			unlink(path);
		/* Clearing a name the kernel would give: 0 where it names the file. */
		kernel = !prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, page, 0UL);
		T_ASSERT(!kernel || i == 1);
		/* The registry follows the kernel's rule for a memfd where it cannot name. */
		named = kernel || (i == 1 && kernel_names_memfd());
		T_EQ(mmkit_name(p, page, "a-file"), named ? 0 : -EBADF);
		T_EQ(named_bytes(p, page, "a-file"), named ? page : 0);
		T_EQ(munmap(p, page), 0);
		close(fds[i]);
	}
}

static const struct {
	const char *name;
	unsigned int flag;
} backends[] = {
	{ "kmod", MMKIT_REFPAGE_BACKEND_KMOD },
	{ "memfd", MMKIT_REFPAGE_BACKEND_MEMFD },
	{ "uffd", MMKIT_REFPAGE_BACKEND_UFFD },
};

int main(int argc, char **argv)
{
	char why[MMKIT_REASON_MAX];
	struct mmkit_refpage *rp;
	size_t i;

	for (i = 0; argc == 2 && i < sizeof(backends) / sizeof(backends[0]); i++)
		if (!strcmp(argv[1], backends[i].name))
			break;
	if (argc != 2 || i == sizeof(backends) / sizeof(backends[0])) {
		fprintf(stderr, "usage: %s kmod|memfd|uffd\n", argv[0]);
		return 2;
	}
	if (mmkit_refpage_backend_available(backends[i].flag, why, sizeof(why)))
		T_SKIP("backend %s unavailable: %s", backends[i].name, why);
	t_mmkit_path(mmkit_path, sizeof(mmkit_path), argv[0]);
	page = (size_t)sysconf(_SC_PAGESIZE);
	T_EQ(mmkit_refpage_create(&rp, &pattern, 1, backends[i].flag), 0);
	printf("backend %s:\n", backends[i].name);

	T_CASE("a range is named: mmkit_regions() and mmkit maps show it; clearing works");
	named_range(rp, NPAGES * page, "refpage-range");
	T_CASE("a range of several mappings (9 MiB: three memfd windows) is named whole");
	named_range(rp, 9 << 20, "refpage-tiled");
	T_CASE("attach keeps the name of a named arena");
	attach_keeps_name(rp);
	T_CASE("unmapping a named range through the library takes its name along");
	unmap_forgets(rp);
	T_CASE("remapping a named range moves its name");
	remap_moves_name(rp);
	T_CASE("other files are still refused with EBADF");
	files_refused();
	mmkit_refpage_destroy(rp);
	return T_EXIT_PASS;
}
