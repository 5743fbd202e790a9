// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Named anonymous memory: mmkit_name() (names.h says how the files divide).
 *
 * Where the kernel has CONFIG_ANON_VMA_NAME (5.17+), mmkit_name() is
 * prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) after the checks the kernel makes
 * itself, and /proc/PID/maps shows [anon:NAME].  Whether it has is found out
 * once per process by naming a fresh page of our own: without the option
 * prctl_set_vma() is a stub, and EINVAL from that valid call on a valid
 * anonymous range can mean nothing else.  Any other refusal of that call
 * (EPERM, EACCES, ENOSYS from a seccomp filter or LSM of a sandbox, or the
 * 0 of a supervisor that /proc/self/maps belies) is as definitive: names go to the registry.  Only a passing failure (out of
 * memory, interrupted) is asked again next time.  uname() would say nothing about
 * the configuration.  Elsewhere (Debian's kernels) names go to a registry
 * other processes can read (names-registry.c), so that tools report memory
 * by name on any kernel.  The registry also names what the kernel refuses
 * to: reference pages of a file (memfd, refpage.ko; mmkit_refpage(3)).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "names.h"
#include "procfs.h"

/*
 * The kernel's answer, once it gave one: 0 if it names VMAs, else the
 * -errno of its refusal (-EINVAL: no CONFIG_ANON_VMA_NAME; -ENOSYS also
 * where a supervisor answered 0).  A failure to ask (no page could be
 * mapped, a passing failure of prctl) is not an answer and is not
 * remembered.
 * Racing first callers ask alike and store the same answer.
 */
static int kernel_answer;
static int kernel_known;

/*
 * -ENOSYS if /proc/self/maps shows the page at @p without the name
 * "mmkit-probe": prctl's 0 came from a seccomp supervisor (mmkit run
 * --names), which keeps names where this process's readers would not
 * look, not from the kernel.  0 otherwise, also when maps cannot be read:
 * a passing failure must not be taken for a kernel that cannot name.
 */
static int kernel_probe_named(void *p)
{
	struct mmkit__lines maps;
	const char *line, *eol;
	struct mmkit__vma v;
	int named = 1;

	if (mmkit__lines_open(&maps, AT_FDCWD, "/proc/self/maps"))
		return 0;
	while (mmkit__lines_next(&maps, &line, &eol) == 1) {
		if (mmkit__vma_parse(line, eol, &v) || v.start != (uintptr_t)p)
			continue;
		named = mmkit__vma_path_is(&v, "[anon:mmkit-probe]");
		break;
	}
	mmkit__lines_close(&maps);
	return named ? 0 : -ENOSYS;
}

/* The answer, or the passing -errno of this try; *@mapped 0 if no page could be mapped to ask. */
static int kernel_names(int *mapped)
{
	size_t page = sys_page_size();
	void *p;
	int ret;

	*mapped = 1;
	if (__atomic_load_n(&kernel_known, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&kernel_answer, __ATOMIC_RELAXED);
	ret = sys_mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0,
		       &p);
	if (ret) {
		*mapped = 0;
		return ret;
	}
	ret = sys_prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, page,
			(unsigned long)"mmkit-probe");
	if (!ret)
		ret = kernel_probe_named(p);
	sys_munmap(p, page);
	if (!mmkit__passing(ret)) {
		__atomic_store_n(&kernel_answer, ret, __ATOMIC_RELAXED);
		__atomic_store_n(&kernel_known, 1, __ATOMIC_RELEASE);
	}
	return ret;
}

int mmkit__kernel_names(void)
{
	int mapped;

	return kernel_names(&mapped);
}

int mmkit__probe_names(struct mmkit_feature *f)
{
	int mapped, ret = kernel_names(&mapped);

	if (!ret)
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "prctl",
				   "prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) works: kernel has CONFIG_ANON_VMA_NAME");
	else if (!mapped)
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "registry",
				   "could not map a page to try prctl(PR_SET_VMA): %s; using the registry",
				   strerror(-ret));
	else if (ret == -EINVAL)
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "registry",
				   "prctl(PR_SET_VMA) returned EINVAL: kernel built without CONFIG_ANON_VMA_NAME; using the registry");
	else if (ret == -ENOSYS)
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "registry",
				   "prctl(PR_SET_VMA) answered ENOSYS, or 0 while /proc/self/maps shows no name "
				   "(a seccomp filter, or a supervisor: mmkit run --names); using the registry");
	else if (mmkit__passing(ret))
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "registry",
				   "prctl(PR_SET_VMA) failed: %s (passing: asked again at the next call; names fail meanwhile)",
				   strerror(-ret));
	else
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "registry",
				   "prctl(PR_SET_VMA) refused: %s (a seccomp filter or security module?); using the registry",
				   strerror(-ret));
	return mapped && !mmkit__passing(ret);
}

