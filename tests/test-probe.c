// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_probe(): every feature answers with a known status, a backend and
 * a reason, and the answers match what the kernel does when asked directly.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>

#include "harness.h"
#include "mmkit.h"

static int raw_userfaultfd_works(void)
{
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);

	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int raw_mlock2_works(void)
{
	return !syscall(SYS_mlock2, NULL, 0, MLOCK_ONFAULT);
}

static int raw_memfd_secret_works(void)
{
	int fd = syscall(SYS_memfd_secret, 0);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int raw_vma_names_work(void)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok;

	T_ASSERT(p != MAP_FAILED);
	ok = !prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, 4096, "probe");
	munmap(p, 4096);
	return ok;
}

int main(void)
{
	struct mmkit_features f, again;
	int i;

	T_CASE("bad input and name tables");
	T_EQ(mmkit_probe(NULL), -EINVAL);
	T_ASSERT(mmkit_feature_name(MMKIT_FEATURE_COUNT) == NULL);
	T_ASSERT(mmkit_feature_name((enum mmkit_feature_id)-1) == NULL);
	T_ASSERT(mmkit_status_name((enum mmkit_status)99) == NULL);
	T_ASSERT(!strcmp(mmkit_feature_name(MMKIT_FEATURE_NAMES), "names"));
	T_ASSERT(!strcmp(mmkit_status_name(MMKIT_STATUS_FALLBACK), "fallback"));

	T_CASE("every feature has a status, a backend and a reason");
	T_EQ(mmkit_probe(&f), 0);
	for (i = 0; i < MMKIT_FEATURE_COUNT; i++) {
		const struct mmkit_feature *ft = &f.feature[i];

		printf("    %-13s %-15s %-13s %s\n", mmkit_feature_name(i),
		       mmkit_status_name(ft->status), ft->backend, ft->reason);
		T_ASSERT(mmkit_status_name(ft->status) != NULL);
		T_ASSERT(ft->backend[0] != '\0');
		T_ASSERT(ft->reason[0] != '\0');
		T_ASSERT(memchr(ft->reason, '\0', sizeof(ft->reason)) != NULL);
	}

	T_CASE("answers are cached and stable");
	T_EQ(mmkit_probe(&again), 0);
	T_ASSERT(!memcmp(&f, &again, sizeof(f)));

	T_CASE("answers match the kernel");
	T_EQ(f.feature[MMKIT_FEATURE_USERFAULTFD].status == MMKIT_STATUS_NATIVE,
	     raw_userfaultfd_works());
	T_EQ(f.feature[MMKIT_FEATURE_LOCK_ONFAULT].status == MMKIT_STATUS_NATIVE,
	     raw_mlock2_works());
	T_EQ(f.feature[MMKIT_FEATURE_NAMES].status,
	     raw_vma_names_work() ? MMKIT_STATUS_NATIVE : MMKIT_STATUS_FALLBACK);
	T_EQ(f.feature[MMKIT_FEATURE_REFPAGE].status,
	     access("/dev/refpage", R_OK | W_OK) ? MMKIT_STATUS_FALLBACK : MMKIT_STATUS_NATIVE);
	if (!getenv("MMKIT_SECRET_BACKEND") && !getenv("MMKIT_SECRET_REQUIRE"))
		T_EQ(f.feature[MMKIT_FEATURE_SECRET].status,
		     raw_memfd_secret_works() ? MMKIT_STATUS_NATIVE : MMKIT_STATUS_FALLBACK);
#if !defined(__aarch64__)
	T_EQ(f.feature[MMKIT_FEATURE_PAC].status, MMKIT_STATUS_UNSUPPORTED);
#endif
	return T_EXIT_PASS;
}
