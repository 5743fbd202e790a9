// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Reference pages: the contract items of mmkit_refpage(3) that the
 * program's own accesses prove (1-7 and 9, then all again as nobody: 10),
 * on the backend named on the command line (syscall, kmod, memfd or uffd);
 * attach(), and a SIGBUS outside reference pages reaching the handler
 * installed before.  Item 8, the kernel's accesses, is test-refpage-kernel's;
 * which backend an object gets, test-refpage-select's.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>

#include "refpage-test.h"

#define NTHREADS	8

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		T_FAIL("opendir %s: %s", path, strerror(errno));
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Counts mappings, and in *@file_lines those of a memfd or refpage.ko file. */
static int count_maps(int *file_lines)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		T_FAIL("/proc/self/maps: %s", strerror(errno));
	*file_lines = 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		*file_lines += strstr(line, "mmkit-refpage") || strstr(line, "[refpage]");
	}
	fclose(f);
	return n;
}

static int is_mapped(const void *p, size_t len)
{
	unsigned char vec[NPAGES];

	T_ASSERT(len / page <= NPAGES);
	return !mincore((void *)p, len, vec);
}

/* Items 1 and 2, for each pattern size. */
static void item_1_2(unsigned int flag)
{
	size_t sizes[] = { 1, 2, 4, 8, 16 }, i, pg;
	struct mmkit_refpage *rp;
	unsigned char *p, big[4096];

	T_CASE("1: never-written pages read as the pattern; 2: copy on first write");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		rp = create(flag, sizes[i]);
		p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);
		T_ASSERT(is_pattern(p, NPAGES * page, sizes[i]));
		for (pg = 0; pg < NPAGES; pg += 3)
			p[pg * page + pg] = 0x77;
		for (pg = 0; pg < NPAGES; pg++) {
			if (pg % 3 == 0) {
				T_EQ(p[pg * page + pg], 0x77);
				p[pg * page + pg] = pattern[pg % sizes[i]];
			}
		}
		T_ASSERT(is_pattern(p, NPAGES * page, sizes[i]));
		T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);
		mmkit_refpage_destroy(rp);
	}
	/* A whole page of pattern, where every byte may differ. */
	for (i = 0; i < sizeof(big) && i < page; i++)
		big[i] = (unsigned char)(i * 7 + 3);
	T_EQ(mmkit_refpage_create(&rp, big, page <= sizeof(big) ? page : sizeof(big), flag), 0);
	p = map(rp, 3 * page + 1, PROT_READ | PROT_WRITE);
	for (pg = 0; pg < 4; pg++)
		T_EQ(memcmp(p + pg * page, big, page <= sizeof(big) ? page : sizeof(big)), 0);
	T_EQ(mmkit_refpage_unmap(rp, p, 3 * page + 1), 0);
	mmkit_refpage_destroy(rp);
}

static void item_3(unsigned int flag)
{
	struct mmkit_refpage *rp = create(flag, 16);
	unsigned char *p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);

	T_CASE("3: MADV_DONTNEED makes a range read as the pattern again");
	memset(p, 0x11, NPAGES * page);
	T_EQ(madvise(p + page, 10 * page, MADV_DONTNEED), 0);
	T_EQ(p[0], 0x11);
	T_ASSERT(is_pattern(p + page, 10 * page, 16));
	T_EQ(p[11 * page], 0x11);
	p[page + 5] = 0x22;
	T_EQ(p[page + 5], 0x22);
	T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);
	mmkit_refpage_destroy(rp);
}

static unsigned char *fork_p;

static void fork_child(void *arg)
{
	(void)arg;
	if (fork_p[0] != 0x33 || !is_pattern(fork_p + page, page, 16))
		_exit(2);
	fork_p[2 * page + 1] = 0x44;
	if (fork_p[2 * page + 1] != 0x44 || fork_p[2 * page] != pattern[0])
		_exit(3);
	if (!is_pattern(fork_p + 3 * page, (NPAGES - 3) * page, 16))
		_exit(4);
}

static void item_4(unsigned int flag)
{
	struct mmkit_refpage *rp = create(flag, 16);
	int status;

	T_CASE("4: a fork child sees written data and the pattern, not zeros");
	fork_p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);
	fork_p[0] = 0x33;
	status = t_in_child(fork_child, NULL);
	T_CHILD_OK(status);
	T_ASSERT(is_pattern(fork_p + 2 * page, page, 16));
	T_EQ(mmkit_refpage_unmap(rp, fork_p, NPAGES * page), 0);
	mmkit_refpage_destroy(rp);
}

