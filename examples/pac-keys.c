// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * pac-keys: which arm64 pointer-authentication keys this thread has
 * enabled, and the same after disabling the instruction B key.
 *
 *   pac-keys
 *
 * Elsewhere than arm64 with PAC it says why not and exits 0: that answer
 * is the library's, not a failure of the example.
 */
#include <errno.h>
#include <stdio.h>

#include "mmkit.h"

static void show(const char *when, unsigned long keys)
{
	printf("%s: APIA %s, APIB %s, APDA %s, APDB %s\n", when,
	       keys & MMKIT_PAC_APIAKEY ? "on" : "off", keys & MMKIT_PAC_APIBKEY ? "on" : "off",
	       keys & MMKIT_PAC_APDAKEY ? "on" : "off", keys & MMKIT_PAC_APDBKEY ? "on" : "off");
}

int main(void)
{
	unsigned long keys;
	int ret;

	ret = mmkit_pac_get_enabled_keys(&keys);
	if (ret == -EOPNOTSUPP) {
		printf("unsupported: %s\n", mmkit_last_error());
		return 0;
	}
	if (!ret) {
		show("enabled", keys);
		ret = mmkit_pac_set_enabled_keys(MMKIT_PAC_APIBKEY, 0);
	}
	if (!ret)
		ret = mmkit_pac_get_enabled_keys(&keys);
	if (ret) {
		fprintf(stderr, "pac-keys: %s\n", mmkit_last_error());
		return 1;
	}
	show("APIB disabled", keys);
	return 0;
}
