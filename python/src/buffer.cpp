// Arrays to (pointer, MPI type, entries): numpy through its C API (a few
// field reads: this is on every operation's path), everything else through
// the CUDA array interface or DLPack (nanobind's importer).
#define PY_ARRAY_UNIQUE_SYMBOL stfpy_numpy_api
#include "buffer.h"

#include <nanobind/stl/string.h>
#include <numpy/arrayobject.h>

#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace stfpy {

MPI_Datatype mpi_type_of(char kind, int64_t itemsize) {
  switch (kind) {
    case 'b':
      return itemsize == 1 ? MPI_C_BOOL : MPI_DATATYPE_NULL;
    case 'i':
      return itemsize == 1   ? MPI_INT8_T
             : itemsize == 2 ? MPI_INT16_T
             : itemsize == 4 ? MPI_INT32_T
             : itemsize == 8 ? MPI_INT64_T
                             : MPI_DATATYPE_NULL;
    case 'u':
      return itemsize == 1   ? MPI_UINT8_T
             : itemsize == 2 ? MPI_UINT16_T
             : itemsize == 4 ? MPI_UINT32_T
             : itemsize == 8 ? MPI_UINT64_T
                             : MPI_DATATYPE_NULL;
    case 'f':
      return itemsize == 4                           ? MPI_FLOAT
             : itemsize == 8                         ? MPI_DOUBLE
             : itemsize == int64_t(sizeof(long double)) ? MPI_LONG_DOUBLE
                                                       : MPI_DATATYPE_NULL;
    case 'c':
      return itemsize == 8                               ? MPI_C_FLOAT_COMPLEX
             : itemsize == 16                            ? MPI_C_DOUBLE_COMPLEX
             : itemsize == int64_t(2 * sizeof(long double)) ? MPI_C_LONG_DOUBLE_COMPLEX
                                                           : MPI_DATATYPE_NULL;
  }
  return MPI_DATATYPE_NULL;
}

