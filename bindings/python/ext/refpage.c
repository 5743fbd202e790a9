// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit.RefPage and its maps: memory that reads as a pattern until written
 * (mmkit_refpage_*), each map a writable buffer like mmap.mmap.
 *
 * A map holds a reference to its RefPage, and the RefPage counts its open
 * maps: closing it under them is refused, because on the uffd backend the
 * untouched pages of a range whose object is gone read as zeros, not as
 * the pattern.  A map counts its views for the same reason mmap.mmap does.
 * Everything runs with the GIL held (ext.h): the uffd backend's faults are
 * served by the library's SIGBUS handler in the faulting thread, which
 * runs no Python code.
 */
#include <string.h>
#include <sys/mman.h>

#include "ext.h"

typedef struct RefPageObject {
	PyObject_HEAD
	struct mmkit_refpage *rp;	/* NULL once closed */
	Py_ssize_t maps;		/* maps not yet closed */
} RefPageObject;

/* Made once, by mmkit_py_refpage_init(), and kept for the life of the process. */
static PyTypeObject *map_type;

/* The MMKIT_REFPAGE_BACKEND_* flag of @name, 0 with ValueError if none: the library knows the names. */
static unsigned int backend_flag(const char *name)
{
	int flag = mmkit_refpage_backend_flag(name);

	if (flag < 0) {
		PyErr_SetString(PyExc_ValueError, mmkit_last_error());
		return 0;
	}
	return (unsigned int)flag;
}

static void free_object(PyObject *self)
{
	PyTypeObject *type = Py_TYPE((PyObject *)self);
	freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);

	tp_free(self);
	Py_DECREF(type);
}

/* ---- the maps ---------------------------------------------------------- */

int mmkit_py_map_check_open(RefMapObject *self)
{
	if (self->owner)
		return 0;
	PyErr_SetString(PyExc_ValueError, "operation on a closed mmkit.RefMap");
	return -1;
}

/* Unmaps and lets go of the RefPage; the map stays open if unmapping fails. */
static int map_unmap(RefMapObject *self)
{
	int ret = mmkit_refpage_unmap(self->owner->rp, self->addr, (size_t)self->size);

	if (ret < 0)
		return ret;
	self->owner->maps--;
	Py_CLEAR(self->owner);
	return 0;
}

static void map_dealloc(RefMapObject *self)
{
	/* No view can be alive (each holds the map); unmapping cannot be reported. */
	if (self->owner && map_unmap(self) < 0) {
		self->owner->maps--;
		Py_CLEAR(self->owner);
	}
	free_object((PyObject *)self);
}

static int map_getbuffer(RefMapObject *self, Py_buffer *view, int flags)
{
	if (mmkit_py_map_check_open(self) ||
	    PyBuffer_FillInfo(view, (PyObject *)self, self->addr, self->size, 0, flags))
		return -1;
	self->exports++;
	return 0;
}

static void map_releasebuffer(RefMapObject *self, Py_buffer *view)
{
	(void)view;
	self->exports--;
}

static PyObject *map_close(RefMapObject *self, PyObject *unused)
{
	int ret;

	(void)unused;
	if (!self->owner)
		Py_RETURN_NONE;
	if (self->exports > 0) {
		PyErr_Format(PyExc_BufferError,
			     "cannot close mmkit.RefMap: %zd view(s) of it still exist",
			     self->exports);
		return NULL;
	}
	ret = map_unmap(self);
	if (ret < 0)
		return mmkit_py_error(ret);
	Py_RETURN_NONE;
}

static PyObject *map_enter(RefMapObject *self, PyObject *unused)
{
	(void)unused;
	if (mmkit_py_map_check_open(self))
		return NULL;
	return Py_NewRef((PyObject *)self);
}

static PyObject *map_exit(RefMapObject *self, PyObject *args)
{
	(void)args;
	return map_close(self, NULL);
}

static Py_ssize_t map_length(RefMapObject *self)
{
	if (mmkit_py_map_check_open(self))
		return -1;
	return self->size;
}

