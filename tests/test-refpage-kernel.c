// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Reference pages as the kernel reaches them, on the backend named on the
 * command line (syscall, kmod, memfd or uffd), as root and as nobody.
 * Item 8 of mmkit_refpage(3): the kernel's own reads and writes of
 * untouched pages, through a fault (read(2), write(2), pread(2), recv(2),
 * MADV_POPULATE_WRITE) or through get_user_pages (/proc/PID/mem,
 * process_vm_readv(2), O_DIRECT); uffd, which does not keep the item,
 * must fail them the documented way (EFAULT).  On kmod, what refpage.ko
 * itself does: a read fault maps its neighbours, also where the page
 * table does not exist yet, and each descriptor has an inode of its own.
 * On kmod and syscall, what the kernel side promises (docs/kernel.md):
 * no count on any page grows with what is mapped and forked (as root:
 * mapcounts from /proc/kpagecount), what RSS shows for pages read, first
 * stores from several threads at once, and no executable mapping.
 * The other items are test-refpage's.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "refpage-test.h"
#include "../kmod/refpage/refpage.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

static void item_8(unsigned int flag, int keeps)
{
	struct mmkit_refpage *rp = create(flag, 16);
	unsigned char *p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);
	unsigned char out[64];
	int pipefd[2], sv[2], fd;
	size_t i;
	ssize_t n;

	if (keeps)
		T_CASE("8: read(2), write(2), pread(2), recv(2) on untouched pages work");
	else
		T_CASE("8: not kept: system calls on untouched pages fail with EFAULT");
	T_EQ(pipe(pipefd), 0);
	/* write(2) from an untouched page: the kernel reads it. */
	n = write(pipefd[1], p, 64);
	if (keeps) {
		T_EQ(n, 64);
		T_EQ(read(pipefd[0], out, 64), 64);
		for (i = 0; i < 64; i++)
			T_EQ(out[i], pattern[i % 16]);
	} else {
		T_ASSERT(n == -1 && errno == EFAULT);
	}
	/* read(2) into an untouched page: the kernel writes it. */
	T_EQ(write(pipefd[1], "abcd", 4), 4);
	n = read(pipefd[0], p + 2 * page + 10, 4);
	if (keeps) {
		T_EQ(n, 4);
		T_EQ(memcmp(p + 2 * page + 10, "abcd", 4), 0);
		T_ASSERT(is_pattern(p + 2 * page, 10, 16));
		T_ASSERT(is_pattern(p + 2 * page + 16, page - 16, 16));
	} else {
		T_ASSERT(n == -1 && errno == EFAULT);
	}
	close(pipefd[0]);
	close(pipefd[1]);

	/* pread(2) into a buffer spanning fresh pages. */
	fd = tmpfile_of(3 * page);
	n = pread(fd, p + 4 * page + page / 2, 2 * page, 0);
	if (keeps) {
		T_EQ(n, (ssize_t)(2 * page));
		T_ASSERT(is_pattern(p + 4 * page, page / 2, 16));
		T_EQ(p[4 * page + page / 2], 0x5c);
		T_EQ(p[6 * page + page / 2 - 1], 0x5c);
		T_ASSERT(is_pattern(p + 6 * page + page / 2, page / 2, 16));
	} else {
		T_ASSERT(n == -1 && errno == EFAULT);
	}
	close(fd);

	/* recv(2) into fresh pages. */
	T_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	T_EQ(send(sv[0], "xyz", 3, 0), 3);
	n = recv(sv[1], p + 10 * page - 1, 3, 0);
	if (keeps) {
		T_EQ(n, 3);
		T_EQ(memcmp(p + 10 * page - 1, "xyz", 3), 0);
		T_ASSERT(is_pattern(p + 10 * page + 2, page - 2, 16));
	} else {
		T_ASSERT(n == -1 && errno == EFAULT);
		/* Once the program has touched the pages, the kernel can use them. */
		p[10 * page - 1] = 0;
		p[10 * page] = 0;
		T_EQ(recv(sv[1], p + 10 * page - 1, 3, 0), 3);
		T_EQ(memcmp(p + 10 * page - 1, "xyz", 3), 0);
	}
	close(sv[0]);
	close(sv[1]);

	/* MADV_POPULATE_WRITE faults pages in from the kernel too. */
	n = madvise(p + 20 * page, 8 * page, MADV_POPULATE_WRITE);
	if (keeps) {
		T_EQ(n, 0);
		T_ASSERT(is_pattern(p + 20 * page, 8 * page, 16));
	} else {
		T_ASSERT(n == -1 && errno == EFAULT);
	}
	T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);
	mmkit_refpage_destroy(rp);
}

