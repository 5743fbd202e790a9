// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The file-like methods of a RefMap, as mmap.mmap has them for a private
 * anonymous mapping: a position that read(), write() and seek() move,
 * find() and rfind() from it, flush() and move().  Arguments, results and
 * exceptions are mmap's in Python 3.11 (Modules/mmapmodule.c), so code
 * written for an mmap works unchanged: ValueError with mmap's words for a
 * range that does not fit, OverflowError for a byte out of 0-255.  No
 * size() (an anonymous mmap's is OSError EBADF: it is a file's size) nor
 * resize() (the map's size is fixed here).  The data is bytes in memory,
 * with the GIL held: a fault on a page of the pattern is served by the
 * library's handler in this thread (refpage.c).
 *
 * Converting an argument runs Python code (an __index__, a __buffer__)
 * that may close the map: every method checks again that it is open once
 * its arguments are converted, before it touches the memory or the
 * position.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ext.h"

/* @v made a position in [0, size], negative counting from the end, as mmap's find does. */
static Py_ssize_t clamp(Py_ssize_t v, Py_ssize_t size)
{
	if (v < 0)
		v += size;
	if (v < 0)
		return 0;
	return v > size ? size : v;
}

static PyObject *find(RefMapObject *self, PyObject *args, int reverse)
{
	Py_ssize_t start = self->pos, end = self->size, i, found = -1;
	const char *data;
	Py_buffer sub;

	if (mmkit_py_map_check_open(self))
		return NULL;
	if (!PyArg_ParseTuple(args, reverse ? "y*|nn:rfind" : "y*|nn:find", &sub, &start, &end))
		return NULL;
	if (mmkit_py_map_check_open(self)) {
		PyBuffer_Release(&sub);
		return NULL;
	}
	data = self->addr;
	start = clamp(start, self->size);
	end = clamp(end, self->size);
	/* mmap's answer for b"", even where end < start. */
	if (!sub.len)
		found = reverse ? end : start;
	for (i = reverse ? end - sub.len : start; sub.len && i >= start && i + sub.len <= end;
	     i += reverse ? -1 : 1) {
		if (!memcmp(data + i, sub.buf, (size_t)sub.len)) {
			found = i;
			break;
		}
	}
	PyBuffer_Release(&sub);
	return PyLong_FromSsize_t(found);
}

PyObject *mmkit_py_map_find(RefMapObject *self, PyObject *args)
{
	return find(self, args, 0);
}

PyObject *mmkit_py_map_rfind(RefMapObject *self, PyObject *args)
{
	return find(self, args, 1);
}

/* The next @n bytes from the position as bytes, the position moved past them. */
static PyObject *take(RefMapObject *self, Py_ssize_t n)
{
	PyObject *out = PyBytes_FromStringAndSize((const char *)self->addr + self->pos, n);

	if (out)
		self->pos += n;
	return out;
}

PyObject *mmkit_py_map_read(RefMapObject *self, PyObject *args)
{
	Py_ssize_t rest, n = -1;
	PyObject *arg = Py_None;

	if (mmkit_py_map_check_open(self) || !PyArg_ParseTuple(args, "|O:read", &arg))
		return NULL;
	if (arg != Py_None) {
		if (!PyIndex_Check(arg)) {
			PyObject *type = PyType_GetName(Py_TYPE(arg));

			if (type)
				PyErr_Format(PyExc_TypeError,
					     "argument should be integer or None, not '%U'", type);
			Py_XDECREF(type);
			return NULL;
		}
		n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
		if ((n == -1 && PyErr_Occurred()) || mmkit_py_map_check_open(self))
			return NULL;
	}
	rest = self->size - self->pos;
	return take(self, n < 0 || n > rest ? rest : n);
}

PyObject *mmkit_py_map_read_byte(RefMapObject *self, PyObject *unused)
{
	(void)unused;
	if (mmkit_py_map_check_open(self))
		return NULL;
	if (self->pos >= self->size) {
		PyErr_SetString(PyExc_ValueError, "read byte out of range");
		return NULL;
	}
	return PyLong_FromLong(((const unsigned char *)self->addr)[self->pos++]);
}

PyObject *mmkit_py_map_readline(RefMapObject *self, PyObject *unused)
{
	const char *start, *nl;
	Py_ssize_t rest;

	(void)unused;
	if (mmkit_py_map_check_open(self))
		return NULL;
	start = (const char *)self->addr + self->pos;
	rest = self->size - self->pos;
	nl = memchr(start, '\n', (size_t)rest);
	return take(self, nl ? nl - start + 1 : rest);
}

PyObject *mmkit_py_map_write(RefMapObject *self, PyObject *args)
{
	Py_buffer data;
	Py_ssize_t n;

	if (mmkit_py_map_check_open(self) || !PyArg_ParseTuple(args, "y*:write", &data))
		return NULL;
	n = data.len;
	if (mmkit_py_map_check_open(self) || self->size - self->pos < n) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "data out of range");
		PyBuffer_Release(&data);
		return NULL;
	}
	memcpy((char *)self->addr + self->pos, data.buf, (size_t)n);
	self->pos += n;
	PyBuffer_Release(&data);
	return PyLong_FromSsize_t(n);
}

