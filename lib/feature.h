/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * How each feature answers mmkit_probe(): its file defines mmkit__probe_X(),
 * which fills a struct mmkit_feature with mmkit__feature_set() and
 * returns 1 if that answer may be kept for the life of the process (the
 * kernel's answer, no passing failure in it, no figure that changes), 0
 * if it must be asked again at the next call.  probe.c only gathers the
 * answers and keeps those.  Not installed.
 */
#ifndef MMKIT_FEATURE_H
#define MMKIT_FEATURE_H

#include "mmkit.h"

int mmkit__probe_refpage(struct mmkit_feature *f);
int mmkit__probe_names(struct mmkit_feature *f);
int mmkit__probe_pac(struct mmkit_feature *f);
int mmkit__probe_secret(struct mmkit_feature *f);
int mmkit__probe_lock(struct mmkit_feature *f);
int mmkit__probe_userfaultfd(struct mmkit_feature *f);

/* Sets @f's status, backend and printf-formatted reason. */
void mmkit__feature_set(struct mmkit_feature *f, enum mmkit_status status,
			const char *backend, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* MMKIT_FEATURE_H */
