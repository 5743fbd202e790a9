// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Reading the registry of a process (names-memfd.c writes it):
 * this process's under its lock, another's through /proc/PID/fd.  Another
 * process's memory is not trusted: what it holds is checked, bounded and
 * read again when torn; only memfds are opened (registry_open()), each
 * file once however many descriptors reach it, and several registries are
 * merged in O(n log n) (tables_merge()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "procfs.h"

/*
 * A writer holds seq odd for one memcpy(): odd and unchanged this long, it
 * died in an update.  One wait for all the registries of a process.
 */
#ifdef MMKIT_FUZZ_DEAD_WRITER_NS
/* The fuzz build (Makefile): an input whose seq is odd must not cost a second. */
#define DEAD_WRITER_NS		MMKIT_FUZZ_DEAD_WRITER_NS
#else
#define DEAD_WRITER_NS		1000000000ull
#endif
/* Entries read between two looks at seq (entries_pread()). */
#define READ_CHUNK		4096
/* Reads again at once (after sched_yield()) this many times before sleeping. */
#define BACKOFF_YIELDS		8
/*
 * Most entries read from another process, in all its registries, kept or
 * dropped as invalid: bounds the time a read takes and, with the chunked
 * reads (entries_pread()), the memory it allocates, whatever the headers
 * of a hostile process's many registries claim.
 */
#define REGISTRY_MAX_ENTRIES	(1u << 20)

/*
 * Keeps of the @n entries at @e those a well-behaved writer could have
 * stored, in place: each must start at or after *@last, the end of the
 * entry kept before it (in an earlier chunk too), which it moves on.
 * Returns how many.
 */
static size_t entries_sane(struct mmkit__name_range *e, size_t n, uint64_t *last)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (e[i].start >= e[i].end || e[i].start < *last ||
		    !memchr(e[i].name, '\0', sizeof(e[i].name)) || mmkit_name_valid(e[i].name))
			continue;
		*last = e[i].end;
		e[k++] = e[i];
	}
	return k;
}

/* Appends the @n entries at @e to @t, which has room for @room; grows it by doubling. */
static int entries_append(struct mmkit__name_table *t, size_t *room,
			  const struct mmkit__name_range *e, size_t n)
{
	struct mmkit__name_range *bigger;
	size_t want = *room ? *room : 64;

	if (!n)
		return 0;
	if (t->n + n > *room) {
		while (want < t->n + n)
			want *= 2;
		bigger = mmkit__reallocarray(t->e, want, sizeof(*t->e));
		if (!bigger)
			return -ENOMEM;
		t->e = bigger;
		*room = want;
	}
	memcpy(t->e + t->n, e, n * sizeof(*e));
	t->n += n;
	return 0;
}

/*
 * Waits before the @waits-th read again while a writer is in an update:
 * yields, then sleeps 2 µs doubling to 1 ms.
 */
static void backoff(unsigned int waits)
{
	unsigned int sleeps = waits - BACKOFF_YIELDS;

	if (waits <= BACKOFF_YIELDS)
		sys_yield();
	else
		sys_sleep_ns(1000ull << (sleeps < 10 ? sleeps : 10));
}

/*
 * What one call may spend reading the registries of a process, however
 * many it holds: a registry whose writer died mid-update (seq odd and
 * unchanged) is waited for until @dead_at, set DEAD_WRITER_NS after the
 * first one met, and no read goes on past @deadline.
 */
struct read_budget {
	uint64_t deadline;
	uint64_t dead_at;	/* 0 until a seq is met odd */
	int started;		/* a registry was read */
	int waited;		/* one made us wait (retries, a dead writer): see registry_read() */
	/*
	 * What every read goes through, READ_CHUNK entries: all a reader
	 * allocates whatever a header claims (what it keeps aside).
	 */
	struct mmkit__name_range *chunk;
};

/*
 * Read-locks byte @at of the registry at @fd, which goes with the
 * descriptor: asking its writer for a snapshot, or saying one is being
 * read (names.h).  Best effort: without it a reader only waits longer.
 */
static void registry_lock(int fd, off_t at)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1 };

	sys_fcntl(fd, F_OFD_SETLK, (unsigned long)&fl);
}

