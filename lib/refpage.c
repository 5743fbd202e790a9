// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#include "internal.h"

void mmkit__probe_refpage(struct mmkit_feature *f)
{
	mmkit__feature_set(f, MMKIT_STATUS_NOT_IMPLEMENTED, "none", "not implemented yet");
}
