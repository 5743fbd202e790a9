// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
// The same consumer in C++: the header must be usable from C++ as installed.
#include <cstdio>
#include <mmkit.h>

int main()
{
	mmkit_features f;

	if (mmkit_probe(&f))
		return 1;
	std::printf("lock_onfault: %s\n",
		    mmkit_status_name(f.feature[MMKIT_FEATURE_LOCK_ONFAULT].status));
	return mmkit_name_valid("bad[name]") == -22 ? 0 : 1;
}