static void ask_snapshot(int fd, int *asked)
{
	if (!*asked)
		registry_lock(fd, MMKIT__REGISTRY_LOCK_ASK);
	*asked = 1;
}

/*
 * Reads the @n entries at @off of @fd, READ_CHUNK at a time through @b's
 * buffer, after each chunk checking that the 32-bit seq at @seq_at still
 * reads @seq: a read a writer tears is given up at once, not at its end.
 * Keeps in @t (malloc'ed, NULL when none) the entries that pass
 * entries_sane(), so that what it allocates grows with the entries kept,
 * never with what a header claims.  0, 1 if torn, -ENODATA if the file is
 * shorter than its header says, or -errno; @t is left empty but on 0.
 * *@done gets how many entries were read, whatever the outcome.
 */
static int entries_pread(int fd, size_t n, off_t off, off_t seq_at, uint32_t seq,
			 struct read_budget *b, struct mmkit__name_table *t, size_t *done)
{
	struct mmkit__name_range *smaller;
	size_t part = 0, room = 0;
	uint64_t last = 0;
	uint32_t now;
	ssize_t got;
	int ret = 0;

	*t = (struct mmkit__name_table){ NULL, 0 };
	if (n && !b->chunk) {
		b->chunk = mmkit__calloc(READ_CHUNK, sizeof(*b->chunk));
		if (!b->chunk)
			return -ENOMEM;
	}
	for (*done = 0; *done < n && !ret; *done += part) {
		part = n - *done < READ_CHUNK ? n - *done : READ_CHUNK;
		got = sys_pread(fd, b->chunk, part * sizeof(*b->chunk),
				off + (off_t)(*done * sizeof(*b->chunk)));
		/* The writer sizes the file before it writes a header: shorter, it is no registry. */
		if (got >= 0 && (size_t)got != part * sizeof(*b->chunk))
			got = -ENODATA;
		if (got < 0) {
			ret = (int)got;
			break;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		got = sys_pread(fd, &now, sizeof(now), seq_at);
		if (got < 0)
			ret = (int)got;
		else if (got != (ssize_t)sizeof(now) || now != seq)
			ret = 1;
		else
			ret = entries_append(t, &room, b->chunk, entries_sane(b->chunk, part, &last));
	}
	if (ret || !t->n) {
		free(t->e);
		t->e = NULL;
		t->n = 0;
	} else if (t->n < room) {
		smaller = mmkit__reallocarray(t->e, t->n, sizeof(*t->e));
		t->e = smaller ? smaller : t->e;
	}
	return ret;
}

/*
 * The snapshot of the registry at @fd whose header read @h, if the writer
 * made it since the reader first saw live seq @first (a copy of an older
 * state would undo names set since the read began) and it did not change
 * under the read: 0 and the entries kept into @t, -EAGAIN if there is
 * none such, -E2BIG if it holds more than @room entries, or -errno.
 */
static int snapshot_read(int fd, const struct mmkit__registry_header *h, uint32_t first,
			 size_t room, struct read_budget *b, struct mmkit__name_table *t,
			 size_t *done)
{
	int ret;

	if ((h->snap_seq & 1) || (int32_t)(h->snap_of - first) < 0 || h->snap_count > h->cap)
		return -EAGAIN;
	if (h->snap_count > room)
		return -E2BIG;
	registry_lock(fd, MMKIT__REGISTRY_LOCK_READING);
	ret = entries_pread(fd, h->snap_count,
			    (off_t)(sizeof(*h) + (uint64_t)h->cap * sizeof(*t->e)),
			    offsetof(struct mmkit__registry_header, snap_seq), h->snap_seq, b, t, done);
	return ret > 0 ? -EAGAIN : ret;
}

/*
 * Reads a registry of another process through @fd, reading again what a
 * writer tore: after a backoff while seq is odd, at once when seq changed
 * across the read.  Once a read was torn, or yields were not enough, it
 * asks the writer for a snapshot and takes it when one comes that is
 * recent enough; meanwhile it reads the live entries again only once seq
 * stays the same across a backoff.  A seq odd and unchanged past @b's
 * dead_at was left so by a writer that died in an update: the entries
 * are read as they are, and only those that pass entries_sane() kept (the
 * range being changed may show its old name or none).  Gives up with
 * -EAGAIN when it would retry past @b's deadline, or read a registry
 * after the first past it.  A file that is not a registry of this version
 * holds no names for us.  0 and the entries kept into @out, the number
 * read (what the header said, or as far as a file shorter than its
 * header goes) into *@read; -E2BIG if the header claims more than @room
 * entries; or -errno.
 */
static int registry_read(int fd, size_t room, struct read_budget *b,
			 struct mmkit__name_table *out, size_t *read)
{
	struct mmkit__registry_header h;
	uint32_t first = 0, odd_seq = 0, last_seq = 0;
	unsigned int waits = 0, odd_waits = 0;
	int dead, asked = 0, ret;
	size_t done = 0;
	uint64_t t0;
	ssize_t n;

