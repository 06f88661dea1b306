/* `atif_read.parse_steps` in C, for the steps harbor's Terminus 2 writes: the same Step and Command models,
 * field for field.
 *
 * The Python function stays the definition. This module takes on steps of the keys step_id, timestamp, source,
 * model_name, message, reasoning_content, tool_calls, observation and metrics, each of the type those steps
 * hold (text as str, counts as int, calls with their arguments as an object and keystrokes as text, results
 * of text content); anything else in any step (a step `extra`, copied context, content parts, arguments as a
 * JSON string, a value of another type, an error to report) makes it return None, and `parse_steps` reads the
 * whole list itself. tests/formats/test_native_steps.py holds the two side by side. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Set by configure(). */
static PyObject *step_cls, *command_cls;     /* the models */
static PyObject *step_names, *command_names; /* their field names, in order (tuples) */
static PyObject *step_set, *command_set;     /* the same names as frozensets: each model's fields set copies one */
static PyObject *step_blank, *command_blank; /* the same names as dicts of None: each model's __dict__ copies one */
static PyObject *is_control;                 /* callable(str) -> bool: `is_control_message` */
static Py_ssize_t max_steps;

static PyObject *s_step_id, *s_timestamp, *s_source, *s_model_name, *s_message, *s_reasoning_content,
    *s_tool_calls, *s_observation, *s_metrics, *s_function_name, *s_arguments, *s_keystrokes, *s_command,
    *s_cmd, *s_duration, *s_timeout_sec, *s_prompt_tokens, *s_completion_tokens, *s_cost_usd,
    *s_cached_tokens, *s_results, *s_content, *s_tool_call_id, *s_atif, *s_agent, *s_user,
    *s_system, *s_analysis_head, *s_plan_head, *s_newline, *s_fields_set, *s_extra_attr, *s_private_attr,
    *s_dict_attr, *s_mark_complete, *s_source_call_id;
static PyObject *float_one, *int_one;
static const char *COMPLETE_TOOLS[] = {"mark_task_complete", "task_complete", "submit", NULL};

#define BAIL 0 /* hand the list back to Python */

/* A model as `construct` makes it: its fields as its __dict__, all of them set (`names`: a frozenset, copied
 * without hashing its names again). New ref, NULL on error. */
static PyObject *make_model(PyObject *cls, PyObject *names, PyObject *values) {
    PyObject *empty = PyTuple_New(0);
    if (empty == NULL)
        return NULL;
    PyObject *obj = PyBaseObject_Type.tp_new((PyTypeObject *)cls, empty, NULL);
    Py_DECREF(empty);
    if (obj == NULL)
        return NULL;
    PyObject *set = PySet_New(names);
    if (set == NULL || PyObject_GenericSetAttr(obj, s_dict_attr, values) < 0 ||
        PyObject_GenericSetAttr(obj, s_fields_set, set) < 0 ||
        PyObject_GenericSetAttr(obj, s_extra_attr, Py_None) < 0 ||
        PyObject_GenericSetAttr(obj, s_private_attr, Py_None) < 0) {
        Py_XDECREF(set);
        Py_DECREF(obj);
        return NULL;
    }
    Py_DECREF(set);
    return obj;
}

/* values[i] set under names[i]: a new dict in the model's field order (a copy of `blank`, which holds the names
 * in that order: no dict grows as its fields are set). Steals the values. */
static PyObject *fields(PyObject *blank, PyObject *names, PyObject **values, Py_ssize_t n) {
    PyObject *d = PyDict_Copy(blank);
    int bad = d == NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!bad && (values[i] == NULL || PyDict_SetItem(d, PyTuple_GET_ITEM(names, i), values[i]) < 0))
            bad = 1;
        Py_XDECREF(values[i]);
    }
    if (bad) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* s.strip() for a str: a new ref. */
static PyObject *strip(PyObject *s, Py_ssize_t start, Py_ssize_t end) {
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    while (start < end && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, start)))
        start++;
    while (end > start && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)))
        end--;
    return PyUnicode_Substring(s, start, end);
}

