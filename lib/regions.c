// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_regions(): the mappings of a process from /proc/PID/smaps, with the
 * names of its mmkit registry (see names.c) laid over its anonymous memory.
 *
 * A registry name applies only where the process has anonymous memory now
 * (private, or MAP_SHARED | MAP_ANONYMOUS), never to files, [heap], [stack]
 * or [vdso]: the kernel shows [anon:NAME] in the same places only.  A VMA
 * partly covered by names becomes several regions.  Their Size is exact;
 * Rss and Swap of each part are counted from /proc/PID/pagemap (bit 63:
 * present, bit 62: swapped; readable without privilege, the PFNs that need
 * CAP_SYS_ADMIN are not used).  Pss, Private_Dirty and Locked exist only
 * per VMA, so each part gets the VMA's value in proportion to its share of
 * the VMA's Rss.  If pagemap cannot be read, every value is shared out in
 * proportion to size instead.  Either way the parts add up exactly to the
 * VMA's smaps values, the rounding remainder going to the largest part.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
/* pagemap entries read at a time: 4 KiB of stack. */
#define PAGEMAP_BATCH	512

/* The values of a VMA or a part of one; the last two are pagemap page counts. */
enum { V_SIZE, V_RSS, V_PSS, V_PRIVATE_DIRTY, V_SWAP, V_LOCKED, V_PRESENT, V_SWAPPED, V_COUNT };

static const struct {
	const char *key;
	int v;
} smaps_keys[] = {
	{ "Size:", V_SIZE },
	{ "Rss:", V_RSS },
	{ "Pss:", V_PSS },
	{ "Private_Dirty:", V_PRIVATE_DIRTY },
	{ "Swap:", V_SWAP },
	{ "Locked:", V_LOCKED },
};

struct part {
	uint64_t start;
	uint64_t end;
	const char *name;		/* registry name, NULL for none */
	unsigned long long v[V_COUNT];
};

struct walk {
	char dir[32];			/* "/proc/self" or "/proc/PID" */
	mmkit_region_fn fn;
	void *arg;
	struct mmkit__name_range *names;
	size_t nnames;
	size_t next;			/* first name that may reach the current VMA */
	struct part *parts;		/* room for 2 * nnames + 1 */
	int pagemap_fd;			/* -1 until needed */
	int pagemap_failed;
	struct mmkit_region r;
};

