// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_regions(): the mappings of a process from /proc/PID/smaps, with the
 * names of its mmkit registry (see names.c) laid over its anonymous memory.
 *
 * A registry name applies only where the process has anonymous memory now
 * (private, or MAP_SHARED | MAP_ANONYMOUS), never to files, [heap], [stack]
 * or [vdso]: the kernel shows [anon:NAME] in the same places only.  The one
 * extension: reference pages of a file (the memfd backend's pattern file,
 * refpage.ko's descriptor, by the paths they show), which the kernel
 * refuses to name and mmkit_name() names in the registry, also where the
 * kernel names VMAs (there the registry names nothing else).  A VMA
 * partly covered by names becomes several regions.  Their Size is exact;
 * Rss and Swap of each part are counted from /proc/PID/pagemap (bit 63:
 * present, bit 62: swapped; readable without privilege, the PFNs that need
 * CAP_SYS_ADMIN are not used).
 *
 * A VMA may be terabytes of MAP_NORESERVE with a few pages in it, and
 * pagemap has an entry for every page: the cost must follow what is
 * resident, not the span.  A VMA whose Rss and Swap are 0 is not looked at,
 * and the count stops as soon as the VMA's Rss and Swap pages (from smaps)
 * have all been found.  From Linux 6.7 the pages are found by the kernel's
 * PAGEMAP_SCAN, which skips unpopulated page tables whole and leaves the
 * zero page out as smaps' Rss does: the cost is bounded by the populated
 * page tables.  Before 6.7, pagemap is read entry by entry up to the VMA's
 * last resident page, 8 bytes per page of span (a page at the end of a
 * terabyte costs the whole read), and a page only ever read maps the
 * shared zero page, which pagemap shows present and Rss does not count: the
 * count may then stop short and give a later part's pages to earlier parts
 * (the parts still add up to the VMA).
 *
 * Pss, the Shared_ and Private_ figures, Referenced, Anonymous and Locked
 * exist only per VMA, so each part gets the VMA's value in proportion to its share of
 * the VMA's Rss.  If pagemap cannot be read, every value is shared out in
 * proportion to size instead.  Either way the parts add up exactly to the
 * VMA's smaps values.  Every figure but Pss is whole pages, as in smaps:
 * rounded by largest remainder, and the four Shared_/Private_ figures are
 * rounded together so that they add up to the part's Rss as they add up
 * to the VMA's (which pages of a part are dirty or shared is not known:
 * pagemap has no dirty bit, and its "exclusively mapped" bit is not in
 * PAGEMAP_SCAN's categories, so reading it would cost 8 bytes per page of
 * span again).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "procfs.h"

/* The values of a VMA or a part of one; the last two are pagemap page counts. */
enum {
	V_SIZE, V_RSS, V_PSS, V_PRIVATE_DIRTY, V_SWAP, V_LOCKED,
	V_SHARED_CLEAN, V_SHARED_DIRTY, V_PRIVATE_CLEAN, V_REFERENCED, V_ANONYMOUS,
	V_PRESENT, V_SWAPPED, V_COUNT
};

/* A key and its length. */
#define SMAPS_KEY(k)	k, sizeof(k) - 1

static const struct {
	const char *key;
	size_t len;
	int v;
	unsigned int have;		/* its MMKIT_REGION_HAVE_ bit, for those that have one */
} smaps_keys[] = {
	{ SMAPS_KEY("Size"), V_SIZE, 0 },
	{ SMAPS_KEY("Rss"), V_RSS, 0 },
	{ SMAPS_KEY("Pss"), V_PSS, MMKIT_REGION_HAVE_PSS },
	{ SMAPS_KEY("Private_Dirty"), V_PRIVATE_DIRTY, 0 },
	{ SMAPS_KEY("Swap"), V_SWAP, MMKIT_REGION_HAVE_SWAP },
	{ SMAPS_KEY("Locked"), V_LOCKED, 0 },
	{ SMAPS_KEY("Shared_Clean"), V_SHARED_CLEAN, 0 },
	{ SMAPS_KEY("Shared_Dirty"), V_SHARED_DIRTY, 0 },
	{ SMAPS_KEY("Private_Clean"), V_PRIVATE_CLEAN, 0 },
	{ SMAPS_KEY("Referenced"), V_REFERENCED, 0 },
	{ SMAPS_KEY("Anonymous"), V_ANONYMOUS, 0 },
};

