/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* What lock.c offers the other feature files; not installed. */
#ifndef MMKIT_LOCK_H
#define MMKIT_LOCK_H

/*
 * 1 if RLIMIT_MEMLOCK does not apply to this thread: CAP_IPC_LOCK in the
 * initial user namespace, as the kernel's capable() asks; 0 if it does,
 * or -errno.
 */
int mmkit__memlock_exempt(void);

#endif /* MMKIT_LOCK_H */
