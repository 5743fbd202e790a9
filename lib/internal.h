/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* Declarations shared by the files of libmmkit; not installed. */
#ifndef MMKIT_INTERNAL_H
#define MMKIT_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
#include "mmkit.h"
#include "sys.h"

/* Marks a definition as part of the public ABI (see libmmkit.map). */
#define MMKIT_EXPORT	__attribute__((visibility("default")))

/*
 * Each feature's file says what it can do on this kernel.  The answers are
 * computed once per process and cached by mmkit_probe().
 */
void mmkit__probe_refpage(struct mmkit_feature *f);
void mmkit__probe_names(struct mmkit_feature *f);
void mmkit__probe_pac(struct mmkit_feature *f);
void mmkit__probe_secret(struct mmkit_feature *f);
void mmkit__probe_lock(struct mmkit_feature *f);
void mmkit__probe_userfaultfd(struct mmkit_feature *f);

/* Sets @f's status, backend and printf-formatted reason. */
void mmkit__feature_set(struct mmkit_feature *f, enum mmkit_status status,
			const char *backend, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * 0 if [addr, addr + len) is a non-empty, non-wrapping range, -EINVAL
 * otherwise.  Page alignment of @addr is required when @aligned.
 */
int mmkit__check_range(const void *addr, size_t len, int aligned);

static inline size_t mmkit__page_round_up(size_t len)
{
	size_t page = sys_page_size();

	return (len + page - 1) & ~(page - 1);
}

#endif /* MMKIT_INTERNAL_H */
