/* The per-step part of `arrow_rows.located_tables`, in C: one trajectory's step, action and command rows,
 * its search-term rows, its usage sums and, for the common shape of a run, its training key.
 *
 * The Python code stays the definition: `arrow_rows.py` (the rows, `stored_extra`'s short form of kept tool
 * calls), `store/columns.py` (`term_rows`), `formats/commands.py` (`split_commands`) and `formats/training.py`
 * (`stored_training`). This module
 * gives the same values, object for object, and says so by returning None where it does not take a case on:
 * a value of an unexpected type leaves the whole trajectory to Python (its rows are taken back), a run whose
 * training key depends on a rule not written out here (thinking, tool turns, Terminus 1, hand-offs, media,
 * kept messages or observations) leaves only the key to Python. tests/store/test_native_rows.py holds the two
 * side by side on the test corpora and on generated trajectories.
 *
 * Inputs are model objects built by the readers (str, int, float, bool, None, list, dict); nothing here reads
 * a file or parses JSON. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

/* Set by configure(): */
static PyObject *step_fields;   /* tuple of str: STEP_FIELDS */
static PyObject *extra_json;    /* callable(step) -> str | None: `_json(stored_extra(step))` */
static PyObject *key_of;        /* callable(bytes) -> bytes: the BLAKE2b digest of `messages_key` */
static PyObject *confirmation;  /* str: Terminus 2's "are you sure?" message (`in_dialogue`) */
static unsigned char term_table[256]; /* `columns._DELIMIT`: a byte of a term maps to itself, others to a space */
static Py_ssize_t term_min, term_max; /* `columns.TERM_MIN`, `TERM_MAX` */

/* Interned names. */
static PyObject *s_index, *s_source, *s_message, *s_analysis, *s_plan, *s_commands, *s_observation,
    *s_task_complete, *s_harness_control, *s_private_guidance, *s_copied_context, *s_prompt_tokens,
    *s_completion_tokens, *s_cost_usd, *s_extra, *s_keystrokes, *s_duration, *s_function_name,
    *s_tool_call_id, *s_arguments, *s_atif, *s_tool_calls, *s_answer, *s_cached_tokens, *s_agent,
    *s_empty, *s_no_steps, *s_mark_complete, *s_newline, *s_dotted_i, *s_i, *s_lower;
static PyObject *int_zero, *float_zero;