static const char *parse_hex(const char *p, const char *eol, uint64_t *out)
{
	const char *start = p;
	uint64_t v = 0;

	for (; p < eol && p - start < 16; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (p == start)
		return NULL;
	*out = v;
	return p;
}

static const char *parse_dec(const char *p, const char *eol, unsigned long long *out)
{
	const char *start = p;
	unsigned long long v = 0;

	for (; p < eol && p - start < 19 && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	if (p == start)
		return NULL;
	*out = v;
	return p;
}

/* "start-end perms offset major:minor inode   path" */
int mmkit__vma_parse(const char *line, const char *eol, struct mmkit__vma *v)
{
	const char *p = line;
	unsigned long long inode;
	uint64_t x;

	p = parse_hex(p, eol, &v->start);
	if (!p || p == eol || *p != '-')
		return -EINVAL;
	p = parse_hex(p + 1, eol, &v->end);
	if (!p || eol - p < 6 || *p != ' ' || p[5] != ' ')
		return -EINVAL;
	memcpy(v->perms, p + 1, 4);
	v->perms[4] = '\0';
	p = parse_hex(p + 6, eol, &x);
	if (!p || p == eol || *p != ' ')
		return -EINVAL;
	p = parse_hex(p + 1, eol, &x);
	if (!p || p == eol || *p != ':')
		return -EINVAL;
	p = parse_hex(p + 1, eol, &x);
	if (!p || p == eol || *p != ' ')
		return -EINVAL;
	p = parse_dec(p + 1, eol, &inode);
	if (!p || v->start >= v->end)
		return -EINVAL;
	while (p < eol && *p == ' ')
		p++;
	v->path = p;
	v->path_len = (size_t)(eol - p);
	return 0;
}

static int path_is(const struct mmkit__vma *v, const char *s)
{
	size_t n = strlen(s);

	return v->path_len == n && !memcmp(v->path, s, n);
}

static int path_starts(const struct mmkit__vma *v, const char *s)
{
	size_t n = strlen(s);

	return v->path_len >= n && !memcmp(v->path, s, n);
}

int mmkit__vma_anon_shmem(const struct mmkit__vma *v)
{
	return v->perms[3] == 's' && path_is(v, "/dev/zero (deleted)");
}

int mmkit__vma_nameable(const struct mmkit__vma *v)
{
	/* Files show a path; anonymous and special mappings none or [...]. */
	return !v->path_len || v->path[0] == '[' || mmkit__vma_anon_shmem(v);
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
	} else if (path_is(v, "[heap]")) {
		r->kind = MMKIT_REGION_HEAP;
	} else if (path_is(v, "[stack]") || path_starts(v, "[stack:")) {
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

/* "Key:   N kB" lines of smaps, in bytes. */
static void smaps_field(const char *line, const char *eol, unsigned long long *v)
{
	unsigned long long kb;
	const char *p;
	size_t i, n;

	for (i = 0; i < sizeof(smaps_keys) / sizeof(smaps_keys[0]); i++) {
		n = strlen(smaps_keys[i].key);
		if ((size_t)(eol - line) <= n || memcmp(line, smaps_keys[i].key, n))
			continue;
		for (p = line + n; p < eol && *p == ' '; p++)
			;
		if (parse_dec(p, eol, &kb))
			v[smaps_keys[i].v] = kb * 1024;
		return;
	}
}

/*
 * floor(a * b / c) for b <= c without overflow: exact while c < 2^32 (pages
 * or bytes of one VMA part), b and c scaled down together beyond.
 */
static unsigned long long mul_div(unsigned long long a, unsigned long long b,
				  unsigned long long c)
{
	while (c >> 32) {
		b >>= 1;
		c >>= 1;
	}
	return a / c * b + a % c * b / c;
}

/* Shares @total out as p[].v[@out] in proportion to p[].v[@w] (to size if those are all 0). */
static void share(struct part *p, size_t n, unsigned long long total, int w, int out)
{
	unsigned long long sum = 0, given = 0;
	size_t i, heaviest = 0;

	for (i = 0; i < n; i++)
		sum += p[i].v[w];
	if (!sum) {
		w = V_SIZE;
		for (i = 0; i < n; i++)
			sum += p[i].v[w];
	}
	for (i = 0; i < n; i++) {
		p[i].v[out] = mul_div(total, p[i].v[w], sum);
		given += p[i].v[out];
		if (p[i].v[w] > p[heaviest].v[w])
			heaviest = i;
	}
	p[heaviest].v[out] += total - given;
}

/* Counts the present and swapped pages of @p from pagemap. */
static int pagemap_count(struct walk *w, struct part *p)
{
	uint64_t buf[PAGEMAP_BATCH];
	size_t page = sys_page_size(), i, cnt;
	uint64_t pg = p->start / page, last = p->end / page;
	char path[48];
	ssize_t n;

	if (w->pagemap_fd < 0) {
		snprintf(path, sizeof(path), "%s/pagemap", w->dir);
		w->pagemap_fd = sys_open(path, O_RDONLY | O_CLOEXEC, 0);
		if (w->pagemap_fd < 0)
			return w->pagemap_fd;
	}
	for (; pg < last; pg += cnt) {
		cnt = last - pg < PAGEMAP_BATCH ? (size_t)(last - pg) : PAGEMAP_BATCH;
		n = sys_pread(w->pagemap_fd, buf, cnt * sizeof(buf[0]), (off_t)(pg * sizeof(buf[0])));
		if (n < 0)
			return (int)n;
		if ((size_t)n != cnt * sizeof(buf[0]))
			return -EIO;
		for (i = 0; i < cnt; i++) {
			if (buf[i] & PM_PRESENT)
				p->v[V_PRESENT]++;
			else if (buf[i] & PM_SWAP)
				p->v[V_SWAPPED]++;
		}
	}
	return 0;
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
	return w->fn(r, w->arg);
}

static int emit_vma(struct walk *w, const struct mmkit__vma *v, struct part *vma)
{
	size_t n = 0, i;
	int ret = 0;

	if (w->nnames && (!v->path_len || mmkit__vma_anon_shmem(v)))
		n = split(w, v);
	vma->start = v->start;
	vma->end = v->end;
	vma->v[V_SIZE] = v->end - v->start;
	if (n == 1)
		vma->name = w->parts[0].name;
	if (n <= 1)
		return emit(w, v, vma);
	for (i = 0; i < n && !w->pagemap_failed; i++)
		w->pagemap_failed = pagemap_count(w, &w->parts[i]) != 0;
	for (i = 0; i < n && w->pagemap_failed; i++)
		w->parts[i].v[V_PRESENT] = w->parts[i].v[V_SWAPPED] = 0;
	share(w->parts, n, vma->v[V_RSS], V_PRESENT, V_RSS);
	share(w->parts, n, vma->v[V_SWAP], V_SWAPPED, V_SWAP);
	share(w->parts, n, vma->v[V_PSS], V_RSS, V_PSS);
	share(w->parts, n, vma->v[V_PRIVATE_DIRTY], V_RSS, V_PRIVATE_DIRTY);
	share(w->parts, n, vma->v[V_LOCKED], V_RSS, V_LOCKED);
	for (i = 0; i < n && !ret; i++)
		ret = emit(w, v, &w->parts[i]);
	return ret;
}

static int walk_smaps(struct walk *w, const char *buf)
{
	struct mmkit__vma v, cur;
	struct part vma;
	const char *line, *eol;
	int have = 0, ret = 0;

	for (line = buf; *line && !ret; line = *eol ? eol + 1 : eol) {
		eol = strchrnul(line, '\n');
		if (!mmkit__vma_parse(line, eol, &v)) {
			if (have)
				ret = emit_vma(w, &cur, &vma);
			cur = v;
			memset(&vma, 0, sizeof(vma));
			have = 1;
		} else if (have) {
			smaps_field(line, eol, vma.v);
		}
	}
	if (!ret && have)
		ret = emit_vma(w, &cur, &vma);
	return ret;
}

MMKIT_EXPORT int mmkit_regions(pid_t pid, mmkit_region_fn fn, void *arg)
{
	char path[48], *buf = NULL;
	struct walk *w;
	ssize_t n;
	int ret;

	if (pid < 0 || !fn)
		return -EINVAL;
	w = sys_calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->arg = arg;
	w->pagemap_fd = -1;
	if (pid)
		snprintf(w->dir, sizeof(w->dir), "/proc/%d", (int)pid);
	else
		snprintf(w->dir, sizeof(w->dir), "/proc/self");
	snprintf(path, sizeof(path), "%s/smaps", w->dir);
	n = sys_read_file(path, &buf);
	if (n >= 0)
		n = mmkit__names_get(pid, &w->names);
	if (n > 0) {
		w->nnames = (size_t)n;
		w->parts = sys_calloc(2 * w->nnames + 1, sizeof(*w->parts));
		if (!w->parts)
			n = -ENOMEM;
	}
	/* The process is gone (or never was). */
	if (n == -ENOENT && pid)
		n = -ESRCH;
	ret = n < 0 ? (int)n : walk_smaps(w, buf);
	if (w->pagemap_fd >= 0)
		sys_close(w->pagemap_fd);
	free(buf);
	free(w->parts);
	free(w->names);
	free(w);
	return ret;
}
