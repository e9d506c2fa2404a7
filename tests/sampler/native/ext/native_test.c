/* A small extension module for the native-frame tests: C functions with known names, one that
 * calls back into Python, and (spinner.cpp) a C++ one. Built against each installed Python. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <time.h>

unsigned long dapprof_spin_cpp(double seconds); /* spinner.cpp */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Busy for `seconds`, nearly all of it in this function's own loop. */
__attribute__((noinline)) unsigned long dapprof_native_spin_c(double seconds) {
  volatile unsigned long n = 0;
  const double end = now() + seconds;
  while (now() < end) {
    for (unsigned long i = 0; i < 20000; ++i) n = n + i;
  }
  return n;
}

/* Calls fn() `count` times: a native frame between two Python frames. */
__attribute__((noinline)) int dapprof_native_call_back(PyObject* fn, long count) {
  for (long i = 0; i < count; ++i) {
    PyObject* r = PyObject_CallObject(fn, NULL);
    if (!r) return -1;
    Py_DECREF(r);
  }
  return 0;
}

static PyObject* spin_c(PyObject* self, PyObject* arg) {
  (void)self;
  const double seconds = PyFloat_AsDouble(arg);
  if (seconds < 0 && PyErr_Occurred()) return NULL;
  const unsigned long n = dapprof_native_spin_c(seconds);
  return PyLong_FromUnsignedLong(n);
}

static PyObject* spin_cpp(PyObject* self, PyObject* arg) {
  (void)self;
  const double seconds = PyFloat_AsDouble(arg);
  if (seconds < 0 && PyErr_Occurred()) return NULL;
  const unsigned long n = dapprof_spin_cpp(seconds);
  return PyLong_FromUnsignedLong(n);
}

static PyObject* call_back(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* fn;
  long count;
  if (!PyArg_ParseTuple(args, "Ol", &fn, &count)) return NULL;
  if (dapprof_native_call_back(fn, count) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"spin_c", spin_c, METH_O, "Busy in C for the given seconds."},
    {"spin_cpp", spin_cpp, METH_O, "Busy in C++ for the given seconds."},
    {"call_back", call_back, METH_VARARGS, "call_back(fn, count): calls fn() count times."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "dapprof_native_test", NULL, -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_dapprof_native_test(void) { return PyModule_Create(&module); }
