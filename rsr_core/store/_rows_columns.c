/* A table's rows built straight into Arrow's columnar layout (see _rows.c): per column a validity bitmap, the
 * offsets of a text or binary column and its data, which pyarrow takes as they are (`pa.Array.from_buffers`,
 * in `arrow_rows.columns_table`), instead of row tuples turned into arrays by `pa.array`.
 *
 * A column takes exactly the values `pa.array` takes the same way for its type: str (as UTF-8), bytes, an int
 * in range, a float (or an int a double holds exactly), a bool, None as null. Any other value is refused: the
 * column appends a null to stay aligned and the whole set is marked `refused`, and its rows are built again in
 * Python, which gives Arrow's own error or conversion. */
#include "_rows.h"
#include <string.h>

typedef struct {
    char kind; /* 's' string, 'S' large_string, 'b' binary, 'i' int32, 'l' int64, 'd' float64, '?' bool */
    Buf valid, offsets, data;
    Py_ssize_t n, nulls;
} Col;

struct ColumnsObject {
    PyObject_HEAD
    Py_ssize_t n_cols;
    int refused;
    Col *cols;
};

static const char KINDS[] = "sSbild?";

static int var_width(char kind) { return kind == 's' || kind == 'S' || kind == 'b'; }

static Py_ssize_t offset_width(char kind) { return kind == 'S' ? 8 : 4; }

static Py_ssize_t fixed_width(char kind) { return kind == 'i' ? 4 : kind == 'l' || kind == 'd' ? 8 : 0; }

/* Make room for bit `n` of a bitmap, a new byte starting cleared. */
static int bit_room(Buf *b, Py_ssize_t n) {
    if ((n & 7) == 0) {
        if (buf_reserve(b, 1) < 0)
            return -1;
        b->data[b->len++] = 0;
    }
    return 0;
}

static void bit_set(Buf *b, Py_ssize_t n) { b->data[n >> 3] |= (char)(1u << (n & 7)); }

static int bit_get(const Buf *b, Py_ssize_t n) { return (b->data[n >> 3] >> (n & 7)) & 1; }

/* Append the next offset of a text or binary column (its data already appended). */
static int put_offset(Col *c) {
    if (c->kind == 'S') {
        long long end = (long long)c->data.len;
        return buf_put(&c->offsets, (const char *)&end, 8);
    }
    int end = (int)c->data.len;
    return buf_put(&c->offsets, (const char *)&end, 4);
}

static int put_null(Col *c) {
    if (bit_room(&c->valid, c->n) < 0)
        return -1;
    if (var_width(c->kind)) {
        if (put_offset(c) < 0)
            return -1;
    } else if (c->kind == '?') {
        if (bit_room(&c->data, c->n) < 0)
            return -1;
    } else {
        static const char zero[8] = {0};
        if (buf_put(&c->data, zero, fixed_width(c->kind)) < 0)
            return -1;
    }
    c->n++;
    c->nulls++;
    return 0;
}

static int refuse(Columns *cols, Col *c) {
    cols->refused = 1;
    return put_null(c);
}

int col_utf8(Columns *cols, Py_ssize_t i, const char *s, Py_ssize_t len) {
    Col *c = &cols->cols[i];
    if (c->kind != 'S' && len > (Py_ssize_t)0x7fffffff - c->data.len)
        return refuse(cols, c); /* past 32-bit offsets: Arrow's own conversion decides */
    if (bit_room(&c->valid, c->n) < 0 || buf_put(&c->data, s, len) < 0 || put_offset(c) < 0)
        return -1;
    bit_set(&c->valid, c->n);
    c->n++;
    return 0;
}

static int put_fixed(Col *c, const void *v) {
    if (bit_room(&c->valid, c->n) < 0 || buf_put(&c->data, v, fixed_width(c->kind)) < 0)
        return -1;
    bit_set(&c->valid, c->n);
    c->n++;
    return 0;
}

