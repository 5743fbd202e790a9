// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Reference pages: which backend an object gets (mmkit_refpage(3)).  The
 * default where nothing is asked, a MMKIT_REFPAGE_BACKEND_* flag, the
 * MMKIT_REFPAGE_BACKEND variable and a flag over it, the refusal of a
 * backend that cannot work here, and what mmkit_probe() reports; an older
 * kernel's refusals, played by seccomp (memfd works without its seal,
 * forcing uffd fails and says why); and, as root, whether uid 65534 may
 * have uffd.  These span backends, so they run once, with memfd: every
 * kernel that can run mmkit has it.  The contract on each backend is
 * test-refpage's and test-refpage-kernel's (their .args files).
 */
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "refpage-test.h"

static void selection(void)
{
	int kmod = !access("/dev/refpage", R_OK | W_OK);
	int sc = !mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_SYSCALL, NULL, 0);
	/* The default: refpage_create(2) where the kernel has it, else refpage.ko, else memfd. */
	const char *def = sc ? "syscall" : kmod ? "kmod" : "memfd";
	char keeps[64];
	struct mmkit_features f;
	struct mmkit_refpage *rp;
	char why[MMKIT_REASON_MAX];
	int ret;

	T_CASE("selection: default, flags, MMKIT_REFPAGE_BACKEND, kmod, probe");
	unsetenv("MMKIT_REFPAGE_BACKEND");
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), 0);
	T_ASSERT(!strcmp(mmkit_refpage_backend(rp), def));
	T_EQ(mmkit_refpage_contract(rp), MMKIT_REFPAGE_FULL_CONTRACT);
	mmkit_refpage_destroy(rp);

	T_EQ(mmkit_refpage_create(&rp, pattern, 16, MMKIT_REFPAGE_BACKEND_MEMFD |
				  MMKIT_REFPAGE_BACKEND_UFFD), -EINVAL);
	T_EQ(mmkit_refpage_backend_available(0, why, sizeof(why)), -EINVAL);
	T_EQ(mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_MEMFD, why, sizeof(why)), 0);

	/* Without refpage.ko, forcing kmod fails and says why. */
	if (!kmod) {
		T_EQ(mmkit_refpage_create(&rp, pattern, 16, MMKIT_REFPAGE_BACKEND_KMOD), -ENODEV);
		T_EQ(mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_KMOD, why, sizeof(why)),
		     -ENODEV);
		T_ASSERT(!strcmp(why, "/dev/refpage absent: load refpage.ko"));
		setenv("MMKIT_REFPAGE_BACKEND", "kmod", 1);
		T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), -ENODEV);
	}
	setenv("MMKIT_REFPAGE_BACKEND", "bogus", 1);
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), -EINVAL);
	setenv("MMKIT_REFPAGE_BACKEND", "memfd", 1);
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), 0);
	T_ASSERT(!strcmp(mmkit_refpage_backend(rp), "memfd"));
	mmkit_refpage_destroy(rp);
	ret = mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_UFFD, why, sizeof(why));
	setenv("MMKIT_REFPAGE_BACKEND", "uffd", 1);
	if (!ret) {
		T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), 0);
		T_ASSERT(!strcmp(mmkit_refpage_backend(rp), "uffd"));
		T_EQ(mmkit_refpage_contract(rp),
		     MMKIT_REFPAGE_FULL_CONTRACT & ~MMKIT_REFPAGE_ITEM(8));
		mmkit_refpage_destroy(rp);
		/* Flags win over the environment. */
		T_EQ(mmkit_refpage_create(&rp, pattern, 16, MMKIT_REFPAGE_BACKEND_MEMFD), 0);
		T_ASSERT(!strcmp(mmkit_refpage_backend(rp), "memfd"));
		mmkit_refpage_destroy(rp);
	} else {
		T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), ret);
	}
	unsetenv("MMKIT_REFPAGE_BACKEND");

	T_EQ(mmkit_probe(&f), 0);
	T_EQ(f.feature[MMKIT_FEATURE_REFPAGE].status,
	     sc || kmod ? MMKIT_STATUS_NATIVE : MMKIT_STATUS_FALLBACK);
	T_ASSERT(!strcmp(f.feature[MMKIT_FEATURE_REFPAGE].backend, def));
	snprintf(keeps, sizeof(keeps), "%s keeps items 1-10", def);
	T_ASSERT(strstr(f.feature[MMKIT_FEATURE_REFPAGE].reason, keeps));
	T_ASSERT(kmod || strstr(f.feature[MMKIT_FEATURE_REFPAGE].reason,
				 "kmod: /dev/refpage absent"));
	printf("    probe: %s\n", f.feature[MMKIT_FEATURE_REFPAGE].reason);
}

/*
 * An older kernel, played by seccomp: memfd_create refuses MFD_NOEXEC_SEAL
 * (before 6.3) and userfaultfd refuses UFFD_USER_MODE_ONLY (before 5.11)
 * and says EPERM otherwise, as to an unprivileged user.
 */
static void old_kernel(void *arg)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_memfd_create, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x8 /* MFD_NOEXEC_SEAL */, 0, 6),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_userfaultfd, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1 /* UFFD_USER_MODE_ONLY */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	char why[MMKIT_REASON_MAX];
	struct mmkit_refpage *rp;
	unsigned char *p;
	int i;

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		T_FAIL("seccomp: %s", strerror(errno));
	/* memfd falls back to a memfd without the seal, and keeps doing so. */
	for (i = 0; i < 2; i++) {
		rp = create(MMKIT_REFPAGE_BACKEND_MEMFD, 16);
		p = map(rp, 4 * page, PROT_READ | PROT_WRITE);
		T_ASSERT(is_pattern(p, 4 * page, 16));
		T_EQ(mmkit_refpage_unmap(rp, p, 4 * page), 0);
		mmkit_refpage_destroy(rp);
	}
	/* Forcing uffd fails and says why. */
	T_EQ(mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_UFFD, why, sizeof(why)), -EPERM);
	T_ASSERT(strstr(why, "EPERM"));
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, MMKIT_REFPAGE_BACKEND_UFFD), -EPERM);
	setenv("MMKIT_REFPAGE_BACKEND", "uffd", 1);
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, 0), -EPERM);
	printf("    old kernel: memfd without MFD_NOEXEC_SEAL works; uffd: %s\n", why);
	fflush(stdout);
}

/* 6.18 lets uid 65534 open userfaultfd with UFFD_USER_MODE_ONLY despite the sysctl. */
static void uffd_as_nobody(void *arg)
{
	char why[MMKIT_REASON_MAX];

	(void)arg;
	t_become_nobody();
	if (mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_UFFD, why, sizeof(why)))
		printf("    uffd as nobody: %s\n", why);
	else
		printf("    uffd as nobody: available (UFFD_USER_MODE_ONLY)\n");
	fflush(stdout);
}

int main(void)
{
	char why[MMKIT_REASON_MAX];

	if (mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_MEMFD, why, sizeof(why)))
		T_SKIP("backend memfd unavailable: %s", why);
	page = (size_t)sysconf(_SC_PAGESIZE);
	selection();
	T_CHILD_OK(t_in_child(old_kernel, NULL));
	if (t_is_root() && !mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_UFFD, NULL, 0))
		T_CHILD_OK(t_in_child(uffd_as_nobody, NULL));
	return T_EXIT_PASS;
}
