// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_probe(): what this kernel offers and which backend each feature
 * uses.  Each feature's own file answers for it (feature.h); this file
 * gathers the answers and keeps each one its feature says may be kept
 * (the kernel's answer: no passing failure in it, no figure that
 * changes), so that a feature that opened a descriptor to find out does
 * not at every call.  An answer with a passing failure in it (out of
 * descriptors) is asked again at the next call.
 */
#include <errno.h>

#include "internal.h"

enum { KEPT_NO, KEPT_FILLING, KEPT_YES };

/*
 * A kept answer is written once, by the thread that moved its state
 * from KEPT_NO to KEPT_FILLING, and read only once KEPT_YES: no lock (a
 * fork meanwhile leaves the child's copy KEPT_FILLING, asked at each call).
 */
static struct {
	int state;
	struct mmkit_feature f;
} kept[MMKIT_FEATURE_COUNT];

static int (*const probes[MMKIT_FEATURE_COUNT])(struct mmkit_feature *f) = {
	[MMKIT_FEATURE_REFPAGE]		= mmkit__probe_refpage,
	[MMKIT_FEATURE_NAMES]		= mmkit__probe_names,
	[MMKIT_FEATURE_PAC]		= mmkit__probe_pac,
	[MMKIT_FEATURE_SECRET]		= mmkit__probe_secret,
	[MMKIT_FEATURE_LOCK_ONFAULT]	= mmkit__probe_lock,
	[MMKIT_FEATURE_USERFAULTFD]	= mmkit__probe_userfaultfd,
};

static void probe_one(enum mmkit_feature_id id, struct mmkit_feature *f)
{
	int state = KEPT_NO;

	if (__atomic_load_n(&kept[id].state, __ATOMIC_ACQUIRE) == KEPT_YES) {
		*f = kept[id].f;
		return;
	}
	if (probes[id](f) &&
	    __atomic_compare_exchange_n(&kept[id].state, &state, KEPT_FILLING, 0, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED)) {
		kept[id].f = *f;
		__atomic_store_n(&kept[id].state, KEPT_YES, __ATOMIC_RELEASE);
	}
}

static const char *const feature_names[MMKIT_FEATURE_COUNT] = {
	[MMKIT_FEATURE_REFPAGE]		= "refpage",
	[MMKIT_FEATURE_NAMES]		= "names",
	[MMKIT_FEATURE_PAC]		= "pac",
	[MMKIT_FEATURE_SECRET]		= "secret",
	[MMKIT_FEATURE_LOCK_ONFAULT]	= "lock_onfault",
	[MMKIT_FEATURE_USERFAULTFD]	= "userfaultfd",
};

static const char *const status_names[] = {
	[MMKIT_STATUS_NATIVE]		= "native",
	[MMKIT_STATUS_FALLBACK]		= "fallback",
	[MMKIT_STATUS_UNSUPPORTED]	= "unsupported",
	[MMKIT_STATUS_NOT_IMPLEMENTED]	= "not_implemented",
};

MMKIT_EXPORT const char *mmkit_feature_name(enum mmkit_feature_id id)
{
	if ((unsigned int)id >= MMKIT_FEATURE_COUNT)
		return NULL;
	return feature_names[id];
}

MMKIT_EXPORT const char *mmkit_status_name(enum mmkit_status status)
{
	if ((unsigned int)status >= sizeof(status_names) / sizeof(status_names[0]))
		return NULL;
	return status_names[status];
}

static int probe(struct mmkit_features *f)
{
	struct mmkit_features all = { 0 };
	enum mmkit_feature_id id;

	if (!f)
		return -EINVAL;
	for (id = 0; id < MMKIT_FEATURE_COUNT; id++)
		probe_one(id, &all.feature[id]);
	*f = all;
	return 0;
}

MMKIT_EXPORT int mmkit_probe(struct mmkit_features *f)
{
	return MMKIT__CALL(probe(f));
}