struct part {
	uint64_t start;
	uint64_t end;
	const char *name;		/* registry name, NULL for none */
	unsigned long long v[V_COUNT];
	unsigned long long rem;		/* share()'s rounding remainder */
};

struct walk {
	int dirfd;			/* /proc/self or /proc/PID */
	mmkit_region_fn fn;
	void *arg;
	struct mmkit__name_range *names;
	size_t nnames;
	size_t next;			/* first name that may reach the current VMA */
	struct part *parts;		/* room for 2 * nnames + 1 */
	int pagemap_fd;			/* -1 until needed */
	int pagemap_failed;
	int pagemap_scan;		/* PAGEMAP_SCAN: 1 works, -1 absent, 0 not yet tried */
	struct part *counting;		/* the part pages are being counted for */
	unsigned long long want_present;	/* the VMA's Rss and Swap, in pages */
	unsigned long long want_swapped;
	unsigned long long found_present;	/* counted so far in the VMA's parts */
	unsigned long long found_swapped;
	int stopped;			/* fn returned non-zero: its value is the answer */
	unsigned int have;		/* MMKIT_REGION_HAVE_ bits of the VMA being read */
	struct mmkit_region r;
	struct mmkit__vma vma;		/* the VMA being read, its path in path */
	char path[PATH_MAX + 32];
	struct mmkit__lines smaps;
};

static int path_starts(const struct mmkit__vma *v, const char *s)
{
	size_t n = strlen(s);

	return v->path_len >= n && !memcmp(v->path, s, n);
}

/* Kind and name of a VMA as the kernel shows it. */
static void classify(const struct mmkit__vma *v, struct mmkit_region *r)
{
	size_t skip = 0, len = v->path_len;

	r->kind = MMKIT_REGION_FILE;
	if (!len) {
		r->kind = MMKIT_REGION_ANON;
	} else if (path_starts(v, "[anon:") && v->path[len - 1] == ']') {
		r->kind = MMKIT_REGION_ANON_NAMED;
		skip = 6;
	} else if (path_starts(v, "[anon_shmem:") && v->path[len - 1] == ']') {
		r->kind = MMKIT_REGION_ANON_NAMED;
		skip = 12;
	} else if (mmkit__vma_path_is(v, "[heap]")) {
		r->kind = MMKIT_REGION_HEAP;
	} else if (mmkit__vma_path_is(v, "[stack]") || path_starts(v, "[stack:")) {
		r->kind = MMKIT_REGION_STACK;
	} else if (v->path[0] == '[') {
		r->kind = MMKIT_REGION_SPECIAL;
	}
	if (skip)
		len -= skip + 1;
	if (len >= sizeof(r->name))
		len = sizeof(r->name) - 1;
	memcpy(r->name, v->path + skip, len);
	r->name[len] = '\0';
}

/* The "Key:   N kB" lines of smaps that matter here, in bytes. */
static void smaps_field(struct walk *w, const char *line, const char *eol, unsigned long long *v)
{
	/* Most of smaps' ~25 lines a VMA are others: their key is compared once. */
	const char *colon = memchr(line, ':', (size_t)(eol - line));
	size_t i, n = colon ? (size_t)(colon - line) : 0;

	for (i = 0; n && i < sizeof(smaps_keys) / sizeof(smaps_keys[0]); i++) {
		if (smaps_keys[i].len != n || memcmp(line, smaps_keys[i].key, n))
			continue;
		if (mmkit__kb_line(line, eol, smaps_keys[i].key, &v[smaps_keys[i].v])) {
			w->have |= smaps_keys[i].have;
			return;
		}
	}
}

/*
 * floor(a * b / c) for b <= c without overflow, and in *@rem what is left
 * over (a * b % c): exact while c < 2^32 (pages or bytes of one VMA part),
 * b and c scaled down together beyond.
 */