namespace {

[[noreturn]] void value_error(const char *what, const std::string &why) {
  throw nb::value_error((std::string(what) + ": " + why).c_str());
}

// MPI type per numpy type number of the numeric types (bool .. clongdouble).
MPI_Datatype numpy_types[NPY_CLONGDOUBLE + 1];

void init_numpy() {
  if (_import_array() < 0) throw nb::python_error();
  for (int t = 0; t <= NPY_CLONGDOUBLE; ++t) {
    PyArray_Descr *d = PyArray_DescrFromType(t);
    numpy_types[t] = mpi_type_of(d->kind, PyDataType_ELSIZE(d));
    Py_DECREF(d);
  }
}

std::string dtype_text(PyArrayObject *a) {
  nb::object text = nb::steal(PyObject_Str(reinterpret_cast<PyObject *>(PyArray_DESCR(a))));
  return text.is_valid() ? PyUnicode_AsUTF8(text.ptr()) : "?";
}

// Entries (first axis) and elements per entry of a C-contiguous shape.
void set_shape(Buffer *b, const char *what, int ndim, const int64_t *shape) {
  if (ndim < 1) value_error(what, "expected an array with at least one axis (one entry per root or leaf)");
  b->units = shape[0];
  b->block = 1;
  for (int i = 1; i < ndim; ++i) b->block *= shape[i];
}

bool c_contiguous(int ndim, const int64_t *shape, const int64_t *strides_in_items) {
  int64_t expect = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides_in_items[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

Buffer from_numpy(PyArrayObject *a, const char *what, bool writable) {
  int t = PyArray_TYPE(a);
  Buffer b;
  if (t >= 0 && t <= NPY_CLONGDOUBLE) b.base = numpy_types[t];
  if (b.base == MPI_DATATYPE_NULL)
    throw nb::type_error((std::string(what) + ": dtype " + dtype_text(a) +
                          " has no MPI equivalent (use bool, (u)int8..64, float32/64, longdouble or complex)")
                             .c_str());
  int flags = PyArray_FLAGS(a);
  if (!(flags & NPY_ARRAY_C_CONTIGUOUS))
    value_error(what, "the array is not C-contiguous; pass np.ascontiguousarray(a) (starforest never copies)");
  if (!(flags & NPY_ARRAY_ALIGNED)) value_error(what, "the array is not aligned for its dtype");
  if (!PyArray_ISNOTSWAPPED(a)) value_error(what, "the array is not in native byte order");
  if (writable && !(flags & NPY_ARRAY_WRITEABLE)) value_error(what, "the array is read-only but receives data");
  int nd = PyArray_NDIM(a);
  if (nd < 1) value_error(what, "expected an array with at least one axis (one entry per root or leaf)");
  const npy_intp *dims = PyArray_DIMS(a);
  b.units = dims[0];
  for (int i = 1; i < nd; ++i) b.block *= dims[i];
  b.data = PyArray_DATA(a);
  return b;
}

// __cuda_array_interface__: {"data": (ptr, readonly), "shape", "typestr", "strides"}.
Buffer from_cuda_interface(nb::handle cai, const char *what, bool writable) {
  nb::dict d = nb::cast<nb::dict>(cai);
  nb::tuple data = nb::cast<nb::tuple>(d["data"]);
  nb::tuple shape_t = nb::cast<nb::tuple>(d["shape"]);
  std::string typestr = nb::cast<std::string>(d["typestr"]);
  if (typestr.size() < 3 || (typestr[0] == '>' && typestr[1] != 'b'))
    value_error(what, "unsupported __cuda_array_interface__ typestr '" + typestr + "'");
  Buffer b;
  int64_t itemsize = std::stoll(typestr.substr(2));
  b.base = mpi_type_of(typestr[1], itemsize);
  if (b.base == MPI_DATATYPE_NULL)
    throw nb::type_error((std::string(what) + ": typestr " + typestr + " has no MPI equivalent").c_str());
  int nd = static_cast<int>(shape_t.size());
  std::vector<int64_t> shape(nd), strides(nd);
  for (int i = 0; i < nd; ++i) shape[i] = nb::cast<int64_t>(shape_t[i]);
  nb::object st = d.contains("strides") ? nb::object(d["strides"]) : nb::none();
  if (!st.is_none()) {
    nb::tuple s = nb::cast<nb::tuple>(st);
    for (int i = 0; i < nd; ++i) strides[i] = nb::cast<int64_t>(s[i]) / itemsize;
    if (!c_contiguous(nd, shape.data(), strides.data())) value_error(what, "the device array is not C-contiguous");
  }
  if (writable && nb::cast<bool>(data[1])) value_error(what, "the device array is read-only but receives data");
  set_shape(&b, what, nd, shape.data());
  b.data = reinterpret_cast<void *>(nb::cast<uintptr_t>(data[0]));
  return b;
}

Buffer from_dlpack(nb::handle obj, const char *what, bool writable) {
  nb::ndarray<nb::ro> a;
  if (writable) {
    nb::ndarray<> w;
    if (!nb::try_cast(obj, w)) value_error(what, "expected a writable array (numpy, DLPack or CUDA array interface)");
    a = nb::ndarray<nb::ro>(w);
  } else if (!nb::try_cast(obj, a)) {
    value_error(what, "the array could not be imported through DLPack or the buffer protocol");
  }
  nb::dlpack::dtype dt = a.dtype();
  char kind = dt.code == uint8_t(nb::dlpack::dtype_code::Int)     ? 'i'
              : dt.code == uint8_t(nb::dlpack::dtype_code::UInt)  ? 'u'
              : dt.code == uint8_t(nb::dlpack::dtype_code::Float) ? 'f'
              : dt.code == uint8_t(nb::dlpack::dtype_code::Complex) ? 'c'
              : dt.code == uint8_t(nb::dlpack::dtype_code::Bool)  ? 'b'
                                                                   : '?';
  Buffer b;
  // A 128-bit DLPack float may be IEEE quad rather than long double: refused.
  if (dt.lanes == 1 && !(kind == 'f' && dt.bits > 64)) b.base = mpi_type_of(kind, dt.bits / 8);
  if (b.base == MPI_DATATYPE_NULL)
    throw nb::type_error((std::string(what) + ": DLPack dtype has no MPI equivalent").c_str());
  int nd = static_cast<int>(a.ndim());
  std::vector<int64_t> shape(nd), strides(nd);
  for (int i = 0; i < nd; ++i) shape[i] = static_cast<int64_t>(a.shape(i)), strides[i] = a.stride(i);
  if (!c_contiguous(nd, shape.data(), strides.data())) value_error(what, "the array is not C-contiguous");
  int dev = a.device_type();
  if (dev != nb::device::cpu::value && dev != nb::device::cuda::value && dev != nb::device::cuda_managed::value &&
      dev != nb::device::cuda_host::value)
    value_error(what, "DLPack device type " + std::to_string(dev) + " is not supported");
  set_shape(&b, what, nd, shape.data());
  b.data = const_cast<void *>(a.data());
  if (dev == nb::device::cuda::value) {
    stf_memtype mt = STF_MEMTYPE_HOST;
    if (stf_get_memtype(b.data, &mt) != STF_SUCCESS || mt != STF_MEMTYPE_DEVICE) {
      const char *name = "?";
      stf_device_get_name(&name);
      value_error(what, std::string("a CUDA array, but the active device is '") + name +
                            "': select 'cuda' first (starforest.device_select)");
    }
  }
  b.held = a;
  return b;
}

}  // namespace

Buffer get_buffer(nb::handle obj, const char *what, bool writable) {
  if (PyArray_Check(obj.ptr())) return from_numpy(reinterpret_cast<PyArrayObject *>(obj.ptr()), what, writable);
  PyObject *cai = PyObject_GetAttrString(obj.ptr(), "__cuda_array_interface__");
  if (!cai) {
    PyErr_Clear();
    if (!PyObject_CheckBuffer(obj.ptr()) && !nb::hasattr(obj, "__dlpack__"))
      throw nb::type_error((std::string(what) + ": expected an array (numpy, DLPack or CUDA array interface), got " +
                            nb::cast<std::string>(nb::str(obj.type())))
                               .c_str());
    return from_dlpack(obj, what, writable);
  }
  nb::object cai_obj = nb::steal(cai);
  Buffer b = from_cuda_interface(cai_obj, what, writable);
  stf_memtype mt = STF_MEMTYPE_HOST;
  if (b.data && (stf_get_memtype(b.data, &mt) != STF_SUCCESS || mt != STF_MEMTYPE_DEVICE)) {
    const char *name = "?";
    stf_device_get_name(&name);
    value_error(what, std::string("__cuda_array_interface__ data is not memory of the active device '") + name + "'");
  }
  return b;
}

namespace {

// The unit types of entries of several values, made once per (type, count).
std::map<std::pair<MPI_Datatype, int64_t>, MPI_Datatype> entry_types;

int free_entry_types(MPI_Comm, int, void *, void *) {
  for (auto &kv : entry_types) MPI_Type_free(&kv.second);
  entry_types.clear();
  return MPI_SUCCESS;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, so an attribute
// whose delete callback frees the types frees them before MPI ends (MPICH
// reports types still alive at finalize as leaked).
void free_entry_types_at_finalize() {
  static bool registered = false;
  if (registered) return;
  int keyval = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_entry_types, &keyval, nullptr) != MPI_SUCCESS ||
      MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr) != MPI_SUCCESS)
    fail(STF_ERR_MPI, "MPI_Comm_set_attr on MPI_COMM_SELF failed");
  registered = true;
}

}  // namespace