int col_long(Columns *cols, Py_ssize_t i, long long v) {
    Col *c = &cols->cols[i];
    if (c->kind == 'i') {
        if (v < -2147483648LL || v > 2147483647LL)
            return refuse(cols, c);
        int w = (int)v;
        return put_fixed(c, &w);
    }
    if (c->kind == 'l')
        return put_fixed(c, &v);
    if (c->kind == 'd') {
        if (v < -(1LL << 53) || v > (1LL << 53))
            return refuse(cols, c);
        double d = (double)v;
        return put_fixed(c, &d);
    }
    return refuse(cols, c);
}

int col_value(Columns *cols, Py_ssize_t i, PyObject *v) {
    Col *c = &cols->cols[i];
    if (v == Py_None)
        return put_null(c);
    switch (c->kind) {
    case 's':
    case 'S': {
        if (!PyUnicode_CheckExact(v))
            return refuse(cols, c);
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(v, &len);
        if (s == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
                return -1;
            PyErr_Clear(); /* a lone surrogate */
            return refuse(cols, c);
        }
        return col_utf8(cols, i, s, len);
    }
    case 'b':
        if (!PyBytes_CheckExact(v))
            return refuse(cols, c);
        return col_utf8(cols, i, PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v));
    case 'i':
    case 'l':
    case 'd': {
        if (c->kind == 'd' && PyFloat_CheckExact(v)) {
            double d = PyFloat_AS_DOUBLE(v);
            return put_fixed(c, &d);
        }
        if (!PyLong_CheckExact(v))
            return refuse(cols, c);
        int overflow;
        long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (n == -1 && PyErr_Occurred())
            return -1;
        if (overflow)
            return refuse(cols, c);
        return col_long(cols, i, n);
    }
    case '?':
        if (v != Py_True && v != Py_False)
            return refuse(cols, c);
        if (bit_room(&c->valid, c->n) < 0 || bit_room(&c->data, c->n) < 0)
            return -1;
        bit_set(&c->valid, c->n);
        if (v == Py_True)
            bit_set(&c->data, c->n);
        c->n++;
        return 0;
    }
    return refuse(cols, c);
}

Py_ssize_t cols_rows(Columns *cols) { return cols->n_cols ? cols->cols[0].n : 0; }

void cols_rewind(Columns *cols, Py_ssize_t rows) {
    for (Py_ssize_t i = 0; i < cols->n_cols; i++) {
        Col *c = &cols->cols[i];
        if (rows >= c->n)
            continue;
        for (Py_ssize_t r = rows; r < c->n; r++)
            c->nulls -= !bit_get(&c->valid, r);
        Py_ssize_t bytes = (rows + 7) >> 3;
        unsigned char keep = (unsigned char)((1u << (rows & 7)) - 1);
        c->valid.len = bytes;
        if (rows & 7)
            c->valid.data[bytes - 1] &= (char)keep;
        if (var_width(c->kind)) {
            Py_ssize_t w = offset_width(c->kind);
            if (w == 8) {
                long long end;
                memcpy(&end, c->offsets.data + rows * 8, 8);
                c->data.len = (Py_ssize_t)end;
            } else {
                int end;
                memcpy(&end, c->offsets.data + rows * 4, 4);
                c->data.len = end;
            }
            c->offsets.len = (rows + 1) * w;
        } else if (c->kind == '?') {
            c->data.len = bytes;
            if (rows & 7)
                c->data.data[bytes - 1] &= (char)keep;
        } else {
            c->data.len = rows * fixed_width(c->kind);
        }
        c->n = rows;
    }
}

int columns_check(PyObject *o) { return PyObject_TypeCheck(o, &ColumnsType); }

/* ---- the Python type ---- */

