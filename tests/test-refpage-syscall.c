// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The syscall backend: refpage_create(2) of kernels with the reference-page
 * series (kernel/patches/6.12/), found only through the number the kernel
 * publishes in /sys/kernel/mm/refpage/syscall_nr.
 *
 * On a kernel without the series (stock kernels, this machine's) the
 * backend is not chosen, and forcing it fails with -ENODEV and says why.
 * On one with it, it is the default, named by the probe, and its mappings
 * keep what refpage.ko's cannot: mlock() locks them, and MADV_WIPEONFORK
 * gives a child the pattern.  The contract items themselves are
 * test-refpage's and test-refpage-kernel's, run with "syscall" (their
 * .args files).
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>

#include "mmkit.h"
#include "harness.h"

#define NR_FILE		"/sys/kernel/mm/refpage/syscall_nr"
#define NPAGES		16

static const unsigned char pattern[16] = {
	0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
	0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
};
static size_t page;

static void absent(void)
{
	struct mmkit_features f;
	struct mmkit_refpage *rp;
	char why[MMKIT_REASON_MAX];

	T_CASE("no " NR_FILE ": not chosen, -ENODEV when forced, and why");
	T_EQ(mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_SYSCALL, why, sizeof(why)),
	     -ENODEV);
	T_ASSERT(!strcmp(why, "no refpage_create(2) here"));
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, MMKIT_REFPAGE_BACKEND_SYSCALL), -ENODEV);
	setenv("MMKIT_REFPAGE_BACKEND", "syscall", 1);
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), -ENODEV);
	unsetenv("MMKIT_REFPAGE_BACKEND");
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), 0);
	T_ASSERT(strcmp(mmkit_refpage_backend(rp), "syscall") != 0);
	printf("    default backend here: %s\n", mmkit_refpage_backend(rp));
	mmkit_refpage_destroy(rp);
	T_EQ(mmkit_probe(&f), 0);
	T_ASSERT(strcmp(f.feature[MMKIT_FEATURE_REFPAGE].backend, "syscall") != 0);
	T_ASSERT(strstr(f.feature[MMKIT_FEATURE_REFPAGE].reason, "syscall: no refpage_create(2) here"));
}

/* VmLck of /proc/self/status, in kB. */
static long locked_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *file = fopen("/proc/self/status", "r");

	T_ASSERT(file != NULL);
	while (fgets(line, sizeof(line), file))
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	fclose(file);
	T_ASSERT(kb >= 0);
	return kb;
}

static void child_sees_pattern(void *arg)
{
	t_expect_bytes(arg, 1, pattern[0]);
}

static void present(void)
{
	char why[MMKIT_REASON_MAX], buf[16] = "";
	struct mmkit_features f;
	struct mmkit_refpage *rp;
	unsigned char *p;
	long before;
	int fd = open(NR_FILE, O_RDONLY);

	T_CASE(NR_FILE ": the default, named by the probe");
	T_ASSERT(fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	T_EQ(mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_SYSCALL, why, sizeof(why)), 0);
	T_ASSERT(!strcmp(why, "available"));
	T_EQ(mmkit_probe(&f), 0);
	T_EQ(f.feature[MMKIT_FEATURE_REFPAGE].status, MMKIT_STATUS_NATIVE);
	T_ASSERT(!strcmp(f.feature[MMKIT_FEATURE_REFPAGE].backend, "syscall"));
	T_ASSERT(strstr(f.feature[MMKIT_FEATURE_REFPAGE].reason, "syscall keeps items 1-10"));
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), 0);
	T_ASSERT(!strcmp(mmkit_refpage_backend(rp), "syscall"));
	printf("    refpage_create() is system call %ld here\n", strtol(buf, NULL, 10));

	T_CASE("mlock() locks the range (refpage.ko's VM_MIXEDMAP ranges stay unlocked)");
	T_EQ(mmkit_refpage_map(rp, NPAGES * page, PROT_READ | PROT_WRITE, (void **)&p), 0);
	before = locked_kb();
	T_EQ(mlock(p, NPAGES * page), 0);
	T_EQ(locked_kb() - before, (long)(NPAGES * page / 1024));
	t_expect_bytes(p + page, 1, pattern[0]);
	T_EQ(munlock(p, NPAGES * page), 0);

	T_CASE("MADV_WIPEONFORK: the child reads the pattern, the parent its own data");
	p[0] = 1;
	T_EQ(madvise(p, NPAGES * page, MADV_WIPEONFORK), 0);
	T_CHILD_OK(t_in_child(child_sees_pattern, p));
	T_EQ(p[0], 1);
	T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);
	mmkit_refpage_destroy(rp);
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (access(NR_FILE, F_OK)) {
		if (t_required("syscall"))
			T_FAIL("MMKIT_TEST_REQUIRE has syscall: no " NR_FILE);
		absent();
	} else {
		present();
	}
	return T_EXIT_PASS;
}
