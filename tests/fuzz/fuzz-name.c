// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_name_valid() over any string: 0 or -errno, and a name it accepts
 * obeys the kernel's rules (shorter than MMKIT_NAME_MAX, printable, none
 * of the bytes the kernel refuses).
 */
#include <errno.h>
#include <string.h>

#include "mmkit.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	int ret;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	ret = mmkit_name_valid(s);
	F_CHECK(ret == 0 || (ret < 0 && ret > -4096));
	if (ret == 0) {
		size_t n = strlen(s);

		F_CHECK(n < MMKIT_NAME_MAX);
		for (size_t i = 0; i < n; i++)
			F_CHECK(s[i] >= 0x20 && s[i] < 0x7f && !strchr("\\`$[]", s[i]));
	}
	free(s);
	return 0;
}