static void columns_dealloc(Columns *self) {
    for (Py_ssize_t i = 0; i < self->n_cols; i++) {
        buf_free(&self->cols[i].valid);
        buf_free(&self->cols[i].offsets);
        buf_free(&self->cols[i].data);
    }
    PyMem_Free(self->cols);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int columns_init(Columns *self, PyObject *args, PyObject *kwds) {
    const char *kinds;
    Py_ssize_t n;
    static char *names[] = {"kinds", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "s#:Columns", names, &kinds, &n))
        return -1;
    if (self->cols != NULL) {
        PyErr_SetString(PyExc_TypeError, "Columns: already set up");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (kinds[i] == 0 || strchr(KINDS, kinds[i]) == NULL) {
            PyErr_Format(PyExc_ValueError, "Columns: the kind at %zd is none of %s", i, KINDS);
            return -1;
        }
    self->cols = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Col));
    if (self->cols == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->n_cols = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        self->cols[i].kind = kinds[i];
        if (var_width(kinds[i]) && put_offset(&self->cols[i]) < 0)
            return -1;
    }
    return 0;
}

static PyObject *columns_append(Columns *self, PyObject *row) {
    if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != self->n_cols) {
        PyErr_Format(PyExc_ValueError, "Columns.append: a tuple of %zd values expected", self->n_cols);
        return NULL;
    }
    Py_ssize_t rows = cols_rows(self);
    for (Py_ssize_t i = 0; i < self->n_cols; i++)
        if (col_value(self, i, PyTuple_GET_ITEM(row, i)) < 0) {
            cols_rewind(self, rows);
            return NULL;
        }
    Py_RETURN_NONE;
}

static PyObject *columns_extend(Columns *self, PyObject *rows) {
    PyObject *it = PyObject_GetIter(rows), *row;
    if (it == NULL)
        return NULL;
    while ((row = PyIter_Next(it)) != NULL) {
        PyObject *done = columns_append(self, row);
        Py_DECREF(row);
        if (done == NULL) {
            Py_DECREF(it);
            return NULL;
        }
        Py_DECREF(done);
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *bytes_of(const Buf *b) { return PyBytes_FromStringAndSize(b->data ? b->data : "", b->len); }

static PyObject *columns_buffers(Columns *self, PyObject *unused) {
    (void)unused;
    if (self->refused) {
        PyErr_SetString(PyExc_ValueError, "Columns.buffers: a value was refused; build these rows in Python");
        return NULL;
    }
    PyObject *out = PyList_New(self->n_cols);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < self->n_cols; i++) {
        Col *c = &self->cols[i];
        PyObject *valid = c->nulls ? bytes_of(&c->valid) : Py_NewRef(Py_None);
        PyObject *offsets = var_width(c->kind) ? bytes_of(&c->offsets) : Py_NewRef(Py_None);
        PyObject *data = bytes_of(&c->data);
        PyObject *item = (valid && offsets && data) ? Py_BuildValue("(nOOO)", c->nulls, valid, offsets, data) : NULL;
        Py_XDECREF(valid);
        Py_XDECREF(offsets);
        Py_XDECREF(data);
        if (item == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, item);
    }
    return out;
}

static Py_ssize_t columns_len(Columns *self) { return cols_rows(self); }

static PyObject *columns_refused(Columns *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->refused);
}

static PyMethodDef columns_methods[] = {
    {"append", (PyCFunction)columns_append, METH_O, "append(row): one row, a tuple of a value per column."},
    {"extend", (PyCFunction)columns_extend, METH_O, "extend(rows): `append` of each row."},
    {"buffers", (PyCFunction)columns_buffers, METH_NOARGS,
     "buffers() -> [(null_count, validity | None, offsets | None, data)]: each column's Arrow buffers."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef columns_getset[] = {
    {"refused", (getter)columns_refused, NULL, "A value was refused: the rows must be built in Python.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods columns_as_sequence = {.sq_length = (lenfunc)columns_len};

PyTypeObject ColumnsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rsr_core.store._rows.Columns",
    .tp_basicsize = sizeof(Columns),
    .tp_dealloc = (destructor)columns_dealloc,
    .tp_as_sequence = &columns_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Columns(kinds): a table's rows as Arrow buffers, one kind letter a column (sSbild?).",
    .tp_methods = columns_methods,
    .tp_getset = columns_getset,
    .tp_init = (initproc)columns_init,
    .tp_new = PyType_GenericNew,
};
