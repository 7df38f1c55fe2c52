// Devices from Python: choosing the backend, and DeviceArray, memory of the
// active device exported through DLPack so that any consumer (this module's
// operations included) sees it as device data.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <vector>

#include "arrays.h"
#include "buffer.h"

namespace stfpy {
using namespace nb::literals;

namespace {

// A C-contiguous array in memory from stf_device_malloc.
struct DeviceArray {
  void *data = nullptr;
  std::vector<size_t> shape;
  nb::dlpack::dtype dtype{};
  size_t itemsize = 0;
  nb::object np_dtype;

  DeviceArray() = default;
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  ~DeviceArray() { free(); }

  size_t count() const {
    size_t n = 1;
    for (size_t s : shape) n *= s;
    return n;
  }
  size_t nbytes() const { return count() * itemsize; }
  void free() {
    if (data) stf_device_free(data), data = nullptr;
  }
  void *ptr() const {
    if (!data) fail(STF_ERR_STATE, "the device array was freed");
    return data;
  }
};

// DLPack device of memory from the active device: "cuda" memory is a GPU's;
// "emu" memory is host memory the emulated device registered, and "host"
// memory is host memory, so both are CPU memory to a DLPack consumer.
int dlpack_device() {
  const char *name = "host";
  check(stf_device_get_name(&name));
  return std::strcmp(name, "cuda") == 0 ? nb::device::cuda::value : nb::device::cpu::value;
}

nb::dlpack::dtype dlpack_dtype(nb::handle np_dtype) {
  char kind = nb::cast<std::string>(np_dtype.attr("kind"))[0];
  auto size = nb::cast<int64_t>(np_dtype.attr("itemsize"));
  if (mpi_type_of(kind, size) == MPI_DATATYPE_NULL || (kind == 'f' && size > 8) || (kind == 'c' && size > 16))
    throw nb::type_error("device arrays hold bool, (u)int8..64, float32/64 or complex64/128");
  nb::dlpack::dtype d;
  d.code = uint8_t(kind == 'i'   ? nb::dlpack::dtype_code::Int
                   : kind == 'u' ? nb::dlpack::dtype_code::UInt
                   : kind == 'f' ? nb::dlpack::dtype_code::Float
                   : kind == 'c' ? nb::dlpack::dtype_code::Complex
                                 : nb::dlpack::dtype_code::Bool);
  d.bits = uint8_t(8 * size);
  d.lanes = 1;
  return d;
}

nb::object make_device_array(nb::handle shape, nb::handle dtype) {
  auto *a = new DeviceArray;
  nb::object owner = nb::cast(a, nb::rv_policy::take_ownership);
  a->np_dtype = numpy().attr("dtype")(dtype);
  a->dtype = dlpack_dtype(a->np_dtype);
  a->itemsize = nb::cast<size_t>(a->np_dtype.attr("itemsize"));
  if (PyLong_Check(shape.ptr())) a->shape = {nb::cast<size_t>(shape)};
  else a->shape = nb::cast<std::vector<size_t>>(shape);
  check(stf_device_malloc(a->nbytes() ? a->nbytes() : 1, &a->data));
  return owner;
}

// A host array's bytes as (pointer, size), for copies.
std::pair<void *, size_t> host_bytes(nb::handle array, bool writable) {
  Buffer b = get_buffer(array, "array", writable);
  int itemsize = 0;
  MPI_Type_size(b.base, &itemsize);
  return {b.data, size_t(b.units * b.block) * size_t(itemsize)};
}

}  // namespace

void bind_device(nb::module_ &m) {
  m.def("device_select", [](const std::string &name) { check(stf_device_select(name.c_str())); }, "name"_a,
        "Make 'host', 'emu' or 'cuda' the active device (not collective).");
  m.def("nvshmem_init", [](nb::handle comm) {
    const MPI_Comm c = to_comm(comm);
    nb::gil_scoped_release unlocked;
    check(stf_nvshmem_init(c));
  }, "comm"_a,
        "Start NVSHMEM for the nvshmem transport over every rank of comm (collective; once per process). "
        "Without it the first nvshmem SF over all of MPI_COMM_WORLD starts it there.");
  m.def("device_name", [] {
    const char *name = nullptr;
    check(stf_device_get_name(&name));
    return std::string(name);
  });
  m.def("device_synchronize", [] {
    nb::gil_scoped_release unlocked;
    check(stf_device_synchronize());
  }, "Wait for the library stream (results of ended operations on device data).");
  m.def("memtype", [](nb::handle array) {
    Buffer b = get_buffer(array, "array", false);
    stf_memtype t;
    check(stf_get_memtype(b.data, &t));
    return std::string(t == STF_MEMTYPE_DEVICE ? "device" : "host");
  }, "array"_a, "'device' or 'host': where the active device says the array's data lives.");

  nb::class_<DeviceArray>(m, "DeviceArray",
                          "C-contiguous memory of the active device (stf_device_malloc), exported via DLPack.")
      .def_static("empty", &make_device_array, "shape"_a, "dtype"_a = "float64")
      .def_static("from_numpy", [](nb::handle host) {
        nb::object a = make_device_array(host.attr("shape"), host.attr("dtype"));
        auto [src, bytes] = host_bytes(host, false);
        check(stf_device_memcpy(nb::cast<DeviceArray &>(a).ptr(), src, bytes));
        return a;
      }, "host"_a, "A device copy of a C-contiguous host array.")
      .def("to_numpy", [](const DeviceArray &a) {
        nb::object out = numpy().attr("empty")(nb::cast(a.shape), "dtype"_a = a.np_dtype);
        auto [dst, bytes] = host_bytes(out, true);
        {
          nb::gil_scoped_release unlocked;
          check(stf_device_synchronize());
          check(stf_device_memcpy(dst, a.ptr(), bytes));
        }
        return out;
      }, "A host copy, after the library stream is done (stf_device_synchronize).")
      .def("copy_from", [](DeviceArray &a, nb::handle host) {
        auto [src, bytes] = host_bytes(host, false);
        if (bytes != a.nbytes()) throw nb::value_error("copy_from: the host array has a different size");
        check(stf_device_memcpy(a.ptr(), src, bytes));
      }, "host"_a, "Copy a host array of the same size into this one.")
      .def("free", &DeviceArray::free, "Free the memory now (also done when the object goes).")
      .def_prop_ro("shape", [](const DeviceArray &a) { return nb::tuple(nb::cast(a.shape)); })
      .def_prop_ro("dtype", [](const DeviceArray &a) { return a.np_dtype; })
      .def_prop_ro("nbytes", &DeviceArray::nbytes)
      .def_prop_ro("ptr", [](const DeviceArray &a) { return reinterpret_cast<uintptr_t>(a.ptr()); })
      .def("__len__", [](const DeviceArray &a) { return a.shape.empty() ? 0 : a.shape[0]; })
      .def("__dlpack_device__", [](const DeviceArray &) { return nb::make_tuple(dlpack_device(), 0); })
      .def("__dlpack__", [](nb::handle self, nb::kwargs kwargs) {
        const DeviceArray &a = nb::cast<const DeviceArray &>(self);
        nb::ndarray<nb::array_api> view(a.ptr(), a.shape.size(), a.shape.data(), self, nullptr, a.dtype,
                                        dlpack_device(), 0);
        return nb::cast(view).attr("__dlpack__")(**kwargs);
      }, "DLPack capsule of the data (the array stays alive while a consumer holds it).");
}

}  // namespace stfpy