/* `split_message`: (analysis, plan) of "Analysis: …\nPlan: …", or (None, None). New refs in *a, *p. */
static int split_message(PyObject *message, PyObject **a, PyObject **p) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(message);
    *a = *p = NULL;
    Py_ssize_t head = PyUnicode_Tailmatch(message, s_analysis_head, 0, n, -1);
    if (head < 0)
        return -1;
    if (!head) {
        *a = Py_NewRef(Py_None);
        *p = Py_NewRef(Py_None);
        return 0;
    }
    Py_ssize_t start = PyUnicode_GET_LENGTH(s_analysis_head);
    Py_ssize_t at = PyUnicode_Find(message, s_plan_head, start, n, 1);
    if (at == -2)
        return -1;
    if (at < 0) {
        *a = strip(message, start, n);
        *p = Py_NewRef(Py_None);
        return *a ? 0 : -1;
    }
    *a = strip(message, start, at);
    *p = strip(message, at + PyUnicode_GET_LENGTH(s_plan_head), n);
    return (*a && *p) ? 0 : -1;
}

static int in_names(PyObject *name, const char **names) {
    for (const char **k = names; *k; k++)
        if (PyUnicode_CompareWithASCIIString(name, *k) == 0)
            return 1;
    return 0;
}

/* "call_<step>_<n>" */
static PyObject *call_id(PyObject *step_id, const char *tail, Py_ssize_t n) {
    if (PyLong_CheckExact(step_id)) { /* the usual step id: written here, as str() writes an int */
        int overflow;
        long long id = PyLong_AsLongLongAndOverflow(step_id, &overflow);
        if (id == -1 && PyErr_Occurred())
            return NULL;
        if (!overflow) {
            char text[96];
            int len = tail != NULL ? snprintf(text, sizeof(text), "call_%lld_%s", id, tail)
                                   : snprintf(text, sizeof(text), "call_%lld_%zd", id, n);
            if (len > 0 && (size_t)len < sizeof(text))
                return PyUnicode_FromStringAndSize(text, len);
        }
    }
    if (tail != NULL)
        return PyUnicode_FromFormat("call_%S_%s", step_id, tail);
    return PyUnicode_FromFormat("call_%S_%zd", step_id, n);
}

/* One step's tool calls: its Command models appended to `commands`, *complete set; 1 taken, BAIL, -1. */
static int read_calls(PyObject *raw, PyObject *commands, int *complete) {
    if (!PyList_CheckExact(raw))
        return BAIL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(raw); i++) {
        PyObject *call = PyList_GET_ITEM(raw, i);
        if (!PyDict_CheckExact(call))
            return BAIL;
        PyObject *name = PyDict_GetItemWithError(call, s_function_name);
        PyObject *args = name ? PyDict_GetItemWithError(call, s_arguments) : NULL;
        if (args == NULL)
            return PyErr_Occurred() ? -1 : BAIL;
        if (!PyUnicode_CheckExact(name) || !PyDict_CheckExact(args))
            return BAIL;
        if (in_names(name, COMPLETE_TOOLS)) {
            *complete = 1;
            continue;
        }
        PyObject *keys = PyDict_GetItemWithError(args, s_keystrokes);
        if (keys == NULL) {
            if (PyErr_Occurred())
                return -1;
            int other = PyDict_Contains(args, s_command);
            if (other == 0)
                other = PyDict_Contains(args, s_cmd);
            if (other != 0)
                return other < 0 ? -1 : BAIL; /* `keystrokes_of_call`'s other keys: Python's */
            continue;                         /* no keystrokes: no command */
        }
        if (!PyUnicode_CheckExact(keys))
            return BAIL;
        PyObject *duration = PyDict_GetItemWithError(args, s_duration);
        if (duration == NULL && !PyErr_Occurred())
            duration = PyDict_GetItemWithError(args, s_timeout_sec);
        if (PyErr_Occurred())
            return -1;
        PyObject *seconds;
        if (duration != NULL && PyFloat_CheckExact(duration))
            seconds = Py_NewRef(duration);
        else if (duration != NULL && PyLong_CheckExact(duration)) {
            if ((seconds = PyNumber_Float(duration)) == NULL) {
                PyErr_Clear(); /* too large for a float: Python's error */
                return BAIL;
            }
        } else if (duration == NULL || !(PyLong_Check(duration) || PyFloat_Check(duration)) || PyBool_Check(duration))
            seconds = Py_NewRef(float_one);
        else
            return BAIL; /* a number of a subclass */
        /* Command's fields: keystrokes, duration, function_name */
        PyObject *values[3] = {Py_NewRef(keys), seconds, Py_NewRef(name)};
        PyObject *d = fields(command_blank, command_names, values, 3);
        PyObject *cmd = d ? make_model(command_cls, command_set, d) : NULL;
        Py_XDECREF(d);
        if (cmd == NULL || PyList_Append(commands, cmd) < 0) {
            Py_XDECREF(cmd);
            return -1;
        }
        Py_DECREF(cmd);
    }
    return 1;
}

