/* `reading.too_deep` in C: does a parsed JSON value nest objects and arrays (exactly dict and list) more than
 * `limit` levels deep, the root being level 1? The Python function stays the definition;
 * tests/formats/test_native_depth.py holds the two side by side. The walk goes at most `limit` calls deep. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static int container(PyObject *o) { return PyDict_CheckExact(o) || PyList_CheckExact(o); }

/* Is a container below `value` (a container at level `level`) at level limit + 1? */
static int deeper(PyObject *value, Py_ssize_t level, Py_ssize_t limit) {
    if (PyList_CheckExact(value)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            PyObject *child = PyList_GET_ITEM(value, i);
            if (container(child) && (level == limit || deeper(child, level + 1, limit)))
                return 1;
        }
        return 0;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *child;
    while (PyDict_Next(value, &pos, &key, &child))
        if (container(child) && (level == limit || deeper(child, level + 1, limit)))
            return 1;
    return 0;
}

static PyObject *too_deep(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "too_deep(value, limit)");
        return NULL;
    }
    Py_ssize_t limit = PyLong_AsSsize_t(args[1]);
    if (limit == -1 && PyErr_Occurred())
        return NULL;
    if (limit < 1 || !container(args[0]))
        Py_RETURN_FALSE;
    return PyBool_FromLong(deeper(args[0], 1, limit));
}

static PyMethodDef methods[] = {
    {"too_deep", (PyCFunction)(void (*)(void))too_deep, METH_FASTCALL, "too_deep(value, limit) -> bool"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_depth", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__depth(void) { return PyModule_Create(&module); }