/* ---- a growable byte buffer ---- */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t more) {
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

static int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

static int buf_str(Buf *b, const char *s) { return buf_put(b, s, (Py_ssize_t)strlen(s)); }

static void buf_free(Buf *b) {
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* `json.encoder.encode_basestring` (ensure_ascii=False) of UTF-8 text, quotes included. */
static int buf_json_string(Buf *b, const char *s, Py_ssize_t n) {
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
static PyObject *field(PyObject *dict, PyObject *obj, PyObject *name) {
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

static PyObject *instance_dict(PyObject *obj) {
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
static int is_name(PyObject *o, PyObject *name) {
    if (o == name)
        return 1;
    if (!PyUnicode_Check(o))
        return 0;
    return PyUnicode_Compare(o, name) == 0 ? 1 : (PyErr_Occurred() ? -1 : 0);
}

/* ---- split_commands ---- */

static const char *TMUX_KEYS[] = {"C-c", "C-d", "C-z", "Escape", "Enter", "Tab", "Up",
                                  "Down", "Left", "Right", "BSpace", "q", NULL};

static int is_tmux_key(int kind, const void *data, Py_ssize_t b, Py_ssize_t e) {
    for (const char **k = TMUX_KEYS; *k; k++) {
        Py_ssize_t n = (Py_ssize_t)strlen(*k);
        if (n != e - b)
            continue;
        Py_ssize_t i = 0;
        while (i < n && PyUnicode_READ(kind, data, b + i) == (Py_UCS4)(unsigned char)(*k)[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* `normalise_segment` of keys[s:e] (no "\n" in it): a new str, or Py_None (borrowed) when it is no command. */
static PyObject *segment_command(PyObject *keys, int kind, const void *data, Py_ssize_t s, Py_ssize_t e) {
    while (e > s && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, e - 1)))
        e--;
    if (e == s)
        return Py_None;
    Py_ssize_t b = s;
    while (Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b)))
        b++;
    if (is_tmux_key(kind, data, b, e))
        return Py_None;
    /* The body's words joined by one space are the body itself unless a whitespace run is not one space. */
    int simple = 1;
    for (Py_ssize_t i = b; i < e; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISSPACE(c) && (c != ' ' || Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i + 1)))) {
            simple = 0;
            break;
        }
    }
    if (simple)
        return PyUnicode_Substring(keys, s, e);
    PyObject *lead = PyUnicode_Substring(keys, s, b);
    PyObject *body = PyUnicode_Substring(keys, b, e);
    PyObject *words = body ? PyUnicode_Split(body, NULL, -1) : NULL;
    PyObject *space = PyUnicode_FromStringAndSize(" ", 1);
    PyObject *joined = (words && space) ? PyUnicode_Join(space, words) : NULL;
    PyObject *out = (lead && joined) ? PyUnicode_Concat(lead, joined) : NULL;
    Py_XDECREF(lead);
    Py_XDECREF(body);
    Py_XDECREF(words);
    Py_XDECREF(space);
    Py_XDECREF(joined);
    return out;
}

/* ---- the short form of kept tool calls (`stored_extra`) ---- */

/* `_json(stored_extra(step))` where extra is exactly {"_atif": {"tool_calls": [...]}} and the calls are the
 * canonical ones under other ids: the JSON text of {"_atif": {"tool_calls": {"ids": [...]}}}. New ref; Py_None
 * (new ref) when the calls are not that, for Python to write; NULL on error. */
static PyObject *short_extra(PyObject *extra, int agent, PyObject *commands, int complete) {
    Buf b = {0};
    PyObject *kept = PyDict_GetItemWithError(extra, s_atif);
    if (kept == NULL || !PyDict_Check(kept) || PyDict_GET_SIZE(kept) != 1 || PyDict_GET_SIZE(extra) != 1)
        goto python;
    PyObject *calls = PyDict_GetItemWithError(kept, s_tool_calls);
    if (calls == NULL || !PyList_Check(calls))
        goto python;
    Py_ssize_t n_cmd = agent ? PyList_GET_SIZE(commands) : 0;
    Py_ssize_t n_written = agent ? n_cmd + (complete ? 1 : 0) : 0;
    if (PyList_GET_SIZE(calls) != n_written)
        goto python;
    if (buf_str(&b, "{\"_atif\": {\"tool_calls\": {\"ids\": [") < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < n_written; i++) {
        PyObject *call = PyList_GET_ITEM(calls, i);
        if (!PyDict_Check(call) || PyDict_GET_SIZE(call) != 3)
            goto python_buf;
        /* list(call) == ["tool_call_id", "function_name", "arguments"] */
        Py_ssize_t pos = 0, k = 0;
        PyObject *key, *value, *call_id = NULL, *name = NULL, *args = NULL;
        PyObject *order[3] = {s_tool_call_id, s_function_name, s_arguments};
        while (PyDict_Next(call, &pos, &key, &value)) {
            int same = PyObject_RichCompareBool(key, order[k], Py_EQ);
            if (same < 0)
                goto error_buf;
            if (!same)
                goto python_buf;
            if (k == 0)
                call_id = value;
            else if (k == 1)
                name = value;
            else
                args = value;
            k++;
        }
        if (!PyUnicode_CheckExact(call_id) || !PyDict_CheckExact(args))
            goto python_buf;
        if (i < n_cmd) {
            PyObject *cmd = PyList_GET_ITEM(commands, i);
            PyObject *cd = instance_dict(cmd);
            PyObject *fn = field(cd, cmd, s_function_name);
            PyObject *ks = fn ? field(cd, cmd, s_keystrokes) : NULL;
            PyObject *du = ks ? field(cd, cmd, s_duration) : NULL;
            Py_XDECREF(cd);
            if (du == NULL) {
                Py_XDECREF(fn);
                Py_XDECREF(ks);
                goto error_buf;
            }
            int ok = PyObject_RichCompareBool(name, fn, Py_EQ);
            if (ok == 1)
                ok = PyDict_GET_SIZE(args) == 2;
            if (ok == 1) {
                Py_ssize_t p = 0;
                PyObject *ak, *av, *a_keys = NULL, *a_dur = NULL;
                int j = 0;
                while (ok == 1 && PyDict_Next(args, &p, &ak, &av)) {
                    ok = PyObject_RichCompareBool(ak, j == 0 ? s_keystrokes : s_duration, Py_EQ);
                    if (j == 0)
                        a_keys = av;
                    else
                        a_dur = av;
                    j++;
                }
                if (ok == 1)
                    ok = PyObject_RichCompareBool(a_keys, ks, Py_EQ);
                if (ok == 1)
                    ok = PyObject_RichCompareBool(a_dur, du, Py_EQ);
                if (ok == 1)
                    ok = PyFloat_CheckExact(a_dur) && PyUnicode_CheckExact(a_keys);
            }
            Py_DECREF(fn);
            Py_DECREF(ks);
            Py_DECREF(du);
            if (ok < 0)
                goto error_buf;
            if (!ok)
                goto python_buf;
        } else {
            int ok = is_name(name, s_mark_complete);
            if (ok < 0)
                goto error_buf;
            if (!ok || PyDict_GET_SIZE(args) != 0)
                goto python_buf;
        }
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(call_id, &n);
        if (s == NULL) {
            PyErr_Clear(); /* a lone surrogate: json writes it, Python's way */
            goto python_buf;
        }
        if ((i && buf_put(&b, ", ", 2) < 0) || buf_json_string(&b, s, n) < 0)
            goto error_buf;
    }
    if (buf_str(&b, "]}}}") < 0)
        goto error_buf;
    PyObject *out = PyUnicode_DecodeUTF8(b.data, b.len, "strict");
    buf_free(&b);
    return out;
python_buf:
    buf_free(&b);
python:
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
error_buf:
    buf_free(&b);
    return NULL;
}

/* ---- the training key (`stored_training`) for the common shape of a run ---- */

enum { R_SYSTEM, R_USER, R_ASSISTANT };
static const char *ROLE_NAMES[] = {"system", "user", "assistant"};

typedef struct {
    PyObject *d;        /* the step's instance dict (owned) */
    PyObject *step;     /* borrowed */
    PyObject *source, *message, *analysis, *plan, *commands, *observation, *answer; /* borrowed from d */
    int agent, complete, removed;
} TStep;

typedef struct {
    int role;
    Buf text; /* UTF-8 */
    TStep *step;
} Msg;

typedef struct {
    Msg *items;
    Py_ssize_t n, cap;
} Msgs;

static void msgs_free(Msgs *m) {
    for (Py_ssize_t i = 0; i < m->n; i++)
        buf_free(&m->items[i].text);
    PyMem_Free(m->items);
}

static Msg *msgs_push(Msgs *m, int role, TStep *step) {
    if (m->n == m->cap) {
        Py_ssize_t cap = m->cap ? m->cap * 2 : 16;
        Msg *items = PyMem_Realloc(m->items, (size_t)cap * sizeof(Msg));
        if (items == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        m->items = items;
        m->cap = cap;
    }
    Msg *msg = &m->items[m->n++];
    msg->role = role;
    msg->text.data = NULL;
    msg->text.len = msg->text.cap = 0;
    msg->step = step;
    return msg;
}

/* UTF-8 of a str; 0 with *ok = 0 where Python must judge (not a str, or a lone surrogate). */
static const char *utf8(PyObject *s, Py_ssize_t *n, int *ok) {
    if (!PyUnicode_Check(s)) {
        *ok = 0;
        return NULL;
    }
    const char *p = PyUnicode_AsUTF8AndSize(s, n);
    if (p == NULL) {
        PyErr_Clear();
        *ok = 0;
    }
    return p;
}

static int is_blank(PyObject *s) { /* s.strip() == "" for a str */
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)))
            return 0;
    return 1;
}