/*
 * The paths that reach user memory through get_user_pages rather than a
 * fault: /proc/PID/mem, process_vm_readv(2) and O_DIRECT I/O (on a brd
 * ram disk, /dev/ram0, where the kernel tier loads one; tmpfs has no
 * O_DIRECT on 6.1).  A backend that does not keep item 8 must fail them.
 */
static void item_8_gup(unsigned int flag, int keeps)
{
	struct mmkit_refpage *rp = create(flag, 16);
	unsigned char *p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);
	struct iovec local, remote;
	unsigned char out[64];
	int fd, status, dumpable;
	ssize_t n;
	pid_t pid;

	T_CASE(keeps ? "8: /proc/self/mem, process_vm_readv, O_DIRECT on untouched pages work"
		     : "8: not kept: /proc/self/mem on untouched pages fails");
	/*
	 * As nobody the process is not dumpable, which hides /proc/self/mem
	 * and its children from process_vm_readv.
	 */
	dumpable = prctl(PR_GET_DUMPABLE);
	T_EQ(prctl(PR_SET_DUMPABLE, 1), 0);
	fd = open("/proc/self/mem", O_RDWR);
	T_ASSERT(fd >= 0);
	n = pread(fd, out, 64, (off_t)(uintptr_t)(p + 3 * page));
	T_EQ(n, keeps ? 64 : -1);
	if (keeps) {
		T_ASSERT(is_pattern(out, 64, 16));
		/* A forced write through /proc/PID/mem copies the page. */
		T_EQ(pwrite(fd, "mem", 3, (off_t)(uintptr_t)(p + 5 * page + 7)), 3);
		T_EQ(memcmp(p + 5 * page + 7, "mem", 3), 0);
		T_ASSERT(is_pattern(p + 5 * page, 7, 16));
		T_ASSERT(is_pattern(p + 6 * page, page, 16));
	}
	close(fd);

	/*
	 * A fork child's pages, read from here.  Not for uffd: the child
	 * registers its ranges again after fork, and until it has, they are
	 * plain anonymous memory.
	 */
	if (keeps) {
		pid = fork();
		T_ASSERT(pid >= 0);
		if (pid == 0) {
			pause();
			_exit(0);
		}
		local.iov_base = out;
		local.iov_len = 64;
		remote.iov_base = p + 12 * page;
		remote.iov_len = 64;
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		T_EQ(n, 64);
		T_ASSERT(is_pattern(out, 64, 16));
	}
	T_EQ(prctl(PR_SET_DUMPABLE, dumpable), 0);

	fd = open("/dev/ram0", O_RDWR | O_DIRECT);
	if (keeps && fd >= 0) {
		/* Out of an untouched page, then into one: both are GUP. */
		T_EQ(pwrite(fd, p + 30 * page, 2 * page, 0), (ssize_t)(2 * page));
		T_EQ(pread(fd, p + 40 * page, 2 * page, 0), (ssize_t)(2 * page));
		T_ASSERT(is_pattern(p + 30 * page, 2 * page, 16));
		T_ASSERT(is_pattern(p + 40 * page, 2 * page, 16));
		memset(p + 32 * page, 0x77, page);
		T_EQ(pwrite(fd, p + 32 * page, page, 0), (ssize_t)page);
		T_EQ(pread(fd, p + 44 * page, page, 0), (ssize_t)page);
		T_EQ(p[44 * page], 0x77);
		T_EQ(p[45 * page - 1], 0x77);
		T_ASSERT(is_pattern(p + 45 * page, page, 16));
	} else if (keeps) {
		printf("    O_DIRECT not tested: /dev/ram0: %s (a brd ram disk this user can open)\n",
		       strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);
	mmkit_refpage_destroy(rp);
}