static unsigned long long mul_div(unsigned long long a, unsigned long long b,
				  unsigned long long c, unsigned long long *rem)
{
	while (c >> 32) {
		b >>= 1;
		c >>= 1;
	}
	*rem = a % c * b % c;
	return a / c * b + a % c * b / c;
}

/*
 * Shares @total out as p[].v[@out] in proportion to p[].v[@w] (to size if
 * those are all 0), in whole @unit: each part its floor, the units left one
 * each to the largest remainders, bytes short of a unit (smaps shows none)
 * to the heaviest part.
 */
static void share(struct part *p, size_t n, unsigned long long total, int w, int out,
		  unsigned long long unit)
{
	unsigned long long sum = 0, given = 0, units = total / unit;
	size_t i, best, heaviest = 0;

	for (i = 0; i < n; i++)
		sum += p[i].v[w];
	if (!sum) {
		w = V_SIZE;
		for (i = 0; i < n; i++)
			sum += p[i].v[w];
	}
	for (i = 0; i < n; i++) {
		p[i].v[out] = mul_div(units, p[i].v[w], sum, &p[i].rem);
		given += p[i].v[out];
		if (p[i].v[w] > p[heaviest].v[w])
			heaviest = i;
	}
	/* Fewer than n left, unless mul_div scaled: then the heaviest takes the rest. */
	for (; given < units; given++) {
		for (i = 0, best = heaviest; i < n; i++)
			if (p[i].rem > p[best].rem)
				best = i;
		p[best].v[out]++;
		p[best].rem = 0;
	}
	for (i = 0; i < n; i++)
		p[i].v[out] *= unit;
	p[heaviest].v[out] += total % unit;
}

static const int rss_kinds[] = {
	V_SHARED_CLEAN, V_SHARED_DIRTY, V_PRIVATE_CLEAN, V_PRIVATE_DIRTY
};
#define NKINDS (sizeof(rss_kinds) / sizeof(rss_kinds[0]))

/*
 * Shares the four Shared_/Private_ figures of @vma (whose sum is its Rss)
 * out over the parts together, in whole pages, so that each part's four add
 * up to its Rss: each figure's floor in proportion to the part's Rss, then
 * part by part its missing pages one each to the figures with the largest
 * remainders of those the floors left short over the VMA.  Where the
 * figures do not add up to Rss or are not whole pages, each is shared out
 * on its own.
 */
static void share_rss_kinds(struct part *p, size_t n, const struct part *vma)
{
	unsigned long long ps = sys_page_size(), rss = 0, sum = 0, short_by[NKINDS], rem[NKINDS];
	unsigned long long total[NKINDS], row;
	size_t i, k, best;

	for (k = 0; k < NKINDS; k++) {
		total[k] = short_by[k] = vma->v[rss_kinds[k]] / ps;
		sum += total[k];
		if (vma->v[rss_kinds[k]] % ps)
			sum = ~0ULL;
	}
	for (i = 0; i < n; i++)
		rss += p[i].v[V_RSS] / ps;
	if (!sum || sum != rss) {
		for (k = 0; k < NKINDS; k++)
			share(p, n, vma->v[rss_kinds[k]], V_RSS, rss_kinds[k], ps);
		return;
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < NKINDS; k++) {
			p[i].v[rss_kinds[k]] = mul_div(total[k], p[i].v[V_RSS] / ps, sum, &rem[k]);
			short_by[k] -= p[i].v[rss_kinds[k]];
		}
	/* short_by[] adds up to the pages the parts miss: a figure short is there. */
	for (i = 0; i < n; i++) {
		row = p[i].v[V_RSS] / ps;
		for (k = 0; k < NKINDS; k++)
			mul_div(total[k], row, sum, &rem[k]);
		for (k = 0; k < NKINDS; k++)
			row -= p[i].v[rss_kinds[k]];
		for (; row; row--) {
			for (k = 0, best = NKINDS; k < NKINDS; k++)
				if (short_by[k] && (best == NKINDS || rem[k] > rem[best]))
					best = k;
			p[i].v[rss_kinds[best]]++;
			short_by[best]--;
			rem[best] = 0;
		}
		for (k = 0; k < NKINDS; k++)
			p[i].v[rss_kinds[k]] *= ps;
	}
}

