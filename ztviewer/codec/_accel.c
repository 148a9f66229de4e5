/*
 * ztviewer.codec._accel: the plain-entry fast paths of the safetensors and zTensor 1.x readers, in C.
 *
 * Two kinds of function. Some walk manifests that cbor2 or orjson already decoded into dicts, lists,
 * strings and ints, accept exactly the entries the Python fast paths in safetensors_tensors.py and
 * zt_fast.py accept, and build the same Tensor objects (dense_tensor in model.py). Others read the plain
 * subset of a safetensors JSON header or a zTensor CBOR manifest straight from its bytes, bounds-checked
 * at every step. Anything else is left to Python: an unusual entry or text is "declined", never an
 * error, and the Python readers say what is wrong. ztviewer/codec/accel.py loads this module when it was
 * built; tests hold it to the Python code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>

/* Unsigned 64-bit arithmetic that reports overflow (true) instead of wrapping; *out is set only without. */
static inline int
mul_overflow(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a)
        return 1;
    *out = a * b;
    return 0;
}

static inline int
add_overflow(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b > UINT64_MAX - a)
        return 1;
    *out = a + b;
    return 0;
}

enum {
    SLOT_NAME, SLOT_DTYPE, SLOT_SHAPE, SLOT_LAYOUT, SLOT_SPELLING, SLOT_INDEX, SLOT_EXTRA,
    SLOT_COMPONENTS, SLOT_ATTRIBUTES, SLOT_PROBLEMS, SLOT_DATA, SLOT_COUNT
};
static const char *const slot_names[SLOT_COUNT] = {
    "name", "dtype", "shape", "layout", "layout_spelling", "index", "_extra",
    "_components", "_attributes", "_problems", "_data",
};

static PyTypeObject *tensor_type = NULL;
static Py_ssize_t slot_offset[SLOT_COUNT];

static PyObject *str_raw, *str_zstd, *str_dense, *str_dtype, *str_shape, *str_data_offsets, *str_format,
    *str_components, *str_data, *str_offset, *str_length, *str_shard, *str_source, *str_index_in_shard,
    *str_metadata;

/* Store a new reference to each value in a freshly allocated Tensor (its slots are all NULL). */
static PyObject *
new_tensor(PyObject *const values[SLOT_COUNT])
{
    PyObject *tensor = tensor_type->tp_alloc(tensor_type, 0);
    if (tensor == NULL)
        return NULL;
    for (int i = 0; i < SLOT_COUNT; i++) {
        PyObject **slot = (PyObject **)((char *)tensor + slot_offset[i]);
        Py_INCREF(values[i]);
        *slot = values[i];
    }
    return tensor;
}

/* The shape list as a tuple, the same tuple for equal shapes within one call: a checkpoint repeats a few
 * shapes thousands of times, and every object kept costs memory the process must map and fault in. */
static PyObject *
shape_tuple(PyObject *shape_list, PyObject *shapes)
{
    PyObject *shape = PyTuple_CheckExact(shape_list) ? Py_NewRef(shape_list) : PyList_AsTuple(shape_list);
    if (shape == NULL)
        return NULL;
    PyObject *known = PyDict_SetDefault(shapes, shape, shape);  /* a tuple of ints: hashing runs no code */
    Py_XINCREF(known);
    Py_DECREF(shape);
    return known;
}

/* How a component is stored beyond its byte range: encoding, digest and uncompressed_length as Python
 * objects. NULL where a function takes one means "raw", None, None. */
typedef struct {
    PyObject *encoding, *digest, *uncompressed;
} Stored;

/* dense_tensor(name, dtype, shape, index, offset, length, encoding, digest, uncompressed, spelling, extra),
 * with offset and length as int objects. The arguments may be borrowed from the manifest: they are held while
 * allocating, which may run the collector and so any finalizer. */
static PyObject *
dense_tensor(PyObject *name, PyObject *dtype, PyObject *shape_list, PyObject *shapes, Py_ssize_t index,
             PyObject *offset_obj, PyObject *length_obj, PyObject *spelling, PyObject *extra, const Stored *stored)
{
    PyObject *encoding = stored != NULL ? stored->encoding : str_raw;
    PyObject *digest = stored != NULL ? stored->digest : Py_None;
    PyObject *uncompressed = stored != NULL ? stored->uncompressed : Py_None;
    PyObject *held[] = {name, dtype, shape_list, offset_obj, length_obj, spelling, extra, encoding, digest,
                        uncompressed};
    PyObject *shape = NULL, *index_obj = NULL, *data = NULL, *tensor = NULL;
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        Py_INCREF(held[i]);
    if ((shape = shape_tuple(shape_list, shapes)) == NULL || (index_obj = PyLong_FromSsize_t(index)) == NULL
            || (data = PyTuple_Pack(6, offset_obj, length_obj, encoding, digest, uncompressed, dtype)) == NULL)
        goto done;
    PyObject *values[SLOT_COUNT] = {
        [SLOT_NAME] = name, [SLOT_DTYPE] = dtype, [SLOT_SHAPE] = shape, [SLOT_LAYOUT] = str_dense,
        [SLOT_SPELLING] = spelling, [SLOT_INDEX] = index_obj, [SLOT_EXTRA] = extra,
        [SLOT_COMPONENTS] = Py_None, [SLOT_ATTRIBUTES] = Py_None, [SLOT_PROBLEMS] = Py_None,
        [SLOT_DATA] = data,
    };
    tensor = new_tensor(values);
done:
    Py_XDECREF(shape);
    Py_XDECREF(index_obj);
    Py_XDECREF(data);
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        Py_DECREF(held[i]);
    return tensor;
}

static PyObject *
dense_tensor_u64(PyObject *name, PyObject *dtype, PyObject *shape_list, PyObject *shapes, Py_ssize_t index,
                 uint64_t offset, uint64_t length, PyObject *spelling, PyObject *extra, const Stored *stored)
{
    PyObject *offset_obj = PyLong_FromUnsignedLongLong(offset), *length_obj = PyLong_FromUnsignedLongLong(length);
    PyObject *tensor = NULL;
    if (offset_obj != NULL && length_obj != NULL)
        tensor = dense_tensor(name, dtype, shape_list, shapes, index, offset_obj, length_obj, spelling, extra, stored);
    Py_XDECREF(offset_obj);
    Py_XDECREF(length_obj);
    return tensor;
}

/* An exact int in [0, 2**64) (bool and negatives excluded, as the Python paths' ``type(x) is int`` and
 * ``bits >> 64`` checks do). */
static int
as_u64(PyObject *value, uint64_t *out)
{
    if (!PyLong_CheckExact(value))
        return 0;
    unsigned long long x = PyLong_AsUnsignedLongLong(value);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();  /* OverflowError: negative or past 64 bits */
        return 0;
    }
    *out = x;
    return 1;
}

/* A shape list of at most max_ndim dimensions, each an exact int in [0, 2**64): its size in bytes
 * (itemsize * product) in *nbytes, or *too_big when that product is 2**64 or more and no dimension is 0.
 * A dimension of 0 makes the size 0 whatever the others are, as Python's unbounded product does. */
static int
shape_nbytes(PyObject *shape, uint64_t itemsize, Py_ssize_t max_ndim, uint64_t *nbytes, int *too_big)
{
    if (!PyList_CheckExact(shape))
        return 0;
    Py_ssize_t ndim = PyList_GET_SIZE(shape);
    if (ndim > max_ndim)
        return 0;
    uint64_t product = itemsize;
    int overflow = 0, zero = 0;
    for (Py_ssize_t axis = 0; axis < ndim; axis++) {
        uint64_t dim;
        if (!as_u64(PyList_GET_ITEM(shape, axis), &dim))
            return 0;
        if (dim == 0)
            zero = 1;
        else if (!overflow && mul_overflow(product, dim, &product))
            overflow = 1;
    }
    *nbytes = zero ? 0 : product;
    *too_big = overflow && !zero;
    return 1;
}