/*
 * m[i] and m[i:j:k], read and written as mmap.mmap does, with its
 * exceptions: an int for an index (negative from the end, IndexError past
 * it), bytes for a slice (any step), TypeError for other keys.  The key
 * and the value are converted before the map is checked open and its
 * address read: their __index__ or buffer may close the map, and another
 * mapping may then be at that address.
 */
static PyObject *map_subscript(RefMapObject *self, PyObject *key)
{
	Py_ssize_t i, start, stop, step, n;
	const unsigned char *data;
	PyObject *out;
	char *dst;

	if (mmkit_py_map_check_open(self))
		return NULL;
	if (PyIndex_Check(key)) {
		i = PyNumber_AsSsize_t(key, PyExc_IndexError);
		if ((i == -1 && PyErr_Occurred()) || mmkit_py_map_check_open(self))
			return NULL;
		if (i < 0)
			i += self->size;
		if (i < 0 || i >= self->size) {
			PyErr_SetString(PyExc_IndexError, "mmkit.RefMap index out of range");
			return NULL;
		}
		return PyLong_FromLong(((const unsigned char *)self->addr)[i]);
	}
	if (!PySlice_Check(key)) {
		PyErr_SetString(PyExc_TypeError, "mmkit.RefMap indices must be integers or slices");
		return NULL;
	}
	if (PySlice_Unpack(key, &start, &stop, &step) < 0 || mmkit_py_map_check_open(self))
		return NULL;
	n = PySlice_AdjustIndices(self->size, &start, &stop, step);
	data = self->addr;
	if (step == 1)
		return PyBytes_FromStringAndSize((const char *)data + start, n);
	out = PyBytes_FromStringAndSize(NULL, n);
	if (!out)
		return NULL;
	dst = PyBytes_AsString(out);
	for (i = 0; i < n; i++, start += step)
		dst[i] = (char)data[start];
	return out;
}

/*
 * m[i] = v, the map open: the value converted before it is checked open
 * again (a map is never resized, only closed).
 */
static int map_ass_item(RefMapObject *self, Py_ssize_t i, PyObject *value)
{
	Py_ssize_t v;

	if (i < 0)
		i += self->size;
	if (i < 0 || i >= self->size) {
		PyErr_SetString(PyExc_IndexError, "mmkit.RefMap index out of range");
		return -1;
	}
	if (!PyIndex_Check(value)) {
		PyErr_SetString(PyExc_TypeError, "mmkit.RefMap item value must be an int");
		return -1;
	}
	v = PyNumber_AsSsize_t(value, PyExc_TypeError);
	if ((v == -1 && PyErr_Occurred()) || mmkit_py_map_check_open(self))
		return -1;
	if (v < 0 || v > 255) {
		PyErr_SetString(PyExc_ValueError, "mmkit.RefMap item value must be in range(0, 256)");
		return -1;
	}
	((unsigned char *)self->addr)[i] = (unsigned char)v;
	return 0;
}

static int map_ass_subscript(RefMapObject *self, PyObject *key, PyObject *value)
{
	Py_ssize_t i, start, stop, step, n;
	unsigned char *data;
	Py_buffer src;

	if (mmkit_py_map_check_open(self))
		return -1;
	if (!value) {
		PyErr_SetString(PyExc_TypeError, "mmkit.RefMap does not support deletion");
		return -1;
	}
	if (PyIndex_Check(key)) {
		i = PyNumber_AsSsize_t(key, PyExc_IndexError);
		if ((i == -1 && PyErr_Occurred()) || mmkit_py_map_check_open(self))
			return -1;
		return map_ass_item(self, i, value);
	}
	if (!PySlice_Check(key)) {
		PyErr_SetString(PyExc_TypeError, "mmkit.RefMap indices must be integers or slices");
		return -1;
	}
	if (PySlice_Unpack(key, &start, &stop, &step) < 0)
		return -1;
	if (PyObject_GetBuffer(value, &src, PyBUF_SIMPLE) < 0)
		return -1;
	if (mmkit_py_map_check_open(self)) {
		PyBuffer_Release(&src);
		return -1;
	}
	n = PySlice_AdjustIndices(self->size, &start, &stop, step);
	if (src.len != n) {
		PyErr_Format(PyExc_IndexError,
			     "mmkit.RefMap slice assignment is wrong size: %zd bytes for %zd", src.len, n);
		PyBuffer_Release(&src);
		return -1;
	}
	data = self->addr;
	/* memmove: the source may be a view of this very map. */
	if (step == 1)
		memmove(data + start, src.buf, (size_t)n);
	else
		for (i = 0; i < n; i++, start += step)
			data[start] = ((const unsigned char *)src.buf)[i];
	PyBuffer_Release(&src);
	return 0;
}