	*out = (struct mmkit__name_table){ NULL, 0 };
	*read = 0;
	for (;;) {
		t0 = sys_monotonic_ns();
		n = sys_pread(fd, &h, sizeof(h), 0);
		if (n < 0)
			return (int)n;
		if ((size_t)n < sizeof(h) || h.magic != MMKIT__REGISTRY_MAGIC ||
		    h.version != MMKIT__REGISTRY_VERSION)
			return 0;
		if (h.count > room)
			return -E2BIG;
		if (h.count > h.cap)
			return 0;
		/*
		 * Retries stop at the deadline, and so do the reads of
		 * registries after the first once one made us wait: what the
		 * deadline bounds is waiting, however many registries a
		 * process holds.  Reading, what a hostile process can also
		 * make us do past it, the bound on entries read (kept or not)
		 * bounds, and a sound process on a slow machine (a first
		 * registry of 100,000 entries took over 2 s in an emulated
		 * guest running other tests) is not given up for it.  What a
		 * header alone rules out costs one pread.
		 */
		if ((waits || (b->started && b->waited)) && t0 > b->deadline)
			return -EAGAIN;
		b->started = 1;
		b->waited |= waits > 0;
		if (!waits)
			first = h.seq;
		if (asked) {
			ret = snapshot_read(fd, &h, first, room, b, out, &done);
			if (!ret || ret == -ENODATA)
				*read = done;
			if (ret == -ENODATA)
				return 0;
			if (ret != -EAGAIN)
				return ret;
			/*
			 * While the writer goes on, wait for its snapshot: a
			 * read of the live entries would be torn again.
			 */
			if (h.seq != last_seq) {
				last_seq = h.seq;
				backoff(++waits);
				continue;
			}
		}
		dead = 0;
		if (h.seq & 1) {
			if (!b->dead_at)
				b->dead_at = t0 + DEAD_WRITER_NS;
			if (h.seq != odd_seq) {
				odd_seq = h.seq;
				odd_waits = 0;
			}
			/* Past the budget, a few yields tell a live writer from a dead one. */
			dead = t0 >= b->dead_at && odd_waits > BACKOFF_YIELDS;
			if (!dead) {
				odd_waits++;
				/*
				 * A writer that starts its next change as soon as
				 * it ends one keeps seq odd nearly all the time:
				 * once yielding was not enough, it is asked for a
				 * snapshot.
				 */
				if (++waits > BACKOFF_YIELDS)
					ask_snapshot(fd, &asked);
				backoff(waits);
				continue;
			}
		}
		ret = entries_pread(fd, h.count, sizeof(h), offsetof(struct mmkit__registry_header, seq),
				    h.seq, b, out, &done);
		if (!ret || ret == -ENODATA)
			*read = done;
		if (ret == -ENODATA)
			return 0;
		if (ret < 0)
			return ret;
		if (ret) {
			waits++;
			ask_snapshot(fd, &asked);
			last_seq = h.seq;
			continue;
		}
		return 0;
	}
}

/*
 * The registry files read so far, by (dev, ino): one registry reached
 * through many descriptors (dup(), or a hostile process's thousands) is
 * read once.  An open-addressing hash set, at most half full.
 */
struct file_id {
	dev_t dev;
	ino_t ino;
	int used;
};

struct seen {
	struct file_id *ids;
	size_t cap;		/* a power of two, or 0 */
	size_t n;
};

/* The slot holding @id in @ids of @cap, or the empty one where it would go. */
static struct file_id *seen_slot(struct file_id *ids, size_t cap, dev_t dev, ino_t ino)
{
	size_t i = (size_t)((ino ^ ((uint64_t)dev << 32)) * 0x9e3779b97f4a7c15ull >> 17);