static void suite(unsigned int flag)
{
	struct mmkit_refpage *rp = create(flag, 16);
	int keeps = !!(mmkit_refpage_contract(rp) & MMKIT_REFPAGE_ITEM(8));

	mmkit_refpage_destroy(rp);
	item_8(flag, keeps);
	item_8_gup(flag, keeps);
}

/* Pages of [p, p + n pages) that /proc/self/pagemap says are mapped. */
static int pages_present(const unsigned char *p, int n)
{
	uint64_t entry[NPAGES];
	int fd = open("/proc/self/pagemap", O_RDONLY), i, present = 0;

	T_ASSERT(fd >= 0 && n <= NPAGES);
	T_EQ(pread(fd, entry, n * sizeof(entry[0]), (off_t)((uintptr_t)p / page * sizeof(entry[0]))),
	     (ssize_t)(n * sizeof(entry[0])));
	close(fd);
	for (i = 0; i < n; i++)
		present += !!(entry[i] & (1ULL << 63));
	return present;
}

/*
 * refpage.ko maps the neighbours of a read fault too (from ->fault, as
 * ->map_pages may not sleep), so a sequential reader does not fault on
 * every page; reads map no new memory.
 */
static void fault_around(void)
{
	struct mmkit_refpage *rp = create(MMKIT_REFPAGE_BACKEND_KMOD, 16);
	unsigned char *p = map(rp, NPAGES * page, PROT_READ | PROT_WRITE);

	/*
	 * The module's window is aligned to 64 KiB: a read at a window's start,
	 * not at the mapping's (which may be a window's last page), has
	 * neighbours to map.
	 */
	unsigned char *q = (unsigned char *)(((uintptr_t)p + 65535) & ~(uintptr_t)65535);

	T_CASE("kmod: one read fault maps its neighbours (fault-around)");
	T_EQ(pages_present(p, NPAGES), 0);
	T_EQ(q[0], pattern[0]);
	printf("    one read fault mapped %d of %d pages\n", pages_present(p, NPAGES), NPAGES);
	T_ASSERT(pages_present(p, NPAGES) > 1);
	T_EQ(mmkit_refpage_unmap(rp, p, NPAGES * page), 0);
	mmkit_refpage_destroy(rp);
}

/*
 * The first read fault in a 2 MiB span with no page table yet: the one
 * case where mapping the neighbours allocates the table and may sleep.
 * refpage.ko did that from ->map_pages, inside rcu_read_lock() on 6.4+; a
 * kernel with DEBUG_ATOMIC_SLEEP logs "sleeping function called from
 * invalid context" there, which the kernel tier fails on.  The span is
 * carved from an untouched PROT_NONE reservation, so nothing else has
 * made its page table.  The module is driven directly, as the library
 * picks its own addresses.
 */
static void fault_around_fresh_table(void)
{
	const size_t span = 2UL << 20;
	struct refpage_create arg = { .pattern = (uintptr_t)pattern, .pattern_size = 16 };
	int dev = open("/dev/refpage", O_RDWR | O_CLOEXEC), fd;
	unsigned char *reserve, *p;

	T_CASE("kmod: fault-around where the page table does not exist yet");
	T_ASSERT(dev >= 0);
	fd = ioctl(dev, REFPAGE_CREATE, &arg);
	T_ASSERT(fd >= 0);
	close(dev);
	reserve = mmap(NULL, 2 * span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(reserve != MAP_FAILED);
	p = (unsigned char *)(((uintptr_t)reserve + span - 1) & ~(span - 1));
	T_ASSERT(mmap(p, span, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == p);
	close(fd);
	T_EQ(pages_present(p, NPAGES), 0);
	T_EQ(p[0], pattern[0]);
	printf("    one read fault mapped %d of %d pages\n", pages_present(p, NPAGES), NPAGES);
	T_ASSERT(pages_present(p, NPAGES) > 1);
	T_ASSERT(memcmp(p + page, pattern, 16) == 0);
	T_EQ(munmap(reserve, 2 * span), 0);
}

/* The inode number /proc/self/maps gives for the mapping holding @p. */
static unsigned long maps_inode(const void *p)
{
	char line[512];
	unsigned long start, end, inode = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	T_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &start, &end, &inode) == 3 &&
		    (uintptr_t)p >= start && (uintptr_t)p < end)
			break;
	fclose(f);
	return inode;
}

