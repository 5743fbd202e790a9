// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Pointer-authentication key control (arm64): PR_PAC_GET_ENABLED_KEYS and
 * PR_PAC_SET_ENABLED_KEYS.  Everywhere else, on arm64 CPUs without
 * address authentication, and on kernels before 5.13 (which do not know
 * these prctls), the answer is -EOPNOTSUPP rather than the kernel's
 * ambiguous -EINVAL: the arguments are checked here first, so an EINVAL
 * from the kernel can only mean that it does not support the call.
 */
#include <errno.h>
#include <sys/auxv.h>
#include <sys/prctl.h>

#include "internal.h"

#if defined(__aarch64__)
#include <asm/hwcap.h>

#define PAC_ABSENT_REASON \
	"AT_HWCAP has no PACA: CPU or kernel without address authentication"

static int pac_supported(void)
{
	return !!(sys_getauxval(AT_HWCAP) & HWCAP_PACA);
}
#else
#define PAC_ABSENT_REASON \
	"pointer authentication is an arm64 feature; this is not arm64"

static int pac_supported(void)
{
	return 0;
}
#endif

static int pac_absent(void)
{
	mmkit__error_detail(-EOPNOTSUPP, PAC_ABSENT_REASON);
	return -EOPNOTSUPP;
}

/* The arguments were checked: EINVAL means a kernel without these prctls. */
static int kernel_answer(int ret)
{
	if (ret != -EINVAL)
		return ret;
	mmkit__error_detail(-EOPNOTSUPP, "the kernel has no PR_PAC_*_ENABLED_KEYS (Linux 5.13+)");
	return -EOPNOTSUPP;
}

static int get_enabled_keys(unsigned long *keys)
{
	int ret;

	if (!keys)
		return -EINVAL;
	if (!pac_supported())
		return pac_absent();
	ret = sys_prctl(PR_PAC_GET_ENABLED_KEYS, 0, 0, 0, 0);
	if (ret < 0)
		return kernel_answer(ret);
	*keys = (unsigned long)ret;
	return 0;
}

MMKIT_EXPORT int mmkit_pac_get_enabled_keys(unsigned long *keys)
{
	return MMKIT__CALL(get_enabled_keys(keys));
}

static int set_enabled_keys(unsigned long mask, unsigned long enabled)
{
	int ret;

	if ((mask & ~MMKIT_PAC_ALL_KEYS) || (enabled & ~mask)) {
		mmkit__error_detail(-EINVAL, "mask %#lx, enabled %#lx: %s", mask, enabled,
				    mask & ~MMKIT_PAC_ALL_KEYS ? "the mask has bits outside MMKIT_PAC_ALL_KEYS" :
				    "enabled has keys outside the mask");
		return -EINVAL;
	}
	if (!pac_supported())
		return pac_absent();
	ret = sys_prctl(PR_PAC_SET_ENABLED_KEYS, mask, enabled, 0, 0);
	return kernel_answer(ret);
}

MMKIT_EXPORT int mmkit_pac_set_enabled_keys(unsigned long mask, unsigned long enabled)
{
	return MMKIT__CALL(set_enabled_keys(mask, enabled));
}

int mmkit__probe_pac(struct mmkit_feature *f)
{
	unsigned long keys;
	int ret;

	if (!pac_supported()) {
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none", PAC_ABSENT_REASON);
		return 1;
	}
	ret = mmkit_pac_get_enabled_keys(&keys);
	if (ret == -EOPNOTSUPP)
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none",
				   "CPU has PACA but prctl(PR_PAC_GET_ENABLED_KEYS) returned EINVAL: kernel older than 5.13");
	else if (ret < 0)
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none",
				   "prctl(PR_PAC_GET_ENABLED_KEYS) failed: error %d", -ret);
	else
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "prctl",
				   "address authentication present; enabled keys 0x%lx", keys);
	/* The keys a thread enables may change: asked again. */
	return 0;
}
