// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_last_error(): the text of the calling thread's last failure.
 *
 * Per thread, like errno, so that threads never see each other's failures
 * and no lock is taken.  A failure costs a few stores: the text is put
 * together only when asked for, in a buffer of the thread that is never
 * freed or moved, so the pointer returned stays valid for the thread's
 * life.  A success changes nothing, again like errno: the hot paths (a
 * pooled secret, a name) pay one store per call, for the detail below.
 *
 * The detail is what the code that failed knows beyond the errno.  It is
 * forgotten as each call starts: a failure a call recovered from (the
 * secret allocator falling back) must not explain a later, unrelated one.
 * A call that fails because a call it made failed (mmkit_lock() after
 * mmkit_memlock_check()) keeps that call's detail: the failure is its own,
 * the explanation the same.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Long enough for the longest detail (MMKIT_REASON_MAX) after any call's name. */
#define MESSAGE_MAX	(MMKIT_REASON_MAX + 64)

static __thread int pending_err;		/* the detail's errno, 0 if none */
static __thread char pending[MMKIT_REASON_MAX];
static __thread const char *last_op;		/* NULL until a call fails */
static __thread int last_err;
static __thread char last_detail[MMKIT_REASON_MAX];
static __thread char message[MESSAGE_MAX];

void mmkit__error_begin(void)
{
	pending_err = 0;
}

void mmkit__error_detail(int err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pending, sizeof(pending), fmt, ap);
	va_end(ap);
	pending_err = err;
	errno = saved;
}

int mmkit__error_has_detail(int err)
{
	return pending_err == err;
}

int mmkit__error_end(const char *op, int ret)
{
	if (ret >= 0)
		return ret;
	last_op = op;
	last_err = ret;
	if (pending_err == ret)
		memcpy(last_detail, pending, sizeof(last_detail));
	else
		last_detail[0] = '\0';
	return ret;
}

MMKIT_EXPORT const char *mmkit_last_error(void)
{
	const char *reason;
	int saved = errno;

	if (!last_op)
		return "";
	reason = last_detail[0] ? last_detail : strerrordesc_np(-last_err);
	if (reason)
		snprintf(message, sizeof(message), "%s: %s", last_op, reason);
	else
		snprintf(message, sizeof(message), "%s: unknown error %d", last_op, -last_err);
	errno = saved;
	return message;
}
