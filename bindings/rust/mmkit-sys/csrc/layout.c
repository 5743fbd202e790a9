// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The C layout of the structs mmkit-sys declares by hand, for its tests to
 * compare with Rust's: sizes, and offsets of the fields read last.
 */
#include <stddef.h>

#include "mmkit.h"

#define EXPORT	__attribute__((visibility("default")))

EXPORT const size_t mmkit_sys_layout[] = {
	sizeof(struct mmkit_feature),
	sizeof(struct mmkit_features),
	sizeof(struct mmkit_region),
	offsetof(struct mmkit_region, name),
	offsetof(struct mmkit_region, swap),
	offsetof(struct mmkit_region, have),
	offsetof(struct mmkit_region, anonymous),
	offsetof(struct mmkit_region, flags),
	sizeof(struct mmkit_memlock),
	offsetof(struct mmkit_memlock, exempt),
	sizeof(struct mmkit_secret_stats),
	offsetof(struct mmkit_secret_stats, memlock_limit),
	offsetof(struct mmkit_secret_stats, fallback),
	sizeof(struct mmkit_refpage_stats),
	offsetof(struct mmkit_refpage_stats, cache_bytes),
};
