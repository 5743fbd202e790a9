// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The registry's memfd: how the names names-registry.c keeps are shown to
 * other processes (names-read.c), the writer's side of the protocol its
 * readers follow.  Apart from the names because it is the only part other
 * processes see, and the part that must stay right under their reads:
 *  - the memfd "mmkit-names" (MFD_CLOEXEC) only shows the names; it is
 *    never read back: nothing a peer does to the file can change what
 *    this process believes;
 *  - the memfd is sealed (registry_create()): only this process's mapping
 *    can write it, and nobody can shrink it (which would make our writes
 *    fault) or grow it.  It holds struct mmkit__registry_header, then two
 *    areas of `cap` entries: the live one, `count` entries sorted by start,
 *    not overlapping, and a snapshot.  Room runs out: a new memfd twice
 *    as large replaces it;
 *  - names-registry.c's mutex serialises the writers (threads of this
 *    process), and is held in every call here; `seq` is odd while one
 *    changes the live entries, and a reader that sees it odd, or changed
 *    across its read, reads again (names-read.c: it backs off, and reads
 *    anyway, checking each entry, a seq left odd by a writer that died);
 *  - a reader that a busy writer never lets finish asks for a snapshot by
 *    holding a read lock on the file (all a reader may do to it): at the
 *    end of its next call the writer brings the snapshot area up to date,
 *    and leaves it alone while a reader reads it (for a while).  The writer
 *    never waits for a reader, and snapshots are rationed to a few per
 *    cent of its time (mmkit__names_memfd_snapshot());
 *  - another process finds the registry by the link
 *    "/memfd:mmkit-names (deleted)" in /proc/PID/fd and reads it through
 *    /proc/PID/fd/N: the same PTRACE_MODE_READ access /proc/PID/smaps takes
 *    (same user and dumpable, or root);
 *  - fork: names-registry.c's pthread_atfork() handler gives the child a
 *    copy in a memfd of its own (mmkit__names_memfd_fork()), so parent and
 *    child never write each other's names (a child made by a raw clone()
 *    without the handlers would share it), and closes the child's
 *    descriptor of the parent's only if it is still that file;
 *  - a program that closes descriptors it does not know (closefrom) hides
 *    its registry until its next mmkit_name(), which notices that the
 *    descriptor is no longer the memfd and makes a new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "names.h"


/* Where area @area (0: live, 1: snapshot) begins in a memfd of @cap entries per area. */
static size_t area_offset(size_t cap, int area)
{
	return sizeof(struct mmkit__registry_header) + area * cap * sizeof(struct mmkit__name_range);
}

static struct mmkit__name_range *area_entries(struct mmkit__names_memfd *m, int area)
{
	return (struct mmkit__name_range *)((char *)m->hdr + area_offset(m->cap, area));
}

/*
 * Makes a memfd with room for @cap entries per area showing @t, into
 * *@fd and *@hdr.  Sealed: no other process can write it (F_SEAL_FUTURE_WRITE
 * keeps only the mapping made here writable), nor shrink it, which would
 * make our writes fault, nor grow it.  Another process may open it before
 * the seals: its size is checked once it can no longer change, and what
 * such a process writes through a mapping it made meanwhile is only ever
 * read by readers, who check it.  The magic goes last, so a reader never
 * takes a file half made for a registry.
 */
static int registry_create(struct mmkit__names_memfd *m, const struct mmkit__name_table *t,
			   size_t cap, int *fd, struct mmkit__registry_header **hdr,
			   struct stat *st)
{
	size_t size = area_offset(cap, 2);
	struct mmkit__registry_header *h;
	void *p = NULL;
	int ret;

