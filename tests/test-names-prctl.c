// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The prctl path of mmkit_name(), on a kernel with CONFIG_ANON_VMA_NAME:
 * for every good and bad input, mmkit_name() (which checks the arguments
 * itself first) must answer what prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)
 * answers, on identical fresh mappings, and name the same pages; the names
 * must show as [anon:NAME] in /proc/self/maps and as kernel names in
 * mmkit_regions().  Without the option it skips: the registry path is
 * tested by test-names.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "harness.h"
#include "mmkit.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

static size_t page;
static int tmp_fd;

static struct {
	uintptr_t addr;
	struct mmkit_region r;
} at;

static int at_fn(const struct mmkit_region *r, void *arg)
{
	(void)arg;
	if (at.addr < r->start || at.addr >= r->end)
		return 0;
	at.r = *r;
	return 1;
}

static int raw_name(void *addr, size_t len, const char *name)
{
	return prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, addr, len, name) ? -errno : 0;
}

enum layout {
	PLAIN,		/* 4 anonymous pages */
	HOLE,		/* page 1 unmapped */
	FILE_MID,	/* page 1 a shared file mapping */
	ZERO,		/* 4 pages of /dev/zero, private: a file */
	SHARED,		/* 4 pages MAP_SHARED | MAP_ANONYMOUS */
};

struct input {
	const char *what;
	enum layout layout;
	size_t off;		/* bytes from the start of the layout */
	size_t len;
	const char *name;
};

static char *build(enum layout l)
{
	int zero, flags = MAP_PRIVATE | MAP_ANONYMOUS, fd = -1;
	char *p;

	if (l == SHARED)
		flags = MAP_SHARED | MAP_ANONYMOUS;
	if (l == ZERO) {
		zero = open("/dev/zero", O_RDWR);
		T_ASSERT(zero >= 0);
		fd = zero;
		flags = MAP_PRIVATE;
	}
	p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, flags, fd, 0);
	T_ASSERT(p != MAP_FAILED);
	if (fd >= 0)
		close(fd);
	if (l == HOLE)
		T_EQ(munmap(p + page, page), 0);
	if (l == FILE_MID)
		T_ASSERT(mmap(p + page, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			      tmp_fd, 0) == p + page);
	return p;
}

/* The [anon:NAME] (or [anon_shmem:NAME]) of each page of @p in /proc/self/maps, joined. */
static void names_of(char *p, char *out, size_t size)
{
	char line[512], *name;
	unsigned long s, e;
	size_t i, used = 0;
	FILE *f;

	out[0] = '\0';
	for (i = 0; i < 4; i++) {
		uintptr_t a = (uintptr_t)p + i * page;
		const char *found = "-";

		f = fopen("/proc/self/maps", "r");
		T_ASSERT(f);
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%lx-%lx", &s, &e) != 2 || a < s || a >= e)
				continue;
			name = strstr(line, "[anon");
			if (name)
				found = name;
			break;
		}
		fclose(f);
		used += (size_t)snprintf(out + used, size - used, "%.*s|",
					 (int)strcspn(found, "\n"), found);
	}
}

/* Runs @in through @fn on a fresh layout; returns the result, the names in @names. */
static int run(const struct input *in, int (*fn)(void *, size_t, const char *),
	       char *names, size_t size)
{
	char *p = build(in->layout);
	int ret = fn(p + in->off, in->len, in->name);

	names_of(p, names, size);
	munmap(p, 4 * page);
	return ret;
}