static int all_found(const struct walk *w)
{
	return w->found_present >= w->want_present && w->found_swapped >= w->want_swapped;
}

/* Counts a run into the current part; 1 (stop) once the VMA's pages are all found. */
static int count_run(uint64_t start, uint64_t end, enum mmkit__page_state state, void *arg)
{
	struct walk *w = arg;
	struct part *p = w->counting;
	uint64_t pages = (end - start) / sys_page_size();

	if (state == MMKIT__PAGE_PRESENT) {
		p->v[V_PRESENT] += pages;
		w->found_present += pages;
	} else if (state == MMKIT__PAGE_SWAPPED) {
		p->v[V_SWAPPED] += pages;
		w->found_swapped += pages;
	}
	return all_found(w);
}

/*
 * Counts the present and swapped pages of @p from pagemap: 1 once the
 * VMA's pages are all found, 0 if more may follow, or -errno.
 */
static int pagemap_count(struct walk *w, struct part *p)
{
	int ret;

	if (w->pagemap_fd < 0) {
		w->pagemap_fd = sys_openat(w->dirfd, "pagemap", O_RDONLY | O_CLOEXEC, 0);
		if (w->pagemap_fd < 0)
			return w->pagemap_fd;
	}
	w->counting = p;
	if (w->pagemap_scan >= 0) {
		ret = mmkit__pagemap_scan(w->pagemap_fd, p->start, p->end, count_run, w);
		/* The first call tells whether the kernel has it; nothing was counted then. */
		if (w->pagemap_scan || (ret != -ENOTTY && ret != -EINVAL)) {
			w->pagemap_scan = 1;
			return ret;
		}
		w->pagemap_scan = -1;
	}
	return mmkit__pagemap_walk(w->pagemap_fd, p->start, p->end, count_run, w);
}

static void add_part(struct walk *w, size_t *n, uint64_t start, uint64_t end, const char *name)
{
	struct part *p = &w->parts[(*n)++];

	memset(p, 0, sizeof(*p));
	p->start = start;
	p->end = end;
	p->name = name;
	p->v[V_SIZE] = end - start;
}

/* Cuts @v where registry names begin and end; 0 parts if no name touches it. */
static size_t split(struct walk *w, const struct mmkit__vma *v)
{
	const struct mmkit__name_range *e = w->names;
	uint64_t cur = v->start, s, t;
	size_t i, n = 0;

	while (w->next < w->nnames && e[w->next].end <= v->start)
		w->next++;
	for (i = w->next; i < w->nnames && e[i].start < v->end; i++) {
		s = e[i].start > v->start ? e[i].start : v->start;
		t = e[i].end < v->end ? e[i].end : v->end;
		if (cur < s)
			add_part(w, &n, cur, s, NULL);
		add_part(w, &n, s, t, e[i].name);
		cur = t;
	}
	if (n && cur < v->end)
		add_part(w, &n, cur, v->end, NULL);
	return n;
}

static int emit(struct walk *w, const struct mmkit__vma *v, const struct part *p)
{
	struct mmkit_region *r = &w->r;

	classify(v, r);
	if (p->name) {
		r->kind = MMKIT_REGION_REGISTRY;
		snprintf(r->name, sizeof(r->name), "%s", p->name);
	}
	r->start = p->start;
	r->end = p->end;
	memcpy(r->perms, v->perms, sizeof(r->perms));
	r->size = p->v[V_SIZE];
	r->rss = p->v[V_RSS];
	r->pss = p->v[V_PSS];
	r->private_dirty = p->v[V_PRIVATE_DIRTY];
	r->swap = p->v[V_SWAP];
	r->locked = p->v[V_LOCKED];
	r->shared_clean = p->v[V_SHARED_CLEAN];
	r->shared_dirty = p->v[V_SHARED_DIRTY];
	r->private_clean = p->v[V_PRIVATE_CLEAN];
	r->referenced = p->v[V_REFERENCED];
	r->anonymous = p->v[V_ANONYMOUS];
	r->have = w->have;
	r->flags = mmkit__vma_refpage(v) ? MMKIT_REGION_REFPAGE : 0;
	w->stopped = w->fn(r, w->arg);
	return w->stopped;
}