/* Look a key up, leaving no exception behind: NULL means absent or unusual. */
static PyObject *
lookup(PyObject *dict, PyObject *key)
{
    PyObject *value = PyDict_GetItemWithError(dict, key);
    if (value == NULL && PyErr_Occurred())
        PyErr_Clear();
    return value;
}

/* A ``(canonical dtype, itemsize)`` pair from an info table. */
static int
dtype_info(PyObject *table, PyObject *key, PyObject **canonical, uint64_t *itemsize)
{
    if (!PyUnicode_CheckExact(key))  /* an unhashable key would raise; only strings name dtypes */
        return 0;
    PyObject *info = lookup(table, key);
    if (info == NULL || !PyTuple_CheckExact(info) || PyTuple_GET_SIZE(info) != 2
            || !as_u64(PyTuple_GET_ITEM(info, 1), itemsize))
        return 0;
    *canonical = PyTuple_GET_ITEM(info, 0);
    return 1;
}

static int
is_dense(PyObject *format)
{
    return format != NULL && PyUnicode_CheckExact(format) && PyUnicode_Compare(format, str_dense) == 0;
}

/* ------------------------------------------------------------------------------------------ safetensors */

/* One ``name: {dtype, shape, data_offsets}`` entry that continues the buffer at *covered, or 0. */
static int
safetensors_entry(PyObject *value, PyObject *dtypes, uint64_t covered, PyObject **dtype, PyObject **shape,
                  uint64_t *end)
{
    if (!PyDict_CheckExact(value) || PyDict_GET_SIZE(value) != 3)
        return 0;
    PyObject *raw_dtype = lookup(value, str_dtype), *offsets = lookup(value, str_data_offsets);
    uint64_t itemsize, begin, nbytes;
    int too_big;
    *shape = lookup(value, str_shape);
    if (raw_dtype == NULL || *shape == NULL || offsets == NULL || !dtype_info(dtypes, raw_dtype, dtype, &itemsize)
            || !PyList_CheckExact(offsets) || PyList_GET_SIZE(offsets) != 2
            || !as_u64(PyList_GET_ITEM(offsets, 0), &begin) || begin != covered
            || !as_u64(PyList_GET_ITEM(offsets, 1), end) || *end < begin
            || !shape_nbytes(*shape, itemsize, 64, &nbytes, &too_big) || too_big || nbytes != *end - begin)
        return 0;
    return 1;
}

static PyObject *
shard_extra(PyObject *shard, PyObject *source, Py_ssize_t index_in_shard)
{
    PyObject *extra = PyDict_New(), *position = PyLong_FromSsize_t(index_in_shard);
    if (extra == NULL || position == NULL || PyDict_SetItem(extra, str_shard, shard) < 0
            || PyDict_SetItem(extra, str_source, source) < 0
            || PyDict_SetItem(extra, str_index_in_shard, position) < 0) {
        Py_XDECREF(extra);
        extra = NULL;
    }
    Py_XDECREF(position);
    return extra;
}

/* The tensors of a header's entries, or Py_None when one is not plain or they do not cover the buffer;
 * NULL with an exception only for errors of Python itself (memory). With with_extra each tensor's extra
 * names shard, source and index_in_shard, else it is None. */
static PyObject *
safetensors_list(PyObject *header, uint64_t base, uint64_t buffer_len, Py_ssize_t first_index, PyObject *dtypes,
                 PyObject *shapes, int with_extra, PyObject *shard, PyObject *source)
{
    PyObject *tensors = PyList_New(PyDict_GET_SIZE(header));
    if (tensors == NULL)
        return NULL;
    Py_ssize_t position = 0, count = 0;
    PyObject *name, *value;
    uint64_t covered = 0;
    while (PyDict_Next(header, &position, &name, &value) && count < PyList_GET_SIZE(tensors)) {
        PyObject *dtype, *shape, *tensor = NULL;
        uint64_t end, offset;
        Py_INCREF(name);
        Py_INCREF(value);
        /* before the check: allocating may run the collector, which must not free what the check borrows */
        PyObject *extra = with_extra ? shard_extra(shard, source, count) : Py_NewRef(Py_None);
        int plain = extra != NULL && safetensors_entry(value, dtypes, covered, &dtype, &shape, &end)
                    && !add_overflow(base, covered, &offset);
        if (plain)
            tensor = dense_tensor_u64(name, dtype, shape, shapes, first_index + count, offset, end - covered, Py_None,
                                      extra, NULL);
        Py_XDECREF(extra);
        Py_DECREF(name);
        Py_DECREF(value);
        if (tensor == NULL) {
            Py_DECREF(tensors);
            if (PyErr_Occurred())
                return NULL;
            Py_RETURN_NONE;
        }
        PyList_SET_ITEM(tensors, count, tensor);
        covered = end;
        count++;
    }
    if (count != PyList_GET_SIZE(tensors) || covered != buffer_len) {
        Py_DECREF(tensors);
        Py_RETURN_NONE;
    }
    return tensors;
}

PyDoc_STRVAR(safetensors_dense_doc,
"safetensors_dense(header, base, buffer_len, first_index, dtypes, shard, source) -> list | None\n\n"
"The tensors of a decoded safetensors header (``__metadata__`` removed) whose entries are all plain, in\n"
"buffer order, and exactly cover the buffer, else None. ``dtypes`` maps a safetensors dtype to\n"
"``(canonical name, itemsize)``. With ``shard`` not None each tensor's extra names shard and source.");