	*fd = sys_memfd_create(MMKIT__REGISTRY_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (*fd < 0)
		return *fd;
	ret = sys_ftruncate(*fd, (off_t)size);
	if (!ret)
		ret = sys_fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	if (!ret)
		ret = sys_fstat(*fd, st);
	if (!ret && (uint64_t)st->st_size != size)
		ret = -EBUSY;
	if (!ret)
		ret = sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0, &p);
	if (!ret)
		ret = sys_fcntl(*fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL);
	/* Before Linux 5.1: others may write what readers read, but cannot make us fault. */
	if (ret == -EINVAL)
		ret = sys_fcntl(*fd, F_ADD_SEALS, F_SEAL_SEAL);
	if (ret) {
		if (p)
			sys_munmap(p, size);
		sys_close(*fd);
		return ret;
	}
	h = p;
	h->version = MMKIT__REGISTRY_VERSION;
	h->cap = (uint32_t)cap;
	h->seq = m->seq;
	h->count = (uint32_t)t->n;
	h->snap_seq = m->snap_seq;
	/* Older than any seq this file shows: no reader takes this empty snapshot. */
	h->snap_of = m->seq - 2;
	if (t->n)
		memcpy((char *)h + area_offset(cap, 0), t->e, t->n * sizeof(*t->e));
	__atomic_store_n(&h->magic, MMKIT__REGISTRY_MAGIC, __ATOMIC_RELEASE);
	*hdr = h;
	return 0;
}

/*
 * 1 if m->fd is still the registry's memfd, 0 if not (a program that
 * closes descriptors it does not know, closefrom, may have reused the
 * number), -errno if fstat fails otherwise: then it is still ours.
 */
static int registry_fd_ours(struct mmkit__names_memfd *m)
{
	struct stat st;
	int ret = sys_fstat(m->fd, &st);

	if (ret == -EBADF)
		return 0;
	return ret ? ret : st.st_dev == m->dev && st.st_ino == m->ino;
}

/*
 * Moves the registry to a new memfd of @cap entries per area showing @t,
 * closing the old one if its descriptor is still ours.  While both exist a
 * reader may read both (the old one as it was before this change).  On
 * failure the old one stays, unless @drop: then there is none (a child
 * after fork must not write its parent's).
 */
static int registry_move(struct mmkit__names_memfd *m, const struct mmkit__name_table *t,
			 size_t cap, int drop)
{
	struct mmkit__registry_header *hdr = NULL;
	int fd = -1, close_old = m->hdr && registry_fd_ours(m) == 1, ret;
	struct stat st;

	ret = registry_create(m, t, cap, &fd, &hdr, &st);
	if (ret && !drop)
		return ret;
	if (m->hdr) {
		sys_munmap(m->hdr, area_offset(m->cap, 2));
		if (close_old)
			sys_close(m->fd);
	}
	m->fd = -1;
	m->hdr = NULL;
	m->cap = 0;
	if (ret)
		return ret;
	m->fd = fd;
	m->hdr = hdr;
	m->cap = cap;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->snap_of = m->seq - 2;
	m->snap_from = 0;
	m->snap_to = t->n;
	m->snap_faulted = 0;
	return 0;
}

/* In a child after fork: a memfd of its own showing @t, none if that fails. */
void mmkit__names_memfd_fork(struct mmkit__names_memfd *m, const struct mmkit__name_table *t)
{
	if (m->hdr)
		registry_move(m, t, m->cap, 1);
}

/* Unmaps and closes the memfd: a registry of a process that is gone. */
void mmkit__names_memfd_release(struct mmkit__names_memfd *m)
{
	if (m->hdr) {
		sys_munmap(m->hdr, area_offset(m->cap, 2));
		sys_close(m->fd);
	}
	m->hdr = NULL;
	m->fd = -1;
	m->cap = 0;
}

/* Makes sure there is a usable memfd showing @t with room for @need entries per area. */
int mmkit__names_memfd_ready(struct mmkit__names_memfd *m, const struct mmkit__name_table *t,
			     size_t need)
{
	size_t cap = m->cap ? m->cap : 64;
	int ours = 0;

	if (m->hdr) {
		/* Closed by the application (and the number maybe reused): a new one. */
		ours = registry_fd_ours(m);
		if (ours < 0)
			return ours;
	}
	if (ours && need <= m->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	return registry_move(m, t, cap, 0);
}

/*
 * Shows entries [@first, @last) of @t (and its count) in the memfd's live
 * area, if there is a m->  Readers retry while seq is odd or changes
 * under them.  The memfd is only written: what it holds is never read back.
 */
void mmkit__names_memfd_publish(struct mmkit__names_memfd *m, const struct mmkit__name_table *t,
				size_t first, size_t last)
{
	uint32_t seq = m->seq + 1;

	if (!m->hdr)
		return;
	if (first < m->snap_from)
		m->snap_from = first;
	if (last > m->snap_to)
		m->snap_to = last;

	__atomic_store_n(&m->hdr->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (last > first)
		memcpy(area_entries(m, 0) + first, t->e + first, (last - first) * sizeof(*t->e));
	__atomic_store_n(&m->hdr->count, (uint32_t)t->n, __ATOMIC_RELAXED);
	m->seq = seq + 1;
	__atomic_store_n(&m->hdr->seq, m->seq, __ATOMIC_RELEASE);
}

/* 1 if another process holds a lock on byte @at of the registry, else 0. */
static int registry_locked(struct mmkit__names_memfd *m, off_t at)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1 };

	return !sys_fcntl(m->fd, F_OFD_GETLK, (unsigned long)&fl) && fl.l_type != F_UNLCK;
}