/*
 * Whether registry names apply to @v: anonymous memory (memfds on 6.2+
 * too: mmkit__vma_memfd()) where the kernel does not name VMAs (where it
 * does, a name the registry still has for anonymous memory is out of
 * date), reference pages of a file always.
 */
static int registry_applies(const struct mmkit__vma *v)
{
	if (mmkit__vma_refpage(v))
		return 1;
	return mmkit__kernel_names() &&
	       (!v->path_len || mmkit__vma_anon_shmem(v) || mmkit__vma_memfd(v));
}

static int emit_vma(struct walk *w, const struct mmkit__vma *v, struct part *vma)
{
	unsigned long long ps = sys_page_size();
	size_t n = 0, i;
	int ret = 0, done;

	if (w->nnames && registry_applies(v))
		n = split(w, v);
	vma->start = v->start;
	vma->end = v->end;
	vma->v[V_SIZE] = v->end - v->start;
	if (n == 1)
		vma->name = w->parts[0].name;
	if (n <= 1)
		return emit(w, v, vma);
	w->want_present = vma->v[V_RSS] / sys_page_size();
	w->want_swapped = vma->v[V_SWAP] / sys_page_size();
	w->found_present = w->found_swapped = 0;
	/* Parts after the VMA's last resident or swapped page are not read. */
	for (i = 0, done = all_found(w); i < n && !done && !w->pagemap_failed; i++) {
		ret = pagemap_count(w, &w->parts[i]);
		w->pagemap_failed = ret < 0;
		done = ret > 0;
	}
	ret = 0;
	for (i = 0; i < n && w->pagemap_failed; i++)
		w->parts[i].v[V_PRESENT] = w->parts[i].v[V_SWAPPED] = 0;
	share(w->parts, n, vma->v[V_RSS], V_PRESENT, V_RSS, ps);
	share(w->parts, n, vma->v[V_SWAP], V_SWAPPED, V_SWAP, ps);
	share(w->parts, n, vma->v[V_PSS], V_RSS, V_PSS, 1);
	share_rss_kinds(w->parts, n, vma);
	share(w->parts, n, vma->v[V_LOCKED], V_RSS, V_LOCKED, ps);
	share(w->parts, n, vma->v[V_REFERENCED], V_RSS, V_REFERENCED, ps);
	share(w->parts, n, vma->v[V_ANONYMOUS], V_RSS, V_ANONYMOUS, ps);
	for (i = 0; i < n && !ret; i++)
		ret = emit(w, v, &w->parts[i]);
	return ret;
}

static int walk_smaps(struct walk *w, struct mmkit__lines *smaps)
{
	struct mmkit__vma v, *cur = &w->vma;
	struct part vma;
	const char *line, *eol;
	int have = 0, ret = 0, more = 0;

	while (!ret && (more = mmkit__lines_next(smaps, &line, &eol)) == 1) {
		if (mmkit__vma_parse(line, eol, &v)) {
			if (have)
				smaps_field(w, line, eol, vma.v);
			continue;
		}
		if (have)
			ret = emit_vma(w, cur, &vma);
		/* The line's bytes go with the next read: keep a copy of the path. */
		*cur = v;
		cur->path_len = v.path_len < sizeof(w->path) ? v.path_len : sizeof(w->path);
		memcpy(w->path, v.path, cur->path_len);
		cur->path = w->path;
		memset(&vma, 0, sizeof(vma));
		w->have = 0;
		have = 1;
	}
	if (!ret && more < 0)
		ret = more;
	if (!ret && have)
		ret = emit_vma(w, cur, &vma);
	return ret;
}