struct thread_arg {
	unsigned char *p;
	int id;
	int bad;
};

static void *toucher(void *v)
{
	struct thread_arg *a = v;
	size_t pg, i, off = (size_t)a->id * 8;
	int t;

	for (i = 0; i < NPAGES; i++) {
		/* Each thread its own order, so that first touches collide. */
		pg = (i * 7 + (size_t)a->id * 13) % NPAGES;
		if (pg % NTHREADS == (size_t)a->id) {
			/* A page only this thread writes. */
			a->p[pg * page + 100] = (unsigned char)(0x80 + a->id);
		} else if (pg % 2) {
			/* A page every thread writes, each at its own offset. */
			__atomic_store_n(&a->p[pg * page + off], 0x80 + a->id, __ATOMIC_RELAXED);
			if (__atomic_load_n(&a->p[pg * page + off], __ATOMIC_RELAXED) != 0x80 + a->id)
				a->bad = 1;
		}
		for (t = 0; t < NTHREADS; t++) {
			/* Another thread may be writing it: atomic, either value is right. */
			unsigned char c = __atomic_load_n(&a->p[pg * page + (size_t)t * 8],
							  __ATOMIC_RELAXED);

			if (c != pattern[((size_t)t * 8) % 16] && c != 0x80 + t)
				a->bad = 1;
		}
	}
	return NULL;
}

static void item_5(unsigned int flag)
{
	struct mmkit_refpage *rp = create(flag, 16);
	struct thread_arg args[NTHREADS];
	pthread_t th[NTHREADS];
	unsigned char *p;
	int round, t;
	size_t pg;

	T_CASE("5: threads touching the same and different fresh pages");
	for (round = 0; round < 20; round++) {
		p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);
		for (t = 0; t < NTHREADS; t++) {
			args[t] = (struct thread_arg){ p, t, 0 };
			T_EQ(pthread_create(&th[t], NULL, toucher, &args[t]), 0);
		}
		for (t = 0; t < NTHREADS; t++) {
			T_EQ(pthread_join(th[t], NULL), 0);
			T_EQ(args[t].bad, 0);
		}
		for (pg = 0; pg < NPAGES; pg++) {
			T_EQ(p[pg * page + 100], 0x80 + (int)(pg % NTHREADS));
			for (t = 0; t < NTHREADS; t++) {
				if (pg % 2 && (size_t)t != pg % NTHREADS)
					T_EQ(p[pg * page + (size_t)t * 8], 0x80 + t);
				else
					T_EQ(p[pg * page + (size_t)t * 8], pattern[((size_t)t * 8) % 16]);
			}
		}
		T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);
	}
	mmkit_refpage_destroy(rp);
}