/*
 * The sequence protocol, for iter(m), x in m and reversed(m): as mmap's,
 * an item is a bytes object of length 1 (m[i] is an int).
 */
static PyObject *map_item(RefMapObject *self, Py_ssize_t i)
{
	if (mmkit_py_map_check_open(self))
		return NULL;
	if (i < 0 || i >= self->size) {
		PyErr_SetString(PyExc_IndexError, "mmkit.RefMap index out of range");
		return NULL;
	}
	return PyBytes_FromStringAndSize((const char *)self->addr + i, 1);
}

static PyObject *map_repr(RefMapObject *self)
{
	if (!self->owner)
		return PyUnicode_FromString("<mmkit.RefMap closed>");
	return PyUnicode_FromFormat("<mmkit.RefMap address=%p size=%zd backend=%s>", self->addr,
				    self->size, mmkit_refpage_backend(self->owner->rp));
}

static PyObject *map_get_closed(RefMapObject *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(!self->owner);
}

static PyObject *map_get_address(RefMapObject *self, void *closure)
{
	(void)closure;
	if (mmkit_py_map_check_open(self))
		return NULL;
	return PyLong_FromVoidPtr(self->addr);
}

static PyMethodDef map_methods[] = {
	{ "close", (PyCFunction)map_close, METH_NOARGS,
	  "close()\n--\n\nUnmap the range (mmkit_refpage_unmap).  Raises BufferError while a view "
	  "of it exists; closing a closed map does nothing." },
	{ "__enter__", (PyCFunction)map_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)map_exit, METH_VARARGS, NULL },
	MMKIT_PY_MAP_IO_METHODS,
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef map_getset[] = {
	{ "closed", (getter)map_get_closed, NULL, "True once close() has run.", NULL },
	{ "address", (getter)map_get_address, NULL,
	  "The address of the first byte (page aligned), for name_range() and the like.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(map_doc,
"A range of RefPage.map(size): a writable buffer like mmap.mmap whose pages\n"
"read as the pattern until written.  len(m) is size; m[i] is an int and\n"
"m[i:j:k] bytes, negative indices and steps as for mmap, and both can be\n"
"assigned (an int in range(0, 256), bytes of the slice's length).  It\n"
"iterates as mmap does: iter(m), x in m and reversed(m) go through bytes of\n"
"length 1.  A file position as mmap's: find, rfind, read, read_byte,\n"
"readline, write, write_byte, seek, tell, flush and move, with mmap's\n"
"arguments, results and exceptions.  close()\n"
"raises BufferError while a view exists; any use after close() raises\n"
"ValueError.");

static PyType_Slot map_slots[] = {
	{ Py_tp_doc, (void *)map_doc },
	{ Py_tp_dealloc, map_dealloc },
	{ Py_tp_repr, map_repr },
	{ Py_tp_methods, map_methods },
	{ Py_tp_getset, map_getset },
	{ Py_bf_getbuffer, map_getbuffer },
	{ Py_bf_releasebuffer, map_releasebuffer },
	{ Py_sq_length, map_length },
	{ Py_sq_item, map_item },
	{ Py_mp_length, map_length },
	{ Py_mp_subscript, map_subscript },
	{ Py_mp_ass_subscript, map_ass_subscript },
	{ 0, NULL },
};

static PyType_Spec map_spec = {
	.name = "mmkit.RefMap",
	.basicsize = sizeof(RefMapObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = map_slots,
};

/* ---- the reference page ------------------------------------------------ */

static int refpage_check_open(RefPageObject *self)
{
	if (self->rp)
		return 0;
	PyErr_SetString(PyExc_ValueError, "operation on a closed mmkit.RefPage");
	return -1;
}

static PyObject *refpage_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "pattern", "backend", NULL };
	allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
	const char *backend = NULL;
	unsigned int flags = 0;
	RefPageObject *self;
	Py_buffer pattern;
	int ret;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|$z:RefPage", kwlist, &pattern, &backend))
		return NULL;
	if (backend && !(flags = backend_flag(backend))) {
		PyBuffer_Release(&pattern);
		return NULL;
	}
	self = (RefPageObject *)alloc(type, 0);
	if (self) {
		ret = mmkit_refpage_create(&self->rp, pattern.buf, (size_t)pattern.len, flags);
		if (ret < 0) {
			Py_CLEAR(self);
			mmkit_py_error(ret);
		}
	}
	PyBuffer_Release(&pattern);
	return (PyObject *)self;
}

