/* _native.c — the CPython extension over include/ladle.h (and nothing else).
 *
 * Python objects own one reference each on the C handle they wrap (Expr, Plan,
 * Engine, Result). C builders consume their arguments, so every call passes a
 * fresh reference (ladle_expr_ref / ladle_plan_ref) and the Python objects stay
 * valid. A failed call raises ladle._native.LadleError(code, message). Long
 * calls (execute) release the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "ladle.h"

static PyObject *LadleError;

static PyObject *raise_err(ladle_status st, const ladle_error *err) {
  /* the message can quote a file's bytes (a column name) that are not UTF-8 */
  PyObject *msg =
      PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message), "backslashreplace");
  if (msg == NULL) return NULL;
  PyObject *args = Py_BuildValue("(iN)", (int)st, msg);
  if (args != NULL) {
    PyErr_SetObject(LadleError, args);
    Py_DECREF(args);
  }
  return NULL;
}

/* ----------------------------------------------------------------- objects */

typedef struct {
  PyObject_HEAD ladle_expr *e;
} ExprObject;
typedef struct {
  PyObject_HEAD ladle_plan *p;
} PlanObject;
typedef struct {
  PyObject_HEAD ladle_engine *eng;
  PyObject *comm; /* the CommObject the engine borrows, kept alive while it lives */
} EngineObject;
typedef struct {
  PyObject_HEAD ladle_comm *c;
} CommObject;
typedef struct {
  PyObject_HEAD ladle_result *r;
} ResultObject;

static void expr_dealloc(ExprObject *self) {
  ladle_expr_destroy(self->e);
  Py_TYPE(self)->tp_free((PyObject *)self);
}
static void plan_dealloc(PlanObject *self) {
  ladle_plan_destroy(self->p);
  Py_TYPE(self)->tp_free((PyObject *)self);
}
static void engine_dealloc(EngineObject *self) {
  ladle_engine_destroy(self->eng); /* before the communicator it borrows */
  Py_XDECREF(self->comm);
  Py_TYPE(self)->tp_free((PyObject *)self);
}
static void comm_dealloc(CommObject *self) {
  ladle_comm_destroy(self->c);
  Py_TYPE(self)->tp_free((PyObject *)self);
}
static void result_dealloc(ResultObject *self) {
  ladle_result_destroy(self->r);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject ExprType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ladle._native.Expr",
    .tp_basicsize = sizeof(ExprObject), .tp_dealloc = (destructor)expr_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT, .tp_doc = "A ladle expression (opaque)."};

static PyObject *wrap_expr(ladle_expr *e) {
  if (e == NULL) return PyErr_NoMemory();
  ExprObject *o = PyObject_New(ExprObject, &ExprType);
  if (o == NULL) {
    ladle_expr_destroy(e);
    return NULL;
  }
  o->e = e;
  return (PyObject *)o;
}

static int get_expr(PyObject *obj, ladle_expr **out) {
  if (!PyObject_TypeCheck(obj, &ExprType)) {
    PyErr_Format(PyExc_TypeError, "expected a ladle Expr, got %s", Py_TYPE(obj)->tp_name);
    return 0;
  }
  *out = ladle_expr_ref(((ExprObject *)obj)->e);
  return 1;
}

/* A list of Exprs as fresh references in a malloc'd array. */
static ladle_expr **get_exprs(PyObject *seq, Py_ssize_t *n) {
  PyObject *fast = PySequence_Fast(seq, "expected a sequence of Exprs");
  if (fast == NULL) return NULL;
  *n = PySequence_Fast_GET_SIZE(fast);
  ladle_expr **arr = calloc((size_t)(*n > 0 ? *n : 1), sizeof *arr);
  if (arr == NULL) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < *n; i++) {
    if (!get_expr(PySequence_Fast_GET_ITEM(fast, i), &arr[i])) {
      for (Py_ssize_t k = 0; k < i; k++) ladle_expr_destroy(arr[k]);
      free(arr);
      Py_DECREF(fast);
      return NULL;
    }
  }
  Py_DECREF(fast);
  return arr;
}

static void free_exprs(ladle_expr **a, Py_ssize_t n) {
  if (a == NULL) return;
  for (Py_ssize_t i = 0; i < n; i++) ladle_expr_destroy(a[i]);
  free(a);
}

/* A list of str as a malloc'd array of borrowed UTF-8 pointers (valid while the
 * list lives). */