/*
 * Each refpage.ko descriptor has an inode of its own: on the one inode all
 * anonymous files share, every mapping of every driver would sit in one
 * address_space.
 */
static void own_inode(void)
{
	struct mmkit_refpage *a = create(MMKIT_REFPAGE_BACKEND_KMOD, 16);
	struct mmkit_refpage *b = create(MMKIT_REFPAGE_BACKEND_KMOD, 16);
	unsigned char *pa = map(a, page, PROT_READ), *pb = map(b, page, PROT_READ);

	T_CASE("kmod: each descriptor has an inode of its own");
	printf("    inodes %lu and %lu\n", maps_inode(pa), maps_inode(pb));
	T_ASSERT(maps_inode(pa) != 0 && maps_inode(pb) != 0);
	T_ASSERT(maps_inode(pa) != maps_inode(pb));
	T_EQ(mmkit_refpage_unmap(a, pa, page), 0);
	T_EQ(mmkit_refpage_unmap(b, pb, page), 0);
	mmkit_refpage_destroy(a);
	mmkit_refpage_destroy(b);
}

/* A descriptor of @flag's backend (kmod or syscall), made without the library. */
static int raw_descriptor(unsigned int flag)
{
	struct refpage_create arg = { .pattern = (uintptr_t)pattern, .pattern_size = 16 };
	long nr = -1;
	int dev, fd;
	FILE *f;

	if (flag == MMKIT_REFPAGE_BACKEND_KMOD) {
		dev = open("/dev/refpage", O_RDWR | O_CLOEXEC);
		T_ASSERT(dev >= 0);
		fd = ioctl(dev, REFPAGE_CREATE, &arg);
		close(dev);
	} else {
		f = fopen("/sys/kernel/mm/refpage/syscall_nr", "r");
		T_ASSERT(f && fscanf(f, "%ld", &nr) == 1);
		fclose(f);
		fd = (int)syscall(nr, pattern, (size_t)16, 0U);
	}
	T_ASSERT(fd >= 0);
	return fd;
}

/* The pattern is the caller's bytes: no mapping of it is ever executable. */
static void exec_refused(unsigned int flag)
{
	int fd = raw_descriptor(flag);
	unsigned char *p;

	T_CASE("no executable mapping: PROT_EXEC refused, mprotect() cannot add it");
	T_ASSERT(mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED);
	T_EQ(errno, EPERM);
	p = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0);
	T_ASSERT(p != MAP_FAILED);
	T_EQ(mprotect(p, page, PROT_READ | PROT_EXEC), -1);
	T_EQ(errno, EACCES);
	T_EQ(munmap(p, page), 0);
	close(fd);
}

/* The kB of @field ("RssFile:") in /proc/self/status. */
static long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	T_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			kb = strtol(line + strlen(field), NULL, 10);
	fclose(f);
	return kb;
}

/* The PFN of the page mapped at @p (0 without CAP_SYS_ADMIN) and its mapcount. */
static uint64_t pfn_at(const void *p)
{
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	T_ASSERT(fd >= 0);
	T_EQ(pread(fd, &entry, sizeof(entry), (off_t)((uintptr_t)p / page * sizeof(entry))),
	     (ssize_t)sizeof(entry));
	close(fd);
	return entry & ((1ULL << 55) - 1);
}

