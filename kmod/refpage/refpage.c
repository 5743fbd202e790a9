// SPDX-License-Identifier: GPL-2.0
/*
 * refpage.ko: reference pages for stock kernels.
 *
 * REFPAGE_CREATE on /dev/refpage returns a descriptor that owns one page
 * filled with a pattern.  A private mapping of that descriptor behaves like
 * anonymous memory whose clean pages read as that page: read faults map a
 * copy of it read-only (no new page per page read), write faults copy it
 * through the kernel's ordinary copy-on-write of private file mappings.
 *
 * Counts: a page mapped by a PTE holds a reference and a mapcount per PTE,
 * and fork() copies the PTEs of this VM_MIXEDMAP mapping, each adding one;
 * so no single page may be mapped by every PTE of every process, or fork
 * would wrap its 32-bit count (2^30 PTEs, forked four times).  Read faults
 * map "copies" of the pattern page instead, each at no more than
 * ptes_per_copy places (256 by default and at most), then start a new
 * copy; the module drops its own reference to a full copy, which goes when
 * the last PTE mapping it does.  A copy's count is then at most
 * ptes_per_copy times the number of address spaces with page tables, plus
 * get_user_pages() references, whatever is mapped or forked, and no fault
 * ever refuses for it.  Address spaces, not processes: an mm keeps its
 * page tables past its last task's exit while a get_task_mm() holder
 * (/proc/PID/mem, process_vm_readv(), a ptrace access in flight) holds
 * mm_users, each task for one access at a time.  So PID_MAX_LIMIT (2^22)
 * mms with tasks plus one per task so held: 2^23 mms, 2^31 references at
 * the very worst (every task of a full PID space stalled in such an
 * access), which reaches the count's sign bit (get_user_pages() refuses
 * then) and is far from wrapping it to zero.  The price: one page per 256
 * pages read (0.4 %), and each PTE counts as file RSS, as for any
 * page-cache page.  The kernel's own special PTEs, which count nothing
 * (the zero page's), are out of reach for the copy a store makes: core mm
 * copies a special PTE's page from the faulting task's address space,
 * which is another process's for ptrace() and process_vm_writev(), and it
 * keeps no MTE tags.  The kernel series (refpage_create(2)) maps the page so.
 *
 * A first store to a page never mapped maps a copy read-only and returns
 * VM_FAULT_NOPAGE: the store faults again and wp_page_copy() copies the
 * page into a new anonymous one.  Returning the page from ->fault instead
 * would have do_cow_fault() lock it for the copy: every first store to one
 * pattern, in every thread and process, would take turns on that lock.
 * The price: two faults per first store instead of one.
 *
 * Lifetime: the mapping's vma->vm_file pins the descriptor, which holds
 * the pattern page and the copy being filled; every PTE pins its copy with
 * its own reference, so neither open/close vm_ops nor per-mapping
 * references are needed (and none can leak when mmap_region() fails after
 * ->mmap succeeded, which on 6.1 only fput()s).
 *
 * VM_MIXEDMAP is set so that faults can insert pages with
 * vm_insert_page(): read faults then skip __do_fault()'s page lock, and a
 * read fault can map its neighbours too without exported do_set_pte().
 * The price, documented for users: fork copies these PTEs, and mlock()
 * leaves the mapping unlocked (VM_SPECIAL).
 *
 * There is no ->map_pages: since 6.4 the kernel calls it under
 * rcu_read_lock(), where nothing may sleep, and vm_insert_page() sleeps
 * when it has to allocate the page table.  ->fault does the fault-around
 * itself instead.  Without ->map_pages, 6.7 and later retry a read fault
 * taken under the per-VMA lock with mmap_lock held before calling ->fault
 * (vmf_can_call_fault()), and older kernels always hold mmap_lock there;
 * vm_insert_page() needs no more than that, as VM_MIXEDMAP is already set.
 *
 * Mappings are never executable: the pattern is bytes of the caller's
 * choosing, which vm.memfd_noexec keeps memfd_create() from mapping
 * executable.
 *
 * Tagged pages (REFPAGE_TAGGED, arm64 MTE): the page gets the caller's
 * allocation tags once, at creation, and is marked tagged, so that
 * set_pte_at() keeps its tags when it maps it, copy_highpage() copies them
 * into each copy and copy_user_highpage() into the private copy of a write
 * fault.  Mappings of such a descriptor are given VM_MTE here: the kernel
 * refuses mmap(PROT_MTE) of a device file before ->mmap is called.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#ifdef CONFIG_ARM64_MTE
#include <asm/mte.h>
#endif

#include "refpage.h"

/*
 * At most this many PTEs are made to map one copy; the count bound above
 * needs it no larger than 2^30 / PID_MAX_LIMIT (256).  Lower values, for
 * tests, only use more copies.
 */
#define REFPAGE_MAX_PTES_PER_COPY	256
static unsigned int ptes_per_copy = REFPAGE_MAX_PTES_PER_COPY;

static int ptes_per_copy_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (!n || n > REFPAGE_MAX_PTES_PER_COPY)
		return -EINVAL;
	WRITE_ONCE(ptes_per_copy, n);
	return 0;
}

