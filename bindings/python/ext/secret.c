// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit.Secret: secret memory (mmkit_secret_alloc) as a Python buffer.
 *
 * It counts the views it has exported, as mmap.mmap does, so close() can
 * refuse while a memoryview still reaches the memory: freeing under a view
 * would hand the view memory the allocator gives to the next secret.  The
 * pointer and the count change only with the GIL held, never released in
 * between, which is what makes one Secret safe to use from many threads.
 */
#include <string.h>

#include "ext.h"

typedef struct {
	PyObject_HEAD
	void *p;		/* NULL once closed; empty_secret for size 0 */
	Py_ssize_t size;
	Py_ssize_t exports;	/* views alive */
	int access;		/* MMKIT_SECRET_NOACCESS .. _READWRITE */
	int pages;		/* own pages: protect() works */
} SecretObject;

static const char *const access_names[] = {
	[MMKIT_SECRET_NOACCESS] = "noaccess",
	[MMKIT_SECRET_READONLY] = "readonly",
	[MMKIT_SECRET_READWRITE] = "readwrite",
};

/*
 * Where a Secret of size 0 points: an empty secret holds no memory and
 * makes no C call (mmkit_secret_alloc refuses size 0), as in the Rust and
 * Go bindings.
 */
static char empty_secret[16] __attribute__((aligned(16)));

static int check_open(SecretObject *self)
{
	if (self->p)
		return 0;
	PyErr_SetString(PyExc_ValueError, "operation on a closed mmkit.Secret");
	return -1;
}

static PyObject *secret_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "size", "pages", "require_secretmem", NULL };
	Py_ssize_t size;
	int pages = 0, require = 0;
	unsigned int flags = 0;
	allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
	SecretObject *self;
	void *p = NULL;
	int ret;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|$pp:Secret", kwlist,
					 &size, &pages, &require))
		return NULL;
	if (size < 0)
		return mmkit_py_einval("mmkit_secret_alloc: size %zd is negative", size);
	if (pages)
		flags |= MMKIT_SECRET_PAGES;
	if (require)
		flags |= MMKIT_SECRET_REQUIRE_SECRETMEM;
	self = (SecretObject *)alloc(type, 0);
	if (!self)
		return NULL;
	ret = size ? mmkit_secret_alloc(&p, (size_t)size, flags) : 0;
	if (ret < 0) {
		Py_DECREF(self);
		return mmkit_py_error(ret);
	}
	self->p = size ? p : empty_secret;
	self->size = size;
	self->access = MMKIT_SECRET_READWRITE;
	/* Bigger than the pool's largest: own pages, as if asked for. */
	self->pages = pages || size > MMKIT_SECRET_POOL_MAX;
	return (PyObject *)self;
}

static void secret_dealloc(SecretObject *self)
{
	PyTypeObject *type = Py_TYPE((PyObject *)self);
	freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);

	/* No view can be alive: each holds a reference to the Secret. */
	if (self->size)
		mmkit_secret_free(self->p);
	tp_free(self);
	Py_DECREF(type);
}

static int secret_getbuffer(SecretObject *self, Py_buffer *view, int flags)
{
	if (check_open(self))
		return -1;
	if (self->access == MMKIT_SECRET_NOACCESS) {
		PyErr_SetString(PyExc_BufferError, "mmkit.Secret is protected \"noaccess\"");
		return -1;
	}
	if (PyBuffer_FillInfo(view, (PyObject *)self, self->p, self->size,
			      self->access != MMKIT_SECRET_READWRITE, flags))
		return -1;
	self->exports++;
	return 0;
}

static void secret_releasebuffer(SecretObject *self, Py_buffer *view)
{
	(void)view;
	self->exports--;
}

static PyObject *secret_close(SecretObject *self, PyObject *unused)
{
	(void)unused;
	if (self->exports > 0) {
		PyErr_Format(PyExc_BufferError,
			     "cannot close mmkit.Secret: %zd view(s) of it still exist",
			     self->exports);
		return NULL;
	}
	/* Zeroes the memory before the allocator takes it back. */
	if (self->size)
		mmkit_secret_free(self->p);
	self->p = NULL;
	Py_RETURN_NONE;
}

/* access: an int (SECRET_NOACCESS ..) or its name; -1 with ValueError if neither. */
static int parse_access(PyObject *arg)
{
	if (PyUnicode_Check(arg)) {
		const char *s = PyUnicode_AsUTF8AndSize(arg, NULL);

		if (!s)
			return -1;
		for (int i = 0; i < (int)(sizeof(access_names) / sizeof(access_names[0])); i++)
			if (!strcmp(s, access_names[i]))
				return i;
	} else if (PyLong_Check(arg)) {
		long v = PyLong_AsLong(arg);

		if (v >= MMKIT_SECRET_NOACCESS && v <= MMKIT_SECRET_READWRITE)
			return (int)v;
		if (v == -1 && PyErr_Occurred())
			return -1;
	}
	PyErr_Format(PyExc_ValueError,
		     "mmkit.Secret.protect: access %R is not \"noaccess\", \"readonly\" or \"readwrite\"",
		     arg);
	return -1;
}

