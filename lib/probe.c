// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_probe(): what this kernel offers and which backend each feature
 * uses.  Each feature's own file answers for it (feature.h); this file
 * only gathers the answers, once per process, and caches them like the
 * features cache their own decisions.
 */
#include <errno.h>
#include <pthread.h>

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

static struct mmkit_features cached;
static pthread_once_t cached_once = PTHREAD_ONCE_INIT;

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

static void probe_all(void)
{
	mmkit__probe_refpage(&cached.feature[MMKIT_FEATURE_REFPAGE]);
	mmkit__probe_names(&cached.feature[MMKIT_FEATURE_NAMES]);
	mmkit__probe_pac(&cached.feature[MMKIT_FEATURE_PAC]);
	mmkit__probe_secret(&cached.feature[MMKIT_FEATURE_SECRET]);
	mmkit__probe_lock(&cached.feature[MMKIT_FEATURE_LOCK_ONFAULT]);
	mmkit__probe_userfaultfd(&cached.feature[MMKIT_FEATURE_USERFAULTFD]);
}

static int probe(struct mmkit_features *f)
{
	if (!f)
		return -EINVAL;
	pthread_once(&cached_once, probe_all);
	*f = cached;
	return 0;
}

MMKIT_EXPORT int mmkit_probe(struct mmkit_features *f)
{
	return MMKIT__CALL(probe(f));
}
