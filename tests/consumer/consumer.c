// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/* A program built only from the installed header, library and mmkit.pc. */
#include <stdio.h>
#include <mmkit.h>

int main(void)
{
	struct mmkit_features f;

	if (mmkit_probe(&f))
		return 1;
	printf("names: %s\n", mmkit_status_name(f.feature[MMKIT_FEATURE_NAMES].status));
	return mmkit_name_valid("consumer") == 0 ? 0 : 1;
}