static void walk_free(struct walk *w)
{
	if (w->pagemap_fd >= 0)
		sys_close(w->pagemap_fd);
	if (w->dirfd >= 0)
		sys_close(w->dirfd);
	free(w->parts);
	free(w->names);
	free(w);
}

/*
 * A thread cancelled in a callback (which runs with the caller's
 * cancellation state; nothing else in the walk is a cancellation point)
 * takes the walk's descriptors and memory with it, as dl_iterate_phdr(3)
 * its lock: each cancelled walk left two descriptors open.
 */
static void walk_cancelled(void *arg)
{
	struct walk *w = arg;

	mmkit__lines_close(&w->smaps);
	walk_free(w);
}

/*
 * The walk, with walk_cancelled() for a cancellation.  Not instrumented by
 * ASan: glibc's unwind of a cancellation leaves the redzones of the frames
 * it skipped poisoned, and ASan's bookkeeping before the noreturn call
 * that goes on unwinding (__pthread_unwind_next) aborts on them.
 */
static int __attribute__((no_sanitize_address)) walk_cancellable(struct walk *w)
{
	int ret;

	pthread_cleanup_push(walk_cancelled, w);
	ret = walk_smaps(w, &w->smaps);
	pthread_cleanup_pop(0);
	return ret;
}

/* *@stopped: whether the answer is @fn's value, not the walk's. */
static int read_regions(pid_t pid, mmkit_region_fn fn, void *arg, int *stopped)
{
	char dir[32];
	struct walk *w;
	ssize_t n;
	int ret;

	if (pid < 0 || !fn) {
		if (pid < 0)
			mmkit__error_detail(-EINVAL, "pid %d is negative (0 is this process)", (int)pid);
		return -EINVAL;
	}
	w = mmkit__calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->arg = arg;
	w->pagemap_fd = -1;
	if (pid)
		snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	else
		snprintf(dir, sizeof(dir), "/proc/self");
	w->dirfd = sys_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	n = w->dirfd < 0 ? w->dirfd : mmkit__lines_open(&w->smaps, w->dirfd, "smaps");
	if (n >= 0) {
		n = mmkit__names_get(pid, pid ? w->dirfd : -1, &w->names);
		if (n < 0)
			mmkit__lines_close(&w->smaps);
	}
	if (n > 0) {
		w->nnames = (size_t)n;
		w->parts = mmkit__calloc(2 * w->nnames + 1, sizeof(*w->parts));
		if (!w->parts) {
			mmkit__lines_close(&w->smaps);
			n = -ENOMEM;
		}
	}
	/* The process is gone (or never was). */
	if (n == -ENOENT && pid)
		n = -ESRCH;
	if (n >= 0) {
		ret = walk_cancellable(w);
		mmkit__lines_close(&w->smaps);
	} else {
		ret = (int)n;
		mmkit__error_detail(ret, "reading the mappings of %s: %s", dir, strerrordesc_np(-ret));
	}
	*stopped = w->stopped;
	walk_free(w);
	return ret;
}

static const char *const kind_names[] = {
	[MMKIT_REGION_ANON]		= "anon",
	[MMKIT_REGION_ANON_NAMED]	= "anon_named",
	[MMKIT_REGION_REGISTRY]		= "registry",
	[MMKIT_REGION_FILE]		= "file",
	[MMKIT_REGION_HEAP]		= "heap",
	[MMKIT_REGION_STACK]		= "stack",
	[MMKIT_REGION_SPECIAL]		= "special",
};

MMKIT_EXPORT const char *mmkit_region_kind_name(enum mmkit_region_kind kind)
{
	if ((unsigned int)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
		return NULL;
	return kind_names[kind];
}

/* A non-zero value of @fn is passed on as it is, leaving the last error alone. */
MMKIT_EXPORT int mmkit_regions(pid_t pid, mmkit_region_fn fn, void *arg)
{
	int stopped = 0;
	int ret;

	mmkit__error_begin();
	ret = read_regions(pid, fn, arg, &stopped);
	return stopped ? ret : mmkit__error_end(__func__, ret);
}