/* The first character that is not whitespace, or 0. */
static Py_UCS4 first_char(PyObject *s) {
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (!Py_UNICODE_ISSPACE(c))
            return c;
    }
    return 0;
}

/* Could `split_thinking` find thinking in this text? (A tag opening it, or a closing tag anywhere.) */
static int may_think(PyObject *s) {
    if (first_char(s) == '<')
        return 1;
    PyObject *close = PyUnicode_FromStringAndSize("</", 2);
    if (close == NULL)
        return -1;
    Py_ssize_t at = PyUnicode_Find(s, close, 0, PyUnicode_GET_LENGTH(s), 1);
    Py_DECREF(close);
    if (at == -2)
        return -1;
    return at >= 0;
}

/* `terminus_json(analysis, plan, commands, complete)` appended to b; 0 with *ok = 0 where Python must write it. */
static int terminus_json(Buf *b, PyObject *analysis, PyObject *plan, PyObject *commands, int complete, int *ok) {
    Py_ssize_t n;
    const char *s = utf8(analysis, &n, ok);
    if (!*ok)
        return 0;
    if (buf_str(b, "{\n  \"analysis\": ") < 0 || buf_json_string(b, s, n) < 0)
        return -1;
    s = utf8(plan, &n, ok);
    if (!*ok)
        return 0;
    if (buf_str(b, ",\n  \"plan\": ") < 0 || buf_json_string(b, s, n) < 0 || buf_str(b, ",\n  \"commands\": ") < 0)
        return -1;
    Py_ssize_t count = PyList_GET_SIZE(commands);
    if (count == 0 && buf_str(b, "[]") < 0)
        return -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *cmd = PyList_GET_ITEM(commands, i);
        PyObject *cd = instance_dict(cmd);
        PyObject *ks = field(cd, cmd, s_keystrokes);
        PyObject *du = ks ? field(cd, cmd, s_duration) : NULL;
        Py_XDECREF(cd);
        if (du == NULL) {
            Py_XDECREF(ks);
            return -1;
        }
        int rc = 0;
        s = utf8(ks, &n, ok);
        if (*ok && !(PyFloat_CheckExact(du) && isfinite(PyFloat_AS_DOUBLE(du))))
            *ok = 0;
        if (*ok) {
            char *repr = PyOS_double_to_string(PyFloat_AS_DOUBLE(du), 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
            if (repr == NULL)
                rc = -1;
            else {
                if (buf_str(b, i ? ",\n    {\n      \"keystrokes\": " : "[\n    {\n      \"keystrokes\": ") < 0 ||
                    buf_json_string(b, s, n) < 0 || buf_str(b, ",\n      \"duration\": ") < 0 ||
                    buf_str(b, repr) < 0 || buf_str(b, "\n    }") < 0)
                    rc = -1;
                PyMem_Free(repr);
            }
        }
        Py_DECREF(ks);
        Py_DECREF(du);
        if (rc < 0 || !*ok)
            return rc;
    }
    if (count && buf_str(b, "\n  ]") < 0)
        return -1;
    if (buf_str(b, complete ? ",\n  \"task_complete\": true\n}" : ",\n  \"task_complete\": false\n}") < 0)
        return -1;
    return 0;
}

static int truth(PyObject *d, PyObject *obj, PyObject *name) {
    PyObject *v = field(d, obj, name);
    if (v == NULL)
        return -1;
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    return t;
}

/* Is this agent turn made of tool calls other than Terminus' own (`uses_tools`)? -1 error, 2 unsure. */
static int uses_tools(TStep *t, PyObject *kept) {
    static const char *TOOLS[] = {"bash_command", "mark_task_complete", "task_complete", NULL};
    PyObject *calls = kept ? PyDict_GetItemWithError(kept, s_tool_calls) : NULL;
    if (calls == NULL && PyErr_Occurred())
        return -1;
    PyObject *list = calls && PyList_Check(calls) ? calls : t->commands;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *item = PyList_GET_ITEM(list, i), *name;
        if (list == calls) {
            if (!PyDict_Check(item))
                continue;
            name = PyDict_GetItemWithError(item, s_function_name);
            if (name == NULL)
                return PyErr_Occurred() ? -1 : 1; /* None is not a Terminus tool */
            Py_INCREF(name);
        } else {
            PyObject *cd = instance_dict(item);
            name = field(cd, item, s_function_name);
            Py_XDECREF(cd);
            if (name == NULL)
                return -1;
        }
        int found = 0;
        if (!PyUnicode_CheckExact(name)) {
            Py_DECREF(name);
            return 2;
        }
        for (const char **k = TOOLS; *k && !found; k++)
            found = PyUnicode_CompareWithASCIIString(name, *k) == 0;
        Py_DECREF(name);
        if (!found)
            return 1;
    }
    return 0;
}