MPI_Datatype unit_of(const Buffer &b) {
  if (b.block == 1) return b.base;
  if (b.block > INT_MAX) throw nb::value_error("more than INT_MAX values per entry");
  auto key = std::make_pair(b.base, b.block);
  auto it = entry_types.find(key);
  if (it != entry_types.end()) return it->second;
  free_entry_types_at_finalize();
  MPI_Datatype t;
  if (MPI_Type_contiguous(static_cast<int>(b.block), b.base, &t) != MPI_SUCCESS || MPI_Type_commit(&t) != MPI_SUCCESS)
    fail(STF_ERR_MPI, "MPI_Type_contiguous failed for an entry of " + std::to_string(b.block) + " values");
  entry_types.emplace(key, t);
  return t;
}

namespace {

// numpy's name of an element type ("float64"), from its MPI type.
std::string dtype_name(MPI_Datatype base) {
  const char *kinds = "biufc";
  const char *names[] = {"bool", "int", "uint", "float", "complex"};
  for (int k = 0; k < 5; k++)
    for (int64_t size : {1, 2, 4, 8, 10, 12, 16, 20, 24, 32})
      if (mpi_type_of(kinds[k], size) == base && base != MPI_DATATYPE_NULL)
        return k == 0 ? std::string(names[0]) : names[k] + std::to_string(8 * size);
  return "an unknown dtype";
}

std::string entry_text(const Buffer &b) {
  return dtype_name(b.base) + ", " + std::to_string(b.block) + (b.block == 1 ? " value" : " values") + " per entry";
}

}  // namespace

MPI_Datatype common_unit(const Buffer &a, const char *aname, const Buffer &b, const char *bname) {
  if (a.base != b.base || a.block != b.block)
    throw nb::value_error((std::string(aname) + " (" + entry_text(a) + ") and " + bname + " (" + entry_text(b) +
                           ") differ in dtype or in values per entry (the shape after the first axis)")
                              .c_str());
  return unit_of(a);
}

void check_length(const Buffer &b, const char *what, int64_t need, const char *meaning) {
  if (b.units < need)
    throw nb::value_error((std::string(what) + ": " + std::to_string(b.units) + " entries, but this rank needs " +
                           std::to_string(need) + " (" + meaning + ")")
                              .c_str());
}

void bind_buffers(nb::module_ &) { init_numpy(); }

}  // namespace stfpy