	for (i &= cap - 1; ids[i].used; i = (i + 1) & (cap - 1)) {
		if (ids[i].dev == dev && ids[i].ino == ino)
			break;
	}
	return &ids[i];
}

/* Adds the file of @st to @s: 1 if it is new, 0 if it was there, or -ENOMEM. */
static int seen_add(struct seen *s, const struct stat *st)
{
	struct file_id *ids, *slot;
	size_t cap, i;

	if (2 * (s->n + 1) > s->cap) {
		cap = s->cap ? 2 * s->cap : 16;
		ids = mmkit__calloc(cap, sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		for (i = 0; i < s->cap; i++) {
			if (s->ids[i].used)
				*seen_slot(ids, cap, s->ids[i].dev, s->ids[i].ino) = s->ids[i];
		}
		free(s->ids);
		s->ids = ids;
		s->cap = cap;
	}
	slot = seen_slot(s->ids, s->cap, st->st_dev, st->st_ino);
	if (slot->used)
		return 0;
	slot->dev = st->st_dev;
	slot->ino = st->st_ino;
	slot->used = 1;
	s->n++;
	return 1;
}

/* An entry of one of the registries being merged; the later registry wins. */
struct ref {
	const struct mmkit__name_range *e;
	size_t reg;
};

static int ref_by_start(const void *a, const void *b)
{
	uint64_t x = ((const struct ref *)a)->e->start, y = ((const struct ref *)b)->e->start;

	return (x > y) - (x < y);
}

/* A max-heap of refs by registry: the entry in force is on top. */
static void heap_push(struct ref *h, size_t *n, struct ref r)
{
	size_t i = (*n)++, up;

	for (; i && h[up = (i - 1) / 2].reg < r.reg; i = up)
		h[i] = h[up];
	h[i] = r;
}

static void heap_pop(struct ref *h, size_t *n)
{
	struct ref last = h[--*n];
	size_t i = 0, c;

	for (; (c = 2 * i + 1) < *n; i = c) {
		if (c + 1 < *n && h[c + 1].reg > h[c].reg)
			c++;
		if (h[c].reg <= last.reg)
			break;
		h[i] = h[c];
	}
	h[i] = last;
}

/* Appends [start, end) @name to @out, joining it to an equal neighbour. */
static void out_add(struct mmkit__name_range *out, size_t *k, uint64_t start, uint64_t end,
		    const char *name)
{
	struct mmkit__name_range *last = *k ? &out[*k - 1] : NULL;

	if (last && last->end == start && !strcmp(last->name, name)) {
		last->end = end;
		return;
	}
	out[*k].start = start;
	out[*k].end = end;
	memcpy(out[*k].name, name, sizeof(out[*k].name));
	(*k)++;
}

/*
 * Merges the @nreg registries of @regs into *@out: at each address the
 * name of the last registry naming it, equal neighbours joined (what
 * setting each entry over the ones before with mmkit__ranges_set() gives).
 * One sweep over the entries sorted by start, the ones covering the
 * current address in a heap: O(n log n).  Takes the registries' entries
 * (freed, or the one registry's returned as they are).
 */
static ssize_t tables_merge(struct mmkit__name_table *regs, size_t nreg,
			    struct mmkit__name_range **out)
{
	struct mmkit__name_range *res = NULL;
	struct ref *refs = NULL, *heap = NULL;
	size_t total = 0, i, j, k = 0, hn = 0;
	uint64_t pos = 0, next;
	ssize_t ret = 0;

	if (nreg == 1) {
		*out = regs[0].e;
		return (ssize_t)regs[0].n;
	}
	for (i = 0; i < nreg; i++)
		total += regs[i].n;
	if (!total)
		goto out;
	refs = mmkit__calloc(total, sizeof(*refs));
	heap = mmkit__calloc(total, sizeof(*heap));
	/* Each step emits at most one range, and ends an entry or starts one. */
	res = mmkit__calloc(2 * total, sizeof(*res));
	if (!refs || !heap || !res) {
		free(res);
		res = NULL;
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nreg; i++) {
		for (j = 0; j < regs[i].n; j++)
			refs[k++] = (struct ref){ &regs[i].e[j], i };
	}
	qsort(refs, total, sizeof(*refs), ref_by_start);
	for (i = 0, k = 0; i < total || hn;) {
		if (!hn)
			pos = refs[i].e->start;
		while (i < total && refs[i].e->start <= pos)
			heap_push(heap, &hn, refs[i++]);
		while (hn && heap[0].e->end <= pos)
			heap_pop(heap, &hn);
		if (!hn)
			continue;
		next = heap[0].e->end;
		if (i < total && refs[i].e->start < next)
			next = refs[i].e->start;
		out_add(res, &k, pos, next, heap[0].e->name);
		pos = next;
	}
	ret = (ssize_t)k;
out:
	free(refs);
	free(heap);
	for (i = 0; i < nreg; i++)
		free(regs[i].e);
	*out = res;
	return ret;
}

/*
 * Opens descriptor @name of /proc/PID/fd (@dfd) for reading if it is a
 * registry not read yet (@seen), counting in @stats what it skips.
 *
 * A registry is a memfd: an unlinked regular file on the kernel's internal
 * shmem mount, where no open or read can block.  The link alone proves
 * nothing: any file unlinked from the path "/memfd:mmkit-names" reads the
 * same (a tmpfs mounted on / of another mount namespace included), and
 * opening a FIFO there would wait for a writer forever, a file of a FUSE
 * or NFS mount for its server.  So the file is opened O_PATH, which opens
 * nothing behind it, and must be on the very device our own memfds are
 * (one internal mount serves every memfd of the system, whatever the
 * namespace; a tmpfs anyone mounts is another device); only then is it
 * reopened through /proc/self/fd.
 *
 * Returns the descriptor, -ENOENT if there is nothing to read (the target
 * closed it meanwhile, a decoy, a file read already), or -errno.
 */
static dev_t memfd_dev_cached;
static int memfd_dev_known;

/*
 * The device of every memfd, asked of a memfd of our own.  Only the
 * answer is remembered, not a failure to ask (out of descriptors): that
 * would fail every later read of the process.  Racing first callers ask
 * alike and store the same answer.
 */
static int memfd_device(dev_t *dev)
{
	struct stat st;
	int fd, ret;

	if (__atomic_load_n(&memfd_dev_known, __ATOMIC_ACQUIRE)) {
		*dev = __atomic_load_n(&memfd_dev_cached, __ATOMIC_RELAXED);
		return 0;
	}
	fd = sys_memfd_create("mmkit-probe", MFD_CLOEXEC);
	if (fd < 0)
		return fd;
	ret = sys_fstat(fd, &st);
	sys_close(fd);
	if (ret)
		return ret;
	*dev = st.st_dev;
	__atomic_store_n(&memfd_dev_cached, st.st_dev, __ATOMIC_RELAXED);
	__atomic_store_n(&memfd_dev_known, 1, __ATOMIC_RELEASE);
	return 0;
}

static int registry_open(int dfd, const char *name, struct seen *seen,
			 struct mmkit__names_stats *stats)
{
	struct stat st;
	char self[32];
	int path_fd, fd, ret;
	dev_t memfd_dev;

	ret = memfd_device(&memfd_dev);
	if (ret)
		return ret;
	path_fd = sys_openat(dfd, name, O_PATH | O_CLOEXEC, 0);
	if (path_fd < 0)
		return path_fd;
	ret = sys_fstat(path_fd, &st);
	if (!ret && (!S_ISREG(st.st_mode) || st.st_nlink || st.st_dev != memfd_dev)) {
		stats->decoys++;
		ret = -ENOENT;
	}
	if (!ret) {
		ret = seen_add(seen, &st);
		if (!ret) {
			stats->duplicates++;
			ret = -ENOENT;
		}
	}
	if (ret < 0) {
		sys_close(path_fd);
		return ret;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	fd = sys_open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	sys_close(path_fd);
	return fd;
}

/* What reading the registries of one process gathers, descriptor by descriptor. */
struct pid_read {
	struct seen seen;
	struct mmkit__name_table *regs;
	size_t entries;		/* read so far (kept or not), at most REGISTRY_MAX_ENTRIES */
	struct mmkit__names_stats *stats;
	struct read_budget budget;
};

static int read_one(int fd_dir, const char *name, void *arg)
{
	struct pid_read *r = arg;
	struct mmkit__name_table *bigger, t;
	size_t read;
	int fd, ret;

	fd = registry_open(fd_dir, name, &r->seen, r->stats);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	/* seen holds every registry opened: regs has room for as many. */
	bigger = mmkit__reallocarray(r->regs, r->seen.n, sizeof(*r->regs));
	if (!bigger) {
		sys_close(fd);
		return -ENOMEM;
	}
	r->regs = bigger;
	ret = registry_read(fd, REGISTRY_MAX_ENTRIES - r->entries, &r->budget, &t, &read);
	sys_close(fd);
	if (ret == -E2BIG) {
		r->stats->too_big++;
		return 0;
	}
	if (ret)
		return ret;
	/* Entries dropped as invalid cost the read all the same: they count. */
	r->entries += read;
	r->regs[r->stats->registries++] = t;
	return 0;
}

/*
 * The registries of process @pid: normally one, but two copies of libmmkit
 * (static and shared) in one process each keep theirs.
 */
static ssize_t registry_read_pid(pid_t pid, int procfd, struct mmkit__name_range **out,
				 struct mmkit__names_stats *stats)
{
	struct pid_read r = { { NULL, 0, 0 }, NULL, 0, stats,
			      { sys_monotonic_ns() + MMKIT__REGISTRY_READ_DEADLINE_NS, 0, 0, 0, NULL } };
	char path[64];
	ssize_t got = 0;
	int dfd, ret;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dfd = procfd >= 0 ? sys_openat(procfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) :
	      sys_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dfd < 0)
		return dfd;
	ret = mmkit__fds_linked_to(dfd, MMKIT__REGISTRY_LINK, read_one, &r);
	sys_close(dfd);
	free(r.seen.ids);
	free(r.budget.chunk);
	if (!ret) {
		got = tables_merge(r.regs, stats->registries, out);
	} else {
		for (i = 0; i < stats->registries; i++)
			free(r.regs[i].e);
	}
	free(r.regs);
	return ret ? ret : got;
}

ssize_t mmkit__names_read_fd(int fd, size_t max, struct mmkit__name_range **out)
{
	struct read_budget b = { .deadline = sys_monotonic_ns() + MMKIT__REGISTRY_READ_DEADLINE_NS };
	struct mmkit__name_table t = { NULL, 0 };
	size_t read;
	int ret;

	*out = NULL;
	ret = registry_read(fd, max < REGISTRY_MAX_ENTRIES ? max : REGISTRY_MAX_ENTRIES, &b, &t, &read);
	free(b.chunk);
	if (ret)
		return ret;
	*out = t.e;
	return (ssize_t)t.n;
}

ssize_t mmkit__names_read(pid_t pid, int procfd, struct mmkit__name_range **out,
			  struct mmkit__names_stats *stats)
{
	*out = NULL;
	memset(stats, 0, sizeof(*stats));
	/* Where the kernel names VMAs, a registry may still name reference pages. */
	/* Through /proc like any reader when given a directory; else under our lock. */
	if (procfd >= 0 || (pid && pid != sys_getpid()))
		return registry_read_pid(pid, procfd, out, stats);
	return mmkit__registry_copy(out);
}

ssize_t mmkit__names_get(pid_t pid, int procfd, struct mmkit__name_range **out)
{
	struct mmkit__names_stats stats;

	return mmkit__names_read(pid, procfd, out, &stats);
}