static void refpage_dealloc(RefPageObject *self)
{
	/* Every map holds a reference: none is left. */
	if (self->rp)
		mmkit_refpage_destroy(self->rp);
	free_object((PyObject *)self);
}

static PyObject *refpage_map(RefPageObject *self, PyObject *arg)
{
	allocfunc alloc = (allocfunc)PyType_GetSlot(map_type, Py_tp_alloc);
	Py_ssize_t size = PyLong_AsSsize_t(arg);
	RefMapObject *map;
	void *addr;
	int ret;

	if ((size == -1 && PyErr_Occurred()) || refpage_check_open(self))
		return NULL;
	if (size < 0)
		return mmkit_py_einval("mmkit_refpage_map: length %zd is negative", size);
	map = (RefMapObject *)alloc(map_type, 0);
	if (!map)
		return NULL;
	ret = mmkit_refpage_map(self->rp, (size_t)size, PROT_READ | PROT_WRITE, &addr);
	if (ret < 0) {
		Py_DECREF(map);
		return mmkit_py_error(ret);
	}
	map->owner = (RefPageObject *)Py_NewRef((PyObject *)self);
	map->addr = addr;
	map->size = size;
	self->maps++;
	return (PyObject *)map;
}

static PyObject *refpage_close(RefPageObject *self, PyObject *unused)
{
	(void)unused;
	if (!self->rp)
		Py_RETURN_NONE;
	if (self->maps > 0) {
		PyErr_Format(PyExc_BufferError,
			     "cannot close mmkit.RefPage: %zd of its maps are still open", self->maps);
		return NULL;
	}
	mmkit_refpage_destroy(self->rp);
	self->rp = NULL;
	Py_RETURN_NONE;
}

static PyObject *refpage_enter(RefPageObject *self, PyObject *unused)
{
	(void)unused;
	if (refpage_check_open(self))
		return NULL;
	return Py_NewRef((PyObject *)self);
}

static PyObject *refpage_exit(RefPageObject *self, PyObject *args)
{
	(void)args;
	return refpage_close(self, NULL);
}

static PyObject *refpage_repr(RefPageObject *self)
{
	if (!self->rp)
		return PyUnicode_FromString("<mmkit.RefPage closed>");
	return PyUnicode_FromFormat("<mmkit.RefPage backend=%s maps=%zd>",
				    mmkit_refpage_backend(self->rp), self->maps);
}

static PyObject *refpage_get_closed(RefPageObject *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(!self->rp);
}

