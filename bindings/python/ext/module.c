// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit._mmkit: the C calls that are not a type (names, regions, probe,
 * locks, PAC, secret statistics) and the module itself.  Types convert
 * here, behaviour stays in the library; the Python package (mmkit/) wraps
 * the plain tuples returned here into named tuples.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

PyObject *mmkit_py_error(int ret)
{
	PyObject *args = Py_BuildValue("(is)", -ret, mmkit_last_error());

	/* OSError(errno, text) makes itself PermissionError, ProcessLookupError, ... */
	if (args) {
		PyErr_SetObject(PyExc_OSError, args);
		Py_DECREF(args);
	}
	return NULL;
}

PyObject *mmkit_py_einval(const char *fmt, ...)
{
	char text[256];
	PyObject *args;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	args = Py_BuildValue("(is)", EINVAL, text);
	if (args) {
		PyErr_SetObject(PyExc_OSError, args);
		Py_DECREF(args);
	}
	return NULL;
}

/* A name argument: str without NUL characters, or None (NULL: clears). */
static int parse_name(PyObject *obj, const char **name)
{
	Py_ssize_t len;

	*name = NULL;
	if (obj == Py_None)
		return 0;
	if (!PyUnicode_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "mmkit: a name is str or None, not %R", obj);
		return -1;
	}
	*name = PyUnicode_AsUTF8AndSize(obj, &len);
	if (!*name)
		return -1;
	if ((size_t)len != strlen(*name)) {
		PyErr_SetString(PyExc_ValueError, "mmkit: embedded null character in name");
		return -1;
	}
	return 0;
}