int main(void)
{
	char name79[80], name80[81], bad[16][8], kernel_names[512], mmkit_names[512];
	char path[] = "/tmp/mmkit-test-names-prctl-XXXXXX";
	static const char bad_chars[] = "\\`$[]\x1f\x7f\x01\n\x80";
	struct mmkit_features f;
	struct input in[64];
	size_t i, n = 0;
	char *p;
	int ret;

	page = (size_t)sysconf(_SC_PAGESIZE);
	T_EQ(mmkit_probe(&f), 0);
	p = build(PLAIN);
	ret = raw_name(p, page, "probe");
	munmap(p, 4 * page);
	if (ret == -EINVAL) {
		T_EQ(f.feature[MMKIT_FEATURE_NAMES].status, MMKIT_STATUS_FALLBACK);
		T_SKIP("prctl(PR_SET_VMA) returned EINVAL: kernel without CONFIG_ANON_VMA_NAME, "
		       "the prctl path cannot run here (test-names covers the registry)");
	}
	T_EQ(ret, 0);
	T_EQ(f.feature[MMKIT_FEATURE_NAMES].status, MMKIT_STATUS_NATIVE);
	T_ASSERT(!strcmp(f.feature[MMKIT_FEATURE_NAMES].backend, "prctl"));

	tmp_fd = mkstemp(path);
	T_ASSERT(tmp_fd >= 0);
	unlink(path);
	T_EQ(ftruncate(tmp_fd, (off_t)page), 0);
	memset(name79, 'x', 79);
	name79[79] = '\0';
	memset(name80, 'x', 80);
	name80[80] = '\0';

#define IN(w, l, o, ln, nm) (in[n++] = (struct input){ w, l, o, ln, nm })
	IN("valid", PLAIN, 0, 4 * page, "valid");
	IN("empty name", PLAIN, 0, 4 * page, "");
	IN("NULL clears", PLAIN, 0, 4 * page, NULL);
	IN("79 characters", PLAIN, 0, page, name79);
	IN("80 characters", PLAIN, 0, page, name80);
	IN("80 characters, len 0", PLAIN, 0, 0, name80);
	IN("unaligned", PLAIN, 1, page, "x");
	IN("unaligned, len 0", PLAIN, 1, 0, "x");
	IN("len 0", PLAIN, 0, 0, "x");
	IN("len rounded up", PLAIN, 0, 1, "x");
	IN("len SIZE_MAX", PLAIN, 0, SIZE_MAX, "x");
	IN("len rounding to 0", PLAIN, 0, SIZE_MAX - page + 2, "x");
	IN("hole", HOLE, 0, 4 * page, "hole");
	IN("starting in a hole", HOLE, page, 3 * page, "hole");
	IN("only a hole", HOLE, page, page, "hole");
	IN("file in the middle", FILE_MID, 0, 4 * page, "file");
	IN("after the file", FILE_MID, 2 * page, 2 * page, "file");
	IN("private /dev/zero", ZERO, 0, 4 * page, "zero");
	IN("shared anonymous", SHARED, 0, 4 * page, "shared");
	for (i = 0; i < sizeof(bad_chars) - 1; i++) {
		snprintf(bad[i], sizeof(bad[i]), "a%cb", bad_chars[i]);
		IN("bad character", PLAIN, 0, page, bad[i]);
	}
#undef IN

	T_CASE("mmkit_name() answers and names as the kernel does, input by input");
	for (i = 0; i < n; i++) {
		int k = run(&in[i], raw_name, kernel_names, sizeof(kernel_names));
		int m = run(&in[i], mmkit_name, mmkit_names, sizeof(mmkit_names));

		printf("    %-22s kernel %-4d mmkit %-4d %s\n", in[i].what, k, m, kernel_names);
		if (k != m || strcmp(kernel_names, mmkit_names))
			T_FAIL("%s: kernel %d [%s], mmkit_name %d [%s]", in[i].what, k,
			       kernel_names, m, mmkit_names);
		T_EQ(mmkit_name_valid(in[i].name), in[i].name == name80 ||
			 (!strcmp(in[i].what, "bad character")) ? -EINVAL : 0);
	}

	T_CASE("mmkit_regions() reports kernel names");
	p = build(PLAIN);
	T_EQ(mmkit_name(p, 4 * page, "kernel-named"), 0);
	at.addr = (uintptr_t)p;
	T_EQ(mmkit_regions(0, at_fn, &at), 1);
	T_EQ(at.r.kind, MMKIT_REGION_ANON_NAMED);
	T_ASSERT(!strcmp(at.r.name, "kernel-named"));
	munmap(p, 4 * page);
	return T_EXIT_PASS;
}