static PyObject *secret_protect(SecretObject *self, PyObject *arg)
{
	int access = parse_access(arg);
	int ret;

	if (access < 0 || check_open(self))
		return NULL;
	/* A view made under the old access would fault on a read or write. */
	if (self->exports > 0 && access < self->access) {
		PyErr_Format(PyExc_BufferError,
			     "cannot make mmkit.Secret \"%s\": %zd view(s) of it still exist",
			     access_names[access], self->exports);
		return NULL;
	}
	/* An empty secret has no byte to protect: nothing to refuse. */
	ret = self->size ? mmkit_secret_protect(self->p, access) : 0;
	if (ret < 0)
		return mmkit_py_error(ret);
	self->access = access;
	Py_RETURN_NONE;
}

static PyObject *secret_enter(SecretObject *self, PyObject *unused)
{
	(void)unused;
	if (check_open(self))
		return NULL;
	return Py_NewRef((PyObject *)self);
}

static PyObject *secret_exit(SecretObject *self, PyObject *args)
{
	(void)args;
	return secret_close(self, NULL);
}

static PyObject *secret_reduce(SecretObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	PyErr_SetString(PyExc_TypeError, "cannot pickle or copy an mmkit.Secret");
	return NULL;
}

static Py_ssize_t secret_length(SecretObject *self)
{
	if (check_open(self))
		return -1;
	return self->size;
}

static PyObject *secret_repr(SecretObject *self)
{
	if (!self->p)
		return PyUnicode_FromString("<mmkit.Secret closed>");
	return PyUnicode_FromFormat("<mmkit.Secret size=%zd%s access=%s>", self->size,
				    self->pages ? " pages" : "", access_names[self->access]);
}

static PyObject *secret_get_closed(SecretObject *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(!self->p);
}

static PyObject *secret_get_access(SecretObject *self, void *closure)
{
	(void)closure;
	if (check_open(self))
		return NULL;
	return PyUnicode_FromString(access_names[self->access]);
}

static PyMethodDef secret_methods[] = {
	{ "close", (PyCFunction)secret_close, METH_NOARGS,
	  "close()\n--\n\nZero the memory and give it back.  Raises BufferError while a view "
	  "(memoryview) of it exists; closing a closed Secret does nothing." },
	{ "protect", (PyCFunction)secret_protect, METH_O,
	  "protect(access)\n--\n\nChange the access to the memory: \"noaccess\", \"readonly\" or "
	  "\"readwrite\" (or SECRET_NOACCESS, ...), by mmkit_secret_protect().  Only for a Secret "
	  "on pages of its own (pages=True, or bigger than SECRET_POOL_MAX): OSError EINVAL "
	  "otherwise.  Raises BufferError if views exist and the access would shrink." },
	{ "__enter__", (PyCFunction)secret_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)secret_exit, METH_VARARGS, NULL },
	{ "__reduce__", (PyCFunction)secret_reduce, METH_NOARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef secret_getset[] = {
	{ "closed", (getter)secret_get_closed, NULL, "True once close() has run.", NULL },
	{ "access", (getter)secret_get_access, NULL,
	  "\"readwrite\", \"readonly\" or \"noaccess\": as protect() last set it.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(secret_doc,
"Secret(size, *, pages=False, require_secretmem=False)\n--\n\n"
"size bytes of secret memory (mmkit_secret_alloc): out of the kernel's direct\n"
"map with memfd_secret, never swapped or dumped, zeroed at birth and wiped by\n"
"close().  A writable buffer: memoryview(secret), secret[...] through it,\n"
"len(secret) == size.  pages=True puts it on pages of its own between guard\n"
"pages, so protect() works; require_secretmem=True fails with OSError (ENOSYS)\n"
"instead of using the mlock fallback.  Size 0 is an empty secret: no memory,\n"
"no C call (as in the Rust and Go bindings).  close() raises BufferError while\n"
"a view exists; any use after close() raises ValueError.  Its repr shows no\n"
"contents, and it cannot be pickled or copied.");

static PyType_Slot secret_slots[] = {
	{ Py_tp_doc, (void *)secret_doc },
	{ Py_tp_new, secret_new },
	{ Py_tp_dealloc, secret_dealloc },
	{ Py_tp_repr, secret_repr },
	{ Py_tp_methods, secret_methods },
	{ Py_tp_getset, secret_getset },
	{ Py_bf_getbuffer, secret_getbuffer },
	{ Py_bf_releasebuffer, secret_releasebuffer },
	{ Py_sq_length, secret_length },
	{ 0, NULL },
};

static PyType_Spec secret_spec = {
	.name = "mmkit.Secret",
	.basicsize = sizeof(SecretObject),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = secret_slots,
};

int mmkit_py_secret_init(PyObject *module)
{
	PyObject *type = PyType_FromModuleAndSpec(module, &secret_spec, NULL);

	if (!type || PyModule_AddObjectRef(module, "Secret", type) < 0) {
		Py_XDECREF(type);
		return -1;
	}
	Py_DECREF(type);
	if (PyModule_AddIntConstant(module, "SECRET_NOACCESS", MMKIT_SECRET_NOACCESS) ||
	    PyModule_AddIntConstant(module, "SECRET_READONLY", MMKIT_SECRET_READONLY) ||
	    PyModule_AddIntConstant(module, "SECRET_READWRITE", MMKIT_SECRET_READWRITE) ||
	    PyModule_AddIntConstant(module, "SECRET_POOL_MAX", MMKIT_SECRET_POOL_MAX))
		return -1;
	return 0;
}