static long mapcount(uint64_t pfn)
{
	uint64_t count = 0;
	int fd = open("/proc/kpagecount", O_RDONLY);

	T_ASSERT(fd >= 0);
	T_EQ(pread(fd, &count, sizeof(count), (off_t)(pfn * sizeof(count))),
	     (ssize_t)sizeof(count));
	close(fd);
	return (long)count;
}

/* refpage.ko's bound: PTEs mapping one copy of the pattern page at most. */
#define PTES_PER_COPY	"/sys/module/refpage/parameters/ptes_per_copy"
#define FORKS		3

static void set_ptes_per_copy(const char *value)
{
	int fd = open(PTES_PER_COPY, O_WRONLY);

	if (fd < 0)
		T_FAIL("%s: %s: refpage.ko maps one page at every PTE", PTES_PER_COPY,
		       strerror(errno));
	T_EQ(write(fd, value, strlen(value)), (ssize_t)strlen(value));
	close(fd);
}

/*
 * No page's count grows with what is mapped and forked: the syscall maps
 * its one page as the zero page is mapped (mapcount 0, nothing per PTE);
 * refpage.ko maps copies, each at ptes_per_copy places at most (lowered to
 * 4 here), whatever fork() duplicates after.  Forks past the bound read
 * the pattern like everyone else: nobody gets SIGBUS.  As root (PFNs).
 */