static PyObject *refpage_get_backend(RefPageObject *self, void *closure)
{
	(void)closure;
	if (refpage_check_open(self))
		return NULL;
	return PyUnicode_FromString(mmkit_refpage_backend(self->rp));
}

static PyObject *refpage_get_contract(RefPageObject *self, void *closure)
{
	(void)closure;
	if (refpage_check_open(self))
		return NULL;
	return PyLong_FromUnsignedLong(mmkit_refpage_contract(self->rp));
}

static PyMethodDef refpage_methods[] = {
	{ "map", (PyCFunction)refpage_map, METH_O,
	  "map(size)\n--\n\nMap size bytes (rounded up to pages) that read as the pattern until "
	  "written (mmkit_refpage_map): a writable RefMap of len size." },
	{ "close", (PyCFunction)refpage_close, METH_NOARGS,
	  "close()\n--\n\nFree the object (mmkit_refpage_destroy).  Raises BufferError while a "
	  "map of it is open; closing a closed RefPage does nothing." },
	{ "__enter__", (PyCFunction)refpage_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)refpage_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef refpage_getset[] = {
	{ "closed", (getter)refpage_get_closed, NULL, "True once close() has run.", NULL },
	{ "backend", (getter)refpage_get_backend, NULL,
	  "\"syscall\", \"kmod\", \"memfd\" or \"uffd\".", NULL },
	{ "contract", (getter)refpage_get_contract, NULL,
	  "The contract items this backend keeps: bit n for item n (mmkit_refpage(3)).", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(refpage_doc,
"RefPage(pattern, *, backend=None)\n--\n\n"
"A reference page (mmkit_refpage_create): memory mapped from it reads as\n"
"pattern repeated until written.  pattern: bytes-like, its length a power of\n"
"two up to the page size.  backend: \"syscall\" (refpage_create(2) of a\n"
"kernel with the series), \"kmod\" (refpage.ko), \"memfd\" or \"uffd\" forces\n"
"one (OSError if it cannot work here), None lets the library choose.");

static PyType_Slot refpage_slots[] = {
	{ Py_tp_doc, (void *)refpage_doc },
	{ Py_tp_new, refpage_new },
	{ Py_tp_dealloc, refpage_dealloc },
	{ Py_tp_repr, refpage_repr },
	{ Py_tp_methods, refpage_methods },
	{ Py_tp_getset, refpage_getset },
	{ 0, NULL },
};

static PyType_Spec refpage_spec = {
	.name = "mmkit.RefPage",
	.basicsize = sizeof(RefPageObject),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = refpage_slots,
};

static PyObject *refpage_backend_available(PyObject *module, PyObject *arg)
{
	char why[MMKIT_REASON_MAX] = "";
	const char *name = PyUnicode_AsUTF8AndSize(arg, NULL);
	unsigned int flag;

	(void)module;
	if (!name || !(flag = backend_flag(name)))
		return NULL;
	return Py_BuildValue("(Ns)",
			     PyBool_FromLong(!mmkit_refpage_backend_available(flag, why, sizeof(why))),
			     why);
}

static PyMethodDef refpage_functions[] = {
	{ "refpage_backend_available", refpage_backend_available, METH_O,
	  "refpage_backend_available(backend)\n--\n\n(True, \"\") if the refpage backend "
	  "\"syscall\", \"kmod\", \"memfd\" or \"uffd\" can work in this process, else "
	  "(False, why)." },
	{ NULL, NULL, 0, NULL },
};

int mmkit_py_refpage_init(PyObject *module)
{
	PyObject *type;

	map_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &map_spec, NULL);
	if (!map_type || PyModule_AddObjectRef(module, "RefMap", (PyObject *)map_type) < 0)
		return -1;
	type = PyType_FromModuleAndSpec(module, &refpage_spec, NULL);
	if (!type || PyModule_AddObjectRef(module, "RefPage", type) < 0) {
		Py_XDECREF(type);
		return -1;
	}
	Py_DECREF(type);
	return PyModule_AddFunctions(module, refpage_functions);
}
