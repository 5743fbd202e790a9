// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Tagged reference pages (MMKIT_REFPAGE_TAGGED).  Everywhere: bad tagged
 * patterns are -EINVAL, and without MTE the flag is -EOPNOTSUPP on every
 * backend.  With MTE (the arm64 MTE kernel tier): kmod and uffd refuse the
 * flag, memfd serves it; untouched pages read the pattern through its tags
 * granule by granule and fault through a wrong one; the first write copies
 * the page with its tags (the kernel's copy on write); MADV_DONTNEED, fork,
 * read(2) into an untouched page and mmkit_refpage_remap keep them; a
 * uniformly tagged pattern gives a uniformly tagged page.
 */
#include <stdint.h>

#include "harness.h"
#include "mmkit.h"
#include "mte.h"

#define PATTERN_GRANULES	4
#define PATTERN_SIZE		(PATTERN_GRANULES * MMKIT_MTE_GRANULE)
#define PAGES			8

static void test_arguments(void)
{
	static _Alignas(16) unsigned char pattern[2 * PATTERN_SIZE];
	struct mmkit_refpage *rp;

	T_CASE("tagged: patterns under a granule or not granule-aligned are -EINVAL");
	T_EQ(mmkit_refpage_create(&rp, pattern, 8, MMKIT_REFPAGE_TAGGED), -EINVAL);
	T_EQ(mmkit_refpage_create(&rp, pattern + 8, 16, MMKIT_REFPAGE_TAGGED), -EINVAL);
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, MMKIT_REFPAGE_TAGGED | 0x100), -EINVAL);
}

#if defined(__aarch64__)
#include "mte-check.h"

static const unsigned int pattern_tags[PATTERN_GRANULES] = { 3, 5, 7, 9 };

static unsigned char pattern_byte(size_t off)
{
	return (unsigned char)(off % PATTERN_SIZE) ^ 0x5a;
}

/* @p moved to the tag its granule has in the pattern. */
static unsigned char *tagged(unsigned char *p)
{
	size_t g = ((uintptr_t)p % (size_t)getpagesize()) / MMKIT_MTE_GRANULE;

	return mmkit__mte_with_tag(p, pattern_tags[g % PATTERN_GRANULES]);
}

/* A PROT_MTE page whose first PATTERN_SIZE bytes are the tagged pattern. */
static unsigned char *make_pattern(void)
{
	unsigned char *mem;
	size_t i;

	mem = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE | PROT_MTE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		T_FAIL("mmap(PROT_MTE): %s", strerror(errno));
	for (i = 0; i < PATTERN_SIZE; i += MMKIT_MTE_GRANULE)
		mmkit__mte_set_tag(tagged(mem + i));
	for (i = 0; i < PATTERN_SIZE; i++)
		*tagged(mem + i) = pattern_byte(i);
	return mem;
}

/*
 * Every granule of the page at @page has its pattern tag, and every byte
 * read through it is the pattern's, except @written bytes at @page.
 */
static void expect_page(unsigned char *page, size_t written, unsigned char value)
{
	size_t off;

	for (off = 0; off < (size_t)getpagesize(); off += MMKIT_MTE_GRANULE)
		if (mmkit__mte_get_tag(page + off) !=
		    pattern_tags[off / MMKIT_MTE_GRANULE % PATTERN_GRANULES])
			T_FAIL("granule at offset %zu has tag %u, expected %u", off,
			       mmkit__mte_get_tag(page + off),
			       pattern_tags[off / MMKIT_MTE_GRANULE % PATTERN_GRANULES]);
	for (off = 0; off < (size_t)getpagesize(); off++)
		if (*tagged(page + off) != (off < written ? value : pattern_byte(off)))
			T_FAIL("byte %zu is %#x", off, *tagged(page + off));
}

static void child_sees_tags(void *arg)
{
	unsigned char *mem = arg;
	size_t page = getpagesize();

	expect_page(mem + 3 * page, 0, 0);
	memset(tagged(mem + 4 * page), 0x11, MMKIT_MTE_GRANULE);
	expect_page(mem + 4 * page, MMKIT_MTE_GRANULE, 0x11);
	T_MTE_FAULTS(mmkit__mte_with_tag(mem + 3 * page, 0));
}