/* Fill `t` from a step; 1 taken, 0 where Python must work the key out, -1 error. */
static int read_tstep(TStep *t, PyObject *step) {
    t->step = step;
    t->d = instance_dict(step);
    if (t->d == NULL)
        return 0;
#define GET(var, name)                                                                                         \
    do {                                                                                                       \
        var = PyDict_GetItemWithError(t->d, name);                                                             \
        if (var == NULL)                                                                                       \
            return PyErr_Occurred() ? -1 : 0;                                                                  \
    } while (0)
    PyObject *extra, *flag;
    GET(t->source, s_source);
    GET(t->message, s_message);
    GET(t->analysis, s_analysis);
    GET(t->plan, s_plan);
    GET(t->commands, s_commands);
    GET(t->observation, s_observation);
    GET(extra, s_extra);
    if (!PyUnicode_CheckExact(t->source) || !PyUnicode_CheckExact(t->message) || !PyList_Check(t->commands) ||
        !PyDict_Check(extra) || !(t->observation == Py_None || PyUnicode_CheckExact(t->observation)) ||
        !(t->analysis == Py_None || PyUnicode_CheckExact(t->analysis)) ||
        !(t->plan == Py_None || PyUnicode_CheckExact(t->plan)))
        return 0;
    GET(flag, s_task_complete);
    if (!PyBool_Check(flag))
        return 0;
    t->complete = flag == Py_True;
    int guidance, copied, control;
    GET(flag, s_private_guidance);
    if ((guidance = PyObject_IsTrue(flag)) < 0)
        return -1;
    GET(flag, s_copied_context);
    if ((copied = PyObject_IsTrue(flag)) < 0)
        return -1;
    GET(flag, s_harness_control);
    if ((control = PyObject_IsTrue(flag)) < 0)
        return -1;
#undef GET
    int is_user = PyUnicode_CompareWithASCIIString(t->source, "user") == 0;
    int dialogue = control && is_user && PyUnicode_Compare(t->message, confirmation) == 0;
    if (PyErr_Occurred())
        return -1;
    t->removed = guidance || copied || (control && !dialogue);
    t->agent = PyUnicode_CompareWithASCIIString(t->source, "agent") == 0;
    if (!t->agent && !is_user && PyUnicode_CompareWithASCIIString(t->source, "system") != 0)
        return 0;
    /* The step extra keys the training rules read: only the answer as returned and kept tool calls here. */
    Py_ssize_t pos = 0;
    PyObject *key, *value, *kept = NULL;
    t->answer = NULL;
    while (PyDict_Next(extra, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key))
            return 0;
        if (PyUnicode_Compare(key, s_atif) == 0) {
            if (!PyDict_Check(value))
                return 0;
            Py_ssize_t p = 0;
            PyObject *k2, *v2;
            while (PyDict_Next(value, &p, &k2, &v2))
                if (!PyUnicode_CheckExact(k2) || PyUnicode_Compare(k2, s_tool_calls) != 0)
                    return 0; /* a kept message or observation: media, tool results */
            kept = value;
        } else if (PyUnicode_Compare(key, s_answer) == 0) {
            t->answer = value;
        } else if (PyUnicode_Compare(key, s_cached_tokens) != 0) {
            return 0;
        }
    }
    if (t->agent) {
        int tools = uses_tools(t, kept);
        if (tools < 0)
            return -1;
        if (tools)
            return 0;
    }
    return 1;
}

typedef struct {
    int role;
    PyObject *text; /* str, borrowed; NULL: `built` holds the UTF-8 */
    Buf built;
    TStep *step;
} Turn;

/* The training key of a run whose steps are `steps`: a new (key, why) tuple, Py_None (new ref) where Python
 * must work it out, NULL on error. */