/* A new dict of `n` (interned name, value) pairs given in turn, the values borrowed (what Py_BuildValue's "{sO…}"
 * makes, without making each name again from C text). NULL on error, a NULL value included. */
static PyObject *dict_of(int n, ...) {
    PyObject *d = PyDict_New();
    va_list pairs;
    va_start(pairs, n);
    for (int i = 0; d != NULL && i < n; i++) {
        PyObject *key = va_arg(pairs, PyObject *), *value = va_arg(pairs, PyObject *);
        if (value == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_SystemError, "NULL object passed to dict_of");
            Py_CLEAR(d);
        } else if (PyDict_SetItem(d, key, value) < 0)
            Py_CLEAR(d);
    }
    va_end(pairs);
    return d;
}

/* `canonical_tool_calls(step_id, "agent", commands, complete)` as Python objects. New ref. */
static PyObject *canonical_calls(PyObject *step_id, PyObject *commands, int complete) {
    Py_ssize_t n = PyList_GET_SIZE(commands);
    PyObject *calls = PyList_New(0);
    if (calls == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *id, *name, *args;
        if (i < n) {
            PyObject *cd = PyObject_GenericGetDict(PyList_GET_ITEM(commands, i), NULL);
            if (cd == NULL)
                goto error;
            /* built above: keystrokes, duration, function_name */
            id = call_id(step_id, NULL, i + 1);
            name = Py_NewRef(PyDict_GetItem(cd, PyTuple_GET_ITEM(command_names, 2)));
            args = dict_of(2, s_keystrokes, PyDict_GetItem(cd, PyTuple_GET_ITEM(command_names, 0)), s_duration,
                           PyDict_GetItem(cd, PyTuple_GET_ITEM(command_names, 1)));
            Py_DECREF(cd);
        } else if (complete) {
            id = call_id(step_id, "done", 0);
            name = Py_NewRef(s_mark_complete);
            args = PyDict_New();
        } else
            break;
        PyObject *call =
            (id && args) ? dict_of(3, s_tool_call_id, id, s_function_name, name, s_arguments, args) : NULL;
        Py_XDECREF(id);
        Py_XDECREF(name);
        Py_XDECREF(args);
        if (call == NULL || PyList_Append(calls, call) < 0) {
            Py_XDECREF(call);
            goto error;
        }
        Py_DECREF(call);
    }
    return calls;
error:
    Py_DECREF(calls);
    return NULL;
}

