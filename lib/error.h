/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The calling thread's last error, which mmkit_last_error() words.  Every
 * exported call that can fail is
 *
 *	MMKIT_EXPORT int mmkit_OP(args)
 *	{
 *		return MMKIT__CALL(op_body(args));
 *	}
 *
 * and code below it that knows more than the errno says records that with
 * mmkit__error_detail().  Nothing here touches errno.  Not installed.
 */
#ifndef MMKIT_ERROR_H
#define MMKIT_ERROR_H

/* Forgets the detail an earlier call recorded: called as each call starts. */
void mmkit__error_begin(void);
/*
 * Records why the call in progress fails with @err (a -errno), in words
 * the errno alone does not give ("locking 64 KiB would exceed
 * RLIMIT_MEMLOCK: ...").  The call's message uses it if it returns @err.
 */
void mmkit__error_detail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 if the call in progress recorded a detail for @err: a caller adds its own only where none is. */
int mmkit__error_has_detail(int err);
/* Returns @ret; a negative one becomes the thread's last error, of @op. */
int mmkit__error_end(const char *op, int ret);

/* Runs @body, a call's work, and records its failure under the caller's name. */
#define MMKIT__CALL(body)	(mmkit__error_begin(), mmkit__error_end(__func__, (body)))

#endif /* MMKIT_ERROR_H */