static void test_tagged(void)
{
	unsigned char *pattern = make_pattern(), *mem, *moved;
	size_t page = getpagesize(), i;
	struct mmkit_refpage *rp;
	int fds[2];
	void *addr;

	T_CASE("tagged: kmod and uffd refuse, memfd serves by default");
	T_EQ(mmkit_refpage_create(&rp, pattern, PATTERN_SIZE,
				  MMKIT_REFPAGE_TAGGED | MMKIT_REFPAGE_BACKEND_KMOD), -EOPNOTSUPP);
	T_EQ(mmkit_refpage_create(&rp, pattern, PATTERN_SIZE,
				  MMKIT_REFPAGE_TAGGED | MMKIT_REFPAGE_BACKEND_UFFD), -EOPNOTSUPP);
	T_EQ(mmkit_refpage_create(&rp, pattern, PATTERN_SIZE, MMKIT_REFPAGE_TAGGED), 0);
	T_ASSERT(!strcmp(mmkit_refpage_backend(rp), "memfd"));
	T_EQ(mmkit_refpage_map(rp, PAGES * page, PROT_READ | PROT_WRITE, &addr), 0);
	mem = addr;

	T_CASE("tagged: untouched pages read the pattern through its tags, granule by granule");
	for (i = 0; i < PAGES; i++)
		expect_page(mem + i * page, 0, 0);

	T_CASE("tagged: a load through a wrong tag faults with SEGV_MTESERR");
	T_MTE_FAULTS(mmkit__mte_with_tag(mem, 0));
	T_MTE_FAULTS(mmkit__mte_with_tag(mem + page + MMKIT_MTE_GRANULE, 3));

	T_CASE("tagged: the first write copies the page with its tags; the others stay");
	memset(tagged(mem + page), 0xee, MMKIT_MTE_GRANULE);
	expect_page(mem + page, MMKIT_MTE_GRANULE, 0xee);
	expect_page(mem + 2 * page, 0, 0);

	T_CASE("tagged: MADV_DONTNEED brings the tagged pattern back");
	T_EQ(madvise(mem + page, page, MADV_DONTNEED), 0);
	expect_page(mem + page, 0, 0);

	T_CASE("tagged: a fork child sees the tags, and its copy on write keeps them");
	T_CHILD_OK(t_in_child(child_sees_tags, mem));
	expect_page(mem + 4 * page, 0, 0);

	T_CASE("tagged: read(2) into an untouched page keeps its tags");
	T_EQ(pipe(fds), 0);
	T_EQ(write(fds[1], "\x77\x77\x77\x77\x77\x77\x77\x77\x77\x77\x77\x77\x77\x77\x77\x77",
		   MMKIT_MTE_GRANULE), MMKIT_MTE_GRANULE);
	T_EQ(read(fds[0], tagged(mem + 5 * page), MMKIT_MTE_GRANULE), MMKIT_MTE_GRANULE);
	expect_page(mem + 5 * page, MMKIT_MTE_GRANULE, 0x77);
	close(fds[0]);
	close(fds[1]);

	T_CASE("tagged: mmkit_refpage_remap keeps data and tags; new pages are tagged");
	memset(tagged(mem + 6 * page), 0x66, MMKIT_MTE_GRANULE);
	T_EQ(mmkit_refpage_remap(rp, mem, PAGES * page, 2 * PAGES * page, &addr), 0);
	moved = addr;
	expect_page(moved + 6 * page, MMKIT_MTE_GRANULE, 0x66);
	for (i = PAGES; i < 2 * PAGES; i++)
		expect_page(moved + i * page, 0, 0);

	T_CASE("tagged: attach is -EOPNOTSUPP");
	T_EQ(mmkit_refpage_attach(rp, moved, page), -EOPNOTSUPP);
	T_EQ(mmkit_refpage_unmap(rp, moved, 2 * PAGES * page), 0);
	mmkit_refpage_destroy(rp);
	munmap(pattern, page);
}

static void test_uniform(void)
{
	unsigned char *pattern, *mem;
	struct mmkit_refpage *rp;
	size_t off;
	void *addr;

	T_CASE("tagged: a 16-byte pattern of tag 12 gives a page of tag 12");
	pattern = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE | PROT_MTE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(pattern != MAP_FAILED);
	mmkit__mte_set_tag(mmkit__mte_with_tag(pattern, 12));
	memset(mmkit__mte_with_tag(pattern, 12), 0xc3, MMKIT_MTE_GRANULE);
	T_EQ(mmkit_refpage_create(&rp, mmkit__mte_with_tag(pattern, 12), MMKIT_MTE_GRANULE,
				  MMKIT_REFPAGE_TAGGED), 0);
	T_EQ(mmkit_refpage_map(rp, getpagesize(), PROT_READ, &addr), 0);
	mem = addr;
	for (off = 0; off < (size_t)getpagesize(); off += MMKIT_MTE_GRANULE) {
		T_EQ(mmkit__mte_get_tag(mem + off), 12);
		T_EQ(*(unsigned char *)mmkit__mte_with_tag(mem + off, 12), 0xc3);
	}
	T_EQ(mmkit_refpage_unmap(rp, mem, getpagesize()), 0);
	mmkit_refpage_destroy(rp);
	munmap(pattern, getpagesize());
}

static void run_tagged(void)
{
	t_mte_enable();
	test_tagged();
	test_uniform();
}
#else
static void run_tagged(void)
{
}
#endif

int main(void)
{
	static _Alignas(16) unsigned char pattern[MMKIT_MTE_GRANULE];
	char why[MMKIT_REASON_MAX];
	struct mmkit_refpage *rp;

	test_arguments();
	if (mmkit__mte_available(why, sizeof(why))) {
		T_CASE("no MTE: the tagged flag is -EOPNOTSUPP on every backend");
		T_EQ(mmkit_refpage_create(&rp, pattern, sizeof(pattern), MMKIT_REFPAGE_TAGGED),
		     -EOPNOTSUPP);
		T_EQ(mmkit_refpage_create(&rp, pattern, sizeof(pattern),
					  MMKIT_REFPAGE_TAGGED | MMKIT_REFPAGE_BACKEND_MEMFD),
		     -EOPNOTSUPP);
		T_SKIP("%s: only the -EINVAL and -EOPNOTSUPP answers were tested", why);
	}
	run_tagged();
	return T_EXIT_PASS;
}