static PyObject *
safetensors_dense(PyObject *module, PyObject *args)
{
    PyObject *header, *base_obj, *buffer_len_obj, *dtypes, *shard, *source;
    Py_ssize_t first_index;
    uint64_t base, buffer_len;
    if (!PyArg_ParseTuple(args, "O!OOnO!OO:safetensors_dense", &PyDict_Type, &header, &base_obj,
                          &buffer_len_obj, &first_index, &PyDict_Type, &dtypes, &shard, &source))
        return NULL;
    if (tensor_type == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_accel.configure() was not called");
    if (!as_u64(base_obj, &base) || !as_u64(buffer_len_obj, &buffer_len))
        Py_RETURN_NONE;  /* no header covers a negative buffer; the checked path says what is wrong */
    PyObject *shapes = PyDict_New(), *tensors = NULL;
    if (shapes != NULL)
        tensors = safetensors_list(header, base, buffer_len, first_index, dtypes, shapes, shard != Py_None, shard,
                                   source);
    Py_XDECREF(shapes);
    return tensors;
}

/* ---------------------------------------------------------------------- safetensors JSON, read directly */

/* The JSON text of a plain header, read in one pass without building the decoded object: only what the
 * tensors keep is allocated. It takes the common subset of what the reference writer produces: strings
 * without escapes, integers without sign, fraction or exponent, entries {dtype, shape, data_offsets} in
 * any key order, string-only __metadata__. At anything else it declines (Py_None) and the JSON parser
 * runs; it never decides that a header is wrong. */

#define MAX_DTYPES 8

typedef struct {
    const char *at, *end;
    int dtype_count;
    struct { const char *text; Py_ssize_t length; PyObject *canonical; uint64_t itemsize; } dtypes[MAX_DTYPES];
} Json;

static void
json_release(Json *json)
{
    for (int i = 0; i < json->dtype_count; i++)
        Py_DECREF(json->dtypes[i].canonical);
}

static void
skip_space(Json *json)
{
    while (json->at < json->end && (*json->at == ' ' || *json->at == '\n' || *json->at == '\r' || *json->at == '\t'))
        json->at++;
}

static int
take(Json *json, char wanted)
{
    skip_space(json);
    if (json->at < json->end && *json->at == wanted) {
        json->at++;
        return 1;
    }
    return 0;
}

/* A string without escapes or control bytes: its bytes between the quotes. */
static int
take_string(Json *json, const char **text, Py_ssize_t *length)
{
    if (!take(json, '"'))
        return 0;
    const char *start = json->at;
    for (; json->at < json->end; json->at++) {
        unsigned char c = (unsigned char)*json->at;
        if (c == '"') {
            *text = start;
            *length = json->at - start;
            json->at++;
            return 1;
        }
        if (c == '\\' || c < 0x20)
            return 0;
    }
    return 0;
}

static int
take_uint(Json *json, uint64_t *value)
{
    skip_space(json);
    const char *start = json->at;
    uint64_t v = 0;
    while (json->at < json->end && *json->at >= '0' && *json->at <= '9') {
        if (mul_overflow(v, 10, &v) || add_overflow(v, (uint64_t)(*json->at - '0'), &v))
            return 0;
        json->at++;
    }
    Py_ssize_t digits = json->at - start;
    if (digits == 0 || (digits > 1 && *start == '0'))  /* JSON has no leading zeros */
        return 0;
    if (json->at < json->end && (*json->at == '.' || *json->at == 'e' || *json->at == 'E'))
        return 0;
    *value = v;
    return 1;
}

static int
same_text(const char *text, Py_ssize_t length, const char *word)
{
    return (size_t)length == strlen(word) && memcmp(text, word, length) == 0;
}

static PyObject *
decode_text(const char *text, Py_ssize_t length)
{
    PyObject *value = PyUnicode_DecodeUTF8(text, length, NULL);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        PyErr_Clear();  /* the JSON parser says what is wrong with it */
    return value;
}

/* ``(canonical, itemsize)`` of a dtype written as text, remembered for the rest of the header. */
static int
json_dtype(Json *json, PyObject *table, const char *text, Py_ssize_t length, PyObject **canonical,
           uint64_t *itemsize)
{
    for (int i = 0; i < json->dtype_count; i++) {
        if (json->dtypes[i].length == length && memcmp(json->dtypes[i].text, text, length) == 0) {
            *canonical = json->dtypes[i].canonical;
            *itemsize = json->dtypes[i].itemsize;
            return 1;
        }
    }
    PyObject *key = decode_text(text, length);
    int known = key != NULL && dtype_info(table, key, canonical, itemsize);
    Py_XDECREF(key);
    if (!known)
        return 0;
    if (json->dtype_count < MAX_DTYPES) {
        Py_INCREF(*canonical);
        json->dtypes[json->dtype_count].text = text;
        json->dtypes[json->dtype_count].length = length;
        json->dtypes[json->dtype_count].canonical = *canonical;
        json->dtypes[json->dtype_count].itemsize = *itemsize;
        json->dtype_count++;
    }
    return 1;
}

/* A shape read from the text of a header or manifest. */
typedef struct {
    Py_ssize_t ndim;
    uint64_t dims[64];
} Dims;

/* itemsize * product(dims) in *nbytes; 0 when that is 2**64 or more and no dimension is 0 (a 0 makes the
 * size 0 whatever the others are, as Python's unbounded product does). */
static int
dims_nbytes(const Dims *shape, uint64_t itemsize, uint64_t *nbytes)
{
    uint64_t product = itemsize;
    int overflow = 0;
    for (Py_ssize_t axis = 0; axis < shape->ndim; axis++) {
        if (shape->dims[axis] == 0) {
            *nbytes = 0;
            return 1;
        }
        if (!overflow && mul_overflow(product, shape->dims[axis], &product))
            overflow = 1;
    }
    *nbytes = product;
    return !overflow;
}

static PyObject *
dims_tuple(const Dims *shape)
{
    PyObject *tuple = PyTuple_New(shape->ndim);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t axis = 0; axis < shape->ndim; axis++) {
        PyObject *dim = PyLong_FromUnsignedLongLong(shape->dims[axis]);
        if (dim == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, axis, dim);
    }
    return tuple;
}

typedef struct {
    PyObject *dtype;  /* borrowed from the Json's dtype memory */
    uint64_t itemsize, begin, end;
    Dims shape;
} JsonEntry;

/* ``{"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}``, keys in any order, each once. */
static int
take_entry(Json *json, PyObject *table, JsonEntry *entry)
{
    int seen = 0;  /* bits: dtype, shape, data_offsets */
    if (!take(json, '{'))
        return 0;
    do {
        const char *key, *text;
        Py_ssize_t key_length, length;
        if (!take_string(json, &key, &key_length) || !take(json, ':'))
            return 0;
        if (same_text(key, key_length, "dtype") && !(seen & 1)) {
            if (!take_string(json, &text, &length)
                    || !json_dtype(json, table, text, length, &entry->dtype, &entry->itemsize))
                return 0;
            seen |= 1;
        }
        else if (same_text(key, key_length, "shape") && !(seen & 2)) {
            if (!take(json, '['))
                return 0;
            entry->shape.ndim = 0;
            if (!take(json, ']')) {
                do {
                    if (entry->shape.ndim == 64 || !take_uint(json, &entry->shape.dims[entry->shape.ndim]))
                        return 0;
                    entry->shape.ndim++;
                } while (take(json, ','));
                if (!take(json, ']'))
                    return 0;
            }
            seen |= 2;
        }
        else if (same_text(key, key_length, "data_offsets") && !(seen & 4)) {
            if (!take(json, '[') || !take_uint(json, &entry->begin) || !take(json, ',')
                    || !take_uint(json, &entry->end) || !take(json, ']'))
                return 0;
            seen |= 4;
        }
        else
            return 0;
    } while (take(json, ','));
    return take(json, '}') && seen == 7;
}

/* The entry's size agrees with its span, which continues the buffer at covered. */
static int
entry_fits(const JsonEntry *entry, uint64_t covered)
{
    uint64_t nbytes;
    return dims_nbytes(&entry->shape, entry->itemsize, &nbytes) && entry->begin == covered
           && entry->end >= entry->begin && nbytes == entry->end - entry->begin;
}

/* ``"__metadata__": {"key": "value", ...}`` into a new dict; a repeated key declines. */
static int
take_metadata(Json *json, PyObject *metadata)
{
    if (!take(json, '{'))
        return 0;
    if (take(json, '}'))
        return 1;
    do {
        const char *text;
        Py_ssize_t length;
        if (!take_string(json, &text, &length))
            return 0;
        PyObject *key = decode_text(text, length), *value = NULL;
        int stored = key != NULL && !PyDict_Contains(metadata, key) && take(json, ':')
                     && take_string(json, &text, &length) && (value = decode_text(text, length)) != NULL
                     && PyDict_SetItem(metadata, key, value) == 0;
        Py_XDECREF(key);
        Py_XDECREF(value);
        if (!stored)
            return 0;
    } while (take(json, ','));
    return take(json, '}');
}

