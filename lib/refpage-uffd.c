// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The uffd backend: anonymous memory registered with userfaultfd in
 * missing mode, with UFFD_FEATURE_SIGBUS so that a fault on a page nobody
 * wrote raises SIGBUS in the faulting thread, whose handler fills it with
 * UFFDIO_COPY and returns.  No handler thread: waking one costs 135-340 us
 * when it runs on the other CPU, resolving in place about 9 us.  Faults in
 * a sequence fill a batch that doubles up to BATCH_MAX pages: sequential
 * writers take a few signals per megabyte, random ones one page per fault
 * and no more memory than they touch.  256 pages against 64 halve the
 * signals of a 4 MB sequential touch (about 10 % of its time) for 768 KiB
 * more of pattern source per object.
 *
 * What it cannot do: unprivileged userfaultfd needs UFFD_USER_MODE_ONLY,
 * and with it (or with SIGBUS) a fault taken by the kernel on behalf of a
 * system call fails, so read(2) into or write(2) from a page nobody
 * touched returns EFAULT (contract item 8).  Hence opt-in only.
 *
 * One userfaultfd and one SIGBUS handler serve every object of the
 * process; a table maps registered ranges to their pattern.  The handler
 * reads the table without a lock: writers publish a slot's end last and
 * clear it first, so a half-written slot never matches.  A fork(2) child
 * loses the registrations (the privileged UFFD_FEATURE_EVENT_FORK would be
 * needed, and blocks fork without a reader), so a pthread_atfork handler
 * opens a new userfaultfd in the child and registers the ranges again.
 *
 * A handler runs in any thread at any moment, so what it uses must outlive
 * it:
 * - The handler itself is installed with the first object and never
 *   removed.  Code that installs a handler after ours must chain to ours;
 *   removing ours would leave that chain pointing at a stale "previous"
 *   handler, and installing ours again over that handler would make each
 *   chain to the other, forever.  So it is installed again only when the
 *   default action or SIG_IGN has been put back (no handler can then chain
 *   to it), and it never records itself as the handler before it.  Faults
 *   that are not ours go to that handler, with or without objects.  It is
 *   recorded (uffd_prev) only while ours is not installed.
 * - Slot blocks are never freed: at most BLOCKS x SLOTS_PER_BLOCK slots,
 *   2.5 MiB at worst, and usually one block of 40 KiB.  A freed slot is
 *   reused.
 * - An object's pattern source (batch_src) goes when the object does.  A
 *   handler pins the slot it found (users) and then checks that the slot's
 *   generation has not changed; freeing a slot bumps the generation, then
 *   waits until no pin is left.  Destroy frees its slots before unmapping
 *   the source, so every copy from it is over by then.  The wait lasts at
 *   most one UFFDIO_COPY of a batch.  Never freeing sources would leak a
 *   megabyte per object; a global epoch would make destroy wait for every
 *   handler in the process, not just those using its own slots.
 * - Destroy unregisters a range before freeing its slot.  A fault that came
 *   before the unregistration may reach the handler after it and find no
 *   slot, or fail to copy: the handler lets the access run once more, and
 *   it then finds an ordinary page.  A second fault at the same address
 *   with no change to the table in between (uffd_table_gen) is not ours.
 *   The generation matters: the same address may fault again much later,
 *   in a range mapped there since, and meet the next such race.
 *
 * A thread that blocks SIGBUS cannot take the signal: the kernel forces
 * the default action and the process dies on its first untouched page.
 * map and attach (hence remap) refuse such a caller (-EINVAL); other
 * threads' masks cannot be seen from here, and mmkit_refpage(3) says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/userfaultfd.h>

#include "refpage.h"

#define BATCH_MAX		256
#define SLOTS_PER_BLOCK		1024
#define BLOCKS			64

struct uffd_slot {
	uintptr_t start;
	uintptr_t end;			/* 0: free */
	const unsigned char *src;	/* BATCH_MAX pages of pattern */
	unsigned long gen;		/* bumped each time the slot is freed */
	unsigned int users;		/* handlers copying from src */
};