static void item_6(unsigned int flag)
{
	int fds, tasks, maps, files, maps_after, i;
	struct mmkit_refpage *rp;
	unsigned char *p, *q;

	T_CASE("6: partial and full unmap, destroy: no fd, thread or mapping left");
	/* Warm up what the first object sets up once (the memfd flag check). */
	rp = create(flag, 16);
	mmkit_refpage_destroy(rp);
	fds = count_dir("/proc/self/fd");
	tasks = count_dir("/proc/self/task");
	maps = count_maps(&files);
	T_EQ(files, 0);
	for (i = 0; i < 50; i++) {
		rp = create(flag, 16);
		p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);
		p[0] = 1;
		/* Unmap the middle, then reuse it with a plain mapping. */
		T_EQ(mmkit_refpage_unmap(rp, p + 8 * page, 8 * page), 0);
		T_ASSERT(!is_mapped(p + 8 * page, 8 * page));
		q = mmap(p + 8 * page, 8 * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		T_ASSERT(q == p + 8 * page);
		T_EQ(q[0], 0);
		q[1] = 5;
		T_EQ(q[1], 5);
		T_EQ(q[page * 7], 0);
		T_EQ(p[0], 1);
		T_ASSERT(is_pattern(p + page, 7 * page, 16));
		T_ASSERT(is_pattern(p + 16 * page, 16 * page, 16));
		T_EQ(munmap(q, 8 * page), 0);
		T_EQ(mmkit_refpage_unmap(rp, p, 8 * page), 0);
		T_EQ(mmkit_refpage_unmap(rp, p + 16 * page, (NPAGES - 16) * page), 0);
		T_ASSERT(!is_mapped(p, NPAGES * page));
		/* The whole range reused: untouched pages are zeros again. */
		q = mmap(p, NPAGES * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		T_ASSERT(q == p);
		T_EQ(q[0] + q[5 * page] + q[40 * page], 0);
		T_EQ(munmap(q, NPAGES * page), 0);
		mmkit_refpage_destroy(rp);
	}
	T_EQ(count_dir("/proc/self/fd"), fds);
	/* item_5's joined threads may still be leaving /proc when first counted. */
	T_ASSERT(count_dir("/proc/self/task") <= tasks);
	maps_after = count_maps(&files);
	T_EQ(files, 0);
	/*
	 * The allocator of an ASan build may add a mapping or two of its own;
	 * TSan's adds more, and its build only looks for races.
	 */
#ifndef __SANITIZE_THREAD__
	T_ASSERT(maps_after <= maps + 2);
#else
	(void)maps;
	(void)maps_after;
#endif
}

/* @file_backed: memfd or kmod, whose ranges are private file mappings. */
static void item_7(unsigned int flag, int file_backed)
{
	struct mmkit_refpage *rp = create(flag, 16);
	unsigned char *p, *q;
	void *moved;

	T_CASE("7: mprotect round trips; mmkit_refpage_remap; raw mremap as documented");
	p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);
	p[0] = 9;
	T_EQ(mprotect(p, NPAGES * page, PROT_READ), 0);
	T_EQ(p[0], 9);
	T_ASSERT(is_pattern(p + page, 4 * page, 16));
	T_EQ(mprotect(p, NPAGES * page, PROT_NONE), 0);
	T_EQ(mprotect(p + 2 * page, 4 * page, PROT_READ | PROT_WRITE), 0);
	p[3 * page] = 8;
	T_EQ(mprotect(p, NPAGES * page, PROT_READ | PROT_WRITE), 0);
	T_EQ(p[0], 9);
	T_EQ(p[3 * page], 8);
	T_ASSERT(is_pattern(p + 6 * page, 10 * page, 16));
	p[20 * page] = 7;

	/* Grow: data moves, old and new untouched pages read as the pattern. */
	T_EQ(mmkit_refpage_remap(rp, p, NPAGES * page, 2 * NPAGES * page, &moved), 0);
	q = moved;
	T_EQ(q[0], 9);
	T_EQ(q[3 * page], 8);
	T_EQ(q[20 * page], 7);
	T_ASSERT(is_pattern(q + 21 * page, (2 * NPAGES - 21) * page, 16));
	q[100 * page] = 6;
	T_EQ(q[100 * page], 6);
	/* Shrink. */
	T_EQ(mmkit_refpage_remap(rp, q, 2 * NPAGES * page, 8 * page, &moved), 0);
	p = moved;
	T_EQ(p[0], 9);
	T_EQ(p[3 * page], 8);
	T_ASSERT(is_pattern(p + 4 * page, 4 * page, 16));
	T_EQ(mmkit_refpage_unmap(rp, p, 8 * page), 0);

	/*
	 * Raw mremap(2) of a memfd range inside one window (or any kmod range) works; a uffd
	 * range loses its registration, so moved untouched pages read zeros.
	 */
	p = map(rp, 4 * page, PROT_READ | PROT_WRITE);
	p[0] = 5;
	q = mmap(NULL, 4 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(q != MAP_FAILED);
	q = mremap(p, 4 * page, 4 * page, MREMAP_MAYMOVE | MREMAP_FIXED, q);
	T_ASSERT(q != MAP_FAILED);
	T_EQ(q[0], 5);
	if (file_backed)
		T_ASSERT(is_pattern(q + page, 3 * page, 16));
	else
		T_EQ(q[page] | q[2 * page + 17], 0);
	T_EQ(mmkit_refpage_unmap(rp, q, 4 * page), 0);
	if (file_backed) {
		/*
		 * memfd: 5 MiB is two windows, two VMAs (kmod: one): Linux 6.17 and later
		 * move them at once, older kernels refuse with EFAULT.
		 */
		p = map(rp, 5 << 20, PROT_READ | PROT_WRITE);
		p[(4 << 20) + 1] = 4;
		q = mremap(p, 5 << 20, 5 << 20, MREMAP_MAYMOVE);
		if (q == MAP_FAILED) {
			T_EQ(errno, EFAULT);
			q = p;
		}
		T_EQ(q[(4 << 20) + 1], 4);
		q[(4 << 20) + 1] = pattern[1];
		T_ASSERT(is_pattern(q, 5 << 20, 16));
		T_EQ(mmkit_refpage_remap(rp, q, 5 << 20, 5 << 20, &moved), 0);
		T_ASSERT(is_pattern(moved, 5 << 20, 16));
		T_EQ(mmkit_refpage_unmap(rp, moved, 5 << 20), 0);
	}
	mmkit_refpage_destroy(rp);
}

static void item_9(unsigned int flag)
{
	struct mmkit_refpage *rp;
	void *addr;
	unsigned char *anon, *shared, *file;
	int fd;

	T_CASE("9: bad input gives -EINVAL (or -ENOMEM for unmapped memory)");
	T_EQ(mmkit_refpage_create(NULL, pattern, 16, flag), -EINVAL);
	T_EQ(mmkit_refpage_create(&rp, NULL, 16, flag), -EINVAL);
	T_EQ(mmkit_refpage_create(&rp, pattern, 0, flag), -EINVAL);
	T_EQ(mmkit_refpage_create(&rp, pattern, 3, flag), -EINVAL);
	T_EQ(mmkit_refpage_create(&rp, pattern, 12, flag), -EINVAL);
	T_EQ(mmkit_refpage_create(&rp, pattern, 2 * page, flag), -EINVAL);
	T_EQ(mmkit_refpage_create(&rp, pattern, 16, flag | 0x100), -EINVAL);
	rp = create(flag, 16);
	T_EQ(mmkit_refpage_map(NULL, page, PROT_READ, &addr), -EINVAL);
	T_EQ(mmkit_refpage_map(rp, page, PROT_READ, NULL), -EINVAL);
	T_EQ(mmkit_refpage_map(rp, 0, PROT_READ, &addr), -EINVAL);
	T_EQ(mmkit_refpage_map(rp, SIZE_MAX, PROT_READ, &addr), -EINVAL);
	T_EQ(mmkit_refpage_map(rp, SIZE_MAX / 2, PROT_READ, &addr), -ENOMEM);
	T_EQ(mmkit_refpage_map(rp, page, PROT_READ | PROT_EXEC, &addr), -EINVAL);
	T_EQ(mmkit_refpage_map(rp, page, 0x100, &addr), -EINVAL);

	anon = mmap(NULL, 5 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(anon != MAP_FAILED);
	T_EQ(munmap(anon + 4 * page, page), 0);
	shared = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = tmpfile_of(4 * page);
	file = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	T_ASSERT(anon != MAP_FAILED && shared != MAP_FAILED && file != MAP_FAILED);
	T_EQ(mmkit_refpage_attach(NULL, anon, page), -EINVAL);
	T_EQ(mmkit_refpage_attach(rp, NULL, page), -EINVAL);
	T_EQ(mmkit_refpage_attach(rp, anon + 1, page), -EINVAL);
	T_EQ(mmkit_refpage_attach(rp, anon, 0), -EINVAL);
	T_EQ(mmkit_refpage_attach(rp, anon, SIZE_MAX), -EINVAL);
	T_EQ(mmkit_refpage_attach(rp, shared, 4 * page), -EINVAL);
	T_EQ(mmkit_refpage_attach(rp, file, 4 * page), -EINVAL);
	T_EQ(mmkit_refpage_attach(rp, anon, 5 * page), -ENOMEM);
	T_EQ(munmap(anon + 2 * page, page), 0);
	T_EQ(mmkit_refpage_attach(rp, anon, 4 * page), -ENOMEM);
	/* Nothing was changed by the refusals. */
	T_EQ(anon[0] | shared[0], 0);
	T_EQ(file[0], 0x5c);
	T_EQ(mmkit_refpage_unmap(NULL, anon, page), -EINVAL);
	T_EQ(mmkit_refpage_unmap(rp, NULL, page), -EINVAL);
	T_EQ(mmkit_refpage_remap(rp, NULL, page, page, &addr), -EINVAL);
	T_EQ(mmkit_refpage_unmap(rp, anon + 1, page), -EINVAL);
	T_EQ(mmkit_refpage_unmap(rp, anon, 0), -EINVAL);
	T_EQ(mmkit_refpage_unmap(rp, anon, SIZE_MAX), -EINVAL);
	T_EQ(mmkit_refpage_remap(rp, anon + 1, page, page, &addr), -EINVAL);
	T_EQ(mmkit_refpage_remap(rp, anon, page, 0, &addr), -EINVAL);
	T_EQ(mmkit_refpage_remap(rp, anon, page, page, NULL), -EINVAL);
	T_EQ(mmkit_refpage_remap(rp, anon, 4 * page, page, &addr), -ENOMEM);
	T_ASSERT(mmkit_refpage_backend(NULL) == NULL);
	T_EQ(mmkit_refpage_contract(NULL), 0);
	mmkit_refpage_destroy(NULL);
	munmap(anon, 4 * page);
	munmap(shared, 4 * page);
	munmap(file, 4 * page);
	close(fd);
	mmkit_refpage_destroy(rp);
}

static sigjmp_buf chain_jmp;
static volatile sig_atomic_t chain_armed, chained;

static void previous_handler(int sig)
{
	(void)sig;
	/* Any other SIGBUS is a failure of the test. */
	if (!chain_armed)
		abort();
	chained = 1;
	siglongjmp(chain_jmp, 1);
}

/*
 * A SIGBUS that is not a reference-page fault reaches the handler installed
 * before the first object of the process.  uffd's handler stays from then
 * on, installed over this one, and a handler installed later must chain to
 * it (test-refpage-uffd.c): so this runs before the suite's first object,
 * and leaves its handler where it is.
 */
static void chain_case(unsigned int flag)
{
	struct sigaction sa = { .sa_handler = previous_handler };
	struct mmkit_refpage *rp;
	volatile unsigned char *beyond;
	unsigned char *p;
	int fd = tmpfile_of(page);

	T_CASE("SIGBUS outside reference pages goes to the previous handler");
	T_EQ(sigaction(SIGBUS, &sa, NULL), 0);
	rp = create(flag, 16);
	p = map(rp, 4 * page, PROT_READ | PROT_WRITE);
	beyond = mmap(NULL, 2 * page, PROT_READ, MAP_PRIVATE, fd, 0);
	T_ASSERT(beyond != MAP_FAILED);
	chain_armed = 1;
	if (!sigsetjmp(chain_jmp, 1))
		(void)beyond[page];
	chain_armed = 0;
	T_EQ(chained, 1);
	T_ASSERT(is_pattern(p, 4 * page, 16));
	munmap((void *)beyond, 2 * page);
	close(fd);
	T_EQ(mmkit_refpage_unmap(rp, p, 4 * page), 0);
	mmkit_refpage_destroy(rp);
}

/* attach: present pages keep their data, the others read as the pattern. */
static void attach_cases(unsigned int flag)
{
	struct mmkit_refpage *rp = create(flag, 16);
	unsigned char *p;
	size_t pg;

	T_CASE("attach: present pages kept, absent ones read as the pattern");
	p = mmap(NULL, NPAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(p != MAP_FAILED);
	for (pg = 0; pg < NPAGES; pg += 5)
		memset(p + pg * page, (int)pg + 1, page);
	T_EQ(mmkit_refpage_attach(rp, p, NPAGES * page), 0);
	for (pg = 0; pg < NPAGES; pg++) {
		if (pg % 5 == 0) {
			T_EQ(p[pg * page], pg + 1);
			T_EQ(p[pg * page + page - 1], pg + 1);
		} else {
			T_ASSERT(is_pattern(p + pg * page, page, 16));
		}
	}
	p[page + 3] = 0xee;
	T_EQ(p[page + 3], 0xee);
	T_EQ(madvise(p, NPAGES * page, MADV_DONTNEED), 0);
	T_ASSERT(is_pattern(p, NPAGES * page, 16));
	T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);

	/* An allocator's reservation: PROT_NONE, then opened up in part. */
	p = mmap(NULL, NPAGES * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	T_ASSERT(p != MAP_FAILED);
	T_EQ(mprotect(p, 16 * page, PROT_READ | PROT_WRITE), 0);
	T_EQ(mmkit_refpage_attach(rp, p, NPAGES * page), 0);
	T_ASSERT(is_pattern(p, 16 * page, 16));
	T_EQ(mprotect(p + 16 * page, 16 * page, PROT_READ), 0);
	T_ASSERT(is_pattern(p + 16 * page, 16 * page, 16));
	p[0] = 1;
	T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);
	mmkit_refpage_destroy(rp);
}

static void suite(unsigned int flag)
{
	struct mmkit_refpage *rp;
	int file_backed;

	chain_case(flag);
	rp = create(flag, 16);
	file_backed = strcmp(mmkit_refpage_backend(rp), "uffd") != 0;
	mmkit_refpage_destroy(rp);
	item_1_2(flag);
	item_3(flag);
	item_4(flag);
	item_5(flag);
	item_6(flag);
	item_7(flag, file_backed);
	item_9(flag);
	attach_cases(flag);
}

int main(int argc, char **argv)
{
	unsigned int flag = refpage_test_backend(argc, argv);

	refpage_run_suite(argv[1], suite, flag);
	return T_EXIT_PASS;
}
