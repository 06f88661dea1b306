/* Shared by the files of rsr_core.store._rows (see _rows.c): what configure() set, the interned names, the byte
 * buffer and the model-reading helpers. */
#ifndef RSR_ROWS_H
#define RSR_ROWS_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Set by configure(): */
extern PyObject *step_fields;   /* tuple of str: STEP_FIELDS */
extern PyObject *extra_json;    /* callable(step) -> str | None: `_json(stored_extra(step))` */
extern PyObject *key_of;        /* callable(bytes) -> bytes: the BLAKE2b digest of `messages_key` */
extern PyObject *confirmation;  /* str: Terminus 2's "are you sure?" message (`in_dialogue`) */
extern unsigned char term_table[256]; /* `columns.TERM_DELIMIT`: a byte of a term maps to itself, others to a space */
extern Py_ssize_t term_min, term_max; /* `columns.TERM_MIN`, `TERM_MAX` */

/* Interned names. */
extern PyObject *s_index, *s_source, *s_message, *s_analysis, *s_plan, *s_commands, *s_observation,
    *s_task_complete, *s_harness_control, *s_private_guidance, *s_copied_context,
    *s_extra, *s_keystrokes, *s_duration, *s_function_name,
    *s_tool_call_id, *s_arguments, *s_atif, *s_tool_calls, *s_answer, *s_cached_tokens, *s_agent,
    *s_empty, *s_no_steps, *s_mark_complete, *s_newline, *s_dotted_i, *s_i, *s_lower;
extern PyObject *int_zero, *float_zero;

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

int buf_reserve(Buf *b, Py_ssize_t more);
int buf_put(Buf *b, const char *s, Py_ssize_t n);
int buf_str(Buf *b, const char *s);
void buf_free(Buf *b);
/* `json.encoder.encode_basestring` (ensure_ascii=False) of UTF-8 text, quotes included. */
int buf_json_string(Buf *b, const char *s, Py_ssize_t n);

/* A field of a model: from its instance dict, else by attribute. New ref. */
PyObject *field(PyObject *dict, PyObject *obj, PyObject *name);
/* The instance dict of a model (new ref), or NULL (no error set). */
PyObject *instance_dict(PyObject *obj);
/* Is `o` exactly the str `name`? (-1 on error) */
int is_name(PyObject *o, PyObject *name);
/* A Command model's function name, keystrokes and duration (new refs); -1 with none of them on error. */
int command_fields(PyObject *cmd, PyObject **name, PyObject **keys, PyObject **duration);
/* The truth of a field (-1 on error). */
int truth(PyObject *d, PyObject *obj, PyObject *name);
/* ASCII whitespace, as bytes.split() splits on. */
int is_split(unsigned char c);

/* A table's rows as Arrow buffers (_rows_columns.c). Each col_ call appends one value to column `i`
 * (0, or -1 with an error set); a value the column cannot take as `pa.array` would marks the set refused. */
typedef struct ColumnsObject Columns;
extern PyTypeObject ColumnsType;
int columns_check(PyObject *o);
int col_value(Columns *cols, Py_ssize_t i, PyObject *v);
int col_utf8(Columns *cols, Py_ssize_t i, const char *s, Py_ssize_t len);
int col_long(Columns *cols, Py_ssize_t i, long long v);
/* Rows in the set; the set cut back to its first `rows` rows. */
Py_ssize_t cols_rows(Columns *cols);
void cols_rewind(Columns *cols, Py_ssize_t rows);

/* The training key of a run (_rows_training.c): a new (key, why) tuple, Py_None where Python must work it out. */
PyObject *training(PyObject *steps);
/* Append the sorted (term, tid) rows of these texts (_rows_terms.c); their number in *count; -1 on error. */
int term_rows(PyObject *tid, PyObject *texts, Columns *out, Py_ssize_t *count);

#endif