static PyObject *training(PyObject *steps) {
    Py_ssize_t n = PyList_GET_SIZE(steps), n_kept = 0, n_turns = 0;
    TStep *all = PyMem_Calloc((size_t)(n ? n : 1), sizeof(TStep));
    TStep **kept = PyMem_Calloc((size_t)(n ? n : 1), sizeof(TStep *));
    Turn *turns = PyMem_Calloc((size_t)(2 * n + 1), sizeof(Turn));
    Msgs msgs = {0};
    Buf key = {0};
    PyObject *result = NULL;
    int ok = 1;
    if (!all || !kept || !turns) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int rc = read_tstep(&all[i], PyList_GET_ITEM(steps, i));
        if (rc < 0)
            goto done;
        if (rc == 0) {
            ok = 0;
            goto done;
        }
    }
    /* training_steps */
    int removed = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        TStep *t = &all[i];
        if (t->removed) {
            removed = 1;
            continue;
        }
        TStep *prev = n_kept ? kept[n_kept - 1] : NULL;
        if (prev && prev->agent && prev->observation == Py_None && t->agent && PyList_GET_SIZE(t->commands) == 0 &&
            (removed || (prev->complete && t->complete)))
            continue;
        kept[n_kept++] = t;
        removed = 0;
    }
    /* _turns */
    for (Py_ssize_t i = 0; i < n_kept; i++) {
        TStep *t = kept[i];
        if (!t->agent) {
            if (!is_blank(t->message)) {
                int role = PyUnicode_CompareWithASCIIString(t->source, "system") == 0 ? R_SYSTEM : R_USER;
                turns[n_turns++] = (Turn){role, t->message, {0}, NULL};
            }
            continue;
        }
        Turn *turn = &turns[n_turns];
        *turn = (Turn){R_ASSISTANT, NULL, {0}, t};
        if (t->answer != NULL && PyUnicode_Check(t->answer)) {
            if (!PyUnicode_CheckExact(t->answer)) {
                ok = 0;
                goto done;
            }
            turn->text = t->answer;
        } else {
            int think = may_think(t->message);
            if (think < 0)
                goto done;
            if (think) {
                ok = 0;
                goto done;
            }
            Py_UCS4 c = first_char(t->message);
            if ((c == '{' || c == '`') && t->analysis != Py_None)
                turn->text = t->message;
            else if (t->analysis == Py_None && t->plan == Py_None) {
                if (PyList_GET_SIZE(t->commands) == 0 && !t->complete)
                    turn->text = t->message;
                else if (terminus_json(&turn->built, t->message, s_empty, t->commands, t->complete, &ok) < 0)
                    goto done;
            } else if (terminus_json(&turn->built, t->analysis == Py_None ? s_empty : t->analysis,
                                     t->plan == Py_None ? s_empty : t->plan, t->commands, t->complete, &ok) < 0)
                goto done;
            if (!ok) {
                buf_free(&turn->built);
                goto done;
            }
        }
        if (turn->text == NULL || !is_blank(turn->text))
            n_turns++; /* a built answer is never blank */
        else
            buf_free(&turn->built);
        if (t->observation != Py_None && !is_blank(t->observation))
            turns[n_turns++] = (Turn){R_USER, t->observation, {0}, NULL};
    }
    Py_ssize_t first = -1, last = -1;
    int has_user = 0;
    for (Py_ssize_t i = 0; i < n_turns; i++) {
        if (turns[i].role == R_ASSISTANT) {
            if (first < 0)
                first = i;
            last = i;
        } else if (first < 0 && turns[i].role == R_USER)
            has_user = 1;
    }
    if (first < 0) {
        result = Py_BuildValue("(OO)", Py_None, s_no_steps);
        goto done;
    }
    if (!has_user) { /* the row takes the task's instruction: no key is stored */
        result = Py_BuildValue("(OO)", Py_None, Py_None);
        goto done;
    }
    /* _messages */
    TStep *prev_step = NULL;
    for (Py_ssize_t i = 0; i <= last; i++) {
        Turn *turn = &turns[i];
        const char *s;
        Py_ssize_t len;
        if (turn->text != NULL) {
            s = utf8(turn->text, &len, &ok);
            if (!ok)
                goto done;
        } else {
            s = turn->built.data;
            len = turn->built.len;
        }
        int role = turn->role;
        if (role == R_SYSTEM && msgs.n)
            role = R_USER;
        if (msgs.n && role == msgs.items[msgs.n - 1].role) {
            Msg *m = &msgs.items[msgs.n - 1];
            if (role != R_ASSISTANT) {
                if (buf_put(&m->text, "\n\n", 2) < 0 || buf_put(&m->text, s, len) < 0)
                    goto done;
                continue;
            }
            if (prev_step != NULL && !(PyList_GET_SIZE(prev_step->commands) || prev_step->complete)) {
                m->text.len = 0;
                if (buf_put(&m->text, s, len) < 0)
                    goto done;
                m->step = prev_step = turn->step;
                continue;
            }
            Msg *gap = msgs_push(&msgs, R_USER, NULL);
            if (gap == NULL || buf_str(&gap->text, "[no terminal output was recorded for this turn]") < 0)
                goto done;
        }
        Msg *m = msgs_push(&msgs, role, turn->step);
        if (m == NULL || buf_put(&m->text, s, len) < 0)
            goto done;
        if (role == R_ASSISTANT)
            prev_step = turn->step;
    }
    /* messages_key: each role and content, UTF-8, its length first (8 bytes, little-endian) */
    for (Py_ssize_t i = 0; i < msgs.n; i++) {
        const char *parts[2] = {ROLE_NAMES[msgs.items[i].role], msgs.items[i].text.data};
        Py_ssize_t lens[2] = {(Py_ssize_t)strlen(parts[0]), msgs.items[i].text.len};
        for (int p = 0; p < 2; p++) {
            unsigned char le[8];
            unsigned long long v = (unsigned long long)lens[p];
            for (int k = 0; k < 8; k++)
                le[k] = (unsigned char)(v >> (8 * k));
            if (buf_put(&key, (const char *)le, 8) < 0 || buf_put(&key, parts[p], lens[p]) < 0)
                goto done;
        }
    }
    PyObject *raw = PyBytes_FromStringAndSize(key.data ? key.data : "", key.len);
    if (raw == NULL)
        goto done;
    PyObject *digest = PyObject_CallOneArg(key_of, raw);
    Py_DECREF(raw);
    if (digest == NULL)
        goto done;
    result = Py_BuildValue("(NO)", digest, Py_None);
done:
    if (all)
        for (Py_ssize_t i = 0; i < n; i++)
            Py_XDECREF(all[i].d);
    if (turns)
        for (Py_ssize_t i = 0; i < 2 * n + 1; i++)
            buf_free(&turns[i].built);
    msgs_free(&msgs);
    buf_free(&key);
    PyMem_Free(all);
    PyMem_Free(kept);
    PyMem_Free(turns);
    if (result == NULL && !PyErr_Occurred() && !ok)
        Py_RETURN_NONE;
    return result;
}

/* ---- search terms (`columns.term_rows`) ---- */

static int append_new(PyObject *list, PyObject *item) { /* steals item */
    if (item == NULL)
        return -1;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}


static const char *sort_base; /* the bytes the spans below point into (qsort takes no context) */

typedef struct {
    Py_ssize_t at, len;
} Span;