/* One ``name: entry`` member: its tensor appended, or 0 (declined or an error set). */
static int
take_tensor(Json *json, PyObject *name, PyObject *table, PyObject *shapes, uint64_t base, uint64_t *covered,
            Py_ssize_t first_index, int with_extra, PyObject *shard, PyObject *source, PyObject *tensors)
{
    JsonEntry entry;
    uint64_t offset;
    Py_ssize_t count = PyList_GET_SIZE(tensors);
    if (!take_entry(json, table, &entry) || !entry_fits(&entry, *covered)
            || add_overflow(base, entry.begin, &offset))
        return 0;
    Py_INCREF(entry.dtype);  /* held while allocating, as everything dense_tensor is given */
    PyObject *shape = dims_tuple(&entry.shape), *tensor = NULL;
    PyObject *extra = with_extra ? shard_extra(shard, source, count) : Py_NewRef(Py_None);
    if (shape != NULL && extra != NULL)
        tensor = dense_tensor_u64(name, entry.dtype, shape, shapes, first_index + count, offset,
                                  entry.end - entry.begin, Py_None, extra, NULL);
    Py_DECREF(entry.dtype);
    Py_XDECREF(shape);
    Py_XDECREF(extra);
    int appended = tensor != NULL && PyList_Append(tensors, tensor) == 0;
    Py_XDECREF(tensor);
    *covered = entry.end;
    return appended;
}

/* ``(metadata, tensors)`` of a header text, Py_None when it declines, NULL on an error of Python itself. */
static PyObject *
json_header(const char *text, Py_ssize_t length, uint64_t base, uint64_t buffer_len, Py_ssize_t first_index,
            PyObject *table, PyObject *shapes, int with_extra, PyObject *shard, PyObject *source)
{
    Json json = {.at = text, .end = text + length, .dtype_count = 0};
    PyObject *metadata = NULL, *names = PySet_New(NULL), *tensors = PyList_New(0), *result = NULL;
    uint64_t covered = 0;
    int plain = 0;
    if (names == NULL || tensors == NULL)
        goto done;
    if (json.at == json.end || *json.at != '{')  /* whitespace before it: the full reader reports an error */
        goto done;
    json.at++;
    if (!take(&json, '}')) {
        do {
            const char *key;
            Py_ssize_t key_length;
            if (!take_string(&json, &key, &key_length) || !take(&json, ':'))
                goto done;
            if (same_text(key, key_length, "__metadata__")) {
                if (metadata != NULL || (metadata = PyDict_New()) == NULL || !take_metadata(&json, metadata))
                    goto done;
                continue;
            }
            PyObject *name = decode_text(key, key_length);
            int taken = name != NULL && PySet_Add(names, name) == 0 && PySet_GET_SIZE(names) == PyList_GET_SIZE(tensors) + 1
                        && take_tensor(&json, name, table, shapes, base, &covered, first_index, with_extra, shard,
                                       source, tensors);
            Py_XDECREF(name);
            if (!taken)
                goto done;
        } while (take(&json, ','));
        if (!take(&json, '}'))
            goto done;
    }
    while (json.at < json.end && *json.at == ' ')  /* padding other than spaces: the full reader warns */
        json.at++;
    plain = json.at == json.end && covered == buffer_len;
done:
    json_release(&json);
    if (plain && (metadata != NULL || (metadata = PyDict_New()) != NULL))
        result = PyTuple_Pack(2, metadata, tensors);
    else if (!PyErr_Occurred())
        result = Py_NewRef(Py_None);
    Py_XDECREF(metadata);
    Py_XDECREF(names);
    Py_XDECREF(tensors);
    return result;
}

PyDoc_STRVAR(safetensors_header_doc,
"safetensors_header(text, base, buffer_len, dtypes) -> (metadata, tensors) | None\n\n"
"The metadata and tensors of a header's JSON text (bytes) read directly, when it is plain (see\n"
"fast_dict_tensors) and written in the common subset of JSON the reference writer produces; else None,\n"
"and the JSON parser decides.");

