/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What test-refpage, test-refpage-kernel and test-refpage-select share:
 * the pattern their objects repeat, its check, one way to create an object
 * of it, a file of known bytes; and for the two that take a backend, the
 * backend named on the command line and the run of their cases on it, as
 * the caller and again as nobody (item 10).
 */
#ifndef MMKIT_TEST_REFPAGE_TEST_H
#define MMKIT_TEST_REFPAGE_TEST_H

#include <stdint.h>
#include <sys/mman.h>

#include "mmkit.h"
#include "harness.h"
#include "refpage-map.h"

#define NPAGES		64

/* The page size: each program's main sets it before the first case. */
static size_t page;
static const unsigned char pattern[16] = {
	0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04,
	0xa5, 0x5a, 0x00, 0xff, 0x10, 0x20, 0x30, 0x40,
};

/* 1 if every byte of [p, p + len) is the pattern of size @psz, repeating from each page. */
static inline int is_pattern(const unsigned char *p, size_t len, size_t psz)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern[((uintptr_t)p + i) % psz])
			return 0;
	return 1;
}

static inline struct mmkit_refpage *create(unsigned int flag, size_t psz)
{
	struct mmkit_refpage *rp;
	int ret = mmkit_refpage_create(&rp, pattern, psz, flag);

	if (ret)
		T_FAIL("mmkit_refpage_create: %s", strerror(-ret));
	return rp;
}

/* Fills a file with @len bytes of 0x5c and returns it open, unlinked. */
static inline int tmpfile_of(size_t len)
{
	char name[] = "/tmp/mmkit-refpage-XXXXXX";
	unsigned char *buf = malloc(len);
	int fd = mkstemp(name);

	T_ASSERT(buf && fd >= 0);
	unlink(name);
	memset(buf, 0x5c, len);
	T_EQ(write(fd, buf, len), (ssize_t)len);
	free(buf);
	return fd;
}

/*
 * The backend argv[1] names, as MMKIT_REFPAGE_BACKEND names it (the
 * library knows the names).  One backend a run, so that each passes, fails
 * or skips on its own (tests/NAME.args has the runner run all four): the
 * test skips where this one is unavailable.  Sets page.
 */
static inline unsigned int refpage_test_backend(int argc, char **argv)
{
	int named = argc == 2 ? mmkit_refpage_backend_flag(argv[1]) : -EINVAL;
	char why[MMKIT_REASON_MAX];

	if (named < 0) {
		fprintf(stderr, "usage: %s syscall|kmod|memfd|uffd\n", argv[0]);
		exit(2);
	}
	if (mmkit_refpage_backend_available((unsigned int)named, why, sizeof(why)))
		T_SKIP("backend %s unavailable: %s", argv[1], why);
	page = (size_t)sysconf(_SC_PAGESIZE);
	return (unsigned int)named;
}

/* A program's cases on one backend, run in a child of their own. */
struct refpage_suite {
	void (*run)(unsigned int flag);
	unsigned int flag;
};

static inline void refpage_suite_child(void *arg)
{
	const struct refpage_suite *s = arg;

	s->run(s->flag);
	fflush(stdout);
}

static inline void refpage_suite_as_nobody(void *arg)
{
	t_become_nobody();
	T_CASE("10: the same, as uid 65534 (no capabilities)");
	refpage_suite_child(arg);
}

/* Runs @run on @backend in a child as the caller and, when root, again as nobody. */
static inline void refpage_run_suite(const char *backend, void (*run)(unsigned int),
				     unsigned int flag)
{
	struct refpage_suite s = { run, flag };

	printf("backend %s%s:\n", backend, t_is_root() ? ", as root" : "");
	T_CHILD_OK(t_in_child(refpage_suite_child, &s));
	if (t_is_root()) {
		printf("backend %s, as nobody:\n", backend);
		T_CHILD_OK(t_in_child(refpage_suite_as_nobody, &s));
	}
}

#endif /* MMKIT_TEST_REFPAGE_TEST_H */
