// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_probe(): what this kernel offers and which backend each feature
 * uses.  Each feature's own file answers for it (feature.h); this file
 * only gathers the answers, at every call: each feature keeps what it
 * decided for good (a backend that works, a kernel that refuses), and
 * nothing else may be kept here, or a passing failure of the first call
 * (out of descriptors) would be the answer for the life of the process.
 */
#include <errno.h>

#include "internal.h"

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

	if (!f)
		return -EINVAL;
	mmkit__probe_refpage(&all.feature[MMKIT_FEATURE_REFPAGE]);
	mmkit__probe_names(&all.feature[MMKIT_FEATURE_NAMES]);
	mmkit__probe_pac(&all.feature[MMKIT_FEATURE_PAC]);
	mmkit__probe_secret(&all.feature[MMKIT_FEATURE_SECRET]);
	mmkit__probe_lock(&all.feature[MMKIT_FEATURE_LOCK_ONFAULT]);
	mmkit__probe_userfaultfd(&all.feature[MMKIT_FEATURE_USERFAULTFD]);
	*f = all;
	return 0;
}

MMKIT_EXPORT int mmkit_probe(struct mmkit_features *f)
{
	return MMKIT__CALL(probe(f));
}
