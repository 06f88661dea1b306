/* The shared parts of rsr_core.store._rows (see _rows.c): what configure() sets, the interned names, a growable
 * byte buffer with JSON string writing, and reading model fields. */
#include "_rows.h"
#include <string.h>

/* Set by configure(): */
PyObject *step_fields;   /* tuple of str: STEP_FIELDS */
PyObject *extra_json;    /* callable(step) -> str | None: `_json(stored_extra(step))` */
PyObject *key_of;        /* callable(bytes) -> bytes: the BLAKE2b digest of `messages_key` */
PyObject *confirmation;  /* str: Terminus 2's "are you sure?" message (`in_dialogue`) */
unsigned char term_table[256]; /* `columns.TERM_DELIMIT`: a byte of a term maps to itself, others to a space */
Py_ssize_t term_min, term_max; /* `columns.TERM_MIN`, `TERM_MAX` */

/* Interned names. */
PyObject *s_index, *s_source, *s_message, *s_analysis, *s_plan, *s_commands, *s_observation,
    *s_task_complete, *s_harness_control, *s_private_guidance, *s_copied_context,
    *s_extra, *s_keystrokes, *s_duration, *s_function_name,
    *s_tool_call_id, *s_arguments, *s_atif, *s_tool_calls, *s_answer, *s_cached_tokens, *s_agent,
    *s_empty, *s_no_steps, *s_mark_complete, *s_newline, *s_dotted_i, *s_i, *s_lower;
PyObject *int_zero, *float_zero;

/* ---- a growable byte buffer ---- */

int buf_reserve(Buf *b, Py_ssize_t more) {
    if (more > PY_SSIZE_T_MAX - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t need = b->len + more;
    if (need <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > PY_SSIZE_T_MAX / 2 ? need : cap * 2;
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

int buf_str(Buf *b, const char *s) { return buf_put(b, s, (Py_ssize_t)strlen(s)); }

void buf_free(Buf *b) {
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* `json.encoder.encode_basestring` (ensure_ascii=False) of UTF-8 text, quotes included. */
int buf_json_string(Buf *b, const char *s, Py_ssize_t n) {
    static const char hex[] = "0123456789abcdef";
    if (buf_reserve(b, n + 2) < 0)
        return -1;
    b->data[b->len++] = '"';
    Py_ssize_t start = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (buf_put(b, s + start, i - start) < 0)
            return -1;
        start = i + 1;
        char esc[7];
        Py_ssize_t k = 2;
        esc[0] = '\\';
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            k = 6;
        }
        if (buf_put(b, esc, k) < 0)
            return -1;
    }
    if (buf_put(b, s + start, n - start) < 0 || buf_put(b, "\"", 1) < 0)
        return -1;
    return 0;
}

/* ---- reading model fields ---- */

/* A field of a model: from its instance dict (how the readers build them), else by attribute. New ref. */
PyObject *field(PyObject *dict, PyObject *obj, PyObject *name) {
    if (dict != NULL) {
        PyObject *v = PyDict_GetItemWithError(dict, name);
        if (v != NULL) {
            Py_INCREF(v);
            return v;
        }
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_GetAttr(obj, name);
}

PyObject *instance_dict(PyObject *obj) {
    PyObject *d = PyObject_GenericGetDict(obj, NULL);
    if (d == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (!PyDict_Check(d)) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* Is `o` exactly the str `name`? (-1 on error) */
int is_name(PyObject *o, PyObject *name) {
    if (o == name)
        return 1;
    if (!PyUnicode_Check(o))
        return 0;
    return PyUnicode_Compare(o, name) == 0 ? 1 : (PyErr_Occurred() ? -1 : 0);
}

int is_split(unsigned char c) { /* bytes.split(): ASCII whitespace */
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0b' || c == '\x0c';
}

int truth(PyObject *d, PyObject *obj, PyObject *name) {
    PyObject *v = field(d, obj, name);
    if (v == NULL)
        return -1;
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    return t;
}

int command_fields(PyObject *cmd, PyObject **name, PyObject **keys, PyObject **duration) {
    PyObject *cd = instance_dict(cmd);
    *name = field(cd, cmd, s_function_name);
    *keys = *name ? field(cd, cmd, s_keystrokes) : NULL;
    *duration = *keys ? field(cd, cmd, s_duration) : NULL;
    Py_XDECREF(cd);
    if (*duration != NULL)
        return 0;
    Py_CLEAR(*name);
    Py_CLEAR(*keys);
    return -1;
}