/* The observation's text ("\n"-joined results); BAIL for shapes Python reads (subagents, content parts). */
static int observation_text(PyObject *raw, PyObject **text) {
    if (!PyDict_CheckExact(raw))
        return BAIL;
    PyObject *results = PyDict_GetItemWithError(raw, s_results);
    if (results == NULL)
        return PyErr_Occurred() ? -1 : BAIL;
    if (!PyList_CheckExact(results))
        return BAIL;
    PyObject *parts = PyList_New(0);
    if (parts == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(results); i++) {
        PyObject *res = PyList_GET_ITEM(results, i);
        PyObject *content = PyDict_CheckExact(res) ? PyDict_GetItemWithError(res, s_content) : NULL;
        if (content == NULL || !PyUnicode_CheckExact(content)) {
            Py_DECREF(parts);
            return PyErr_Occurred() ? -1 : BAIL;
        }
        if (PyList_Append(parts, content) < 0) {
            Py_DECREF(parts);
            return -1;
        }
    }
    *text = PyUnicode_Join(s_newline, parts);
    Py_DECREF(parts);
    return *text ? 1 : -1;
}

/* `canonical_observation(text, calls)` */
static PyObject *canonical_observation(PyObject *text, PyObject *calls) {
    PyObject *result;
    if (PyList_GET_SIZE(calls)) {
        PyObject *first = PyList_GET_ITEM(calls, 0);
        PyObject *id = PyDict_Check(first) ? PyDict_GetItemWithError(first, s_tool_call_id) : NULL;
        if (id == NULL)
            return NULL; /* kept calls whose first has no id: Python's (a KeyError there) */
        result = dict_of(2, s_source_call_id, id, s_content, text);
    } else
        result = dict_of(1, s_content, text);
    PyObject *list = result ? PyList_New(1) : NULL;
    if (list == NULL) {
        Py_XDECREF(result);
        return NULL;
    }
    PyList_SET_ITEM(list, 0, result);
    PyObject *out = dict_of(1, s_results, list);
    Py_DECREF(list);
    return out;
}

