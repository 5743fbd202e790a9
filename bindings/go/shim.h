/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The C side of the Go binding: each mmkit_go_X() calls mmkit_X() and, in
 * the same call, takes the message of a failure.  A goroutine may move to
 * another thread between two cgo calls, and mmkit_last_error() is per
 * thread: it must be read on the thread that failed.  Results come back
 * by value, so no Go pointer is handed to C on the hot paths.
 */
#ifndef MMKIT_GO_SHIM_H
#define MMKIT_GO_SHIM_H

#include <stdint.h>
#include <sys/types.h>

#include "mmkit.h"

/* ret: the call's return; msg: malloc'ed mmkit_last_error() text if ret < 0, else NULL. */
struct mmkit_go_result {
	int ret;
	char *msg;
};

/* The same with the pointer the call stored. */
struct mmkit_go_ptr {
	void *p;
	int ret;
	char *msg;
};

struct mmkit_go_ptr mmkit_go_secret_alloc(size_t size, unsigned int flags);
/* ret: how many secrets it stored in p[] (addresses: see below), or -errno. */
struct mmkit_go_result mmkit_go_secret_alloc_many(uintptr_t *p, size_t n, size_t size);
/* By address: an unsafe.Pointer argument costs a cgocheck of it on every call. */
void mmkit_go_secret_free(uintptr_t p);
struct mmkit_go_result mmkit_go_secret_protect(void *p, int access);
struct mmkit_go_result mmkit_go_secret_stats(struct mmkit_secret_stats *st);

struct mmkit_go_ptr mmkit_go_refpage_create(const void *pattern, size_t size, unsigned int flags);
struct mmkit_go_ptr mmkit_go_refpage_map(struct mmkit_refpage *rp, size_t len);
struct mmkit_go_result mmkit_go_refpage_unmap(struct mmkit_refpage *rp, void *addr, size_t len);

struct mmkit_go_result mmkit_go_name(uintptr_t addr, size_t len, const char *name);
struct mmkit_go_result mmkit_go_name_pages(uintptr_t addr, size_t len, const char *name);
/* Calls the Go function goRegion with each region and @handle (a cgo.Handle). */
struct mmkit_go_result mmkit_go_regions(pid_t pid, uintptr_t handle);
struct mmkit_go_result mmkit_go_probe(struct mmkit_features *f);

struct mmkit_go_result mmkit_go_lock(uintptr_t addr, size_t len, unsigned int flags);
struct mmkit_go_result mmkit_go_unlock(uintptr_t addr, size_t len);
struct mmkit_go_result mmkit_go_lockall(unsigned int flags);
struct mmkit_go_result mmkit_go_unlockall(void);
struct mmkit_go_result mmkit_go_memlock_check(uintptr_t addr, size_t len, struct mmkit_memlock *m);

struct mmkit_go_result mmkit_go_pac_get_enabled_keys(unsigned long *keys);
struct mmkit_go_result mmkit_go_pac_set_enabled_keys(unsigned long mask, unsigned long enabled);

#endif /* MMKIT_GO_SHIM_H */