/* The library refuses part of a page (the kernel would name all of it) with its reason. */
static PyObject *name_buffer(PyObject *module, PyObject *args)
{
	PyObject *obj, *name_obj;
	const char *name;
	Py_buffer buf;
	int ret;

	(void)module;
	if (!PyArg_ParseTuple(args, "OO:name", &obj, &name_obj) || parse_name(name_obj, &name) ||
	    PyObject_GetBuffer(obj, &buf, PyBUF_SIMPLE))
		return NULL;
	ret = mmkit_name_pages(buf.buf, (size_t)buf.len, name);
	PyBuffer_Release(&buf);
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

static PyObject *name_range(PyObject *module, PyObject *args)
{
	PyObject *addr_obj, *name_obj;
	const char *name;
	Py_ssize_t len;
	void *addr;
	int ret;

	(void)module;
	if (!PyArg_ParseTuple(args, "OnO:name_range", &addr_obj, &len, &name_obj) ||
	    parse_name(name_obj, &name))
		return NULL;
	addr = PyLong_AsVoidPtr(addr_obj);
	if (!addr && PyErr_Occurred())
		return NULL;
	if (len < 0)
		return mmkit_py_einval("mmkit_name: length %zd is negative", len);
	ret = mmkit_name(addr, (size_t)len, name);
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

static PyObject *name_valid(PyObject *module, PyObject *name_obj)
{
	const char *name;
	int ret;

	(void)module;
	if (parse_name(name_obj, &name))
		return NULL;
	ret = mmkit_name_valid(name);
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

/* ---- regions ----------------------------------------------------------- */

/* The regions, gathered without the GIL; each name copied to its length, not 4 KiB. */
struct region_list {
	struct compact {
		unsigned long start, end;
		enum mmkit_region_kind kind;
		char perms[5];
		unsigned int have;
		unsigned long long size, rss, pss, shared_clean, shared_dirty, private_clean;
		unsigned long long private_dirty, referenced, anonymous, swap, locked;
		char *name;
	} *v;
	size_t n, cap;
};

static int region_add(const struct mmkit_region *r, void *arg)
{
	struct region_list *list = arg;
	struct compact *c;

	if (list->n == list->cap) {
		size_t cap = list->cap ? 2 * list->cap : 256;
		struct compact *v = realloc(list->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		list->v = v;
		list->cap = cap;
	}
	c = &list->v[list->n];
	c->name = strdup(r->name);
	if (!c->name)
		return -ENOMEM;
	c->start = r->start;
	c->end = r->end;
	c->kind = r->kind;
	memcpy(c->perms, r->perms, sizeof(c->perms));
	c->perms[sizeof(c->perms) - 1] = '\0';
	c->have = r->have;
	c->size = r->size;
	c->rss = r->rss;
	c->pss = r->pss;
	c->shared_clean = r->shared_clean;
	c->shared_dirty = r->shared_dirty;
	c->private_clean = r->private_clean;
	c->private_dirty = r->private_dirty;
	c->referenced = r->referenced;
	c->anonymous = r->anonymous;
	c->swap = r->swap;
	c->locked = r->locked;
	list->n++;
	return 0;
}

static PyObject *optional_u64(int have, unsigned long long v)
{
	return have ? PyLong_FromUnsignedLongLong(v) : Py_NewRef(Py_None);
}

static PyObject *region_tuple(const struct compact *c)
{
	const char *kind = mmkit_region_kind_name(c->kind);

	/* Paths are any bytes: undecodable ones escape as os.fsdecode() does. */
	return Py_BuildValue("(kkssNKKNKKKKKKNK)", c->start, c->end, kind ? kind : "unknown",
			     c->perms,
			     PyUnicode_DecodeUTF8(c->name, (Py_ssize_t)strlen(c->name),
						  "surrogateescape"),
			     c->size, c->rss, optional_u64(c->have & MMKIT_REGION_HAVE_PSS, c->pss),
			     c->shared_clean, c->shared_dirty, c->private_clean, c->private_dirty,
			     c->referenced, c->anonymous,
			     optional_u64(c->have & MMKIT_REGION_HAVE_SWAP, c->swap), c->locked);
}

static PyObject *regions(PyObject *module, PyObject *args)
{
	struct region_list list = { 0 };
	PyObject *result = NULL;
	int pid = 0, ret;

	(void)module;
	if (!PyArg_ParseTuple(args, "|i:regions", &pid))
		return NULL;
	/* Reading another process's smaps takes milliseconds: let other threads run. */
	Py_BEGIN_ALLOW_THREADS
	ret = mmkit_regions(pid, region_add, &list);
	Py_END_ALLOW_THREADS
	if (ret < 0)
		mmkit_py_error(ret);
	else
		result = PyList_New((Py_ssize_t)list.n);
	for (size_t i = 0; i < list.n; i++) {
		if (result) {
			PyObject *t = region_tuple(&list.v[i]);

			if (t)
				PyList_SetItem(result, (Py_ssize_t)i, t);
			else
				Py_CLEAR(result);
		}
		free(list.v[i].name);
	}
	free(list.v);
	return result;
}

/* ---- probe ------------------------------------------------------------- */

static PyObject *probe(PyObject *module, PyObject *unused)
{
	struct mmkit_features f;
	PyObject *list;
	int ret;

	(void)module;
	(void)unused;
	ret = mmkit_probe(&f);
	if (ret < 0)
		return mmkit_py_error(ret);
	list = PyList_New(0);
	for (int id = 0; list && id < MMKIT_FEATURE_COUNT; id++) {
		const struct mmkit_feature *x = &f.feature[id];
		PyObject *t = Py_BuildValue("(ssss)", mmkit_feature_name(id),
					    mmkit_status_name(x->status), x->backend, x->reason);

		if (!t || PyList_Append(list, t) < 0)
			Py_CLEAR(list);
		Py_XDECREF(t);
	}
	return list;
}

/* ---- lock-on-fault ----------------------------------------------------- */

static PyObject *memlock_tuple(int ret, const struct mmkit_memlock *m)
{
	PyObject *limit = m->limit == MMKIT_MEMLOCK_UNLIMITED ?
			  Py_NewRef(Py_None) : PyLong_FromUnsignedLongLong(m->limit);

	return Py_BuildValue("(NKKNN)", limit, m->locked, m->needed, PyBool_FromLong(m->exempt),
			     PyBool_FromLong(ret == 0));
}

static PyObject *lock(PyObject *module, PyObject *args)
{
	unsigned int flags = 0;
	Py_buffer buf;
	PyObject *obj;
	int ret;

	(void)module;
	if (!PyArg_ParseTuple(args, "O|I:lock", &obj, &flags) ||
	    PyObject_GetBuffer(obj, &buf, PyBUF_SIMPLE))
		return NULL;
	/* Faulting a large range in takes long; the view keeps the memory mapped. */
	Py_BEGIN_ALLOW_THREADS
	ret = mmkit_lock(buf.buf, (size_t)buf.len, flags);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&buf);
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

static PyObject *unlock(PyObject *module, PyObject *obj)
{
	Py_buffer buf;
	int ret;

	(void)module;
	if (PyObject_GetBuffer(obj, &buf, PyBUF_SIMPLE))
		return NULL;
	ret = mmkit_unlock(buf.buf, (size_t)buf.len);
	PyBuffer_Release(&buf);
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

static PyObject *lockall(PyObject *module, PyObject *args)
{
	unsigned int flags;
	int ret;

	(void)module;
	if (!PyArg_ParseTuple(args, "I:lockall", &flags))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = mmkit_lockall(flags);
	Py_END_ALLOW_THREADS
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

static PyObject *unlockall(PyObject *module, PyObject *unused)
{
	int ret = mmkit_unlockall();

	(void)module;
	(void)unused;
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

static PyObject *memlock_check(PyObject *module, PyObject *args)
{
	PyObject *obj = Py_None;
	struct mmkit_memlock m;
	Py_buffer buf = { 0 };
	int ret;

	(void)module;
	if (!PyArg_ParseTuple(args, "|O:memlock_check", &obj))
		return NULL;
	if (obj != Py_None && PyObject_GetBuffer(obj, &buf, PyBUF_SIMPLE))
		return NULL;
	ret = mmkit_memlock_check(buf.buf, (size_t)buf.len, &m);
	if (obj != Py_None)
		PyBuffer_Release(&buf);
	/* -ENOMEM is the answer "does not fit", in the tuple; others are errors. */
	if (ret < 0 && ret != -ENOMEM)
		return mmkit_py_error(ret);
	return memlock_tuple(ret, &m);
}

static PyObject *memlock_check_all(PyObject *module, PyObject *args)
{
	struct mmkit_memlock m;
	unsigned int flags;
	int ret;

	(void)module;
	if (!PyArg_ParseTuple(args, "I:memlock_check_all", &flags))
		return NULL;
	ret = mmkit_memlock_check_all(flags, &m);
	if (ret < 0 && ret != -ENOMEM)
		return mmkit_py_error(ret);
	return memlock_tuple(ret, &m);
}

/* ---- PAC and secret statistics ----------------------------------------- */

static PyObject *pac_get_enabled_keys(PyObject *module, PyObject *unused)
{
	unsigned long keys;
	int ret = mmkit_pac_get_enabled_keys(&keys);

	(void)module;
	(void)unused;
	if (ret < 0)
		return mmkit_py_error(ret);
	return PyLong_FromUnsignedLong(keys);
}

static PyObject *pac_set_enabled_keys(PyObject *module, PyObject *args)
{
	unsigned long mask, enabled;
	int ret;

	(void)module;
	if (!PyArg_ParseTuple(args, "kk:pac_set_enabled_keys", &mask, &enabled))
		return NULL;
	ret = mmkit_pac_set_enabled_keys(mask, enabled);
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

static PyObject *secret_stats(PyObject *module, PyObject *unused)
{
	struct mmkit_secret_stats st;
	int ret = mmkit_secret_stats(&st);

	(void)module;
	(void)unused;
	if (ret < 0)
		return mmkit_py_error(ret);
	return Py_BuildValue("(sssKKKKKNKNN)", st.backend, st.reason, st.last_error,
			     st.allocs_live, st.bytes_live, st.pages_mapped, st.pages_cached,
			     st.bytes_locked,
			     st.memlock_limit == MMKIT_MEMLOCK_UNLIMITED ?
			     Py_NewRef(Py_None) : PyLong_FromUnsignedLongLong(st.memlock_limit),
			     st.enomem, PyBool_FromLong(st.memlock_exempt),
			     PyBool_FromLong(st.fallback));
}

/* ---- the module -------------------------------------------------------- */

static PyMethodDef functions[] = {
	{ "name", name_buffer, METH_VARARGS, NULL },
	{ "name_range", name_range, METH_VARARGS, NULL },
	{ "name_valid", name_valid, METH_O, NULL },
	{ "regions", regions, METH_VARARGS, NULL },
	{ "probe", probe, METH_NOARGS, NULL },
	{ "lock", lock, METH_VARARGS, NULL },
	{ "unlock", unlock, METH_O, NULL },
	{ "lockall", lockall, METH_VARARGS, NULL },
	{ "unlockall", unlockall, METH_NOARGS, NULL },
	{ "memlock_check", memlock_check, METH_VARARGS, NULL },
	{ "memlock_check_all", memlock_check_all, METH_VARARGS, NULL },
	{ "pac_get_enabled_keys", pac_get_enabled_keys, METH_NOARGS, NULL },
	{ "pac_set_enabled_keys", pac_set_enabled_keys, METH_VARARGS, NULL },
	{ "secret_stats", secret_stats, METH_NOARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static const struct {
	const char *name;
	unsigned long value;
} constants[] = {
	{ "LOCK_ONFAULT", MMKIT_LOCK_ONFAULT },
	{ "LOCK_CURRENT", MMKIT_LOCK_CURRENT },
	{ "LOCK_FUTURE", MMKIT_LOCK_FUTURE },
	{ "PAC_APIAKEY", MMKIT_PAC_APIAKEY },
	{ "PAC_APIBKEY", MMKIT_PAC_APIBKEY },
	{ "PAC_APDAKEY", MMKIT_PAC_APDAKEY },
	{ "PAC_APDBKEY", MMKIT_PAC_APDBKEY },
	{ "PAC_ALL_KEYS", MMKIT_PAC_ALL_KEYS },
	{ "NAME_MAX", MMKIT_NAME_MAX },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "mmkit._mmkit",
	.m_doc = "The C part of mmkit: libmmkit's calls, types converted.  Use the mmkit package.",
	.m_size = -1,
	.m_methods = functions,
};

PyMODINIT_FUNC PyInit__mmkit(void);

PyMODINIT_FUNC PyInit__mmkit(void)
{
	PyObject *module = PyModule_Create(&module_def);

	if (!module)
		return NULL;
	for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
		if (PyModule_AddIntConstant(module, constants[i].name, (long)constants[i].value))
			goto fail;
	if (mmkit_py_secret_init(module) || mmkit_py_refpage_init(module))
		goto fail;
	return module;
fail:
	Py_DECREF(module);
	return NULL;
}
