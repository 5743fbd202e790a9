// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_name() and mmkit_name_valid(): the kernel's naming rules and error
 * codes, names as other processes see them (through mmkit_regions()),
 * names after munmap, fork and closed descriptors.  Runs on either path
 * (prctl or registry); the parts about the registry itself run where the
 * registry is in use.  test-names-prctl compares with the kernel directly.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "harness.h"
#include "names-registry.h"
#include "mmkit.h"
#include "names.h"

/* _IOWR('f', 17, struct procmap_query): Linux 6.11 uapi, missing from older headers. */
#define PROCMAP_QUERY_IOCTL	0xc0686611u

static size_t page;
static int registry;	/* 1 when names go to the registry (no CONFIG_ANON_VMA_NAME) */

struct at {
	uintptr_t addr;
	int found;
	struct mmkit_region r;
};

static int at_fn(const struct mmkit_region *r, void *arg)
{
	struct at *a = arg;

	if (a->addr < r->start || a->addr >= r->end)
		return 0;
	a->r = *r;
	a->found = 1;
	return 1;
}

/* The region of @pid holding @addr, NULL if it is not mapped. */
static struct mmkit_region *region_at(pid_t pid, const void *addr)
{
	static struct at a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.addr = (uintptr_t)addr;
	ret = mmkit_regions(pid, at_fn, &a);
	if (ret < 0)
		T_FAIL("mmkit_regions(%d): %s", (int)pid, strerror(-ret));
	return a.found ? &a.r : NULL;
}

/* The name of @addr in @pid, whoever named it; NULL for none. */
static const char *name_at(pid_t pid, const void *addr)
{
	struct mmkit_region *r = region_at(pid, addr);

	if (!r || (r->kind != MMKIT_REGION_REGISTRY && r->kind != MMKIT_REGION_ANON_NAMED))
		return NULL;
	return r->name;
}

#define T_NAME(pid, addr, want) do {					\
	const char *got_ = name_at(pid, addr), *want_ = (want);		\
	if (want_ ? !got_ || strcmp(got_, want_) : got_ != NULL)	\
		T_FAIL("name at %p: %s%s%s, expected %s%s%s", (void *)(addr), \
		       got_ ? "\"" : "", got_ ? got_ : "none", got_ ? "\"" : "", \
		       want_ ? "\"" : "", want_ ? want_ : "none", want_ ? "\"" : ""); \
} while (0)

static char *map_pages(size_t n, int flags)
{
	void *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		T_FAIL("mmap: %s", strerror(errno));
	return p;
}

/* Clears the names first, as mmkit_name(3) advises: the registry cannot see munmap(). */
static void unmap(void *p, size_t len)
{
	mmkit_name(p, len, NULL);
	munmap(p, len);
}

