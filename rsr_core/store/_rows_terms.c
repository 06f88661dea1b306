/* A trajectory's search-term rows in C (`columns.term_rows`): see _rows.c. The text is lowered and encoded by
 * Python's own methods, as the rule says; the terms are cut with the rule's byte table, deduplicated and sorted
 * here. */
#include "_rows.h"
#include <string.h>

/* ---- search terms (`columns.term_rows`) ---- */



static const char *sort_base; /* the bytes the spans below point into (qsort takes no context) */

typedef struct {
    Py_ssize_t at, len;
} Span;

static int span_order(const void *a, const void *b) {
    const Span *x = a, *y = b;
    int c = memcmp(sort_base + x->at, sort_base + y->at, (size_t)(x->len < y->len ? x->len : y->len));
    return c ? c : (x->len > y->len) - (x->len < y->len);
}


/* Append the (term, tid) rows of these texts, sorted; -1 on error. */
int term_rows(PyObject *tid, PyObject *texts, Columns *out, Py_ssize_t *count) {
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
        char word[256]; /* ASCII: configure() takes no table that keeps another byte */
        for (Py_ssize_t j = 0; j < spans[k].len; j++)
            word[j] = (char)term_table[data[spans[k].at + j]];
        if (col_utf8(out, 0, word, spans[k].len) < 0 || col_value(out, 1, tid) < 0)
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