/*
 * Faults in the snapshot area up to entry @to before a copy, outside the
 * ration: each page is paid for once per file, however often readers ask,
 * and under emulation the faults of a first copy of 60,000 entries alone
 * overdrew the budget for longer than a reader waits.  Best effort: where
 * MADV_POPULATE_WRITE is refused the copy faults the pages in itself.
 */
static void snapshot_fault_in(struct mmkit__names_memfd *m, size_t to)
{
	uintptr_t page = sys_page_size();
	uintptr_t from = (uintptr_t)(area_entries(m, 1) + m->snap_faulted) & ~(page - 1);
	uintptr_t end = (uintptr_t)(area_entries(m, 1) + to);

	if (to <= m->snap_faulted)
		return;
	sys_madvise((void *)from, end - from, MADV_POPULATE_WRITE);
	m->snap_faulted = to;
}

/*
 * A reader that changes under its reads asks for a snapshot by holding a
 * read lock on byte MMKIT__REGISTRY_LOCK_ASK of the memfd (all it may do
 * to a file it may only read), and on byte MMKIT__REGISTRY_LOCK_READING
 * while it reads one.  The writer copies into the snapshot area the
 * entries changed since the last one; one being read it leaves alone for
 * MMKIT__REGISTRY_SNAP_HOLD_NS at most.  Snapshots are rationed by a
 * budget (names.h), whatever readers ask.  The writer never waits for a
 * reader.
 */
void mmkit__names_memfd_snapshot(struct mmkit__names_memfd *m, const struct mmkit__name_table *t)
{
	size_t to = m->snap_to < t->n ? m->snap_to : t->n;
	uint64_t t0, cpu;

	/* Not asked, rationed, held, or the snapshot shows what the live area does. */
	if (!m->hdr || m->snap_of == m->seq)
		return;
	t0 = sys_monotonic_ns();
	if (!m->snap_budget_at)
		m->snap_budget = MMKIT__REGISTRY_SNAP_BURST_NS;
	else
		m->snap_budget += (int64_t)(t0 - m->snap_budget_at) /
				     MMKIT__REGISTRY_SNAP_RATIO;
	if (m->snap_budget > MMKIT__REGISTRY_SNAP_BURST_NS)
		m->snap_budget = MMKIT__REGISTRY_SNAP_BURST_NS;
	m->snap_budget_at = t0;
	if (m->snap_budget <= 0 || !registry_locked(m, MMKIT__REGISTRY_LOCK_ASK) ||
	    (t0 < m->snap_made + MMKIT__REGISTRY_SNAP_HOLD_NS &&
	     registry_locked(m, MMKIT__REGISTRY_LOCK_READING)))
		return;
	snapshot_fault_in(m, to);
	cpu = sys_thread_cpu_ns();
	__atomic_store_n(&m->hdr->snap_seq, m->snap_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (to > m->snap_from)
		memcpy(area_entries(m, 1) + m->snap_from, t->e + m->snap_from,
		       (to - m->snap_from) * sizeof(*t->e));
	__atomic_store_n(&m->hdr->snap_count, (uint32_t)t->n, __ATOMIC_RELAXED);
	__atomic_store_n(&m->hdr->snap_of, m->seq, __ATOMIC_RELAXED);
	m->snap_of = m->seq;
	m->snap_from = t->n;
	m->snap_to = 0;
	m->snap_seq += 2;
	__atomic_store_n(&m->hdr->snap_seq, m->snap_seq, __ATOMIC_RELEASE);
	m->snap_made = sys_monotonic_ns();
	/* What it cost the writer: its CPU time, which other processes' load does not inflate. */
	m->snap_budget -= (int64_t)(sys_thread_cpu_ns() - cpu);
}
