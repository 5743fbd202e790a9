// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#include <stdarg.h>
#include <stdio.h>

#include "feature.h"

void mmkit__feature_set(struct mmkit_feature *f, enum mmkit_status status,
			const char *backend, const char *fmt, ...)
{
	va_list ap;

	f->status = status;
	snprintf(f->backend, sizeof(f->backend), "%s", backend);
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
}