static const struct kernel_param_ops ptes_per_copy_ops = {
	.set	= ptes_per_copy_set,
	.get	= param_get_uint,
};
module_param_cb(ptes_per_copy, &ptes_per_copy_ops, &ptes_per_copy, 0644);
MODULE_PARM_DESC(ptes_per_copy, "PTEs mapping one copy of a pattern page at most (1-256)");

struct refpage {
	struct page *page;	/* the pattern, with its tags */
	bool tagged;
	spinlock_t lock;	/* protects copy and left */
	struct page *copy;	/* the copy read faults map, or NULL */
	unsigned int left;	/* places copy may still be mapped at */
};

/*
 * A copy of the pattern page to map at up to @want places, with a reference
 * for the caller; *@got: how many (at least 1).  NULL when no page can be
 * allocated.
 */
static struct page *refpage_take(struct refpage *rp, unsigned int want, unsigned int *got)
{
	struct page *page, *fresh, *old;

	for (;;) {
		spin_lock(&rp->lock);
		/* A copy that went bad is not mapped again: a new one replaces it. */
		if (rp->left && PageHWPoison(rp->copy))
			rp->left = 0;
		if (rp->left) {
			*got = min(want, rp->left);
			rp->left -= *got;
			page = rp->copy;
			get_page(page);
			spin_unlock(&rp->lock);
			return page;
		}
		spin_unlock(&rp->lock);

		/*
		 * Charged to the memory cgroup of the task whose fault needs
		 * it, as a page-cache page is to the first reader's: tasks of
		 * other cgroups that map it later (their read faults, up to
		 * ptes_per_copy, and fork) are not charged, and the charge
		 * stays where it is until the copy's last PTE goes.
		 */
		fresh = alloc_page(GFP_HIGHUSER | __GFP_ACCOUNT);
		if (!fresh)
			return NULL;
		copy_highpage(fresh, rp->page);
		old = NULL;
		spin_lock(&rp->lock);
		if (!rp->left) {
			old = rp->copy;
			rp->copy = fresh;
			rp->left = READ_ONCE(ptes_per_copy);
			fresh = NULL;
		}
		spin_unlock(&rp->lock);
		/* A full copy stays while PTEs map it; a racing fault's spare goes. */
		if (old)
			put_page(old);
		if (fresh)
			put_page(fresh);
	}
}

/*
 * The window a read fault maps: aligned, so that it never spans two page
 * tables, and as large as the kernel's default fault_around_bytes.
 */
#define REFPAGE_FAULT_AROUND	(64UL << 10)

/* Maps copies at the neighbours of @vmf->address that are still empty. */
static void refpage_fault_around(struct vm_fault *vmf, struct refpage *rp)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long start = max(ALIGN_DOWN(vmf->address, REFPAGE_FAULT_AROUND),
				  vma->vm_start);
	unsigned long end = min(ALIGN_DOWN(vmf->address, REFPAGE_FAULT_AROUND) +
				REFPAGE_FAULT_AROUND, vma->vm_end);
	unsigned long addr = start;
	unsigned int got = 0;
	struct page *page = NULL;

	while (addr < end) {
		if (addr == vmf->address) {
			addr += PAGE_SIZE;
			continue;
		}
		if (!got) {
			if (page)
				put_page(page);
			page = refpage_take(rp, (end - addr) >> PAGE_SHIFT, &got);
			if (!page)
				return;
		}
		/* -EBUSY: mapped already (a copy, or a racing fault); leave it. */
		if (!vm_insert_page(vma, addr, page))
			got--;
		addr += PAGE_SIZE;
	}
	if (page)
		put_page(page);
}

/*
 * Reads map a copy of the pattern page, and its neighbours.  A first store
 * maps one too, for wp_page_copy() to copy when the store faults again.
 */
static vm_fault_t refpage_fault(struct vm_fault *vmf)
{
	struct refpage *rp = vmf->vma->vm_file->private_data;
	unsigned int got;
	struct page *page;
	vm_fault_t ret;

	if (unlikely(PageHWPoison(rp->page)))
		return VM_FAULT_HWPOISON;
	page = refpage_take(rp, 1, &got);
	if (!page)
		return VM_FAULT_OOM;
	ret = vmf_insert_page(vmf->vma, vmf->address, page);
	put_page(page);
	if (ret == VM_FAULT_NOPAGE && !(vmf->flags & FAULT_FLAG_WRITE))
		refpage_fault_around(vmf, rp);
	return ret;
}

static const struct vm_operations_struct refpage_vm_ops = {
	.fault		= refpage_fault,
};

static int refpage_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct refpage *rp = file->private_data;
	vm_flags_t set = VM_MIXEDMAP, clear = VM_MAYEXEC;

	/* Never executable, as on a noexec mount (see path_noexec()). */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (vma->vm_flags & VM_SHARED) {
		if (vma->vm_flags & VM_WRITE)
			return -EINVAL;
		/* Shared read-only is allowed; it must stay read-only. */
		clear |= VM_MAYWRITE;
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

	if (rp->copy)
		put_page(rp->copy);
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
	spin_lock_init(&rp->lock);
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