static pthread_mutex_t uffd_lock = PTHREAD_MUTEX_INITIALIZER;
static int uffd_fd = -1;
static unsigned int uffd_objects;
/* The SIGBUS handler was installed once, and what it chains to. */
static int uffd_handler_installed;
static struct sigaction uffd_prev;
static struct uffd_slot *uffd_blocks[BLOCKS];
static unsigned int uffd_nslots;
/* Bumped before a range is unregistered or a slot shrinks or goes. */
static unsigned long uffd_table_gen;
/* The fork handlers are registered: under uffd_lock. */
static int uffd_atfork_done;
/* Kernels before 5.11 refuse UFFD_USER_MODE_ONLY: asked once, remembered. */
static int user_mode_only_refused;

/* Where the last batch of this thread ended, and its size. */
static __thread uintptr_t batch_next __attribute__((tls_model("initial-exec")));
static __thread unsigned int batch_pages __attribute__((tls_model("initial-exec")));
/*
 * The last fault of this thread that the handler let run again unresolved,
 * and uffd_table_gen then.
 */
static __thread uintptr_t retry_addr __attribute__((tls_model("initial-exec")));
static __thread unsigned long retry_gen __attribute__((tls_model("initial-exec")));

/* userfaultfd(2), user-mode faults only where the kernel allows that (5.11). */
static int uffd_syscall(void)
{
	int fd;

	if (!__atomic_load_n(&user_mode_only_refused, __ATOMIC_RELAXED)) {
		fd = sys_userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
		if (fd != -EINVAL)
			return fd;
		__atomic_store_n(&user_mode_only_refused, 1, __ATOMIC_RELAXED);
	}
	return sys_userfaultfd(O_CLOEXEC | O_NONBLOCK);
}

static int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_SIGBUS };
	int fd = uffd_syscall(), ret;

	if (fd < 0)
		return fd;
	ret = sys_ioctl(fd, UFFDIO_API, &api);
	if (ret) {
		sys_close(fd);
		/* A kernel without UFFD_FEATURE_SIGBUS (4.14) says EINVAL. */
		return ret == -EINVAL ? -EOPNOTSUPP : ret;
	}
	return fd;
}

/* Why userfaultfd failed with @err, for people. */
static void uffd_describe(int err, char *why, size_t len)
{
	if (err == -EPERM)
		snprintf(why, len, "userfaultfd: EPERM: vm.unprivileged_userfaultfd=0, "
			 "no CAP_SYS_PTRACE, no UFFD_USER_MODE_ONLY (5.11)");
	else if (err == -ENOSYS)
		snprintf(why, len, "userfaultfd: ENOSYS: kernel built without CONFIG_USERFAULTFD");
	else if (err == -EOPNOTSUPP)
		snprintf(why, len, "userfaultfd: no UFFD_FEATURE_SIGBUS (4.14)");
	else
		snprintf(why, len, "userfaultfd: %s", strerror(-err));
}

static int uffd_available(char *why, size_t len)
{
	int fd = uffd_open();

	if (fd < 0) {
		uffd_describe(fd, why, len);
		return fd;
	}
	sys_close(fd);
	return 0;
}

/* The system call itself, whether or not the refpage backend can use it. */
int mmkit__probe_userfaultfd(struct mmkit_feature *f)
{
	char why[MMKIT_REASON_MAX];
	int fd = uffd_syscall();

	if (fd < 0) {
		uffd_describe(fd, why, sizeof(why));
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none", "%s", why);
		return !mmkit__passing(fd);
	}
	sys_close(fd);
	mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "syscall", "userfaultfd(2) works for this process");
	return 1;
}

static struct uffd_slot *slot_at(unsigned int i)
{
	struct uffd_slot *block = __atomic_load_n(&uffd_blocks[i / SLOTS_PER_BLOCK],
						  __ATOMIC_ACQUIRE);

	return block ? &block[i % SLOTS_PER_BLOCK] : NULL;
}

