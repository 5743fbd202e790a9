// SPDX-License-Identifier: GPL-2.0
/*
 * refpage.ko: reference pages for stock kernels.
 *
 * REFPAGE_CREATE on /dev/refpage returns a descriptor that owns one page
 * filled with a pattern.  A private mapping of that descriptor behaves like
 * anonymous memory whose clean pages are that one page: read faults map it
 * read-only (no new page, no memory per page read), write faults copy it
 * through the kernel's ordinary copy-on-write of private file mappings.
 *
 * Lifetime: the mapping's vma->vm_file pins the descriptor, and every PTE
 * pins the page with its own reference, so neither open/close vm_ops nor
 * per-mapping references are needed (and none can leak when mmap_region()
 * fails after ->mmap succeeded, which on 6.1 only fput()s).
 *
 * VM_MIXEDMAP is set so that faults can insert the page with
 * vm_insert_page(): read faults then skip __do_fault()'s page lock, which
 * would serialise every reader of the one shared page, and a read fault
 * can map its neighbours too without exported do_set_pte().  The price,
 * documented for users: fork copies these PTEs, and mlock() leaves the
 * mapping unlocked (VM_SPECIAL).
 *
 * There is no ->map_pages: since 6.4 the kernel calls it under
 * rcu_read_lock(), where nothing may sleep, and vm_insert_page() sleeps
 * when it has to allocate the page table.  ->fault does the fault-around
 * itself instead.  Without ->map_pages, 6.7 and later retry a read fault
 * taken under the per-VMA lock with mmap_lock held before calling ->fault
 * (vmf_can_call_fault()), and older kernels always hold mmap_lock there;
 * vm_insert_page() needs no more than that, as VM_MIXEDMAP is already set.
 *
 * Tagged pages (REFPAGE_TAGGED, arm64 MTE): the page gets the caller's
 * allocation tags once, at creation, and is marked tagged, so that
 * set_pte_at() keeps its tags when it maps it and copy_user_highpage()
 * copies them into the private copy of a write fault.  Mappings of such a
 * descriptor are given VM_MTE here: the kernel refuses mmap(PROT_MTE) of
 * a device file before ->mmap is called.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#ifdef CONFIG_ARM64_MTE
#include <asm/mte.h>
#endif

#include "refpage.h"

/*
 * Every PTE holds a reference on the page: stop handing the page out well
 * before its 32-bit count could overflow (2^30 PTEs = 4 TiB of mappings).
 * Faults are the only place the module can refuse.  fork() copies the
 * PTEs of VM_MIXEDMAP mappings and get_user_pages() takes references (a
 * pin adds 1024) without asking it; vm_ops->open, which fork calls, cannot
 * fail, and VM_DONTCOPY or VM_WIPEONFORK would lose the child's copies.
 * What fork adds past the cap costs the forking user page tables (8 bytes
 * a PTE, charged to its memory cgroup): the exposure of any page-cache
 * page mapped that often.
 */
#define REFPAGE_MAX_REFS	(1 << 30)

struct refpage {
	struct page *page;
	bool tagged;
};

static struct page *refpage_get(struct vm_area_struct *vma)
{
	struct refpage *rp = vma->vm_file->private_data;

	if (page_ref_count(rp->page) >= REFPAGE_MAX_REFS)
		return NULL;
	return rp->page;
}

/*
 * The window a read fault maps: aligned, so that it never spans two page
 * tables, and as large as the kernel's default fault_around_bytes.
 */
#define REFPAGE_FAULT_AROUND	(64UL << 10)

/* Maps the page at the neighbours of @vmf->address that are still empty. */
static void refpage_fault_around(struct vm_fault *vmf, struct page *page)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long start = max(ALIGN_DOWN(vmf->address, REFPAGE_FAULT_AROUND),
				  vma->vm_start);
	unsigned long end = min(ALIGN_DOWN(vmf->address, REFPAGE_FAULT_AROUND) +
				REFPAGE_FAULT_AROUND, vma->vm_end);
	unsigned long addr;

	for (addr = start; addr < end; addr += PAGE_SIZE) {
		if (addr == vmf->address)
			continue;
		if (page_ref_count(page) >= REFPAGE_MAX_REFS)
			break;
		/* -EBUSY: mapped already (a copy, or a racing fault); leave it. */
		vm_insert_page(vma, addr, page);
	}
}

static vm_fault_t refpage_fault(struct vm_fault *vmf)
{
	struct page *page = refpage_get(vmf->vma);
	vm_fault_t ret;

	if (!page)
		return VM_FAULT_SIGBUS;
	if (vmf->flags & FAULT_FLAG_WRITE) {
		/* do_cow_fault() copies vmf->page into a new anonymous page. */
		get_page(page);
		vmf->page = page;
		return 0;
	}
	ret = vmf_insert_page(vmf->vma, vmf->address, page);
	if (ret == VM_FAULT_NOPAGE)
		refpage_fault_around(vmf, page);
	return ret;
}

static const struct vm_operations_struct refpage_vm_ops = {
	.fault		= refpage_fault,
};

static int refpage_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct refpage *rp = file->private_data;
	vm_flags_t set = VM_MIXEDMAP, clear = 0;

	if (vma->vm_flags & VM_SHARED) {
		if (vma->vm_flags & VM_WRITE)
			return -EINVAL;
		/* Shared read-only is allowed; it must stay read-only. */
		clear = VM_MAYWRITE;
	}
	/* VM_NONE where the kernel has no MTE, and then nothing is tagged. */
	if (rp->tagged)
		set |= VM_MTE | VM_MTE_ALLOWED;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
	vma->vm_ops = &refpage_vm_ops;
	return 0;
}