PyObject *mmkit_py_map_write_byte(RefMapObject *self, PyObject *args)
{
	unsigned char byte;

	if (mmkit_py_map_check_open(self) || !PyArg_ParseTuple(args, "b:write_byte", &byte) ||
	    mmkit_py_map_check_open(self))
		return NULL;
	if (self->pos >= self->size) {
		PyErr_SetString(PyExc_ValueError, "write byte out of range");
		return NULL;
	}
	((unsigned char *)self->addr)[self->pos++] = byte;
	Py_RETURN_NONE;
}

/* Returns None, as mmap.seek does up to Python 3.12. */
PyObject *mmkit_py_map_seek(RefMapObject *self, PyObject *args)
{
	Py_ssize_t dist, where;
	int how = 0;

	if (mmkit_py_map_check_open(self) || !PyArg_ParseTuple(args, "n|i:seek", &dist, &how) ||
	    mmkit_py_map_check_open(self))
		return NULL;
	switch (how) {
	case 0:
		where = dist;
		break;
	case 1:
		if (dist > PY_SSIZE_T_MAX - self->pos)
			goto out_of_range;
		where = self->pos + dist;
		break;
	case 2:
		if (dist > PY_SSIZE_T_MAX - self->size)
			goto out_of_range;
		where = self->size + dist;
		break;
	default:
		PyErr_SetString(PyExc_ValueError, "unknown seek type");
		return NULL;
	}
	if (where < 0 || where > self->size)
		goto out_of_range;
	self->pos = where;
	Py_RETURN_NONE;
out_of_range:
	PyErr_SetString(PyExc_ValueError, "seek out of range");
	return NULL;
}

PyObject *mmkit_py_map_tell(RefMapObject *self, PyObject *unused)
{
	(void)unused;
	if (mmkit_py_map_check_open(self))
		return NULL;
	return PyLong_FromSsize_t(self->pos);
}

PyObject *mmkit_py_map_flush(RefMapObject *self, PyObject *args)
{
	Py_ssize_t offset = 0, size = self->size;

	if (mmkit_py_map_check_open(self) || !PyArg_ParseTuple(args, "|nn:flush", &offset, &size) ||
	    mmkit_py_map_check_open(self))
		return NULL;
	if (size < 0 || offset < 0 || self->size - offset < size) {
		PyErr_SetString(PyExc_ValueError, "flush values out of range");
		return NULL;
	}
	/* mmap's msync(2) refuses an address that is not page-aligned: its OSError. */
	if (offset % sysconf(_SC_PAGESIZE)) {
		errno = EINVAL;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	Py_RETURN_NONE;
}

PyObject *mmkit_py_map_move(RefMapObject *self, PyObject *args)
{
	Py_ssize_t dest, src, count;
	char *data;

	if (mmkit_py_map_check_open(self) ||
	    !PyArg_ParseTuple(args, "nnn:move", &dest, &src, &count) ||
	    mmkit_py_map_check_open(self))
		return NULL;
	data = self->addr;
	if (dest < 0 || src < 0 || count < 0 || self->size - dest < count ||
	    self->size - src < count) {
		PyErr_SetString(PyExc_ValueError, "source, destination, or count out of range");
		return NULL;
	}
	memmove(data + dest, data + src, (size_t)count);
	Py_RETURN_NONE;
}