/*
 * Runs in the signal handler: no locks, no allocation.  Finds the slot
 * holding @addr and pins it: its source stays mapped until slot_unpin().
 */
static struct uffd_slot *slot_pin(uintptr_t addr, uintptr_t *end, const unsigned char **src)
{
	unsigned int i, n = __atomic_load_n(&uffd_nslots, __ATOMIC_ACQUIRE);
	struct uffd_slot *s;
	unsigned long gen;

	for (i = 0; i < n; i++) {
		s = slot_at(i);
		gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
		*end = __atomic_load_n(&s->end, __ATOMIC_ACQUIRE);
		if (addr < __atomic_load_n(&s->start, __ATOMIC_RELAXED) || addr >= *end)
			continue;
		/* Either slot_free() sees this pin, or this sees its new generation. */
		__atomic_fetch_add(&s->users, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&s->gen, __ATOMIC_SEQ_CST) == gen) {
			*src = __atomic_load_n(&s->src, __ATOMIC_RELAXED);
			return s;
		}
		/* Freed since it was read, perhaps reused: look on. */
		__atomic_fetch_sub(&s->users, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void slot_unpin(struct uffd_slot *s)
{
	__atomic_fetch_sub(&s->users, 1, __ATOMIC_RELEASE);
}

/* Under uffd_lock: frees @s once no handler copies from its source any more. */
static void slot_free(struct uffd_slot *s)
{
	__atomic_store_n(&s->end, 0, __ATOMIC_RELEASE);
	__atomic_fetch_add(&s->gen, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&s->users, __ATOMIC_SEQ_CST))
		sys_yield();
}

/* Under uffd_lock. */
static int slot_add(uintptr_t start, uintptr_t end, const unsigned char *src)
{
	struct uffd_slot *s = NULL;
	unsigned int i;
	void *mem;
	int ret;

	for (i = 0; i < uffd_nslots; i++) {
		s = slot_at(i);
		if (!s->end)
			break;
	}
	if (i == uffd_nslots) {
		if (i == SLOTS_PER_BLOCK * BLOCKS)
			return -ENOMEM;
		if (!uffd_blocks[i / SLOTS_PER_BLOCK]) {
			ret = sys_mmap(NULL, SLOTS_PER_BLOCK * sizeof(*s), PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &mem);
			if (ret)
				return ret;
			__atomic_store_n(&uffd_blocks[i / SLOTS_PER_BLOCK], mem, __ATOMIC_RELEASE);
		}
		s = slot_at(i);
	}
	__atomic_store_n(&s->start, start, __ATOMIC_RELAXED);
	__atomic_store_n(&s->src, src, __ATOMIC_RELAXED);
	__atomic_store_n(&s->end, end, __ATOMIC_RELEASE);
	if (i == uffd_nslots)
		__atomic_store_n(&uffd_nslots, i + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Under uffd_lock, before a change that can make a fault of ours unresolvable for a moment. */
static void table_changing(void)
{
	__atomic_fetch_add(&uffd_table_gen, 1, __ATOMIC_SEQ_CST);
}

/* Under uffd_lock: forgets [start, end) of every slot, splitting one if needed. */
static int slot_remove(uintptr_t start, uintptr_t end)
{
	unsigned int i, n = uffd_nslots;
	struct uffd_slot *s;
	int ret;

	table_changing();
	for (i = 0; i < n; i++) {
		s = slot_at(i);
		if (!s->end || s->end <= start || s->start >= end)
			continue;
		if (s->start < start && s->end > end) {
			ret = slot_add(end, s->end, s->src);
			if (ret)
				return ret;
			__atomic_store_n(&s->end, start, __ATOMIC_RELEASE);
		} else if (s->start < start) {
			__atomic_store_n(&s->end, start, __ATOMIC_RELEASE);
		} else if (s->end > end) {
			__atomic_store_n(&s->start, end, __ATOMIC_RELEASE);
		} else {
			slot_free(s);
		}
	}
	return 0;
}

/*
 * Copies the pattern at @src to the page at @addr and, when faults come in
 * a sequence, to the pages after it, up to @end.
 */
static int uffd_copy(uintptr_t addr, uintptr_t end, const unsigned char *src)
{
	int fd = __atomic_load_n(&uffd_fd, __ATOMIC_ACQUIRE);
	size_t page = sys_page_size();
	struct uffdio_copy copy;
	unsigned int pages;
	int ret;

	addr &= ~(uintptr_t)(page - 1);
	pages = addr == batch_next && batch_pages ? batch_pages * 2 : 1;
	if (pages > BATCH_MAX)
		pages = BATCH_MAX;
	if (pages > (end - addr) / page)
		pages = (end - addr) / page;
	for (;;) {
		copy.dst = addr;
		copy.src = (uintptr_t)src;
		copy.len = pages * page;
		/* Nobody ever waits on this userfaultfd: faults raise SIGBUS instead. */
		copy.mode = UFFDIO_COPY_MODE_DONTWAKE;
		copy.copy = 0;
		ret = sys_ioctl(fd, UFFDIO_COPY, &copy);
		/* A batch ending at a page that another thread (or a write) filled. */
		if (!ret || copy.copy > 0 || ret == -EEXIST)
			break;
		/* The mm is changing (mremap, fork): the fault comes back. */
		if (ret == -EAGAIN)
			return 0;
		/* A batch crossing into another VMA (mprotect split it): one page. */
		if (ret == -ENOENT && pages > 1) {
			pages = 1;
			continue;
		}
		batch_pages = 0;
		return ret;
	}
	batch_pages = pages;
	batch_next = addr + (copy.copy > 0 ? (size_t)copy.copy : pages * page);
	return 0;
}

/*
 * Fills the page at @addr and, when faults come in a sequence, the pages
 * after it.  0 if the fault is resolved (or will be, when retried).
 */
static int uffd_resolve(uintptr_t addr)
{
	const unsigned char *src;
	struct uffd_slot *s;
	uintptr_t end;
	int ret;

	s = slot_pin(addr, &end, &src);
	if (!s)
		return -ENOENT;
	ret = uffd_copy(addr, end, src);
	slot_unpin(s);
	return ret;
}

static void uffd_chain(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction dfl;

	if (uffd_prev.sa_flags & SA_SIGINFO) {
		uffd_prev.sa_sigaction(sig, si, ctx);
		return;
	}
	if (uffd_prev.sa_handler == SIG_IGN && si->si_code <= 0)
		return;
	if (uffd_prev.sa_handler == SIG_DFL || uffd_prev.sa_handler == SIG_IGN) {
		/* A fault returns to the faulting instruction and kills the process as without us. */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sys_sigaction(SIGBUS, &dfl, NULL);
		if (si->si_code <= 0)
			sys_raise(sig);
		return;
	}
	uffd_prev.sa_handler(sig);
}

static void uffd_sigbus(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t addr = (uintptr_t)si->si_addr;
	unsigned long gen;

	if (si->si_code == BUS_ADRERR) {
		if (!uffd_resolve(addr))
			return;
		/*
		 * Perhaps our range, unregistered since the fault: once more
		 * (see the top).  Read after the attempt, the generation
		 * counts every change that attempt may have run into.
		 */
		gen = __atomic_load_n(&uffd_table_gen, __ATOMIC_SEQ_CST);
		if (retry_addr != addr || retry_gen != gen) {
			retry_addr = addr;
			retry_gen = gen;
			return;
		}
	}
	retry_addr = 0;
	uffd_chain(sig, si, ctx);
}

static int handler_is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == uffd_sigbus;
}

/*
 * Under uffd_lock: installs the handler the first time, and again only
 * where no handler is installed any more (see the top).
 */
static int uffd_handler_install(void)
{
	struct sigaction sa, old;
	int ret;

	ret = sys_sigaction(SIGBUS, NULL, &old);
	if (ret)
		return ret;
	if (handler_is_ours(&old))
		return 0;
	if (uffd_handler_installed && ((old.sa_flags & SA_SIGINFO) ||
				       (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = uffd_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	ret = sys_sigaction(SIGBUS, &sa, &old);
	if (ret)
		return ret;
	/* Ours put back by someone else since it was read: what it chains to stays. */
	if (!handler_is_ours(&old))
		uffd_prev = old;
	uffd_handler_installed = 1;
	return 0;
}

/* Under uffd_lock. */
static int uffd_register(uintptr_t start, size_t len)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	return sys_ioctl(uffd_fd, UFFDIO_REGISTER, &reg);
}

static void uffd_atfork_prepare(void)
{
	pthread_mutex_lock(&uffd_lock);
}

static void uffd_atfork_parent(void)
{
	pthread_mutex_unlock(&uffd_lock);
}

/*
 * The child's mappings lost their registration, and the inherited
 * userfaultfd still belongs to the parent's memory: replace it.  Should
 * that fail (no fd left), the child's untouched pages read as zeros.
 */
static void uffd_atfork_child(void)
{
	unsigned int i;
	struct uffd_slot *s;
	int fd;

	/* Pins of the parent's other threads, which the child does not have. */
	for (i = 0; i < uffd_nslots; i++)
		slot_at(i)->users = 0;
	if (uffd_objects) {
		fd = uffd_open();
		sys_close(uffd_fd);
		uffd_fd = fd;
		for (i = 0; fd >= 0 && i < uffd_nslots; i++) {
			s = slot_at(i);
			if (s->end)
				uffd_register(s->start, s->end - s->start);
		}
	}
	pthread_mutex_unlock(&uffd_lock);
}

MMKIT__ATFORK_HANDLERS(uffd_fork, uffd_atfork_prepare, uffd_atfork_parent, uffd_atfork_child)

/* Not under uffd_lock: the fork handlers, unless they are registered; 0 or -errno. */
static int uffd_atfork_register(void)
{
	return mmkit__atfork_register(&uffd_atfork_done, uffd_fork_prepare, uffd_fork_parent,
				      uffd_fork_child);
}

/* At load, as the memfd backend's and for the same reasons (refpage-memfd.c). */
__attribute__((constructor)) static void uffd_atfork_at_load(void)
{
	uffd_atfork_register();
}

/* Under uffd_lock: every object checks the handler; the first opens the userfaultfd. */
static int uffd_get(void)
{
	int fd, ret;

	ret = uffd_handler_install();
	if (ret)
		return ret;
	if (uffd_objects)
		goto out;
	fd = uffd_open();
	if (fd < 0)
		return fd;
	__atomic_store_n(&uffd_fd, fd, __ATOMIC_RELEASE);
out:
	uffd_objects++;
	return 0;
}

/*
 * Under uffd_lock: the last object closes the userfaultfd.  No handler
 * holds it: it reads it under a pin, and the objects' slots are free.
 * The handler and the slot blocks stay (see the top).
 */
static void uffd_put(void)
{
	int fd = uffd_fd;

	if (--uffd_objects)
		return;
	__atomic_store_n(&uffd_fd, -1, __ATOMIC_RELEASE);
	sys_close(fd);
}

static int uffd_create(struct mmkit_refpage *rp)
{
	size_t page = sys_page_size(), off;
	void *mem;
	int ret;

	ret = sys_mmap(NULL, BATCH_MAX * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &mem);
	if (ret)
		return ret;
	rp->batch_src = mem;
	for (off = 0; off < BATCH_MAX * page; off += page)
		memcpy(rp->batch_src + off, rp->page, page);
	/* Without the fork handler a child would read zeros: no object then. */
	ret = uffd_atfork_register();
	if (!ret) {
		pthread_mutex_lock(&uffd_lock);
		ret = uffd_get();
		pthread_mutex_unlock(&uffd_lock);
	}
	if (ret)
		sys_munmap(mem, BATCH_MAX * page);
	return ret;
}

/*
 * Ranges still mapped are unregistered: their pages nobody wrote read as
 * zeros from now on, since the pattern goes with the object.
 */
static void uffd_destroy(struct mmkit_refpage *rp)
{
	struct uffdio_range range;
	struct uffd_slot *s;
	unsigned int i;

	pthread_mutex_lock(&uffd_lock);
	table_changing();
	for (i = 0; i < uffd_nslots; i++) {
		s = slot_at(i);
		if (!s->end || s->src != rp->batch_src)
			continue;
		range.start = s->start;
		range.len = s->end - s->start;
		/* Unregistered first, then forgotten: a fault in between is retried (see the top). */
		sys_ioctl(uffd_fd, UFFDIO_UNREGISTER, &range);
		slot_free(s);
	}
	uffd_put();
	pthread_mutex_unlock(&uffd_lock);
	sys_munmap(rp->batch_src, BATCH_MAX * sys_page_size());
}

/*
 * Registers [addr, addr + len) and remembers it, under uffd_lock.  A
 * caller that blocks SIGBUS would die on its first untouched page: -EINVAL.
 * What the table still holds there is stale (a range unmapped with plain
 * munmap(2), its address reused): forgotten first, or its pattern would be
 * served in the new range and its object's destroy would unregister it.
 */
static int uffd_track(struct mmkit_refpage *rp, void *addr, size_t len)
{
	int ret = sys_signal_blocked(SIGBUS);

	if (ret)
		return ret > 0 ? -EINVAL : ret;
	pthread_mutex_lock(&uffd_lock);
	ret = uffd_register((uintptr_t)addr, len);
	if (!ret)
		ret = slot_remove((uintptr_t)addr, (uintptr_t)addr + len);
	if (!ret)
		ret = slot_add((uintptr_t)addr, (uintptr_t)addr + len, rp->batch_src);
	pthread_mutex_unlock(&uffd_lock);
	return ret;
}

static int uffd_map(struct mmkit_refpage *rp, size_t len, int prot, void **addr)
{
	void *mem;
	int ret;

	ret = sys_mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &mem);
	if (ret)
		return ret;
	ret = uffd_track(rp, mem, len);
	if (ret) {
		sys_munmap(mem, len);
		return ret;
	}
	*addr = mem;
	return 0;
}

/*
 * Registration in missing mode leaves present and swapped-out pages as
 * they are: only the pages never faulted in will read as the pattern.
 */
static int uffd_attach(struct mmkit_refpage *rp, void *addr, size_t len)
{
	return uffd_track(rp, addr, len);
}

static int uffd_unmap(struct mmkit_refpage *rp, void *addr, size_t len)
{
	int ret;

	(void)rp;
	pthread_mutex_lock(&uffd_lock);
	ret = slot_remove((uintptr_t)addr, (uintptr_t)addr + len);
	pthread_mutex_unlock(&uffd_lock);
	return ret ? ret : sys_munmap(addr, len);
}

/* A moved mapping loses its registration (no UFFD_FEATURE_EVENT_REMAP): register again. */
static int uffd_rebind(struct mmkit_refpage *rp, void *from, void *to, size_t len)
{
	int ret;

	(void)rp;
	pthread_mutex_lock(&uffd_lock);
	ret = uffd_register((uintptr_t)to, len);
	if (!ret)
		ret = slot_remove((uintptr_t)from, (uintptr_t)from + len);
	pthread_mutex_unlock(&uffd_lock);
	return ret;
}

static int uffd_can_tag(char *why, size_t len)
{
	snprintf(why, len, "UFFDIO_COPY gives the new page zero tags");
	return -EOPNOTSUPP;
}

const struct refpage_backend refpage__uffd = {
	.name		= "uffd",
	.flag		= MMKIT_REFPAGE_BACKEND_UFFD,
	.contract	= MMKIT_REFPAGE_FULL_CONTRACT & ~MMKIT_REFPAGE_ITEM(8),
	.available	= uffd_available,
	.create		= uffd_create,
	.can_tag	= uffd_can_tag,
	.destroy	= uffd_destroy,
	.map		= uffd_map,
	.attach		= uffd_attach,
	.unmap		= uffd_unmap,
	.rebind		= uffd_rebind,
};