static void counts(unsigned int flag)
{
	int kmod = flag == MMKIT_REFPAGE_BACKEND_KMOD, fd, i, done[2], status;
	long most = 0;
	uint64_t pfns[NPAGES];
	pid_t pids[FORKS];
	unsigned char *p;
	size_t distinct = 0, j, k;
	char ok;

	T_CASE(kmod ? "kmod: no copy mapped at more than ptes_per_copy places a process, "
		      "whatever fork() copies; nobody faults"
		    : "syscall: the reference page has no mapcount, whatever is mapped and "
		      "forked; nobody faults");
	if (kmod)
		set_ptes_per_copy("4");
	fd = raw_descriptor(flag);
	p = mmap(NULL, NPAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	T_ASSERT(p != MAP_FAILED);
	close(fd);
	p[0] = 1;	/* an anon_vma: fork() copies the page table */
	for (j = 1; j < NPAGES; j++)
		T_EQ(p[j * page + j % 16], pattern[j % 16]);
	T_ASSERT(pipe(done) == 0);
	for (i = 0; i < FORKS; i++) {
		pids[i] = fork();
		T_ASSERT(pids[i] >= 0);
		if (!pids[i]) {
			ok = is_pattern(p + page, (NPAGES - 1) * page, 16) ? 'y' : 'n';
			if (write(done[1], &ok, 1) == 1)
				pause();
			_exit(1);
		}
	}
	for (i = 0; i < FORKS; i++) {
		T_EQ(read(done[0], &ok, 1), 1);
		T_EQ(ok, 'y');
	}
	for (j = 1; j < NPAGES; j++) {
		pfns[j] = pfn_at(p + j * page);
		T_ASSERT(pfns[j] != 0);
		if (mapcount(pfns[j]) > most)
			most = mapcount(pfns[j]);
		for (k = 1; k < j && pfns[k] != pfns[j]; k++)
			;
		distinct += k == j;
	}
	printf("    %d pages read in %d processes: %zu pages behind them, mapcount %ld at most\n",
	       NPAGES - 1, FORKS + 1, distinct, most);
	if (kmod) {
		T_ASSERT(most <= 4 * (FORKS + 1));
		T_ASSERT(distinct >= (NPAGES - 1) / 4);
	} else {
		T_EQ(most, 0);
		T_EQ(distinct, 1);
	}
	for (i = 0; i < FORKS; i++) {
		kill(pids[i], SIGKILL);
		T_EQ(waitpid(pids[i], &status, 0), pids[i]);
	}
	close(done[0]);
	close(done[1]);
	T_EQ(munmap(p, NPAGES * page), 0);
	if (kmod)
		set_ptes_per_copy("256");
}

/*
 * What RSS (the mm's counters: VmRSS, oom_badness()) shows for pages only
 * read: each PTE as file RSS on refpage.ko, as for any page-cache page;
 * nothing on the call, as for the zero page.  The counters lag: 6.2 and
 * later batch them per CPU (32 pages a CPU), 6.1 per task until its 64th
 * fault (a module fault maps 16 pages): hence 2048 pages, the margins, and
 * 256 faults elsewhere before reading them, which make 6.1 sync.
 */
#define RSS_PAGES	2048

static void sync_rss(void)
{
	unsigned char *q = mmap(NULL, 256 * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t j;

	T_ASSERT(q != MAP_FAILED);
	for (j = 0; j < 256; j++)
		q[j * page] = 1;
	T_EQ(munmap(q, 256 * page), 0);
}

static void rss_shown(unsigned int flag)
{
	int kmod = flag == MMKIT_REFPAGE_BACKEND_KMOD, fd = raw_descriptor(flag);
	unsigned char *p = mmap(NULL, RSS_PAGES * page, PROT_READ, MAP_PRIVATE, fd, 0);
	long before, grew;
	size_t j;

	T_CASE(kmod ? "kmod: RssFile counts each page read (a page-cache page's cost)"
		    : "syscall: RssFile counts nothing for pages read (the zero page's cost)");
	T_ASSERT(p != MAP_FAILED);
	close(fd);
	sync_rss();
	before = status_kb("RssFile:");
	for (j = 0; j < RSS_PAGES; j++)
		T_EQ(p[j * page], pattern[0]);
	sync_rss();
	grew = (status_kb("RssFile:") - before) / (long)(page / 1024);
	printf("    RssFile grew by %ld pages reading %d\n", grew, RSS_PAGES);
	if (kmod)
		T_ASSERT(grew > RSS_PAGES - 256);
	else
		T_ASSERT(grew < 256);
	T_EQ(munmap(p, RSS_PAGES * page), 0);
}

struct toucher {
	unsigned char *p;
	unsigned char mark;
	int ok;
};

static void *touch_range(void *arg)
{
	struct toucher *t = arg;
	size_t off;

	for (off = 0; off < NPAGES * page; off += page)
		t->p[off] = t->mark;
	t->ok = 1;
	for (off = 0; off < NPAGES * page; off += page)
		t->ok &= t->p[off] == t->mark && is_pattern(t->p + off + 1, page - 1, 16);
	return NULL;
}

/* First stores from four threads at once, each to a range of its own. */
static void threads_first_touch(unsigned int flag)
{
	struct mmkit_refpage *rp = create(flag, 16);
	unsigned char *p = map(rp, 4 * NPAGES * page, PROT_READ | PROT_WRITE);
	struct toucher t[4];
	pthread_t tid[4];
	int i;

	T_CASE("first stores from 4 threads at once, each to pages of its own");
	for (i = 0; i < 4; i++) {
		t[i] = (struct toucher){ p + i * NPAGES * page, (unsigned char)(i + 1), 0 };
		T_EQ(pthread_create(&tid[i], NULL, touch_range, &t[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		T_EQ(pthread_join(tid[i], NULL), 0);
		T_ASSERT(t[i].ok);
	}
	T_EQ(mmkit_refpage_unmap(rp, p, 4 * NPAGES * page), 0);
	mmkit_refpage_destroy(rp);
}

int main(int argc, char **argv)
{
	unsigned int flag = refpage_test_backend(argc, argv);

	if (flag == MMKIT_REFPAGE_BACKEND_KMOD) {
		fault_around();
		fault_around_fresh_table();
		own_inode();
	}
	if (flag == MMKIT_REFPAGE_BACKEND_KMOD || flag == MMKIT_REFPAGE_BACKEND_SYSCALL) {
		exec_refused(flag);
		threads_first_touch(flag);
		rss_shown(flag);
		if (t_is_root())
			counts(flag);
	}
	refpage_run_suite(argv[1], suite, flag);
	return T_EXIT_PASS;
}
