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
#include "_rows.h"
#include <string.h>

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
            PyObject *fn, *ks, *du;
            if (command_fields(PyList_GET_ITEM(commands, i), &fn, &ks, &du) < 0)
                goto error_buf;
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
    PyObject *tid = args[0], *steps = args[1];
    int terminus1 = PyObject_IsTrue(args[6]);
    if (terminus1 < 0)
        return NULL;
    if (!PyList_CheckExact(steps) || !columns_check(args[2]) || !columns_check(args[3]) ||
        !columns_check(args[4]) || !columns_check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "a list of steps and four Columns expected");
        return NULL;
    }
    Columns *step_rows = (Columns *)args[2], *act_rows = (Columns *)args[3], *cmd_rows = (Columns *)args[4],
            *search_rows = (Columns *)args[5];
    Columns *sinks[4] = {step_rows, act_rows, cmd_rows, search_rows};
    Py_ssize_t rows0[4] = {cols_rows(step_rows), cols_rows(act_rows), cols_rows(cmd_rows), cols_rows(search_rows)};
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
        for (Py_ssize_t k = 0; k < n_fields + 3; k++)
            if (col_value(step_rows, k, PyTuple_GET_ITEM(row, k)) < 0)
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
                PyObject *name, *keys, *dur;
                if (command_fields(PyList_GET_ITEM(commands, a), &name, &keys, &dur) < 0)
                    goto error;
                if (!PyUnicode_Check(keys)) {
                    Py_DECREF(name);
                    Py_DECREF(keys);
                    Py_DECREF(dur);
                    python = 1;
                    goto error;
                }
                int bad = col_value(act_rows, 0, tid) < 0 || col_value(act_rows, 1, index) < 0 ||
                          col_long(act_rows, 2, a) < 0 || col_value(act_rows, 3, name) < 0 ||
                          col_value(act_rows, 4, keys) < 0 || col_value(act_rows, 5, dur) < 0;
                Py_DECREF(name);
                Py_DECREF(dur);
                if (bad) {
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
                    int bad = text == NULL || col_value(cmd_rows, 0, tid) < 0 || col_long(cmd_rows, 1, seq) < 0 ||
                              col_value(cmd_rows, 2, index) < 0 || col_long(cmd_rows, 3, a) < 0 ||
                              col_value(cmd_rows, 4, text) < 0 || PyList_Append(texts, text) < 0;
                    Py_XDECREF(text);
                    if (bad) {
                        Py_DECREF(keys);
                        goto error;
                    }
                    seq++;
                }
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
    for (int k = 0; k < 4; k++)
        cols_rewind(sinks[k], rows0[k]);
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
        table_ok = (to == b && b < 0x80) || is_split(to); /* a term is ASCII, as the rule decodes it */
    }
    if (table_ok)
        memcpy(term_table, table.buf, 256);
    PyBuffer_Release(&table);
    if (!table_ok) {
        PyErr_SetString(PyExc_ValueError,
                        "term table: each ASCII byte maps to itself or to whitespace, any other to whitespace; "
                        "1 <= min <= max < 256");
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
{&s_extra, "extra"}, {&s_keystrokes, "keystrokes"},
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
    if (PyType_Ready(&ColumnsType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddObjectRef(m, "Columns", (PyObject *)&ColumnsType) < 0)
        Py_CLEAR(m);
    return m;
}