static const char **str_list(PyObject *seq, Py_ssize_t *n) {
  PyObject *fast = PySequence_Fast(seq, "expected a list of str");
  if (fast == NULL) return NULL;
  *n = PySequence_Fast_GET_SIZE(fast);
  const char **a = calloc((size_t)(*n > 0 ? *n : 1), sizeof *a);
  for (Py_ssize_t i = 0; a && i < *n; i++) {
    a[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
    if (a[i] == NULL) {
      free(a);
      a = NULL;
    }
  }
  Py_DECREF(fast); /* items stay alive in seq */
  if (a == NULL && !PyErr_Occurred()) PyErr_NoMemory();
  return a;
}

static PyObject *plan_schema(PlanObject *self, PyObject *unused);
static PyObject *plan_explain(PlanObject *self, PyObject *unused);
static PyMethodDef plan_methods[] = {
    {"schema", (PyCFunction)plan_schema, METH_NOARGS, "[(name, (type_id, unit, tz))]"},
    {"explain", (PyCFunction)plan_explain, METH_NOARGS, "the plan as text"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject PlanType = {PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ladle._native.Plan",
                                .tp_basicsize = sizeof(PlanObject),
                                .tp_dealloc = (destructor)plan_dealloc,
                                .tp_flags = Py_TPFLAGS_DEFAULT,
                                .tp_methods = plan_methods,
                                .tp_doc = "A ladle plan node (opaque)."};

static PyObject *wrap_plan(ladle_plan *p) {
  PlanObject *o = PyObject_New(PlanObject, &PlanType);
  if (o == NULL) {
    ladle_plan_destroy(p);
    return NULL;
  }
  o->p = p;
  return (PyObject *)o;
}

static int get_plan(PyObject *obj, ladle_plan **out) {
  if (!PyObject_TypeCheck(obj, &PlanType)) {
    PyErr_Format(PyExc_TypeError, "expected a ladle Plan, got %s", Py_TYPE(obj)->tp_name);
    return 0;
  }
  *out = ladle_plan_ref(((PlanObject *)obj)->p);
  return 1;
}

/* A dtype in Python: (type id, time unit, time zone, precision, scale, list
 * child type id); the last three only for DECIMAL and LIST, optional on the
 * way in. */
static PyObject *dtype_tuple(ladle_dtype t) {
  return Py_BuildValue("(iisiii)", (int)t.id, (int)t.unit, t.tz, (int)t.precision, (int)t.scale,
                       t.id == LADLE_TYPE_LIST && t.child ? (int)t.child->id : 0);
}

static int parse_dtype(PyObject *obj, ladle_dtype *out) {
  int id = 0, unit = 0, precision = 0, scale = 0, child = 0;
  const char *tz = "";
  if (!PyArg_ParseTuple(obj, "ii|siii", &id, &unit, &tz, &precision, &scale, &child)) return 0;
  if (id == LADLE_TYPE_LIST) {
    *out = ladle_dtype_list((ladle_type_id)child);
    if (out->id != LADLE_TYPE_LIST) {
      PyErr_Format(PyExc_ValueError, "bad list child type %d", child);
      return 0;
    }
    return 1;
  }
  if (id < 0 || id >= LADLE_TYPE_COUNT_ || unit < 0 || unit > 2 ||
      (id == LADLE_TYPE_DECIMAL &&
       (precision < 1 || precision > 38 || scale < 0 || scale > precision))) {
    PyErr_Format(PyExc_ValueError, "bad dtype (%d, %d, %d, %d)", id, unit, precision, scale);
    return 0;
  }
  *out = ladle_dtype_temporal((ladle_type_id)id, (ladle_time_unit)unit, tz);
  out->id = (ladle_type_id)id;
  if (id == LADLE_TYPE_DECIMAL) *out = ladle_dtype_decimal(precision, scale);
  return 1;
}

static PyObject *plan_schema(PlanObject *self, PyObject *unused) {
  (void)unused;
  size_t n = ladle_plan_num_columns(self->p);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (list == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject *item = Py_BuildValue("(sN)", ladle_plan_column_name(self->p, i),
                                   dtype_tuple(ladle_plan_column_type(self->p, i)));
    if (item == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject *plan_explain(PlanObject *self, PyObject *unused) {
  (void)unused;
  char *text = NULL;
  ladle_error err;
  ladle_status st = ladle_plan_explain(self->p, &text, &err);
  if (st != LADLE_OK) return raise_err(st, &err);
  PyObject *s = PyUnicode_FromString(text);
  ladle_free(text);
  return s;
}

/* ------------------------------------------------------------------ result */

static void stream_capsule_destructor(PyObject *cap) {
  struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
  if (s == NULL) {
    PyErr_Clear();
    return;
  }
  if (s->release != NULL) s->release(s);
  free(s);
}

static PyObject *result_arrow_stream(ResultObject *self, PyObject *args) {
  int views = 0;
  if (!PyArg_ParseTuple(args, "|p", &views)) return NULL;
  struct ArrowArrayStream *s = calloc(1, sizeof *s);
  if (s == NULL) return PyErr_NoMemory();
  ladle_error err;
  ladle_status st = views ? ladle_result_export_stream_views(self->r, s, &err)
                          : ladle_result_export_stream(self->r, s, &err);
  if (st != LADLE_OK) {
    free(s);
    return raise_err(st, &err);
  }
  PyObject *cap = PyCapsule_New(s, "arrow_array_stream", stream_capsule_destructor);
  if (cap == NULL) {
    s->release(s);
    free(s);
  }
  return cap;
}

static void schema_capsule_destructor(PyObject *cap) {
  struct ArrowSchema *sch = PyCapsule_GetPointer(cap, "arrow_schema");
  if (sch == NULL) {
    PyErr_Clear();
    return;
  }
  if (sch->release != NULL) sch->release(sch);
  free(sch);
}

static void device_array_capsule_destructor(PyObject *cap) {
  struct ArrowDeviceArray *a = PyCapsule_GetPointer(cap, "arrow_device_array");
  if (a == NULL) {
    PyErr_Clear();
    return;
  }
  if (a->array.release != NULL) a->array.release(&a->array);
  free(a);
}

static PyObject *result_device_array(ResultObject *self, PyObject *unused) {
  (void)unused;
  struct ArrowSchema *sch = calloc(1, sizeof *sch);
  struct ArrowDeviceArray *a = calloc(1, sizeof *a);
  if (sch == NULL || a == NULL) {
    free(sch);
    free(a);
    return PyErr_NoMemory();
  }
  ladle_error err;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = ladle_result_export_device_array(self->r, sch, a, &err);
  Py_END_ALLOW_THREADS if (st != LADLE_OK) {
    free(sch);
    free(a);
    return raise_err(st, &err);
  }
  PyObject *c1 = PyCapsule_New(sch, "arrow_schema", schema_capsule_destructor);
  if (c1 == NULL) {
    sch->release(sch);
    free(sch);
    a->array.release(&a->array);
    free(a);
    return NULL;
  }
  PyObject *c2 = PyCapsule_New(a, "arrow_device_array", device_array_capsule_destructor);
  if (c2 == NULL) {
    Py_DECREF(c1);
    a->array.release(&a->array);
    free(a);
    return NULL;
  }
  return Py_BuildValue("(NN)", c1, c2);
}

static void dlpack_capsule_destructor(PyObject *cap) {
  /* a consumer renames the capsule to "used_dltensor" and owns the tensor */
  if (!PyCapsule_IsValid(cap, "dltensor")) return;
  DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}

static PyObject *result_dlpack(ResultObject *self, PyObject *args) {
  Py_ssize_t i;
  long long stream = 1; /* DLPack: the legacy default stream */
  int sync = 1;
  if (!PyArg_ParseTuple(args, "n|Lp", &i, &stream, &sync)) return NULL;
  DLManagedTensor *m = NULL;
  ladle_error err;
  ladle_status st =
      ladle_result_export_dlpack_on(self->r, (size_t)i, (void *)(intptr_t)stream, sync, &m, &err);
  if (st != LADLE_OK) return raise_err(st, &err);
  PyObject *cap = PyCapsule_New(m, "dltensor", dlpack_capsule_destructor);
  if (cap == NULL) m->deleter(m);
  return cap;
}

static PyObject *result_write_parquet(ResultObject *self, PyObject *args) {
  const char *path;
  int codec, level, dictionary, statistics;
  long long rg;
  if (!PyArg_ParseTuple(args, "siiLpp", &path, &codec, &level, &rg, &dictionary, &statistics))
    return NULL;
  ladle_parquet_write_opts o = {codec, level, rg, dictionary, statistics};
  ladle_error err;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = ladle_result_write_parquet(self->r, path, &o, &err);
  Py_END_ALLOW_THREADS if (st != LADLE_OK) return raise_err(st, &err);
  Py_RETURN_NONE;
}

static PyObject *result_device(ResultObject *self, PyObject *unused) {
  (void)unused;
  int id = 0;
  ladle_device_type d = ladle_result_device(self->r, &id);
  return Py_BuildValue("(ii)", (int)d, id);
}

static PyObject *result_sharded(ResultObject *self, PyObject *unused) {
  (void)unused;
  return PyBool_FromLong(ladle_result_sharded(self->r));
}

static PyObject *result_num_rows(ResultObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLongLong(ladle_result_num_rows(self->r));
}

static PyObject *result_schema(ResultObject *self, PyObject *unused) {
  (void)unused;
  size_t n = ladle_result_num_columns(self->r);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (list == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject *item = Py_BuildValue("(sN)", ladle_result_column_name(self->r, i),
                                   dtype_tuple(ladle_result_column_type(self->r, i)));
    if (item == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyMethodDef result_methods[] = {
    {"arrow_stream", (PyCFunction)result_arrow_stream, METH_VARARGS,
     "a PyCapsule 'arrow_array_stream' over the result"},
    {"dlpack", (PyCFunction)result_dlpack, METH_VARARGS,
     "dlpack(i, stream=1, sync=True): a PyCapsule 'dltensor' of column i for a consumer on "
     "`stream` (DLPack's stream numbers)"},
    {"device_array", (PyCFunction)result_device_array, METH_NOARGS,
     "(PyCapsule 'arrow_schema', PyCapsule 'arrow_device_array'): the result as one struct "
     "array where it lives"},
    {"device", (PyCFunction)result_device, METH_NOARGS,
     "(DLPack device type, device id) of where the result lives"},
    {"num_rows", (PyCFunction)result_num_rows, METH_NOARGS, "rows"},
    {"write_parquet", (PyCFunction)result_write_parquet, METH_VARARGS,
     "write_parquet(path, codec, level, row_group_size, dictionary, statistics)"},
    {"schema", (PyCFunction)result_schema, METH_NOARGS, "[(name, dtype)]"},
    {"sharded", (PyCFunction)result_sharded, METH_NOARGS, "this rank's part of a sharded result"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ResultType = {PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ladle._native.Result",
                                  .tp_basicsize = sizeof(ResultObject),
                                  .tp_dealloc = (destructor)result_dealloc,
                                  .tp_flags = Py_TPFLAGS_DEFAULT,
                                  .tp_methods = result_methods,
                                  .tp_doc = "A ladle result (opaque)."};

/* ----------------------------------------------------------- communicator */

/* The "callbacks" communicator's trampolines: each collective calls a method
 * of a Python object (ops) with memoryviews over ladle's buffers (no copies;
 * inputs read-only) and lists of byte counts. The query runs on a thread of
 * its own while the caller waits with the GIL released (execute_interruptible),
 * so each takes the GIL itself. A Python exception becomes the collective's
 * message ("Type: text"). The views are released when the method returns:
 * one kept past the call raises ValueError instead of reading freed memory. */
typedef struct py_comm_ops {
  PyObject *ops; /* owned; dropped by py_cb_release with the GIL held */
  int rank, size;
} py_comm_ops;

/* The pending exception as "Type: text" into msg (cleared); returns 1. */
static int py_cb_fail(char *msg, size_t cap) {
  PyObject *type = NULL, *value = NULL, *tb = NULL;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  const char *tn = type != NULL ? ((PyTypeObject *)type)->tp_name : "error";
  const char *dot = strrchr(tn, '.');
  if (dot != NULL) tn = dot + 1;
  PyObject *str = value != NULL ? PyObject_Str(value) : NULL;
  const char *text = str != NULL ? PyUnicode_AsUTF8(str) : NULL;
  if (text == NULL) PyErr_Clear();
  snprintf(msg, cap, "%s: %s", tn, text != NULL && *text != '\0' ? text : "(no message)");
  Py_XDECREF(str);
  Py_XDECREF(type);
  Py_XDECREF(value); /* before the views are released: its traceback holds the method's frames */
  Py_XDECREF(tb);
  return 1;
}

/* A memoryview over bytes bytes at p (PyBUF_READ or PyBUF_WRITE). */
static PyObject *py_cb_view(const void *p, size_t bytes, int flags) {
  static char empty[1];
  return PyMemoryView_FromMemory(p != NULL ? (char *)p : empty, (Py_ssize_t)bytes, flags);
}

/* The bytes a buffer spans: the end of its furthest part. */
static size_t py_cb_span(const size_t *counts, const size_t *displs, int n) {
  size_t end = 0;
  for (int r = 0; r < n; r++)
    if (counts[r] > 0 && displs[r] + counts[r] > end) end = displs[r] + counts[r];
  return end;
}

/* n sizes as a Python list of ints. */
static PyObject *py_cb_list(const size_t *v, int n) {
  PyObject *l = PyList_New(n);
  if (l == NULL) return NULL;
  for (int i = 0; i < n; i++) {
    PyObject *x = PyLong_FromSize_t(v[i]);
    if (x == NULL) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, i, x);
  }
  return l;
}

/* Calls ops.<method>(*args) (args: a new tuple, or NULL when building it
 * failed), releases the memoryviews views[0..nviews-1] and drops every
 * reference; 0, or 1 with the message. Runs with the GIL held. */
static int py_cb_call(py_comm_ops *o, const char *method, PyObject *args, PyObject **views,
                      int nviews, char *msg, size_t cap) {
  int rc = 0;
  PyObject *res = NULL;
  if (args != NULL) {
    PyObject *fn = PyObject_GetAttrString(o->ops, method);
    if (fn != NULL) {
      res = PyObject_Call(fn, args, NULL);
      Py_DECREF(fn);
    }
  }
  if (res == NULL) rc = py_cb_fail(msg, cap);
  Py_XDECREF(res);
  Py_XDECREF(args); /* the tuple's references to the views go first */
  for (int i = 0; i < nviews; i++) {
    if (views[i] == NULL) continue;
    PyObject *r = PyObject_CallMethod(views[i], "release", NULL);
    if (r == NULL) PyErr_Clear(); /* still exported by what the method kept: left to it */
    Py_XDECREF(r);
    Py_DECREF(views[i]);
  }
  return rc;
}

static int py_cb_allgatherv(void *user, const void *in, const size_t *counts, const size_t *displs,
                            void *out, char *msg, size_t cap) {
  py_comm_ops *o = user;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *v[2] = {py_cb_view(in, counts[o->rank], PyBUF_READ),
                    py_cb_view(out, py_cb_span(counts, displs, o->size), PyBUF_WRITE)};
  PyObject *args = v[0] != NULL && v[1] != NULL
                       ? Py_BuildValue("(ONNO)", v[0], py_cb_list(counts, o->size),
                                       py_cb_list(displs, o->size), v[1])
                       : NULL;
  int rc = py_cb_call(o, "allgatherv", args, v, 2, msg, cap);
  PyGILState_Release(g);
  return rc;
}

static int py_cb_alltoallv(void *user, const void *in, const size_t *sc, const size_t *sd,
                           void *out, const size_t *rc_, const size_t *rd, char *msg, size_t cap) {
  py_comm_ops *o = user;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *v[2] = {py_cb_view(in, py_cb_span(sc, sd, o->size), PyBUF_READ),
                    py_cb_view(out, py_cb_span(rc_, rd, o->size), PyBUF_WRITE)};
  PyObject *args =
      v[0] != NULL && v[1] != NULL
          ? Py_BuildValue("(ONNONN)", v[0], py_cb_list(sc, o->size), py_cb_list(sd, o->size), v[1],
                          py_cb_list(rc_, o->size), py_cb_list(rd, o->size))
          : NULL;
  int rc = py_cb_call(o, "alltoallv", args, v, 2, msg, cap);
  PyGILState_Release(g);
  return rc;
}

static int py_cb_bcast(void *user, void *buf, size_t bytes, int root, char *msg, size_t cap) {
  py_comm_ops *o = user;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *v[1] = {py_cb_view(buf, bytes, PyBUF_WRITE)};
  PyObject *args = v[0] != NULL ? Py_BuildValue("(Oi)", v[0], root) : NULL;
  int rc = py_cb_call(o, "bcast", args, v, 1, msg, cap);
  PyGILState_Release(g);
  return rc;
}

static int py_cb_allreduce(void *user, const void *in, void *out, size_t n, int type, int op,
                           char *msg, size_t cap) {
  py_comm_ops *o = user;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *v[2] = {py_cb_view(in, n * 8, PyBUF_READ), py_cb_view(out, n * 8, PyBUF_WRITE)};
  PyObject *args = v[0] != NULL && v[1] != NULL
                       ? Py_BuildValue("(OOnii)", v[0], v[1], (Py_ssize_t)n, type, op)
                       : NULL;
  int rc = py_cb_call(o, "allreduce", args, v, 2, msg, cap);
  PyGILState_Release(g);
  return rc;
}

/* ops.<method>() with no arguments, the GIL taken. */
static int py_cb_call0(void *user, const char *method, char *msg, size_t cap) {
  PyGILState_STATE g = PyGILState_Ensure();
  int rc = py_cb_call(user, method, PyTuple_New(0), NULL, 0, msg, cap);
  PyGILState_Release(g);
  return rc;
}

static int py_cb_barrier(void *user, char *msg, size_t cap) {
  return py_cb_call0(user, "barrier", msg, cap);
}

/* The engine gave up on a query on this rank: ops.fail(why) tells the
 * others (its errors are dropped: telling is best effort). */
static void py_cb_give_up(void *user, const char *why) {
  py_comm_ops *o = user;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *text = PyUnicode_DecodeUTF8(why, (Py_ssize_t)strlen(why), "replace");
  PyObject *r = text != NULL ? PyObject_CallMethod(o->ops, "fail", "O", text) : NULL;
  if (r == NULL) PyErr_Clear();
  Py_XDECREF(r);
  Py_XDECREF(text);
  PyGILState_Release(g);
}

/* After a failed query: ops.recover() starts the transport afresh. */
static int py_cb_recover(void *user, char *msg, size_t cap) {
  return py_cb_call0(user, "recover", msg, cap);
}

static void py_cb_release(void *user) {
  py_comm_ops *o = user;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF(o->ops);
  PyGILState_Release(g);
  free(o);
}

/* An int attribute of ops into *out; 0 with a TypeError naming it otherwise. */
static int py_cb_int_attr(PyObject *ops, const char *name, int *out) {
  PyObject *a = PyObject_GetAttrString(ops, name);
  if (a == NULL) return 0;
  long v = PyLong_Check(a) ? PyLong_AsLong(a) : -1;
  int ok = PyLong_Check(a) && !(v == -1 && PyErr_Occurred()) && v >= INT_MIN && v <= INT_MAX;
  Py_DECREF(a);
  if (!ok) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "Comm('callbacks'): ops.%s: an int", name);
    return 0;
  }
  *out = (int)v;
  return 1;
}

/* The "callbacks" communicator over ops (see py_comm_ops): ops.rank and
 * ops.size, ops.name (optional, a str) as its name, ops.fail(why)
 * (optional) called when a query fails on this rank, ops.recover()
 * (optional) called on every rank after a failed query. */
static ladle_status comm_create_py(PyObject *ops, ladle_comm **out, ladle_error *err, int *pyerr) {
  int rank = 0, size = 0;
  *pyerr = 1;
  if (!py_cb_int_attr(ops, "rank", &rank) || !py_cb_int_attr(ops, "size", &size))
    return LADLE_EINVAL;
  PyObject *name_obj = PyObject_GetAttrString(ops, "name");
  const char *name = NULL;
  if (name_obj == NULL) {
    PyErr_Clear();
  } else if (PyUnicode_Check(name_obj)) {
    name = PyUnicode_AsUTF8(name_obj);
    if (name == NULL) {
      Py_DECREF(name_obj);
      return LADLE_EINVAL;
    }
  }
  py_comm_ops *o = malloc(sizeof *o);
  if (o == NULL) {
    Py_XDECREF(name_obj);
    PyErr_NoMemory();
    return LADLE_ENOMEM;
  }
  Py_INCREF(ops);
  o->ops = ops;
  o->rank = rank;
  o->size = size;
  ladle_comm_callbacks cb = {
      .user = o,
      .allgatherv = py_cb_allgatherv,
      .alltoallv = py_cb_alltoallv,
      .bcast = py_cb_bcast,
      .allreduce = py_cb_allreduce,
      .barrier = py_cb_barrier,
      .release = py_cb_release,
      .name = name,
      .fail = PyObject_HasAttrString(ops, "fail") ? py_cb_give_up : NULL,
      .recover = PyObject_HasAttrString(ops, "recover") ? py_cb_recover : NULL};
  *pyerr = 0;
  ladle_status st = ladle_comm_create_callbacks(&cb, rank, size, out, err);
  Py_XDECREF(name_obj); /* the name was copied */
  if (st != LADLE_OK) {
    Py_DECREF(ops);
    free(o);
  }
  return st;
}

/* Comm(kind, timeout, ops=None): "self" (one rank), "mpi" (MPI's world; MPI
 * is initialised here unless the process has already) or "callbacks" (the
 * collectives of the Python object ops, above; timeout unused: ops's own) */
static int comm_init(CommObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"kind", "timeout", "ops", NULL};
  const char *kind = "self";
  double timeout = 0;
  PyObject *ops = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|sdO", kwlist, &kind, &timeout, &ops)) return -1;
  if ((strcmp(kind, "callbacks") == 0) != (ops != Py_None)) {
    PyErr_Format(PyExc_ValueError, "communicator kind '%s': ops= %s", kind,
                 ops == Py_None ? "is required" : "is for kind 'callbacks' only");
    return -1;
  }
  ladle_comm_destroy(self->c);
  self->c = NULL;
  ladle_error err;
  ladle_status st;
  if (strcmp(kind, "self") == 0) {
    st = ladle_comm_create_self(&self->c, &err);
  } else if (strcmp(kind, "mpi") == 0) {
    Py_BEGIN_ALLOW_THREADS st = ladle_comm_create_mpi(timeout, &self->c, &err);
    Py_END_ALLOW_THREADS
  } else if (strcmp(kind, "callbacks") == 0) {
    int pyerr = 0;
    st = comm_create_py(ops, &self->c, &err, &pyerr);
    if (pyerr) return -1;
  } else {
    PyErr_Format(PyExc_ValueError, "communicator kind '%s': 'self', 'mpi' or 'callbacks'", kind);
    return -1;
  }
  if (st != LADLE_OK) {
    raise_err(st, &err);
    return -1;
  }
  return 0;
}

static PyObject *comm_rank(CommObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLong(self->c ? ladle_comm_rank(self->c) : 0);
}
static PyObject *comm_size(CommObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLong(self->c ? ladle_comm_size(self->c) : 1);
}
static PyObject *comm_name(CommObject *self, PyObject *unused) {
  (void)unused;
  return PyUnicode_FromString(self->c ? ladle_comm_name(self->c) : "none");
}

static PyMethodDef comm_methods[] = {
    {"rank", (PyCFunction)comm_rank, METH_NOARGS, "this process's rank"},
    {"size", (PyCFunction)comm_size, METH_NOARGS, "the job's ranks"},
    {"name", (PyCFunction)comm_name, METH_NOARGS, "'self', 'mpi' or the callbacks' name"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject CommType = {PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ladle._native.Comm",
                                .tp_basicsize = sizeof(CommObject),
                                .tp_dealloc = (destructor)comm_dealloc,
                                .tp_flags = Py_TPFLAGS_DEFAULT,
                                .tp_methods = comm_methods,
                                .tp_init = (initproc)comm_init,
                                .tp_new = PyType_GenericNew,
                                .tp_doc = "The ranks of an SPMD job (ladle_comm)."};

/* ------------------------------------------------------------------ engine */

static int engine_init(EngineObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"threads", "morsel_rows", "memory_limit", "device", "device_id",
                           "comm",    NULL};
  int threads = 0, device = LADLE_DEVICE_CPU, device_id = 0;
  long long morsel = 0, limit = 0;
  PyObject *comm = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|iLLiiO", kwlist, &threads, &morsel, &limit, &device,
                                   &device_id, &comm))
    return -1;
  if (comm != Py_None && !PyObject_TypeCheck(comm, &CommType)) {
    PyErr_Format(PyExc_TypeError, "comm: expected a ladle Comm, got %s", Py_TYPE(comm)->tp_name);
    return -1;
  }
  ladle_engine_opts o = {(ladle_device_type)device,
                         device_id,
                         threads,
                         morsel,
                         limit,
                         comm != Py_None ? ((CommObject *)comm)->c : NULL};
  ladle_error err;
  ladle_engine_destroy(self->eng);
  self->eng = NULL;
  Py_CLEAR(self->comm);
  ladle_status st = ladle_engine_create(&o, &self->eng, &err);
  if (st == LADLE_OK && comm != Py_None) {
    Py_INCREF(comm);
    self->comm = comm;
  }
  if (st != LADLE_OK) {
    raise_err(st, &err);
    return -1;
  }
  return 0;
}

/* A query run on a thread of its own, so that the calling (main) thread can
 * wake every 50 ms to let Python handle signals: Ctrl-C sets the query's
 * cancellation flag, the query stops at its next partition and
 * KeyboardInterrupt reaches the caller. */
typedef struct exec_call {
  ladle_engine *eng;
  const ladle_plan *plan;
  int host;   /* on the engine's host side (ladle_engine_execute_host) */
  int cancel; /* set by the waiting thread, read by the query's */
  ladle_result *r;
  ladle_error err;
  ladle_status st;
  int done;
  pthread_mutex_t mu;
  pthread_cond_t cv;
} exec_call;

static void *exec_main(void *arg) {
  exec_call *c = arg;
  ladle_status st =
      c->host ? ladle_engine_execute_host(c->eng, c->plan, &c->cancel, &c->r, &c->err)
              : ladle_engine_execute_cancellable(c->eng, c->plan, &c->cancel, &c->r, &c->err);
  pthread_mutex_lock(&c->mu);
  c->st = st;
  c->done = 1;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* Waits up to ms milliseconds (forever when ms < 0) for the query; 1 if done. */
static int exec_wait(exec_call *c, int ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += (long)ms * 1000000L;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  pthread_mutex_lock(&c->mu);
  while (!c->done)
    if (ms >= 0 && pthread_cond_timedwait(&c->cv, &c->mu, &until) != 0)
      break;
    else if (ms < 0)
      pthread_cond_wait(&c->cv, &c->mu);
  int done = c->done;
  pthread_mutex_unlock(&c->mu);
  return done;
}

static ladle_status execute_interruptible(ladle_engine *eng, const ladle_plan *plan, int host,
                                          ladle_result **out, ladle_error *err, int *interrupted) {
  exec_call c;
  memset(&c, 0, sizeof c);
  c.eng = eng;
  c.plan = plan;
  c.host = host;
  pthread_mutex_init(&c.mu, NULL);
  pthread_cond_init(&c.cv, NULL);
  pthread_t th;
  ladle_status st;
  if (pthread_create(&th, NULL, exec_main, &c) != 0) {
    Py_BEGIN_ALLOW_THREADS st = host ? ladle_engine_execute_host(eng, plan, NULL, out, err)
                                     : ladle_engine_execute(eng, plan, out, err);
    Py_END_ALLOW_THREADS
  } else {
    for (;;) {
      int done;
      Py_BEGIN_ALLOW_THREADS done = exec_wait(&c, 50);
      Py_END_ALLOW_THREADS if (done) break;
      if (PyErr_CheckSignals() < 0) {
        /* a signal handler raised (KeyboardInterrupt): stop the query */
        __atomic_store_n(&c.cancel, 1, __ATOMIC_RELAXED);
        *interrupted = 1;
        Py_BEGIN_ALLOW_THREADS exec_wait(&c, -1);
        Py_END_ALLOW_THREADS break;
      }
    }
    pthread_join(th, NULL);
    st = c.st;
    if (st == LADLE_OK && *interrupted) {
      ladle_result_destroy(c.r); /* finished just as it was cancelled */
      c.r = NULL;
    }
    *out = c.r;
    if (err != NULL) *err = c.err;
  }
  pthread_mutex_destroy(&c.mu);
  pthread_cond_destroy(&c.cv);
  return st;
}

static PyObject *engine_execute(EngineObject *self, PyObject *args) {
  PyObject *plan_obj;
  int interruptible = 0, host = 0;
  if (!PyArg_ParseTuple(args, "O!|pp", &PlanType, &plan_obj, &interruptible, &host)) return NULL;
  if (self->eng == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "engine not initialised");
    return NULL;
  }
  ladle_result *r = NULL;
  ladle_error err;
  ladle_status st;
  if (interruptible) {
    int interrupted = 0;
    st =
        execute_interruptible(self->eng, ((PlanObject *)plan_obj)->p, host, &r, &err, &interrupted);
    if (interrupted) return NULL; /* the handler's exception is set */
  } else {
    const ladle_plan *pl = ((PlanObject *)plan_obj)->p;
    Py_BEGIN_ALLOW_THREADS st = host ? ladle_engine_execute_host(self->eng, pl, NULL, &r, &err)
                                     : ladle_engine_execute(self->eng, pl, &r, &err);
    Py_END_ALLOW_THREADS
  }
  if (st != LADLE_OK) return raise_err(st, &err);
  ResultObject *o = PyObject_New(ResultObject, &ResultType);
  if (o == NULL) {
    ladle_result_destroy(r);
    return NULL;
  }
  o->r = r;
  return (PyObject *)o;
}

/* allgather(result) -> Result: every rank's rows of a sharded result */
static PyObject *engine_allgather(EngineObject *self, PyObject *args) {
  PyObject *res;
  if (!PyArg_ParseTuple(args, "O!", &ResultType, &res)) return NULL;
  ladle_result *r = NULL;
  ladle_error err;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = ladle_engine_allgather(self->eng, ((ResultObject *)res)->r, &r, &err);
  Py_END_ALLOW_THREADS if (st != LADLE_OK) return raise_err(st, &err);
  ResultObject *o = PyObject_New(ResultObject, &ResultType);
  if (o == NULL) {
    ladle_result_destroy(r);
    return NULL;
  }
  o->r = r;
  return (PyObject *)o;
}

/* bench_alltoall(bytes, iters) -> median ms of one alltoallv (a collective) */
static PyObject *engine_bench_alltoall(EngineObject *self, PyObject *args) {
  long long bytes;
  int iters;
  if (!PyArg_ParseTuple(args, "Li", &bytes, &iters)) return NULL;
  if (bytes < 0) {
    PyErr_SetString(PyExc_ValueError, "bench_alltoall: bytes must be >= 0");
    return NULL;
  }
  double ms = 0;
  ladle_error err;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st =
      ladle_engine_bench_alltoall(self->eng, (size_t)bytes, iters, &ms, &err);
  Py_END_ALLOW_THREADS if (st != LADLE_OK) return raise_err(st, &err);
  return PyFloat_FromDouble(ms);
}

static PyObject *engine_stats(EngineObject *self, PyObject *unused) {
  (void)unused;
  ladle_engine_stats s = ladle_engine_get_stats(self->eng);
  return Py_BuildValue(
      "{sLsLsLsLsLsLsLsLsLsLsLsdsLsLsLsLsL}", "row_groups_read", (long long)s.row_groups_read,
      "row_groups_skipped", (long long)s.row_groups_skipped, "rows_transferred",
      (long long)s.rows_transferred, "memory_bytes", (long long)s.memory_bytes, "memory_peak",
      (long long)s.memory_peak, "device_memory_bytes", (long long)s.device_memory_bytes,
      "device_memory_peak", (long long)s.device_memory_peak, "device_cache_bytes",
      (long long)s.device_cache_bytes, "device_cache_hits", (long long)s.device_cache_hits,
      "device_cache_misses", (long long)s.device_cache_misses, "exchange_bytes",
      (long long)s.exchange_bytes, "exchange_ms", s.exchange_ms, "dict_chunks",
      (long long)s.dict_chunks, "dict_chunks_rowwise", (long long)s.dict_chunks_rowwise,
      "row_groups_streamed", (long long)s.row_groups_streamed, "partial_rows_passed",
      (long long)s.partial_rows_passed, "chunks_split", (long long)s.chunks_split);
}

static PyObject *engine_device(EngineObject *self, PyObject *unused) {
  (void)unused;
  int id = 0;
  ladle_device_type t = ladle_engine_device(self->eng, &id);
  return Py_BuildValue("(iiO)", (int)t, id, ladle_engine_columns(self->eng) ? Py_True : Py_False);
}

static PyObject *engine_threads(EngineObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLong(self->eng ? ladle_engine_threads(self->eng) : 0);
}

static PyObject *engine_explain(EngineObject *self, PyObject *args) {
  PlanObject *plan;
  int ranks = 0;
  if (!PyArg_ParseTuple(args, "O!|i", &PlanType, &plan, &ranks)) return NULL;
  char *text = NULL;
  ladle_error err;
  ladle_status st = ladle_engine_explain_ranks(self->eng, plan->p, ranks, &text, &err);
  if (st != LADLE_OK) return raise_err(st, &err);
  PyObject *s = PyUnicode_FromString(text);
  ladle_free(text);
  return s;
}

static PyObject *engine_view_cache_clear(EngineObject *self, PyObject *unused) {
  (void)unused;
  Py_BEGIN_ALLOW_THREADS ladle_engine_view_cache_clear(self->eng);
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyObject *engine_view_cache_stats(EngineObject *self, PyObject *unused) {
  (void)unused;
  size_t entries, bytes;
  uint64_t hits;
  ladle_engine_view_cache_stats(self->eng, &entries, &bytes, &hits);
  return Py_BuildValue("(nnK)", (Py_ssize_t)entries, (Py_ssize_t)bytes, (unsigned long long)hits);
}

/* give_up(why): this rank's query failed before the engine saw it
 * (ladle_engine_give_up: counted, the others told, the communicator
 * recovered). */
static PyObject *engine_give_up(EngineObject *self, PyObject *args) {
  const char *why = NULL;
  if (!PyArg_ParseTuple(args, "s", &why)) return NULL;
  ladle_error err;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = ladle_engine_give_up(self->eng, why, &err);
  Py_END_ALLOW_THREADS if (st != LADLE_OK) return raise_err(st, &err);
  Py_RETURN_NONE;
}

static PyMethodDef engine_methods[] = {
    {"give_up", (PyCFunction)engine_give_up, METH_VARARGS,
     "give_up(why): this rank's query failed before the engine saw it"},
    {"bench_alltoall", (PyCFunction)engine_bench_alltoall, METH_VARARGS,
     "bench_alltoall(bytes, iters) -> median ms of one alltoallv (a collective)"},
    {"allgather", (PyCFunction)engine_allgather, METH_VARARGS,
     "allgather(result) -> Result: every rank's rows (a collective)"},
    {"view_cache_stats", (PyCFunction)engine_view_cache_stats, METH_NOARGS,
     "(entries, bytes, hits) of the string-view conversions this engine keeps across scans"},
    {"view_cache_clear", (PyCFunction)engine_view_cache_clear, METH_NOARGS,
     "drops the string-view conversions this engine keeps across scans"},
    {"explain", (PyCFunction)engine_explain, METH_VARARGS,
     "explain(plan, ranks=0) -> str: the logical and physical plans, pipelines and exchanges "
     "on this engine (as planned for `ranks` ranks when > 0)"},
    {"device", (PyCFunction)engine_device, METH_NOARGS,
     "(device type, ordinal, whether queries run on the column kernels)"},
    {"execute", (PyCFunction)engine_execute, METH_VARARGS,
     "execute(plan, interruptible=False, host=False) -> Result; interruptible: Ctrl-C stops it; "
     "host: on a GPU engine, run on its CPU side"},
    {"threads", (PyCFunction)engine_threads, METH_NOARGS, "threads of the pool"},
    {"stats", (PyCFunction)engine_stats, METH_NOARGS, "counters"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject EngineType = {PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ladle._native.Engine",
                                  .tp_basicsize = sizeof(EngineObject),
                                  .tp_dealloc = (destructor)engine_dealloc,
                                  .tp_flags = Py_TPFLAGS_DEFAULT,
                                  .tp_methods = engine_methods,
                                  .tp_init = (initproc)engine_init,
                                  .tp_new = PyType_GenericNew,
                                  .tp_doc = "Engine(threads=0, morsel_rows=0, memory_limit=0)"};

/* --------------------------------------------------------- expression API */

static PyObject *py_col(PyObject *m, PyObject *args) {
  const char *name;
  if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
  return wrap_expr(ladle_expr_col(name));
}

static PyObject *py_lit(PyObject *m, PyObject *args) {
  /* lit(kind, value, dtype): kind one of "null", "bool", "int", "uint", "float",
   * "str", "temporal", "dyn_int", "dyn_float", "int128" */
  const char *kind;
  PyObject *value, *dt_obj;
  if (!PyArg_ParseTuple(args, "sOO", &kind, &value, &dt_obj)) return NULL;
  ladle_dtype dt;
  if (!parse_dtype(dt_obj, &dt)) return NULL;
  if (strcmp(kind, "null") == 0) return wrap_expr(ladle_expr_lit_null(dt));
  if (strcmp(kind, "bool") == 0) return wrap_expr(ladle_expr_lit_bool(PyObject_IsTrue(value)));
  if (strcmp(kind, "str") == 0) {
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(value, &len);
    if (s == NULL) return NULL;
    return wrap_expr(ladle_expr_lit_str(s, (size_t)len));
  }
  if (strcmp(kind, "float") == 0 || strcmp(kind, "dyn_float") == 0) {
    double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    return wrap_expr(kind[0] == 'd' ? ladle_expr_lit_dyn_float(v) : ladle_expr_lit_float(v, dt.id));
  }
  if (strcmp(kind, "int128") == 0) { /* value: (high 64 bits, low 64 bits), both unsigned */
    unsigned long long hi, lo;
    if (!PyArg_ParseTuple(value, "KK", &hi, &lo)) return NULL;
    return wrap_expr(ladle_expr_lit_int128(hi, lo, dt.id));
  }
  if (strcmp(kind, "uint") == 0) {
    unsigned long long v = PyLong_AsUnsignedLongLong(value);
    if (PyErr_Occurred()) return NULL;
    return wrap_expr(ladle_expr_lit_uint(v, dt.id));
  }
  long long v = PyLong_AsLongLong(value);
  if (v == -1 && PyErr_Occurred()) return NULL;
  if (strcmp(kind, "int") == 0) return wrap_expr(ladle_expr_lit_int(v, dt.id));
  if (strcmp(kind, "dyn_int") == 0) return wrap_expr(ladle_expr_lit_dyn_int(v));
  if (strcmp(kind, "temporal") == 0) return wrap_expr(ladle_expr_lit_temporal(v, dt));
  PyErr_Format(PyExc_ValueError, "unknown literal kind '%s'", kind);
  return NULL;
}

static PyObject *py_lit_series(PyObject *m, PyObject *args) {
  PyObject *items;
  if (!PyArg_ParseTuple(args, "O", &items)) return NULL;
  Py_ssize_t n;
  ladle_expr **arr = get_exprs(items, &n);
  if (arr == NULL) return NULL;
  ladle_expr *e = ladle_expr_lit_series((size_t)n, arr);
  free(arr);
  if (e == NULL) {
    PyErr_SetString(PyExc_ValueError, "lit_series: items must be literals of one type");
    return NULL;
  }
  return wrap_expr(e);
}

static PyObject *py_alias(PyObject *m, PyObject *args) {
  PyObject *eo;
  const char *name;
  ladle_expr *e;
  if (!PyArg_ParseTuple(args, "Os", &eo, &name) || !get_expr(eo, &e)) return NULL;
  return wrap_expr(ladle_expr_alias(e, name));
}

static PyObject *py_binary(PyObject *m, PyObject *args) {
  int op;
  PyObject *lo, *ro;
  ladle_expr *l, *r;
  if (!PyArg_ParseTuple(args, "iOO", &op, &lo, &ro)) return NULL;
  if (op < 0 || op >= LADLE_OP_COUNT_) return PyErr_Format(PyExc_ValueError, "bad op %d", op);
  if (!get_expr(lo, &l)) return NULL;
  if (!get_expr(ro, &r)) {
    ladle_expr_destroy(l);
    return NULL;
  }
  return wrap_expr(ladle_expr_binary((ladle_binary_op)op, l, r));
}

static PyObject *py_func(PyObject *m, PyObject *args) {
  int fn;
  PyObject *argl, *opts = NULL;
  if (!PyArg_ParseTuple(args, "iO|O", &fn, &argl, &opts)) return NULL;
  if (fn < 0 || fn >= LADLE_FN_COUNT_) return PyErr_Format(PyExc_ValueError, "bad function %d", fn);
  ladle_func_opts o;
  memset(&o, 0, sizeof o);
  PyObject *str_obj = NULL;
  if (opts != NULL && opts != Py_None) {
    if (!PyArg_ParseTuple(opts, "LLKdOpi", &o.i64, &o.i64b, &o.u64, &o.f64, &str_obj, &o.literal,
                          &o.closed))
      return NULL;
    if (str_obj != Py_None) {
      o.str = PyUnicode_AsUTF8(str_obj);
      if (o.str == NULL) return NULL;
    }
  }
  Py_ssize_t n;
  ladle_expr **arr = get_exprs(argl, &n);
  if (arr == NULL) return NULL;
  ladle_expr *e = ladle_expr_func((ladle_func)fn, (size_t)n, arr, &o);
  free(arr);
  return wrap_expr(e);
}

static PyObject *py_cast(PyObject *m, PyObject *args) {
  PyObject *eo, *dto;
  int mode;
  ladle_expr *e;
  ladle_dtype dt;
  if (!PyArg_ParseTuple(args, "OOi", &eo, &dto, &mode) || !parse_dtype(dto, &dt)) return NULL;
  if (mode < 0 || mode > 2) return PyErr_Format(PyExc_ValueError, "bad cast mode %d", mode);
  if (!get_expr(eo, &e)) return NULL;
  return wrap_expr(ladle_expr_cast_mode(e, dt, (ladle_cast_mode)mode));
}

static PyObject *py_when(PyObject *m, PyObject *args) {
  PyObject *co, *to, *oo;
  if (!PyArg_ParseTuple(args, "OOO", &co, &to, &oo)) return NULL;
  Py_ssize_t nc, nt;
  ladle_expr **c = get_exprs(co, &nc);
  if (c == NULL) return NULL;
  ladle_expr **t = get_exprs(to, &nt);
  ladle_expr *o = NULL;
  if (t == NULL || nc != nt || !get_expr(oo, &o)) {
    free_exprs(c, nc);
    free_exprs(t, t ? nt : 0);
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "when: conds and thens differ in length");
    return NULL;
  }
  ladle_expr *e = ladle_expr_when((size_t)nc, c, t, o);
  free(c);
  free(t);
  return wrap_expr(e);
}

static PyObject *py_agg(PyObject *m, PyObject *args) {
  int op, ddof = 1, interp = 0, polars_order = 0;
  double q = 0.5;
  PyObject *eo;
  if (!PyArg_ParseTuple(args, "iO|idip", &op, &eo, &ddof, &q, &interp, &polars_order)) return NULL;
  if (op < 0 || op >= LADLE_AGG_COUNT_) return PyErr_Format(PyExc_ValueError, "bad agg %d", op);
  ladle_expr *e;
  if (!get_expr(eo, &e)) return NULL;
  ladle_agg_opts o = {(uint8_t)ddof, q, (ladle_interpolation)interp, polars_order != 0};
  return wrap_expr(ladle_expr_agg((ladle_agg_op)op, e, &o));
}

static PyObject *py_len(PyObject *m, PyObject *args) {
  (void)args;
  return wrap_expr(ladle_expr_len());
}

static PyObject *py_rank(PyObject *m, PyObject *args) {
  PyObject *eo;
  int method, desc;
  ladle_expr *e;
  if (!PyArg_ParseTuple(args, "Oip", &eo, &method, &desc) || !get_expr(eo, &e)) return NULL;
  return wrap_expr(ladle_expr_rank(e, (ladle_rank_method)method, desc));
}

static PyObject *py_cumulative(PyObject *m, PyObject *args) {
  PyObject *eo;
  int op, reverse;
  ladle_expr *e;
  if (!PyArg_ParseTuple(args, "Oip", &eo, &op, &reverse) || !get_expr(eo, &e)) return NULL;
  return wrap_expr(ladle_expr_cumulative(e, (ladle_cum_op)op, reverse));
}

static PyObject *py_shift(PyObject *m, PyObject *args) {
  PyObject *eo;
  long long n;
  ladle_expr *e;
  if (!PyArg_ParseTuple(args, "OL", &eo, &n) || !get_expr(eo, &e)) return NULL;
  return wrap_expr(ladle_expr_shift(e, (int64_t)n));
}

static PyObject *py_over(PyObject *m, PyObject *args) {
  PyObject *eo, *ko;
  ladle_expr *e;
  if (!PyArg_ParseTuple(args, "OO", &eo, &ko) || !get_expr(eo, &e)) return NULL;
  Py_ssize_t n;
  ladle_expr **k = get_exprs(ko, &n);
  if (k == NULL) {
    ladle_expr_destroy(e);
    return NULL;
  }
  ladle_expr *o = ladle_expr_over(e, (size_t)n, k);
  free(k);
  return wrap_expr(o);
}

/* --------------------------------------------------------------- plan API */

#define FINISH_PLAN(call)                           \
  do {                                              \
    ladle_error err;                                \
    ladle_plan *out = NULL;                         \
    ladle_status st = (call);                       \
    if (st != LADLE_OK) return raise_err(st, &err); \
    return wrap_plan(out);                          \
  } while (0)

/* scan_columns([series...], [names...], engine=None): each object's
 * __arrow_c_stream__ (a Polars Series: a batch per chunk) as one column. */
static PyObject *py_scan_columns(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *cols, *names, *engine = Py_None;
  if (!PyArg_ParseTuple(args, "O!O!|O", &PyList_Type, &cols, &PyList_Type, &names, &engine))
    return NULL;
  if (engine != Py_None && !PyObject_TypeCheck(engine, &EngineType)) {
    PyErr_SetString(PyExc_TypeError, "scan_columns: engine must be a ladle._native.Engine or None");
    return NULL;
  }
  Py_ssize_t n = PyList_GET_SIZE(cols);
  if (PyList_GET_SIZE(names) != n) {
    PyErr_SetString(PyExc_ValueError, "scan_columns: as many names as columns");
    return NULL;
  }
  struct ArrowArrayStream *streams = calloc((size_t)(n > 0 ? n : 1), sizeof *streams);
  const char **cnames = calloc((size_t)(n > 0 ? n : 1), sizeof *cnames);
  PyObject *ok = NULL;
  Py_ssize_t got = 0;
  if (streams == NULL || cnames == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (; got < n; got++) {
    cnames[got] = PyUnicode_AsUTF8(PyList_GET_ITEM(names, got));
    if (cnames[got] == NULL) goto done;
    PyObject *cap = PyObject_CallMethod(PyList_GET_ITEM(cols, got), "__arrow_c_stream__", NULL);
    if (cap == NULL) goto done;
    struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
    if (s == NULL) {
      Py_DECREF(cap);
      goto done;
    }
    streams[got] = *s; /* moved out: the capsule's destructor sees a released one */
    s->release = NULL;
    Py_DECREF(cap);
  }
  {
    ladle_engine *eng = engine != Py_None ? ((EngineObject *)engine)->eng : NULL;
    ladle_error err;
    ladle_plan *out = NULL;
    ladle_status st;
    Py_BEGIN_ALLOW_THREADS st =
        ladle_plan_scan_arrow_columns(streams, (size_t)n, cnames, eng, &out, &err);
    Py_END_ALLOW_THREADS got = 0; /* consumed, also on failure */
    ok = st == LADLE_OK ? wrap_plan(out) : raise_err(st, &err);
  }
done:
  for (Py_ssize_t i = 0; i < got; i++)
    if (streams[i].release != NULL) streams[i].release(&streams[i]);
  free(streams);
  free(cnames);
  return ok;
}

static PyObject *py_scan_arrow(PyObject *m, PyObject *args) {
  PyObject *obj, *engine = Py_None;
  int threads = 1;
  if (!PyArg_ParseTuple(args, "O|iO", &obj, &threads, &engine)) return NULL;
  if (engine != Py_None && !PyObject_TypeCheck(engine, &EngineType)) {
    PyErr_SetString(PyExc_TypeError, "scan_arrow: engine must be a ladle._native.Engine or None");
    return NULL;
  }
  ladle_engine *eng = engine != Py_None ? ((EngineObject *)engine)->eng : NULL;
  PyObject *cap = PyObject_CallMethod(obj, "__arrow_c_stream__", NULL);
  if (cap == NULL) return NULL;
  struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
  if (s == NULL) {
    Py_DECREF(cap);
    return NULL;
  }
  /* move the stream out of the capsule; its destructor then sees a released one */
  struct ArrowArrayStream moved = *s;
  s->release = NULL;
  Py_DECREF(cap);
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = eng != NULL
                                  ? ladle_plan_scan_arrow_engine(&moved, eng, &out, &err)
                                  : ladle_plan_scan_arrow_threads(&moved, threads, &out, &err);
  Py_END_ALLOW_THREADS if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_scan_result(PyObject *m, PyObject *args) {
  PyObject *res, *engine = Py_None;
  if (!PyArg_ParseTuple(args, "O!|O", &ResultType, &res, &engine)) return NULL;
  if (engine != Py_None && !PyObject_TypeCheck(engine, &EngineType)) {
    PyErr_SetString(PyExc_TypeError, "scan_result: engine must be a ladle._native.Engine or None");
    return NULL;
  }
  ladle_engine *eng = engine != Py_None ? ((EngineObject *)engine)->eng : NULL;
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = ladle_plan_scan_result(((ResultObject *)res)->r, eng, &out, &err);
  Py_END_ALLOW_THREADS if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_scan_parquet(PyObject *m, PyObject *args) {
  PyObject *paths_obj, *cols_obj, *filt_obj = Py_None;
  long long n_rows = -1;
  int insert_missing = 0, raise_extra = 0;
  long long unit_begin = -1, unit_end = -1;
  if (!PyArg_ParseTuple(args, "OOL|OppLL", &paths_obj, &cols_obj, &n_rows, &filt_obj,
                        &insert_missing, &raise_extra, &unit_begin, &unit_end))
    return NULL;
  /* filters: [(column, op, kind, i64, f64, str)] */
  ladle_pq_filter *filters = NULL;
  Py_ssize_t nfilt = 0;
  PyObject *filt_fast = NULL;
  if (filt_obj != Py_None) {
    filt_fast = PySequence_Fast(filt_obj, "filters must be a list");
    if (filt_fast == NULL) return NULL;
    nfilt = PySequence_Fast_GET_SIZE(filt_fast);
    filters = calloc((size_t)(nfilt > 0 ? nfilt : 1), sizeof *filters);
    if (filters == NULL) {
      Py_DECREF(filt_fast);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < nfilt; i++) {
      const char *col, *str;
      Py_ssize_t slen;
      int op, kind;
      long long i64;
      double f64;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(filt_fast, i), "siiLds#", &col, &op, &kind,
                            &i64, &f64, &str, &slen)) {
        free(filters);
        Py_DECREF(filt_fast);
        return NULL;
      }
      filters[i] = (ladle_pq_filter){col, (ladle_binary_op)op, kind, i64, f64, str, (size_t)slen};
    }
  }
  Py_ssize_t np, nc = 0;
  const char **paths = str_list(paths_obj, &np);
  const char **cols = NULL;
  if (paths == NULL || (cols_obj != Py_None && (cols = str_list(cols_obj, &nc)) == NULL)) {
    free(paths);
    free(filters);
    Py_XDECREF(filt_fast);
    return NULL;
  }
  ladle_parquet_opts o = {.n_columns = (size_t)nc,
                          .columns = cols,
                          .n_rows = n_rows,
                          .n_rows_set = n_rows >= 0,
                          .n_filters = (size_t)nfilt,
                          .filters = filters,
                          .insert_missing_columns = insert_missing != 0,
                          .raise_on_extra_columns = raise_extra != 0,
                          .units_set = unit_begin >= 0,
                          .unit_begin = unit_begin >= 0 ? (size_t)unit_begin : 0,
                          /* a negative end is past every row group: the scan refuses it */
                          .unit_end = unit_begin >= 0 ? (size_t)unit_end : 0};
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = ladle_plan_scan_parquet((size_t)np, paths, &o, &out, &err);
  Py_END_ALLOW_THREADS free(paths);
  free(cols);
  free(filters);
  Py_XDECREF(filt_fast);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_scan_csv(PyObject *m, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"paths",
                           "columns",
                           "types",
                           "separator",
                           "quote",
                           "has_header",
                           "skip_rows",
                           "skip_rows_after_header",
                           "comment_prefix",
                           "null_values",
                           "missing_is_null",
                           "truncate_ragged_lines",
                           "ignore_errors",
                           "try_parse_dates",
                           "infer_schema_length",
                           "n_rows",
                           "skip_lines",
                           "named_null_columns",
                           "named_null_values",
                           "decimal_comma",
                           "insert_missing_columns",
                           "ignore_extra_columns",
                           "path_column",
                           NULL};
  PyObject *paths_obj, *cols_obj = Py_None, *types_obj = Py_None, *nulls_obj = Py_None,
                       *ncols_obj = Py_None, *nvals_obj = Py_None;
  int sep = ',', quote = '"', has_header = 1, missing_is_null = 1, truncate = 0, ignore = 0,
      dates = 0, decimal_comma = 0, insert_missing = 0, ignore_extra = 0;
  long long skip = 0, skip_after = 0, infer = 100, n_rows = -1, skip_lines = 0;
  const char *comment = NULL, *path_column = NULL;
  if (!PyArg_ParseTupleAndKeywords(
          args, kw, "O|OOiipLLzOppppLLLOOpppz", kwlist, &paths_obj, &cols_obj, &types_obj, &sep,
          &quote, &has_header, &skip, &skip_after, &comment, &nulls_obj, &missing_is_null,
          &truncate, &ignore, &dates, &infer, &n_rows, &skip_lines, &ncols_obj, &nvals_obj,
          &decimal_comma, &insert_missing, &ignore_extra, &path_column))
    return NULL;
  Py_ssize_t np, nc = 0, nn = 0, nnc = 0, nnv = 0;
  const char **paths = str_list(paths_obj, &np), **cols = NULL, **nulls = NULL, **ncols = NULL,
             **nvals = NULL;
  ladle_dtype *types = NULL;
  if (paths == NULL) return NULL;
  if (cols_obj != Py_None && (cols = str_list(cols_obj, &nc)) == NULL) goto fail;
  if (nulls_obj != Py_None && (nulls = str_list(nulls_obj, &nn)) == NULL) goto fail;
  if (ncols_obj != Py_None && (ncols = str_list(ncols_obj, &nnc)) == NULL) goto fail;
  if (nvals_obj != Py_None && (nvals = str_list(nvals_obj, &nnv)) == NULL) goto fail;
  if (nnc != nnv) {
    PyErr_SetString(PyExc_ValueError,
                    "scan_csv: named_null_columns and named_null_values differ in length");
    goto fail;
  }
  if (types_obj != Py_None) {
    PyObject *fast = PySequence_Fast(types_obj, "types must be a list of dtypes");
    if (fast == NULL) goto fail;
    if (PySequence_Fast_GET_SIZE(fast) != nc) {
      Py_DECREF(fast);
      PyErr_SetString(PyExc_ValueError, "scan_csv: columns and types differ in length");
      goto fail;
    }
    types = calloc((size_t)(nc > 0 ? nc : 1), sizeof *types);
    for (Py_ssize_t i = 0; types && i < nc; i++)
      if (!parse_dtype(PySequence_Fast_GET_ITEM(fast, i), &types[i])) {
        Py_DECREF(fast);
        goto fail;
      }
    Py_DECREF(fast);
    if (types == NULL) {
      PyErr_NoMemory();
      goto fail;
    }
  }
  ladle_csv_opts o = ladle_csv_opts_default();
  o.separator = (char)sep;
  o.quote = (char)quote;
  o.has_header = has_header;
  o.skip_rows = skip;
  o.skip_rows_after_header = skip_after;
  o.skip_lines = skip_lines;
  o.decimal_comma = decimal_comma;
  o.insert_missing_columns = insert_missing;
  o.ignore_extra_columns = ignore_extra;
  o.path_column = path_column;
  o.n_named_nulls = (size_t)nnc;
  o.named_null_columns = ncols;
  o.named_null_values = nvals;
  o.comment_prefix = comment;
  o.n_null_values = (size_t)nn;
  o.null_values = nulls;
  o.missing_is_null = missing_is_null;
  o.truncate_ragged_lines = truncate;
  o.ignore_errors = ignore;
  o.try_parse_dates = dates;
  o.infer_schema_length = infer;
  o.n_rows = n_rows;
  o.n_rows_set = n_rows >= 0;
  o.n_columns = (size_t)nc;
  o.columns = cols;
  o.no_columns = cols_obj != Py_None && nc == 0; /* [] reads none, None every column */
  o.types = types;
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = ladle_plan_scan_csv((size_t)np, paths, &o, &out, &err);
  Py_END_ALLOW_THREADS free(paths);
  free(cols);
  free(nulls);
  free(ncols);
  free(nvals);
  free(types);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
fail:
  free(paths);
  free(cols);
  free(nulls);
  free(ncols);
  free(nvals);
  free(types);
  return NULL;
}

static PyObject *py_filter(PyObject *m, PyObject *args) {
  PyObject *po, *eo;
  ladle_plan *p;
  ladle_expr *e;
  if (!PyArg_ParseTuple(args, "OO", &po, &eo) || !get_plan(po, &p)) return NULL;
  if (!get_expr(eo, &e)) {
    ladle_plan_destroy(p);
    return NULL;
  }
  FINISH_PLAN(ladle_plan_filter(p, e, &out, &err));
}

typedef ladle_status (*exprs_builder)(ladle_plan *, size_t, ladle_expr *const *, ladle_plan **,
                                      ladle_error *);

static PyObject *plan_with_exprs(PyObject *args, exprs_builder fn) {
  PyObject *po, *eo;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OO", &po, &eo) || !get_plan(po, &p)) return NULL;
  Py_ssize_t n;
  ladle_expr **e = get_exprs(eo, &n);
  if (e == NULL) {
    ladle_plan_destroy(p);
    return NULL;
  }
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = fn(p, (size_t)n, e, &out, &err);
  free(e);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_select(PyObject *m, PyObject *args) {
  return plan_with_exprs(args, ladle_plan_select);
}
static PyObject *py_with_columns(PyObject *m, PyObject *args) {
  return plan_with_exprs(args, ladle_plan_with_columns);
}

static PyObject *py_group_by(PyObject *m, PyObject *args) {
  PyObject *po, *ko, *ao;
  int mo;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OOOp", &po, &ko, &ao, &mo) || !get_plan(po, &p)) return NULL;
  Py_ssize_t nk, na;
  ladle_expr **k = get_exprs(ko, &nk);
  ladle_expr **a = k ? get_exprs(ao, &na) : NULL;
  if (k == NULL || a == NULL) {
    free_exprs(k, k ? nk : 0);
    ladle_plan_destroy(p);
    return NULL;
  }
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = ladle_plan_group_by(p, (size_t)nk, k, (size_t)na, a, mo, &out, &err);
  free(k);
  free(a);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static int bool_list(PyObject *seq, Py_ssize_t n, bool *out) {
  PyObject *fast = PySequence_Fast(seq, "expected a list of bools");
  if (fast == NULL) return 0;
  if (PySequence_Fast_GET_SIZE(fast) != n) {
    Py_DECREF(fast);
    PyErr_SetString(PyExc_ValueError, "bool list of the wrong length");
    return 0;
  }
  for (Py_ssize_t i = 0; i < n; i++) out[i] = PyObject_IsTrue(PySequence_Fast_GET_ITEM(fast, i));
  Py_DECREF(fast);
  return 1;
}

static PyObject *py_join(PyObject *m, PyObject *args) {
  PyObject *lo, *ro, *lko, *rko, *cko = Py_None;
  int how, ne, co, order = LADLE_JOIN_ORDER_NONE;
  const char *suffix;
  ladle_plan *l, *r;
  if (!PyArg_ParseTuple(args, "OOOOippz|Oi", &lo, &ro, &lko, &rko, &how, &ne, &co, &suffix, &cko,
                        &order))
    return NULL;
  if (!get_plan(lo, &l)) return NULL;
  if (!get_plan(ro, &r)) {
    ladle_plan_destroy(l);
    return NULL;
  }
  Py_ssize_t nl, nr;
  ladle_expr **lk = get_exprs(lko, &nl);
  ladle_expr **rk = lk ? get_exprs(rko, &nr) : NULL;
  if (lk == NULL || rk == NULL || nl != nr) {
    free_exprs(lk, lk ? nl : 0);
    free_exprs(rk, rk ? nr : 0);
    ladle_plan_destroy(l);
    ladle_plan_destroy(r);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "join: key lists differ in length");
    return NULL;
  }
  bool *ck = NULL;
  if (cko != Py_None) {
    ck = calloc((size_t)(nl > 0 ? nl : 1), 1);
    if (ck == NULL || !bool_list(cko, nl, ck)) {
      free(ck);
      free_exprs(lk, nl);
      free_exprs(rk, nr);
      ladle_plan_destroy(l);
      ladle_plan_destroy(r);
      return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
  }
  ladle_join_opts o = {(ladle_join_type)how, ne, co, suffix, ck, (ladle_join_order)order};
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = ladle_plan_join(l, r, (size_t)nl, lk, rk, &o, &out, &err);
  free(ck);
  free(lk);
  free(rk);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_sort(PyObject *m, PyObject *args) {
  PyObject *po, *bo, *dso, *nlo;
  int mo;
  long long limit;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OOOOpL", &po, &bo, &dso, &nlo, &mo, &limit) || !get_plan(po, &p))
    return NULL;
  Py_ssize_t n;
  ladle_expr **by = get_exprs(bo, &n);
  bool *desc = calloc((size_t)(n > 0 ? n : 1), 1), *nl = calloc((size_t)(n > 0 ? n : 1), 1);
  if (by == NULL || desc == NULL || nl == NULL || !bool_list(dso, n, desc) ||
      !bool_list(nlo, n, nl)) {
    free_exprs(by, by ? n : 0);
    free(desc);
    free(nl);
    ladle_plan_destroy(p);
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
  }
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = ladle_plan_sort(p, (size_t)n, by, desc, nl, mo, limit, &out, &err);
  free(by);
  free(desc);
  free(nl);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_slice(PyObject *m, PyObject *args) {
  PyObject *po;
  long long off, len;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OLL", &po, &off, &len) || !get_plan(po, &p)) return NULL;
  FINISH_PLAN(ladle_plan_slice(p, off, len, &out, &err));
}

static PyObject *py_distinct(PyObject *m, PyObject *args) {
  PyObject *po, *so;
  int keep, mo;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OOip", &po, &so, &keep, &mo) || !get_plan(po, &p)) return NULL;
  Py_ssize_t n = 0;
  const char **sub = NULL;
  if (so != Py_None && (sub = str_list(so, &n)) == NULL) {
    ladle_plan_destroy(p);
    return NULL;
  }
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = ladle_plan_distinct(p, (size_t)n, sub, (ladle_keep)keep, mo, &out, &err);
  free(sub);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

typedef ladle_status (*plans_builder)(size_t, ladle_plan *const *, ladle_plan **, ladle_error *);

static PyObject *plans_call(PyObject *args, plans_builder fn) {
  PyObject *lo;
  if (!PyArg_ParseTuple(args, "O", &lo)) return NULL;
  PyObject *fast = PySequence_Fast(lo, "expected a list of Plans");
  if (fast == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  ladle_plan **ps = calloc((size_t)(n > 0 ? n : 1), sizeof *ps);
  for (Py_ssize_t i = 0; ps && i < n; i++)
    if (!get_plan(PySequence_Fast_GET_ITEM(fast, i), &ps[i])) {
      for (Py_ssize_t k = 0; k < i; k++) ladle_plan_destroy(ps[k]);
      free(ps);
      Py_DECREF(fast);
      return NULL;
    }
  Py_DECREF(fast);
  if (ps == NULL) return PyErr_NoMemory();
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = fn((size_t)n, ps, &out, &err);
  free(ps);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_union(PyObject *m, PyObject *args) {
  return plans_call(args, ladle_plan_union);
}
static PyObject *py_hconcat(PyObject *m, PyObject *args) {
  return plans_call(args, ladle_plan_hconcat);
}
static PyObject *py_hconcat_strict(PyObject *m, PyObject *args) {
  return plans_call(args, ladle_plan_hconcat_strict);
}

static PyObject *py_cache(PyObject *m, PyObject *args) {
  PyObject *po;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "O", &po) || !get_plan(po, &p)) return NULL;
  FINISH_PLAN(ladle_plan_cache(p, &out, &err));
}

static PyObject *py_rename(PyObject *m, PyObject *args) {
  PyObject *po, *oo, *no;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OOO", &po, &oo, &no) || !get_plan(po, &p)) return NULL;
  Py_ssize_t n1, n2;
  const char **o = str_list(oo, &n1), **nw = o ? str_list(no, &n2) : NULL;
  if (o == NULL || nw == NULL || n1 != n2) {
    free(o);
    free(nw);
    ladle_plan_destroy(p);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "rename: lists differ in length");
    return NULL;
  }
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = ladle_plan_rename(p, (size_t)n1, o, nw, &out, &err);
  free(o);
  free(nw);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_drop(PyObject *m, PyObject *args) {
  PyObject *po, *no;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OO", &po, &no) || !get_plan(po, &p)) return NULL;
  Py_ssize_t n;
  const char **names = str_list(no, &n);
  if (names == NULL) {
    ladle_plan_destroy(p);
    return NULL;
  }
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = ladle_plan_drop(p, (size_t)n, names, &out, &err);
  free(names);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_row_index(PyObject *m, PyObject *args) {
  PyObject *po;
  const char *name;
  long long off;
  int u64 = 0;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OsL|p", &po, &name, &off, &u64) || !get_plan(po, &p)) return NULL;
  FINISH_PLAN(u64 ? ladle_plan_row_index_u64(p, name, off, &out, &err)
                  : ladle_plan_row_index(p, name, off, &out, &err));
}

static PyObject *py_explode(PyObject *m, PyObject *args) {
  PyObject *po, *no;
  int empty_as_null, keep_nulls;
  ladle_plan *p;
  if (!PyArg_ParseTuple(args, "OOpp", &po, &no, &empty_as_null, &keep_nulls) || !get_plan(po, &p))
    return NULL;
  Py_ssize_t n;
  const char **names = str_list(no, &n);
  if (names == NULL) {
    ladle_plan_destroy(p);
    return NULL;
  }
  ladle_error err;
  ladle_plan *out = NULL;
  ladle_status st = ladle_plan_explode(p, (size_t)n, names, empty_as_null, keep_nulls, &out, &err);
  free(names);
  if (st != LADLE_OK) return raise_err(st, &err);
  return wrap_plan(out);
}

static PyObject *py_view_only_columns(PyObject *self, PyObject *args) {
  (void)self;
  (void)args;
  return PyLong_FromUnsignedLongLong((unsigned long long)ladle_view_only_columns());
}

static PyObject *py_cuda_devices(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  ladle_device_info d[64];
  size_t n = 0;
  ladle_error err;
  ladle_status st;
  Py_BEGIN_ALLOW_THREADS st = ladle_cuda_devices(d, 64, &n, &err);
  Py_END_ALLOW_THREADS if (st != LADLE_OK) return Py_BuildValue("(Os)", Py_None, err.message);
  PyObject *list = PyList_New(0);
  for (size_t i = 0; list != NULL && i < n && i < 64; i++) {
    PyObject *t = Py_BuildValue("(isLii)", d[i].id, d[i].name, (long long)d[i].memory_bytes,
                                d[i].major, d[i].minor);
    if (t == NULL || PyList_Append(list, t) != 0) {
      Py_XDECREF(t);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(t);
  }
  if (list == NULL) return NULL;
  PyObject *r = Py_BuildValue("(Os)", list, "");
  Py_DECREF(list);
  return r;
}

static PyObject *py_cuda_initialized(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  return PyBool_FromLong(ladle_cuda_initialized());
}

static PyMethodDef module_methods[] = {
    {"view_only_columns", py_view_only_columns, METH_NOARGS,
     "how many view-only string columns were made (gathered or decoded as views)"},
    {"cuda_devices", py_cuda_devices, METH_NOARGS,
     "([(id, name, memory_bytes, major, minor)] or None, why not)"},
    {"cuda_initialized", py_cuda_initialized, METH_NOARGS,
     "whether ladle has initialised the CUDA driver in this process"},
    {"col", py_col, METH_VARARGS, "col(name)"},
    {"lit", py_lit, METH_VARARGS, "lit(kind, value, dtype)"},
    {"lit_series", py_lit_series, METH_VARARGS, "lit_series([Expr])"},
    {"alias", py_alias, METH_VARARGS, "alias(e, name)"},
    {"binary", py_binary, METH_VARARGS, "binary(op, l, r)"},
    {"func", py_func, METH_VARARGS, "func(fn, [args], opts)"},
    {"cast", py_cast, METH_VARARGS, "cast(e, dtype, mode: 0 non-strict, 1 strict, 2 wrap)"},
    {"when", py_when, METH_VARARGS, "when([conds], [thens], otherwise)"},
    {"agg", py_agg, METH_VARARGS, "agg(op, e, ddof=1, quantile=0.5, interp=0, polars_order=False)"},
    {"len", py_len, METH_NOARGS, "len()"},
    {"rank", py_rank, METH_VARARGS, "rank(e, method, descending)"},
    {"over", py_over, METH_VARARGS, "over(e, [keys])"},
    {"cumulative", py_cumulative, METH_VARARGS, "cumulative(e, LADLE_CUM_*, reverse)"},
    {"shift", py_shift, METH_VARARGS, "shift(e, n)"},
    {"scan_columns", py_scan_columns, METH_VARARGS,
     "scan_columns([objects with __arrow_c_stream__], [names], engine=None): one column each, "
     "chunks kept"},
    {"scan_result", py_scan_result, METH_VARARGS,
     "scan_result(result, engine=None): a plan scanning a ladle result (on its GPU for an engine "
     "of that GPU)"},
    {"scan_arrow", py_scan_arrow, METH_VARARGS,
     "scan_arrow(obj with __arrow_c_stream__, threads=1, engine=None): with an engine, on its "
     "threads and with its cache of string-view conversions"},
    {"scan_parquet", py_scan_parquet, METH_VARARGS,
     "scan_parquet([paths], [columns]|None, n_rows|-1, filters=None, insert_missing_columns=False, "
     "raise_on_extra_columns=False, unit_begin=-1, unit_end=-1): with unit_begin >= 0 only the "
     "row groups [unit_begin, unit_end), numbered over the files in order"},
    {"scan_csv", (PyCFunction)(void (*)(void))py_scan_csv, METH_VARARGS | METH_KEYWORDS,
     "scan_csv(paths, columns, types, separator, quote, ...)"},
    {"filter", py_filter, METH_VARARGS, "filter(plan, pred)"},
    {"select", py_select, METH_VARARGS, "select(plan, [exprs])"},
    {"with_columns", py_with_columns, METH_VARARGS, "with_columns(plan, [exprs])"},
    {"group_by", py_group_by, METH_VARARGS, "group_by(plan, [keys], [aggs], maintain_order)"},
    {"join", py_join, METH_VARARGS,
     "join(l, r, [lk], [rk], how, nulls_equal, coalesce, suffix, [coalesce_keys], order)"},
    {"sort", py_sort, METH_VARARGS,
     "sort(plan, [by], [desc], [nulls_last], maintain_order, limit)"},
    {"slice", py_slice, METH_VARARGS, "slice(plan, offset, length)"},
    {"distinct", py_distinct, METH_VARARGS, "distinct(plan, subset|None, keep, maintain_order)"},
    {"union", py_union, METH_VARARGS, "union([plans])"},
    {"hconcat", py_hconcat, METH_VARARGS, "hconcat([plans]): shorter inputs padded with nulls"},
    {"hconcat_strict", py_hconcat_strict, METH_VARARGS, "hconcat_strict([plans]): equal heights"},
    {"cache", py_cache, METH_VARARGS, "cache(plan)"},
    {"rename", py_rename, METH_VARARGS, "rename(plan, [old], [new])"},
    {"drop", py_drop, METH_VARARGS, "drop(plan, [names])"},
    {"row_index", py_row_index, METH_VARARGS, "row_index(plan, name, offset, u64=False)"},
    {"explode", py_explode, METH_VARARGS, "explode(plan, [names], empty_as_null, keep_nulls)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_native", "ladle's C engine (see include/ladle.h)", -1, module_methods};

PyMODINIT_FUNC PyInit__native(void) {
  if (PyType_Ready(&ExprType) < 0 || PyType_Ready(&PlanType) < 0 || PyType_Ready(&EngineType) < 0 ||
      PyType_Ready(&ResultType) < 0 || PyType_Ready(&CommType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&moduledef);
  if (m == NULL) return NULL;
  LadleError = PyErr_NewException("ladle._native.LadleError", NULL, NULL);
  /* the C enums, so that Python never hard-codes their numbers */
#define C(name) PyModule_AddIntConstant(m, #name, name)
  if (C(LADLE_TYPE_NULL) || C(LADLE_TYPE_BOOL) || C(LADLE_TYPE_INT8) || C(LADLE_TYPE_INT16) ||
      C(LADLE_TYPE_INT32) || C(LADLE_TYPE_INT64) || C(LADLE_TYPE_UINT8) || C(LADLE_TYPE_UINT16) ||
      C(LADLE_TYPE_UINT32) || C(LADLE_TYPE_UINT64) || C(LADLE_TYPE_FLOAT32) ||
      C(LADLE_TYPE_FLOAT64) || C(LADLE_TYPE_STRING) || C(LADLE_TYPE_DATE) ||
      C(LADLE_TYPE_DATETIME) || C(LADLE_TYPE_DURATION) || C(LADLE_TYPE_DECIMAL) ||
      C(LADLE_TYPE_TIME) || C(LADLE_TYPE_BINARY) || C(LADLE_TYPE_LIST) || C(LADLE_TYPE_INT128) ||
      C(LADLE_TYPE_UINT128) || C(LADLE_TIME_NS) || C(LADLE_TIME_US) || C(LADLE_TIME_MS) ||
      C(LADLE_OP_ADD) || C(LADLE_OP_SUB) || C(LADLE_OP_MUL) || C(LADLE_OP_TRUE_DIV) ||
      C(LADLE_OP_FLOOR_DIV) || C(LADLE_OP_MOD) || C(LADLE_OP_EQ) || C(LADLE_OP_NE) ||
      C(LADLE_OP_LT) || C(LADLE_OP_LE) || C(LADLE_OP_GT) || C(LADLE_OP_GE) ||
      C(LADLE_OP_EQ_MISSING) || C(LADLE_OP_NE_MISSING) || C(LADLE_OP_AND) || C(LADLE_OP_OR) ||
      C(LADLE_OP_XOR) || C(LADLE_FN_NOT) || C(LADLE_FN_NEG) || C(LADLE_FN_ABS) ||
      C(LADLE_FN_IS_NULL) || C(LADLE_FN_IS_NOT_NULL) || C(LADLE_FN_IS_NAN) ||
      C(LADLE_FN_IS_NOT_NAN) || C(LADLE_FN_FILL_NULL) || C(LADLE_FN_FILL_NAN) ||
      C(LADLE_FN_IS_IN) || C(LADLE_FN_IS_BETWEEN) || C(LADLE_FN_CLIP) || C(LADLE_FN_ROUND) ||
      C(LADLE_FN_FLOOR) || C(LADLE_FN_CEIL) || C(LADLE_FN_SQRT) || C(LADLE_FN_LOG) ||
      C(LADLE_FN_EXP) || C(LADLE_FN_POW) || C(LADLE_FN_HASH) || C(LADLE_FN_STR_LEN_BYTES) ||
      C(LADLE_FN_STR_LEN_CHARS) || C(LADLE_FN_STR_CONTAINS) || C(LADLE_FN_STR_STARTS_WITH) ||
      C(LADLE_FN_STR_ENDS_WITH) || C(LADLE_FN_STR_TO_UPPER) || C(LADLE_FN_STR_TO_LOWER) ||
      C(LADLE_FN_STR_SLICE) || C(LADLE_FN_STR_STRIP_CHARS) || C(LADLE_FN_STR_CONCAT) ||
      C(LADLE_FN_DT_YEAR) || C(LADLE_FN_DT_MONTH) || C(LADLE_FN_DT_DAY) || C(LADLE_FN_DT_HOUR) ||
      C(LADLE_FN_DT_MINUTE) || C(LADLE_FN_DT_SECOND) || C(LADLE_FN_DT_WEEKDAY) ||
      C(LADLE_FN_DT_ORDINAL_DAY) || C(LADLE_FN_DT_TRUNCATE) || C(LADLE_FN_LOG1P) ||
      C(LADLE_FN_STR_SPLIT) || C(LADLE_FN_LIST_LEN) || C(LADLE_FN_LIST_SLICE) ||
      C(LADLE_AGG_IMPLODE) || C(LADLE_AGG_SUM) || C(LADLE_AGG_MEAN) || C(LADLE_AGG_MIN) ||
      C(LADLE_AGG_MAX) || C(LADLE_AGG_COUNT) || C(LADLE_AGG_NULL_COUNT) || C(LADLE_AGG_LEN) ||
      C(LADLE_AGG_N_UNIQUE) || C(LADLE_AGG_FIRST) || C(LADLE_AGG_LAST) || C(LADLE_AGG_STD) ||
      C(LADLE_AGG_VAR) || C(LADLE_AGG_MEDIAN) || C(LADLE_AGG_QUANTILE) || C(LADLE_AGG_ARG_MIN) ||
      C(LADLE_AGG_ARG_MAX) || C(LADLE_AGG_ANY) || C(LADLE_AGG_ALL) || C(LADLE_RANK_AVERAGE) ||
      C(LADLE_RANK_MIN) || C(LADLE_RANK_MAX) || C(LADLE_RANK_DENSE) || C(LADLE_RANK_ORDINAL) ||
      C(LADLE_CUM_SUM) || C(LADLE_CUM_PROD) || C(LADLE_CUM_MIN) || C(LADLE_CUM_MAX) ||
      C(LADLE_CUM_COUNT) || C(LADLE_JOIN_INNER) || C(LADLE_JOIN_LEFT) || C(LADLE_JOIN_RIGHT) ||
      C(LADLE_JOIN_FULL) || C(LADLE_JOIN_SEMI) || C(LADLE_JOIN_ANTI) || C(LADLE_JOIN_CROSS) ||
      C(LADLE_JOIN_ORDER_NONE) || C(LADLE_JOIN_ORDER_LEFT) || C(LADLE_JOIN_ORDER_RIGHT) ||
      C(LADLE_JOIN_ORDER_LEFT_RIGHT) || C(LADLE_JOIN_ORDER_RIGHT_LEFT) || C(LADLE_KEEP_ANY) ||
      C(LADLE_KEEP_FIRST) || C(LADLE_KEEP_LAST) || C(LADLE_KEEP_NONE) || C(LADLE_INTERP_NEAREST) ||
      C(LADLE_INTERP_LOWER) || C(LADLE_INTERP_HIGHER) || C(LADLE_INTERP_MIDPOINT) ||
      C(LADLE_INTERP_LINEAR) || C(LADLE_INTERP_EQUIPROBABLE) || C(LADLE_CLOSED_BOTH) ||
      C(LADLE_CLOSED_LEFT) || C(LADLE_CLOSED_RIGHT) || C(LADLE_CLOSED_NONE) || C(LADLE_ENOTSUP) ||
      C(LADLE_ETYPE) || C(LADLE_ENOCOL) || C(LADLE_EINVAL) || C(LADLE_ECOMPUTE) ||
      C(LADLE_ENOMEM) || C(LADLE_EDEVICE) || C(LADLE_ECOMM) || C(LADLE_DEVICE_CPU) ||
      C(LADLE_DEVICE_CUDA)) {
    Py_DECREF(m);
    return NULL;
  }
#undef C
  Py_INCREF(&EngineType);
  Py_INCREF(&CommType);
  if (PyModule_AddObject(m, "LadleError", LadleError) < 0 ||
      PyModule_AddObject(m, "Engine", (PyObject *)&EngineType) < 0 ||
      PyModule_AddObject(m, "Comm", (PyObject *)&CommType) < 0 ||
      PyModule_AddStringConstant(m, "VERSION", LADLE_VERSION) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