static int span_order(const void *a, const void *b) {
    const Span *x = a, *y = b;
    int c = memcmp(sort_base + x->at, sort_base + y->at, (size_t)(x->len < y->len ? x->len : y->len));
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int is_split(unsigned char c) { /* bytes.split(): ASCII whitespace */
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0b' || c == '\x0c';
}

/* Append the (term, tid) rows of these texts, sorted; -1 on error. */
static int term_rows(PyObject *tid, PyObject *texts, PyObject *out, Py_ssize_t *count) {
    PyObject *text = PyUnicode_Join(s_newline, texts), *raw = NULL;
    Span *spans = NULL;
    int rc = -1;
    if (text == NULL)
        return -1;
    Py_ssize_t at = PyUnicode_FindChar(text, 0x130, 0, PyUnicode_GET_LENGTH(text), 1);
    if (at == -2)
        goto done;
    if (at >= 0)
        Py_SETREF(text, PyUnicode_Replace(text, s_dotted_i, s_i, -1));
    if (text == NULL)
        goto done;
    Py_SETREF(text, PyObject_CallMethodNoArgs(text, s_lower));
    if (text == NULL || (raw = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass")) == NULL)
        goto done;
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(raw);
    Py_ssize_t n = PyBytes_GET_SIZE(raw), n_spans = 0, cap = 0;
    for (Py_ssize_t i = 0; i < n;) {
        while (i < n && is_split(term_table[data[i]]))
            i++;
        Py_ssize_t start = i;
        while (i < n && !is_split(term_table[data[i]]))
            i++;
        if (i == start || i - start < term_min || i - start > term_max)
            continue;
        if (n_spans == cap) {
            cap = cap ? cap * 2 : 64;
            Span *grown = PyMem_Realloc(spans, (size_t)cap * sizeof(Span));
            if (grown == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            spans = grown;
        }
        spans[n_spans++] = (Span){start, i - start};
    }
    sort_base = (const char *)data;
    /* the distinct terms (an open-addressing set of spans), then sorted */
    Py_ssize_t size = 64;
    while (size < 2 * n_spans)
        size *= 2;
    Py_ssize_t *slots = PyMem_Malloc((size_t)size * sizeof(Py_ssize_t)), n_unique = 0;
    if (slots == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < size; k++)
        slots[k] = -1;
    for (Py_ssize_t k = 0; k < n_spans; k++) {
        unsigned long long h = 1469598103934665603ULL;
        for (Py_ssize_t j = 0; j < spans[k].len; j++)
            h = (h ^ data[spans[k].at + j]) * 1099511628211ULL;
        Py_ssize_t slot = (Py_ssize_t)(h & (unsigned long long)(size - 1));
        while (slots[slot] >= 0 && span_order(&spans[slots[slot]], &spans[k]) != 0)
            slot = (slot + 1) & (size - 1);
        if (slots[slot] < 0) {
            slots[slot] = k;
            spans[n_unique++] = spans[k]; /* n_unique <= k: the kept spans move down */
            slots[slot] = n_unique - 1;
        }
    }
    PyMem_Free(slots);
    n_spans = n_unique;
    if (n_spans)
        qsort(spans, (size_t)n_spans, sizeof(Span), span_order);
    *count = 0;
    for (Py_ssize_t k = 0; k < n_spans; k++) {
        char word[256];
        for (Py_ssize_t j = 0; j < spans[k].len; j++)
            word[j] = (char)term_table[data[spans[k].at + j]];
        PyObject *term = PyUnicode_DecodeASCII(word, spans[k].len, NULL);
        PyObject *row = term ? PyTuple_Pack(2, term, tid) : NULL;
        Py_XDECREF(term);
        if (append_new(out, row) < 0)
            goto done;
        (*count)++;
    }
    rc = 0;
done:
    PyMem_Free(spans);
    Py_XDECREF(text);
    Py_XDECREF(raw);
    return rc;
}

/* ---- one trajectory's rows ---- */

/* Add a to *sum as `(sum or zero) + a` does. */
static int add_to(PyObject **sum, PyObject *a, PyObject *zero) {
    PyObject *base = *sum ? *sum : zero;
    int t = PyObject_IsTrue(base);
    if (t < 0)
        return -1;
    PyObject *total = PyNumber_Add(t ? base : zero, a);
    if (total == NULL)
        return -1;
    Py_XSETREF(*sum, total);
    return 0;
}

static PyObject *trajectory_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError,
                        "trajectory_rows(tid, steps, step_rows, act_rows, cmd_rows, search_rows, terminus1)");
        return NULL;
    }
    if (step_fields == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    PyObject *tid = args[0], *steps = args[1], *step_rows = args[2], *act_rows = args[3], *cmd_rows = args[4],
             *search_rows = args[5];
    int terminus1 = PyObject_IsTrue(args[6]);
    if (terminus1 < 0)
        return NULL;
    if (!PyList_CheckExact(steps) || !PyList_CheckExact(step_rows) || !PyList_CheckExact(act_rows) ||
        !PyList_CheckExact(cmd_rows) || !PyList_CheckExact(search_rows)) {
        PyErr_SetString(PyExc_TypeError, "lists expected");
        return NULL;
    }
    Py_ssize_t rows0[4] = {PyList_GET_SIZE(step_rows), PyList_GET_SIZE(act_rows), PyList_GET_SIZE(cmd_rows),
                           PyList_GET_SIZE(search_rows)};
    Py_ssize_t n_fields = PyTuple_GET_SIZE(step_fields), seq = 0, n_actions = 0, n_agent = 0;
    PyObject *texts = PyList_New(0), *prompt = NULL, *completion = NULL, *cost = NULL, *result = NULL;
    PyObject *d = NULL, *row = NULL, *index = NULL, *commands = NULL, *src = NULL;
    int python = 0;
    if (texts == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(steps); i++) {
        PyObject *step = PyList_GET_ITEM(steps, i);
        d = instance_dict(step);
        index = field(d, step, s_index);
        row = index ? PyTuple_New(n_fields + 3) : NULL;
        if (row == NULL)
            goto error;
        Py_INCREF(tid);
        PyTuple_SET_ITEM(row, 0, tid);
        Py_INCREF(index);
        PyTuple_SET_ITEM(row, 1, index);
        for (Py_ssize_t f = 0; f < n_fields; f++) {
            PyObject *v = field(d, step, PyTuple_GET_ITEM(step_fields, f));
            if (v == NULL)
                goto error;
            PyTuple_SET_ITEM(row, 2 + f, v);
        }
        PyObject *extra = field(d, step, s_extra);
        if (extra == NULL)
            goto error;
        src = field(d, step, s_source);
        commands = src ? field(d, step, s_commands) : NULL;
        int complete = commands ? truth(d, step, s_task_complete) : -1;
        if (complete < 0) {
            Py_DECREF(extra);
            goto error;
        }
        int agent = is_name(src, s_agent);
        if (agent < 0 || !PyList_Check(commands) || !PyDict_Check(extra)) {
            Py_DECREF(extra);
            if (agent < 0)
                goto error;
            python = 1;
            goto error;
        }
        PyObject *js;
        if (PyDict_GET_SIZE(extra) == 0) {
            js = Py_NewRef(Py_None);
        } else {
            js = short_extra(extra, agent, commands, complete);
            if (js == Py_None) {
                Py_DECREF(js);
                js = PyObject_CallOneArg(extra_json, step);
            }
        }
        Py_DECREF(extra);
        if (js == NULL)
            goto error;
        PyTuple_SET_ITEM(row, n_fields + 2, js);
        if (PyList_Append(step_rows, row) < 0)
            goto error;
        /* texts: the message (or ""), the observation when there is one, then the commands */
        PyObject *message = PyTuple_GET_ITEM(row, 3), *observation = PyTuple_GET_ITEM(row, 7);
        int t = PyObject_IsTrue(message);
        if (t < 0 || PyList_Append(texts, t ? message : s_empty) < 0)
            goto error;
        t = PyObject_IsTrue(observation);
        if (t < 0 || (t && PyList_Append(texts, observation) < 0))
            goto error;
        /* usage sums (`usage_of`) */
        PyObject *pt = PyTuple_GET_ITEM(row, n_fields - 1), *ct = PyTuple_GET_ITEM(row, n_fields),
                 *cu = PyTuple_GET_ITEM(row, n_fields + 1);
        if ((pt != Py_None && add_to(&prompt, pt, int_zero) < 0) ||
            (ct != Py_None && add_to(&completion, ct, int_zero) < 0) ||
            (cu != Py_None && add_to(&cost, cu, float_zero) < 0))
            goto error;
        Py_CLEAR(row);
        if (agent) {
            n_agent++;
            n_actions += PyList_GET_SIZE(commands);
            for (Py_ssize_t a = 0; a < PyList_GET_SIZE(commands); a++) {
                PyObject *cmd = PyList_GET_ITEM(commands, a);
                PyObject *cd = instance_dict(cmd);
                PyObject *name = field(cd, cmd, s_function_name);
                PyObject *keys = name ? field(cd, cmd, s_keystrokes) : NULL;
                PyObject *dur = keys ? field(cd, cmd, s_duration) : NULL;
                Py_XDECREF(cd);
                if (dur == NULL) {
                    Py_XDECREF(name);
                    Py_XDECREF(keys);
                    goto error;
                }
                if (!PyUnicode_Check(keys)) {
                    Py_DECREF(name);
                    Py_DECREF(keys);
                    Py_DECREF(dur);
                    python = 1;
                    goto error;
                }
                PyObject *a_idx = PyLong_FromSsize_t(a);
                PyObject *act = a_idx ? PyTuple_Pack(6, tid, index, a_idx, name, keys, dur) : NULL;
                Py_DECREF(name);
                Py_DECREF(dur);
                if (append_new(act_rows, act) < 0) {
                    Py_XDECREF(a_idx);
                    Py_DECREF(keys);
                    goto error;
                }
                int kind = PyUnicode_KIND(keys);
                const void *data = PyUnicode_DATA(keys);
                Py_ssize_t len = PyUnicode_GET_LENGTH(keys), s = 0;
                for (Py_ssize_t e = 0; e <= len; e++) {
                    if (e < len && PyUnicode_READ(kind, data, e) != '\n')
                        continue;
                    PyObject *text = segment_command(keys, kind, data, s, e);
                    s = e + 1;
                    if (text == Py_None)
                        continue;
                    PyObject *seq_obj = text ? PyLong_FromSsize_t(seq) : NULL;
                    PyObject *crow = seq_obj ? PyTuple_Pack(5, tid, seq_obj, index, a_idx, text) : NULL;
                    Py_XDECREF(seq_obj);
                    int bad = append_new(cmd_rows, crow) < 0 || PyList_Append(texts, text) < 0;
                    Py_XDECREF(text);
                    if (bad) {
                        Py_DECREF(a_idx);
                        Py_DECREF(keys);
                        goto error;
                    }
                    seq++;
                }
                Py_DECREF(a_idx);
                Py_DECREF(keys);
            }
        }
        Py_CLEAR(src);
        Py_CLEAR(commands);
        Py_CLEAR(index);
        Py_CLEAR(d);
    }
    Py_ssize_t n_terms = 0;
    if (term_rows(tid, texts, search_rows, &n_terms) < 0)
        goto error;
    Py_CLEAR(texts);
    PyObject *train;
    if (terminus1)
        train = Py_NewRef(Py_None);
    else if ((train = training(steps)) == NULL)
        goto error;
    result = Py_BuildValue("(nnnnNNNN)", n_terms, n_actions, seq, n_agent, prompt ? prompt : Py_NewRef(Py_None),
                           completion ? completion : Py_NewRef(Py_None), cost ? cost : Py_NewRef(Py_None), train);
    return result;
error:
    Py_XDECREF(row);
    Py_XDECREF(d);
    Py_XDECREF(index);
    Py_XDECREF(src);
    Py_XDECREF(commands);
    Py_XDECREF(texts);
    Py_XDECREF(prompt);
    Py_XDECREF(completion);
    Py_XDECREF(cost);
    /* Nothing half done stays behind: the rows of this trajectory are taken back. */
    PyObject *lists[4] = {step_rows, act_rows, cmd_rows, search_rows};
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    for (int k = 0; k < 4; k++)
        if (PyList_GET_SIZE(lists[k]) > rows0[k])
            PyList_SetSlice(lists[k], rows0[k], PyList_GET_SIZE(lists[k]), NULL);
    PyErr_Restore(exc_type, exc_value, exc_tb);
    if (python && !PyErr_Occurred())
        Py_RETURN_NONE;
    return NULL;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *fields, *json_of, *key_fn, *confirm;
    Py_buffer table;
    Py_ssize_t low, high;
    if (!PyArg_ParseTuple(args, "O!OOUy*nn:configure", &PyTuple_Type, &fields, &json_of, &key_fn, &confirm, &table,
                          &low, &high))
        return NULL;
    int table_ok = table.len == 256 && low >= 1 && high < 256 && low <= high;
    for (Py_ssize_t b = 0; table_ok && b < 256; b++) {
        unsigned char to = ((const unsigned char *)table.buf)[b];
        table_ok = to == b || is_split(to);
    }
    if (table_ok)
        memcpy(term_table, table.buf, 256);
    PyBuffer_Release(&table);
    if (!table_ok) {
        PyErr_SetString(PyExc_ValueError, "term table: each byte maps to itself or to whitespace; 1 <= min <= max < 256");
        return NULL;
    }
    term_min = low;
    term_max = high;
    Py_ssize_t n = PyTuple_GET_SIZE(fields);
    const char *want[] = {"source", "message", "prompt_tokens", "completion_tokens", "cost_usd"};
    Py_ssize_t at[] = {0, 1, n - 3, n - 2, n - 1};
    for (int i = 0; i < 5; i++)
        if (n < 6 || !PyUnicode_Check(PyTuple_GET_ITEM(fields, at[i])) ||
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(fields, at[i]), want[i]) != 0) {
            PyErr_Format(PyExc_ValueError, "step fields: expected %s at %zd", want[i], at[i]);
            return NULL;
        }
    if (n < 6 || PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(fields, 5), "observation") != 0) {
        PyErr_SetString(PyExc_ValueError, "step fields: expected observation at 5");
        return NULL;
    }
    Py_XSETREF(step_fields, Py_NewRef(fields));
    Py_XSETREF(extra_json, Py_NewRef(json_of));
    Py_XSETREF(key_of, Py_NewRef(key_fn));
    Py_XSETREF(confirmation, Py_NewRef(confirm));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(step_fields, extra_json, key_of, confirmation, term_table, term_min, term_max): what the rows are "
     "made of."},
    {"trajectory_rows", (PyCFunction)(void (*)(void))trajectory_rows, METH_FASTCALL,
     "trajectory_rows(tid, steps, step_rows, act_rows, cmd_rows, search_rows, terminus1) -> (n_terms, n_actions, "
     "n_commands, "
     "n_agent, prompt_tokens, completion_tokens, cost_usd, (training_key, training_why) | None) | None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rows", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rows(void) {
    struct {
        PyObject **var;
        const char *text;
    } names[] = {
        {&s_index, "index"}, {&s_source, "source"}, {&s_message, "message"}, {&s_analysis, "analysis"},
        {&s_plan, "plan"}, {&s_commands, "commands"}, {&s_observation, "observation"},
        {&s_task_complete, "task_complete"}, {&s_harness_control, "harness_control"},
        {&s_private_guidance, "private_guidance"}, {&s_copied_context, "copied_context"},
        {&s_prompt_tokens, "prompt_tokens"}, {&s_completion_tokens, "completion_tokens"},
        {&s_cost_usd, "cost_usd"}, {&s_extra, "extra"}, {&s_keystrokes, "keystrokes"},
        {&s_duration, "duration"}, {&s_function_name, "function_name"}, {&s_tool_call_id, "tool_call_id"},
        {&s_arguments, "arguments"}, {&s_atif, "_atif"}, {&s_tool_calls, "tool_calls"}, {&s_answer, "answer"},
        {&s_cached_tokens, "cached_tokens"}, {&s_agent, "agent"}, {&s_empty, ""}, {&s_no_steps, "no_steps"},
        {&s_mark_complete, "mark_task_complete"}, {&s_newline, "\n"}, {&s_dotted_i, "\xc4\xb0"}, {&s_i, "i"},
        {&s_lower, "lower"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((*names[i].var = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    if ((int_zero = PyLong_FromLong(0)) == NULL || (float_zero = PyFloat_FromDouble(0.0)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