/* One step: a new Step model, BAIL (None in *out) or -1. */
static int read_step(PyObject *raw, Py_ssize_t i, int *seen_user, PyObject **out) {
    *out = NULL;
    if (!PyDict_CheckExact(raw))
        return BAIL;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    PyObject *step_id = NULL, *timestamp = Py_None, *source = NULL, *model_name = Py_None, *message = NULL,
             *reasoning = Py_None, *tool_calls = Py_None, *observation = Py_None, *metrics = Py_None;
    while (PyDict_Next(raw, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key))
            return BAIL;
#define KEY(name, var)                                                                                         \
    if (PyUnicode_Compare(key, name) == 0) {                                                                   \
        var = value;                                                                                           \
        continue;                                                                                              \
    }
        KEY(s_step_id, step_id)
        KEY(s_timestamp, timestamp)
        KEY(s_source, source)
        KEY(s_model_name, model_name)
        KEY(s_message, message)
        KEY(s_reasoning_content, reasoning)
        KEY(s_tool_calls, tool_calls)
        KEY(s_observation, observation)
        KEY(s_metrics, metrics)
#undef KEY
        return BAIL; /* extra, is_copied_context, or a key the store keeps as written */
    }
    if (step_id == NULL || !PyLong_CheckExact(step_id) || source == NULL || !PyUnicode_CheckExact(source) ||
        message == NULL || !PyUnicode_CheckExact(message))
        return BAIL;
    Py_ssize_t sid = PyLong_AsSsize_t(step_id);
    if (sid == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return BAIL;
    }
    if (sid != i + 1)
        return BAIL;
    int agent = PyUnicode_Compare(source, s_agent) == 0, user = PyUnicode_Compare(source, s_user) == 0;
    if (!agent && !user && PyUnicode_Compare(source, s_system) != 0)
        return BAIL;
    if (!(timestamp == Py_None || PyUnicode_CheckExact(timestamp)) ||
        !(reasoning == Py_None || PyUnicode_Check(reasoning)) || (PyUnicode_Check(reasoning) && !PyUnicode_CheckExact(reasoning)) ||
        (PyUnicode_Check(model_name) && !PyUnicode_CheckExact(model_name)))
        return BAIL;
    if (!(metrics == Py_None || PyDict_CheckExact(metrics)))
        return BAIL;
    PyObject *prompt = Py_None, *completion = Py_None, *cost = Py_None, *cached = Py_None;
    if (metrics != Py_None) {
        prompt = PyDict_GetItemWithError(metrics, s_prompt_tokens);
        completion = PyDict_GetItemWithError(metrics, s_completion_tokens);
        cost = PyDict_GetItemWithError(metrics, s_cost_usd);
        cached = PyDict_GetItemWithError(metrics, s_cached_tokens);
        if (PyErr_Occurred())
            return -1;
        prompt = prompt ? prompt : Py_None;
        completion = completion ? completion : Py_None;
        cost = cost ? cost : Py_None;
        cached = cached ? cached : Py_None;
        if (!(prompt == Py_None || PyLong_CheckExact(prompt)) || !(completion == Py_None || PyLong_CheckExact(completion)) ||
            !(cost == Py_None || PyFloat_CheckExact(cost)))
            return BAIL;
    }
    int rc = -1, complete = 0;
    PyObject *commands = PyList_New(0), *analysis = NULL, *plan = NULL, *text = NULL, *extra = NULL,
             *written = NULL, *kept = NULL;
    if (commands == NULL)
        return -1;
    if (tool_calls != Py_None && (rc = read_calls(tool_calls, commands, &complete)) <= 0)
        goto done;
    rc = -1;
    if (agent) {
        if (split_message(message, &analysis, &plan) < 0)
            goto done;
        if (analysis == Py_None) {
            int kind = PyUnicode_KIND(message);
            const void *data = PyUnicode_DATA(message);
            Py_ssize_t k = 0, n = PyUnicode_GET_LENGTH(message);
            while (k < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, k)))
                k++;
            if (k < n && PyUnicode_READ(kind, data, k) == '{') {
                rc = BAIL; /* a JSON answer: Python reads it leniently */
                goto done;
            }
        }
    } else {
        analysis = Py_NewRef(Py_None);
        plan = Py_NewRef(Py_None);
    }
    int control = 0;
    if (!agent && *seen_user) {
        PyObject *hit = PyObject_CallOneArg(is_control, message);
        if (hit == NULL)
            goto done;
        control = PyObject_IsTrue(hit);
        Py_DECREF(hit);
        if (control < 0)
            goto done;
    }
    *seen_user = *seen_user || user;
    if (observation != Py_None) {
        int got = observation_text(observation, &text);
        if (got <= 0) {
            rc = got;
            goto done;
        }
    } else
        text = Py_NewRef(Py_None);
    /* `_kept_structures`: calls and observation as written where the export would not write them the same */
    if ((extra = PyDict_New()) == NULL || (kept = PyDict_New()) == NULL)
        goto done;
    if (cached != Py_None && PyDict_SetItem(extra, s_cached_tokens, cached) < 0)
        goto done;
    written = agent ? canonical_calls(step_id, commands, complete) : PyList_New(0);
    if (written == NULL)
        goto done;
    if (tool_calls != Py_None) {
        int differ = PyObject_RichCompareBool(tool_calls, written, Py_NE);
        if (differ < 0)
            goto done;
        if (differ) {
            PyObject *calls = PyList_GetSlice(tool_calls, 0, PyList_GET_SIZE(tool_calls));
            if (calls == NULL || PyDict_SetItem(kept, s_tool_calls, calls) < 0) {
                Py_XDECREF(calls);
                goto done;
            }
            Py_SETREF(written, calls);
        }
    }
    if (observation != Py_None) {
        PyObject *canon = canonical_observation(text, written);
        if (canon == NULL) {
            rc = PyErr_Occurred() ? -1 : BAIL;
            goto done;
        }
        int differ = PyObject_RichCompareBool(observation, canon, Py_NE);
        Py_DECREF(canon);
        if (differ < 0 || (differ && PyDict_SetItem(kept, s_observation, observation) < 0))
            goto done;
    }
    if (PyDict_GET_SIZE(kept) && PyDict_SetItem(extra, s_atif, kept) < 0)
        goto done;
    PyObject *index = PyLong_FromSsize_t(i + 1);
    /* Step's fields, in order */
    PyObject *values[] = {
        Py_NewRef(int_one),                         /* schema_version */
        index,                                      /* index */
        Py_NewRef(source),                          /* source */
        Py_NewRef(message),                         /* message */
        Py_NewRef(analysis),                        /* analysis */
        Py_NewRef(plan),                            /* plan */
        Py_NewRef(reasoning),                       /* reasoning */
        Py_NewRef(commands),                        /* commands */
        Py_NewRef(text),                            /* observation */
        Py_NewRef(complete ? Py_True : Py_False),   /* task_complete */
        Py_NewRef(control ? Py_True : Py_False),    /* harness_control */
        Py_NewRef(Py_False),                        /* private_guidance */
        Py_NewRef(Py_False),                        /* copied_context */
        Py_NewRef(PyUnicode_Check(model_name) ? model_name : Py_None),
        Py_NewRef(timestamp),                       /* timestamp */
        Py_NewRef(prompt),                          /* prompt_tokens */
        Py_NewRef(completion),                      /* completion_tokens */
        Py_NewRef(cost),                            /* cost_usd */
        Py_NewRef(extra),                           /* extra */
    };
    PyObject *d = fields(step_blank, step_names, values, (Py_ssize_t)(sizeof(values) / sizeof(values[0])));
    if (d == NULL)
        goto done;
    *out = make_model(step_cls, step_set, d);
    Py_DECREF(d);
    rc = *out ? 1 : -1;