static int refpage_release(struct inode *inode, struct file *file)
{
	struct refpage *rp = file->private_data;

	put_page(rp->page);
	kfree(rp);
	return 0;
}

static const struct file_operations refpage_fops = {
	.owner		= THIS_MODULE,
	.mmap		= refpage_mmap,
	.release	= refpage_release,
};

static int refpage_fill(struct page *page, const void __user *pattern, size_t size)
{
	u8 *dst = kmap_local_page(page);
	size_t off;
	int ret = 0;

	if (copy_from_user(dst, pattern, size))
		ret = -EFAULT;
	for (off = size; !ret && off < PAGE_SIZE; off += size)
		memcpy(dst + off, dst, size);
	kunmap_local(dst);
	return ret;
}

#ifdef CONFIG_ARM64_MTE
#define REFPAGE_MTE_GRANULE	16

/*
 * STG x0, [x1]: the granule at x1 gets the tag in bits 59:56 of x0.
 * Encoded, as Debian's kernel flags leave the assembler without memtag.
 */
static void refpage_set_granule_tag(void *addr, u8 tag)
{
	register u64 x0 asm("x0") = (u64)tag << 56;
	register void *x1 asm("x1") = addr;

	asm volatile(".inst 0xd9200820" : : "r"(x0), "r"(x1) : "memory");
}

/*
 * Gives the page the tags of @tags, one per granule of a pattern of @size
 * bytes, repeated over the page.  Since 6.2 a page's tags are claimed with
 * try_page_mte_tagging() (PG_mte_lock) before they are written; without
 * the claim, mapping the page cleared them.
 */
static int refpage_tag(struct page *page, const u8 __user *tags, size_t size)
{
	size_t n = size / REFPAGE_MTE_GRANULE, g;
	u8 *addr = page_address(page);
	u8 *buf;

	if (!system_supports_mte())
		return -EOPNOTSUPP;
	buf = memdup_user(tags, n);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	for (g = 0; g < n; g++) {
		if (buf[g] > 0xf) {
			kfree(buf);
			return -EINVAL;
		}
	}
#ifdef PG_mte_lock
	if (!try_page_mte_tagging(page)) {
		kfree(buf);
		return -EBUSY;
	}
#endif
	for (g = 0; g < PAGE_SIZE / REFPAGE_MTE_GRANULE; g++)
		refpage_set_granule_tag(addr + g * REFPAGE_MTE_GRANULE, buf[g % n]);
	set_page_mte_tagged(page);
	kfree(buf);
	return 0;
}
#else
static int refpage_tag(struct page *page, const u8 __user *tags, size_t size)
{
	return -EOPNOTSUPP;
}
#endif

/*
 * Each descriptor gets an anonymous inode of its own, not the one inode
 * that anon_inode_getfd() shares among the anonymous files of the whole
 * system: on that one, every refpage mapping and those of unrelated
 * drivers (KVM, perf, ...) would sit in one address_space, behind one
 * i_mmap_rwsem.  6.7 renamed the helper and exports only its file form.
 */
static int refpage_install(struct refpage *rp)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	struct file *file;
	int fd = get_unused_fd_flags(O_CLOEXEC);

	if (fd < 0)
		return fd;
	file = anon_inode_create_getfile("[refpage]", &refpage_fops, rp, O_RDWR, NULL);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	fd_install(fd, file);
	return fd;
#else
	return anon_inode_getfd_secure("[refpage]", &refpage_fops, rp, O_RDWR | O_CLOEXEC, NULL);
#endif
}

/* @size: the caller's size of struct refpage_create, from the ioctl number. */
static long refpage_create(const void __user *uarg, size_t size)
{
	struct refpage_create arg = {};
	bool tagged;
	struct refpage *rp;
	int fd, ret;

	if (copy_from_user(&arg, uarg, size))
		return -EFAULT;
	tagged = arg.flags & REFPAGE_TAGGED;
	if ((arg.flags & ~REFPAGE_TAGGED) || !arg.pattern_size || arg.pattern_size > PAGE_SIZE ||
	    !is_power_of_2(arg.pattern_size))
		return -EINVAL;
	/* Tags cover 16-byte granules, and the 16-byte form has no room for them. */
	if (tagged && (size < sizeof(arg) || arg.pattern_size < 16))
		return -EINVAL;
	rp = kzalloc(sizeof(*rp), GFP_KERNEL_ACCOUNT);
	if (!rp)
		return -ENOMEM;
	rp->page = alloc_page(GFP_KERNEL_ACCOUNT);
	if (!rp->page) {
		ret = -ENOMEM;
		goto free_rp;
	}
	ret = refpage_fill(rp->page, u64_to_user_ptr(arg.pattern), arg.pattern_size);
	if (!ret && tagged)
		ret = refpage_tag(rp->page, u64_to_user_ptr(arg.tags), arg.pattern_size);
	if (ret)
		goto free_page;
	rp->tagged = tagged;
	fd = refpage_install(rp);
	if (fd >= 0)
		return fd;
	ret = fd;
free_page:
	put_page(rp->page);
free_rp:
	kfree(rp);
	return ret;
}

static long refpage_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case REFPAGE_CREATE_V1:
	case REFPAGE_CREATE:
		return refpage_create((const void __user *)arg, _IOC_SIZE(cmd));
	default:
		return -ENOTTY;
	}
}

static const struct file_operations refpage_dev_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= refpage_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice refpage_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "refpage",
	.fops	= &refpage_dev_fops,
	.mode	= 0666,
};

module_misc_device(refpage_dev);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Reference pages: memory that reads as a pattern until written");
