/* The training key of a run in C (`training.stored_training`), for the common shape of a run: see _rows.c. The
 * rules written out here are those of `training_steps`, `_turns`, `_said`, `terminus_json`, `_messages` and
 * `messages_key`; a run that needs another (thinking, tool turns, Terminus 1, hand-offs, media, kept messages or
 * observations, a value of another type) is left to Python. */
#include "_rows.h"
#include <math.h>
#include <string.h>

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

static Msg *msgs_push(Msgs *m, int role) {
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
        PyObject *fn, *ks, *du;
        if (command_fields(PyList_GET_ITEM(commands, i), &fn, &ks, &du) < 0)
            return -1;
        Py_DECREF(fn);
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
PyObject *training(PyObject *steps) {
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
                prev_step = turn->step;
                continue;
            }
            Msg *gap = msgs_push(&msgs, R_USER);
            if (gap == NULL || buf_str(&gap->text, "[no terminal output was recorded for this turn]") < 0)
                goto done;
        }
        Msg *m = msgs_push(&msgs, role);
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