static void test_rules(void)
{
	static const char bad_chars[] = { '\\', '`', '$', '[', ']', 0x1f, 0x7f, 0x01, '\n',
					  '\t', (char)0x80, (char)0xff };
	char name[200], long_name[80], *p = map_pages(1, MAP_PRIVATE);
	size_t i;

	T_CASE("valid names: empty, 79 characters, every allowed character, NULL");
	T_EQ(mmkit_name_valid(""), 0);
	T_EQ(mmkit_name_valid(NULL), 0);
	T_EQ(mmkit_name_valid("heap arena #1 (a=b, c;d) {x} <y> ~!@%^&*_+-=|:'\"?/.,"), 0);
	memset(long_name, 'x', 79);
	long_name[79] = '\0';
	T_EQ(mmkit_name_valid(long_name), 0);
	T_EQ(mmkit_name(p, page, long_name), 0);
	T_NAME(0, p, long_name);
	for (i = 0x20; i < 0x7f; i++) {
		name[0] = (char)i;
		name[1] = '\0';
		if (!strchr("\\`$[]", (int)i))
			T_EQ(mmkit_name_valid(name), 0);
	}

	T_CASE("80 characters (81 bytes with the NUL) and more: EINVAL");
	memset(name, 'x', sizeof(name));
	name[80] = '\0';
	T_EQ(mmkit_name_valid(name), -EINVAL);
	T_EQ(mmkit_name(p, page, name), -EINVAL);
	name[80] = 'x';
	name[sizeof(name) - 1] = '\0';
	T_EQ(mmkit_name_valid(name), -EINVAL);

	T_CASE("each forbidden character, 0x1f, 0x7f, non-ASCII: EINVAL, even with len 0");
	for (i = 0; i < sizeof(bad_chars); i++) {
		snprintf(name, sizeof(name), "ok%cok", bad_chars[i]);
		if (mmkit_name_valid(name) != -EINVAL)
			T_FAIL("character 0x%02x accepted", (unsigned char)bad_chars[i]);
		T_EQ(mmkit_name(p, page, name), -EINVAL);
		T_EQ(mmkit_name(p, 0, name), -EINVAL);
	}
	T_NAME(0, p, long_name);

	T_CASE("unaligned addr, overflowing len: EINVAL; len 0: 0");
	T_EQ(mmkit_name(p + 1, page, "x"), -EINVAL);
	T_EQ(mmkit_name(p + 1, 0, "x"), -EINVAL);
	T_EQ(mmkit_name(p, SIZE_MAX, "x"), -EINVAL);
	T_EQ(mmkit_name(p, SIZE_MAX - page + 2, "x"), -EINVAL);
	T_EQ(mmkit_name(p, 0 - (uintptr_t)p + page, "x"), -EINVAL);
	T_EQ(mmkit_name(p, 0, "x"), 0);
	T_EQ(mmkit_name((void *)page, 0, "x"), 0);
	T_NAME(0, p, long_name);

	T_CASE("len is rounded up to pages; NULL clears; empty is a name");
	T_EQ(mmkit_name(p, 1, "rounded"), 0);
	T_NAME(0, p, "rounded");
	T_EQ(mmkit_name(p, page, NULL), 0);
	T_NAME(0, p, NULL);
	T_EQ(mmkit_name(p, page, ""), 0);
	T_NAME(0, p, "");
	unmap(p, page);
}