done:
    Py_XDECREF(commands);
    Py_XDECREF(analysis);
    Py_XDECREF(plan);
    Py_XDECREF(text);
    Py_XDECREF(extra);
    Py_XDECREF(kept);
    Py_XDECREF(written);
    return rc;
}

static PyObject *parse_steps(PyObject *self, PyObject *raw_steps) {
    (void)self;
    if (step_cls == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    if (!PyList_CheckExact(raw_steps) || PyList_GET_SIZE(raw_steps) > max_steps)
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(raw_steps);
    PyObject *steps = PyList_New(n);
    if (steps == NULL)
        return NULL;
    int seen_user = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *step;
        int rc = read_step(PyList_GET_ITEM(raw_steps, i), i, &seen_user, &step);
        if (rc <= 0) {
            Py_DECREF(steps); /* the slots not filled yet are NULL, which a list frees as nothing */
            if (rc < 0)
                return NULL;
            Py_RETURN_NONE;
        }
        PyList_SET_ITEM(steps, i, step);
    }
    return steps;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *sc, *sn, *cc, *cn, *ctl;
    Py_ssize_t most;
    if (!PyArg_ParseTuple(args, "OO!OO!On:configure", &sc, &PyTuple_Type, &sn, &cc, &PyTuple_Type, &cn, &ctl,
                          &most))
        return NULL;
    static const char *STEP[] = {"schema_version", "index", "source", "message", "analysis", "plan", "reasoning",
                                 "commands", "observation", "task_complete", "harness_control",
                                 "private_guidance", "copied_context", "model_name", "timestamp",
                                 "prompt_tokens", "completion_tokens", "cost_usd", "extra", NULL};
    static const char *COMMAND[] = {"keystrokes", "duration", "function_name", NULL};
    const char **want[2] = {STEP, COMMAND};
    PyObject *got[2] = {sn, cn};
    for (int m = 0; m < 2; m++) {
        Py_ssize_t k = 0;
        for (; want[m][k]; k++)
            if (k >= PyTuple_GET_SIZE(got[m]) || !PyUnicode_Check(PyTuple_GET_ITEM(got[m], k)) ||
                PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(got[m], k), want[m][k]) != 0) {
                PyErr_Format(PyExc_ValueError, "model fields: expected %s at %zd", want[m][k], k);
                return NULL;
            }
        if (k != PyTuple_GET_SIZE(got[m])) {
            PyErr_SetString(PyExc_ValueError, "model fields: more than this module builds");
            return NULL;
        }
    }
    if (!PyType_Check(sc) || !PyType_Check(cc)) {
        PyErr_SetString(PyExc_TypeError, "model classes expected");
        return NULL;
    }
    PyObject *ss = PyFrozenSet_New(sn), *cs = ss ? PyFrozenSet_New(cn) : NULL;
    PyObject *sb = cs ? PyDict_New() : NULL, *cb = sb ? PyDict_New() : NULL;
    for (Py_ssize_t k = 0; cb != NULL && k < PyTuple_GET_SIZE(sn); k++)
        if (PyDict_SetItem(sb, PyTuple_GET_ITEM(sn, k), Py_None) < 0)
            Py_CLEAR(cb);
    for (Py_ssize_t k = 0; cb != NULL && k < PyTuple_GET_SIZE(cn); k++)
        if (PyDict_SetItem(cb, PyTuple_GET_ITEM(cn, k), Py_None) < 0)
            Py_CLEAR(cb);
    if (cb == NULL) {
        Py_XDECREF(ss);
        Py_XDECREF(cs);
        Py_XDECREF(sb);
        return NULL;
    }
    Py_XSETREF(step_cls, Py_NewRef(sc));
    Py_XSETREF(step_names, Py_NewRef(sn));
    Py_XSETREF(step_set, ss);
    Py_XSETREF(step_blank, sb);
    Py_XSETREF(command_cls, Py_NewRef(cc));
    Py_XSETREF(command_names, Py_NewRef(cn));
    Py_XSETREF(command_set, cs);
    Py_XSETREF(command_blank, cb);
    Py_XSETREF(is_control, Py_NewRef(ctl));
    max_steps = most;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Step, step_fields, Command, command_fields, is_control_message, max_steps)"},
    {"parse_steps", parse_steps, METH_O, "parse_steps(raw_steps) -> list[Step] | None (None: Python's to read)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_steps", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__steps(void) {
    struct {
        PyObject **var;
        const char *text;
    } names[] = {
        {&s_step_id, "step_id"}, {&s_timestamp, "timestamp"}, {&s_source, "source"},
        {&s_model_name, "model_name"}, {&s_message, "message"}, {&s_reasoning_content, "reasoning_content"},
        {&s_tool_calls, "tool_calls"}, {&s_observation, "observation"}, {&s_metrics, "metrics"},
        {&s_function_name, "function_name"}, {&s_arguments, "arguments"}, {&s_keystrokes, "keystrokes"},
        {&s_command, "command"}, {&s_cmd, "cmd"}, {&s_duration, "duration"}, {&s_timeout_sec, "timeout_sec"},
        {&s_prompt_tokens, "prompt_tokens"}, {&s_completion_tokens, "completion_tokens"},
        {&s_cost_usd, "cost_usd"}, {&s_cached_tokens, "cached_tokens"}, {&s_results, "results"},
        {&s_content, "content"}, {&s_tool_call_id, "tool_call_id"},
        {&s_atif, "_atif"}, {&s_agent, "agent"}, {&s_user, "user"}, {&s_system, "system"},
        {&s_analysis_head, "Analysis:"}, {&s_plan_head, "\nPlan:"}, {&s_newline, "\n"},
        {&s_fields_set, "__pydantic_fields_set__"}, {&s_extra_attr, "__pydantic_extra__"},
        {&s_private_attr, "__pydantic_private__"}, {&s_dict_attr, "__dict__"},
        {&s_mark_complete, "mark_task_complete"}, {&s_source_call_id, "source_call_id"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((*names[i].var = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    if ((float_one = PyFloat_FromDouble(1.0)) == NULL || (int_one = PyLong_FromLong(1)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
