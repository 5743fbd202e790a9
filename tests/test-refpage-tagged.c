// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Tagged reference pages (MMKIT_REFPAGE_TAGGED).  Everywhere: bad tagged
 * patterns are -EINVAL, and without MTE the flag is -EOPNOTSUPP on every
 * backend.  Where refpage.ko is loaded, its request: the first, 16-byte
 * form still creates pages and cannot ask for tags, and without MTE the
 * module refuses REFPAGE_TAGGED with EOPNOTSUPP.  With MTE (the arm64 MTE
 * kernel tiers): uffd refuses the flag; memfd, kmod (when loaded) and
 * syscall (where refpage_create(2) has the series' arm64 part: the
 * custom612-arm64-mte tier) serve it, syscall by default, else kmod; on
 * each, untouched pages read the pattern through its tags granule by
 * granule and fault through a wrong one; the first write copies the page
 * with its tags (the kernel's copy on write); MADV_DONTNEED, fork, read(2)
 * into an untouched page and mmkit_refpage_remap keep them; a uniformly
 * tagged pattern gives a uniformly tagged page; probe names the backends
 * that tag.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "harness.h"
#include "mmkit.h"
#include "mte.h"
#include "../kmod/refpage/refpage.h"

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

/* The module's answer to REFPAGE_TAGGED with @tag for a 16-byte pattern: fd or -errno. */
static int kmod_tagged_request(int dev, unsigned char tag)
{
	static _Alignas(16) unsigned char pattern[MMKIT_MTE_GRANULE];
	struct refpage_create arg = {
		.pattern = (uintptr_t)pattern,
		.pattern_size = sizeof(pattern),
		.flags = REFPAGE_TAGGED,
		.tags = (uintptr_t)&tag,
	};
	int fd = ioctl(dev, REFPAGE_CREATE, &arg);

	return fd >= 0 ? fd : -errno;
}

static void test_kmod_request(int mte)
{
	static _Alignas(16) unsigned char pattern[MMKIT_MTE_GRANULE] = "0123456789abcdef";
	struct refpage_create arg = { .pattern = (uintptr_t)pattern, .pattern_size = 16 };
	int dev = open("/dev/refpage", O_RDWR | O_CLOEXEC), fd;
	unsigned char *p;

	if (dev < 0) {
		printf("  (no /dev/refpage: the module's request is not tested)\n");
		return;
	}
	T_CASE("kmod: the 16-byte request of old callers still creates pages");
	fd = ioctl(dev, REFPAGE_CREATE_V1, &arg);
	T_ASSERT(fd >= 0);
	p = mmap(NULL, 2 * getpagesize(), PROT_READ, MAP_PRIVATE, fd, 0);
	T_ASSERT(p != MAP_FAILED);
	T_ASSERT(!memcmp(p + getpagesize() + 16, pattern, 16));
	munmap(p, 2 * getpagesize());
	close(fd);

	T_CASE("kmod: REFPAGE_TAGGED needs the full request and whole granules");
	arg.flags = REFPAGE_TAGGED;
	T_EQ(ioctl(dev, REFPAGE_CREATE_V1, &arg), -1);
	T_EQ(errno, EINVAL);
	arg.pattern_size = 8;
	T_EQ(ioctl(dev, REFPAGE_CREATE, &arg), -1);
	T_EQ(errno, EINVAL);
	arg.flags = 0x2;
	arg.pattern_size = 16;
	T_EQ(ioctl(dev, REFPAGE_CREATE, &arg), -1);
	T_EQ(errno, EINVAL);

	if (!mte) {
		T_CASE("kmod: without MTE, REFPAGE_TAGGED is EOPNOTSUPP");
		T_EQ(kmod_tagged_request(dev, 5), -EOPNOTSUPP);
	} else {
		T_CASE("kmod: tags are 0-15; a tagged request gives a descriptor");
		T_EQ(kmod_tagged_request(dev, 16), -EINVAL);
		fd = kmod_tagged_request(dev, 5);
		T_ASSERT(fd >= 0);
		close(fd);
	}
	close(dev);
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

	mem = t_mte_page();
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

/* The whole tagged contract on the backend @backend (an MMKIT_REFPAGE_BACKEND_* flag). */
static void test_tagged(unsigned int backend, const char *name)
{
	unsigned char *pattern = make_pattern(), *mem, *moved;
	size_t page = getpagesize(), i;
	struct mmkit_refpage *rp;
	int fds[2];
	void *addr;

	printf(" %s:\n", name);
	T_CASE("tagged: the backend serves the flag");
	T_EQ(mmkit_refpage_create(&rp, pattern, PATTERN_SIZE, MMKIT_REFPAGE_TAGGED | backend), 0);
	T_ASSERT(!strcmp(mmkit_refpage_backend(rp), name));
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

static void test_uniform(unsigned int backend)
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
				  MMKIT_REFPAGE_TAGGED | backend), 0);
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

/*
 * The default for tagged pages is the first backend that tags: syscall
 * (refpage_create(2) with the series' arm64 part), kmod when loaded, else
 * memfd.
 */
static void test_selection(int syscall, int kmod)
{
	unsigned char *pattern = make_pattern();
	struct mmkit_features f;
	struct mmkit_refpage *rp;
	const char *reason, *expected;

	T_CASE("tagged: uffd refuses; the default is syscall, else kmod when loaded, else memfd; "
	       "probe says so");
	T_EQ(mmkit_refpage_create(&rp, pattern, PATTERN_SIZE,
				  MMKIT_REFPAGE_TAGGED | MMKIT_REFPAGE_BACKEND_UFFD), -EOPNOTSUPP);
	T_EQ(mmkit_refpage_create(&rp, pattern, PATTERN_SIZE, MMKIT_REFPAGE_TAGGED), 0);
	T_ASSERT(!strcmp(mmkit_refpage_backend(rp), syscall ? "syscall" : kmod ? "kmod" : "memfd"));
	mmkit_refpage_destroy(rp);
	T_EQ(mmkit_probe(&f), 0);
	reason = f.feature[MMKIT_FEATURE_REFPAGE].reason;
	printf("    probe: %s\n", reason);
	if (syscall)
		expected = kmod ? "tagged (MTE): syscall kmod memfd (uffd: " :
				  "tagged (MTE): syscall memfd (uffd: ";
	else
		expected = kmod ? "tagged (MTE): kmod memfd (uffd: " : "tagged (MTE): memfd (uffd: ";
	T_ASSERT(strstr(reason, expected));
	munmap(pattern, getpagesize());
}

static void run_tagged(void)
{
	char why[MMKIT_REASON_MAX];
	int syscall = !mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_SYSCALL, why,
							 sizeof(why));
	int kmod = !access("/dev/refpage", R_OK | W_OK);

	t_mte_enable();
	test_selection(syscall, kmod);
	test_tagged(MMKIT_REFPAGE_BACKEND_MEMFD, "memfd");
	test_uniform(MMKIT_REFPAGE_BACKEND_MEMFD);
	if (syscall) {
		test_tagged(MMKIT_REFPAGE_BACKEND_SYSCALL, "syscall");
		test_uniform(MMKIT_REFPAGE_BACKEND_SYSCALL);
	} else if (t_required("syscall")) {
		T_FAIL("MMKIT_TEST_REQUIRE has syscall: %s", why);
	} else {
		printf(" syscall: %s, not tested\n", why);
	}
	if (!kmod) {
		printf(" kmod: no /dev/refpage, not tested\n");
		return;
	}
	test_tagged(MMKIT_REFPAGE_BACKEND_KMOD, "kmod");
	test_uniform(MMKIT_REFPAGE_BACKEND_KMOD);
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
	test_kmod_request(!mmkit__mte_available(why, sizeof(why)));
	if (mmkit__mte_available(why, sizeof(why))) {
		T_CASE("no MTE: the tagged flag is -EOPNOTSUPP on every backend");
		T_EQ(mmkit_refpage_create(&rp, pattern, sizeof(pattern), MMKIT_REFPAGE_TAGGED),
		     -EOPNOTSUPP);
		T_EQ(mmkit_refpage_create(&rp, pattern, sizeof(pattern),
					  MMKIT_REFPAGE_TAGGED | MMKIT_REFPAGE_BACKEND_MEMFD),
		     -EOPNOTSUPP);
		T_MISSING("mte", "%s: only the -EINVAL and -EOPNOTSUPP answers were tested", why);
	}
	run_tagged();
	return T_EXIT_PASS;
}