static void test_ranges(void)
{
	char path[] = "/tmp/mmkit-test-names-XXXXXX";
	char *p, *f, *z;
	int fd, ret;

	T_CASE("unmapped hole: ENOMEM, the mapped parts are named");
	p = map_pages(3, MAP_PRIVATE);
	T_EQ(munmap(p + page, page), 0);
	T_EQ(mmkit_name(p, 3 * page, "holey"), -ENOMEM);
	T_NAME(0, p, "holey");
	T_NAME(0, p + 2 * page, "holey");
	T_EQ(mmkit_name(p + page, 2 * page, "from-hole"), -ENOMEM);
	T_NAME(0, p, "holey");
	T_NAME(0, p + 2 * page, "from-hole");
	T_EQ(mmkit_name(p + page, page, "only-hole"), -ENOMEM);
	T_NAME(0, p + 2 * page, "from-hole");
	unmap(p, 3 * page);
	T_EQ(mmkit_name(p, 3 * page, "all-hole"), -ENOMEM);

	T_CASE("file-backed mapping: EBADF, the anonymous memory before it named");
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	T_EQ(ftruncate(fd, (off_t)page), 0);
	p = map_pages(3, MAP_PRIVATE);
	f = mmap(p + page, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	T_ASSERT(f == p + page);
	/*
	 * Unlinked only now: a tmpfs file unlinked before its mmap is
	 * anonymous shared memory to Linux 6.2+ (shmem_mmap()), and nameable.
	 */
	unlink(path);
	T_EQ(mmkit_name(p, 3 * page, "before-file"), -EBADF);
	T_NAME(0, p, "before-file");
	T_NAME(0, f, NULL);
	T_NAME(0, p + 2 * page, NULL);
	T_EQ(region_at(0, f)->kind, MMKIT_REGION_FILE);
	T_EQ(mmkit_name(f, page, "file"), -EBADF);
	T_EQ(mmkit_name(p + 2 * page, page, "after-file"), 0);
	T_NAME(0, p + 2 * page, "after-file");
	unmap(p, 3 * page);
	close(fd);

	T_CASE("private /dev/zero is a file (EBADF); MAP_SHARED|MAP_ANONYMOUS is not");
	fd = open("/dev/zero", O_RDWR);
	T_ASSERT(fd >= 0);
	z = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	T_ASSERT(z != MAP_FAILED);
	T_EQ(mmkit_name(z, page, "zero"), -EBADF);
	munmap(z, page);
	close(fd);
	p = map_pages(2, MAP_SHARED);
	ret = mmkit_name(p, 2 * page, "shared-anon");
	/* Kernels before 6.2 name private anonymous memory only; the registry follows 6.2+. */
	if (ret == -EBADF && !registry) {
		printf("    (this kernel refuses to name shared anonymous memory: before 6.2)\n");
	} else {
		T_EQ(ret, 0);
		T_NAME(0, p, "shared-anon");
		T_EQ(region_at(0, p)->perms[3], 's');
	}
	unmap(p, 2 * page);
}

static void test_rename(void)
{
	char *p = map_pages(6, MAP_PRIVATE);

	T_CASE("renaming part of a range splits it; clearing part leaves the rest");
	T_EQ(mmkit_name(p, 6 * page, "one"), 0);
	T_EQ(mmkit_name(p + 2 * page, 2 * page, "two"), 0);
	T_NAME(0, p, "one");
	T_NAME(0, p + page, "one");
	T_NAME(0, p + 2 * page, "two");
	T_NAME(0, p + 3 * page, "two");
	T_NAME(0, p + 4 * page, "one");
	T_EQ(region_at(0, p + 2 * page)->start, (uintptr_t)p + 2 * page);
	T_EQ(region_at(0, p + 2 * page)->end, (uintptr_t)p + 4 * page);
	T_EQ(mmkit_name(p + page, 4 * page, NULL), 0);
	T_NAME(0, p, "one");
	T_NAME(0, p + page, NULL);
	T_NAME(0, p + 4 * page, NULL);
	T_NAME(0, p + 5 * page, "one");
	unmap(p, 6 * page);
}

static int registry_has(const char *name)
{
	struct mmkit__name_range *e;
	ssize_t n = mmkit__names_get(0, -1, &e), i;
	int found = 0;

	T_ASSERT(n >= 0);
	for (i = 0; i < n; i++)
		found |= !strcmp(e[i].name, name);
	free(e);
	return found;
}

/*
 * Clears the registry's names that begin with @prefix, mapped or not (a
 * later mmap() may have landed under one); returns how many there were.
 */
static int registry_clear(const char *prefix)
{
	struct mmkit__name_range *e;
	ssize_t n = mmkit__names_get(0, -1, &e), i;
	int found = 0, ret;

	T_ASSERT(n >= 0);
	for (i = 0; i < n; i++) {
		if (strncmp(e[i].name, prefix, strlen(prefix)))
			continue;
		found++;
		ret = mmkit_name((void *)(uintptr_t)e[i].start, e[i].end - e[i].start, NULL);
		if (ret && ret != -ENOMEM)
			T_FAIL("clearing a stale \"%s\": %s", e[i].name, strerror(-ret));
	}
	free(e);
	return found;
}

static void test_munmap(void)
{
	char *p = map_pages(2, MAP_PRIVATE), *q = map_pages(1, MAP_PRIVATE), *again;
	struct mmkit__name_range *e;
	ssize_t n;
	int i;

	T_CASE("a name disappears with its memory");
	T_EQ(mmkit_name(p, 2 * page, "short-lived"), 0);
	T_NAME(0, p, "short-lived");
	T_EQ(munmap(p, 2 * page), 0);
	T_NAME(0, p, NULL);
	if (!registry) {
		unmap(q, page);
		return;
	}

	T_CASE("registry: naming over the hole forgets the old name");
	T_ASSERT(registry_has("short-lived"));
	T_EQ(mmkit_name(p, 2 * page, "over-hole"), -ENOMEM);
	T_ASSERT(!registry_has("short-lived"));
	T_ASSERT(!registry_has("over-hole"));

	T_CASE("registry: names of unmapped memory do not pile up");
	for (i = 0; i < 1000; i++) {
		char name[32], *r = map_pages(1, MAP_PRIVATE);

		snprintf(name, sizeof(name), "churn-%d", i);
		T_EQ(mmkit_name(r, page, name), 0);
		T_EQ(munmap(r, page), 0);
		T_EQ(mmkit_name(q, page, name), 0);
	}
	n = mmkit__names_get(0, -1, &e);
	free(e);
	if (n < 0 || n > 200)
		T_FAIL("%zd registry entries after naming 1000 ranges that were unmapped", n);
	/*
	 * Bounded is not empty: names of unmapped ranges stay until a later
	 * call covers them, and a later case's mmap() may land under one.
	 */
	registry_clear("churn-");
	T_CASE("registry: the churn leaves no name behind for later cases");
	T_EQ(registry_clear("churn-"), 0);
	again = mmap(p, 2 * page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (again == p)
		T_NAME(0, p, NULL);

	T_CASE("registry: the documented gap, munmap + mmap at the same address");
	if (again == p) {
		T_EQ(mmkit_name(p, 2 * page, "stale"), 0);
		T_EQ(munmap(p, 2 * page), 0);
		T_ASSERT(mmap(p, 2 * page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p);
		T_NAME(0, p, "stale");
		/* What the documentation advises: clear before munmap(). */
		T_EQ(mmkit_name(p, 2 * page, NULL), 0);
		munmap(p, 2 * page);
	}
	unmap(q, page);
}

struct two_pages {
	char *p, *q;
};

/* The fork child: sees the parent's name, renames, survives a closed registry fd. */
static void renaming_child(void *arg)
{
	struct two_pages *pages = arg;
	int fd, nul;

	T_NAME(0, pages->p, "parent");
	T_EQ(mmkit_name(pages->p, page, "child"), 0);
	T_NAME(0, pages->p, "child");
	if (!registry)
		return;
	fd = registry_fd();
	/* A program closing descriptors it does not know, then reusing the number. */
	T_ASSERT(fd >= 0);
	nul = open("/dev/null", O_RDONLY);
	T_ASSERT(nul >= 0 && dup2(nul, fd) == fd);
	close(nul);
	T_EQ(mmkit_name(pages->q, page, "after-close"), 0);
	T_ASSERT(registry_fd() >= 0);
}

static void test_fork(void)
{
	struct two_pages pages = { map_pages(1, MAP_PRIVATE), map_pages(1, MAP_PRIVATE) };
	struct t_child ch;

	T_CASE("fork: renaming in the child leaves the parent's name alone");
	T_EQ(mmkit_name(pages.p, page, "parent"), 0);
	ch = t_spawn_paused(renaming_child, &pages);
	T_NAME(0, pages.p, "parent");
	T_NAME(ch.pid, pages.p, "child");
	T_NAME(0, pages.q, NULL);
	if (registry) {
		T_CASE("registry: a closed descriptor is replaced, names kept");
		T_NAME(ch.pid, pages.q, "after-close");
	}
	t_reap(ch);
	T_NAME(0, pages.p, "parent");
	unmap(pages.p, page);
	unmap(pages.q, page);
}

struct reused_fd {
	int fd;
	struct stat st;
};

/* The fork child: the descriptor that took the registry's number is still that file. */
static void reused_fd_child(void *arg)
{
	struct reused_fd *r = arg;
	struct stat st;

	if (fstat(r->fd, &st))
		T_FAIL("descriptor %d closed in the child: %s", r->fd, strerror(errno));
	T_EQ(st.st_dev, r->st.st_dev);
	T_EQ(st.st_ino, r->st.st_ino);
}

/* The application closes the registry's descriptor and reuses the number, then forks. */
static void test_fork_reused_fd(void)
{
	char path[] = "/tmp/mmkit-test-names-XXXXXX", *p = map_pages(1, MAP_PRIVATE);
	struct reused_fd r;
	int tmp;

	T_CASE("registry: fork leaves alone a descriptor that took the registry's number");
	T_EQ(mmkit_name(p, page, "before-close"), 0);
	r.fd = registry_fd();
	T_ASSERT(r.fd >= 0);
	tmp = mkstemp(path);
	T_ASSERT(tmp >= 0);
	unlink(path);
	T_EQ(close(r.fd), 0);
	T_EQ(dup2(tmp, r.fd), r.fd);
	close(tmp);
	T_EQ(fstat(r.fd, &r.st), 0);
	T_CHILD_OK(t_in_child(reused_fd_child, &r));
	reused_fd_child(&r);
	T_EQ(mmkit_name(p, page, "after-close"), 0);
	T_NAME(0, p, "after-close");
	close(r.fd);
	unmap(p, page);
}

static void naming_child(void *arg)
{
	char *p = arg;

	T_EQ(mmkit_name(p, 4 * page, "seen-from-outside"), 0);
	p[0] = p[page] = 1;
}

static void naming_child_one(void *arg)
{
	char *p = arg;

	T_EQ(mmkit_name(p, page, "seen-from-outside"), 0);
}

/* A child of this process names 4 pages, touches 2 and waits; another process reads it. */
static void read_other_process(void)
{
	char *p = map_pages(4, MAP_PRIVATE);
	struct mmkit_region *r;
	struct t_child ch = t_spawn_paused(naming_child, p);

	T_NAME(ch.pid, p, "seen-from-outside");
	T_NAME(0, p, NULL);
	r = region_at(ch.pid, p);
	T_EQ(r->start, (uintptr_t)p);
	T_EQ(r->end, (uintptr_t)p + 4 * page);
	T_EQ(r->size, 4 * page);
	T_EQ(r->rss, 2 * page);
	t_reap(ch);
	unmap(p, 4 * page);
}

static void other_naming_child(void *arg)
{
	char *p = arg;

	T_EQ(mmkit_name(p, page, "the-other-process"), 0);
}

/*
 * The registry is read through the /proc directory the caller opened, not
 * by number: a PID reused between mmkit_regions()'s reads cannot mix two
 * processes.  Staged by handing one child's number with the other's
 * directory.
 */
static void read_through_procfd(void)
{
	char *p = map_pages(1, MAP_PRIVATE), path[32];
	struct t_child a = t_spawn_paused(naming_child_one, p);
	struct t_child b = t_spawn_paused(other_naming_child, p);
	struct mmkit__name_range *e = NULL;
	size_t i, found = 0;
	ssize_t n;
	int procfd;

	snprintf(path, sizeof(path), "/proc/%d", (int)b.pid);
	procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	T_ASSERT(procfd >= 0);
	n = mmkit__names_get(a.pid, procfd, &e);
	T_ASSERT(n >= 1);
	/*
	 * b's names, never a's: at p the name b gave it; b's other entries, if
	 * any, are names it inherited from this process at fork (the second
	 * pass runs in a child of the first, under TSan on a loaded machine
	 * one was seen), said so below.
	 */
	for (i = 0; i < (size_t)n; i++) {
		T_ASSERT(strcmp(e[i].name, "seen-from-outside"));
		if (e[i].start != (uintptr_t)p) {
			printf("    (also in b's registry, inherited: %#llx-%#llx %s)\n",
			       (unsigned long long)e[i].start, (unsigned long long)e[i].end, e[i].name);
			continue;
		}
		T_ASSERT(!strcmp(e[i].name, "the-other-process"));
		found++;
	}
	T_EQ(found, 1);
	free(e);
	close(procfd);
	t_reap(a);
	t_reap(b);
	unmap(p, page);
}

static void as_nobody(void *arg)
{
	(void)arg;
	t_become_nobody();
	/* A change of uid makes a process undumpable: even its own user could not read it. */
	T_EQ(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
	read_other_process();
}

static void test_other_process(void)
{
	T_CASE("another process reads the names (same user)");
	read_other_process();
	if (registry) {
		T_CASE("the registry is read through the caller's /proc/PID, not by number");
		read_through_procfd();
	}
	if (!t_is_root()) {
		printf("    (not root: uid %d reading uid %d not tried)\n", T_NOBODY, T_NOBODY);
		return;
	}
	T_CASE("another process reads the names (uid 65534 reading uid 65534)");
	T_CHILD_OK(t_in_child(as_nobody, NULL));
}

#define THREADS		4
#define THREAD_PAGES	16
#define ROUNDS		50

static char *thread_mem;

static void *namer(void *arg)
{
	int t = (int)(intptr_t)arg, r, i;
	char name[32];

	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < THREAD_PAGES; i++) {
			snprintf(name, sizeof(name), "t%d-%d", t, (i + r) % 3);
			if (mmkit_name(thread_mem + (t * THREAD_PAGES + i) * page, page, name))
				return (void *)1;
		}
	}
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[THREADS];
	char name[32];
	void *res;
	int t, i;

	T_CASE("threads naming at the same time lose nothing");
	thread_mem = map_pages(THREADS * THREAD_PAGES, MAP_PRIVATE);
	for (t = 0; t < THREADS; t++)
		T_EQ(pthread_create(&th[t], NULL, namer, (void *)(intptr_t)t), 0);
	for (t = 0; t < THREADS; t++) {
		T_EQ(pthread_join(th[t], &res), 0);
		T_ASSERT(res == NULL);
	}
	for (t = 0; t < THREADS; t++) {
		for (i = 0; i < THREAD_PAGES; i++) {
			snprintf(name, sizeof(name), "t%d-%d", t, (i + ROUNDS - 1) % 3);
			T_NAME(0, thread_mem + (t * THREAD_PAGES + i) * page, name);
		}
	}
	unmap(thread_mem, THREADS * THREAD_PAGES * page);
}

static void run_all(void)
{
	test_rules();
	test_ranges();
	test_rename();
	test_munmap();
	test_fork();
	if (registry)
		test_fork_reused_fd();
	test_other_process();
	test_threads();
}

/* ioctl(PROCMAP_QUERY) fails with ENOTTY, as on kernels before 6.11. */
static void without_procmap_query(void *arg)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)PROCMAP_QUERY_IOCTL, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTTY),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
	int fd;

	(void)arg;
	T_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		printf("    (seccomp: %s: kernel without CONFIG_SECCOMP_FILTER, not tried)\n",
		       strerror(errno));
		fflush(NULL);
		return;
	}
	fd = open("/proc/self/maps", O_RDONLY);
	T_ASSERT(fd >= 0);
	T_ASSERT(ioctl(fd, PROCMAP_QUERY_IOCTL, NULL) == -1 && errno == ENOTTY);
	close(fd);
	run_all();
	fflush(NULL);
}

int main(void)
{
	struct mmkit_features f;

	page = (size_t)sysconf(_SC_PAGESIZE);
	T_EQ(mmkit_probe(&f), 0);
	registry = f.feature[MMKIT_FEATURE_NAMES].status == MMKIT_STATUS_FALLBACK;
	printf("  names: %s (%s): %s\n", mmkit_status_name(f.feature[MMKIT_FEATURE_NAMES].status),
	       f.feature[MMKIT_FEATURE_NAMES].backend, f.feature[MMKIT_FEATURE_NAMES].reason);
	T_ASSERT(!strcmp(f.feature[MMKIT_FEATURE_NAMES].backend, registry ? "registry" : "prctl"));
	run_all();
	if (registry) {
		printf("  -- again, without PROCMAP_QUERY (as before Linux 6.11): /proc/self/maps is read\n");
		T_CHILD_OK(t_in_child(without_procmap_query, NULL));
	}
	return T_EXIT_PASS;
}
