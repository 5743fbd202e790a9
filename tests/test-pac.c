// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Pointer-authentication key control.  Argument checks run everywhere;
 * without address authentication every call must say -EOPNOTSUPP.  With
 * it (arm64, run under QEMU by the kernel tier), disabling APIAKEY must
 * make PACIA1716 leave a pointer unsigned, fork must inherit the keys and
 * exec must reset them; the keys are per thread: one thread disabling a key
 * leaves the others' alone.
 */
#include <pthread.h>
#include <sys/auxv.h>

#include "harness.h"
#include "mmkit.h"

#define EXEC_CHILD_ARG	"--report-keys"

static void test_arguments(void)
{
	T_CASE("bad arguments: NULL out, unknown key bits, enabled outside mask");
	T_EQ(mmkit_pac_get_enabled_keys(NULL), -EINVAL);
	T_EQ(mmkit_pac_set_enabled_keys(1UL << 4, 0), -EINVAL);
	T_EQ(mmkit_pac_set_enabled_keys(~0UL, 0), -EINVAL);
	T_EQ(mmkit_pac_set_enabled_keys(MMKIT_PAC_APIAKEY, MMKIT_PAC_APIBKEY), -EINVAL);
}

#if defined(__aarch64__)
#include <asm/hwcap.h>

/* PACIA1716 lives in the hint space, so it assembles for any arm64 target. */
static unsigned long sign_with_ia(unsigned long ptr, unsigned long modifier)
{
	register unsigned long x17 __asm__("x17") = ptr;
	register unsigned long x16 __asm__("x16") = modifier;

	__asm__ volatile("hint #8" : "+r"(x17) : "r"(x16));
	return x17;
}

static int ia_signs(void)
{
	unsigned long p = (unsigned long)&ia_signs;

	/* Two modifiers: a PAC of zero for both would be a 2^-30 coincidence. */
	return sign_with_ia(p, 1) != p || sign_with_ia(p, 2) != p;
}

static void child_inherits(void *arg)
{
	unsigned long keys;

	(void)arg;
	T_EQ(mmkit_pac_get_enabled_keys(&keys), 0);
	T_EQ(keys, MMKIT_PAC_ALL_KEYS & ~MMKIT_PAC_APIAKEY);
	T_ASSERT(!ia_signs());
}

/* A thread of its own disables APIAKEY: its keys change, no one else's. */
static void *thread_disables_ia(void *arg)
{
	unsigned long keys;

	(void)arg;
	if (mmkit_pac_set_enabled_keys(MMKIT_PAC_APIAKEY, 0) ||
	    mmkit_pac_get_enabled_keys(&keys) || keys != (MMKIT_PAC_ALL_KEYS & ~MMKIT_PAC_APIAKEY))
		return "the thread's own keys did not change";
	if (ia_signs())
		return "the thread still signs with APIAKEY";
	return NULL;
}

static void test_per_thread(void)
{
	unsigned long keys;
	pthread_t t;
	void *why;

	T_CASE("keys are per thread: a thread disabling APIAKEY leaves the others' keys");
	T_EQ(pthread_create(&t, NULL, thread_disables_ia, NULL), 0);
	T_EQ(pthread_join(t, &why), 0);
	if (why)
		T_FAIL("%s", (const char *)why);
	T_EQ(mmkit_pac_get_enabled_keys(&keys), 0);
	T_EQ(keys, MMKIT_PAC_ALL_KEYS);
	T_ASSERT(ia_signs());
}

static void test_keys(const char *self)
{
	unsigned long keys;
	char cmd[4096];

	T_CASE("all keys enabled at start; get/set round trip");
	T_EQ(mmkit_pac_get_enabled_keys(&keys), 0);
	T_EQ(keys, MMKIT_PAC_ALL_KEYS);
	T_ASSERT(ia_signs());
	test_per_thread();

	T_CASE("disabling APIAKEY leaves pointers unsigned");
	T_EQ(mmkit_pac_set_enabled_keys(MMKIT_PAC_APIAKEY, 0), 0);
	T_EQ(mmkit_pac_get_enabled_keys(&keys), 0);
	T_EQ(keys, MMKIT_PAC_ALL_KEYS & ~MMKIT_PAC_APIAKEY);
	T_ASSERT(!ia_signs());

	T_CASE("a forked child inherits the enabled keys");
	T_CHILD_OK(t_in_child(child_inherits, NULL));

	T_CASE("exec resets the keys");
	snprintf(cmd, sizeof(cmd), "%s " EXEC_CHILD_ARG, self);
	T_EQ(system(cmd), 0);

	T_CASE("re-enabling APIAKEY signs again");
	T_EQ(mmkit_pac_set_enabled_keys(MMKIT_PAC_APIAKEY, MMKIT_PAC_APIAKEY), 0);
	T_ASSERT(ia_signs());
}

static int report_keys(void)
{
	unsigned long keys;

	return !mmkit_pac_get_enabled_keys(&keys) && keys == MMKIT_PAC_ALL_KEYS ? 0 : 1;
}

static int has_paca(void)
{
	return !!(getauxval(AT_HWCAP) & HWCAP_PACA);
}
#else
static void test_keys(const char *self)
{
	(void)self;
}

static int report_keys(void)
{
	return 1;
}

static int has_paca(void)
{
	return 0;
}
#endif

int main(int argc, char **argv)
{
	unsigned long keys;

	if (argc == 2 && !strcmp(argv[1], EXEC_CHILD_ARG))
		return report_keys();
	test_arguments();
	if (!has_paca()) {
		T_CASE("no address authentication: -EOPNOTSUPP");
		T_EQ(mmkit_pac_get_enabled_keys(&keys), -EOPNOTSUPP);
		T_EQ(mmkit_pac_set_enabled_keys(MMKIT_PAC_APIAKEY, 0), -EOPNOTSUPP);
		T_SKIP("no address authentication here (needs arm64 with PACA): "
		       "only the -EOPNOTSUPP answers were tested");
	}
	if (mmkit_pac_get_enabled_keys(&keys) == -EOPNOTSUPP)
		T_SKIP("the CPU has PACA but the kernel (or emulator) has no "
		       "PR_PAC_GET_ENABLED_KEYS: needs Linux 5.13+ on arm64");
	test_keys(argv[0]);
	return T_EXIT_PASS;
}