static PyObject *
safetensors_header(PyObject *module, PyObject *args)
{
    PyObject *text, *base_obj, *buffer_len_obj, *dtypes, *shapes, *result;
    uint64_t base, buffer_len;
    if (!PyArg_ParseTuple(args, "O!OOO!:safetensors_header", &PyBytes_Type, &text, &base_obj, &buffer_len_obj,
                          &PyDict_Type, &dtypes))
        return NULL;
    if (tensor_type == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_accel.configure() was not called");
    if (!as_u64(base_obj, &base) || !as_u64(buffer_len_obj, &buffer_len) || (shapes = PyDict_New()) == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    Py_INCREF(text);
    result = json_header(PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text), base, buffer_len, 0, dtypes, shapes, 0,
                         Py_None, Py_None);
    Py_DECREF(text);
    Py_DECREF(shapes);
    return result;
}

/* How often ``needle`` (1 or 2 bytes) occurs in text, like bytes.count. */
static Py_ssize_t
count_bytes(const char *text, Py_ssize_t length, const char *needle, Py_ssize_t needle_length)
{
    Py_ssize_t count = 0;
    const char *at = text, *stop = text + length;
    while (at < stop && (at = memchr(at, needle[0], stop - at)) != NULL) {
        if (needle_length == 1 || (at + 1 < stop && at[1] == needle[1]))
            count++;
        at++;
    }
    return count;
}

/* _no_key_dropped of safetensors.py: every key written is followed by its own colon. */
static int
no_key_dropped(const char *text, Py_ssize_t length, Py_ssize_t keys)
{
    if (count_bytes(text, length, ":", 1) == keys)
        return 1;
    if (count_bytes(text, length, "\":", 2) != keys)
        return 0;
    static const char *const space_colon[] = {" :", "\t:", "\n:", "\r:"};
    for (int i = 0; i < 4; i++) {
        if (count_bytes(text, length, space_colon[i], 2))
            return 0;
    }
    return 1;
}

/* ``(metadata, entries)`` of a decoded plain header (split_plain_header in safetensors.py), or Py_None. Every
 * top-level value must be an object: any other value would fail a later check of the batch anyway. */
static PyObject *
split_header(PyObject *header, const char *text, Py_ssize_t length)
{
    Py_ssize_t keys = PyDict_GET_SIZE(header), position = 0;
    PyObject *key, *value;
    while (PyDict_Next(header, &position, &key, &value)) {
        if (!PyDict_CheckExact(value))
            Py_RETURN_NONE;
        keys += PyDict_GET_SIZE(value);
    }
    if (!no_key_dropped(text, length, keys))
        Py_RETURN_NONE;
    PyObject *metadata = lookup(header, str_metadata);
    if (metadata == NULL)
        metadata = PyDict_New();
    else {
        position = 0;
        while (PyDict_Next(metadata, &position, &key, &value)) {
            if (!PyUnicode_CheckExact(value))
                Py_RETURN_NONE;
        }
        Py_INCREF(metadata);
        if (PyDict_DelItem(header, str_metadata) < 0)
            Py_CLEAR(metadata);
    }
    if (metadata == NULL)
        return NULL;
    PyObject *split = PyTuple_Pack(2, metadata, header);
    Py_DECREF(metadata);
    return split;
}

/* One shard of plain_headers: (header length, metadata, tensors, buffer length), Py_None, or NULL. */
static PyObject *
plain_shard(PyObject *head, PyObject *size_obj, PyObject *shard, PyObject *source, Py_ssize_t first_index,
            PyObject *loads, PyObject *dtypes, PyObject *shapes)
{
    uint64_t size, n = 0;
    if (!PyBytes_CheckExact(head) || PyBytes_GET_SIZE(head) < 8 || !as_u64(size_obj, &size) || size < 8)
        Py_RETURN_NONE;
    const unsigned char *bytes = (const unsigned char *)PyBytes_AS_STRING(head);
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | bytes[i];
    if (n == 0 || n > (uint64_t)PyBytes_GET_SIZE(head) - 8 || n > size - 8)
        Py_RETURN_NONE;
    const char *text = (const char *)bytes + 8;
    Py_ssize_t length = (Py_ssize_t)n;
    while (length > 0 && text[length - 1] == ' ')
        length--;
    if (length < 2 || text[0] != '{' || text[length - 1] != '}')
        Py_RETURN_NONE;
    PyObject *direct = json_header(text, length, 8 + n, size - 8 - n, first_index, dtypes, shapes, 1, shard, source);
    if (direct == NULL)
        return NULL;
    if (direct != Py_None) {
        PyObject *read = Py_BuildValue("(KOOK)", (unsigned long long)n, PyTuple_GET_ITEM(direct, 0),
                                       PyTuple_GET_ITEM(direct, 1), (unsigned long long)(size - 8 - n));
        Py_DECREF(direct);
        return read;
    }
    Py_DECREF(direct);
    PyObject *raw = PyBytes_FromStringAndSize(text, length), *header = NULL, *split = NULL, *result = NULL;
    if (raw == NULL)
        return NULL;
    header = PyObject_CallOneArg(loads, raw);
    if (header == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_TypeError)
                && !PyErr_ExceptionMatches(PyExc_RecursionError))
            goto done;
        PyErr_Clear();  /* not JSON: the full reader says why */
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (!PyDict_CheckExact(header)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if ((split = split_header(header, text, length)) == NULL)
        goto done;
    if (split == Py_None) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *tensors = safetensors_list(header, 8 + n, size - 8 - n, first_index, dtypes, shapes, 1, shard, source);
    if (tensors == NULL || tensors == Py_None) {
        result = tensors;
        goto done;
    }
    result = Py_BuildValue("(KONK)", (unsigned long long)n, PyTuple_GET_ITEM(split, 0), tensors,
                           (unsigned long long)(size - 8 - n));
done:
    Py_XDECREF(raw);
    Py_XDECREF(header);
    Py_XDECREF(split);
    return result;
}

PyDoc_STRVAR(plain_headers_doc,
"plain_headers(heads, sizes, shards, sources, first_index, loads, dtypes) -> list | None\n\n"
"read_batch of multifile/fast_headers.py when every shard's header is plain and lists its tensors in\n"
"buffer order: per shard ``(header length, metadata, tensors, data bytes)``, tensors numbered from\n"
"``first_index`` across the batch. ``loads`` decodes the JSON text. None when any shard is otherwise.");

static PyObject *
plain_batch(PyObject *const columns[4], Py_ssize_t index, PyObject *loads, PyObject *dtypes, PyObject *shapes)
{
    Py_ssize_t count = PyTuple_GET_SIZE(columns[0]);
    for (int c = 1; c < 4; c++) {
        if (PyTuple_GET_SIZE(columns[c]) != count)
            return PyErr_Format(PyExc_ValueError, "plain_headers() needs one size, shard and source per head");
    }
    PyObject *batch = PyList_New(count);
    if (batch == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *read = plain_shard(PyTuple_GET_ITEM(columns[0], i), PyTuple_GET_ITEM(columns[1], i),
                                     PyTuple_GET_ITEM(columns[2], i), PyTuple_GET_ITEM(columns[3], i), index, loads,
                                     dtypes, shapes);
        if (read == NULL || read == Py_None) {
            Py_DECREF(batch);
            return read;
        }
        PyList_SET_ITEM(batch, i, read);
        index += PyList_GET_SIZE(PyTuple_GET_ITEM(read, 2));
    }
    return batch;
}

static PyObject *
plain_headers(PyObject *module, PyObject *args)
{
    PyObject *lists[4], *columns[4] = {NULL, NULL, NULL, NULL}, *loads, *dtypes, *batch = NULL, *shapes = NULL;
    Py_ssize_t index;
    if (!PyArg_ParseTuple(args, "O!O!O!O!nOO!:plain_headers", &PyList_Type, &lists[0], &PyList_Type, &lists[1],
                          &PyList_Type, &lists[2], &PyList_Type, &lists[3], &index, &loads, &PyDict_Type, &dtypes))
        return NULL;
    if (tensor_type == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_accel.configure() was not called");
    /* copies: loads is Python code, and must not free a head being read or shorten a list being walked */
    for (int c = 0; c < 4; c++) {
        if ((columns[c] = PyList_AsTuple(lists[c])) == NULL)
            goto done;
    }
    if ((shapes = PyDict_New()) != NULL)
        batch = plain_batch(columns, index, loads, dtypes, shapes);
done:
    Py_XDECREF(shapes);
    for (int c = 0; c < 4; c++)
        Py_XDECREF(columns[c]);
    return batch;
}

/* ------------------------------------------------------------------------------------------- zTensor */

/* One plain zTensor 1.x dense entry. v1.0: ``{dtype, shape, format, components: {data: {offset, length}}}``;
 * objects layout: ``{shape, format, components: {data: {dtype, offset, length}}}`` with a short dtype. */
static int
zt_entry(PyObject *name, PyObject *entry, PyObject *dtypes, int objects, PyObject **dtype, PyObject **shape,
         PyObject **offset_obj, PyObject **length_obj)
{
    if (!PyUnicode_CheckExact(name) || !PyDict_CheckExact(entry) || PyDict_GET_SIZE(entry) != (objects ? 3 : 4))
        return 0;
    PyObject *components = lookup(entry, str_components);
    *shape = lookup(entry, str_shape);
    if (*shape == NULL || !is_dense(lookup(entry, str_format)) || components == NULL
            || !PyDict_CheckExact(components) || PyDict_GET_SIZE(components) != 1)
        return 0;
    PyObject *data = lookup(components, str_data);
    if (data == NULL || !PyDict_CheckExact(data) || PyDict_GET_SIZE(data) != (objects ? 3 : 2))
        return 0;  /* optional keys (encoding, digest, ...) are checked by the Python path */
    PyObject *raw_dtype = lookup(objects ? data : entry, str_dtype);
    uint64_t itemsize, nbytes, offset, length;
    int too_big;
    *offset_obj = lookup(data, str_offset);
    *length_obj = lookup(data, str_length);
    if (raw_dtype == NULL || *offset_obj == NULL || *length_obj == NULL
            || !dtype_info(dtypes, raw_dtype, dtype, &itemsize) || !as_u64(*offset_obj, &offset)
            || !as_u64(*length_obj, &length) || !shape_nbytes(*shape, itemsize, PY_SSIZE_T_MAX, &nbytes, &too_big)
            || too_big || nbytes != length)
        return 0;
    return 1;
}

PyDoc_STRVAR(zt_dense_doc,
"zt_dense(entries, start, dtypes, objects) -> (tensors, unusual)\n\n"
"The tensors of a zTensor 1.x manifest's entries, numbered from ``start``: a Tensor for each plain dense\n"
"entry with only the required keys, None for any other, whose positions (from 0) are listed in ``unusual``.\n"
"``dtypes`` maps the dtype as written to ``(canonical name, itemsize)``; ``objects`` selects the 1.0.2+\n"
"objects layout.");

static PyObject *
zt_dense(PyObject *module, PyObject *args)
{
    PyObject *entries, *dtypes;
    Py_ssize_t start;
    int objects;
    if (!PyArg_ParseTuple(args, "O!nO!p:zt_dense", &PyDict_Type, &entries, &start, &PyDict_Type, &dtypes,
                          &objects))
        return NULL;
    if (tensor_type == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_accel.configure() was not called");
    PyObject *tensors = PyList_New(0), *unusual = PyList_New(0), *shapes = PyDict_New(), *result = NULL;
    if (tensors == NULL || unusual == NULL || shapes == NULL)
        goto done;
    Py_ssize_t position = 0, count = 0;
    PyObject *name, *entry;
    while (PyDict_Next(entries, &position, &name, &entry)) {
        PyObject *dtype, *shape, *offset, *length, *tensor = NULL;
        Py_INCREF(name);
        Py_INCREF(entry);
        if (zt_entry(name, entry, dtypes, objects, &dtype, &shape, &offset, &length)) {
            tensor = dense_tensor(name, dtype, shape, shapes, start + count, offset, length, str_dense, Py_None, NULL);
        }
        else {
            PyObject *at = PyLong_FromSsize_t(count);
            if (at != NULL && PyList_Append(unusual, at) == 0)
                tensor = Py_NewRef(Py_None);
            Py_XDECREF(at);
        }
        Py_DECREF(name);
        Py_DECREF(entry);
        if (tensor == NULL || PyList_Append(tensors, tensor) < 0) {
            Py_XDECREF(tensor);
            goto done;
        }
        Py_DECREF(tensor);
        count++;
    }
    result = PyTuple_Pack(2, tensors, unusual);
done:
    Py_XDECREF(tensors);
    Py_XDECREF(unusual);
    Py_XDECREF(shapes);
    return result;
}

/* --------------------------------------------------------------------- zTensor CBOR manifest, read directly */

/* A zTensor 1.x manifest of plain dense tensors read in one pass from its CBOR bytes, without building
 * the decoded maps. The subset: definite-length maps, arrays and text; unsigned integers; a root map of
 * version, generator, attributes and the tensors map (v1.0 "tensors" or objects-layout "objects"), each
 * at most once; plain dense entries as zt_fast.py's loops accept them, with the optional encoding, digest
 * and (objects layout) uncompressed_length of their data component. The attributes item is only
 * measured, for cbor2 to decode. At anything else it declines (Py_None) and cbor2 decodes the manifest;
 * it never decides that a manifest is wrong. */

typedef struct {
    const unsigned char *at, *end;
} Cbor;

/* The head of an item: major type and argument (ai 0-27); indefinite lengths (ai 31) and reserved
 * values decline. */
static int
cbor_head(Cbor *cbor, int *major, uint64_t *argument)
{
    if (cbor->at >= cbor->end)
        return 0;
    unsigned char initial = *cbor->at++;
    int info = initial & 0x1f, extra;
    *major = initial >> 5;
    if (info < 24) {
        *argument = (uint64_t)info;
        return 1;
    }
    if (info > 27)
        return 0;
    extra = 1 << (info - 24);
    if (cbor->end - cbor->at < extra)
        return 0;
    uint64_t value = 0;
    for (int i = 0; i < extra; i++)
        value = (value << 8) | cbor->at[i];
    cbor->at += extra;
    *argument = value;
    return 1;
}

static int
cbor_uint(Cbor *cbor, uint64_t *value)
{
    int major;
    return cbor_head(cbor, &major, value) && major == 0;
}

/* A definite-length text string: its bytes. */
static int
cbor_text(Cbor *cbor, const char **text, Py_ssize_t *length)
{
    int major;
    uint64_t size;
    if (!cbor_head(cbor, &major, &size) || major != 3 || size > (uint64_t)(cbor->end - cbor->at))
        return 0;
    *text = (const char *)cbor->at;
    *length = (Py_ssize_t)size;
    cbor->at += size;
    return 1;
}

static int
cbor_container(Cbor *cbor, int wanted_major, uint64_t *count)
{
    int major;
    /* every member takes at least one byte, so a count past the bytes left is a lie */
    return cbor_head(cbor, &major, count) && major == wanted_major && *count <= (uint64_t)(cbor->end - cbor->at);
}

/* Step over one well-formed item of any kind (for the attributes), nesting at most depth levels. */
static int
cbor_skip(Cbor *cbor, int depth)
{
    if (depth == 0 || cbor->at >= cbor->end)
        return 0;
    int info = *cbor->at & 0x1f, major = *cbor->at >> 5;
    if (info == 31) {  /* indefinite: chunks or members until the break byte */
        if (major < 2 || major == 6 || major == 7)
            return 0;
        cbor->at++;
        while (cbor->at < cbor->end && *cbor->at != 0xff) {
            if (!cbor_skip(cbor, depth - 1) || (major == 5 && !cbor_skip(cbor, depth - 1)))
                return 0;
        }
        if (cbor->at >= cbor->end)
            return 0;
        cbor->at++;
        return 1;
    }
    uint64_t argument;
    if (!cbor_head(cbor, &major, &argument))
        return 0;
    switch (major) {
    case 2: case 3:
        if (argument > (uint64_t)(cbor->end - cbor->at))
            return 0;
        cbor->at += argument;
        return 1;
    case 4: case 5:
        if (argument > (uint64_t)(cbor->end - cbor->at))
            return 0;
        for (uint64_t i = 0; i < argument * (major == 5 ? 2 : 1); i++) {
            if (!cbor_skip(cbor, depth - 1))
                return 0;
        }
        return 1;
    case 6:
        return cbor_skip(cbor, depth - 1);
    default:  /* 0, 1: the head was all; 7: simple values and floats carry their bytes in the head */
        return 1;
    }
}

typedef struct {
    PyObject *dtype;  /* a new reference (NULL until read), released by cbor_tensors after each entry */
    uint64_t itemsize, offset, length, uncompressed;
    int zstd, has_uncompressed;
    PyObject *digest;  /* a new reference or NULL, released like dtype */
    Dims shape;
} CborEntry;

static int
is_hex(const char *text, Py_ssize_t length)
{
    for (Py_ssize_t i = 0; i < length; i++) {
        char c = text[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return 0;
    }
    return 1;
}

/* A digest digest_problem (zt_fields.py) finds nothing wrong with: crc32c:0x + 8 hex, sha256: + 64 hex. */
static int
cbor_digest(Cbor *cbor, CborEntry *entry)
{
    const char *text;
    Py_ssize_t length;
    if (!cbor_text(cbor, &text, &length))
        return 0;
    int valid = (length == 17 && memcmp(text, "crc32c:0", 8) == 0 && (text[8] == 'x' || text[8] == 'X')
                 && is_hex(text + 9, 8))
                || (length == 71 && memcmp(text, "sha256:", 7) == 0 && is_hex(text + 7, 64));
    if (!valid)
        return 0;
    PyObject *digest = PyUnicode_FromStringAndSize(text, length);  /* ASCII, as checked */
    if (digest == NULL)
        return 0;
    Py_XSETREF(entry->digest, digest);
    return 1;
}

static int
cbor_shape(Cbor *cbor, CborEntry *entry)
{
    uint64_t count;
    if (!cbor_container(cbor, 4, &count) || count > 64)
        return 0;
    entry->shape.ndim = (Py_ssize_t)count;
    for (Py_ssize_t axis = 0; axis < entry->shape.ndim; axis++) {
        if (!cbor_uint(cbor, &entry->shape.dims[axis]))
            return 0;
    }
    return 1;
}

static int
cbor_dtype(Cbor *cbor, PyObject *table, CborEntry *entry)
{
    const char *text;
    Py_ssize_t length;
    if (!cbor_text(cbor, &text, &length))
        return 0;
    PyObject *key = decode_text(text, length), *canonical;
    int known = key != NULL && dtype_info(table, key, &canonical, &entry->itemsize);
    /* held from here: building the tensor may run the collector and so a finalizer that changes the table */
    if (known)
        Py_XSETREF(entry->dtype, Py_NewRef(canonical));
    Py_XDECREF(key);
    return known;
}

/* components: {"data": {[dtype,] offset, length[, encoding][, digest][, uncompressed_length]}} */
static int
cbor_components(Cbor *cbor, PyObject *table, int objects, CborEntry *entry)
{
    uint64_t count;
    const char *key;
    Py_ssize_t length;
    uint64_t required = objects ? 3 : 2, optional = objects ? 3 : 2;  /* + encoding, digest[, uncompressed] */
    if (!cbor_container(cbor, 5, &count) || count != 1 || !cbor_text(cbor, &key, &length)
            || !same_text(key, length, "data") || !cbor_container(cbor, 5, &count) || count < required
            || count > required + optional)
        return 0;
    int seen = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (!cbor_text(cbor, &key, &length))
            return 0;
        if (same_text(key, length, "offset") && !(seen & 1)) {
            if (!cbor_uint(cbor, &entry->offset))
                return 0;
            seen |= 1;
        }
        else if (same_text(key, length, "length") && !(seen & 2)) {
            if (!cbor_uint(cbor, &entry->length))
                return 0;
            seen |= 2;
        }
        else if (objects && same_text(key, length, "dtype") && !(seen & 4)) {
            if (!cbor_dtype(cbor, table, entry))
                return 0;
            seen |= 4;
        }
        else if (same_text(key, length, "encoding") && !(seen & 8)) {
            const char *text;
            Py_ssize_t text_length;
            if (!cbor_text(cbor, &text, &text_length))
                return 0;
            entry->zstd = same_text(text, text_length, "zstd");
            if (!entry->zstd && !same_text(text, text_length, "raw"))
                return 0;
            seen |= 8;
        }
        else if (same_text(key, length, "digest") && !(seen & 16)) {
            if (!cbor_digest(cbor, entry))
                return 0;
            seen |= 16;
        }
        else if (objects && same_text(key, length, "uncompressed_length") && !(seen & 32)) {
            if (!cbor_uint(cbor, &entry->uncompressed))
                return 0;
            entry->has_uncompressed = 1;
            seen |= 32;
        }
        else
            return 0;
    }
    return (seen & 7) == (objects ? 7 : 3);
}

/* v1.0 {dtype, shape, format: "dense", components}; objects {shape, format: "dense", components}. */
static int
cbor_entry(Cbor *cbor, PyObject *table, int objects, CborEntry *entry)
{
    uint64_t count;
    if (!cbor_container(cbor, 5, &count) || count != (objects ? 3 : 4))
        return 0;
    int seen = 0;
    for (uint64_t i = 0; i < count; i++) {
        const char *key, *text;
        Py_ssize_t length, text_length;
        if (!cbor_text(cbor, &key, &length))
            return 0;
        if (same_text(key, length, "shape") && !(seen & 1)) {
            if (!cbor_shape(cbor, entry))
                return 0;
            seen |= 1;
        }
        else if (same_text(key, length, "format") && !(seen & 2)) {
            if (!cbor_text(cbor, &text, &text_length) || !same_text(text, text_length, "dense"))
                return 0;
            seen |= 2;
        }
        else if (same_text(key, length, "components") && !(seen & 4)) {
            if (!cbor_components(cbor, table, objects, entry))
                return 0;
            seen |= 4;
        }
        else if (!objects && same_text(key, length, "dtype") && !(seen & 8)) {
            if (!cbor_dtype(cbor, table, entry))
                return 0;
            seen |= 8;
        }
        else
            return 0;
    }
    return seen == (objects ? 7 : 15);
}

/* The entry's size agrees with its length (zt_entry's rule, with shape_nbytes's zero handling). */
static int
cbor_entry_fits(const CborEntry *entry)
{
    uint64_t nbytes;
    int sized = dims_nbytes(&entry->shape, entry->itemsize, &nbytes);
    if (entry->zstd)  /* the stored length is the compressed one; the uncompressed one, if given, must fit */
        return !entry->has_uncompressed || (sized && entry->uncompressed == nbytes);
    return sized && nbytes == entry->length && (!entry->has_uncompressed || entry->uncompressed == entry->length);
}

static PyObject *
cbor_tensor(const CborEntry *entry, PyObject *name, PyObject *shapes, Py_ssize_t index)
{
    PyObject *shape = dims_tuple(&entry->shape), *tensor = NULL;
    if (shape == NULL)
        return NULL;
    Stored stored = {entry->zstd ? str_zstd : str_raw, entry->digest != NULL ? entry->digest : Py_None, NULL};
    stored.uncompressed = entry->has_uncompressed ? PyLong_FromUnsignedLongLong(entry->uncompressed)
                                                  : Py_NewRef(Py_None);
    if (stored.uncompressed != NULL)
        tensor = dense_tensor_u64(name, entry->dtype, shape, shapes, index, entry->offset, entry->length, str_dense,
                                  Py_None, &stored);
    Py_XDECREF(stored.uncompressed);
    Py_DECREF(shape);
    return tensor;
}

/* The tensors map: a tensor per entry appended, or 0. */
static int
cbor_tensors(Cbor *cbor, PyObject *table, int objects, PyObject *tensors)
{
    uint64_t count;
    if (!cbor_container(cbor, 5, &count))
        return 0;
    PyObject *names = PySet_New(NULL), *shapes = PyDict_New();
    int ok = names != NULL && shapes != NULL;
    for (uint64_t i = 0; ok && i < count; i++) {
        const char *text;
        Py_ssize_t length;
        CborEntry entry;
        PyObject *name = NULL, *tensor = NULL;
        entry.dtype = entry.digest = NULL;
        entry.zstd = entry.has_uncompressed = 0;
        ok = cbor_text(cbor, &text, &length) && (name = decode_text(text, length)) != NULL
             && PySet_Add(names, name) == 0 && PySet_GET_SIZE(names) == (Py_ssize_t)i + 1
             && cbor_entry(cbor, table, objects, &entry) && cbor_entry_fits(&entry)
             && (tensor = cbor_tensor(&entry, name, shapes, (Py_ssize_t)i)) != NULL
             && PyList_Append(tensors, tensor) == 0;
        Py_XDECREF(entry.dtype);
        Py_XDECREF(entry.digest);
        Py_XDECREF(name);
        Py_XDECREF(tensor);
    }
    Py_XDECREF(names);
    Py_XDECREF(shapes);
    return ok;
}

/* One root member's value: version / generator text into fields, the attributes' span, or the tensors. */
static int
cbor_root_member(Cbor *cbor, const unsigned char *start, PyObject *table, int objects, PyObject *fields,
                 PyObject *tensors, int *seen)
{
    const char *key, *text;
    Py_ssize_t length, text_length;
    if (!cbor_text(cbor, &key, &length))
        return 0;
    if (same_text(key, length, objects ? "objects" : "tensors") && !(*seen & 1)) {
        *seen |= 1;
        return cbor_tensors(cbor, table, objects, tensors);
    }
    if (same_text(key, length, "attributes") && !(*seen & 2)) {
        *seen |= 2;
        const unsigned char *from = cbor->at;
        if (!cbor_skip(cbor, 64))
            return 0;
        PyObject *span = Py_BuildValue("(nn)", (Py_ssize_t)(from - start), (Py_ssize_t)(cbor->at - start));
        int stored = span != NULL && PyDict_SetItemString(fields, "attributes", span) == 0;
        Py_XDECREF(span);
        return stored;
    }
    int bit = same_text(key, length, "version") ? 4 : same_text(key, length, "generator") ? 8 : 0;
    if (bit == 0 || (*seen & bit) || !cbor_text(cbor, &text, &text_length))
        return 0;
    *seen |= bit;
    PyObject *value = decode_text(text, text_length);
    int stored = value != NULL && PyDict_SetItemString(fields, bit == 4 ? "version" : "generator", value) == 0;
    Py_XDECREF(value);
    return stored;
}

PyDoc_STRVAR(zt_manifest_doc,
"zt_manifest(data, objects, dtypes) -> (fields, tensors) | None\n\n"
"A zTensor 1.x manifest (CBOR bytes) of plain dense tensors read directly: ``fields`` holds the root's\n"
"``version`` and ``generator`` text as found and the ``(start, end)`` byte span of its ``attributes`` item\n"
"for cbor2 to decode; ``tensors`` are what zt_dense builds. ``dtypes`` maps the dtype as written to\n"
"``(canonical name, itemsize)``. None when the manifest is anything else, including trailing bytes.");

static PyObject *
zt_manifest(PyObject *module, PyObject *args)
{
    PyObject *data, *dtypes;
    int objects;
    if (!PyArg_ParseTuple(args, "O!pO!:zt_manifest", &PyBytes_Type, &data, &objects, &PyDict_Type, &dtypes))
        return NULL;
    if (tensor_type == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_accel.configure() was not called");
    Py_INCREF(data);
    const unsigned char *start = (const unsigned char *)PyBytes_AS_STRING(data);
    Cbor cbor = {start, start + PyBytes_GET_SIZE(data)};
    PyObject *fields = PyDict_New(), *tensors = PyList_New(0), *result = NULL;
    uint64_t count;
    int seen = 0, ok = fields != NULL && tensors != NULL && cbor_container(&cbor, 5, &count);
    for (uint64_t i = 0; ok && i < count; i++)
        ok = cbor_root_member(&cbor, start, dtypes, objects, fields, tensors, &seen);
    if (ok && (seen & 1) && cbor.at == cbor.end)
        result = PyTuple_Pack(2, fields, tensors);
    else if (!PyErr_Occurred())
        result = Py_NewRef(Py_None);
    Py_XDECREF(fields);
    Py_XDECREF(tensors);
    Py_DECREF(data);
    return result;
}

/* ------------------------------------------------------------------------------------------- layout */

PyDoc_STRVAR(plain_hull_doc,
"plain_hull(tensors, file_size, alignment) -> (start, reach) | None\n\n"
"When every tensor is a dense_tensor whose component was never built, non-empty, inside the file, after the\n"
"previous one without touching it and (alignment > 0) aligned: the first byte and the end of the last\n"
"component. Else None: the general layout check must look.");

static PyObject *
plain_hull(PyObject *module, PyObject *args)
{
    PyObject *tensors, *file_size_obj, *alignment_obj;
    uint64_t file_size, alignment, reach = 0, start = 0;
    if (!PyArg_ParseTuple(args, "O!OO:plain_hull", &PyList_Type, &tensors, &file_size_obj, &alignment_obj))
        return NULL;
    if (tensor_type == NULL)
        return PyErr_Format(PyExc_RuntimeError, "_accel.configure() was not called");
    Py_ssize_t count = PyList_GET_SIZE(tensors);
    if (count == 0 || !as_u64(file_size_obj, &file_size) || !as_u64(alignment_obj, &alignment))
        Py_RETURN_NONE;  /* an alignment past u64 is not to be truncated; the general check looks */
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *tensor = PyList_GET_ITEM(tensors, i);
        if (!Py_IS_TYPE(tensor, tensor_type))
            Py_RETURN_NONE;
        PyObject *components = *(PyObject **)((char *)tensor + slot_offset[SLOT_COMPONENTS]);
        PyObject *data = *(PyObject **)((char *)tensor + slot_offset[SLOT_DATA]);
        uint64_t offset, length, end;
        if (components != Py_None || data == NULL || !PyTuple_CheckExact(data) || PyTuple_GET_SIZE(data) < 2
                || !as_u64(PyTuple_GET_ITEM(data, 0), &offset) || !as_u64(PyTuple_GET_ITEM(data, 1), &length)
                || length == 0 || add_overflow(offset, length, &end) || end > file_size
                || (i > 0 && offset < reach) || (alignment && offset % alignment))
            Py_RETURN_NONE;
        if (i == 0)
            start = offset;
        reach = end;
    }
    return Py_BuildValue("(KK)", (unsigned long long)start, (unsigned long long)reach);
}

/* ---------------------------------------------------------------------------------------------- setup */

PyDoc_STRVAR(configure_doc,
"configure(tensor_type)\n\n"
"Remember the Tensor class whose instances the other functions build; its slots must be plain members.");

static PyObject *
configure(PyObject *module, PyObject *arg)
{
    if (!PyType_Check(arg))
        return PyErr_Format(PyExc_TypeError, "configure() needs the Tensor class");
    PyTypeObject *type = (PyTypeObject *)arg;
    Py_ssize_t offsets[SLOT_COUNT];
    for (int i = 0; i < SLOT_COUNT; i++) {
        PyObject *descr = PyObject_GetAttrString(arg, slot_names[i]);  /* a slot's descriptor itself */
        if (descr == NULL)
            return NULL;
        PyMemberDef *member = Py_IS_TYPE(descr, &PyMemberDescr_Type) ? ((PyMemberDescrObject *)descr)->d_member : NULL;
        int usable = member != NULL && member->type == T_OBJECT_EX && !(member->flags & READONLY)
                     && ((PyDescrObject *)descr)->d_type == type;
        Py_DECREF(descr);
        if (!usable)
            return PyErr_Format(PyExc_TypeError, "%s.%s is not a writable object slot of that class",
                                type->tp_name, slot_names[i]);
        offsets[i] = member->offset;
    }
    Py_INCREF(type);
    Py_XSETREF(tensor_type, type);
    memcpy(slot_offset, offsets, sizeof offsets);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_O, configure_doc},
    {"safetensors_dense", safetensors_dense, METH_VARARGS, safetensors_dense_doc},
    {"zt_dense", zt_dense, METH_VARARGS, zt_dense_doc},
    {"plain_hull", plain_hull, METH_VARARGS, plain_hull_doc},
    {"plain_headers", plain_headers, METH_VARARGS, plain_headers_doc},
    {"safetensors_header", safetensors_header, METH_VARARGS, safetensors_header_doc},
    {"zt_manifest", zt_manifest, METH_VARARGS, zt_manifest_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_accel", "Plain-entry fast paths of the safetensors and zTensor readers.", -1,
    methods, NULL, NULL, NULL, NULL,
};

static PyObject **const interned[] = {
    &str_raw, &str_zstd, &str_dense, &str_dtype, &str_shape, &str_data_offsets, &str_format, &str_components, &str_data,
    &str_offset, &str_length, &str_shard, &str_source, &str_index_in_shard, &str_metadata,
};
static const char *const interned_text[] = {
    "raw", "zstd", "dense", "dtype", "shape", "data_offsets", "format", "components", "data",
    "offset", "length", "shard", "source", "index_in_shard", "__metadata__",
};

PyMODINIT_FUNC
PyInit__accel(void)
{
    for (size_t i = 0; i < sizeof interned / sizeof interned[0]; i++) {
        if ((*interned[i] = PyUnicode_InternFromString(interned_text[i])) == NULL)
            return NULL;
    }
    return PyModule_Create(&module_def);
}