/* is_valid_name_char() of kernel/sys.c, and strndup_user(name, 80)'s limit. */
static int name_valid(const char *name)
{
	size_t i;

	if (!name)
		return 0;
	for (i = 0; name[i]; i++) {
		unsigned char c = (unsigned char)name[i];

		if (i + 1 >= MMKIT_NAME_MAX) {
			mmkit__error_detail(-EINVAL, "name longer than %d characters",
					    MMKIT_NAME_MAX - 1);
			return -EINVAL;
		}
		if (c < 0x20 || c > 0x7e || strchr("\\`$[]", c)) {
			mmkit__error_detail(-EINVAL, "name: character 0x%02x at offset %zu is not allowed",
					    c, i);
			return -EINVAL;
		}
	}
	return 0;
}

MMKIT_EXPORT int mmkit_name_valid(const char *name)
{
	return MMKIT__CALL(name_valid(name));
}

/* The checks of madvise_set_anon_name(), in its order. */
static int name_range(uint64_t s, uint64_t len_in, uint64_t *start, uint64_t *end)
{
	uint64_t page = sys_page_size();
	uint64_t len;

	if (s & (page - 1)) {
		mmkit__error_detail(-EINVAL, "address %#llx is not page aligned",
				    (unsigned long long)s);
		return -EINVAL;
	}
	len = (len_in + page - 1) & ~(page - 1);
	if ((len_in && !len) || s + len < s || s + len - 1 > UINTPTR_MAX) {
		mmkit__error_detail(-EINVAL, "length %llu from %#llx wraps",
				    (unsigned long long)len_in, (unsigned long long)s);
		return -EINVAL;
	}
	*start = s;
	*end = s + len;
	return 0;
}

int mmkit__name_check(uint64_t addr, uint64_t len, const char *name, uint64_t *start,
		      uint64_t *end)
{
	/* The kernel copies and checks the name before it looks at the range. */
	int ret = name_valid(name);

	*start = *end = addr;
	return ret ? ret : name_range(addr, len, start, end);
}

static int set_name(void *addr, size_t len, const char *name)
{
	uint64_t start, end;
	int ret;

	ret = mmkit__name_check((uintptr_t)addr, len, name, &start, &end);
	if (ret || start == end)
		return ret;
	/* Not knowing yet (no memory to ask): the name must not go where it would not count. */
	ret = mmkit__kernel_names();
	if (ret && !mmkit__passing(ret))
		return mmkit__registry_name(start, end, name, 0);
	if (ret) {
		mmkit__error_detail(ret, "cannot ask the kernel whether it names memory");
		return ret;
	}
	ret = sys_prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)addr, len,
			(unsigned long)name);
	/*
	 * A file in the range (the kernel named the VMAs before it): the
	 * registry names reference pages of a file and refuses other files,
	 * and the anonymous shared memory a kernel before 6.2 refused, with
	 * EBADF and its reason itself.
	 */
	if (ret == -EBADF)
		return mmkit__registry_name(start, end, name, 1);
	if (ret == -ENOMEM)
		mmkit__error_detail(ret, "part of [%#lx, %#lx) is not mapped (its mapped parts are named)",
				    (unsigned long)start, (unsigned long)end);
	else if (ret)
		mmkit__error_detail(ret, "prctl(PR_SET_VMA_ANON_NAME) refused: %s",
				    strerrordesc_np(-ret));
	return ret;
}

MMKIT_EXPORT int mmkit_name(void *addr, size_t len, const char *name)
{
	return MMKIT__CALL(set_name(addr, len, name));
}

/*
 * The bindings' "name this buffer": a buffer ending inside a page would
 * have the kernel name the rest of that page, bytes that are not the
 * buffer's (mmkit_name() names the last page whole, as prctl does).  Each
 * binding would check and word this the same way, so the library does.
 */
static int name_pages(void *addr, size_t len, const char *name)
{
	size_t page = sys_page_size();
	int ret = mmkit_name_valid(name);

	if (ret || !len)
		return ret;
	if (((uintptr_t)addr | len) & (page - 1)) {
		mmkit__error_detail(-EINVAL, "%#lx+%zu does not cover whole pages of %zu bytes, so naming it would name bytes outside it: name whole pages, or the range itself (mmkit_name(); name_range, NameRange, name_raw)",
				    (unsigned long)(uintptr_t)addr, len, page);
		return -EINVAL;
	}
	return set_name(addr, len, name);
}

MMKIT_EXPORT int mmkit_name_pages(void *addr, size_t len, const char *name)
{
	return MMKIT__CALL(name_pages(addr, len, name));
}
